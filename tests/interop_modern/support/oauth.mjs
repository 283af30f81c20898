// The OAuth test fixtures of the interop tests, shared with this folder: tests/oauth/provider.mjs
// (oidc-provider) as a child process, imgmcp as a resource server trusting it, the browser
// stand-in for the provider's login and consent forms, a recording fetch, the pre-registered
// authorization-code client "app" as an OAuthClientProvider (the interface is the same in both SDK
// generations) and JWT decoding. The file uses Node built-ins only, so it runs from here on this
// folder's Node 22 without tests/interop/node_modules.
export * from '../../interop/support/oauth.mjs';

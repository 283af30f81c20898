// Interop: the official @modelcontextprotocol/sdk 1.32.2 client against imgmcp as an OAuth 2.1
// resource server (`--oauth-issuer`), with tests/oauth/provider.mjs (oidc-provider) as the
// authorization server. Everything the SDK learns it learns from imgmcp's 401: the
// WWW-Authenticate challenge names the protected-resource metadata (RFC 9728), which names the
// authorization server, whose metadata (RFC 8414) gives the token endpoint; the token is asked for
// imgmcp's /mcp URL as the RFC 8707 resource. The provider has no dynamic client registration,
// so the SDK's providers carry pre-registered client information.
//   (a) no auth provider: connecting fails with the SDK's 401 error; a wrong client secret fails
//       at the token endpoint (discovery from the 401 worked);
//   (b) ClientCredentialsProvider (client "writer"): discovery → token → tools work;
//   (c) authorization code + PKCE (public client "app") through the SDK's UnauthorizedError +
//       finishAuth(code), the login and consent forms driven over HTTP;
//   (d) a read-only token: generate_image ends in 403 insufficient_scope, get_image works.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { InvalidClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { ok } from './support/common.mjs';
import {
  BrowserAppProvider, RESOURCE_SCOPES, assertAuthorizationRequest, assertCodeExchange,
  assertDiscoveryFrom401, decodeJwt, recordingFetch, resourceMetadataUrl, signedToken, startOAuthPair,
} from './support/oauth.mjs';

const TOOL_NAMES = ['edit_image', 'generate_image', 'get_image', 'reset_session'];
let pair;
let url;
let issuer;

before(async () => {
  pair = await startOAuthPair();
  ({ url } = pair.server);
  ({ issuer } = pair.provider);
});

after(async () => {
  await pair?.stop();
});

const newClient = () => new Client({ name: 'imgmcp-oauth-interop', version: '0.0.0' });
const scopesOf = (claims) => claims.scope.split(' ').sort();

async function generate(client, sessionId) {
  return client.callTool({ name: 'generate_image',
    arguments: { prompt: 'a red square', session_id: sessionId } });
}

test('(a) without an auth provider, connecting fails with the 401', async () => {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const err = await client.connect(transport).then(() => null, (e) => e);
  await client.close().catch(() => {});
  assert.ok(err instanceof StreamableHTTPError, `expected StreamableHTTPError, got ${err}`);
  assert.equal(err.code, 401, String(err));
  assert.match(err.message, /a bearer token is required/);
});

test('(a) with a wrong client secret, connecting fails with the token endpoint\'s invalid_client',
  async () => {
    // A pre-registered client with a wrong secret: discovery from the 401 works, the token request
    // is refused, and the transport never gets past the 401.
    const provider = new ClientCredentialsProvider({ clientId: 'writer', clientSecret: 'wrong',
      scope: RESOURCE_SCOPES, expectedIssuer: issuer });
    const client = newClient();
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    const err = await client.connect(transport).then(() => null, (e) => e);
    await client.close().catch(() => {});
    assert.ok(err instanceof InvalidClientError, `expected InvalidClientError, got ${err}`);
    assert.equal(err.errorCode, 'invalid_client');
    assert.equal(provider.tokens(), undefined);
  });

test('(b) client credentials: discovery from the 401, a token for /mcp, tools work', async () => {
  const log = [];
  const provider = new ClientCredentialsProvider({ clientId: 'writer', clientSecret: 'writer-secret',
    scope: RESOURCE_SCOPES, expectedIssuer: issuer });
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(url),
    { authProvider: provider, fetch: recordingFetch(log) });
  try {
    await client.connect(transport);
    assert.equal(client.getServerVersion().name, 'imgmcp');
    const tokenRequest = assertDiscoveryFrom401(log, { url, provider: pair.provider,
      grantType: 'client_credentials' });
    assert.match(tokenRequest.headers.get('authorization') ?? '', /^Basic /, 'client_secret_basic');

    const { claims } = decodeJwt(provider.tokens().access_token);
    assert.equal(claims.aud, url);
    assert.equal(claims.iss, issuer);
    assert.equal(claims.client_id, 'writer');
    assert.deepEqual(scopesOf(claims), ['imgmcp:read', 'imgmcp:write']);

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
    const out = ok(await generate(client, 'oauth'));
    assert.equal(out.session_id, 'oauth');
    assert.equal(out.version, 1);
    // Every MCP request after the first carried the token.
    for (const e of log.filter((x) => x.url === url).slice(1)) {
      assert.equal(e.headers.get('authorization'), `Bearer ${provider.tokens().access_token}`);
    }
  } finally {
    await client.close();
  }
});

test('(c) authorization code + PKCE: UnauthorizedError, login and consent, finishAuth, tools work',
  async () => {
    const log = [];
    const provider = new BrowserAppProvider(issuer, { login: 'alice' });
    const first = new StreamableHTTPClientTransport(new URL(url),
      { authProvider: provider, fetch: recordingFetch(log) });
    const firstClient = newClient();
    const err = await firstClient.connect(first).then(() => null, (e) => e);
    await firstClient.close().catch(() => {});
    assert.ok(err instanceof UnauthorizedError, `expected UnauthorizedError, got ${err}`);

    // The SDK sent the user agent to the provider's authorization endpoint, for this resource.
    assert.equal(provider.authorizationUrls.length, 1);
    assertAuthorizationRequest(provider.authorizationUrls[0], { url, provider: pair.provider });
    const code = provider.callback.searchParams.get('code');
    assert.ok(code, `no code in ${provider.callback}`);
    assert.equal(provider.tokens(), undefined);

    await first.finishAuth(code);
    assertCodeExchange(log, { url, provider: pair.provider, code });
    const { claims } = decodeJwt(provider.tokens().access_token);
    assert.equal(claims.aud, url);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.client_id, 'app');
    assert.deepEqual(scopesOf(claims), ['imgmcp:read', 'imgmcp:write']);

    // A new connection with the same provider uses the token.
    const client = newClient();
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
      const out = ok(await generate(client, 'oauth-app'));
      assert.equal(out.session_id, 'oauth-app');
      assert.equal(out.version, 1);
      const got = ok(await client.callTool({ name: 'get_image', arguments: { session_id: 'oauth-app' } }));
      assert.equal(got.version, 1);
    } finally {
      await client.close();
    }
    assert.equal(provider.authorizationUrls.length, 1, 'no second authorization');
  });

test('(d) a read-only token: generate_image gets 403 insufficient_scope, get_image works',
  async () => {
    // An image in the reader's own session first: a token for the same person (iss + sub
    // "reader") with the write scope, signed with the provider's key (its /__test/sign route).
    const now = Math.floor(Date.now() / 1000);
    const seed = await signedToken(pair.provider, { iss: issuer, sub: 'reader', client_id: 'reader',
      aud: url, scope: RESOURCE_SCOPES, iat: now, exp: now + 600, jti: `seed-${now}` });
    const seeder = newClient();
    await seeder.connect(new StreamableHTTPClientTransport(new URL(url),
      { requestInit: { headers: { authorization: `Bearer ${seed}` } } }));
    try {
      assert.equal(ok(await generate(seeder, 'reader-session')).version, 1);
    } finally {
      await seeder.close();
    }

    const log = [];
    const provider = new ClientCredentialsProvider({ clientId: 'reader', clientSecret: 'reader-secret',
      scope: 'imgmcp:read', expectedIssuer: issuer });
    const client = newClient();
    const transport = new StreamableHTTPClientTransport(new URL(url),
      { authProvider: provider, fetch: recordingFetch(log) });
    try {
      await client.connect(transport);
      const { claims } = decodeJwt(provider.tokens().access_token);
      assert.equal(claims.aud, url);
      assert.equal(claims.sub, 'reader');
      assert.deepEqual(scopesOf(claims), ['imgmcp:read']);

      const err = await generate(client, 'reader-session').then(() => null, (e) => e);
      assert.ok(err, 'generate_image succeeded with a read-only token');
      // The SDK tried to step up once (another client-credentials token, still read-only) and then
      // gave up on the same 403 challenge.
      assert.ok(err instanceof StreamableHTTPError, `expected StreamableHTTPError, got ${err}`);
      assert.equal(err.code, 403, String(err));
      assert.match(err.message, /403/);
      const denied = log.filter((e) => e.url === url && e.status === 403);
      assert.equal(denied.length, 2, 'one 403, one step-up retry, another 403');
      for (const e of denied) {
        assert.match(e.wwwAuthenticate ?? '', /^Bearer /);
        assert.match(e.wwwAuthenticate, /error="insufficient_scope"/);
        assert.match(e.wwwAuthenticate, /scope="imgmcp:write"/);
        assert.ok(e.wwwAuthenticate.includes(`resource_metadata="${resourceMetadataUrl(url)}"`),
          e.wwwAuthenticate);
      }
      const stepUp = log.filter((e) => e.url === pair.provider.metadata.token_endpoint);
      assert.equal(stepUp.length, 2, 'the first token, then one step-up token request');

      const got = ok(await client.callTool({ name: 'get_image', arguments: { session_id: 'reader-session' } }));
      assert.equal(got.session_id, 'reader-session');
      assert.equal(got.version, 1);
    } finally {
      await client.close();
    }
  });

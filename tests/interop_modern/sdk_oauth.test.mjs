// Interop, modern era (2026-07-28) over Streamable HTTP with OAuth: the v2 MCP SDK client
// (@modelcontextprotocol/client 2.4.0, pinned to 2026-07-28) against imgmcp as an OAuth 2.1
// resource server (`--oauth-issuer`), tests/oauth/provider.mjs (oidc-provider) the authorization
// server. The client's first request (the server/discover probe) gets imgmcp's 401; from its
// challenge the SDK finds the protected-resource metadata (RFC 9728), the authorization server and
// its metadata (RFC 8414, issuer echo checked), and asks for a token for imgmcp's /mcp URL as the
// RFC 8707 resource. The provider has no dynamic client registration, so the SDK's providers carry
// pre-registered client information.
//   (a) no auth provider: the probe fails with the SDK's 401 error (CLIENT_HTTP_AUTHENTICATION);
//   (b) ClientCredentialsProvider (client "writer"): discovery → token → modern tools work;
//   (c) authorization code + PKCE (public client "app"): UnauthorizedError, the login and consent
//       forms driven over HTTP, finishAuth(callback params) with the RFC 9207 iss check, tools work;
//   (d) a read-only token with onInsufficientScope 'throw': generate_image throws the SDK's
//       InsufficientScopeError naming imgmcp:write; get_image works. (The stock
//       ClientCredentialsProvider of the read-only client asks for the scopes of imgmcp's 401
//       challenge, which the provider refuses it: asserted too.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  ClientCredentialsProvider, InsufficientScopeError, SdkErrorCode, SdkHttpError,
  StreamableHTTPClientTransport, UnauthorizedError,
} from '@modelcontextprotocol/client';
import { modernClient } from './support/sdk.mjs';
import { MODERN, TOOL_NAMES } from './support/processes.mjs';
import { ok } from './support/results.mjs';
import {
  BrowserAppProvider, RESOURCE_SCOPES, assertAuthorizationRequest, assertCodeExchange,
  assertDiscoveryFrom401, decodeJwt, recordingFetch, resourceMetadataUrl, signedToken, startOAuthPair,
} from './support/oauth.mjs';

const TIMEOUT = { timeout: 30000 };
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

const newClient = () => modernClient('imgmcp-oauth-interop-modern', 'pin');
const scopesOf = (claims) => claims.scope.split(' ').sort();
const transport = (options) => new StreamableHTTPClientTransport(new URL(url), options);

function generate(client, sessionId) {
  return client.callTool({ name: 'generate_image',
    arguments: { prompt: 'a red square', session_id: sessionId, inline: 'none' } });
}

// Connects, checks the era, the tools and one generate_image, and closes.
async function useTools(client, t, sessionId) {
  try {
    await client.connect(t);
    assert.equal(client.getProtocolEra(), 'modern');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), TOOL_NAMES);
    const out = ok(await generate(client, sessionId));
    assert.deepEqual([out.session_id, out.version], [sessionId, 1]);
  } finally {
    await client.close();
  }
}

test('(a) without an auth provider, the modern probe fails with the 401', TIMEOUT, async () => {
  const client = newClient();
  const err = await client.connect(transport()).then(() => null, (e) => e);
  await client.close().catch(() => {});
  assert.ok(err instanceof SdkHttpError, `expected SdkHttpError, got ${err}`);
  assert.equal(err.code, SdkErrorCode.ClientHttpAuthentication, String(err));
  assert.equal(err.data?.status, 401, JSON.stringify(err.data));
  assert.match(err.data.text, /a bearer token is required/);
});

test('(b) client credentials: discovery from the 401, a token for /mcp, modern tools work', TIMEOUT,
  async () => {
    const log = [];
    const provider = new ClientCredentialsProvider({ clientId: 'writer', clientSecret: 'writer-secret',
      scope: RESOURCE_SCOPES, expectedIssuer: issuer });
    const client = newClient();
    const t = transport({ authProvider: provider, fetch: recordingFetch(log) });
    await useTools(client, t, 'oauth');

    // The request that met the 401 was the modern probe, sent again with the token.
    assert.equal(log[0].json?.method, 'server/discover', JSON.stringify(log[0].json));
    const tokenRequest = assertDiscoveryFrom401(log, { url, provider: pair.provider,
      grantType: 'client_credentials' });
    assert.match(tokenRequest.headers.get('authorization') ?? '', /^Basic /, 'client_secret_basic');
    const mcp = log.filter((e) => e.url === url);
    assert.equal(mcp[1].json?.method, 'server/discover');
    for (const e of mcp.slice(1)) {
      assert.equal(e.headers.get('mcp-protocol-version') ?? MODERN, MODERN);
      assert.equal(e.headers.get('authorization'), `Bearer ${provider.tokens().access_token}`);
      assert.equal(e.status, 200, `${e.json?.method}: HTTP ${e.status}`);
    }
    assert.ok(mcp.some((e) => e.json?.method === 'tools/call'), 'no tools/call sent');

    const { claims } = decodeJwt(provider.tokens().access_token);
    assert.equal(claims.aud, url);
    assert.equal(claims.iss, issuer);
    assert.equal(claims.client_id, 'writer');
    assert.deepEqual(scopesOf(claims), ['imgmcp:read', 'imgmcp:write']);
  });

test('(c) authorization code + PKCE: UnauthorizedError, login and consent, finishAuth, tools work',
  TIMEOUT, async () => {
    const log = [];
    const provider = new BrowserAppProvider(issuer, { login: 'alice' });
    const first = transport({ authProvider: provider, fetch: recordingFetch(log) });
    const firstClient = newClient();
    const err = await firstClient.connect(first).then(() => null, (e) => e);
    await firstClient.close().catch(() => {});
    assert.ok(err instanceof UnauthorizedError, `expected UnauthorizedError, got ${err}`);

    assert.equal(provider.authorizationUrls.length, 1);
    assertAuthorizationRequest(provider.authorizationUrls[0], { url, provider: pair.provider });
    const params = provider.callback.searchParams;
    assert.ok(params.get('code'), `no code in ${provider.callback}`);
    assert.equal(params.get('iss'), issuer, 'RFC 9207 iss of the callback');
    assert.equal(provider.tokens(), undefined);

    await first.finishAuth(params);
    assertCodeExchange(log, { url, provider: pair.provider, code: params.get('code') });
    const { claims } = decodeJwt(provider.tokens().access_token);
    assert.equal(claims.aud, url);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.client_id, 'app');
    assert.deepEqual(scopesOf(claims), ['imgmcp:read', 'imgmcp:write']);

    // A new connection with the same provider uses the token, without another authorization.
    await useTools(newClient(), transport({ authProvider: provider }), 'oauth-app');
    assert.equal(provider.authorizationUrls.length, 1, 'no second authorization');
  });

// The v2 SDK asks the token endpoint for the scope of imgmcp's 401 challenge (SEP-835: the
// challenge's scope first, the client's own scope only without one), "imgmcp:read imgmcp:write"; a
// client registered for imgmcp:read alone is refused that by oidc-provider (invalid_scope). So a
// read-only machine client asks for what it was registered for, whatever the challenge says.
class ReaderCredentials extends ClientCredentialsProvider {
  prepareTokenRequest() {
    return super.prepareTokenRequest('imgmcp:read');
  }
}

test('(d) the stock ClientCredentialsProvider of a read-only client asks for the challenged scope',
  TIMEOUT, async () => {
    const log = [];
    const provider = new ClientCredentialsProvider({ clientId: 'reader', clientSecret: 'reader-secret',
      scope: 'imgmcp:read', expectedIssuer: issuer });
    const client = newClient();
    const err = await client.connect(transport({ authProvider: provider, fetch: recordingFetch(log) }))
      .then(() => null, (e) => e);
    await client.close().catch(() => {});
    assert.ok(err, 'connected');
    assert.equal(err.code, 'invalid_scope', String(err));
    const tokenRequest = log.find((e) => e.url === pair.provider.metadata.token_endpoint);
    assert.equal(tokenRequest.form.scope, RESOURCE_SCOPES);
    assert.equal(tokenRequest.form.resource, url);
    assert.equal(provider.tokens(), undefined);
  });

test('(d) a read-only token: generate_image throws InsufficientScopeError, get_image works', TIMEOUT,
  async () => {
    // An image in the reader's session first, made with a write-scoped token for the same person
    // (iss + sub "reader"), signed with the provider's key.
    const now = Math.floor(Date.now() / 1000);
    const seed = await signedToken(pair.provider, { iss: issuer, sub: 'reader', client_id: 'reader',
      aud: url, scope: RESOURCE_SCOPES, iat: now, exp: now + 600, jti: `seed-modern-${now}` });
    const seeder = newClient();
    try {
      await seeder.connect(transport({ authProvider: { token: async () => seed } }));
      assert.equal(ok(await generate(seeder, 'reader-modern')).version, 1);
    } finally {
      await seeder.close();
    }

    const log = [];
    const provider = new ReaderCredentials({ clientId: 'reader', clientSecret: 'reader-secret',
      scope: 'imgmcp:read', expectedIssuer: issuer });
    const client = newClient();
    const t = transport({ authProvider: provider, fetch: recordingFetch(log), onInsufficientScope: 'throw' });
    try {
      await client.connect(t);
      const { claims } = decodeJwt(provider.tokens().access_token);
      assert.equal(claims.aud, url);
      assert.equal(claims.sub, 'reader');
      assert.deepEqual(scopesOf(claims), ['imgmcp:read']);
      assert.deepEqual((await client.listTools()).tools.map((x) => x.name).sort(), TOOL_NAMES);

      const err = await generate(client, 'reader-modern').then(() => null, (e) => e);
      assert.ok(err instanceof InsufficientScopeError, `expected InsufficientScopeError, got ${err}`);
      assert.equal(err.requiredScope, 'imgmcp:write');
      assert.equal(String(err.resourceMetadataUrl), resourceMetadataUrl(url));
      const denied = log.filter((e) => e.url === url && e.status === 403);
      assert.equal(denied.length, 1);
      assert.equal(denied[0].json?.method, 'tools/call');
      assert.match(denied[0].wwwAuthenticate ?? '', /^Bearer .*error="insufficient_scope"/);

      const got = ok(await client.callTool({ name: 'get_image',
        arguments: { session_id: 'reader-modern', inline: 'none' } }));
      assert.deepEqual([got.session_id, got.version], ['reader-modern', 1]);
    } finally {
      await client.close();
    }
  });

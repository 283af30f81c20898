// Shared by the OAuth interop tests (here and in tests/interop_modern, which re-exports this file):
// the test authorization server tests/oauth/provider.mjs (oidc-provider, RFC 9068 JWT access tokens
// for RFC 8707 resource indicators) as a child process, imgmcp as a resource server trusting it, a
// browser stand-in for the provider's devInteractions login and consent forms, and JWT decoding.
// Node built-ins only (this file is imported from two folders with different node_modules); the
// Python twin is tests/integration/oauth_support.py.
//
// Clients of provider.mjs (secret = client id + "-secret", client_secret_basic):
//   writer  client_credentials, imgmcp:read imgmcp:write
//   reader  client_credentials, imgmcp:read
//   app     public client, authorization_code + PKCE S256, redirect_uri http://127.0.0.1/callback
// The provider has no dynamic client registration (features.registration is off, its metadata has
// no registration_endpoint), so an SDK client must come with its client information.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startHttpServer } from '../../support/imgmcp_process.mjs';

export const OAUTH_DIR = fileURLToPath(new URL('../../oauth/', import.meta.url));
const PROVIDER_SCRIPT = fileURLToPath(new URL('../../oauth/provider.mjs', import.meta.url));
export const START_TIMEOUT_MS = 20000;
export const STOP_TIMEOUT_MS = 10000;

export const RESOURCE_SCOPES = 'imgmcp:read imgmcp:write';
export const APP_CLIENT = 'app';
export const APP_REDIRECT_URI = 'http://127.0.0.1/callback';

// The (header, claims) of a compact JWS, without checking its signature.
export function decodeJwt(token) {
  const parts = String(token).split('.');
  assert.equal(parts.length, 3, `not a compact JWS: ${String(token).slice(0, 40)}`);
  const part = (p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  return { header: part(parts[0]), claims: part(parts[1]) };
}

export const basicAuth = (clientId, secret = `${clientId}-secret`) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;

// --- cookies, for the browser stand-in ---------------------------------------------------------
// Enough of RFC 6265 for one origin: name, value, path; Max-Age<=0 or a past Expires deletes.
class CookieJar {
  constructor() { this.cookies = new Map(); }

  store(response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = false;
      for (const attr of attrs) {
        const [k, v = ''] = attr.split('=');
        const key = k.toLowerCase();
        if (key === 'path' && v) path = v;
        if (key === 'max-age' && Number(v) <= 0) expired = true;
        if (key === 'expires' && Date.parse(v) <= Date.now()) expired = true;
      }
      const id = `${name}\u0000${path}`;
      if (expired) this.cookies.delete(id);
      else this.cookies.set(id, { name, value, path });
    }
  }

  header(url) {
    const { pathname } = new URL(url);
    const matching = [...this.cookies.values()].filter((c) => pathname === c.path
      || pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`));
    return matching.map((c) => `${c.name}=${c.value}`).join('; ');
  }
}

const unescapeHtml = (s) => s.replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
  .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
  .replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>')
  .replace(/&amp;/g, '&');

// The devInteractions forms of a page: [{ action, method, fields: { name: value } }].
function parseForms(html) {
  const forms = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const attr = (s, name) => {
      const a = new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(s);
      return a ? unescapeHtml(a[1]) : undefined;
    };
    const fields = {};
    for (const input of m[2].matchAll(/<input\b([^>]*)>/gi)) {
      const name = attr(input[1], 'name');
      if (name) fields[name] = attr(input[1], 'value') ?? '';
    }
    forms.push({ action: attr(m[1], 'action') ?? '', method: (attr(m[1], 'method') ?? 'get').toUpperCase(), fields });
  }
  return forms;
}

// Plays the user agent from `authorizationUrl` (the provider's /auth with the client's query):
// follows redirects by hand with a cookie jar, signs in as `login` on the login form, continues
// on the consent form, and returns the URL the provider finally redirects to at
// http://127.0.0.1/callback (never fetched) as a URL. Rejects on anything unexpected.
export async function browseAuthorization(authorizationUrl, { login = 'alice', maxSteps = 20 } = {}) {
  const jar = new CookieJar();
  let url = String(authorizationUrl);
  let method = 'GET';
  let body;
  const trail = [];
  for (let step = 0; step < maxSteps; step += 1) {
    trail.push(`${method} ${url}`);
    const headers = {};
    const cookie = jar.header(url);
    if (cookie) headers.cookie = cookie;
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, { method, headers, body, redirect: 'manual' });
    jar.store(response);
    if ([301, 302, 303, 307, 308].includes(response.status)) {
      await response.arrayBuffer();
      const next = new URL(response.headers.get('location'), url);
      if (next.href.startsWith(APP_REDIRECT_URI)) return next;
      url = next.href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const text = await response.text();
    assert.equal(response.status, 200, `${method} ${url}: HTTP ${response.status} ${text.slice(0, 2000)}`);
    const form = parseForms(text).find((f) => 'prompt' in f.fields);
    assert.ok(form, `no interaction form at ${url}:\n${text.slice(0, 2000)}`);
    const fields = { ...form.fields };
    if (fields.prompt === 'login') Object.assign(fields, { login, password: 'any' });
    url = new URL(form.action, url).href;
    method = form.method;
    body = new URLSearchParams(fields).toString();
  }
  throw new Error(`no redirect to ${APP_REDIRECT_URI} after ${maxSteps} steps:\n${trail.join('\n')}`);
}

// --- the provider process ----------------------------------------------------------------------
const exited = (child) => child.exitCode !== null || child.signalCode !== null;

// Starts `node tests/oauth/provider.mjs` (with the Node running the test) and resolves once it
// printed its issuer, with { issuer, metadata, child, stderr(), stop(), token(...) }. stop() closes
// its stdin (which ends it) and kills it if it lingers; it is also killed on every failure here.
export function startOAuthProvider() {
  assert.ok(existsSync(new URL('../../oauth/node_modules/oidc-provider/package.json', import.meta.url)),
    'tests/oauth/node_modules is missing: run `npm ci` in tests/oauth');
  const child = spawn(process.execPath, [PROVIDER_SCRIPT], { cwd: OAUTH_DIR, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (c) => { stderr += c; });
  child.stdin.on('error', () => {});

  async function stop() {
    if (exited(child)) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.end();
    let timer;
    const hung = await Promise.race([gone.then(() => false),
      new Promise((resolve) => { timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS); })]);
    clearTimeout(timer);
    if (hung) {
      child.kill('SIGKILL');
      await gone;
      throw new Error(`provider.mjs did not exit within ${STOP_TIMEOUT_MS} ms of its stdin closing`);
    }
  }

  const started = new Promise((resolve, reject) => {
    const fail = (why) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`provider.mjs ${why}; stderr:\n${stderr}`));
    };
    const timer = setTimeout(() => fail(`printed no issuer within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.on('error', (err) => fail(`could not start (${err.message})`));
    child.on('exit', (code, signal) => fail(`exited (${code ?? signal}) before listening`));
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const nl = stdout.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.removeAllListeners('error');
      child.stdout.removeAllListeners('data');
      child.stdout.resume();  // nothing more is expected there; drain whatever comes
      try {
        resolve(JSON.parse(stdout.slice(0, nl)).issuer);
      } catch {
        fail(`printed ${JSON.stringify(stdout.slice(0, nl))} instead of {"issuer": ...}`);
      }
    });
  });

  return started.then(async (issuer) => {
    try {
      const res = await fetch(`${issuer}/.well-known/openid-configuration`);
      assert.equal(res.status, 200, `openid-configuration: HTTP ${res.status}`);
      const metadata = await res.json();
      return {
        issuer,
        metadata,
        child,
        stderr: () => stderr,
        stop,
        // A client-credentials access token (client_secret_basic) for `resource`.
        async token(client, resource, scope) {
          const form = new URLSearchParams({ grant_type: 'client_credentials' });
          if (scope) form.set('scope', scope);
          if (resource) form.set('resource', resource);
          const r = await fetch(metadata.token_endpoint, {
            method: 'POST', body: form,
            headers: { authorization: basicAuth(client), 'content-type': 'application/x-www-form-urlencoded' },
          });
          const body = await r.text();
          assert.equal(r.status, 200, `token for ${client}: HTTP ${r.status} ${body}`);
          return JSON.parse(body).access_token;
        },
      };
    } catch (err) {
      await stop().catch(() => child.kill('SIGKILL'));
      throw err;
    }
  });
}

// imgmcp --http as a resource server for `issuer` (local backend, a temporary data dir).
export function startOAuthImgmcp(issuer, { args = [] } = {}) {
  return startHttpServer({ args: ['--backend', 'local', '--oauth-issuer', issuer, ...args] });
}

// Both of the above; stops the provider when imgmcp fails to start. Resolves { provider, server,
// stop() } — stop() stops both, each on every path.
export async function startOAuthPair(options) {
  const provider = await startOAuthProvider();
  let server;
  try {
    server = await startOAuthImgmcp(provider.issuer, options);
  } catch (err) {
    await provider.stop();
    throw err;
  }
  return {
    provider,
    server,
    async stop() {
      try {
        await server.stop();
      } finally {
        await provider.stop();
      }
    },
  };
}

// A fetch wrapper that records every request (method, url, headers, body) and response
// status/WWW-Authenticate, for asserting what an SDK sent during discovery and the token request.
export function recordingFetch(log, base = fetch) {
  return async (input, init = {}) => {
    const url = String(input instanceof Request ? input.url : input);
    const method = init.method ?? (input instanceof Request ? input.method : 'GET');
    // A form body (token requests) as an object in `form`, a JSON body (MCP messages) in `json`.
    let form;
    let json;
    if (typeof init.body === 'string' || init.body instanceof URLSearchParams) {
      const text = String(init.body);
      if (text.startsWith('{') || text.startsWith('[')) {
        try { json = JSON.parse(text); } catch { json = undefined; }
      } else {
        form = Object.fromEntries(new URLSearchParams(text));
      }
    }
    const entry = { method, url, headers: new Headers(init.headers), form, json };
    log.push(entry);
    const response = await base(input, init);
    entry.status = response.status;
    entry.wwwAuthenticate = response.headers.get('www-authenticate');
    return response;
  };
}

// An OAuthClientProvider (the interface of both SDK generations) for the provider's public client
// "app": authorization code + PKCE, pre-registered (no dynamic registration). Its
// redirectToAuthorization() drives the login and consent forms and keeps the callback URL in
// `callback`; `authorizationUrls` lists every authorization request it was sent to.
export class BrowserAppProvider {
  constructor(issuer, { login = 'alice' } = {}) {
    this.issuer = issuer;
    this.login = login;
    this.callback = undefined;
    this.authorizationUrls = [];
    this._tokens = undefined;
    this._verifier = undefined;
    this._discovery = undefined;
    this._state = undefined;
    this.savedTokens = [];
  }

  get redirectUrl() { return APP_REDIRECT_URI; }

  get clientMetadata() {
    return {
      client_name: 'imgmcp interop app', redirect_uris: [APP_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    this._state = randomBytes(16).toString('base64url');
    return this._state;
  }

  clientInformation() { return { client_id: APP_CLIENT, issuer: this.issuer }; }

  tokens() { return this._tokens; }

  saveTokens(tokens) {
    this._tokens = tokens;
    this.savedTokens.push(tokens);
  }

  async redirectToAuthorization(authorizationUrl) {
    this.authorizationUrls.push(new URL(authorizationUrl));
    this.callback = await browseAuthorization(authorizationUrl, { login: this.login });
    assert.equal(this.callback.searchParams.get('error'), null, `authorization failed: ${this.callback}`);
    assert.equal(this.callback.searchParams.get('state'), this._state, `state of ${this.callback}`);
  }

  saveCodeVerifier(verifier) { this._verifier = verifier; }

  codeVerifier() {
    assert.ok(this._verifier, 'no code verifier saved');
    return this._verifier;
  }

  saveDiscoveryState(state) { this._discovery = state; }

  discoveryState() { return this._discovery; }
}

// The protected-resource metadata URL imgmcp advertises for its /mcp `url`.
export const resourceMetadataUrl = (url) => `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`;

// Checks what an SDK did, per recordingFetch's `log`, to get its first token for imgmcp at `url`
// from `provider` (startOAuthProvider's): its first MCP request got the 401 challenge naming the
// protected-resource metadata; it then fetched that metadata (RFC 9728), the advertised
// authorization server's metadata (RFC 8414), asked the token endpoint for a `grantType` token for
// `url` as the RFC 8707 resource, and sent an MCP request again with the token, which succeeded.
// Returns the token request's log entry.
export function assertDiscoveryFrom401(log, { url, provider, grantType }) {
  const trail = () => log.map((e) => `${e.method} ${e.url} → ${e.status}`).join('\n');
  const first = log[0];
  assert.deepEqual([first.method, first.url, first.status], ['POST', url, 401], trail());
  assert.equal(first.wwwAuthenticate,
    `Bearer resource_metadata="${resourceMetadataUrl(url)}", scope="${RESOURCE_SCOPES}"`);
  const prm = log.findIndex((e) => e.url.includes('/.well-known/oauth-protected-resource'));
  assert.ok(prm >= 0, `no protected-resource metadata request:\n${trail()}`);
  assert.deepEqual([log[prm].method, log[prm].url, log[prm].status],
    ['GET', resourceMetadataUrl(url), 200], trail());
  const asMeta = log.findIndex((e) => e.url.startsWith(`${provider.issuer}/.well-known/`) && e.status === 200);
  assert.ok(asMeta > prm, `no authorization-server metadata from the advertised issuer after the PRM:\n${trail()}`);
  const token = log.findIndex((e) => e.url === provider.metadata.token_endpoint);
  assert.ok(token > asMeta, `no token request after the metadata:\n${trail()}`);
  const tokenRequest = log[token];
  assert.equal(tokenRequest.status, 200);
  assert.equal(tokenRequest.form.grant_type, grantType);
  assert.equal(tokenRequest.form.resource, url, 'RFC 8707 resource of the token request');
  const retried = log.slice(token + 1).find((e) => e.url === url);
  assert.ok(retried, `the MCP request was not sent again after the token request:\n${trail()}`);
  assert.match(retried.headers.get('authorization') ?? '', /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  assert.equal(retried.status, 200);
  return tokenRequest;
}

// A JWT the provider never issued but signs with its current RS256 key (its /__test/sign route):
// `claims` as given, e.g. a write-scoped token for the subject of a read-only client.
export async function signedToken(provider, claims) {
  const r = await fetch(`${provider.issuer}/__test/sign`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ alg: 'RS256', claims }),
  });
  const body = await r.text();
  assert.equal(r.status, 200, `/__test/sign: HTTP ${r.status} ${body}`);
  return JSON.parse(body).token;
}

// Checks the authorization request an SDK sent the user agent to (a URL): the provider's
// authorization endpoint, client "app", response_type code, PKCE S256, the callback, imgmcp's
// /mcp `url` as the RFC 8707 resource, and the scopes imgmcp's challenge asked for.
export function assertAuthorizationRequest(request, { url, provider }) {
  assert.equal(`${request.origin}${request.pathname}`, provider.metadata.authorization_endpoint);
  const q = request.searchParams;
  assert.equal(q.get('client_id'), APP_CLIENT);
  assert.equal(q.get('response_type'), 'code');
  assert.equal(q.get('redirect_uri'), APP_REDIRECT_URI);
  assert.equal(q.get('code_challenge_method'), 'S256');
  assert.match(q.get('code_challenge') ?? '', /^[\w-]{43}$/);
  assert.equal(q.get('resource'), url, 'RFC 8707 resource of the authorization request');
  assert.deepEqual((q.get('scope') ?? '').split(' ').filter((x) => x !== 'offline_access').sort(),
    ['imgmcp:read', 'imgmcp:write']);
}

// Checks the one token request of finishAuth: the authorization_code grant for `code` with a PKCE
// verifier, the public client's id and callback, imgmcp's /mcp `url` as the resource; and that the
// flow began with imgmcp's 401 and its protected-resource metadata. Returns the token request.
export function assertCodeExchange(log, { url, provider, code }) {
  const tokenRequests = log.filter((e) => e.url === provider.metadata.token_endpoint);
  assert.equal(tokenRequests.length, 1, 'one token request');
  const [tokenRequest] = tokenRequests;
  assert.equal(tokenRequest.status, 200);
  const form = tokenRequest.form;
  assert.equal(form.grant_type, 'authorization_code');
  assert.equal(form.code, code);
  assert.match(form.code_verifier ?? '', /^[\w.~-]{43,128}$/);
  assert.equal(form.client_id, APP_CLIENT);
  assert.equal(form.redirect_uri, APP_REDIRECT_URI);
  assert.equal(form.resource, url, 'RFC 8707 resource of the code exchange');
  assert.deepEqual([log[0].method, log[0].url, log[0].status], ['POST', url, 401]);
  assert.ok(log.some((e) => e.url === resourceMetadataUrl(url) && e.status === 200),
    'no protected-resource metadata fetched');
  return tokenRequest;
}

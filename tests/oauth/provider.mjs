// A real OAuth 2.1 / OpenID authorization server for the tests: oidc-provider (package.json pins
// it) issuing RFC 9068 JWT access tokens for resource indicators (RFC 8707), so imgmcp can be
// tested as a resource server against an implementation it was not written with.
//
//   node provider.mjs [--port 0]
//
// Listens on 127.0.0.1 (an OS-chosen port unless --port says otherwise), prints ONE line of JSON
// on stdout once listening, {"issuer": "http://127.0.0.1:PORT"}, and nothing else there (every
// log, including oidc-provider's notices, goes to stderr). Exits when stdin closes, so a test
// that dies never leaves it running. tests/integration/oauth_support.py drives it.
//
// Signing keys are generated at start-up (RSA 2048 for RS256, EC P-256 for ES256, Ed25519 for
// EdDSA). Clients (secret = client id + "-secret", client_secret_basic unless said):
//   writer        client_credentials, imgmcp:read imgmcp:write, JWT RS256
//   reader        client_credentials, imgmcp:read,              JWT RS256
//   writer-es256  client_credentials, imgmcp:read imgmcp:write, JWT ES256
//   writer-eddsa  client_credentials, imgmcp:read imgmcp:write, JWT EdDSA
//   opaque        client_credentials, imgmcp:read imgmcp:write, opaque tokens (introspect them)
//   imgmcp-rs     no grants: the resource server's credentials for the introspection endpoint
//   app           public client (PKCE S256), authorization_code + refresh_token,
//                 redirect_uri http://127.0.0.1/callback, openid imgmcp:read imgmcp:write, RS256
// Any resource http://127.0.0.1… or http://localhost… is accepted (audience = the resource
// exactly); others get invalid_target.
//
// Test-only routes, answered before oidc-provider sees the request:
//   POST /__test/rotate  new RSA key with a new kid becomes the RS256 signing key (listed first);
//                        the old keys stay in the JWKS. Answers {"kid": "..."}.
//   POST /__test/sign    {"alg": "RS256"|"ES256"|"EdDSA", "header": {...}, "claims": {...}}:
//                        a compact JWS signed with the CURRENT key of that alg. The header is
//                        {alg, kid, typ: "at+jwt"} overridden by "header"; a resulting alg "none"
//                        gives an unsigned "h.p." token. Claims are used as given (no defaults).
//                        Answers {"token": "..."}.
//   GET  /__test/keys    the public JWKS (the same as jwks_uri).

// oidc-provider prints some notices with console.info, which is stdout: route every console
// method to stderr before loading it, and write the one stdout line with process.stdout.
for (const method of ['log', 'info', 'debug']) {
  console[method] = (...args) => console.error(...args);
}

import * as crypto from 'node:crypto';
import * as http from 'node:http';

const { default: Provider, errors } = await import('oidc-provider');

const RESOURCE_SCOPES = 'imgmcp:read imgmcp:write';
const ALGS = ['RS256', 'ES256', 'EdDSA'];

function parseArgs(argv) {
  const options = { port: 0 };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--port' && i + 1 < argv.length) {
      options.port = Number(argv[(i += 1)]);
    } else if (argv[i].startsWith('--port=')) {
      options.port = Number(argv[i].slice('--port='.length));
    } else {
      throw new Error(`unknown argument ${argv[i]} (usage: node provider.mjs [--port N])`);
    }
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new Error('--port wants an integer 0..65535');
  }
  return options;
}

// --- keys ------------------------------------------------------------------------------------
let keyCounter = 0;

function generateKey(alg) {
  keyCounter += 1;
  const kid = `${alg.toLowerCase()}-${keyCounter}-${crypto.randomBytes(4).toString('hex')}`;
  let pair;
  switch (alg) {
    case 'RS256': pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }); break;
    case 'ES256': pair = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }); break;
    case 'EdDSA': pair = crypto.generateKeyPairSync('ed25519'); break;
    default: throw new Error(`unsupported alg ${alg}`);
  }
  const jwk = { ...pair.privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  return { alg, kid, privateKey: pair.privateKey, jwk };
}

// Newest first: keys[0] of an alg is its current signing key.
const keys = ALGS.map(generateKey);

function currentKey(alg) {
  return keys.find((key) => key.alg === alg);
}

function publicJwks() {
  return {
    keys: keys.map(({ jwk }) => {
      const { d, p, q, dp, dq, qi, ...pub } = jwk; // drop every private member
      return pub;
    }),
  };
}

// --- JWS for /__test/sign ----------------------------------------------------------------------
const b64url = (value) => Buffer.from(value).toString('base64url');

function signCompact(alg, headerOverrides, claims) {
  const key = currentKey(alg);
  if (!key) throw new Error(`alg must be one of ${ALGS.join(', ')}`);
  const header = { alg, kid: key.kid, typ: 'at+jwt', ...headerOverrides };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  if (header.alg === 'none') return `${input}.`;
  let signature;
  switch (alg) {
    case 'RS256': signature = crypto.sign('sha256', Buffer.from(input), key.privateKey); break;
    case 'ES256':
      signature = crypto.sign('sha256', Buffer.from(input),
        { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
      break;
    default: signature = crypto.sign(null, Buffer.from(input), key.privateKey); break;
  }
  return `${input}.${signature.toString('base64url')}`;
}

// --- oidc-provider -------------------------------------------------------------------------------
const CLIENT_ALG = {
  writer: 'RS256', reader: 'RS256', 'writer-es256': 'ES256', 'writer-eddsa': 'EdDSA', app: 'RS256',
};

function ccClient(clientId, scope) {
  return {
    client_id: clientId,
    client_secret: `${clientId}-secret`,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    scope,
  };
}

const clients = [
  ccClient('writer', RESOURCE_SCOPES),
  ccClient('reader', 'imgmcp:read'),
  ccClient('writer-es256', RESOURCE_SCOPES),
  ccClient('writer-eddsa', RESOURCE_SCOPES),
  ccClient('opaque', RESOURCE_SCOPES),
  { ...ccClient('imgmcp-rs', RESOURCE_SCOPES), grant_types: [] },
  {
    client_id: 'app',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['http://127.0.0.1/callback'],
    scope: `openid offline_access ${RESOURCE_SCOPES}`,
  },
];

function acceptedResource(resource) {
  let url;
  try {
    url = new URL(resource);
  } catch {
    return false;
  }
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost');
}

const cookieKeys = [crypto.randomBytes(32).toString('base64url')];

function makeProvider(issuer) {
  const configuration = {
    clients,
    jwks: { keys: keys.map(({ jwk }) => jwk) },
    scopes: ['openid', 'offline_access', 'imgmcp:read', 'imgmcp:write'],
    cookies: { keys: cookieKeys },
    // Any login name is the account; its only claim is sub.
    findAccount: (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    clientBasedCORS: () => false,
    pkce: { required: () => true },
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      ClientCredentials: 600,
      Grant: 3600,
      IdToken: 3600,
      Interaction: 600,
      RefreshToken: 86400,
      Session: 3600,
    },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // The resource server (imgmcp-rs) may introspect every token; a client its own.
        allowedPolicy: async (ctx, client, token) => client.clientId === 'imgmcp-rs'
          || client.clientId === token.clientId,
      },
      revocation: { enabled: true },
      // Dynamic client registration (RFC 7591), open: MCP clients (Claude Code, the SDKs' auth
      // flows) register themselves before the authorization-code flow.
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (ctx, client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resourceIndicator, client) => {
          if (!acceptedResource(resourceIndicator)) {
            throw new errors.InvalidTarget(
              `resource ${resourceIndicator} is not http://127.0.0.1… or http://localhost…`);
          }
          const info = { audience: resourceIndicator, scope: RESOURCE_SCOPES };
          if (client.clientId === 'opaque') {
            return { ...info, accessTokenFormat: 'opaque' };
          }
          const alg = CLIENT_ALG[client.clientId] ?? 'RS256';
          return {
            ...info,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg, kid: currentKey(alg).kid } },
          };
        },
      },
    },
    // Opaque client-credentials tokens have no account; say the client is the subject in
    // introspection too, as the JWT format does (sub = client_id).
    extraTokenClaims: async (ctx, token) => (token.kind === 'ClientCredentials'
      ? { sub: token.clientId } : undefined),
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.proxy = false;
  provider.on('server_error', (ctx, err) => console.error('oidc-provider server_error:', err));
  return { provider, callback: provider.callback() };
}

// --- HTTP ----------------------------------------------------------------------------------------
function sendJson(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(data);
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

async function testRoute(req, res, issuer, state) {
  const { pathname } = new URL(req.url, issuer);
  if (pathname === '/__test/keys' && req.method === 'GET') {
    sendJson(res, 200, publicJwks());
  } else if (pathname === '/__test/rotate' && req.method === 'POST') {
    const key = generateKey('RS256');
    keys.unshift(key);
    state.current = makeProvider(issuer);
    console.error(`rotated: RS256 signing key is now ${key.kid}`);
    sendJson(res, 200, { kid: key.kid });
  } else if (pathname === '/__test/sign' && req.method === 'POST') {
    let body;
    try {
      body = await readJson(req);
    } catch (err) {
      sendJson(res, 400, { error: `body is not JSON: ${err.message}` });
      return;
    }
    const { alg = 'RS256', header = {}, claims = {} } = body;
    if (!ALGS.includes(alg)) {
      sendJson(res, 400, { error: `alg must be one of ${ALGS.join(', ')}` });
      return;
    }
    sendJson(res, 200, { token: signCompact(alg, header, claims) });
  } else {
    sendJson(res, 404, { error: `no test route ${req.method} ${pathname}` });
  }
}

const options = parseArgs(process.argv.slice(2));
const server = http.createServer();
server.listen(options.port, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const state = { current: makeProvider(issuer) };
  server.on('request', (req, res) => {
    if (req.url.startsWith('/__test/')) {
      testRoute(req, res, issuer, state).catch((err) => {
        console.error('test route failed:', err);
        if (!res.headersSent) sendJson(res, 500, { error: String(err?.message ?? err) });
      });
    } else {
      state.current.callback(req, res);
    }
  });
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
server.on('error', (err) => {
  console.error('provider.mjs:', err);
  process.exit(1);
});

// EOF on stdin (the test closed it, or died) ends the process.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

// P6 with OAuth: a minimal authorization server for the benchmark (node:crypto only). It makes an
// RSA key, serves its RFC 8414 metadata and JWK Set on 127.0.0.1 (OS-chosen port), and prints one
// JSON line {"issuer": …, "token": …}: an RS256 JWT access token (RFC 9068) for RESOURCE, valid
// an hour, with both of imgmcp's scopes. Ends when its stdin closes.
// Usage: node oauth_issuer.mjs RESOURCE
import crypto from 'node:crypto';
import http from 'node:http';

const resource = process.argv[2];
const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = 'bench-1';
const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
const b64url = (value) => Buffer.from(value).toString('base64url');

function token(issuer) {
  const now = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'at+jwt', kid }));
  const claims = b64url(JSON.stringify({
    iss: issuer, sub: 'bench', aud: resource, client_id: 'bench', scope: 'imgmcp:read imgmcp:write',
    iat: now, exp: now + 3600, jti: crypto.randomUUID() }));
  const signature = crypto.sign('sha256', Buffer.from(`${header}.${claims}`), privateKey);
  return `${header}.${claims}.${b64url(signature)}`;
}

const server = http.createServer((req, res) => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const documents = {
    '/.well-known/oauth-authorization-server': { issuer, jwks_uri: `${issuer}/jwks` },
    '/jwks': { keys: [jwk] },
  };
  const body = documents[req.url];
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? { error: 'not found' }));
});
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(JSON.stringify({ issuer, token: token(issuer) }) + '\n');
});
process.stdin.on('end', () => server.close(() => process.exit(0)));
process.stdin.resume();

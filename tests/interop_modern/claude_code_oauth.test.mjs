// Interop: Claude Code 2.1.332 (the native binary, as in claude_code.test.mjs: a private HOME, no
// credentials) against imgmcp as an OAuth 2.1 resource server (`--oauth-issuer`, with
// tests/oauth/provider.mjs as the authorization server). `claude mcp add --transport http` then
// one `claude mcp list`: with no token stored, Claude Code's health check meets imgmcp's 401,
// follows its challenge to the protected-resource metadata and the authorization server it names
// (its --debug-file logs "Saving discovery state (authServer: ISSUER/)"), and, having no client
// registration yet, defers the login to an interactive session. The list must report the server
// as "! Needs authentication", not as "✘ Failed to connect" — which is what it says for a 401 that
// leads to no authorization server: against `imgmcp --auth-token` (no protected-resource metadata)
// it falls back to dynamic registration at imgmcp's own origin and lists "✘ Failed to connect —
// Dynamic Client Registration rejected (HTTP 404)".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, tempDir } from './support/processes.mjs';
import { startOAuthPair } from './support/oauth.mjs';

const CLAUDE = fileURLToPath(new URL(
  './node_modules/@anthropic-ai/claude-code-linux-x64/claude', import.meta.url));
const TIMEOUT = { timeout: 60000 };

let work;
let pair;

// The environment claude runs with: a private HOME, no credentials, no traffic beyond the test.
function claudeEnv(home) {
  return { PATH: process.env.PATH, HOME: home, TMPDIR: process.env.TMPDIR ?? '/tmp',
    DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
}

before(async () => {
  work = tempDir('claude-oauth');
  pair = await startOAuthPair();
});

after(async () => {
  try {
    await pair?.stop();
  } finally {
    work?.remove();
  }
});

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('claude mcp list reports the OAuth-protected imgmcp as needing authentication', TIMEOUT,
  async () => {
    const home = join(work.dir, 'home');
    const project = join(work.dir, 'project');
    for (const dir of [home, project]) mkdirSync(dir);
    const debugFile = join(work.dir, 'debug.log');
    const claude = (args) => run(CLAUDE, args, { cwd: project, env: claudeEnv(home), timeoutMs: 50000 });
    const { url } = pair.server;

    let r = await claude(['mcp', 'add', '--transport', 'http', 'imgmcp-oauth', url]);
    assert.equal(r.code, 0, `claude mcp add:\n${r.stdout}\n${r.stderr}`);
    r = await claude(['--debug-file', debugFile, 'mcp', 'list']);
    assert.equal(r.code, 0, `claude mcp list:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout,
      new RegExp(`^imgmcp-oauth: ${escape(url)} \\(HTTP\\) - ! Needs authentication$`, 'm'), r.stdout);
    assert.doesNotMatch(r.stdout, /Failed to connect|✘|Connected/, r.stdout);

    // It got there through imgmcp's challenge: the authorization server it discovered is the
    // provider imgmcp's protected-resource metadata names.
    const debugLog = readFileSync(debugFile, 'utf8');
    const server = 'MCP server "imgmcp-oauth": ';
    assert.match(debugLog,
      new RegExp(`${escape(server)}Saving discovery state \\(authServer: ${escape(pair.provider.issuer)}/?\\)`),
      debugLog);
    assert.ok(debugLog.includes(`${server}Authentication required for HTTP server`), debugLog);
    // imgmcp refused it for want of a token, and nothing else.
    assert.match(pair.server.stderr(), /refused a request: Unauthorized: a bearer token is required/);
  });

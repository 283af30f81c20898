// Interop: Claude Code 2.1.332 (the native binary from @anthropic-ai/claude-code's linux-x64
// package; no login is needed to configure and health-check MCP servers). With a temporary HOME,
// `claude mcp add` registers imgmcp over stdio (Claude Code starts the binary) and over Streamable
// HTTP; `claude mcp list` connects to both and must report them Connected. Its --debug-file says
// which era each connection negotiated: modern (2026-07-28, probed with server/discover) by
// default, and legacy 2025-11-25 (initialize) when MCP_PROTOCOL_NEGOTIATION=legacy forces it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODERN, imgmcpBin, run, startHttpServer, tempDir } from './support/processes.mjs';

const CLAUDE = fileURLToPath(new URL(
  './node_modules/@anthropic-ai/claude-code-linux-x64/claude', import.meta.url));
const TIMEOUT = { timeout: 120000 };

let work;
let http;

// The environment claude runs with: a private HOME, no credentials, no traffic beyond the test.
function claudeEnv(home, extra = {}) {
  return { PATH: process.env.PATH, HOME: home, TMPDIR: process.env.TMPDIR ?? '/tmp',
    DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ...extra };
}

// Registers both servers in a fresh HOME (Claude Code remembers each server's era there).
async function configure(name) {
  const home = join(work.dir, `home-${name}`);
  const project = join(work.dir, `project-${name}`);
  const data = join(work.dir, `data-${name}`);
  for (const dir of [home, project, data]) mkdirSync(dir);
  const claude = (args, extra) => run(CLAUDE, args, { cwd: project, env: claudeEnv(home, extra) });
  for (const args of [
    ['mcp', 'add', 'imgmcp-stdio', '--', imgmcpBin(), '--backend', 'local', '--data-dir', data],
    ['mcp', 'add', '--transport', 'http', 'imgmcp-http', http.url],
  ]) {
    const r = await claude(args);
    assert.equal(r.code, 0, `claude ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  }
  return { claude, debugFile: join(work.dir, `debug-${name}.log`) };
}

// The capabilities line Claude Code logs for SERVER once connected, parsed.
function connection(debugLog, server) {
  const prefix = `MCP server "${server}": Connection established with capabilities: `;
  const line = debugLog.split('\n').find((l) => l.includes(prefix));
  assert.ok(line, `no "${prefix}" line in the debug log:\n${debugLog}`);
  return JSON.parse(line.slice(line.indexOf(prefix) + prefix.length));
}

async function listAndCheck(name, extraEnv, era, version) {
  const { claude, debugFile } = await configure(name);
  const r = await claude(['--debug-file', debugFile, 'mcp', 'list'], extraEnv);
  const debugLog = readFileSync(debugFile, 'utf8');
  assert.equal(r.code, 0, `claude mcp list:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^imgmcp-stdio: .* - ✔ Connected$/m, r.stdout);
  assert.match(r.stdout, /^imgmcp-http: .* \(HTTP\) - ✔ Connected$/m, r.stdout);
  for (const server of ['imgmcp-stdio', 'imgmcp-http']) {
    const caps = connection(debugLog, server);
    assert.equal(caps.hasTools, true, `${server}: ${JSON.stringify(caps)}`);
    assert.equal(caps.serverVersion?.name, 'imgmcp', `${server}: ${JSON.stringify(caps)}`);
    assert.deepEqual([caps.protocolEra, caps.negotiatedProtocolVersion], [era, version],
      `${server}: ${JSON.stringify(caps)}`);
  }
}

before(async () => {
  work = tempDir('claude');
  mkdirSync(join(work.dir, 'http-data'));
  http = await startHttpServer({ dataDir: join(work.dir, 'http-data'), args: ['--backend', 'local'] });
});

after(async () => {
  await http?.stop();
  work?.remove();
});

test('claude mcp list connects to imgmcp over stdio and HTTP in the modern era', TIMEOUT,
  () => listAndCheck('modern', {}, 'modern', MODERN));

test('with MCP_PROTOCOL_NEGOTIATION=legacy it still connects, on 2025-11-25', TIMEOUT,
  () => listAndCheck('legacy', { MCP_PROTOCOL_NEGOTIATION: 'legacy' }, 'legacy', '2025-11-25'));

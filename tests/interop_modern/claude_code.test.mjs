// Interop: Claude Code 2.1.332 (the native binary from @anthropic-ai/claude-code's linux-x64
// package; no login is needed to configure and health-check MCP servers). With a temporary HOME,
// `claude mcp add` registers imgmcp over stdio (Claude Code starts the binary) and over Streamable
// HTTP; `claude mcp list` connects to both and must report them Connected. Its --debug-file says
// which era each connection negotiated: modern (2026-07-28, probed with server/discover) by
// default, and legacy 2025-11-25 (initialize) when MCP_PROTOCOL_NEGOTIATION=legacy forces it.
//
// Tool calls: `claude -p` runs one agent turn against support/fake_anthropic.mjs (a scripted
// model on 127.0.0.1 that asks for generate_image and then quotes its result), with imgmcp over
// HTTP behind a recording proxy (support/recording_proxy.mjs). Tasks: Claude Code 2.1.332 carries
// io.modelcontextprotocol/tasks support, but declares the extension on a tools/call only when its
// gate allows: CLAUDE_CODE_DISABLE_MCP_TASKS unset and the tengu_glowing_lark flag, whose default
// is the "cli" entrypoint (an interactive session) outside remote sessions. Print mode (-p)
// rewrites the entrypoint "cli" to "sdk-cli", so its calls declare no extension and imgmcp
// answers them directly (no task), which is what is asserted; `claude mcp list` strips the
// extension from the capabilities it connects with, too. (Strings of the binary: the functions
// around `Qxt="io.modelcontextprotocol/tasks"`, `zC()` and `CLAUDE_CODE_ENTRYPOINT`.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODERN, TOOL_NAMES, imgmcpBin, run, startHttpServer, tempDir } from './support/processes.mjs';
import { startFakeAnthropic } from './support/fake_anthropic.mjs';
import { startRecordingProxy } from './support/recording_proxy.mjs';

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

test('claude -p calls generate_image over HTTP in the modern era, answered directly', TIMEOUT,
  async () => {
    const TASKS = 'io.modelcontextprotocol/tasks';
    const args = { session_id: 'claude', prompt: 'solid teal', inline: 'none' };
    const model = await startFakeAnthropic({ toolSuffix: '__generate_image', args });
    const proxy = await startRecordingProxy(http.url);
    try {
      const home = join(work.dir, 'home-call');
      const project = join(work.dir, 'project-call');
      for (const dir of [home, project]) mkdirSync(dir);
      // The scripted model; MCP tools loaded up front rather than found through tool search.
      const env = claudeEnv(home, { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
        ANTHROPIC_BASE_URL: model.url, ENABLE_TOOL_SEARCH: 'false' });
      const claude = (a) => run(CLAUDE, a, { cwd: project, env, timeoutMs: 110000 });
      let r = await claude(['mcp', 'add', '--transport', 'http', 'imgmcp', proxy.url]);
      assert.equal(r.code, 0, `claude mcp add:\n${r.stdout}\n${r.stderr}`);
      r = await claude(['-p', 'Make a teal square.', '--output-format', 'json',
        '--allowedTools', 'mcp__imgmcp__generate_image']);
      assert.equal(r.code, 0, `claude -p:\n${r.stdout}\n${r.stderr}`);
      const out = JSON.parse(r.stdout);
      assert.equal(out.is_error, false, r.stdout);
      // The model was offered the four tools, and its tool_use came back with imgmcp's result.
      const offered = model.requests[0].tools.map((t) => t.name).filter((n) => n.startsWith('mcp__imgmcp__'));
      assert.deepEqual(offered.sort(), TOOL_NAMES.map((n) => `mcp__imgmcp__${n}`));
      assert.match(out.result, /^RESULT: /);
      assert.match(out.result, /"session_id":"claude"/);
      assert.match(out.result, /"version":1\b/);

      const sent = (m) => proxy.exchanges.filter((e) => e.request?.method === m);
      const answer = (e) => e.responses.find((m) => m.id === e.request.id && !('method' in m));
      const [discover] = sent('server/discover');
      assert.ok(discover, 'no server/discover');
      // imgmcp advertised the extension; Claude Code still connected and called.
      assert.deepEqual(answer(discover).result.capabilities.extensions?.[TASKS], {});
      const [call] = sent('tools/call');
      assert.ok(call, 'no tools/call reached imgmcp');
      assert.equal(call.request.params._meta['io.modelcontextprotocol/protocolVersion'], MODERN);
      const declared = call.request.params._meta['io.modelcontextprotocol/clientCapabilities'];
      assert.equal(declared?.extensions?.[TASKS], undefined, JSON.stringify(declared));
      const direct = answer(call);
      assert.equal(direct.result.resultType, 'complete', JSON.stringify(direct));
      assert.equal(direct.result.structuredContent.version, 1);
      assert.equal(sent('tasks/get').length, 0);
    } finally {
      await proxy.stop();
      await model.stop();
    }
  });

// Interop, modern era: the MCP Inspector CLI 2.12.0 (`mcp-inspector --cli --protocol-era modern`,
// one process per command, as a script or CI job runs it) lists and calls imgmcp's tools and lists
// and reads its resources (the session viewer MCP App among them), over stdio (the inspector starts
// the binary) and over Streamable HTTP.
//
// Tasks: in the modern era the Inspector sends every tools/call through
// @modelcontextprotocol/ext-tasks and declares io.modelcontextprotocol/tasks in its client
// capabilities by default (ADVERTISABLE_EXTENSIONS, defaultAdvertised: true, in its
// clients/cli/build/index.js), so imgmcp answers generate_image and edit_image with a task, which
// the Inspector polls with tasks/get to the result it prints. A recording proxy in front of imgmcp
// shows that on the wire. The one-shot CLI cannot address a task by id: parseArgs refuses any
// --method outside ONE_SHOT_METHODS (tools/*, resources/*, prompts/*, initialize, logging/setLevel,
// skills/*) with "Unsupported method", so tasks/get and tasks/cancel never reach the dispatcher
// branches its bundle still has (which would need a --task-id it does not define either). A task
// it leaves behind (the process killed mid-call) runs to its committed version, read here by id
// with the v2 SDK and ext-tasks. The package's other CLI, mcpdo (connect once, then one command
// per process against a named connection, kept by its daemon), does have tasks/get and
// tasks/cancel by id: a tools/call held on one connection is polled and cancelled through a
// second one, and commits nothing. (A connection runs one command at a time, hence two.)
import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import {
  TOOL_NAMES, imgmcpBin, run, serverEnv, startFakeGemini, startHttpServer, tempDir,
} from './support/processes.mjs';
import { startRecordingProxy } from './support/recording_proxy.mjs';
import { ok, sha256 } from './support/results.mjs';
import { httpTransport, modernClient } from './support/sdk.mjs';
import { taskSession } from './support/tasks.mjs';

const INSPECTOR = fileURLToPath(new URL(
  './node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url));
const MCPDO = fileURLToPath(new URL(
  './node_modules/@modelcontextprotocol/inspector/clients/mcpdo/build/mcp-bin.js', import.meta.url));
const TIMEOUT = { timeout: 90000 };
const TASKS = 'io.modelcontextprotocol/tasks';
const TEST_KEY = `AIzaTEST-inspector-${process.pid}-${Date.now()}`;  // dummy; only sent to 127.0.0.1
const VIEWER = 'ui://imgmcp/session-viewer.html';
const APP_MIME = 'text/html;profile=mcp-app';

function inspectorSuite(over, open) {
  let work;
  let target;
  let stop;

  // Runs the inspector CLI with ARGS against the target (last: a URL, or `-- command args`);
  // resolves its parsed JSON output.
  async function inspect(args) {
    const home = join(work.dir, 'home');
    const r = await run(process.execPath,
      [INSPECTOR, '--cli', '--protocol-era', 'modern', '--format', 'json', ...args, ...target],
      { cwd: work.dir, env: serverEnv({ HOME: home }) });
    assert.equal(r.code, 0, `inspector ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout);
  }
  const callTool = async (name, args) => (await inspect(
    ['--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args)])).result;

  before(async () => {
    work = tempDir('inspector');
    mkdirSync(join(work.dir, 'home'));
    mkdirSync(join(work.dir, 'data'));
    ({ target, stop } = await open(join(work.dir, 'data')));
  });

  after(async () => {
    await stop?.();
    work?.remove();
  });

  test(`tools/list shows the four tools${over}`, TIMEOUT, async () => {
    const out = await inspect(['--method', 'tools/list']);
    const tools = out.tools ?? out.result?.tools;
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
  });

  test(`all four tools and a resource read${over}`, TIMEOUT, async () => {
    const v1 = (await callTool('generate_image',
      { session_id: 'insp', prompt: 'solid navy', inline: 'none' })).structuredContent;
    assert.deepEqual([v1.session_id, v1.version], ['insp', 1]);
    const v2 = (await callTool('edit_image',
      { session_id: 'insp', prompt: 'invert', inline: 'none' })).structuredContent;
    assert.equal(v2.version, 2);
    const got = (await callTool('get_image', { session_id: 'insp', version: 1, inline: 'none' })).structuredContent;
    assert.equal(got.sha256, v1.sha256);
    const blob = (await inspect(['--method', 'resources/read', '--uri', v2.uri])).result;
    assert.equal(sha256(Buffer.from(blob.contents[0].blob, 'base64')), v2.sha256);
    const reverted = (await callTool('reset_session', { session_id: 'insp', to_version: 1 })).structuredContent;
    assert.deepEqual([reverted.version, reverted.sha256], [3, v1.sha256]);
  });

  test(`the session viewer (MCP App) is listed and readable${over}`, TIMEOUT, async () => {
    const listed = (await inspect(['--method', 'resources/list'])).result.resources
      .find((r) => r.uri === VIEWER);
    assert.equal(listed?.mimeType, APP_MIME);
    const { contents } = (await inspect(['--method', 'resources/read', '--uri', VIEWER])).result;
    assert.deepEqual([contents[0].uri, contents[0].mimeType], [VIEWER, APP_MIME]);
    assert.match(contents[0].text, /<html[\s>]/i);
  });
}

describe('over stdio', () => {
  inspectorSuite(' over stdio', async (dataDir) => ({
    target: ['--', imgmcpBin(), '--backend', 'local', '--data-dir', dataDir],
  }));
});

describe('over HTTP', () => {
  inspectorSuite(' over HTTP', async (dataDir) => {
    const server = await startHttpServer({ dataDir, args: ['--backend', 'local'] });
    return { target: [server.url], stop: server.stop };
  });
});

// The JSON-RPC exchanges the proxy saw for METHOD.
const sent = (proxy, method) => proxy.exchanges.filter((e) => e.request?.method === method);
// The one answer to an exchange's request (by id; progress notifications may precede it).
const answer = (e) => e.responses.find((m) => m.id === e.request.id && !('method' in m));

describe('tasks over HTTP (Gemini backend)', () => {
  let work;
  let fake;
  let server;
  let proxy;

  const inspectorArgs = (args) =>
    [INSPECTOR, '--cli', '--protocol-era', 'modern', '--format', 'json', ...args, proxy.url];
  const inspect = (args) => run(process.execPath, inspectorArgs(args),
    { cwd: work.dir, env: serverEnv({ HOME: join(work.dir, 'home') }) });
  const toolCall = (name, args) => ['--method', 'tools/call', '--tool-name', name,
    '--tool-args-json', JSON.stringify({ ...args, inline: 'none' })];

  before(async () => {
    work = tempDir('inspector-tasks');
    mkdirSync(join(work.dir, 'home'));
    mkdirSync(join(work.dir, 'data'));
    fake = await startFakeGemini();
    server = await startHttpServer({ dataDir: join(work.dir, 'data'), args: ['--backend', 'gemini'],
      env: { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: fake.baseUrl } });
    proxy = await startRecordingProxy(server.url);
  });

  after(async () => {
    await proxy?.stop();
    await server?.stop();
    await fake?.stop();
    work?.remove();
  });

  beforeEach(async () => {
    await fake.reset();
    proxy.exchanges.length = 0;
  });

  test('tools/call is answered with a task, which the inspector polls to its result', TIMEOUT,
    async () => {
      const r = await inspect(toolCall('generate_image', { session_id: 'insp-t', prompt: 'solid navy' }));
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      const v1 = JSON.parse(r.stdout).result.structuredContent;
      assert.deepEqual([v1.session_id, v1.version, v1.backend], ['insp-t', 1, 'gemini']);

      const [call] = sent(proxy, 'tools/call');
      const declared = call.request.params._meta['io.modelcontextprotocol/clientCapabilities'];
      assert.deepEqual(declared.extensions?.[TASKS], {}, JSON.stringify(declared));
      const created = answer(call).result;
      assert.equal(created.resultType, 'task', JSON.stringify(created));
      const polls = sent(proxy, 'tasks/get');
      assert.ok(polls.length >= 1, 'the inspector never polled');
      assert.ok(polls.every((e) => e.request.params.taskId === created.taskId));
      const last = answer(polls.at(-1)).result;
      assert.equal(last.status, 'completed');
      assert.equal(last.result.structuredContent.version, 1);
    });

  test('a task the inspector leaves behind still commits, and is read by id with ext-tasks',
    TIMEOUT, async () => {
      await fake.script({ hold: 'left' });
      const child = spawn(process.execPath,
        inspectorArgs(toolCall('edit_image', { session_id: 'insp-t', prompt: 'invert' })),
        { cwd: work.dir, env: serverEnv({ HOME: join(work.dir, 'home') }), detached: true,
          stdio: 'ignore' });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      let taskId;
      try {
        await fake.wait({ requests: 1, held: 1 });  // the task's Gemini call is held
        const created = answer(sent(proxy, 'tools/call')[0]).result;
        assert.equal(created.resultType, 'task', JSON.stringify(created));
        taskId = created.taskId;
      } finally {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
        await exited;
        await fake.release('left');
      }
      const transport = httpTransport(server.url);
      const client = modernClient('imgmcp-interop-after-inspector', 'pin');
      await client.connect(transport);
      const { session } = taskSession(client, transport, 'inspector-left');
      try {
        const v2 = ok(resultFromTaskOutcome(await session.task(taskId).result()));
        assert.deepEqual([v2.session_id, v2.version, v2.parent_version], ['insp-t', 2, 1]);
      } finally {
        await session.close();
        await client.close();
      }
    });

  test('the one-shot CLI refuses tasks/get and tasks/cancel before connecting', TIMEOUT,
    async () => {
      for (const method of ['tasks/get', 'tasks/cancel']) {
        const r = await inspect(['--method', method, '--task-id', '0'.repeat(32)]);
        assert.notEqual(r.code, 0, `${method}: ${r.stdout}`);
        const said = r.stderr + r.stdout;
        assert.match(said, new RegExp(`Unsupported method: ${method}\\. Supported --cli methods: `), said);
        assert.doesNotMatch(said.slice(said.indexOf('Supported')), /tasks\//, said);
      }
      assert.equal(proxy.exchanges.length, 0, 'the CLI sent requests');
    });
});

describe('mcpdo tasks over HTTP (Gemini backend)', () => {
  let work;
  let fake;
  let server;
  let proxy;
  let env;

  const mcpdo = async (args) => {
    const r = await run(process.execPath, [MCPDO, '--format', 'json', ...args], { cwd: work.dir, env });
    assert.equal(r.code, 0, `mcpdo ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout);
  };

  before(async () => {
    work = tempDir('mcpdo');
    mkdirSync(join(work.dir, 'home'));
    mkdirSync(join(work.dir, 'data'));
    env = serverEnv({ HOME: join(work.dir, 'home'), MCP_CATALOG_PATH: join(work.dir, 'mcp.json'),
      MCP_INSPECTOR_SECRET_STORE: 'memory' });
    fake = await startFakeGemini();
    server = await startHttpServer({ dataDir: join(work.dir, 'data'), args: ['--backend', 'gemini'],
      env: { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: fake.baseUrl } });
    proxy = await startRecordingProxy(server.url);
  });

  after(async () => {
    // mcpdo leaves its daemon running; stop it, and end it by its pid if it does not go.
    const status = work && await run(process.execPath, [MCPDO, '--format', 'json', 'daemon', 'status'],
      { cwd: work.dir, env }).catch(() => undefined);
    const pid = (() => { try { return JSON.parse(status.stdout).pid; } catch { return undefined; } })();
    if (work) await run(process.execPath, [MCPDO, 'daemon', 'stop'], { cwd: work.dir, env }).catch(() => {});
    if (Number.isInteger(pid)) { try { process.kill(pid, 'SIGKILL'); } catch { /* stopped */ } }
    await proxy?.stop();
    await server?.stop();
    await fake?.stop();
    work?.remove();
  });

  test('a held tools/call becomes a task, polled and cancelled by id from another connection',
    TIMEOUT, async () => {
      for (const name of ['caller', 'other']) {
        const c = await mcpdo(['connect', '--era', 'modern', '--connection', name, proxy.url]);
        assert.equal(c.protocolEra, 'modern', JSON.stringify(c));
      }
      await fake.script({ hold: 'held' });
      const child = spawn(process.execPath, [MCPDO, '--format', 'json', '--connection', 'caller',
        'tools/call', 'generate_image', '--tool-args-json',
        JSON.stringify({ session_id: 'mcpdo', prompt: 'solid navy', inline: 'none' })],
      { cwd: work.dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      child.stdout.on('data', (c) => { said += c; });
      child.stderr.on('data', (c) => { said += c; });
      const exited = new Promise((resolve) => child.on('close', resolve));
      try {
        await fake.wait({ requests: 1, held: 1 });  // the task's Gemini call is held
        const call = sent(proxy, 'tools/call')[0];
        const created = answer(call).result;
        assert.equal(created.resultType, 'task', JSON.stringify(created));
        const taskId = created.taskId;
        assert.equal((await mcpdo(['--connection', 'other', 'tasks/get', taskId])).task.status, 'working');
        assert.deepEqual(await mcpdo(['--connection', 'other', 'tasks/cancel', taskId]),
          { cancelled: true, taskId });
        assert.equal((await mcpdo(['--connection', 'other', 'tasks/get', taskId])).task.status,
          'cancelled');
        // The caller's own polling sees the cancellation and its tools/call ends with it.
        assert.notEqual(await exited, 0, said);
        assert.match(said, /cancelled/, said);
        assert.ok(sent(proxy, 'tasks/cancel').every((e) => e.request.params.taskId === taskId));
      } finally {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
        await fake.release('held');
      }
      // Nothing was committed: the session has no version.
      const transport = httpTransport(server.url);
      const client = modernClient('imgmcp-interop-after-mcpdo', 'pin');
      await client.connect(transport);
      try {
        const got = await client.callTool({ name: 'get_image',
          arguments: { session_id: 'mcpdo', inline: 'none' } });
        assert.equal(got.isError, true, JSON.stringify(got));
      } finally {
        await client.close();
      }
    });
});

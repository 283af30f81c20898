// Interop, modern era: the v2 MCP SDK client with @modelcontextprotocol/ext-tasks 0.2.2 drives
// imgmcp's io.modelcontextprotocol/tasks extension (mcp/task_runner.h), over Streamable
// HTTP and over stdio. imgmcp runs with --backend gemini against tests/fake_gemini, so every
// generate_image and edit_image from a client that declares the extension is answered with a
// task: ext-tasks polls it with tasks/get to completed and reads the committed version from its
// result; a task whose Gemini call the fake holds is cancelled with tasks/cancel and commits no
// version. The same connection's own SDK requests, which do not declare the extension, are
// answered directly.
import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { TaskCancelledError, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { MODERN, startFakeGemini, startHttpServer, tempDir } from './support/processes.mjs';
import { ok } from './support/results.mjs';
import { httpTransport, modernClient, stdioTransport } from './support/sdk.mjs';
import { taskSession } from './support/tasks.mjs';

const TEST_KEY = `AIzaTEST-tasks-${process.pid}-${Date.now()}`;  // dummy; only sent to 127.0.0.1
const TASKS = 'io.modelcontextprotocol/tasks';
const SESSION = 'ext-tasks';
const TIMEOUT = { timeout: 60000 };

function tasksSuite(over, open) {
  let fake;
  let data;
  let server;
  let client;  // its own requests (client.callTool) declare no extension
  let tasks;  // ext-tasks on the same connection: its requests declare the extension

  const currentVersion = async () => ok(await client.callTool({ name: 'get_image',
    arguments: { session_id: SESSION, inline: 'none', include_history: false } })).version;
  const asTask = (name, args) => tasks.session.callTool(name, { ...args, inline: 'none' },
    { task: { preference: 'prefer' } });

  before(async () => {
    fake = await startFakeGemini();
    data = tempDir('ext-tasks');
    const env = { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: fake.baseUrl };
    server = await open(data.dir, ['--backend', 'gemini'], env);
    const transport = server.transport();
    client = modernClient('imgmcp-interop-ext-tasks', 'pin');
    await client.connect(transport);
    tasks = taskSession(client, transport, `imgmcp${over.replaceAll(' ', '-')}`);
  });

  after(async () => {
    await tasks?.session.close();
    await client?.close();
    await server?.stop();
    await fake?.stop();
    data?.remove();
  });

  beforeEach(async () => { await fake.reset(); });

  test(`server/discover advertises the extension and ext-tasks negotiates it${over}`, TIMEOUT,
    async () => {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      assert.deepEqual(client.getDiscoverResult().capabilities.extensions?.[TASKS], {});
      const caps = tasks.session.capabilities;
      assert.deepEqual([caps.execution, caps.cancellation, caps.inputResponses],
        [true, true, true], JSON.stringify(caps));
    });

  test(`generate_image runs as a task, polled to completed with its version${over}`, TIMEOUT,
    async () => {
      const execution = await asTask('generate_image', { session_id: SESSION, prompt: 'solid teal' });
      assert.equal(execution.kind, 'task');
      const taskId = execution.handle.taskId;
      assert.match(taskId, /^[0-9a-f]{32}$/);
      const seen = [];
      const { outcome } = await execution.settle({
        onEvent: (e) => { if (e.type === 'task') seen.push(e.task.status); } });
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
      const v1 = ok(resultFromTaskOutcome(outcome));
      assert.deepEqual([v1.session_id, v1.version, v1.backend], [SESSION, 1, 'gemini']);
      assert.ok(seen.every((s) => s === 'working' || s === 'completed'), JSON.stringify(seen));
      // The task stays readable by id once finished (tasks/get), with the same result.
      const again = await tasks.session.task(taskId).result();
      assert.equal(ok(resultFromTaskOutcome(again)).version, 1);
      assert.equal((await tasks.session.task(taskId).snapshot()).status, 'completed');
      assert.equal(await currentVersion(), 1);
    });

  test(`edit_image runs as a task and commits the next version${over}`, TIMEOUT, async () => {
    const before = await currentVersion();
    const execution = await asTask('edit_image', { session_id: SESSION, prompt: 'invert' });
    assert.equal(execution.kind, 'task');
    const edited = ok(resultFromTaskOutcome((await execution.settle()).outcome));
    assert.deepEqual([edited.version, edited.parent_version], [before + 1, before]);
    assert.equal(await currentVersion(), before + 1);
  });

  test(`a held task cancelled with tasks/cancel commits nothing${over}`, TIMEOUT, async () => {
    const before = await currentVersion();
    await fake.script({ hold: 'held' });
    const execution = await asTask('edit_image', { session_id: SESSION, prompt: 'grayscale' });
    assert.equal(execution.kind, 'task');
    const taskId = execution.handle.taskId;
    try {
      await fake.wait({ requests: 1, held: 1 });  // the task's Gemini call is in flight, and held
      assert.equal((await tasks.session.task(taskId).snapshot()).status, 'working');
      await execution.cancel();
      const { outcome } = await execution.settle();
      assert.equal(outcome.status, 'cancelled', JSON.stringify(outcome));
      assert.throws(() => resultFromTaskOutcome(outcome), TaskCancelledError);
      assert.equal((await tasks.session.task(taskId).snapshot()).status, 'cancelled');
      assert.equal(await currentVersion(), before);
      // The next edit gets the turn the cancelled one gave up, and the next version number,
      // while the cancelled call is still held unanswered at the fake.
      const next = await asTask('edit_image', { session_id: SESSION, prompt: 'invert' });
      const v = ok(resultFromTaskOutcome((await next.settle()).outcome));
      assert.deepEqual([v.version, v.parent_version], [before + 1, before]);
      assert.equal((await fake.wait()).held, 1, 'the cancelled call was answered');
    } finally {
      await fake.release('held');
    }
    const got = ok(await client.callTool({ name: 'get_image',
      arguments: { session_id: SESSION, inline: 'none' } }));
    assert.ok(!got.history.some((h) => h.prompt === 'grayscale'), JSON.stringify(got.history));
  });

  test(`without the extension the same call is answered directly${over}`, TIMEOUT, async () => {
    const before = await currentVersion();
    const result = await client.callTool({ name: 'edit_image',
      arguments: { session_id: SESSION, prompt: 'invert', inline: 'none' } });
    assert.equal(result.resultType ?? 'complete', 'complete', JSON.stringify(result));
    assert.equal(ok(result).version, before + 1);
  });
}

describe('over HTTP', () => {
  tasksSuite(' over HTTP', async (dataDir, args, env) => {
    const server = await startHttpServer({ dataDir, args, env });
    return { transport: () => httpTransport(server.url), stop: server.stop };
  });
});

describe('over stdio', () => {
  tasksSuite(' over stdio', async (dataDir, args, env) => ({
    transport: () => stdioTransport(dataDir, args, env),
    stop: async () => {},
  }));
});

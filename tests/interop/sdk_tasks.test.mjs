// Interop: the official @modelcontextprotocol/sdk 1.x Client, through its experimental tasks API
// (client.experimental.tasks), drives the 2025-11-25 tasks utility of the real imgmcp binary over
// stdio, with --backend gemini pointed at tests/fake_gemini so a task can be held: a
// task-augmented edit is created, polled and its result read; tasks are listed; a task queued
// behind a held one is cancelled and commits nothing; cancelling a finished task is refused.
import {test, before, after, beforeEach} from 'node:test';
import assert from 'node:assert/strict';
import {Client} from '@modelcontextprotocol/sdk/client/index.js';
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js';
import {CallToolResultSchema, TaskStatusNotificationSchema} from '@modelcontextprotocol/sdk/types.js';
import {imgmcpBin, serverEnv, tempDir} from '../support/imgmcp_process.mjs';
import {startFakeGemini} from '../support/fake_gemini_process.mjs';

const TEST_KEY = `AIzaTEST-sdk-tasks-${process.pid}-${Date.now()}`;  // dummy; only to 127.0.0.1
const SESSION = 'sdk-tasks';
const RELATED = 'io.modelcontextprotocol/related-task';
const TERMINAL = ['completed', 'failed', 'cancelled'];

let fake;
let data;
let client;
const statuses = [];  // notifications/tasks/status params, in arrival order
const statusWaiters = [];  // {taskId, status, resolve} until such a notification arrives

function onStatus(params) {
  statuses.push(params);
  for (const w of statusWaiters.splice(0)) {
    if (w.taskId === params.taskId && w.status === params.status) w.resolve(params);
    else statusWaiters.push(w);
  }
}

// Resolves with the notifications/tasks/status of `taskId` reaching `status` (already here, or
// when it comes; the test's timeout bounds the wait).
function statusNotification(taskId, status) {
  const seen = statuses.find((s) => s.taskId === taskId && s.status === status);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => statusWaiters.push({taskId, status, resolve}));
}

async function currentVersion() {
  const r = await client.callTool({name: 'get_image',
    arguments: {session_id: SESSION, inline: 'none', include_history: false}});
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return r.structuredContent.version;
}

// A task-augmented edit through the SDK's stream: resolves with the created Task as soon as the
// server answers, and leaves the stream (polling, then the result) running.
async function startEdit(prompt) {
  const stream = client.experimental.tasks.callToolStream(
    {name: 'edit_image', arguments: {session_id: SESSION, prompt, inline: 'none'}},
    CallToolResultSchema, {task: {ttl: 120000}});
  const first = await stream.next();
  assert.equal(first.value.type, 'taskCreated', JSON.stringify(first.value));
  const rest = (async () => {
    const seen = [];
    for await (const message of stream) seen.push(message);
    return seen;
  })();
  return {task: first.value.task, rest};
}

async function waitTerminal(taskId) {
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (TERMINAL.includes(task.status)) return task;
    await new Promise((resolve) => setTimeout(resolve, Math.min(task.pollInterval ?? 100, 100)));
  }
}

before(async () => {
  fake = await startFakeGemini();
  data = tempDir('interop');
  const transport = new StdioClientTransport({
    command: imgmcpBin(),
    args: ['--backend', 'gemini', '--data-dir', data.dir],
    env: serverEnv({GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: fake.baseUrl}),
    stderr: 'pipe',
  });
  client = new Client({name: 'imgmcp-interop-tasks', version: '0.0.0'});
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => onStatus(n.params));
  await client.connect(transport);
  const r = await client.callTool({name: 'generate_image',
    arguments: {session_id: SESSION, prompt: 'solid red', inline: 'none'}});
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal(r.structuredContent.version, 1);
});

after(async () => {
  await client?.close();
  await fake?.stop();
  data?.remove();
});

beforeEach(async () => {
  await fake.reset();
});

test('the server declares the tasks utility and which tools may be tasks', async () => {
  const caps = client.getServerCapabilities();
  assert.deepEqual(caps.tasks, {list: {}, cancel: {}, requests: {tools: {call: {}}}});
  const {tools} = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.equal(byName.generate_image.execution?.taskSupport, 'optional');
  assert.equal(byName.edit_image.execution?.taskSupport, 'optional');
  assert.equal(byName.get_image.execution, undefined);
});

test('a task-augmented edit is created, polled, and its result is the committed version',
  async () => {
    const before = await currentVersion();
    await fake.script({hold: 'slow'});
    const {task, rest} = await startEdit('invert');
    assert.equal(task.status, 'working');
    assert.equal(task.ttl, 120000);
    await fake.wait({requests: 1, held: 1});
    const polled = await client.experimental.tasks.getTask(task.taskId);
    assert.equal(polled.status, 'working');
    await fake.release('slow');
    const messages = await rest;
    const result = messages.find((m) => m.type === 'result');
    assert.ok(result, JSON.stringify(messages));
    assert.equal(result.result.structuredContent.version, before + 1);
    assert.deepEqual(result.result._meta[RELATED], {taskId: task.taskId});
    // tasks/result again, directly: the same answer.
    const again = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.equal(again.structuredContent.version, before + 1);
    assert.equal(await currentVersion(), before + 1);
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((t) => t.taskId === task.taskId && t.status === 'completed'));
    const notified = await statusNotification(task.taskId, 'completed');
    assert.equal(notified.createdAt, task.createdAt);
  });

test('cancelling a queued task commits nothing; cancelling a finished one is refused',
  async () => {
    const before = await currentVersion();
    await fake.script({hold: 'first'});
    const first = await startEdit('grayscale');
    await fake.wait({requests: 1, held: 1});
    const queued = await startEdit('invert');
    const cancelled = await client.experimental.tasks.cancelTask(queued.task.taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await waitTerminal(queued.task.taskId)).status, 'cancelled');
    await statusNotification(queued.task.taskId, 'cancelled');
    const queuedEnd = await queued.rest;
    assert.ok(queuedEnd.some((m) => m.type === 'error'), JSON.stringify(queuedEnd));
    await fake.release('first');
    const firstEnd = await first.rest;
    const result = firstEnd.find((m) => m.type === 'result');
    assert.equal(result.result.structuredContent.version, before + 1);
    assert.equal(await currentVersion(), before + 1);
    assert.equal((await fake.requests()).length, 1);  // the queued edit never reached Gemini
    await assert.rejects(client.experimental.tasks.cancelTask(first.task.taskId),
      (err) => err.code === -32602 && /terminal status 'completed'/.test(err.message));
    assert.deepEqual(await client.ping(), {});
  });

// Interop: the official @modelcontextprotocol/sdk Client over stdio drives the real imgmcp binary
// with --backend gemini pointed at tests/fake_gemini. A slow fake edit streams progress to the
// SDK's onprogress; an AbortController cancel (the SDK sends notifications/cancelled) rejects the
// call and commits nothing.
import {test, before, after, beforeEach} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {createInterface} from 'node:readline';
import {Client} from '@modelcontextprotocol/sdk/client/index.js';
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js';

const BIN = process.env.IMGMCP_BIN;
const FAKE_BIN = process.env.FAKE_GEMINI_BIN;
const MODEL = 'gemini-3.1-flash-lite-image';
const TEST_KEY = `AIzaTEST-sdk-${process.pid}-${Date.now()}`;  // dummy; only sent to 127.0.0.1
const SESSION = 'sdk-cancel';

let fake;
let baseUrl;
let dataDir;
let client;

async function control(path, body) {
  const res = await fetch(`${baseUrl}/_fake/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {'content-type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

// Bounded polling of the fake's request log (no sleeps for synchronisation beyond the poll step).
async function waitForRequests(count, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await control('requests');
    if (log.length >= count) return log;
    if (Date.now() > deadline) throw new Error(`fake saw ${log.length} requests, want ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function currentVersion() {
  const r = await client.callTool({name: 'get_image',
    arguments: {session_id: SESSION, inline: 'none', include_history: false}});
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return r.structuredContent.version;
}

function edit(prompt, options) {
  return client.callTool({name: 'edit_image',
    arguments: {session_id: SESSION, prompt, inline: 'none'}}, undefined, options);
}

before(async () => {
  assert.ok(BIN, 'IMGMCP_BIN must point at the imgmcp binary');
  assert.ok(FAKE_BIN, 'FAKE_GEMINI_BIN must point at the fake_gemini binary');
  fake = spawn(FAKE_BIN, ['--port', '0', '--host', '127.0.0.1'],
    {stdio: ['pipe', 'pipe', 'inherit']});
  const lines = createInterface({input: fake.stdout});
  const line = await new Promise((resolve, reject) => {
    fake.once('exit', (code) => reject(new Error(`fake_gemini exited early (${code})`)));
    lines.once('line', resolve);
  });
  const m = /^fake_gemini listening on (\S+):(\d+)$/.exec(line);
  assert.ok(m, `unexpected readiness line: ${line}`);
  baseUrl = `http://${m[1]}:${m[2]}`;

  dataDir = mkdtempSync(join(tmpdir(), 'imgmcp-interop-'));
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--backend', 'gemini', '--data-dir', dataDir],
    env: {GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: baseUrl},
    stderr: 'pipe',
  });
  client = new Client({name: 'imgmcp-interop-progress', version: '0.0.0'});
  await client.connect(transport);
  const r = await client.callTool({name: 'generate_image',
    arguments: {session_id: SESSION, prompt: 'solid red', inline: 'none'}});
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal(r.structuredContent.version, 1);
  assert.equal(r.structuredContent.backend, 'gemini');
  assert.equal(r.structuredContent.model, MODEL);
});

after(async () => {
  await client?.close();
  if (fake && fake.exitCode === null) {
    const exited = new Promise((resolve) => fake.once('exit', resolve));
    fake.stdin.end();  // EOF on stdin stops the fake
    await exited;
  }
  if (dataDir) rmSync(dataDir, {recursive: true, force: true});
});

beforeEach(async () => {
  await control('reset', {});
});

test('callTool onprogress sees heartbeats during a slow Gemini edit', async () => {
  const before = await currentVersion();
  await control('script', [{delay_ms: 3000}]);
  const seen = [];
  const result = await edit('invert', {onprogress: (p) => seen.push(p)});
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.equal(result.structuredContent.version, before + 1);
  assert.equal(result.structuredContent.backend, 'gemini');
  assert.ok(seen.length >= 1, 'no progress notification during a 3 s edit');
  assert.ok(seen.some((p) => /gemini/.test(p.message ?? '')), JSON.stringify(seen));
  for (let i = 1; i < seen.length; ++i) assert.ok(seen[i].progress > seen[i - 1].progress);
  const log = await control('requests');
  assert.equal(log.length, 1);
  assert.equal(log[0].headers['x-goog-api-key'], TEST_KEY);
  assert.equal(log[0].images.length, 1);
});

test('aborting a slow edit sends notifications/cancelled and commits nothing', async () => {
  const before = await currentVersion();
  await control('script', [{delay_ms: 5000}]);
  const abort = new AbortController();
  let firstProgress;
  const progressed = new Promise((resolve) => { firstProgress = resolve; });
  const seen = [];
  const call = edit('grayscale', {
    signal: abort.signal,
    onprogress: (p) => { seen.push(p); firstProgress(); },
  });
  const outcome = call.then(() => 'resolved', (err) => err);
  await progressed;
  await waitForRequests(1);  // the Gemini call is in flight
  abort.abort('user pressed stop');
  const err = await outcome;
  assert.notEqual(err, 'resolved', 'the aborted call resolved');
  assert.ok(seen.length >= 1);

  assert.equal(await currentVersion(), before);
  // A later edit queues behind the cancelled one (FIFO per session) and becomes the next
  // version, so the cancelled edit committed nothing.
  const next = await edit('invert', {});
  assert.notEqual(next.isError, true, JSON.stringify(next.content));
  assert.equal(next.structuredContent.version, before + 1);
  assert.equal(next.structuredContent.parent_version, before);
  const got = await client.callTool({name: 'get_image', arguments: {session_id: SESSION}});
  assert.equal(got.structuredContent.history.at(-1).prompt, 'invert');
  assert.ok(!got.structuredContent.history.some((h) => h.prompt === 'grayscale'));
  assert.deepEqual(await client.ping(), {});
});

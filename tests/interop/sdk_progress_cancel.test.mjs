// Interop: the official @modelcontextprotocol/sdk Client over stdio drives the real imgmcp binary
// with --backend gemini pointed at tests/fake_gemini. An edit whose Gemini call the fake holds at
// a gate streams progress to the SDK's onprogress; an AbortController cancel (the SDK sends
// notifications/cancelled) rejects the call and commits nothing.
import {test, before, after, beforeEach} from 'node:test';
import assert from 'node:assert/strict';
import {Client} from '@modelcontextprotocol/sdk/client/index.js';
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js';
import {imgmcpBin, serverEnv, tempDir} from '../support/imgmcp_process.mjs';
import {startFakeGemini} from '../support/fake_gemini_process.mjs';

const MODEL = 'gemini-3.1-flash-lite-image';
const TEST_KEY = `AIzaTEST-sdk-${process.pid}-${Date.now()}`;  // dummy; only sent to 127.0.0.1
const SESSION = 'sdk-cancel';

let fake;
let data;
let client;

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
  fake = await startFakeGemini();
  data = tempDir('interop');
  const transport = new StdioClientTransport({
    command: imgmcpBin(),
    args: ['--backend', 'gemini', '--data-dir', data.dir],
    env: serverEnv({GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: fake.baseUrl}),
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
  await fake?.stop();
  data?.remove();
});

beforeEach(async () => {
  await fake.reset();
});

test('callTool onprogress sees heartbeats during a slow Gemini edit', async () => {
  const before = await currentVersion();
  await fake.script({hold: 'slow'});
  const seen = [];
  let heartbeat;
  const heard = new Promise((resolve) => { heartbeat = resolve; });
  const call = edit('invert', {onprogress: (p) => {
    seen.push(p);
    if (/gemini/.test(p.message ?? '')) heartbeat();
  }});
  try {
    await fake.wait({requests: 1, held: 1});  // the Gemini call is in flight, and held
    await heard;  // a heartbeat naming Gemini while the call is held
  } finally {
    await fake.release('slow');
  }
  const result = await call;
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.equal(result.structuredContent.version, before + 1);
  assert.equal(result.structuredContent.backend, 'gemini');
  for (let i = 1; i < seen.length; ++i) assert.ok(seen[i].progress > seen[i - 1].progress);
  const log = await fake.requests();
  assert.equal(log.length, 1);
  assert.equal(log[0].headers['x-goog-api-key'], TEST_KEY);
  assert.equal(log[0].images.length, 1);
});

test('aborting a slow edit sends notifications/cancelled and commits nothing', async () => {
  const before = await currentVersion();
  await fake.script({hold: 'cancelled'});
  const abort = new AbortController();
  let firstProgress;
  const progressed = new Promise((resolve) => { firstProgress = resolve; });
  const seen = [];
  const call = edit('grayscale', {
    signal: abort.signal,
    onprogress: (p) => { seen.push(p); firstProgress(); },
  });
  const outcome = call.then(() => 'resolved', (err) => err);
  try {
    await progressed;
    await fake.wait({requests: 1, held: 1});  // the Gemini call is in flight, and held
    abort.abort('user pressed stop');
    const err = await outcome;
    assert.notEqual(err, 'resolved', 'the aborted call resolved');
    assert.ok(seen.length >= 1);
    assert.equal(await currentVersion(), before);
    // A later edit queues behind the cancelled one (FIFO per session). The cancelled edit's
    // Gemini call is never answered, so the turn passes only because imgmcp gave the call up; the
    // later edit becomes the next version, so the cancelled edit committed nothing.
    const next = await edit('invert', {});
    assert.notEqual(next.isError, true, JSON.stringify(next.content));
    assert.equal(next.structuredContent.version, before + 1);
    assert.equal(next.structuredContent.parent_version, before);
    assert.equal((await fake.wait()).held, 1, 'the cancelled call was answered');
  } finally {
    await fake.release('cancelled');  // frees the fake's worker; imgmcp dropped the call
  }
  const got = await client.callTool({name: 'get_image', arguments: {session_id: SESSION}});
  assert.equal(got.structuredContent.history.at(-1).prompt, 'invert');
  assert.ok(!got.structuredContent.history.some((h) => h.prompt === 'grayscale'));
  assert.deepEqual(await client.ping(), {});
});

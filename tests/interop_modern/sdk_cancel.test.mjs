// Interop, modern era: the v2 MCP SDK client pinned to 2026-07-28 cancels a slow edit, over stdio
// (notifications/cancelled) and over Streamable HTTP (the client closes the request's response
// stream; the 2026-07-28 transport sends nothing else). imgmcp runs with --backend gemini against
// tests/fake_gemini, whose scripted delay keeps the edit in flight; progress arrives meanwhile,
// and the cancelled edit commits nothing.
import { describe, test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeGemini, startHttpServer, tempDir } from './support/processes.mjs';
import { ok } from './support/results.mjs';
import { httpTransport, modernClient, stdioTransport } from './support/sdk.mjs';

const TEST_KEY = `AIzaTEST-modern-${process.pid}-${Date.now()}`;  // dummy; only sent to 127.0.0.1
const SESSION = 'modern-cancel';
const TIMEOUT = { timeout: 60000 };

function cancelSuite(over, open) {
  let fake;
  let data;
  let server;
  let client;

  const currentVersion = async () => ok(await client.callTool({ name: 'get_image',
    arguments: { session_id: SESSION, inline: 'none', include_history: false } })).version;
  const edit = (prompt, options) => client.callTool({ name: 'edit_image',
    arguments: { session_id: SESSION, prompt, inline: 'none' } }, options);

  before(async () => {
    fake = await startFakeGemini();
    data = tempDir('cancel');
    const env = { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: fake.baseUrl };
    server = await open(data.dir, ['--backend', 'gemini'], env);
    client = modernClient('imgmcp-interop-modern-cancel', 'pin');
    await client.connect(server.transport());
    assert.equal(client.getProtocolEra(), 'modern');
    const v1 = ok(await client.callTool({ name: 'generate_image',
      arguments: { session_id: SESSION, prompt: 'solid red', inline: 'none' } }));
    assert.deepEqual([v1.version, v1.backend], [1, 'gemini']);
  });

  after(async () => {
    await client?.close();
    await server?.stop();
    await fake?.stop();
    data?.remove();
  });

  beforeEach(async () => { await fake.control('reset', {}); });

  test(`progress arrives during a slow edit${over}`, TIMEOUT, async () => {
    const before = await currentVersion();
    await fake.control('script', [{ delay_ms: 2500 }]);
    const seen = [];
    const result = await edit('invert', { onprogress: (p) => seen.push(p) });
    assert.equal(ok(result).version, before + 1);
    assert.ok(seen.length >= 1, 'no progress notification during a 2.5 s edit');
    for (let i = 1; i < seen.length; ++i) assert.ok(seen[i].progress > seen[i - 1].progress);
  });

  test(`cancelling a slow edit commits nothing${over}`, TIMEOUT, async () => {
    const before = await currentVersion();
    await fake.control('script', [{ delay_ms: 5000 }]);
    const abort = new AbortController();
    let firstProgress;
    const progressed = new Promise((resolve) => { firstProgress = resolve; });
    const call = edit('grayscale', { signal: abort.signal, onprogress: () => firstProgress() });
    const outcome = call.then(() => 'resolved', (err) => err);
    await progressed;
    await fake.waitForRequests(1);  // the Gemini call is in flight
    abort.abort('user pressed stop');
    assert.notEqual(await outcome, 'resolved', 'the aborted call resolved');

    assert.equal(await currentVersion(), before);
    // A later edit waits its turn behind the cancelled one (FIFO per session) and becomes the
    // next version: the cancelled edit committed nothing.
    const next = ok(await edit('invert', {}));
    assert.deepEqual([next.version, next.parent_version], [before + 1, before]);
    const got = ok(await client.callTool({ name: 'get_image', arguments: { session_id: SESSION, inline: 'none' } }));
    assert.equal(got.history.at(-1).prompt, 'invert');
    assert.ok(!got.history.some((h) => h.prompt === 'grayscale'), JSON.stringify(got.history));
  });
}

describe('over stdio', () => {
  cancelSuite(' over stdio', async (dataDir, args, env) => ({
    transport: () => stdioTransport(dataDir, args, env),
    stop: async () => {},
  }));
});

describe('over HTTP', () => {
  cancelSuite(' over HTTP', async (dataDir, args, env) => {
    const server = await startHttpServer({ dataDir, args, env });
    return { transport: () => httpTransport(server.url), stop: server.stop };
  });
});

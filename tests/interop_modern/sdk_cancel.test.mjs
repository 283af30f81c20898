// Interop, modern era: the v2 MCP SDK client pinned to 2026-07-28 cancels a slow edit, over stdio
// (notifications/cancelled) and over Streamable HTTP (the client closes the request's response
// stream; the 2026-07-28 transport sends nothing else). imgmcp runs with --backend gemini against
// tests/fake_gemini, which holds the edit's Gemini call at a gate until the test releases it;
// progress arrives meanwhile, and the cancelled edit commits nothing.
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

  beforeEach(async () => { await fake.reset(); });

  test(`progress arrives during a slow edit${over}`, TIMEOUT, async () => {
    const before = await currentVersion();
    await fake.script({ hold: 'slow' });
    const seen = [];
    let progressed;
    const firstProgress = new Promise((resolve) => { progressed = resolve; });
    const result = edit('invert', { onprogress: (p) => { seen.push(p); progressed(); } });
    try {
      await fake.wait({ requests: 1, held: 1 });  // the Gemini call is in flight, and held
      await firstProgress;  // progress while the call is held
    } finally {
      await fake.release('slow');
    }
    assert.equal(ok(await result).version, before + 1);
    for (let i = 1; i < seen.length; ++i) assert.ok(seen[i].progress > seen[i - 1].progress);
  });

  test(`cancelling a slow edit commits nothing${over}`, TIMEOUT, async () => {
    const before = await currentVersion();
    await fake.script({ hold: 'cancelled' });
    const abort = new AbortController();
    let firstProgress;
    const progressed = new Promise((resolve) => { firstProgress = resolve; });
    const call = edit('grayscale', { signal: abort.signal, onprogress: () => firstProgress() });
    const outcome = call.then(() => 'resolved', (err) => err);
    try {
      await progressed;
      await fake.wait({ requests: 1, held: 1 });  // the Gemini call is in flight, and held
      abort.abort('user pressed stop');
      assert.notEqual(await outcome, 'resolved', 'the aborted call resolved');
      assert.equal(await currentVersion(), before);
      // A later edit waits its turn behind the cancelled one (FIFO per session). The cancelled
      // edit's Gemini call is never answered, so the turn passes only because imgmcp gave the
      // call up; the later edit becomes the next version: the cancelled edit committed nothing.
      const next = ok(await edit('invert', {}));
      assert.deepEqual([next.version, next.parent_version], [before + 1, before]);
      assert.equal((await fake.wait()).held, 1, 'the cancelled call was answered');
    } finally {
      await fake.release('cancelled');  // frees the fake's worker; imgmcp dropped the call
    }
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

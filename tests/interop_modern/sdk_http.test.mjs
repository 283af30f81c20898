// Interop, modern era over Streamable HTTP: the v2 MCP SDK client (@modelcontextprotocol/client
// 2.4.0), pinned to 2026-07-28 and in auto, against one `imgmcp --http 127.0.0.1:0`; then against
// two replicas sharing one data dir behind a round-robin proxy, which only works because modern
// requests need no protocol session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { sdkSuite } from './support/sdk_suite.mjs';
import { httpTransport, modernClient } from './support/sdk.mjs';
import { startHttpServer, tempDir } from './support/processes.mjs';
import { ok } from './support/results.mjs';

sdkSuite({
  over: ' over HTTP',
  open: async (dataDir) => {
    const server = await startHttpServer({ dataDir, args: ['--backend', 'local'] });
    return { transport: () => httpTransport(server.url), stop: server.stop };
  },
});

// Forwards each request to the next upstream URL in turn; resolves { url, hits, close }.
function roundRobinProxy(upstreams) {
  const hits = upstreams.map(() => 0);
  let next = 0;
  const server = http.createServer((req, res) => {
    const i = next++ % upstreams.length;
    hits[i]++;
    const target = new URL(upstreams[i]);
    const headers = { ...req.headers, host: target.host };
    const upstream = http.request(target, { method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    });
    upstream.on('error', (err) => { res.writeHead(502); res.end(String(err)); });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    hits,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

test('two replicas behind a round-robin proxy serve one modern client', { timeout: 60000 }, async () => {
  const data = tempDir('replicas');
  const replicas = [];
  let proxy;
  const client = modernClient('imgmcp-interop-replicas', 'pin');
  try {
    for (let i = 0; i < 2; ++i) replicas.push(await startHttpServer({ dataDir: data.dir, args: ['--backend', 'local'] }));
    proxy = await roundRobinProxy(replicas.map((r) => r.url));
    await client.connect(httpTransport(proxy.url));
    assert.equal(client.getProtocolEra(), 'modern');
    const v1 = ok(await client.callTool({ name: 'generate_image',
      arguments: { session_id: 'rr', prompt: 'solid green', inline: 'none' } }));
    const v2 = ok(await client.callTool({ name: 'edit_image',
      arguments: { session_id: 'rr', prompt: 'invert', inline: 'none', expected_version: v1.version } }));
    const got = ok(await client.callTool({ name: 'get_image', arguments: { session_id: 'rr', inline: 'none' } }));
    assert.deepEqual([v1.version, v2.version, got.version, got.sha256], [1, 2, 2, v2.sha256]);
    assert.ok(proxy.hits.every((n) => n >= 2), `each replica served requests: ${proxy.hits}`);
  } finally {
    await client.close();
    await proxy?.close();
    for (const r of replicas) await r.stop();
    data.remove();
  }
});

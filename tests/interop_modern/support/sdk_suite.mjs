// The v2 SDK suite, run by sdk_stdio.test.mjs and sdk_http.test.mjs over their transport: the
// client pinned to 2026-07-28 (and in `auto`) calls all four tools, reads resources (the session
// viewer MCP App among them) and listens for a new version's notifications/resources/updated on
// subscriptions/listen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODERN, TOOL_NAMES, tempDir } from './processes.mjs';
import { blocksOf, ok, sha256 } from './results.mjs';
import { modernClient } from './sdk.mjs';

const TIMEOUT = { timeout: 60000 };
const VIEWER = 'ui://imgmcp/session-viewer.html';
const APP_MIME = 'text/html;profile=mcp-app';

// `open(dataDir)` resolves { transport(), stop() }: transport() makes a new client transport to
// the imgmcp under test; stop() ends what open started.
export function sdkSuite({ over, open }) {
  let data;
  let server;
  let client;

  before(async () => {
    data = tempDir('sdk');
    server = await open(data.dir);
    client = modernClient('imgmcp-interop-modern', 'pin');
    await client.connect(server.transport());
  });

  after(async () => {
    await client?.close();
    await server?.stop();
    data?.remove();
  });

  test(`pinned to ${MODERN}: server/discover offers it and the connection is modern${over}`,
    TIMEOUT, async () => {
      assert.equal(client.getProtocolEra(), 'modern');
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      const discover = client.getDiscoverResult();
      for (const v of [MODERN, '2025-11-25', '2025-06-18', '2025-03-26']) {
        assert.ok(discover.supportedVersions.includes(v), JSON.stringify(discover.supportedVersions));
      }
      assert.ok(discover.capabilities.tools, JSON.stringify(discover.capabilities));
      assert.ok(discover.capabilities.resources, JSON.stringify(discover.capabilities));
      assert.equal(client.getServerVersion()?.name, 'imgmcp');
    });

  test(`tools/list has the four tools with schemas${over}`, TIMEOUT, async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.equal(tool._meta?.ui?.resourceUri, VIEWER, tool.name);
    }
  });

  test(`the session viewer (MCP App) is listed and readable${over}`, TIMEOUT, async () => {
    const { resources } = await client.listResources();
    const listed = resources.find((r) => r.uri === VIEWER);
    assert.ok(listed, JSON.stringify(resources.map((r) => r.uri)));
    assert.equal(listed.mimeType, APP_MIME);
    const { contents } = await client.readResource({ uri: VIEWER });
    assert.equal(contents.length, 1);
    assert.deepEqual([contents[0].uri, contents[0].mimeType], [VIEWER, APP_MIME]);
    assert.match(contents[0].text, /<html[\s>]/i);
  });

  test(`generate, edit, get and reset a session${over}`, TIMEOUT, async () => {
    const gen = await client.callTool({ name: 'generate_image',
      arguments: { session_id: 'm1', prompt: 'solid teal', inline: 'full' } });
    const v1 = ok(gen);
    assert.deepEqual([v1.session_id, v1.version, v1.backend], ['m1', 1, 'local']);
    const [image] = blocksOf(gen, 'image');
    assert.equal(sha256(Buffer.from(image.data, 'base64')), v1.sha256);
    assert.equal(blocksOf(gen, 'resource_link')[0].uri, 'imgmcp://sessions/m1/versions/1');

    const v2 = ok(await client.callTool({ name: 'edit_image',
      arguments: { session_id: 'm1', prompt: 'invert', inline: 'none', expected_version: 1 } }));
    assert.equal(v2.version, 2);
    assert.notEqual(v2.sha256, v1.sha256);

    const conflict = await client.callTool({ name: 'edit_image',
      arguments: { session_id: 'm1', prompt: 'grayscale', expected_version: 1 } });
    assert.equal(conflict.isError, true);
    assert.match(conflict.content[0].text, /version conflict/);

    const got = ok(await client.callTool({ name: 'get_image',
      arguments: { session_id: 'm1', inline: 'none' } }));
    assert.equal(got.version, 2);
    assert.deepEqual(got.history.map((h) => [h.version, h.operation, h.prompt]),
      [[1, 'generate', 'solid teal'], [2, 'edit', 'invert']]);

    const reverted = ok(await client.callTool({ name: 'reset_session',
      arguments: { session_id: 'm1', to_version: 1 } }));
    assert.deepEqual([reverted.version, reverted.sha256], [3, v1.sha256]);

    const bad = await client.callTool({ name: 'get_image', arguments: { session_id: 'm1', inline: 'huge' } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /inline/);
  });

  test(`resources: list, templates, read a manifest and a version's bytes${over}`, TIMEOUT, async () => {
    const v1 = ok(await client.callTool({ name: 'generate_image',
      arguments: { session_id: 'm2', prompt: 'solid orange', inline: 'none' } }));
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    assert.ok(uris.includes('imgmcp://sessions/m2'), JSON.stringify(uris));
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'imgmcp://sessions/{session_id}/versions/{version}'),
      JSON.stringify(resourceTemplates));

    const manifest = await client.readResource({ uri: 'imgmcp://sessions/m2' });
    assert.equal(manifest.contents[0].uri, 'imgmcp://sessions/m2');
    const parsed = JSON.parse(manifest.contents[0].text);
    assert.deepEqual([parsed.session_id, parsed.current_version], ['m2', 1]);

    const blob = await client.readResource({ uri: v1.uri });
    assert.equal(blob.contents[0].mimeType, 'image/png');
    assert.equal(sha256(Buffer.from(blob.contents[0].blob, 'base64')), v1.sha256);

    // 2026-07-28 moved "resource not found" from -32002 to -32602, naming the URI in data.
    const missing = 'imgmcp://sessions/never-created';
    await assert.rejects(client.readResource({ uri: missing }, { cacheMode: 'bypass' }), (err) => {
      assert.deepEqual([err.code, err.data?.uri], [-32602, missing], String(err));
      return true;
    });
  });

  test(`subscriptions/listen delivers a new version's resources/updated${over}`, TIMEOUT, async () => {
    ok(await client.callTool({ name: 'generate_image',
      arguments: { session_id: 'm3', prompt: 'solid red', inline: 'none' } }));
    const uri = 'imgmcp://sessions/m3';
    const updates = [];
    let notified;
    const arrived = new Promise((resolve) => { notified = resolve; });
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params);
      if (n.params.uri === uri) notified();
    });
    const sub = await client.listen({ resourceSubscriptions: [uri] });
    try {
      assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri]);
      // The edit goes out as its own request while the listen stream stays open.
      const v2 = ok(await client.callTool({ name: 'edit_image',
        arguments: { session_id: 'm3', prompt: 'invert', inline: 'none' } }));
      assert.equal(v2.version, 2);
      await arrived;
      assert.ok(updates.every((u) => u.uri === uri), JSON.stringify(updates));
    } finally {
      await sub.close();
    }
    assert.equal(await sub.closed, 'local');
  });

  test(`a client in auto mode also connects modern${over}`, TIMEOUT, async () => {
    const auto = modernClient('imgmcp-interop-auto', 'auto');
    try {
      await auto.connect(server.transport());
      assert.equal(auto.getProtocolEra(), 'modern');
      assert.equal(auto.getNegotiatedProtocolVersion(), MODERN);
      const got = ok(await auto.callTool({ name: 'get_image',
        arguments: { session_id: 'm1', version: 1, inline: 'none' } }));
      assert.equal(got.version, 1);
    } finally {
      await auto.close();
    }
  });
}

// The inspector-cli (@modelcontextprotocol/inspector-cli 1.0.3) interop tests, run by
// inspector_stdio.test.mjs and inspector_http.test.mjs: one inspector process per command, as a
// user would from a shell.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectorClient, makeWorkDir, ok, sha256 } from './inspector_helpers.mjs';

// Registers the suite. `connect(dataDir)` starts what the inspector talks to and resolves to
// { serverArgs, configEntry, stop }: the inspector arguments naming the server, its entry in an
// .mcp.json-style config file, and an async stop(). `over` ends a test's name (" over HTTP").
export function inspectorSuite({ connect, over = '', configTest }) {
  let workDir;  // holds package.json, data/ and run/
  let dataDir;
  let runDir;
  let connection;

  const SERVER = () => connection.serverArgs;
  const { inspect, run, callTool } = inspectorClient(SERVER, () => runDir);

  before(async () => {
    ({ workDir, dataDir, runDir } = makeWorkDir());
    connection = await connect(dataDir);
  });

  after(async () => {
    await connection?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  test('tools/list shows the four tools with object schemas', { timeout: 90000 }, async () => {
    const { tools } = await run('tools/list');
    assert.deepEqual(tools.map((t) => t.name).sort(),
      ['edit_image', 'generate_image', 'get_image', 'reset_session']);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object');
      assert.equal(t.outputSchema.type, 'object');
    }
  });

  test(`each tool through tools/call${over}, then resources/list and resources/read`, { timeout: 180000 }, async () => {
    const v1 = ok(await callTool('generate_image', ['prompt=solid red', 'session_id=ins1', 'inline=none']));
    assert.deepEqual([v1.session_id, v1.version, v1.width, v1.height], ['ins1', 1, 1024, 1024]);

    const v2 = ok(await callTool('edit_image', ['session_id=ins1', 'prompt=invert', 'inline=none',
      'expected_version=1']));  // a JSON number from --tool-arg
    assert.deepEqual([v2.version, v2.parent_version], [2, 1]);

    const got = await callTool('get_image', ['session_id=ins1']);
    assert.equal(ok(got).version, 2);
    assert.deepEqual(ok(got).history.map((h) => h.operation), ['generate', 'edit']);
    const image = got.content.find((c) => c.type === 'image');
    assert.ok(image, 'default get_image result has a preview');
    assert.ok(Buffer.from(image.data, 'base64').length <= 600 * 1024);
    assert.ok(got.content.some((c) => c.type === 'resource_link' &&
      c.uri === 'imgmcp://sessions/ins1/versions/2'));

    const v3 = ok(await callTool('reset_session', ['session_id=ins1', 'to_version=1']));
    assert.deepEqual([v3.version, v3.sha256], [3, v1.sha256]);

    const { resources } = await run('resources/list');
    const names = resources.map((r) => r.name);
    assert.ok(names.includes('ins1 v3'), `resources: ${names}`);
    assert.ok(names.includes('ins1'), `resources: ${names}`);

    const read = await run('resources/read', ['--uri', 'imgmcp://sessions/ins1/versions/2']);
    assert.equal(read.contents[0].mimeType, 'image/png');
    assert.equal(sha256(Buffer.from(read.contents[0].blob, 'base64')), v2.sha256);
    const manifest = JSON.parse((await run('resources/read', ['--uri', 'imgmcp://sessions/ins1'])).contents[0].text);
    assert.deepEqual(manifest.versions.map((v) => v.version), [1, 2, 3]);

    const templates = await run('resources/templates/list');
    assert.ok(templates.resourceTemplates.some((t) => t.uriTemplate.includes('{session_id}')));
  });

  test('isError results exit 0 with the error text; protocol errors exit 1', { timeout: 90000 }, async () => {
    const bad = await callTool('edit_image', ['session_id=ins-empty', 'prompt=invert', 'inline=huge']);
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /inline/);
    const unknown = await inspect([...SERVER(), '--method', 'tools/call', '--tool-name', 'no_such_tool']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /-32602/);
    const missing = await inspect([...SERVER(), '--method', 'resources/read', '--uri',
      'imgmcp://sessions/nobody/versions/1']);
    assert.equal(missing.code, 1);
  });

  test(configTest, { timeout: 90000 }, async () => {
    const configPath = join(workDir, 'mcp.json');
    writeFileSync(configPath, JSON.stringify({ mcpServers: { imgmcp: connection.configEntry } }));
    const r = await inspect(['--config', configPath, '--server', 'imgmcp', '--method', 'tools/call',
      '--tool-name', 'get_image', '--tool-arg', 'session_id=ins1', 'inline=none']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(ok(JSON.parse(r.stdout)).version, 3);
  });
}

// Interop: the official @modelcontextprotocol/sdk client drives the real imgmcp binary over stdio
// (--conformance-fixtures for the suite's test tools, a temp --data-dir).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { imgmcpBin, tempDir } from '../support/imgmcp_process.mjs';

let data;
let client;
let transport;
const logs = [];

before(async () => {
  data = tempDir('interop');
  transport = new StdioClientTransport({
    command: imgmcpBin(),
    args: ['--conformance-fixtures', '--data-dir', data.dir],
    stderr: 'pipe',
  });
  client = new Client({ name: 'imgmcp-interop', version: '0.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  data?.remove();
});

test('initialize negotiates the SDK latest version and advertises capabilities', () => {
  assert.equal(client.getServerVersion().name, 'imgmcp');
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools);
  assert.ok(caps.logging);
  assert.equal(caps.resources.subscribe, true);
});

test('listTools lists the conformance fixtures with object input schemas', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ['test_simple_text', 'test_image_content', 'test_error_handling',
    'test_tool_with_logging', 'test_tool_with_progress']) {
    assert.ok(names.includes(name), `${name} missing from ${names}`);
  }
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object');
    assert.equal(typeof tool.description, 'string');
  }
});

test('callTool: simple text', async () => {
  const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
  assert.deepEqual(result.content,
    [{ type: 'text', text: 'This is a simple text response for testing.' }]);
  assert.equal(result.isError, false);
});

test('callTool: image content', async () => {
  const result = await client.callTool({ name: 'test_image_content', arguments: {} });
  assert.equal(result.content[0].type, 'image');
  assert.equal(result.content[0].mimeType, 'image/png');
  const png = Buffer.from(result.content[0].data, 'base64');
  assert.deepEqual([...png.subarray(1, 4)], [...Buffer.from('PNG')]);
});

test('callTool: tool error is an isError result, not a thrown error', async () => {
  const result = await client.callTool({ name: 'test_error_handling', arguments: {} });
  assert.equal(result.isError, true);
  assert.equal(result.content[0].type, 'text');
});

test('callTool: unknown tool is a protocol error', async () => {
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }),
    (err) => err.code === -32602 && /Unknown tool: no_such_tool/.test(err.message));
});

test('callTool with onprogress receives increasing progress', async () => {
  const seen = [];
  const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} },
    undefined, { onprogress: (p) => seen.push(p) });
  assert.ok(seen.length >= 3, `only ${seen.length} progress notifications`);
  assert.deepEqual(seen.map((p) => p.progress), [0, 50, 100]);
  assert.ok(seen.every((p) => p.total === 100));
  assert.equal(result.isError, false);
});

test('logging: setLoggingLevel then a tool that logs', async () => {
  await client.setLoggingLevel('debug');
  logs.length = 0;
  const result = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  assert.equal(result.isError, false);
  assert.deepEqual(logs.map((l) => l.data),
    ['Tool execution started', 'Tool processing data', 'Tool execution completed']);
  assert.ok(logs.every((l) => l.level === 'info'));
});

test('ping, resources and prompts', async () => {
  assert.deepEqual(await client.ping(), {});
  const { resources } = await client.listResources();
  assert.ok(resources.some((r) => r.uri === 'test://static-text'));
  const read = await client.readResource({ uri: 'test://static-binary' });
  assert.equal(read.contents[0].mimeType, 'image/png');
  const prompt = await client.getPrompt({ name: 'test_simple_prompt' });
  assert.equal(prompt.messages[0].content.text, 'This is a simple prompt for testing.');
});

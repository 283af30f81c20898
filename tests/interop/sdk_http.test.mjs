// Interop: the official @modelcontextprotocol/sdk client's StreamableHTTPClientTransport against
// the real imgmcp binary (`--http 127.0.0.1:0 --conformance-fixtures`, a temp --data-dir).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer } from '../support/imgmcp_process.mjs';

let server;
let url;

async function connect(capabilities = {}) {
  const client = new Client({ name: 'imgmcp-http-interop', version: '0.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

before(async () => {
  server = await startHttpServer({ args: ['--conformance-fixtures'] });
  ({ url } = server);
});

after(async () => {
  await server?.stop();
});

test('connect, list tools and call them over Streamable HTTP', async () => {
  const { client, transport } = await connect();
  try {
    assert.equal(client.getServerVersion().name, 'imgmcp');
    assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['test_simple_text', 'test_tool_with_progress', 'test_sampling']) {
      assert.ok(names.includes(name), `${name} missing`);
    }
    const text = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(text.content[0].text, 'This is a simple text response for testing.');
    const image = await client.callTool({ name: 'test_image_content', arguments: {} });
    assert.equal(image.content[0].mimeType, 'image/png');
    const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failed.isError, true);
  } finally {
    await client.close();
  }
});

test('progress notifications reach onprogress', async () => {
  const { client } = await connect();
  try {
    const progress = [];
    const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} },
      undefined, { onprogress: (p) => progress.push(p.progress) });
    assert.deepEqual(progress, [0, 50, 100]);
    assert.equal(typeof result.content[0].text, 'string');
  } finally {
    await client.close();
  }
});

test('logging notifications arrive after setLevel', async () => {
  const { client } = await connect();
  try {
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.deepEqual(logs.map((l) => l.data),
      ['Tool execution started', 'Tool processing data', 'Tool execution completed']);
  } finally {
    await client.close();
  }
});

test('a sampling request is answered by the client', async () => {
  const { client } = await connect({ sampling: {} });
  try {
    let asked;
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked = request.params.messages[0].content.text;
      return { role: 'assistant', model: 'interop', content: { type: 'text', text: 'sampled!' } };
    });
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Hi?' } });
    assert.equal(asked, 'Hi?');
    assert.equal(result.content[0].text, 'LLM response: sampled!');
  } finally {
    await client.close();
  }
});

test('an elicitation request is answered by the client', async () => {
  const { client } = await connect({ elicitation: {} });
  try {
    client.setRequestHandler(ElicitRequestSchema, async () =>
      ({ action: 'accept', content: { response: 'yes' } }));
    const result = await client.callTool({ name: 'test_elicitation',
      arguments: { message: 'Continue?' } });
    assert.equal(result.content[0].text, 'User response: action=accept, content={"response":"yes"}');
  } finally {
    await client.close();
  }
});

test('resources and prompts over HTTP', async () => {
  const { client } = await connect();
  try {
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === 'test://static-text'));
    const read = await client.readResource({ uri: 'test://template/42/data' });
    assert.match(read.contents[0].text, /42/);
    const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments',
      arguments: { arg1: 'a', arg2: 'b' } });
    assert.match(prompt.messages[0].content.text, /arg1='a'/);
  } finally {
    await client.close();
  }
});

test('terminateSession ends the session: its id then gets 404', async () => {
  const { client, transport } = await connect();
  const sessionId = transport.sessionId;
  await transport.terminateSession();
  assert.equal(transport.sessionId, undefined);
  await client.close();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': sessionId },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(response.status, 404);
  assert.equal((await response.json()).error.code, -32001);
});

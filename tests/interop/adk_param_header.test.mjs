// Interop: Google ADK JS (@google/adk 2.0.0) with imgmcp's SEP-2243 annotation. Every tool's
// session_id carries "x-mcp-header": "Session-Id" in its inputSchema — a keyword JSON Schema and
// Gemini's function-declaration schema do not know. ADK must take the tools as they are, keep
// the keyword out of the Gemini declarations it builds, and call them: over HTTP its MCP client
// (the 1.x SDK, a 2025-11-25 session) sends no Mcp-Param-Session-Id, which a legacy session
// needs not. Against the real binary over Streamable HTTP; no LLM, no network beyond 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCPToolset } from '@google/adk/tools/mcp';
import { startHttpServer } from '../support/imgmcp_process.mjs';
import { TOOL_NAMES, adkCaller, assertGeminiTyped, ok } from './support/adk_helpers.mjs';

let dataDir;
let server;
let toolset;
let tools;
const call = adkCaller(() => tools);

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'imgmcp-adk-header-'));
  server = await startHttpServer({ dataDir, args: ['--backend', 'local'] });
  toolset = new MCPToolset({ type: 'StreamableHTTPConnectionParams', url: server.url });
  tools = await toolset.getTools();
});

after(async () => {
  await toolset?.close();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('the annotated schemas convert to Gemini declarations without the keyword', async () => {
  assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
  for (const tool of tools) {
    // What imgmcp sent: the annotation is there.
    assert.equal(tool.mcpTool.inputSchema.properties.session_id['x-mcp-header'], 'Session-Id',
      tool.name);
    // What ADK hands Gemini: plain typed schemas, the keyword left out.
    const decl = tool._getDeclaration();
    assertGeminiTyped(decl.parameters, `${tool.name}.parameters`);
    assert.deepEqual(decl.parameters.properties.session_id,
      { type: 'STRING', description: tool.mcpTool.inputSchema.properties.session_id.description });
    assert.doesNotMatch(JSON.stringify(decl), /x-mcp-header/, tool.name);
  }
});

test('ADK calls the annotated tools over HTTP without the header', { timeout: 60000 }, async () => {
  const v1 = ok(await call('generate_image', { prompt: 'solid red', session_id: 'adk-h', inline: 'none' }));
  assert.deepEqual([v1.session_id, v1.version], ['adk-h', 1]);
  const v2 = ok(await call('edit_image', { session_id: 'adk-h', prompt: 'invert', inline: 'none' }));
  assert.equal(v2.version, 2);
});

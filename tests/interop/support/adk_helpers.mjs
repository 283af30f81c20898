// Shared by adk_stdio.test.mjs and adk_http.test.mjs: calling Google ADK JS MCP tools directly
// (no LLM) and checking the Gemini declarations they produce.
import assert from 'node:assert/strict';
import { Type } from '@google/genai';

export { ok, blocksOf, sha256 } from './common.mjs';

export const TOOL_NAMES = ['edit_image', 'generate_image', 'get_image', 'reset_session'];
export const CALL_TIMEOUT_MS = 30000;

// What ADK's runner passes as the tool context; only abortSignal is read by MCPTool.runAsync.
export function toolContext() {
  return { abortSignal: AbortSignal.timeout(CALL_TIMEOUT_MS) };
}

// Returns call(name, args), which runs the ADK tool of that name from getTools() (read on every
// call, so it may be filled in by a before() hook after this is created).
export function adkCaller(getTools) {
  return async function call(name, args) {
    const tool = getTools().find((t) => t.name === name);
    assert.ok(tool, `no ADK tool ${name}`);
    return tool.runAsync({ args, toolContext: toolContext() });
  };
}

// Every node of a converted Gemini schema has a known type (no TYPE_UNSPECIFIED, no empty {}).
export function assertGeminiTyped(schema, where) {
  assert.ok(schema && typeof schema === 'object', `${where}: not a schema`);
  assert.ok(Object.values(Type).includes(schema.type) && schema.type !== Type.TYPE_UNSPECIFIED,
    `${where}: type ${schema.type}`);
  for (const [k, v] of Object.entries(schema.properties ?? {})) assertGeminiTyped(v, `${where}.${k}`);
  if (schema.items) assertGeminiTyped(schema.items, `${where}[]`);
}

// Shared by the interop tests: checks on MCP tool results. (The imgmcp binary and the Gemini fake
// as processes: tests/support/, shared with every test folder.)
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

// Asserts a tools/call result succeeded and returns its structuredContent.
export function ok(result) {
  assert.notEqual(result.isError, true, `tool failed: ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, 'structuredContent missing');
  return result.structuredContent;
}

export const blocksOf = (result, type) => result.content.filter((c) => c.type === type);
export const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

// Shared by the interop tests: the imgmcp binary under test and checks on MCP tool results.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

// The imgmcp binary from IMGMCP_BIN (set by ctest); fails the test file when it is missing.
export function imgmcpBin() {
  const bin = process.env.IMGMCP_BIN;
  assert.ok(bin, 'IMGMCP_BIN must point at the imgmcp binary');
  return bin;
}

// Asserts a tools/call result succeeded and returns its structuredContent.
export function ok(result) {
  assert.notEqual(result.isError, true, `tool failed: ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, 'structuredContent missing');
  return result.structuredContent;
}

export const blocksOf = (result, type) => result.content.filter((c) => c.type === type);
export const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

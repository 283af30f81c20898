// The v2 MCP SDK client (@modelcontextprotocol/client 2.4.0) connected to imgmcp in the modern era.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { MODERN, imgmcpBin, serverEnv } from './processes.mjs';

// mode: 'pin' (versionNegotiation pinned to 2026-07-28: no fallback, fails unless the server's
// server/discover offers it) or 'auto' (probe with server/discover, fall back to initialize).
export function modernClient(name, mode) {
  return new Client({ name, version: '0.0.0' }, {
    versionNegotiation: { mode: mode === 'auto' ? 'auto' : { pin: MODERN } },
  });
}

// A stdio transport that starts the real binary with a data dir (and extra args/env).
export function stdioTransport(dataDir, args = [], env = {}) {
  return new StdioClientTransport({
    command: imgmcpBin(),
    args: ['--data-dir', dataDir, ...args],
    env: serverEnv(env),
    stderr: 'pipe',
  });
}

export function httpTransport(url) {
  return new StreamableHTTPClientTransport(new URL(url));
}

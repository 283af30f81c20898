// The real imgmcp binary for the browser tests: over stdio with the official v2 SDK client, or
// over HTTP (`--http 127.0.0.1:0`) with its port read from the "listening on" line. Each server
// gets its own temporary data dir, removed when it stops.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

export const BIN = process.env.IMGMCP_BIN;
if (!BIN) throw new Error('IMGMCP_BIN must point at the imgmcp binary');

// The environment without a Gemini key or token from the caller: the offline backend, always.
function cleanEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.GEMINI_API_KEY;
  delete env.IMGMCP_AUTH_TOKEN;
  return env;
}

export async function startStdio() {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgmcp-browser-'));
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--data-dir', dataDir, '--log-level', 'warning'],
    env: cleanEnv(),
    stderr: 'inherit',
  });
  const client = new Client({ name: 'imgmcp-browser-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    dataDir,
    async stop() {
      await client.close().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function startHttp({ token } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgmcp-browser-http-'));
  const args = ['--http', '127.0.0.1:0', '--data-dir', dataDir, '--log-level', 'info'];
  if (token) args.push('--auth-token', token);
  const child = spawn(BIN, args, { stdio: ['ignore', 'ignore', 'pipe'], env: cleanEnv() });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no listening line:\n${stderr}`)); }, 20000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(stderr);
      if (m && timer) {
        clearTimeout(timer);
        const port = Number(m[1]);
        resolve({
          port,
          origin: `http://127.0.0.1:${port}`,
          stderr: () => stderr,
          async stop() {
            if (child.exitCode === null) {
              const exited = new Promise((r) => child.once('exit', r));
              child.kill('SIGTERM');
              await exited;
            }
            rmSync(dataDir, { recursive: true, force: true });
          },
        });
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`imgmcp exited (${code}):\n${stderr}`)); });
  });
}

// An SDK client over Streamable HTTP ("another client" of a running server).
export async function httpClient(origin, token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const client = new Client({ name: 'imgmcp-browser-tests-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', origin), { requestInit: { headers } }));
  return client;
}

// Calls a tool and fails loudly on an error result.
export async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result;
}

// The real imgmcp binary for the browser tests: over stdio with the official v2 SDK client, or
// over HTTP (`--http 127.0.0.1:0`, tests/support/imgmcp_process.mjs) with its port read from the
// "listening on" line. Each server gets its own temporary data dir, removed when it stops.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { imgmcpBin, serverEnv, startHttpServer, tempDir } from '../../support/imgmcp_process.mjs';

export const BIN = imgmcpBin();

export async function startStdio() {
  const data = tempDir('browser');
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--data-dir', data.dir, '--log-level', 'warning'],
    env: serverEnv(),  // the offline backend, always
    stderr: 'inherit',
  });
  const client = new Client({ name: 'imgmcp-browser-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    dataDir: data.dir,
    async stop() {
      await client.close().catch(() => {});
      data.remove();
    },
  };
}

// { port, origin, stderr(), stop() } of `imgmcp --http 127.0.0.1:0` (with --auth-token `token`).
export function startHttp({ token } = {}) {
  const args = ['--log-level', 'info'];
  if (token) args.push('--auth-token', token);
  return startHttpServer({ args });  // the offline backend: serverEnv() has no Gemini key
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

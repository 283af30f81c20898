// Serves the test host (host/) and the npm modules it imports, on 127.0.0.1 with an OS-chosen
// port. The host page is opened as http://127.0.0.1:PORT and its sandbox proxy as
// http://localhost:PORT: two origins, as the MCP Apps spec asks of web hosts.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const hostDir = join(here, '..', 'host');
const modulesDir = join(here, '..', 'node_modules');

// Browser entry points of the packages host.js needs (their "browser"/"import" builds).
const IMPORTS = {
  '@modelcontextprotocol/ext-apps/app-bridge': '@modelcontextprotocol/ext-apps/dist/src/app-bridge.js',
  '@modelcontextprotocol/client': '@modelcontextprotocol/client/dist/index.mjs',
  '@modelcontextprotocol/client/_shims': '@modelcontextprotocol/client/dist/shimsBrowser.mjs',
  '@modelcontextprotocol/core': '@modelcontextprotocol/core/dist/index.mjs',
  '@modelcontextprotocol/core/internal': '@modelcontextprotocol/core/dist/internal.mjs',
  'zod/v4': 'zod/v4/index.js',
  'pkce-challenge': 'pkce-challenge/dist/index.browser.js',
  'eventsource': 'eventsource/dist/index.js',
  'eventsource-parser': 'eventsource-parser/dist/index.js',
  'eventsource-parser/stream': 'eventsource-parser/dist/stream.js',
  'jose': 'jose/dist/webapi/index.js',
};

function importMap() {
  const imports = {};
  for (const [name, path] of Object.entries(IMPORTS)) imports[name] = `/node_modules/${path}`;
  return `<script type="importmap">${JSON.stringify({ imports })}</script>`;
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript' };

export async function startStaticServer() {
  const server = createServer(async (req, res) => {
    try {
      const path = new URL(req.url, 'http://x').pathname;
      let file;
      if (path.startsWith('/node_modules/')) {
        file = normalize(join(modulesDir, decodeURIComponent(path.slice('/node_modules/'.length))));
        if (!file.startsWith(modulesDir + sep)) throw new Error('outside node_modules');
      } else if (['/host.html', '/host.js', '/sandbox.html'].includes(path)) {
        file = join(hostDir, path.slice(1));
      } else {
        res.writeHead(404).end('not found');
        return;
      }
      let body = await readFile(file);
      if (path === '/host.html') body = body.toString('utf8').replace('<!--IMPORTMAP-->', importMap());
      const ext = file.slice(file.lastIndexOf('.'));
      res.writeHead(200, { 'Content-Type': TYPES[ext] || 'application/octet-stream', 'Cache-Control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    hostUrl: `http://127.0.0.1:${port}/host.html`,
    sandboxUrl: `http://localhost:${port}/sandbox.html`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

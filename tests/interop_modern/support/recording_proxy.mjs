// A pass-through HTTP proxy in front of imgmcp's /mcp that records every JSON-RPC request a client
// sends and the messages answering it (a JSON body or an SSE stream), so a test can see what an
// official client put on the wire — e.g. that its tools/call was answered with a task it then
// polled with tasks/get. Bytes are forwarded unchanged in both directions (a compressed answer is
// decompressed only for the record).
import http from 'node:http';
import zlib from 'node:zlib';

// Starts the proxy for TARGET (imgmcp's base URL, e.g. http://127.0.0.1:PORT/mcp); resolves
// { url, exchanges, stop() }. exchanges: [{ request, responses: [message…] }] in arrival order.
export async function startRecordingProxy(target) {
  const upstream = new URL(target);
  const exchanges = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const exchange = { request: parse(body.toString('utf8')), responses: [] };
      exchanges.push(exchange);
      const headers = { ...req.headers, host: upstream.host };
      const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method,
        path: req.url, headers }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        const body = [];
        up.on('data', (c) => { body.push(c); res.write(c); });
        up.on('end', () => {
          const text = decoded(Buffer.concat(body), up.headers['content-encoding']);
          exchange.responses.push(...messagesIn(text, up.headers['content-type'] ?? ''));
          res.end();
        });
      });
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      out.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    exchanges,
    stop: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

// The body as text, undoing the Content-Encoding imgmcp chose from the client's Accept-Encoding.
function decoded(body, encoding) {
  switch (encoding) {
    case 'gzip': return zlib.gunzipSync(body).toString('utf8');
    case 'deflate': return zlib.inflateSync(body).toString('utf8');
    case 'br': return zlib.brotliDecompressSync(body).toString('utf8');
    case 'zstd': return zlib.zstdDecompressSync(body).toString('utf8');
    default: return body.toString('utf8');
  }
}

function parse(text) {
  try { return JSON.parse(text); } catch { return undefined; }
}

function messagesIn(text, contentType) {
  if (!contentType.startsWith('text/event-stream')) {
    const one = parse(text);
    return one === undefined ? [] : [one];
  }
  const out = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart()).join('\n');
    const message = data ? parse(data) : undefined;
    if (message !== undefined) out.push(message);
  }
  return out;
}

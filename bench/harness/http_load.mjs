// P6 load client: N concurrent Streamable HTTP clients, each with its own MCP session, calling
// one small tool in a loop for a fixed time. Node's own http with keep-alive so the client is not
// the bottleneck the way a Python client would be. Prints one JSON line:
//   {"rps":…, "p50":ms, "p95":ms, "calls":n, "errors":n, "first_error":…}
// Usage: node http_load.mjs URL TOOL ARGS_JSON SECONDS CONCURRENCY [SETUP_JSON]
//   SETUP_JSON: {"name":…, "arguments":…}, one call made before the clock starts (e.g. to create
//   the session the small call reads).
import http from 'node:http';

const [url, tool, argsJson, secondsText, concurrencyText, setupJson] = process.argv.slice(2);
const target = new URL(url);
const seconds = Number(secondsText);
const concurrency = Number(concurrencyText);
const agent = new http.Agent({keepAlive: true, maxSockets: concurrency * 2});
const PROTOCOL = '2025-06-18';

function post(body, session) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const headers = {
      'Content-Type': 'application/json',
      'Accept': 'application/json, text/event-stream',
      'Content-Length': Buffer.byteLength(data),
      'MCP-Protocol-Version': PROTOCOL,
    };
    if (session) headers['Mcp-Session-Id'] = session;
    // An OAuth-protected server: the header comes from the environment, never the command line.
    if (process.env.IMGMCP_BENCH_AUTHORIZATION) {
      headers['Authorization'] = process.env.IMGMCP_BENCH_AUTHORIZATION;
    }
    const req = http.request(
        {host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent,
         headers},
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({status: res.statusCode, headers: res.headers,
                                       text: Buffer.concat(chunks).toString()}));
        });
    req.on('error', reject);
    req.end(data);
  });
}

// A JSON body or an SSE stream whose data lines carry the response.
function answerOf(res, id) {
  if (res.status >= 300) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
  if (res.status === 202) return null;
  const type = String(res.headers['content-type'] || '');
  const messages = [];
  if (type.includes('text/event-stream')) {
    for (const line of res.text.split('\n')) {
      // An SSE priming event (id + empty data) carries no message.
      if (line.startsWith('data:') && line.slice(5).trim()) messages.push(JSON.parse(line.slice(5)));
    }
  } else if (res.text.trim()) {
    const v = JSON.parse(res.text);
    messages.push(...(Array.isArray(v) ? v : [v]));
  }
  const m = messages.find((x) => x.id === id);
  if (!m) throw new Error(`no answer to ${id}: ${res.text.slice(0, 200)}`);
  if (m.error) throw new Error(JSON.stringify(m.error).slice(0, 200));
  if (m.result && m.result.isError) throw new Error(JSON.stringify(m.result).slice(0, 200));
  return m;
}

async function connect() {
  const init = await post({jsonrpc: '2.0', id: 1, method: 'initialize', params: {
    protocolVersion: PROTOCOL, capabilities: {}, clientInfo: {name: 'imgmcp-bench', version: '1'}}});
  answerOf(init, 1);
  const session = init.headers['mcp-session-id'];
  await post({jsonrpc: '2.0', method: 'notifications/initialized'}, session);
  return session;
}

async function client(deadline, latencies, failures) {
  const session = await connect();
  const args = JSON.parse(argsJson);
  let id = 2;
  while (performance.now() < deadline) {
    const t0 = performance.now();
    try {
      answerOf(await post({jsonrpc: '2.0', id, method: 'tools/call',
                           params: {name: tool, arguments: args}}, session), id);
      latencies.push(performance.now() - t0);
    } catch (e) {
      failures.push(String(e.message || e));
    }
    ++id;
  }
}

const latencies = [];
const failures = [];
if (setupJson) {
  try {
    const session = await connect();
    answerOf(await post({jsonrpc: '2.0', id: 2, method: 'tools/call', params: JSON.parse(setupJson)},
                        session), 2);
  } catch (e) {
    console.error(`setup call failed: ${e.message || e}`);
    process.exit(1);
  }
}
const start = performance.now();
const deadline = start + seconds * 1000;
try {
  await Promise.all(Array.from({length: concurrency}, () => client(deadline, latencies, failures)));
} catch (e) {
  console.error(`load client failed: ${e.message || e}`);
  process.exit(1);
}
const elapsed = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const at = (p) => latencies.length ? latencies[Math.min(latencies.length - 1,
                                                        Math.floor(p * latencies.length))] : null;
console.log(JSON.stringify({rps: latencies.length / elapsed, p50: at(0.5), p95: at(0.95),
                            calls: latencies.length, errors: failures.length,
                            first_error: failures[0] || null}));
agent.destroy();

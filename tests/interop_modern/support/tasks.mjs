// The v2 SDK client with @modelcontextprotocol/ext-tasks 0.2.2 on a modern (2026-07-28)
// connection. ext-tasks drives a task through tasks/get, tasks/update and tasks/cancel, but the
// SDK Client's own request path does not carry those wire shapes, so the package asks its host
// for `rawDispatch` (a request/response channel below the SDK) and `v2RequestFraming` (the
// per-request envelope). The channel here sends on the connected transport itself and takes the
// answers to its own ids before the SDK sees them — the way the MCP Inspector hosts ext-tasks.
import { DispatchError, createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const RAW_ID_PREFIX = 'imgmcp-ext-tasks-';

// A rawDispatch for TRANSPORT (already connected through CLIENT): each request goes out with a
// string id of its own; the response to that id resolves it as { kind: 'result' | 'error' }.
export function rawChannel(transport) {
  const pending = new Map();
  let counter = 0;
  const sdkOnMessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const entry = typeof message?.id === 'string' ? pending.get(message.id) : undefined;
    if (entry && ('result' in message || 'error' in message)) {
      pending.delete(message.id);
      entry.resolve('error' in message
        ? { kind: 'error', error: { code: message.error.code, message: message.error.message,
          ...(message.error.data === undefined ? {} : { data: message.error.data }) } }
        : { kind: 'result', result: message.result });
      return;
    }
    sdkOnMessage?.call(transport, message, extra);
  };
  const dispatch = (request, options = {}) => new Promise((resolve, reject) => {
    const id = `${RAW_ID_PREFIX}${counter += 1}`;
    const signal = options.signal;
    if (signal?.aborted) {
      reject(new DispatchError('aborted before dispatch'));
      return;
    }
    const onAbort = () => {
      pending.delete(id);
      reject(new DispatchError(`request ${request.method} aborted`));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = (fn) => (value) => { signal?.removeEventListener('abort', onAbort); fn(value); };
    pending.set(id, { resolve: done(resolve) });
    const message = { jsonrpc: '2.0', id, method: request.method,
      ...(request.params === undefined ? {} : { params: request.params }) };
    const headers = options.context?.headers;
    transport.send(message, headers === undefined ? {} : { headers }).catch((err) => {
      if (!pending.delete(id)) return;
      done(reject)(new DispatchError(`sending ${request.method} failed`, false, { cause: err }));
    });
  });
  return { dispatch, pendingCount: () => pending.size };
}

// The Mcp-Param-* headers (SEP-2243) a tools/call of NAME with ARGS carries: ext-tasks sends
// below the SDK Client, which would add them, so its host does (the MCP Inspector: its
// mcpParamHeadersForTool). Each top-level property of the tool's inputSchema annotated
// x-mcp-header with a value in ARGS, as it is when plain visible ASCII, else =?base64?…?=.
async function mirroredHeaders(client, name, args) {
  const { tools } = await client.listTools();
  const properties = tools.find((t) => t.name === name)?.inputSchema?.properties ?? {};
  const headers = {};
  for (const [key, schema] of Object.entries(properties)) {
    const header = schema?.['x-mcp-header'];
    const value = args?.[key];
    if (typeof header !== 'string' || value === undefined || value === null ||
        typeof value === 'object') continue;
    const text = String(value);
    const plain = text !== '' && text === text.trim() && /^[\x20-\x7e\t]*$/.test(text) &&
      !(text.startsWith('=?base64?') && text.endsWith('?='));
    headers[`Mcp-Param-${header}`] =
      plain ? text : `=?base64?${Buffer.from(text).toString('base64')}?=`;
  }
  return headers;
}

// An ext-tasks session over CLIENT (connected modern through TRANSPORT).
export function taskSession(client, transport, endpointId) {
  const channel = rawChannel(transport);
  const session = createTaskSessionFromClient(client, {
    endpointId,
    rawDispatch: channel.dispatch,
    v2RequestFraming: {
      protocolVersion: client.getNegotiatedProtocolVersion(),
      clientInfo: { name: 'imgmcp-interop-ext-tasks', version: '0.0.0' },
      clientCapabilities: {},
    },
  });
  const callTool = session.callTool.bind(session);
  session.callTool = async (name, args, options = {}) => {
    const headers = await mirroredHeaders(client, name, args);
    return callTool(name, args, Object.keys(headers).length === 0 ? options
      : { ...options, headers: { ...options.headers, ...headers } });
  };
  return { session, channel };
}

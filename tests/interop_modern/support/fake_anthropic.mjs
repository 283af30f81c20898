// A stand-in for the Anthropic Messages API on 127.0.0.1, so Claude Code (ANTHROPIC_BASE_URL)
// runs a whole agent turn offline: asked with the MCP tool TOOL among its tools and no tool result
// yet, the "model" answers with one tool_use of TOOL with ARGS; once the request carries that
// tool's result, it answers with text that quotes the result (`RESULT: …`), so the test sees what
// the tool returned in Claude Code's own output. Streaming (SSE) and plain JSON answers both.
import http from 'node:http';

// Resolves { url, requests, stop() }; requests: the parsed bodies of every /v1/messages call.
export async function startFakeAnthropic({ toolSuffix, args }) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url, 'http://x').pathname;
      let body = {};
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'); } catch { /* empty */ }
      if (path.endsWith('/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 10 }));
        return;
      }
      if (!path.endsWith('/v1/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: path } }));
        return;
      }
      requests.push(body);
      const content = reply(body, toolSuffix, args);
      const stopReason = content[0].type === 'tool_use' ? 'tool_use' : 'end_turn';
      const message = { id: `msg_${requests.length}`, type: 'message', role: 'assistant',
        model: body.model ?? 'claude-fake', content, stop_reason: stopReason,
        stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } };
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const [event, data] of streamEvents(message)) {
          res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        }
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(message));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    stop: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function toolResults(body) {
  const out = [];
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content) if (block.type === 'tool_result') out.push(block);
  }
  return out;
}

function textOf(block) {
  if (typeof block.content === 'string') return block.content;
  return (block.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

function reply(body, toolSuffix, args) {
  const tool = (body.tools ?? []).find((t) => t.name?.startsWith('mcp__') && t.name.endsWith(toolSuffix));
  const results = toolResults(body);
  if (results.length > 0) {
    return [{ type: 'text', text: `RESULT: ${results.map(textOf).join('\n')}` }];
  }
  if (!tool) return [{ type: 'text', text: 'NO TOOL' }];
  return [{ type: 'tool_use', id: 'toolu_fake_1', name: tool.name, input: args }];
}

function streamEvents(message) {
  const events = [['message_start', { type: 'message_start',
    message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }]];
  message.content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      events.push(['content_block_start', { type: 'content_block_start', index,
        content_block: { ...block, input: {} } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index,
        content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index,
        delta: { type: 'text_delta', text: block.text } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 5 } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}

// Interop, modern era: the MCP Inspector CLI 2.12.0 (`mcp-inspector --cli --protocol-era modern`,
// one process per command, as a script or CI job runs it) lists and calls imgmcp's tools and lists
// and reads its resources (the session viewer MCP App among them), over stdio (the inspector starts
// the binary) and over Streamable HTTP.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_NAMES, imgmcpBin, run, serverEnv, startHttpServer, tempDir } from './support/processes.mjs';
import { sha256 } from './support/results.mjs';

const INSPECTOR = fileURLToPath(new URL(
  './node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url));
const TIMEOUT = { timeout: 90000 };
const VIEWER = 'ui://imgmcp/session-viewer.html';
const APP_MIME = 'text/html;profile=mcp-app';

function inspectorSuite(over, open) {
  let work;
  let target;
  let stop;

  // Runs the inspector CLI with ARGS against the target (last: a URL, or `-- command args`);
  // resolves its parsed JSON output.
  async function inspect(args) {
    const home = join(work.dir, 'home');
    const r = await run(process.execPath,
      [INSPECTOR, '--cli', '--protocol-era', 'modern', '--format', 'json', ...args, ...target],
      { cwd: work.dir, env: serverEnv({ HOME: home }) });
    assert.equal(r.code, 0, `inspector ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout);
  }
  const callTool = async (name, args) => (await inspect(
    ['--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args)])).result;

  before(async () => {
    work = tempDir('inspector');
    mkdirSync(join(work.dir, 'home'));
    mkdirSync(join(work.dir, 'data'));
    ({ target, stop } = await open(join(work.dir, 'data')));
  });

  after(async () => {
    await stop?.();
    work?.remove();
  });

  test(`tools/list shows the four tools${over}`, TIMEOUT, async () => {
    const out = await inspect(['--method', 'tools/list']);
    const tools = out.tools ?? out.result?.tools;
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
  });

  test(`all four tools and a resource read${over}`, TIMEOUT, async () => {
    const v1 = (await callTool('generate_image',
      { session_id: 'insp', prompt: 'solid navy', inline: 'none' })).structuredContent;
    assert.deepEqual([v1.session_id, v1.version], ['insp', 1]);
    const v2 = (await callTool('edit_image',
      { session_id: 'insp', prompt: 'invert', inline: 'none' })).structuredContent;
    assert.equal(v2.version, 2);
    const got = (await callTool('get_image', { session_id: 'insp', version: 1, inline: 'none' })).structuredContent;
    assert.equal(got.sha256, v1.sha256);
    const blob = (await inspect(['--method', 'resources/read', '--uri', v2.uri])).result;
    assert.equal(sha256(Buffer.from(blob.contents[0].blob, 'base64')), v2.sha256);
    const reverted = (await callTool('reset_session', { session_id: 'insp', to_version: 1 })).structuredContent;
    assert.deepEqual([reverted.version, reverted.sha256], [3, v1.sha256]);
  });

  test(`the session viewer (MCP App) is listed and readable${over}`, TIMEOUT, async () => {
    const listed = (await inspect(['--method', 'resources/list'])).result.resources
      .find((r) => r.uri === VIEWER);
    assert.equal(listed?.mimeType, APP_MIME);
    const { contents } = (await inspect(['--method', 'resources/read', '--uri', VIEWER])).result;
    assert.deepEqual([contents[0].uri, contents[0].mimeType], [VIEWER, APP_MIME]);
    assert.match(contents[0].text, /<html[\s>]/i);
  });
}

describe('over stdio', () => {
  inspectorSuite(' over stdio', async (dataDir) => ({
    target: ['--', imgmcpBin(), '--backend', 'local', '--data-dir', dataDir],
  }));
});

describe('over HTTP', () => {
  inspectorSuite(' over HTTP', async (dataDir) => {
    const server = await startHttpServer({ dataDir, args: ['--backend', 'local'] });
    return { target: [server.url], stop: server.stop };
  });
});

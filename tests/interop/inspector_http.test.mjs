// Interop: @modelcontextprotocol/inspector-cli 1.0.3 (`mcp-inspector-cli --cli URL --transport
// http`) calls each imgmcp tool and reads its resources over Streamable HTTP against one
// `imgmcp --http 127.0.0.1:0` (port parsed from its stderr line), one inspector per command.
// Skipped (with a message) only while `imgmcp --help` does not mention --http.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = process.env.IMGMCP_BIN;
assert.ok(bin, 'IMGMCP_BIN must point at the imgmcp binary');
const inspectorCli = fileURLToPath(
  new URL('./node_modules/@modelcontextprotocol/inspector-cli/build/cli.js', import.meta.url));
const RUN_TIMEOUT_MS = 60000;
const help = spawnSync(bin, ['--help'], { encoding: 'utf8', timeout: 10000 }).stdout ?? '';
const skip = /--http\b/.test(help) ? false : 'imgmcp --help does not mention --http yet';

let workDir;  // holds package.json, data/ and run/
let dataDir;
let runDir;
let server;
let url;

// Starts imgmcp over HTTP and resolves with the child and its /mcp URL from the stderr line
// "imgmcp: listening on http://HOST:PORT/mcp".
function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--http', '127.0.0.1:0', '--backend', 'local', '--data-dir', dataDir],
      { stdio: ['ignore', 'ignore', 'pipe'], cwd: dataDir });
    let stderr = '';
    let done = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no "listening on" line within 20 s:\n${stderr}`));
    }, 20000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!done) reject(new Error(`imgmcp --http exited (${code}) before listening:\n${stderr}`));
    });
  });
}

// Runs mcp-inspector-cli --cli ARGS; resolves {code, stdout, stderr}. The inspector runs in its
// own process group so a hung run is killed with everything it started.
// inspector-cli 1.0.3 looks for "../package.json" relative to the *working directory* (a bug) and
// fails with "Cannot find module" otherwise, so it runs in run/ next to a package.json.
function inspect(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [inspectorCli, '--cli', ...args],
      { cwd: runDir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      reject(new Error(`inspector timed out: ${args.join(' ')}\n${stderr}`));
    }, RUN_TIMEOUT_MS);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

const SERVER = () => [url, '--transport', 'http'];

async function run(method, extra = []) {
  const r = await inspect([...SERVER(), '--method', method, ...extra]);
  assert.equal(r.code, 0, `inspector ${method} exited ${r.code}:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

const callTool = (name, args) => run('tools/call', ['--tool-name', name, '--tool-arg', ...args]);

function ok(result) {
  assert.notEqual(result.isError, true, `tool failed: ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, 'structuredContent missing');
  return result.structuredContent;
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

before(async () => {
  if (skip) return;
  workDir = mkdtempSync(join(tmpdir(), 'imgmcp-inspector-'));
  writeFileSync(join(workDir, 'package.json'), '{}\n');
  dataDir = join(workDir, 'data');
  runDir = join(workDir, 'run');
  mkdirSync(dataDir);
  mkdirSync(runDir);
  ({ child: server, url } = await startServer());
});

after(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

test('tools/list shows the four tools with object schemas', { timeout: 90000, skip }, async () => {
  const { tools } = await run('tools/list');
  assert.deepEqual(tools.map((t) => t.name).sort(),
    ['edit_image', 'generate_image', 'get_image', 'reset_session']);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(t.outputSchema.type, 'object');
  }
});

test('each tool through tools/call over HTTP, then resources/list and resources/read', { timeout: 180000, skip }, async () => {
  const v1 = ok(await callTool('generate_image', ['prompt=solid red', 'session_id=ins1', 'inline=none']));
  assert.deepEqual([v1.session_id, v1.version, v1.width, v1.height], ['ins1', 1, 1024, 1024]);

  const v2 = ok(await callTool('edit_image', ['session_id=ins1', 'prompt=invert', 'inline=none',
    'expected_version=1']));  // a JSON number from --tool-arg
  assert.deepEqual([v2.version, v2.parent_version], [2, 1]);

  const got = await callTool('get_image', ['session_id=ins1']);
  assert.equal(ok(got).version, 2);
  assert.deepEqual(ok(got).history.map((h) => h.operation), ['generate', 'edit']);
  const image = got.content.find((c) => c.type === 'image');
  assert.ok(image, 'default get_image result has a preview');
  assert.ok(Buffer.from(image.data, 'base64').length <= 600 * 1024);
  assert.ok(got.content.some((c) => c.type === 'resource_link' &&
    c.uri === 'imgmcp://sessions/ins1/versions/2'));

  const v3 = ok(await callTool('reset_session', ['session_id=ins1', 'to_version=1']));
  assert.deepEqual([v3.version, v3.sha256], [3, v1.sha256]);

  const { resources } = await run('resources/list');
  const names = resources.map((r) => r.name);
  assert.ok(names.includes('ins1 v3'), `resources: ${names}`);
  assert.ok(names.includes('ins1'), `resources: ${names}`);

  const read = await run('resources/read', ['--uri', 'imgmcp://sessions/ins1/versions/2']);
  assert.equal(read.contents[0].mimeType, 'image/png');
  assert.equal(sha256(Buffer.from(read.contents[0].blob, 'base64')), v2.sha256);
  const manifest = JSON.parse((await run('resources/read', ['--uri', 'imgmcp://sessions/ins1'])).contents[0].text);
  assert.deepEqual(manifest.versions.map((v) => v.version), [1, 2, 3]);

  const templates = await run('resources/templates/list');
  assert.ok(templates.resourceTemplates.some((t) => t.uriTemplate.includes('{session_id}')));
});

test('isError results exit 0 with the error text; protocol errors exit 1', { timeout: 90000, skip }, async () => {
  const bad = await callTool('edit_image', ['session_id=ins-empty', 'prompt=invert', 'inline=huge']);
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /inline/);
  const unknown = await inspect([...SERVER(), '--method', 'tools/call', '--tool-name', 'no_such_tool']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /-32602/);
  const missing = await inspect([...SERVER(), '--method', 'resources/read', '--uri',
    'imgmcp://sessions/nobody/versions/1']);
  assert.equal(missing.code, 1);
});

test('a --config file naming the server by URL', { timeout: 90000, skip }, async () => {
  const configPath = join(workDir, 'mcp.json');
  writeFileSync(configPath, JSON.stringify({
    mcpServers: { imgmcp: { type: 'streamable-http', url } },
  }));
  const r = await inspect(['--config', configPath, '--server', 'imgmcp', '--method', 'tools/call',
    '--tool-name', 'get_image', '--tool-arg', 'session_id=ins1', 'inline=none']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(ok(JSON.parse(r.stdout)).version, 3);
});

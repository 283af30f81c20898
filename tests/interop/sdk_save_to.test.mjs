// Interop: what Claude Code asks for most — "make a hero image and put it in assets/hero.png" —
// through the official @modelcontextprotocol/sdk Client over stdio. The server runs in a project
// directory (its working directory, as Claude Code starts it) with its data dir elsewhere; a
// generate, then an edit with save_to "assets/hero.png", leaves a whole PNG there.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {existsSync, mkdirSync, readFileSync, readdirSync, realpathSync} from 'node:fs';
import {join} from 'node:path';
import {inflateSync} from 'node:zlib';
import {Client} from '@modelcontextprotocol/sdk/client/index.js';
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js';
import {imgmcpBin, serverEnv, tempDir} from '../support/imgmcp_process.mjs';
import {ok, sha256} from './support/common.mjs';

let sandbox;
let project;
let client;

// Width, height and every row of an 8-bit RGB/RGBA PNG: the IDAT data inflates to exactly the
// rows the header promises.
function decodePng(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let pos = 8;
  let header;
  const idat = [];
  while (pos < bytes.length) {
    const length = bytes.readUInt32BE(pos);
    const type = bytes.toString('latin1', pos + 4, pos + 8);
    const body = bytes.subarray(pos + 8, pos + 8 + length);
    if (type === 'IHDR') {
      header = {width: body.readUInt32BE(0), height: body.readUInt32BE(4), depth: body[8],
        channels: body[9] === 6 ? 4 : 3};
    }
    if (type === 'IDAT') idat.push(body);
    if (type === 'IEND') break;
    pos += 12 + length;
  }
  assert.ok(header, 'no IHDR');
  assert.equal(header.depth, 8);
  const rows = inflateSync(Buffer.concat(idat));
  assert.equal(rows.length, header.height * (1 + header.width * header.channels));
  return header;
}

before(async () => {
  sandbox = tempDir('sdk-save-to');
  project = realpathSync(sandbox.dir);
  mkdirSync(join(project, 'project'));
  mkdirSync(join(project, 'data'));
  project = join(project, 'project');
  const transport = new StdioClientTransport({
    command: imgmcpBin(),
    args: ['--backend', 'local', '--data-dir', join(sandbox.dir, 'data')],
    cwd: project,
    env: serverEnv(),
    stderr: 'pipe',
  });
  client = new Client({name: 'imgmcp-interop-save-to', version: '0.0.0'});
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  sandbox?.remove();
});

test('generate, then edit with save_to "assets/hero.png": the file is in the project and decodes',
  async () => {
    const generated = ok(await client.callTool({name: 'generate_image',
      arguments: {session_id: 'hero', prompt: 'a sunrise over hills, gradient sky'}}));
    assert.equal(generated.version, 1);
    assert.equal(generated.saved_to, undefined);  // nothing asked, nothing written
    assert.deepEqual(readdirSync(project), []);

    const result = await client.callTool({name: 'edit_image',
      arguments: {session_id: 'hero', prompt: 'border white 12px', save_to: 'assets/hero.png'}});
    const edited = ok(result);
    const hero = join(project, 'assets', 'hero.png');
    assert.equal(edited.version, 2);
    assert.equal(edited.saved_to, hero);
    assert.equal(edited.saved_format, 'png');
    const bytes = readFileSync(hero);
    assert.equal(edited.saved_bytes, bytes.length);
    assert.equal(sha256(bytes), edited.sha256);  // the version's own bytes
    const png = decodePng(bytes);
    assert.deepEqual([png.width, png.height], [edited.width, edited.height]);
    assert.match(result.content[0].text, new RegExp(`Saved a copy to ${hero} \\(png, `));
    assert.deepEqual(readdirSync(join(project, 'assets')), ['hero.png']);  // no temp file left
  });

test('asking again for the same file is refused before anything is edited', async () => {
  const result = await client.callTool({name: 'edit_image',
    arguments: {session_id: 'hero', prompt: 'invert', save_to: 'assets/hero.png'}});
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /'save_to'.*already exists; pass overwrite: true/);
  const current = ok(await client.callTool({name: 'get_image',
    arguments: {session_id: 'hero', inline: 'none', include_history: false}}));
  assert.equal(current.version, 2);
});

test('a path outside the project is refused and nothing is written there', async () => {
  const outside = join(sandbox.dir, 'outside.png');
  const result = await client.callTool({name: 'generate_image',
    arguments: {prompt: 'solid red', save_to: outside}});
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /outside the directories imgmcp may write to/);
  assert.equal(existsSync(outside), false);
});

// The ADK JS (@google/adk 2.0.0) interop tests, run by adk_stdio.test.mjs and adk_http.test.mjs
// against imgmcp over their transport. No LLM: the ADK tool objects are called directly, as an
// agent's runner would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@google/genai';
import { MCPToolset, LoadMcpResourceTool } from '@google/adk/tools/mcp';
import {
  TOOL_NAMES, adkCaller, assertGeminiTyped, blocksOf, ok, sha256, toolContext,
} from './adk_helpers.mjs';

// Registers the suite. `connect(dataDir)` starts what the toolset talks to and resolves to
// { params, stop }: the MCPToolset connection params and an async stop(). `separately` says what
// ADK opens anew for every call (a server process, an MCP session), for a test's name.
export function adkToolsetSuite({ name, connect, separately }) {
  let dataDir;
  let connection;
  let toolset;
  let tools;
  const call = adkCaller(() => tools);

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), `imgmcp-adk-${name}-`));
    connection = await connect(dataDir);
    toolset = new MCPToolset(connection.params);
    tools = await toolset.getTools();
  });

  after(async () => {
    await toolset?.close();
    await connection?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('getTools lists the four tools and their declarations convert to Gemini schemas',
    { timeout: 60000 }, async () => {
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_NAMES);
      for (const tool of tools) {
        const decl = tool._getDeclaration();
        assert.equal(decl.name, tool.name);
        assert.ok(decl.description.length > 40);
        assertGeminiTyped(decl.parameters, `${tool.name}.parameters`);
        assertGeminiTyped(decl.response, `${tool.name}.response`);
        assert.equal(decl.parameters.type, Type.OBJECT);
        assert.ok(decl.parameters.required.includes(tool.name === 'generate_image' ? 'prompt' : 'session_id'));
      }
      const decl = (name) => tools.find((t) => t.name === name)._getDeclaration();
      assert.deepEqual(decl('generate_image').parameters.properties.inline.enum, ['preview', 'full', 'none']);
      assert.ok(decl('generate_image').parameters.properties.aspect_ratio.enum.includes('16:9'));
      assert.equal(decl('edit_image').parameters.properties.image.type, Type.OBJECT);
      assert.equal(decl('edit_image').parameters.properties.reference_images.items.type, Type.OBJECT);
      assert.equal(decl('get_image').parameters.properties.version.type, Type.INTEGER);
      assert.deepEqual(decl('edit_image').parameters.required, ['session_id', 'prompt']);

      // What an LlmAgent does with the toolset before calling Gemini: every tool declares itself.
      const llmRequest = { contents: [], config: {}, toolsDict: {} };
      for (const tool of tools) await tool.processLlmRequest({ toolContext: {}, llmRequest });
      const declared = llmRequest.config.tools.flatMap((t) => t.functionDeclarations);
      assert.deepEqual(declared.map((d) => d.name).sort(), TOOL_NAMES);
      JSON.parse(JSON.stringify(llmRequest.config));  // plain data, ready for the wire
    });

  test(`generate, edit and get_image in ${separately} share the session`,
    { timeout: 90000 }, async () => {
      const gen = await call('generate_image', { prompt: 'solid red', session_id: 'adk1', inline: 'none' });
      const v1 = ok(gen);
      assert.deepEqual([v1.session_id, v1.version, v1.backend], ['adk1', 1, 'local']);
      assert.deepEqual(blocksOf(gen, 'image'), []);
      assert.equal(blocksOf(gen, 'resource_link')[0].uri, 'imgmcp://sessions/adk1/versions/1');
      // ADK hands this whole object to Gemini as the function response: with inline "none" it is
      // a few hundred bytes of text, not megabytes of base64.
      assert.ok(JSON.stringify(gen).length < 8192, `result is ${JSON.stringify(gen).length} chars`);
      assert.deepEqual(toolset.mcpSessionManager.getActiveSessions(), [], 'ADK closed its client');

      const v2 = ok(await call('edit_image', { session_id: 'adk1', prompt: 'invert', inline: 'none' }));
      assert.deepEqual([v2.version, v2.parent_version, v2.operation], [2, 1, 'edit']);
      assert.notEqual(v2.sha256, v1.sha256);

      const got = ok(await call('get_image', { session_id: 'adk1', inline: 'none' }));
      assert.equal(got.version, 2);
      assert.equal(got.sha256, v2.sha256);
      assert.deepEqual(got.history.map((h) => [h.version, h.operation, h.prompt]),
        [[1, 'generate', 'solid red'], [2, 'edit', 'invert']]);

      const first = await call('get_image', { session_id: 'adk1', version: 1, inline: 'full' });
      assert.equal(ok(first).sha256, v1.sha256);
      assert.equal(sha256(Buffer.from(blocksOf(first, 'image')[0].data, 'base64')), v1.sha256);

      const reverted = ok(await call('reset_session', { session_id: 'adk1', to_version: 1 }));
      assert.deepEqual([reverted.version, reverted.sha256], [3, v1.sha256]);
      const cleared = ok(await call('reset_session', { session_id: 'adk1' }));
      assert.equal(cleared.version, 0);
      assert.equal(ok(await call('get_image', { session_id: 'adk1', inline: 'none' })).version, 0);
    });

  test('the default result carries a small preview image', { timeout: 60000 }, async () => {
    const result = await call('generate_image', { prompt: 'a teal sky over orange hills', session_id: 'adk-preview' });
    const sc = ok(result);
    const [image] = blocksOf(result, 'image');
    assert.ok(image, 'preview image block missing');
    assert.match(image.mimeType, /^image\/(png|jpeg)$/);
    const bytes = Buffer.from(image.data, 'base64');
    assert.ok(bytes.length <= 600 * 1024, `preview is ${bytes.length} bytes`);
    assert.equal(sc.version, 1);
  });

  test('a bad argument is an isError result that names the field', { timeout: 60000 }, async () => {
    const result = await call('edit_image', { session_id: 'adk1', prompt: 'invert', inline: 'huge' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /inline/);
    const empty = await call('edit_image', { session_id: 'adk-empty', prompt: 'invert', inline: 'none' });
    assert.equal(empty.isError, true, 'editing a session without an image must fail');
  });

  test('resources: ADK lists, reads and loads a session image for Gemini', { timeout: 90000 }, async () => {
    const v1 = ok(await call('generate_image', { prompt: 'solid blue', session_id: 'adk2', inline: 'none' }));
    const names = await toolset.listResources();
    assert.ok(names.includes('adk2 v1'), `resource names: ${names}`);
    assert.ok(names.includes('adk2'), `manifest missing from ${names}`);

    const contents = await toolset.readResource('adk2 v1');
    assert.equal(contents[0].uri, 'imgmcp://sessions/adk2/versions/1');
    assert.equal(contents[0].mimeType, 'image/png');
    assert.equal(sha256(Buffer.from(contents[0].blob, 'base64')), v1.sha256);
    const manifest = JSON.parse((await toolset.readResource('adk2'))[0].text);
    assert.deepEqual([manifest.session_id, manifest.current_version], ['adk2', 1]);
    assert.deepEqual(manifest.versions.map((v) => v.sha256), [v1.sha256]);

    // The model asked for the image with load_mcp_resource; on the next turn ADK inlines it.
    const loader = new LoadMcpResourceTool(toolset);
    const args = { resource_names: ['adk2 v1'] };
    const response = await loader.runAsync({ args, toolContext: toolContext() });
    const llmRequest = {
      contents: [{ role: 'user', parts: [{ functionResponse: { name: 'load_mcp_resource', response } }] }],
      config: {},
      toolsDict: {},
    };
    await loader.processLlmRequest({ toolContext: {}, llmRequest });
    assert.match(llmRequest.config.systemInstruction, /adk2 v1/);
    const part = llmRequest.contents.at(-1).parts[1];
    assert.equal(part.inlineData.mimeType, 'image/png');
    assert.equal(sha256(Buffer.from(part.inlineData.data, 'base64')), v1.sha256);
  });
}

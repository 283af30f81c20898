// The session viewer as an MCP App, in Debian's chromium: a test host built on
// @modelcontextprotocol/ext-apps' AppBridge loads ui://imgmcp/session-viewer.html from the real
// imgmcp binary (stdio, official v2 SDK client) into a sandboxed iframe under the default MCP
// Apps CSP, feeds it a real tool result, and the test clicks — select, compare, revert, edit —
// and checks through MCP what the clicks did to the session.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launchBrowser, screenshotDir } from './support/browser.mjs';
import { startStaticServer } from './support/static_server.mjs';
import { startStdio, call } from './support/imgmcp.mjs';

const VIEWER_URI = 'ui://imgmcp/session-viewer.html';
const SESSION = 'harbour-at-dusk';
const EDITS = [
  'draw circle gold at 640,180 size 220',
  'draw square navy at 120,620 size 260',
  'tint orange 25%',
  'draw circle white at 300,300 size 90',
];

let imgmcp;
let browser;
let web;
let html;
let tools;
let lastCall;  // {name, arguments, result} of the session's last edit

before(async () => {
  imgmcp = await startStdio();
  web = await startStaticServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await web?.close();
  await imgmcp?.stop();
});

// The View inside the sandbox proxy inside the host page.
const viewer = (page) => page.frameLocator('#sandbox').frameLocator('iframe');

// Saves a screenshot of the host's chat column once the View has its final size and has painted.
async function snap(page, name) {
  await page.waitForFunction(() => {
    const frame = document.getElementById('sandbox');
    const last = window.hostLog.sizes.at(-1);
    return last && Math.abs(frame.clientHeight - last.height) < 2;
  });
  await viewer(page).locator('body').evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.locator('.chat').screenshot({ path: join(screenshotDir(), name) });
}

async function openHost(page, { toolResult, toolInput, tool, theme = 'light', fixedHeight }) {
  // Tall enough that screenshots never resize the page (the View's frame lives in another process).
  await page.setViewportSize({ width: 1280, height: 1700 });
  await page.exposeFunction('hostForward', async (method, params) => {
    if (method === 'tools/call') return imgmcp.client.callTool(params);
    if (method === 'resources/read') return imgmcp.client.readResource(params);
    throw new Error(`unexpected ${method}`);
  });
  await page.goto(web.hostUrl);
  await page.evaluate((args) => window.startHost(args), {
    html, sandboxUrl: web.sandboxUrl, tool, toolInput, toolResult, theme, fixedHeight,
  });
  return viewer(page);
}

async function currentOf(sessionId) {
  const r = await call(imgmcp.client, 'get_image', { session_id: sessionId, inline: 'none' });
  return r.structuredContent;
}

async function versionOf(sessionId, version) {
  const r = await call(imgmcp.client, 'get_image',
    { session_id: sessionId, version, inline: 'none', include_history: false });
  return r.structuredContent;
}

test('the image tools name the viewer, which is listed and readable as an MCP App', async () => {
  ({ tools } = await imgmcp.client.listTools());
  for (const name of ['generate_image', 'edit_image', 'get_image', 'reset_session']) {
    const tool = tools.find((t) => t.name === name);
    assert.ok(tool, `${name} is listed`);
    assert.equal(tool._meta?.ui?.resourceUri, VIEWER_URI, `${name} has _meta.ui.resourceUri`);
  }
  const { resources } = await imgmcp.client.listResources();
  const listed = resources.find((r) => r.uri === VIEWER_URI);
  assert.ok(listed, 'the viewer is in resources/list');
  assert.equal(listed.mimeType, 'text/html;profile=mcp-app');
  const read = await imgmcp.client.readResource({ uri: VIEWER_URI });
  assert.equal(read.contents.length, 1);
  assert.equal(read.contents[0].mimeType, 'text/html;profile=mcp-app');
  html = read.contents[0].text;
  assert.match(html, /^<!doctype html>/i);
  // Self-contained: nothing is fetched from anywhere.
  assert.doesNotMatch(html, /<(script|link|img|iframe)[^>]+(src|href)=["']?(https?:)?\/\//i);
});

test('a real session: one generation and four edits', async () => {
  await call(imgmcp.client, 'generate_image',
    { session_id: SESSION, prompt: 'a calm harbour at dusk, deep blue water, soft circles', inline: 'none' });
  for (const prompt of EDITS) {
    const args = { session_id: SESSION, prompt };
    lastCall = { name: 'edit_image', arguments: args, result: await call(imgmcp.client, 'edit_image', args) };
  }
  assert.equal(lastCall.result.structuredContent.version, 5);
  assert.ok(lastCall.result.content.some((c) => c.type === 'image'), 'the result carries a preview');
});

test('the viewer shows the session from the tool result: timeline, large view, details', async () => {
  const page = await browser.newPage();
  const tool = tools.find((t) => t.name === 'edit_image');
  const app = await openHost(page, { tool, toolInput: lastCall.arguments, toolResult: lastCall.result });

  const tiles = app.locator('#timeline').getByRole('option');
  await tiles.nth(4).waitFor();
  assert.equal(await tiles.count(), 5);
  // The tool result's version is selected and is the current one.
  await assertSelected(app, 5);
  await app.locator('#stage-img[data-version="5"]').waitFor();
  const tileText = await tiles.nth(1).innerText();
  assert.match(tileText, /v2/);
  assert.match(tileText, /edit/);
  assert.match(tileText, /draw circle gold/);
  await assertFact(app, 'Backend', /local/);
  assert.match(await app.locator('#title-sub').innerText(), /5 versions · current v5/);

  // Thumbnails are real images of each version.
  for (let v = 1; v <= 5; v++) await app.locator(`.tile[data-version="${v}"] img`).waitFor();
  const sizes = await app.locator('.tile img').evaluateAll((imgs) => imgs.map((i) => i.naturalWidth));
  assert.equal(sizes.length, 5);
  assert.ok(sizes.every((w) => w > 0), `thumbnails decoded: ${sizes}`);
  // Thumbnails are the server's previews (v5's may be the tool result's own preview); full
  // images are read only for what is shown large (v5) and its neighbour (v4, read ahead).
  const reads = (await page.evaluate(() => window.hostLog.requests))
    .filter((r) => r.method === 'resources/read').map((r) => r.params.uri);
  const base = `imgmcp://sessions/${SESSION}`;
  for (let v = 1; v <= 4; v++) assert.ok(reads.includes(`${base}/versions/${v}/preview`), `preview of v${v} read`);
  assert.deepEqual(reads.filter((u) => /\/versions\/\d+$/.test(u)).sort(), [`${base}/versions/4`, `${base}/versions/5`]);
  assert.ok(reads.includes(base), 'the manifest was read');

  // The View told the host its size, and the host made room for it.
  const log = await page.evaluate(() => window.hostLog);
  assert.equal(log.initialized, 1);
  assert.ok(log.sizes.some((s) => s.height > 400), `size-changed: ${JSON.stringify(log.sizes)}`);
  await snap(page, 'viewer-app.png');

  // Select with the mouse, then walk with the keyboard.
  await tiles.nth(1).click();
  await assertSelected(app, 2);
  await app.locator('#stage-img[data-version="2"]').waitFor();
  assert.match(await app.locator('#detail-prompt').innerText(), /draw circle gold at 640,180 size 220/);
  await page.keyboard.press('ArrowRight');
  await assertSelected(app, 3);
  await page.keyboard.press('End');
  await assertSelected(app, 5);
  await page.keyboard.press('Home');
  await assertSelected(app, 1);
  assert.match(await app.locator('#details').innerText(), /generate/);

  // Compare: before v1, after v4, the divider moved with the mouse and the keyboard.
  await app.getByRole('button', { name: 'Compare' }).click();
  await app.locator('#compare-bar').waitFor();
  await app.locator('#cmp-a').selectOption('1');
  await app.locator('#cmp-b').selectOption('4');
  const range = app.locator('#cmp-range');
  await app.locator('.cmp-a').and(app.locator('[src^="data:"]')).waitFor();
  await app.locator('.cmp-b').and(app.locator('[src^="data:"]')).waitFor();
  assert.equal(await app.locator('.cmp-label.a').innerText(), 'Before · v1');
  assert.equal(await app.locator('.cmp-label.b').innerText(), 'After · v4');
  const box = await app.locator('#stage').boundingBox();
  await page.mouse.click(box.x + box.width * 0.3, box.y + box.height / 2);
  const afterClick = Number(await range.inputValue());
  assert.ok(afterClick > 20 && afterClick < 40, `divider at ${afterClick}% after a click at 30%`);
  await range.focus();
  await page.keyboard.press('ArrowRight');
  assert.ok(Number(await range.inputValue()) > afterClick, 'arrow keys move the divider');
  const clip = await app.locator('.cmp-b').evaluate((img) => getComputedStyle(img).clipPath);
  assert.match(clip, /inset\(0(px)? 0(px)? 0(px)? 3\d(\.\d+)?%\)/);
  // Shift+click on a tile sets "before".
  await app.locator('#timeline').getByRole('option').nth(1).click({ modifiers: ['Shift'] });
  assert.equal(await app.locator('#cmp-a').inputValue(), '2');
  await page.mouse.click(box.x + box.width * 0.5, box.y + box.height / 2);
  await snap(page, 'viewer-app-compare.png');
  await page.keyboard.press('Escape');
  await app.locator('#compare-bar').waitFor({ state: 'hidden' });

  // Revert to v2: a new version v6 with v2's exact bytes.
  await app.locator('#timeline').getByRole('option').nth(1).click();
  await assertSelected(app, 2);
  const v2 = await versionOf(SESSION, 2);
  await app.getByRole('button', { name: 'Revert to v2' }).click();
  await app.locator('.notice.ok').filter({ hasText: 'v6 is now a copy of v2' }).waitFor();
  await assertSelected(app, 6);
  const afterRevert = await currentOf(SESSION);
  assert.equal(afterRevert.version, 6);
  assert.equal(afterRevert.sha256, v2.sha256);
  assert.equal(afterRevert.operation, 'revert');
  assert.equal(await app.locator('#timeline').getByRole('option').count(), 6);
  assert.ok(await app.getByRole('button', { name: 'Revert to v6' }).isDisabled(), 'the current version cannot be reverted to');

  // Edit from v3 with a prompt: v7, made from v3.
  await app.locator('#timeline').getByRole('option').nth(2).click();
  await app.locator('#edit-prompt').fill('draw square crimson at 40,40 size 160');
  await app.getByRole('button', { name: 'Apply edit' }).click();
  await app.locator('.notice.ok').filter({ hasText: 'v7 made from v3' }).waitFor();
  const v7 = await currentOf(SESSION);
  assert.equal(v7.version, 7);
  assert.equal(v7.parent_version, 3);
  assert.equal(v7.prompt, 'draw square crimson at 40,40 size 160');
  await assertSelected(app, 7);
  assert.match(await app.locator('#details').innerText(), /From\s+v3/);

  // A failing edit shows the server's error and changes nothing.
  await app.locator('#edit-prompt').fill('make it sparkle like the sea');
  await app.locator('#edit-prompt').press('Control+Enter');
  const error = app.locator('#action-status .notice.error');
  await error.waitFor();
  assert.match(await error.innerText(), /sparkle|not understood|unknown|vocabulary/i);
  assert.equal((await currentOf(SESSION)).version, 7, 'a failed edit commits nothing');
  await app.locator('#edit-prompt').fill('');
  await app.locator('#timeline').getByRole('option').nth(6).click();
  await snap(page, 'viewer-app-after-actions.png');

  // Every server request went through the host as tools/call or resources/read.
  const requests = (await page.evaluate(() => window.hostLog.requests)).map((r) => r.method);
  assert.ok(requests.includes('resources/read') && requests.includes('tools/call'));
  assert.deepEqual(browser.problems, [], 'no console errors, CSP violations or page errors');
  await page.close();
});

test('states: waiting, an error result, an empty session; dark theme and a theme change; a fixed-height container', async () => {
  // Waiting: the host sent the tool input but no result yet.
  let page = await browser.newPage();
  const tool = tools.find((t) => t.name === 'generate_image');
  let app = await openHost(page, { tool, toolInput: { prompt: 'a lighthouse in fog' }, toolResult: null });
  await app.getByText('Working on it…').waitFor();
  await app.getByText('“a lighthouse in fog”').waitFor();
  // Then the result arrives: an error result from the real server.
  const bad = await imgmcp.client.callTool({ name: 'edit_image', arguments: { session_id: 'no-such-session-x', prompt: 'grayscale' } });
  assert.equal(bad.isError, true);
  await page.evaluate((r) => window.bridge.sendToolResult(r), bad);
  await app.getByText('The tool reported an error').waitFor();
  await page.close();

  // An empty session: cleared with reset_session.
  await call(imgmcp.client, 'generate_image', { session_id: 'cleared-one', prompt: 'solid teal', inline: 'none' });
  const cleared = await call(imgmcp.client, 'reset_session', { session_id: 'cleared-one' });
  assert.equal(cleared.structuredContent.version, 0);
  page = await browser.newPage();
  app = await openHost(page, { tool: tools.find((t) => t.name === 'reset_session'), toolInput: { session_id: 'cleared-one' }, toolResult: cleared });
  await app.getByText('This session has no images').waitFor();
  await page.close();

  // Dark theme from the host context.
  page = await browser.newPage();
  app = await openHost(page, { tool: tools.find((t) => t.name === 'edit_image'), toolInput: lastCall.arguments, toolResult: lastCall.result, theme: 'dark' });
  await app.locator('#timeline').getByRole('option').nth(6).waitFor();
  await app.locator('#stage-img[data-version="5"]').waitFor();  // the result's version
  const bg = await app.locator('body').evaluate(() => getComputedStyle(document.querySelector('.panel')).backgroundColor);
  const [r, g, b] = bg.match(/\d+/g).map(Number);
  assert.ok(r + g + b < 120, `dark panels (${bg})`);
  await app.locator('.tile[data-version="7"] img').waitFor();
  await snap(page, 'viewer-app-dark.png');
  // The host switches to light: ui/notifications/host-context-changed.
  await page.evaluate(() => window.bridge.sendHostContextChange({ theme: 'light' }));
  await app.locator('html[data-theme="light"]').waitFor({ state: 'attached' });
  const light = await app.locator('body').evaluate(() => getComputedStyle(document.querySelector('.panel')).backgroundColor);
  assert.ok(light.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b) > 600, `light panels (${light})`);
  await page.close();

  // A host with a fixed-height container: the View fills it, without scrolling.
  page = await browser.newPage();
  app = await openHost(page, { tool: tools.find((t) => t.name === 'edit_image'), toolInput: lastCall.arguments, toolResult: lastCall.result, fixedHeight: 560 });
  await app.locator('#stage-img[data-version="5"]').waitFor();
  await app.locator('.tile[data-version="5"] img').waitFor();
  const fit = await app.locator('body').evaluate(() => ({
    scroll: document.documentElement.scrollHeight, view: window.innerHeight,
    stage: document.getElementById('stage').getBoundingClientRect(),
    panel: document.querySelector('.stage-panel').getBoundingClientRect(),
    timelineBottom: document.querySelector('.timeline-panel').getBoundingClientRect().bottom,
  }));
  assert.ok(fit.scroll <= fit.view + 1, `fills without scrolling: ${JSON.stringify(fit)}`);
  assert.ok(fit.stage.height > 200 && fit.stage.bottom <= fit.panel.bottom + 1, `the stage is whole: ${JSON.stringify(fit)}`);
  assert.ok(fit.timelineBottom <= fit.view, `the timeline fits: ${JSON.stringify(fit)}`);
  await viewer(page).locator('body').evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.locator('.chat').screenshot({ path: join(screenshotDir(), 'viewer-app-fixed-height.png') });
  await page.close();
  assert.deepEqual(browser.problems, [], 'no console errors, CSP violations or page errors');
});

async function assertSelected(app, version) {
  const selected = app.locator('.tile[aria-selected="true"]');
  await app.locator(`.tile[aria-selected="true"][data-version="${version}"]`).waitFor();
  assert.equal(await selected.count(), 1);
  assert.match(await app.locator('#stage-label').innerText(), new RegExp(`v${version}`));
}

async function assertFact(app, name, pattern) {
  const text = await app.locator('.facts').innerText();
  assert.match(text, new RegExp(`${name}\\s+[^\\n]*${pattern.source}`));
}

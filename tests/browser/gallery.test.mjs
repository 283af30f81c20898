// /gallery over HTTP, in Debian's chromium: the session viewer in standalone mode against the
// real `imgmcp --http` with a bearer token. The page asks for the token (and never puts it in a
// URL), lists every session newest first, opens one, and shows versions that another client
// commits without a reload. The same Host/Origin checks guard /gallery as /mcp.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { launchBrowser, screenshotDir } from './support/browser.mjs';
import { startHttp, httpClient, call } from './support/imgmcp.mjs';

const TOKEN = 'gallery-test-token-7d3f1c';

let server;
let browser;
let other;  // "another client": the official SDK over Streamable HTTP, with the token

before(async () => {
  server = await startHttp({ token: TOKEN });
  browser = await launchBrowser();
  other = await httpClient(server.origin, TOKEN);
});

after(async () => {
  await other?.close().catch(() => {});
  await browser?.close();
  await server?.stop();
});

function get(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'GET',
      headers: { Host: `127.0.0.1:${server.port}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('GET /gallery serves the viewer page with a strict CSP; Host/Origin are checked as for /mcp', async () => {
  const ok = await get('/gallery');
  assert.equal(ok.status, 200);
  assert.match(ok.headers['content-type'], /^text\/html/);
  assert.match(ok.headers['content-security-policy'], /default-src 'none'/);
  assert.match(ok.headers['content-security-policy'], /connect-src 'self'/);
  assert.match(ok.headers['content-security-policy'], /frame-ancestors 'none'/);
  assert.match(ok.body, /imgmcp session viewer/);
  assert.equal((await get('/gallery', { Host: 'evil.example:80' })).status, 403);
  assert.equal((await get('/gallery', { Origin: 'http://evil.example' })).status, 403);
  // The page is public; the data is not: /mcp wants the token.
  const mcp = await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path: '/mcp', method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } },
    (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } }));
  });
  assert.equal(mcp, 401);
});

test('the gallery asks for the token, lists sessions newest first and follows new versions live', async () => {
  await call(other, 'generate_image', { session_id: 'meadow', prompt: 'a green meadow under a pale sky', inline: 'none' });
  await call(other, 'edit_image', { session_id: 'meadow', prompt: 'draw circle yellow at 700,120 size 160', inline: 'none' });
  await call(other, 'generate_image', { session_id: 'night-city', prompt: 'a night city with purple and orange lights', inline: 'none' });
  await call(other, 'edit_image', { session_id: 'night-city', prompt: 'draw square cyan at 200,500 size 180', inline: 'none' });
  await call(other, 'edit_image', { session_id: 'night-city', prompt: 'border white 12', inline: 'none' });

  const page = await browser.newPage();
  const requests = [];
  page.on('request', (r) => requests.push({ url: r.url(), auth: r.headers()['authorization'] }));
  await page.goto(`${server.origin}/gallery`);
  // Survives anything but a reload of the page.
  await page.evaluate(() => { window.loadedOnce = true; });

  // The token is asked for; a wrong one is refused.
  const dialog = page.getByRole('dialog', { name: 'Access token required' });
  await dialog.waitFor();
  await page.screenshot({ path: join(screenshotDir(), 'gallery-token.png') });
  await page.locator('#token-input').fill('not-the-token');
  await page.locator('#token-input').press('Enter');
  await page.getByText('That token was not accepted').waitFor();
  assert.equal(await page.locator('.card').count(), 0, 'nothing is shown without the token');
  await page.locator('#token-input').fill(TOKEN);
  const signedIn = requests.length;
  await page.getByRole('button', { name: 'Connect' }).click();
  await dialog.waitFor({ state: 'hidden' });

  // Newest first, each with its current thumbnail and version.
  const cards = page.locator('.card');
  await cards.nth(1).waitFor();
  assert.deepEqual(await cards.evaluateAll((cs) => cs.map((c) => c.dataset.session)), ['night-city', 'meadow']);
  assert.match(await cards.nth(0).innerText(), /v3/);
  await page.locator('.card img').nth(1).waitFor();
  await page.locator('#live[data-state="live"]').waitFor();
  await page.getByText('3 versions').waitFor();

  // Another client commits to the older session: it moves to the top with its new version.
  await call(other, 'edit_image', { session_id: 'meadow', prompt: 'draw square red at 100,700 size 140', inline: 'none' });
  await page.locator('.card[data-session="meadow"]').filter({ hasText: 'v3' }).waitFor();
  await page.waitForFunction(() => document.querySelector('.card')?.dataset.session === 'meadow');
  // A new session appears too.
  await call(other, 'generate_image', { session_id: 'desert-dawn', prompt: 'a desert at dawn, warm sand dunes', inline: 'none' });
  await page.locator('.card').first().and(page.locator('[data-session="desert-dawn"]')).waitFor();
  await page.locator('.card img').nth(2).waitFor();
  await page.screenshot({ path: join(screenshotDir(), 'gallery.png') });

  // Open a session: the viewer, fed by /mcp.
  await page.locator('.card[data-session="meadow"]').click();
  await page.locator('.tile[data-version="3"][aria-selected="true"]').waitFor();
  assert.equal(await page.locator('#timeline').getByRole('option').count(), 3);
  assert.match(await page.locator('#title-text').innerText(), /meadow/);

  // Another client edits it while it is open: the new version appears, without a reload.
  await call(other, 'edit_image', { session_id: 'meadow', prompt: 'draw circle white at 420,380 size 120', inline: 'none' });
  await page.locator('.tile[data-version="4"][aria-selected="true"]').waitFor();
  await page.locator('#stage-img[data-version="4"]').waitFor();
  assert.match(await page.locator('#detail-prompt').innerText(), /draw circle white at 420,380 size 120/);

  // Revert from the gallery goes through /mcp with the token.
  await page.locator('#timeline').getByRole('option').nth(0).click();
  await page.getByRole('button', { name: 'Revert to v1' }).click();
  await page.locator('.tile[data-version="5"][aria-selected="true"]').waitFor();
  const now = (await call(other, 'get_image', { session_id: 'meadow', inline: 'none' })).structuredContent;
  const v1 = (await call(other, 'get_image', { session_id: 'meadow', version: 1, inline: 'none', include_history: false })).structuredContent;
  assert.equal(now.version, 5);
  assert.equal(now.sha256, v1.sha256);

  // Back to the list.
  await page.getByRole('link', { name: 'All sessions' }).click();
  await page.locator('.card').first().and(page.locator('[data-session="meadow"]')).filter({ hasText: 'v5' }).waitFor();

  assert.equal(await page.evaluate(() => window.loadedOnce), true, 'no page reloads: everything above arrived live');
  for (const r of requests) assert.ok(!r.url.includes(TOKEN), `the token is never in a URL: ${r.url}`);
  const afterSignIn = requests.slice(signedIn).filter((r) => r.url.endsWith('/mcp'));
  assert.ok(afterSignIn.length > 5);
  assert.ok(afterSignIn.every((r) => r.auth === `Bearer ${TOKEN}`), 'every /mcp request after sign-in carries the token');

  // Asked once: a reload in the same tab does not ask again.
  await page.reload();
  await page.locator('.card').first().waitFor();
  assert.equal(await dialog.isVisible(), false);
  assert.deepEqual(browser.problems.filter((p) => !/401/.test(p)), [], 'no console errors, CSP violations or page errors');
  await page.close();
});

// A gallery link in Debian's chromium: imgmcp as an OAuth resource server (a real oidc-provider,
// tests/oauth/provider.mjs), get_image's gallery_url opened as it is — no access token in the
// browser. The page shows that one session read-only (no revert or edit, no way to the list),
// follows versions another client commits, and says so when a link no longer opens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launchBrowser, screenshotDir } from './support/browser.mjs';
import { httpClient, call } from './support/imgmcp.mjs';
import { startOAuthPair } from '../interop/support/oauth.mjs';

let pair;
let browser;
let alice;  // the session's owner: the official SDK over Streamable HTTP with her access token

before(async () => {
  pair = await startOAuthPair();
  browser = await launchBrowser();
  const token = await pair.provider.token('writer', pair.server.url, 'imgmcp:read imgmcp:write');
  alice = await httpClient(pair.server.origin, token);
});

after(async () => {
  await alice?.close().catch(() => {});
  await browser?.close();
  await pair?.stop();
});

test("get_image's gallery link opens its session in a browser, read-only and live", async () => {
  await call(alice, 'generate_image', { session_id: 'harbour', prompt: 'a harbour at dusk with boats', inline: 'none' });
  await call(alice, 'edit_image', { session_id: 'harbour', prompt: 'draw circle orange at 760,160 size 150', inline: 'none' });
  await call(alice, 'generate_image', { session_id: 'private', prompt: 'a private sketch', inline: 'none' });
  const link = (await call(alice, 'get_image', { session_id: 'harbour', inline: 'none' })).structuredContent.gallery_url;
  assert.match(link, new RegExp(`^${pair.server.origin}/gallery#/sessions/harbour\\?link=imgmcp-gallery\\.`));

  const page = await browser.newPage();
  const requests = [];
  page.on('request', (r) => requests.push({ url: r.url(), auth: r.headers()['authorization'] }));
  await page.goto(link);
  await page.evaluate(() => { window.loadedOnce = true; });

  // The session, with no token asked for, and nothing that writes or leads elsewhere.
  await page.locator('.tile[data-version="2"][aria-selected="true"]').waitFor();
  assert.equal(await page.locator('#timeline').getByRole('option').count(), 2);
  assert.match(await page.locator('#title-text').innerText(), /harbour/);
  assert.equal(await page.getByRole('dialog', { name: 'Access token required' }).isVisible(), false);
  assert.equal(await page.locator('#actions').isVisible(), false);
  assert.equal(await page.getByRole('link', { name: 'All sessions' }).isVisible(), false);
  await page.locator('#live[data-state="live"]').waitFor();
  await page.locator('#stage-img[data-version="2"]').waitFor();
  assert.equal(await page.locator('#edit-key').isVisible(), false);
  await page.screenshot({ path: join(screenshotDir(), 'gallery-link.png') });

  // Alice edits the session: the new version appears without a reload.
  await call(alice, 'edit_image', { session_id: 'harbour', prompt: 'draw square white at 300,620 size 120', inline: 'none' });
  await page.locator('.tile[data-version="3"][aria-selected="true"]').waitFor();
  assert.equal(await page.evaluate(() => window.loadedOnce), true, 'no reload: the version arrived live');

  // The link's token is the page's bearer token, and the fragment never reaches the server.
  const mcp = requests.filter((r) => r.url.endsWith('/mcp'));
  assert.ok(mcp.length > 2);
  const token = link.split('?link=')[1];
  assert.ok(mcp.every((r) => r.auth === `Bearer ${token}`));
  for (const r of requests) assert.ok(!r.url.includes(token), `the token is never sent in a URL: ${r.url}`);

  // The same token in the address of another of alice's sessions opens nothing of it.
  await page.goto(link.replace('#/sessions/harbour', '#/sessions/private'));
  await page.getByText('No such session').waitFor();  // as for a session nobody made
  assert.equal(await page.locator('.tile:visible').count(), 0);
  assert.doesNotMatch(await page.locator('body').innerText(), /a private sketch/);
  await page.close();
});

test('a link that no longer opens says how to get a new one', async () => {
  await call(alice, 'generate_image', { session_id: 'kite', prompt: 'a red kite in the wind', inline: 'none' });
  const link = (await call(alice, 'get_image', { session_id: 'kite', inline: 'none' })).structuredContent.gallery_url;
  const page = await browser.newPage();
  await page.goto(`${link.slice(0, -1)}${link.endsWith('0') ? '1' : '0'}`);  // an altered signature
  await page.getByText('This gallery link no longer opens the session').waitFor();
  assert.equal(await page.getByRole('dialog', { name: 'Access token required' }).isVisible(), false);
  assert.equal(await page.locator('.tile:visible').count(), 0);
  await page.screenshot({ path: join(screenshotDir(), 'gallery-link-refused.png') });
  await page.close();
});

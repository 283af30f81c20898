// The demo over HTTP, looked at by a person: `demo/run_demo.py --http` prints the /gallery URL;
// opening it shows the demo's session, and its 21 versions can be followed — each tile says its
// version, operation and prompt — without reading any JSON.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, screenshotDir } from './support/browser.mjs';
import { BIN } from './support/imgmcp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let demo;
let out;
let browser;
let stdout = '';

before(async () => {
  out = mkdtempSync(join(tmpdir(), 'imgmcp-demo-gallery-'));
  const env = { ...process.env };
  delete env.GEMINI_API_KEY;
  delete env.IMGMCP_AUTH_TOKEN;
  demo = spawn(process.env.PYTHON || 'python3',
    [join(root, 'demo', 'run_demo.py'), '--binary', BIN, '--out', out, '--http', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'inherit'], env });
  demo.stdout.on('data', (chunk) => { stdout += chunk; });
  browser = await launchBrowser();
});

after(async () => {
  if (demo && demo.exitCode === null) demo.kill('SIGKILL');
  await browser?.close();
  rmSync(out, { recursive: true, force: true });
});

function waitForOutput(pattern, ms = 120000) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = pattern.exec(stdout);
      if (m) { cleanup(); resolve(m); }
    };
    const timer = setTimeout(() => { cleanup(); reject(new Error(`demo never printed ${pattern}:\n${stdout}`)); }, ms);
    const onExit = (code) => { cleanup(); reject(new Error(`demo exited (${code}):\n${stdout}`)); };
    const cleanup = () => { clearTimeout(timer); demo.stdout.off('data', check); demo.off('exit', onExit); };
    demo.stdout.on('data', check);
    demo.on('exit', onExit);
    check();
  });
}

// Waits until every version tile the timeline shows has its thumbnail.
async function thumbnailsInView(page) {
  await page.waitForFunction(() => {
    const strip = document.getElementById('timeline').getBoundingClientRect();
    return [...document.querySelectorAll('.tile')]
      .filter((t) => { const r = t.getBoundingClientRect(); return r.right > strip.left && r.left < strip.right; })
      .every((t) => t.querySelector('img'));
  });
}

test('the demo prints its /gallery URL, and the gallery shows its 21 versions', async () => {
  const [, url] = await waitForOutput(/Gallery: (http:\/\/127\.0\.0\.1:\d+\/gallery)/);
  await waitForOutput(/Serving until Ctrl-C\./);
  const session = /session (demo-\d+), all 21 versions/.exec(stdout)[1];

  const page = await browser.newPage();
  await page.goto(url);
  const card = page.locator(`.card[data-session="${session}"]`);
  await card.filter({ hasText: '21 versions' }).waitFor();
  await card.locator('img').waitFor();
  await card.click();

  const tiles = page.locator('#timeline').getByRole('option');
  await tiles.nth(20).waitFor();
  assert.equal(await tiles.count(), 21);
  const labels = await tiles.evaluateAll((ts) => ts.map((t) => t.innerText.split('\n').map((s) => s.trim()).filter(Boolean)));
  assert.deepEqual(labels[0].slice(0, 2), ['v1', 'generate']);
  for (let n = 2; n <= 21; n++) {
    assert.equal(labels[n - 1][0], `v${n}`);
    assert.equal(labels[n - 1][1], 'edit');
    assert.match(labels[n - 1][2], /^draw square \w+ at \d+,\d+ size 96$/);
  }
  await page.locator('#stage-img[data-version="21"]').waitFor();
  await thumbnailsInView(page);
  await page.screenshot({ path: join(screenshotDir(), 'gallery-demo-session.png') });

  // Step back through the chain with the keyboard; the big view follows.
  await page.locator('.tile[aria-selected="true"]').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowLeft');
  await page.locator('.tile[data-version="18"][aria-selected="true"]').waitFor();
  await page.locator('#stage-img[data-version="18"]').waitFor();
  assert.match(await page.locator('#detail-prompt').innerText(), /^draw square \w+ at \d+,\d+ size 96$/);

  // Compare the first and the last version.
  await page.getByRole('button', { name: 'Compare' }).click();
  await page.locator('#cmp-a').selectOption('1');
  await page.locator('#cmp-b').selectOption('21');
  await page.locator('.cmp-b[src^="data:"]').waitFor();
  await page.locator('.cmp-a[src^="data:"]').waitFor();
  const box = await page.locator('#stage').boundingBox();
  await page.mouse.click(box.x + box.width * 0.55, box.y + box.height / 2);
  await thumbnailsInView(page);
  await page.screenshot({ path: join(screenshotDir(), 'gallery-demo-compare.png') });

  await page.getByRole('link', { name: 'All sessions' }).click();
  await card.locator('img').waitFor();
  await page.screenshot({ path: join(screenshotDir(), 'gallery-demo.png') });
  await page.close();
  assert.deepEqual(browser.problems, [], 'no console errors, CSP violations or page errors');

  // Ctrl-C ends the demo and its server.
  const exited = new Promise((resolve) => demo.once('exit', (code, signal) => resolve({ code, signal })));
  demo.kill('SIGINT');
  assert.deepEqual(await exited, { code: 0, signal: null });
});

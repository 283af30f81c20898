// Launches Debian's chromium (never a downloaded browser) through playwright-core, with a fresh
// profile, and collects what the page reports: console errors, Content Security Policy
// violations, uncaught exceptions.
import { chromium } from 'playwright-core';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';

const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// Where the tests save screenshots: IMGMCP_SCREENSHOT_DIR (ctest sets <build>/screenshots), else
// a fresh temporary directory per run.
let screenshots = null;
export function screenshotDir() {
  if (!screenshots) {
    screenshots = process.env.IMGMCP_SCREENSHOT_DIR || mkdtempSync(join(tmpdir(), 'imgmcp-screenshots-'));
    mkdirSync(screenshots, { recursive: true });
  }
  return screenshots;
}

export async function launchBrowser() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: scripts/setup installs Debian's chromium`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'imgmcp-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
    deviceScaleFactor: 1,
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  const problems = [];
  const watch = (page) => {
    page.on('console', (msg) => {
      const text = msg.text();
      if (msg.type() === 'error' || /Content Security Policy/i.test(text)) {
        problems.push(`console ${msg.type()}: ${text}`);
      }
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    problems,
    async newPage() {
      const page = context.pages().find((p) => p.url() === 'about:blank') ?? await context.newPage();
      return page;
    },
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

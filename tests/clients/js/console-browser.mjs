// Launches Debian's Chromium (CHROMIUM, default /usr/bin/chromium) headless
// through playwright-core for the console suites, with a fresh profile and
// the flags that keep it from reaching out (the CI machine has no network).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A browser page on a fresh profile; `errors` collects console errors,
 * page errors and requests to anywhere but `endpoint`, except console
 * messages matching `allowed`.
 */
export async function launch(endpoint, { allowed = [] } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'sluice-console-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 860 },
    colorScheme: 'light',
  });
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !allowed.some((re) => re.test(msg.text()))) errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  page.on('request', (req) => {
    // A blob: URL of the endpoint's origin is a download the page made itself.
    const url = req.url();
    if (!url.startsWith(endpoint) && !url.startsWith(`blob:${endpoint}`) && !url.startsWith('data:')) errors.push(`foreign request: ${url}`);
  });
  return {
    page,
    errors,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

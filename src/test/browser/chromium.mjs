// Headless Chromium for the dashboard's browser tests: Debian's binary (or CHROMIUM=<path>), the
// flags a machine without outside network needs (without the background-networking ones it keeps
// trying to reach the vendor's hosts), a fresh profile each run, and the page's uncaught errors
// collected and logged.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

/** A log whose lines say the seconds since it was made. */
export function stopwatchLog() {
  const started = Date.now();
  return (m) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${m}`);
}

/**
 * Launches Chromium on a profile of its own and opens a page with 30-s timeouts; `options` go to
 * the launch (a viewport, say). Returns {context, page, pageErrors, close}: pageErrors fills with
 * the page's uncaught errors and what its Content-Security-Policy refused (each logged too),
 * close() ends the browser and deletes the profile.
 */
export async function openPage(log, options = {}) {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskline-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath,
      headless: true,
      ...options,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  } catch (e) {
    fs.rmSync(profileDir, { recursive: true, force: true });
    throw e;
  }
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(30000);
  const pageErrors = [];
  page.on('pageerror', (e) => {
    pageErrors.push(e.message);
    log(`page error: ${e.message}`);
  });
  // What the Content-Security-Policy refused (an inline style or script, another origin): the
  // browser says so on the console only, and the page would quietly miss it.
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) {
      pageErrors.push(`refused by the policy: ${message.text()}`);
      log(`policy: ${message.text()}`);
    }
  });
  return {
    context,
    page,
    pageErrors,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

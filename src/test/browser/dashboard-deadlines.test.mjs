#!/usr/bin/env node
// Browser test of an expired task on the dashboard: the queue table counts it, the totals name it,
// and the recent tasks, filtered to expired, show it with its badge and why.
//
//   TL_EXPIRED=<the id of an expired task of queue default> node src/test/browser/dashboard-deadlines.test.mjs <base url>
//
// Needs Debian's /usr/bin/chromium (or CHROMIUM=<path>) and `npm ci --prefix src/test/browser`.
// Exit code 0 when every check passed.

import assert from 'node:assert/strict';
import { openPage, stopwatchLog } from './chromium.mjs';

const base = (process.argv[2] || '').replace(/\/+$/, '');
const expired = process.env.TL_EXPIRED || '';
if (!/^https?:\/\//.test(base) || !expired) {
  console.error('usage: TL_EXPIRED=<task id> node src/test/browser/dashboard-deadlines.test.mjs <base url>');
  process.exit(2);
}

const log = stopwatchLog();
let browser;
let failed = false;
try {
  browser = await openPage(log);
  const { page, pageErrors } = browser;
  await page.goto(`${base}/`);
  await page.waitForSelector('html[data-ready="true"]');

  const headers = await page.locator('#queue-table thead th').allTextContents();
  const column = headers.findIndex((h) => h.trim() === 'Expired');
  assert.ok(column > 0, `the queue table has an Expired column: ${headers}`);
  await page.waitForFunction((col) => {
    const row = document.querySelector('#queue-table tbody tr[data-queue="default"]');
    return row && row.cells[col].textContent.trim() === '1';
  }, column);
  await page.waitForFunction(() => /expired 1\b/.test(document.querySelector('#totals').textContent));
  log('ok   the queue table and the totals count the expired task');

  await page.selectOption('#recent-state', 'expired');
  // The filtered page replaces the unfiltered one: the task that holds the slot leaves it.
  await page.waitForFunction((id) => {
    const rows = document.querySelectorAll('#recent tbody tr[data-key]');
    return rows.length === 1 && rows[0].dataset.key === id;
  }, expired);
  const row = page.locator(`#recent tbody tr[data-key="${expired}"]`);
  assert.equal((await row.locator('.badge').textContent()).trim(), 'expired');
  assert.match(await row.locator('td.summary').textContent(), /not started by its deadline/);
  log('ok   the recent tasks, filtered to expired, show it with its badge and why');
  assert.deepEqual(pageErrors, [], 'no page errors');
} catch (e) {
  failed = true;
  log(`FAIL ${e && e.stack ? e.stack : e}`);
} finally {
  await browser?.close();
}
process.exit(failed ? 1 : 0);

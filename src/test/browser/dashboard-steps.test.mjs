#!/usr/bin/env node
// Browser test of a durable task's steps on the dashboard: its row in the recent tasks opens a
// timeline of the steps done, with the wait it is in, and the timeline follows the task live
// after the test runner sends the signal it waits for.
//
//   TL_TASK=<id of an order waiting for its payment> node src/test/browser/dashboard-steps.test.mjs <base url>
//
// Needs Debian's /usr/bin/chromium (or CHROMIUM=<path>) and `npm ci --prefix src/test/browser`.
// Exit code 0 when every check passed.

import assert from 'node:assert/strict';
import { openPage, stopwatchLog } from './chromium.mjs';

const base = (process.argv[2] || '').replace(/\/+$/, '');
const task = process.env.TL_TASK || '';
if (!/^https?:\/\//.test(base) || !task) {
  console.error('usage: TL_TASK=<task id> node src/test/browser/dashboard-steps.test.mjs <base url>');
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

  const button = page.locator(`#recent tbody tr[data-key="${task}"] button[data-steps]`);
  await button.waitFor();
  await button.click();
  const panel = page.locator('#task-steps');
  await panel.waitFor({ state: 'visible' });
  await page.waitForFunction(() => document.querySelectorAll('#task-steps li[data-step]').length === 1);
  assert.equal(await panel.locator('li[data-step]').first().getAttribute('data-step'), 'reserve');
  assert.match(await panel.locator('.wait').textContent(), /Waiting for the signal “payment”/);
  log('ok   the steps of a waiting order: reserve done, waiting for the payment');

  const answer = await fetch(`${base}/api/tasks/${task}/signals/payment`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ payload: { paid: true } }),
  });
  assert.equal(answer.status, 202);
  await page.waitForFunction(() => [...document.querySelectorAll('#task-steps li[data-step]')]
    .map((li) => li.dataset.step).join(',') === 'reserve,payment,charge,ship,email', null, { timeout: 20000 });
  assert.equal(await panel.locator('.wait').isHidden(), true, 'no wait once it ran on');
  log('ok   after the signal the timeline shows every step, in order, and no wait');

  await panel.locator('button', { hasText: 'Close' }).click();
  await panel.waitFor({ state: 'hidden' });
  assert.deepEqual(pageErrors, [], 'no page errors');
} catch (e) {
  failed = true;
  log(`FAIL ${e && e.stack ? e.stack : e}`);
} finally {
  await browser?.close();
}
process.exit(failed ? 1 : 0);

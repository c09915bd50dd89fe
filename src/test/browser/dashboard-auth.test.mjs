#!/usr/bin/env node
// Browser test of the dashboard on a node with API keys: it asks for a key, refuses a wrong one,
// and with a tenant's key shows that tenant's tasks and no other's, and no schedules.
//
//   TL_KEY=<a tenant's key> TL_OWN=<ids,...> TL_OTHER=<ids,...> node src/test/browser/dashboard-auth.test.mjs <base url>
//
// TL_OWN are tasks of the key's tenant, TL_OTHER another tenant's. Needs Debian's /usr/bin/chromium
// (or CHROMIUM=<path>) and `npm ci --prefix src/test/browser`. Exit code 0 when every check passed.

import assert from 'node:assert/strict';
import { openPage, stopwatchLog } from './chromium.mjs';

const base = (process.argv[2] || '').replace(/\/+$/, '');
const key = process.env.TL_KEY || '';
const own = (process.env.TL_OWN || '').split(',').filter(Boolean);
const other = (process.env.TL_OTHER || '').split(',').filter(Boolean);
if (!/^https?:\/\//.test(base) || !key || !own.length || !other.length) {
  console.error('usage: TL_KEY=… TL_OWN=… TL_OTHER=… node src/test/browser/dashboard-auth.test.mjs <base url>');
  process.exit(2);
}

const log = stopwatchLog();
let browser;
let failed = false;
try {
  browser = await openPage(log);
  const { page, context } = browser;
  await page.goto(`${base}/`);

  await page.locator('#signin').waitFor({ state: 'visible' });
  log('ok   the page asks for a key');
  await page.fill('#signin-key', 'tl_not-a-key');
  await page.click('#signin button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#signin-error').textContent.includes('not known'));
  log('ok   a wrong key is refused');

  await page.fill('#signin-key', key);
  await page.click('#signin button[type=submit]');
  await page.locator('#signin').waitFor({ state: 'hidden' });
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'taskline_session');
  assert.ok(session && session.httpOnly && session.sameSite === 'Strict', JSON.stringify(cookies));
  assert.equal(await page.evaluate(() => document.cookie.includes('taskline_session')), false,
    'the page cannot read its session');
  log('ok   signed in: an HttpOnly, SameSite=Strict session the page cannot read');

  await page.waitForFunction((ids) => ids.every((id) => document.querySelector(`#recent tbody tr[data-key="${id}"]`)),
    own);
  const shown = await page.locator('#recent tbody tr[data-key]').evaluateAll((rows) => rows.map((r) => r.dataset.key));
  for (const id of other) {
    assert.ok(!shown.includes(id), `another tenant's task ${id} is not shown`);
  }
  log(`ok   recent tasks: the tenant's ${own.length}, none of the other's ${other.length}`);

  await page.waitForFunction((n) => {
    const row = Array.from(document.querySelectorAll('#queue-table tbody tr'))
      .find((r) => r.textContent.trim().startsWith('default'));
    // The Accepted column: the tenant's own tasks, not the node's.
    return row && row.cells[6].textContent.trim() === String(n);
  }, own.length);
  log('ok   the queue table counts the tenant\'s tasks only');

  // Schedules belong to no tenant: the section says this key does not see them, and no table.
  await page.locator('#schedules[data-forbidden="true"] .status').waitFor({ state: 'visible' });
  assert.match(await page.locator('#schedules .status').textContent(), /not shown to this key/);
  assert.equal(await page.locator('#schedule-table').isVisible(), false);
  log('ok   the schedules section tells a tenant\'s key it does not see schedules');

  // The registry is an admin's: a tenant's key is told so, and sees no table.
  await page.locator('#nodes[data-forbidden="true"] .status').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#node-table').isVisible(), false);
  log('ok   the nodes section tells a tenant\'s key it does not see the nodes');
} catch (e) {
  failed = true;
  log(`FAIL ${e && e.stack ? e.stack : e}`);
} finally {
  await browser?.close();
}
process.exit(failed ? 1 : 0);

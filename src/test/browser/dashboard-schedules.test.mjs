#!/usr/bin/env node
// Browser test of the schedules on the dashboard: the empty state, a schedule made through the API
// listed with its cadence and next fire time, a tick's result (fired, its task linked, its state)
// once the node has decided it, Pause and Resume from its row (the API agreeing), and a tick fired
// after the resume.
//
//   node src/test/browser/dashboard-schedules.test.mjs <base url>
//
// The node's clock is the test's: each tick is asked of the JUnit side, which moves the clock and
// runs the scheduler's pass, by a line `STEP tick` on stdout; it answers on stdin with the id of the
// task the tick made (or `FAIL …`). Needs Debian's /usr/bin/chromium (or CHROMIUM=<path>) and
// `npm ci --prefix src/test/browser`. Writes a screenshot of the section to $SCREENSHOT (default
// target/dashboard-schedules.png). Exit code 0 when every check passed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { openPage, stopwatchLog } from './chromium.mjs';

const base = (process.argv[2] || '').replace(/\/+$/, '');
const name = process.env.TL_SCHEDULE || 'heartbeat';
if (!/^https?:\/\//.test(base)) {
  console.error('usage: node src/test/browser/dashboard-schedules.test.mjs <base url>');
  process.exit(2);
}
const screenshotPath = path.resolve(process.env.SCREENSHOT || 'target/dashboard-schedules.png');

const log = stopwatchLog();

const input = readline.createInterface({ input: process.stdin });
const answers = input[Symbol.asyncIterator]();

/** Asks the JUnit side to do `what` (move the clock, run a pass) and waits for its answer. */
async function step(what) {
  console.log(`STEP ${what}`);
  const { value, done } = await answers.next();
  if (done) {
    throw new Error(`no answer to STEP ${what}: stdin closed`);
  }
  if (value.startsWith('FAIL')) {
    throw new Error(`STEP ${what}: ${value}`);
  }
  return value.trim();
}

async function http(method, pathname, body) {
  const response = await fetch(base + pathname, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : null, headers: response.headers };
}

let browser;
let failed = false;
try {
  browser = await openPage(log, { viewport: { width: 1440, height: 900 } });
  const { page, pageErrors } = browser;
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') {
      log(`console ${m.type()}: ${m.text()}`);
    }
  });
  await page.goto(`${base}/`);
  await page.waitForSelector('html[data-ready="true"]');

  await page.locator('#schedules td.empty').waitFor();
  assert.match(await page.locator('#schedules td.empty').textContent(), /No schedules/);
  log('ok   with no schedule the section says so');

  const made = await http('POST', '/api/schedules', {
    name, every: 'PT1S', task: { type: 'sleep', payload: { ms: 0 } },
  });
  assert.equal(made.status, 201, JSON.stringify(made.json));
  const first = made.json.nextFireAt;
  assert.ok(first, 'the API names the next fire time');
  const row = page.locator(`#schedule-table tbody tr[data-schedule="${name}"]`);
  await row.waitFor();
  await page.locator('#schedules td.empty').waitFor({ state: 'detached' });
  assert.equal((await row.locator('th').textContent()).trim(), name);
  assert.match(await row.locator('td[data-col=cadence]').textContent(), /every 1 s\s+UTC/);
  assert.equal(await row.locator('td[data-col=next] time').getAttribute('datetime'), first);
  assert.match(await row.locator('td[data-col=last]').textContent(), /no tick yet/);
  assert.equal((await row.locator('td[data-col=skipped]').textContent()).trim(), '0');
  assert.equal((await row.locator('td[data-col=error]').textContent()).trim(), '');
  assert.equal((await row.locator('td[data-col=state] .badge').textContent()).trim(), 'running');
  log(`ok   the schedule is listed: every 1 s in UTC, next fire ${first}, no tick yet, running`);

  // The first tick, decided by the node on its moved clock; the page's own refresh shows it.
  const firstTask = await step('tick');
  await page.waitForFunction(({ name, id }) => {
    const cell = document.querySelector(`#schedule-table tr[data-schedule="${name}"] td[data-col=last]`);
    return cell && cell.dataset.outcome === 'fired'
      && cell.querySelector(`a[href="api/tasks/${id}"]`)
      && cell.querySelector('.badge[data-state="succeeded"]');
  }, { name, id: firstTask });
  const after = (await http('GET', `/api/schedules/${name}`)).json;
  assert.equal(after.lastTick.taskId, firstTask);
  await page.waitForFunction(({ name, next }) => {
    const time = document.querySelector(`#schedule-table tr[data-schedule="${name}"] td[data-col=next] time`);
    return time && time.getAttribute('datetime') === next;
  }, { name, next: after.nextFireAt });
  assert.notEqual(after.nextFireAt, first, 'the next fire time moved on');
  assert.match(await row.locator('td[data-col=last]').textContent(), /fired.*succeeded/s);
  log(`ok   the tick shows as fired, its task ${firstTask.slice(0, 8)}… linked and succeeded; next fire ${after.nextFireAt}`);

  // The task it made, in the recent tasks, says which schedule and tick.
  const recentRow = page.locator(`#recent tbody tr[data-key="${firstTask}"]`);
  await recentRow.waitFor();
  assert.equal(await recentRow.getAttribute('data-schedule'), name);
  assert.equal(await recentRow.getAttribute('data-scheduled-for'), after.lastTick.tickAt);
  assert.match(await recentRow.locator('td.summary').textContent(), new RegExp(`schedule “${name}”, tick`));
  log('ok   the recent tasks name the schedule and tick of its task');

  const toggle = row.locator('td[data-col=state] button.pause-toggle');
  assert.equal((await toggle.textContent()).trim(), 'Pause');
  await toggle.click();
  await row.locator('td[data-col=state] .badge[data-state="paused"]').waitFor();
  assert.equal((await toggle.textContent()).trim(), 'Resume');
  assert.equal(await row.getAttribute('data-paused'), 'true');
  await page.waitForFunction((name) => {
    const cell = document.querySelector(`#schedule-table tr[data-schedule="${name}"] td[data-col=next]`);
    return cell && !cell.querySelector('time') && cell.textContent.trim() === 'paused';
  }, name);
  const paused = (await http('GET', `/api/schedules/${name}`)).json;
  assert.equal(paused.paused, true, 'the server has it paused');
  assert.equal(paused.nextFireAt, null);
  log('ok   Pause: shown paused with no next fire time, and the API says paused');

  await toggle.click();
  await row.locator('td[data-col=state] .badge[data-state="running"]').waitFor();
  assert.equal((await toggle.textContent()).trim(), 'Pause');
  const resumed = (await http('GET', `/api/schedules/${name}`)).json;
  assert.equal(resumed.paused, false, 'the server has it running');
  await page.waitForFunction(({ name, next }) => {
    const time = document.querySelector(`#schedule-table tr[data-schedule="${name}"] td[data-col=next] time`);
    return time && time.getAttribute('datetime') === next;
  }, { name, next: resumed.nextFireAt });
  log(`ok   Resume: shown running again, next fire ${resumed.nextFireAt}, and the API says running`);

  // Running again: the next tick fires, and the row shows its task.
  const secondTask = await step('tick');
  assert.notEqual(secondTask, firstTask);
  await page.waitForFunction(({ name, id }) => {
    const cell = document.querySelector(`#schedule-table tr[data-schedule="${name}"] td[data-col=last]`);
    return cell && cell.dataset.outcome === 'fired' && cell.querySelector(`a[href="api/tasks/${id}"]`)
      && cell.querySelector('.badge[data-state="succeeded"]');
  }, { name, id: secondTask });
  const last = (await http('GET', `/api/schedules/${name}`)).json;
  assert.equal(last.lastTick.tickAt, resumed.nextFireAt, 'the tick after the resume fired');
  assert.equal(last.skippedTicks, 0);
  log(`ok   after the resume the tick of ${last.lastTick.tickAt} fired and shows`);

  fs.mkdirSync(path.dirname(screenshotPath), { recursive: true });
  await page.locator('#schedules').screenshot({ path: screenshotPath });
  log(`screenshot of the section: ${screenshotPath}`);
  assert.deepEqual(pageErrors, [], 'no page errors');
} catch (e) {
  failed = true;
  log(`FAIL ${e && e.stack ? e.stack : e}`);
} finally {
  input.close();
  await browser?.close();
}
process.exit(failed ? 1 : 0);

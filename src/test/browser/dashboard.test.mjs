#!/usr/bin/env node
// Browser test of the Taskline dashboard, and of resuming an event stream with Last-Event-ID.
//
//   node src/test/browser/dashboard.test.mjs http://127.0.0.1:8080
//
// Needs a Taskline node with the queues `default` and `matching` (slots 2, capacity 100), Debian's
// /usr/bin/chromium (or CHROMIUM=<path>) and `npm ci --prefix src/test/browser` (playwright-core). Writes a screenshot
// of the dashboard to $SCREENSHOT (default target/dashboard.png). ONLY=ui or ONLY=sse runs one
// scenario. Exit code 0 when every check passed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { executablePath, openPage, stopwatchLog } from './chromium.mjs';
import { readEvents } from './sse.mjs';

const base = (process.argv[2] || '').replace(/\/+$/, '');
if (!/^https?:\/\//.test(base)) {
  console.error('usage: node src/test/browser/dashboard.test.mjs <base url, e.g. http://127.0.0.1:8080>');
  process.exit(2);
}
const screenshotPath = path.resolve(process.env.SCREENSHOT || 'target/dashboard.png');
const only = process.env.ONLY || '';

let passed = 0;
let failed = 0;
const log = stopwatchLog();

async function check(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    throw e;
  }
}

async function http(method, pathname, body) {
  const response = await fetch(base + pathname, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: response.status, json, text, headers: response.headers };
}

async function until(what, fn, timeoutMs = 30000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) {
      return last;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

// -----------------------------------------------------------------------------------------------
// Scenario 1: the dashboard in a real browser.

async function dashboardScenario() {
  const browser = await openPage(log, { viewport: { width: 1440, height: 900 } });
  const { page, pageErrors } = browser;
  try {
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') {
        log(`console ${m.type()}: ${m.text()}`);
      }
    });

    await check('the dashboard loads at / with its modules and styles', async () => {
      const response = await page.goto(`${base}/`);
      assert.equal(response.status(), 200, 'GET / must answer 200');
      assert.match(response.headers()['content-type'] || '', /text\/html/);
      await page.waitForSelector('html[data-ready="true"]');
      assert.equal(await page.title(), 'Taskline dashboard');
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      assert.notEqual(background, 'rgba(0, 0, 0, 0)', 'style.css must be applied');
    });

    await check('the queue table shows default and matching with slots and capacity', async () => {
      const row = (name) => page.locator(`#queue-table tbody tr[data-queue="${name}"]`);
      await row('default').waitFor();
      await row('matching').waitFor();
      const cells = async (name) => row(name).locator('th, td').evaluateAll((els) => els.map((e) => e.firstChild ? e.firstChild.textContent.trim() : ''));
      const matching = await cells('matching');
      assert.equal(matching[0], 'matching');
      assert.equal(matching[4], '2', 'matching has 2 slots');
      assert.equal(matching[5].replace(/\D/g, ''), '100', 'matching has capacity 100');
      const def = await cells('default');
      assert.equal(def[4], '4', 'default has 4 slots');
      const headers = await page.locator('#queue-table thead th').allTextContents();
      for (const wanted of ['Waiting', 'Scheduled', 'Running', 'Slots', 'Capacity', 'Expired']) {
        assert.ok(headers.some((h) => h.trim() === wanted), `queue table has a ${wanted} column`);
      }
    });

    await check('the nodes table lists this node, live, with its version, address and upkeep lease', async () => {
      const nodes = (await http('GET', '/api/nodes')).json;
      const self = nodes.nodes.find((n) => n.self);
      const row = page.locator(`#node-table tbody tr[data-key="${self.id}"]`);
      await row.waitFor();
      assert.equal(await row.getAttribute('data-live'), 'true');
      const text = await row.textContent();
      assert.match(text, /this/);
      assert.match(text, /live/);
      assert.ok(text.includes(self.version), `the row shows the version ${self.version}`);
      assert.ok(text.includes(self.address), `the row shows the address ${self.address}`);
      assert.match(text, /upkeep/);
    });

    await check('a queue is paused and resumed from its row, and a task waits out the pause', async () => {
      const row = page.locator('#queue-table tbody tr[data-queue="matching"]');
      const badge = row.locator('td.flow .badge');
      const toggle = row.locator('td.flow button.pause-toggle');
      assert.equal((await badge.textContent()).trim(), 'running');
      await toggle.click();
      await row.locator('td.flow .badge[data-state="paused"]').waitFor();
      assert.equal((await toggle.textContent()).trim(), 'Resume');
      const queues = await http('GET', '/api/queues');
      const matching = queues.json.queues.find((q) => q.name === 'matching');
      assert.equal(matching.paused, true, 'the server has it paused');
      const task = await http('POST', '/api/tasks', { type: 'sleep', queue: 'matching', payload: { ms: 0 } });
      assert.equal(task.status, 202);
      // The page's own refresh shows it waiting, and still paused.
      await until('the paused queue shows its task waiting', async () =>
        (await row.locator('td').nth(0).textContent()).trim() === '1'
        && (await badge.textContent()).trim() === 'paused');
      assert.equal((await http('GET', `/api/tasks/${task.json.id}`)).json.state, 'pending');
      await toggle.click();
      await row.locator('td.flow .badge[data-state="running"]').waitFor();
      assert.equal((await toggle.textContent()).trim(), 'Pause');
      await until('the task runs once resumed', async () =>
        (await http('GET', `/api/tasks/${task.json.id}`)).json.state === 'succeeded');
    });

    await check('the chart samples every second', async () => {
      await page.waitForFunction(() => document.querySelector('#legend-backlog').textContent !== '–');
      const size = await page.locator('#throughput-chart').evaluate((c) => [c.width, c.height]);
      assert.ok(size[0] > 100 && size[1] > 100, `canvas is drawn at a real size, got ${size}`);
    });

    // Records what the page shows while the batch runs: every progress value and state of each row.
    await page.evaluate(() => {
      const seen = { progress: {}, states: {}, live: [] };
      window.__seen = seen;
      const note = (el) => {
        const row = el.closest && el.closest('.match-row');
        if (row) {
          const id = row.dataset.taskId;
          const bar = row.querySelector('.progress');
          const values = (seen.progress[id] ||= []);
          if (values[values.length - 1] !== Number(bar.dataset.progress)) {
            values.push(Number(bar.dataset.progress));
          }
          const states = (seen.states[id] ||= []);
          if (states[states.length - 1] !== row.dataset.state) {
            states.push(row.dataset.state);
          }
        }
        const batch = el.closest && el.closest('.batch');
        if (batch && seen.live[seen.live.length - 1] !== batch.dataset.live) {
          seen.live.push(batch.dataset.live);
        }
      };
      new MutationObserver((mutations) => {
        for (const m of mutations) {
          if (m.type === 'attributes') {
            note(m.target);
          } else {
            for (const node of m.addedNodes) {
              if (node.nodeType === 1) {
                node.querySelectorAll('.match-row').forEach(note);
              }
            }
          }
        }
      }).observe(document.querySelector('#batches'), {
        subtree: true, childList: true, attributes: true, attributeFilter: ['data-progress', 'data-state', 'data-live'],
      });
    });

    let taskIds = [];
    await check('choosing a company and five projects and submitting them makes one batch', async () => {
      await page.selectOption('#company', 'it');
      await page.waitForFunction(() => document.querySelector('#company-qualifications').textContent.includes('ISO 27001'));
      const boxes = page.locator('#project-list input[type=checkbox]');
      assert.ok(await boxes.count() >= 10, 'at least ten sample projects');
      for (const i of [2, 3, 8, 10, 1]) {
        await boxes.nth(i).check();
      }
      assert.match(await page.locator('#project-count').textContent(), /^5 of at most 10/);
      await page.fill('#simulate-ms', '2000');
      const submit = page.locator('#match-form button[type=submit]');
      assert.equal((await submit.textContent()).trim(), 'Match 5 projects');
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/batches') && r.request().method() === 'POST'),
        submit.click(),
      ]);
      assert.equal(response.status(), 202, `POST /api/batches answered ${response.status()}`);
      const sent = JSON.parse(response.request().postData());
      assert.equal(sent.tasks.length, 5);
      for (const task of sent.tasks) {
        assert.equal(task.type, 'qualification-match');
        assert.equal(task.queue, 'matching');
        assert.equal(task.payload.company.name, 'Brightwave IT Consulting');
        assert.match(task.payload.asOf, /^\d{4}-\d{2}-\d{2}$/);
        assert.equal(task.payload.simulateMs, 2000);
        assert.ok(task.payload.project.requirements.length >= 2);
      }
      const answer = await response.json();
      taskIds = answer.tasks.map((t) => t.id);
      await page.locator('.batch .match-row').nth(4).waitFor();
      assert.equal(await page.locator('.batch').first().locator('.match-row').count(), 5);
    });

    await check('every match reaches succeeded with a score, with progress shown on the way', async () => {
      await page.waitForFunction((ids) => ids.every((id) => {
        const row = document.querySelector(`.match-row[data-task-id="${id}"]`);
        return row && row.dataset.state === 'succeeded' && row.dataset.score !== undefined;
      }), taskIds, { timeout: 60000, polling: 100 });
      const seen = await page.evaluate(() => window.__seen);
      const between = Object.values(seen.progress).flat().filter((p) => p >= 1 && p <= 99);
      log(`progress values shown: ${JSON.stringify(seen.progress)}`);
      log(`states shown: ${JSON.stringify(seen.states)}; stream: ${JSON.stringify(seen.live)}`);
      assert.ok(between.length > 0, 'at least one progress value between 1 and 99 was shown');
      for (const id of taskIds) {
        const values = seen.progress[id] || [];
        for (let i = 1; i < values.length; i++) {
          if (values[i] < values[i - 1]) {
            log(`warning: the progress of ${id} went back from ${values[i - 1]} to ${values[i]}`);
          }
        }
        assert.ok((seen.states[id] || []).includes('running') || values.some((p) => p > 0 && p < 100),
          `task ${id} was seen running`);
      }
      assert.ok(seen.live.includes('sse'), `the batch was followed over the event stream, modes: ${seen.live}`);
      assert.ok(!seen.live.includes('polling'), 'the page did not have to fall back to polling');
      assert.equal(seen.live[seen.live.length - 1], 'done', 'the stream ended with `end` and was closed');
    });

    await check('scores, mandatory flags and breakdowns match what the server computed', async () => {
      for (const id of taskIds) {
        const task = (await http('GET', `/api/tasks/${id}`)).json;
        assert.equal(task.state, 'succeeded');
        const row = page.locator(`.match-row[data-task-id="${id}"]`);
        assert.equal(await row.getAttribute('data-score'), String(task.result.score));
        const shown = Number((await row.locator('.score-value').textContent()).trim());
        assert.ok(Number.isInteger(shown) && shown >= 0 && shown <= 100, `score ${shown} in 0..100`);
        assert.equal(shown, task.result.score);
        assert.equal(await row.getAttribute('data-mandatory-met'), String(task.result.mandatoryMet));
        assert.equal(await row.locator('.progress').getAttribute('data-progress'), '100');
        assert.equal(await row.locator('details.breakdown tbody tr').count(), task.result.breakdown.length);
        if (id === taskIds[0]) {
          await row.locator('details.breakdown summary').click();
          await row.locator('details.breakdown tbody tr').first().waitFor({ state: 'visible' });
        }
      }
    });

    await check('the recent tasks list shows the five matches', async () => {
      await page.waitForFunction((ids) => ids.every((id) => {
        const row = document.querySelector(`#recent tbody tr[data-key="${id}"]`);
        return row && row.dataset.state === 'succeeded';
      }), taskIds, { timeout: 15000 });
      const text = await page.locator(`#recent tbody tr[data-key="${taskIds[0]}"]`).textContent();
      assert.match(text, /Brightwave IT Consulting → /);
      assert.match(text, /score \d+/);
    });

    await check('recent tasks are paged 25 at a time with older/newer', async () => {
      const batch = await http('POST', '/api/batches', {
        tasks: Array.from({ length: 30 }, () => ({ type: 'sleep', queue: 'default', payload: { ms: 0 } })),
      });
      assert.equal(batch.status, 202, batch.text);
      const newest = batch.json.tasks.map((t) => t.id);
      await page.waitForFunction((ids) => {
        const rows = Array.from(document.querySelectorAll('#recent tbody tr[data-key]'));
        return rows.length === 25 && rows.every((r) => ids.includes(r.dataset.key))
          && !document.querySelector('#recent [data-page=next]').disabled;
      }, newest, { timeout: 15000 });
      const page1 = await page.locator('#recent tbody tr[data-key]').evaluateAll((rows) => rows.map((r) => r.dataset.key));
      assert.ok(page1.every((id) => newest.includes(id)), 'page 1 holds the newest tasks');
      await page.click('#recent [data-page=next]');
      await page.waitForFunction((first) => !document.querySelector(`#recent tbody tr[data-key="${first}"]`)
        && document.querySelectorAll('#recent tbody tr[data-key]').length > 0, page1[0]);
      const page2 = await page.locator('#recent tbody tr[data-key]').evaluateAll((rows) => rows.map((r) => r.dataset.key));
      assert.ok(page2.length <= 25);
      assert.ok(page2.every((id) => !page1.includes(id)), 'page 2 holds other tasks than page 1');
      assert.ok(taskIds.every((id) => page2.includes(id)), 'the matches moved to page 2');
      assert.match(await page.locator('#recent .page-label').textContent(), /page 2/);
      assert.ok(await page.locator('tr[data-key]').count() <= 25 + 25 + 5, 'no more than a page per table in the DOM');
      await page.click('#recent [data-page=prev]');
      await page.waitForFunction((first) => document.querySelector(`#recent tbody tr[data-key="${first}"]`), page1[0]);
      assert.match(await page.locator('#recent .page-label').textContent(), /page 1/);
    });

    let failedId;
    await check('a dead letter is listed with its error and the Retry button sends it back', async () => {
      const submitted = await http('POST', '/api/tasks', { type: 'sleep', queue: 'default', maxAttempts: 1, payload: { ms: 10, failTimes: 100 } });
      assert.equal(submitted.status, 202, submitted.text);
      failedId = submitted.json.id;
      const row = page.locator(`#dead tbody tr[data-key="${failedId}"]`);
      await row.waitFor({ timeout: 15000 });
      assert.match(await row.locator('td.error-text').textContent(), /planned failure 1 of 100/);
      const before = (await http('GET', `/api/tasks/${failedId}`)).json.history.length;
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith(`/api/tasks/${failedId}/retry`)),
        row.locator('button', { hasText: 'Retry' }).click(),
      ]);
      assert.equal(response.status(), 202);
      await page.locator('.notice', { hasText: 'is pending again' }).waitFor();
      await until('the retried task to run again', async () => {
        const task = (await http('GET', `/api/tasks/${failedId}`)).json;
        return task.history.length > before && task.state === 'failed' ? task : null;
      });
    });

    await check('"retry all on this queue" retries the queue\'s dead letters', async () => {
      const more = [];
      for (let i = 0; i < 2; i++) {
        const r = await http('POST', '/api/tasks', { type: 'sleep', queue: 'default', maxAttempts: 1, payload: { ms: 10, failTimes: 100 } });
        assert.equal(r.status, 202, r.text);
        more.push(r.json.id);
      }
      for (const id of more) {
        await until(`task ${id} to fail`, async () => (await http('GET', `/api/tasks/${id}`)).json.state === 'failed');
      }
      await page.selectOption('#dead-queue', 'default');
      await page.waitForFunction((ids) => ids.every((id) => document.querySelector(`#dead tbody tr[data-key="${id}"]`)), more);
      assert.equal((await page.locator('#retry-all').textContent()).trim(), 'Retry up to 100 on “default”');
      const histories = {};
      for (const id of more) {
        histories[id] = (await http('GET', `/api/tasks/${id}`)).json.history.length;
      }
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/tasks/retry')),
        page.click('#retry-all'),
      ]);
      assert.equal(response.status(), 202);
      assert.deepEqual(JSON.parse(response.request().postData()), { queue: 'default', limit: 100 });
      const answer = await response.json();
      assert.ok(answer.retried >= 2, `retried ${answer.retried}`);
      await page.locator('.notice', { hasText: `${answer.retried} dead letters on “default” pending again` }).waitFor();
      for (const id of more) {
        await until(`task ${id} to run again`, async () => {
          const task = (await http('GET', `/api/tasks/${id}`)).json;
          return task.history.length > histories[id] && task.state === 'failed';
        });
      }
      // Let the list settle on the failed-again tasks for the screenshot.
      await page.waitForFunction((ids) => ids.every((id) => document.querySelector(`#dead tbody tr[data-key="${id}"]`)), [...more, failedId], { timeout: 15000 });
    });

    await check(`a screenshot of the dashboard is written to ${screenshotPath}`, async () => {
      fs.mkdirSync(path.dirname(screenshotPath), { recursive: true });
      await page.evaluate(() => document.querySelectorAll('.notice').forEach((n) => n.remove()));
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForTimeout(300); // let the progress transitions and the chart's frame finish
      await page.screenshot({ path: screenshotPath, fullPage: true });
      assert.ok(fs.statSync(screenshotPath).size > 10000);
    });

    await check('when the stream is refused (503) the page follows the batch by polling', async () => {
      await page.route('**/api/batches/*/events', (route) => route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ title: 'Service unavailable', status: 503, detail: 'too many open streams' }),
      }));
      try {
        const boxes = page.locator('#project-list input[type=checkbox]');
        for (const i of [1, 3, 8, 10]) {
          await boxes.nth(i).uncheck();
        }
        await page.fill('#simulate-ms', '300');
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith('/api/batches') && r.request().method() === 'POST'),
          page.click('#match-form button[type=submit]'),
        ]);
        assert.equal(response.status(), 202);
        const id = (await response.json()).tasks[0].id;
        const batch = page.locator('.batch').first();
        await page.waitForFunction((taskId) => {
          const row = document.querySelector(`.match-row[data-task-id="${taskId}"]`);
          return row && row.dataset.state === 'succeeded' && row.dataset.score !== undefined
            && row.closest('.batch').dataset.live === 'done';
        }, id, { timeout: 30000 });
        assert.match(await batch.locator('.live').textContent(), /finished/);
        const seen = await page.evaluate(() => window.__seen.live);
        assert.ok(seen.includes('polling'), `the page fell back to polling, modes: ${seen}`);
      } finally {
        await page.unroute('**/api/batches/*/events');
      }
    });

    await check('a full queue answers 429 and the page shows the detail', async () => {
      const batchViews = await page.locator('.batch').count();
      const boxes = page.locator('#project-list input[type=checkbox]');
      for (const i of [1, 3, 8, 10]) {
        await boxes.nth(i).check();
      }
      const blockers = await http('POST', '/api/batches', {
        tasks: Array.from({ length: 100 }, () => ({ type: 'sleep', queue: 'matching', payload: { ms: 15000 } })),
      });
      assert.equal(blockers.status, 202, blockers.text);
      try {
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith('/api/batches') && r.request().method() === 'POST'),
          page.click('#match-form button[type=submit]'),
        ]);
        assert.equal(response.status(), 429);
        const error = page.locator('#match-error');
        await error.waitFor({ state: 'visible' });
        const text = await error.textContent();
        const detail = (await response.json()).detail;
        assert.ok(text.includes(detail), `the form shows the problem's detail "${detail}", shows "${text}"`);
        assert.match(text, /Try again in \d+ s/);
        assert.equal(await page.locator('.batch').count(), batchViews, 'no batch view for a refused batch');
      } finally {
        await http('POST', `/api/batches/${blockers.json.batchId}/cancel`);
      }
    });

    assert.deepEqual(pageErrors, [], 'no uncaught errors in the page');
  } finally {
    await browser.close();
  }
}

// -----------------------------------------------------------------------------------------------
// Scenario 2: a stream cut mid-way and resumed with Last-Event-ID has no gap and no duplicate.

async function resumeScenario() {
  const batch = await http('POST', '/api/batches', {
    tasks: Array.from({ length: 3 }, () => ({ type: 'sleep', queue: 'default', payload: { ms: 1500, steps: 5 } })),
  });
  assert.equal(batch.status, 202, batch.text);
  const batchId = batch.json.batchId;
  const ids = batch.json.tasks.map((t) => t.id);
  const url = `${base}/api/batches/${batchId}/events`;
  const connections = [];

  await check('the stream answers text/event-stream and starts with a snapshot; cut after the first journaled event', async () => {
    const first = await readEvents(url, { onEvent: (e) => e.event === 'state' && e.id !== undefined });
    assert.equal(first.status, 200, `GET ${url} answered ${first.status}: ${first.body || ''}`);
    assert.match(first.headers.get('content-type') || '', /^text\/event-stream/);
    assert.equal(first.events[0].event, 'snapshot', 'the first event is the snapshot');
    assert.equal(first.events[0].id, undefined, 'the snapshot carries no id');
    const snapshot = JSON.parse(first.events[0].data);
    assert.deepEqual(snapshot.tasks.map((t) => t.id).sort(), [...ids].sort());
    assert.ok(first.stoppedEarly, 'a state event with an id came before the end');
    connections.push(first);
    log(`connection 1: ${first.events.length} events, cut after id ${first.lastEventId}`);
  });

  await check('resumed with Last-Event-ID and cut again after the first result', async () => {
    // Cut mid-way: after the first task's result, while the others may still run. (Not between a
    // terminal state event and its result event: they share an id, so a resume after that id
    // cannot bring the result back; the page reads missing results over REST in that case.)
    const second = await readEvents(url, {
      lastEventId: connections[0].lastEventId,
      onEvent: (e) => e.event === 'result',
    });
    assert.equal(second.status, 200);
    connections.push(second);
    log(`connection 2: ${second.events.length} events, ${second.stoppedEarly ? `cut after id ${second.lastEventId}` : 'ran to the end'}`);
  });

  await check('resumed again and read to `end`', async () => {
    const previous = connections[connections.length - 1];
    if (!previous.stoppedEarly) {
      return; // the second connection already ran to the end
    }
    const third = await readEvents(url, { lastEventId: previous.lastEventId, timeoutMs: 30000 });
    assert.equal(third.status, 200);
    connections.push(third);
    log(`connection 3: ${third.events.length} events`);
  });

  await check('the union of the connections has every journal event exactly once, in order', async () => {
    const last = connections[connections.length - 1];
    assert.equal(last.events[last.events.length - 1].event, 'end', 'the last connection ends with `end`');
    assert.ok(last.ended, 'the server closed the stream after `end`');

    const histories = {};
    for (const id of ids) {
      const task = (await http('GET', `/api/tasks/${id}`)).json;
      assert.equal(task.state, 'succeeded');
      histories[id] = task.history;
    }
    const seenIds = [];
    const stateById = new Map();
    connections.forEach((connection, index) => {
      const resumedAfter = index === 0 ? null : Number(connections[index - 1].lastEventId);
      let previousId = -1;
      for (const e of connection.events) {
        if (e.event !== 'state') {
          continue;
        }
        assert.ok(e.id !== undefined, 'every state event carries an id');
        const id = Number(e.id);
        assert.ok(id > previousId, `ids rise within a connection (${previousId} then ${id})`);
        previousId = id;
        if (resumedAfter !== null) {
          assert.ok(id > resumedAfter, `a resumed stream sends only events after ${resumedAfter}, got ${id}`);
        }
        seenIds.push(id);
        stateById.set(id, JSON.parse(e.data));
      }
    });
    const duplicates = seenIds.filter((id, i) => seenIds.indexOf(id) !== i);
    assert.deepEqual(duplicates, [], 'no journal event is sent twice');

    // Events journaled before the first connection opened may be summed up by its snapshot instead
    // of being replayed; each task's events after that must all be there.
    const snapshot = JSON.parse(connections[0].events[0].data);
    for (const id of ids) {
      const history = histories[id];
      const journal = history.map((h) => h.eventId);
      const seen = seenIds.filter((eventId) => stateById.get(eventId).taskId === id);
      const skipped = journal.length - seen.length;
      assert.ok(skipped >= 0, `task ${id}: more events seen (${seen}) than journaled (${journal})`);
      assert.deepEqual(seen, journal.slice(skipped), `task ${id}: the events seen are the journal's, with no gap (journal ${journal}, seen ${seen})`);
      if (skipped > 0) {
        const inSnapshot = snapshot.tasks.find((t) => t.id === id);
        assert.equal(history[skipped - 1].to, inSnapshot.state, `task ${id}: the events not replayed are those the snapshot sums up`);
      }
      for (const eventId of seen) {
        const event = stateById.get(eventId);
        const journaled = history.find((h) => h.eventId === eventId);
        assert.equal(event.to, journaled.to, `event ${eventId} has the journal's target state`);
        assert.equal(event.from ?? null, journaled.from ?? null, `event ${eventId} has the journal's source state`);
      }
      const results = connections.flatMap((c) => c.events).filter((e) => e.event === 'result' && JSON.parse(e.data).taskId === id);
      assert.equal(results.length, 1, `task ${id}: one result event`);
      const terminal = history[history.length - 1];
      assert.equal(results[0].id, undefined, 'the result event carries no id: every id on a stream is unique');
      assert.equal(JSON.parse(results[0].data).state, 'succeeded');
      const terminalState = stateById.get(terminal.eventId);
      assert.ok(terminalState && terminalState.result, `task ${id}: the terminal state event carries the result`);
      assert.deepEqual(terminalState.result, JSON.parse(results[0].data).result, `task ${id}: the same result in both`);
    }
    log(`journal ids seen across ${connections.length} connections: ${seenIds.join(' ')}`);
  });
}

// -----------------------------------------------------------------------------------------------

try {
  log(`Taskline at ${base}, chromium ${executablePath}`);
  if (only !== 'sse') {
    await dashboardScenario();
  }
  if (only !== 'ui') {
    await resumeScenario();
  }
} catch (e) {
  if (!failed) {
    failed++;
    log(`FAIL ${e && e.stack ? e.stack : e}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

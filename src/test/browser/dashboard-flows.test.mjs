#!/usr/bin/env node
// Browser test of flows on the dashboard: the five-project form with "rank when all are done"
// submits a chord of matches then `rank` through POST /api/flows; the flow view draws six boxes in
// two columns and five edges, colours each box by its task's state as the event stream tells
// (read from the computed fill before and after), and the ranking appears under the form in score
// order, as the server ranked it. Then the Flows list, a flow opened from it, Cancel and Retry, a
// flow too big to draw whole, and a screenshot of the flow view whose pixels are looked at.
//
//   node src/test/browser/dashboard-flows.test.mjs <base url>
//
// Needs a node with the queues `default` and `matching` (slots 2), Debian's /usr/bin/chromium (or
// CHROMIUM=<path>) and `npm ci --prefix src/test/browser`. Writes the screenshot of the flow view
// to $SCREENSHOT (default target/dashboard-flows.png). Exit code 0 when every check passed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openPage, stopwatchLog } from './chromium.mjs';
import { readPng } from './png.mjs';

const base = (process.argv[2] || '').replace(/\/+$/, '');
if (!/^https?:\/\//.test(base)) {
  console.error('usage: node src/test/browser/dashboard-flows.test.mjs <base url>');
  process.exit(2);
}
const screenshotPath = path.resolve(process.env.SCREENSHOT || 'target/dashboard-flows.png');

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
  return { status: response.status, json: text ? JSON.parse(text) : null, text };
}

/** "rgb(187, 247, 208)" → [187, 247, 208]. */
function rgb(css) {
  const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(css || '');
  assert.ok(m, `a colour, got ${css}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

const flowView = (page, id) => page.locator(`.flow-view[data-flow-id="${id}"]`);

/** Waits until every box of the view is in `state`. */
async function allBoxes(page, root, state, timeout = 60000) {
  await page.waitForFunction(([selector, wanted]) => {
    const nodes = Array.from(document.querySelectorAll(`${selector} .flow-node`));
    return nodes.length > 0 && nodes.every((n) => n.classList.contains(`state-${wanted}`));
  }, [root, state], { timeout, polling: 100 });
}

let browser;
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

  await check('with no flow the Flows section says so', async () => {
    await page.locator('#flows td.empty').waitFor();
    assert.match(await page.locator('#flows td.empty').textContent(), /No flows yet/);
  });

  await check('the layout puts a task one column right of its deepest parent and draws at most 200 boxes', async () => {
    const layouts = await page.evaluate(async () => {
      const { layoutFlow } = await import('./flows.js');
      const summary = (l) => ({
        columns: l.columns, hidden: l.hidden, width: l.width, height: l.height,
        nodes: l.nodes.map((n) => [n.key, n.col, n.row, n.x, n.y]),
        edges: l.edges.map((e) => `${e.from}>${e.to}`),
      });
      const diamond = layoutFlow([
        { key: 'a' }, { key: 'b', dependsOn: ['a'] }, { key: 'c', dependsOn: ['a'] },
        { key: 'd', dependsOn: ['b', 'c'] }, { key: 'e', dependsOn: ['a', 'd'] },
      ]);
      const big = layoutFlow([{ key: 'root' }, ...Array.from({ length: 249 }, (_, i) => ({ key: `t${i}`, dependsOn: ['root'] }))]);
      return { diamond: summary(diamond), big: summary(big) };
    });
    const col = Object.fromEntries(layouts.diamond.nodes.map(([key, c]) => [key, c]));
    assert.deepEqual(col, { a: 0, b: 1, c: 1, d: 2, e: 3 });
    assert.equal(layouts.diamond.columns, 4);
    assert.deepEqual(layouts.diamond.edges.sort(), ['a>b', 'a>c', 'a>e', 'b>d', 'c>d', 'd>e']);
    const [, , rowB, xB, yB] = layouts.diamond.nodes.find((n) => n[0] === 'b');
    const [, , rowC, xC, yC] = layouts.diamond.nodes.find((n) => n[0] === 'c');
    assert.deepEqual([rowB, rowC], [0, 1], 'rows in the order of the tasks within a column');
    assert.equal(xB, xC);
    assert.ok(yC > yB);
    assert.equal(layouts.big.nodes.length, 200);
    assert.equal(layouts.big.hidden, 50);
    assert.equal(layouts.big.edges.length, 199, 'edges only between boxes drawn');
  });

  // Records the state classes each box of the match section's flow views passes through, with the
  // computed fill of its rectangle in each.
  await page.evaluate(() => {
    const seen = { states: {}, fills: {}, live: [] };
    window.__flow = seen;
    const note = (node) => {
      const key = node.dataset.key;
      const state = (/state-(\w+)/.exec(node.getAttribute('class')) || [])[1];
      const states = (seen.states[key] ||= []);
      if (state && states[states.length - 1] !== state) {
        states.push(state);
        (seen.fills[key] ||= {})[state] = getComputedStyle(node.querySelector('rect')).fill;
      }
    };
    new MutationObserver((mutations) => {
      for (const m of mutations) {
        if (m.type === 'attributes' && m.target.classList && m.target.classList.contains('flow-node')) {
          note(m.target);
        } else if (m.type === 'attributes' && m.target.classList && m.target.classList.contains('flow-view')) {
          if (seen.live[seen.live.length - 1] !== m.target.dataset.live) {
            seen.live.push(m.target.dataset.live);
          }
        } else {
          for (const added of m.addedNodes) {
            if (added.nodeType === 1) {
              added.querySelectorAll('.flow-node').forEach(note);
            }
          }
        }
      }
    }).observe(document.querySelector('#batches'), {
      subtree: true, childList: true, attributes: true, attributeFilter: ['class', 'data-live'],
    });
  });

  let flowId;
  let sent;
  const chosen = [2, 3, 8, 10, 1];
  await check('"rank when all are done" submits the five matches as a chord then rank, through POST /api/flows', async () => {
    await page.selectOption('#company', 'it');
    await page.waitForFunction(() => document.querySelector('#company-qualifications').textContent.includes('ISO 27001'));
    const boxes = page.locator('#project-list input[type=checkbox]');
    for (const i of chosen) {
      await boxes.nth(i).check();
    }
    await page.fill('#simulate-ms', '1500');
    await page.getByLabel('Rank when all are done').check();
    const submit = page.locator('#match-form button[type=submit]');
    assert.equal((await submit.textContent()).trim(), 'Match 5 projects and rank');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/flows') && r.request().method() === 'POST'),
      submit.click(),
    ]);
    assert.equal(response.status(), 202, `POST /api/flows answered ${response.status()}`);
    sent = JSON.parse(response.request().postData());
    assert.equal(sent.tasks, undefined, 'the shorthand, not a list of tasks');
    assert.equal(sent.chord.group.length, 5);
    for (const task of sent.chord.group) {
      assert.equal(task.type, 'qualification-match');
      assert.equal(task.queue, 'matching');
      assert.equal(task.payload.company.name, 'Brightwave IT Consulting');
      assert.equal(task.payload.simulateMs, 1500);
      assert.match(task.key, /^[a-z0-9-]+$/);
    }
    assert.equal(sent.chord.then.type, 'rank');
    const answer = await response.json();
    flowId = answer.flowId;
    assert.equal(answer.tasks.length, 6);
    assert.equal(await page.locator('.batch').count(), 0, 'no batch was made');
  });

  const matchView = () => flowView(page, flowId).and(page.locator('#batches .flow-view'));
  const keys = () => sent.chord.group.map((t) => t.key);

  await check('the flow view draws six boxes, five in the first column and rank in the next, and five edges into rank', async () => {
    const view = matchView();
    await view.locator('.flow-node').nth(5).waitFor();
    assert.equal(await view.locator('.flow-node').count(), 6, 'six boxes');
    assert.equal(await view.locator('.flow-edge').count(), 5, 'five edges');
    const boxes = await view.locator('.flow-node').evaluateAll((nodes) => nodes.map((n) => {
      const r = n.querySelector('rect').getBoundingClientRect();
      return { key: n.dataset.key, col: Number(n.dataset.col), text: n.textContent, x: r.x, y: r.y, w: r.width, h: r.height };
    }));
    const rank = boxes.find((b) => b.key === 'rank');
    const matches = boxes.filter((b) => b.key !== 'rank');
    assert.deepEqual(matches.map((b) => b.key), keys(), 'the matches in the order sent');
    assert.ok(matches.every((b) => b.col === 0 && b.x === matches[0].x), 'the matches share column 0');
    assert.equal(rank.col, 1);
    assert.ok(rank.x > matches[0].x + matches[0].w + 20, 'rank is drawn right of the matches');
    for (let i = 1; i < matches.length; i++) {
      assert.ok(matches[i].y >= matches[i - 1].y + matches[i - 1].h, 'boxes of a column do not overlap');
    }
    assert.ok(rank.y > matches[0].y && rank.y + rank.h < matches[4].y + matches[4].h, 'rank sits within the height of its column of parents');
    for (const b of matches) {
      assert.ok(b.text.includes(b.key) && b.text.includes('qualification-match'), `box ${b.key} shows its key and type: ${b.text}`);
    }
    assert.ok(rank.text.includes('rank'));
    // Each edge leaves its parent's right side and ends at rank's left side.
    const edges = await view.locator('.flow-edge').evaluateAll((paths) => paths.map((p) => {
      const m = p.getScreenCTM();
      const at = (length) => {
        const point = p.getPointAtLength(length);
        return { x: m.a * point.x + m.c * point.y + m.e, y: m.b * point.x + m.d * point.y + m.f };
      };
      return { from: p.dataset.from, to: p.dataset.to, start: at(0), end: at(p.getTotalLength()) };
    }));
    assert.deepEqual(edges.map((e) => e.from).sort(), [...keys()].sort());
    for (const e of edges) {
      assert.equal(e.to, 'rank');
      const parent = boxes.find((b) => b.key === e.from);
      assert.ok(Math.abs(e.start.x - (parent.x + parent.w)) < 2 && Math.abs(e.start.y - (parent.y + parent.h / 2)) < 2,
        `edge from ${e.from} starts at its box's right side: ${JSON.stringify(e.start)} vs ${JSON.stringify(parent)}`);
      assert.ok(Math.abs(e.end.x - rank.x) < 3 && Math.abs(e.end.y - (rank.y + rank.h / 2)) < 2,
        `edge from ${e.from} ends at rank's left side: ${JSON.stringify(e.end)}`);
    }
  });

  let fills;
  await check('the boxes change colour as the tasks run and end, from the event stream', async () => {
    const view = matchView();
    const rankBox = view.locator('.flow-node[data-key="rank"]');
    const fillOf = (locator) => locator.locator('rect').evaluate((r) => getComputedStyle(r).fill);
    // The matches take 1.5 s each, two at a time: rank waits blocked for seconds.
    assert.match(await rankBox.getAttribute('class'), /\bstate-blocked\b/);
    const blockedFill = await fillOf(rankBox);
    await page.waitForFunction(() => document.querySelector('#batches .flow-node.state-running'), null, { polling: 50 });
    const runningBox = view.locator('.flow-node.state-running').first();
    const runningKey = await runningBox.getAttribute('data-key');
    const runningFill = await fillOf(view.locator(`.flow-node[data-key="${runningKey}"]`));
    await allBoxes(page, '#batches .flow-view', 'succeeded');
    const succeededFill = await fillOf(rankBox);
    assert.equal(await fillOf(view.locator(`.flow-node[data-key="${runningKey}"]`)), succeededFill);
    log(`fills: blocked ${blockedFill}, running ${runningFill}, succeeded ${succeededFill}`);
    assert.notDeepEqual(rgb(blockedFill), rgb(succeededFill), 'rank changed colour from blocked to succeeded');
    assert.notDeepEqual(rgb(runningFill), rgb(succeededFill), `${runningKey} changed colour from running to succeeded`);
    assert.notDeepEqual(rgb(blockedFill), rgb(runningFill));
    const seen = await page.evaluate(() => window.__flow);
    log(`states shown: ${JSON.stringify(seen.states)}; stream: ${JSON.stringify(seen.live)}`);
    for (const key of keys()) {
      const states = seen.states[key] || [];
      assert.ok(states.includes('running'), `${key} was shown running: ${states}`);
      assert.equal(states[states.length - 1], 'succeeded');
      assert.ok(states.indexOf('running') < states.lastIndexOf('succeeded'), `${key}: running before succeeded`);
      assert.deepEqual(rgb(seen.fills[key].running), rgb(runningFill), 'one colour per state');
    }
    assert.equal(seen.states.rank[0], 'blocked');
    assert.equal(seen.states.rank[seen.states.rank.length - 1], 'succeeded');
    assert.ok(seen.live.includes('sse'), `followed over the event stream: ${seen.live}`);
    assert.ok(!seen.live.includes('polling'), 'no fallback to polling');
    await page.waitForFunction((id) => document.querySelector(`#batches .flow-view[data-flow-id="${id}"]`).dataset.live === 'done', flowId);
    assert.equal(await view.getAttribute('data-state'), 'succeeded');
    assert.match(await view.locator('.flow-counts').textContent(), /^6\/6 succeeded/);
    fills = { blocked: rgb(blockedFill), running: rgb(runningFill), succeeded: rgb(succeededFill) };
  });

  await check('the ranking shows under the form: five rows in score order, as the server ranked them', async () => {
    const rows = page.locator('#ranking table.ranking-table tbody tr');
    await rows.nth(4).waitFor();
    assert.equal(await rows.count(), 5);
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => Array.from(tr.cells).map((c) => c.textContent.trim())));
    log(`ranking: ${JSON.stringify(shown)}`);
    assert.deepEqual(shown.map((r) => r[0]), ['1', '2', '3', '4', '5']);
    const scores = shown.map((r) => Number(r[2]));
    for (let i = 1; i < scores.length; i++) {
      assert.ok(scores[i] <= scores[i - 1], `scores in order, best first: ${scores}`);
    }
    const names = sent.chord.group.map((t) => t.payload.project.name);
    assert.deepEqual(shown.map((r) => r[1]).sort(), [...names].sort(), 'every project ranked once');
    const flow = (await http('GET', `/api/flows/${flowId}`)).json;
    assert.equal(flow.state, 'succeeded');
    const rank = flow.tasks.find((t) => t.key === 'rank');
    assert.deepEqual(rank.dependsOn.sort(), [...keys()].sort());
    assert.deepEqual(shown, rank.result.ranking.map((line) => [String(line.rank), line.project, String(line.score)]));
    for (const task of flow.tasks.filter((t) => t.key !== 'rank')) {
      const row = shown.find((r) => r[1] === task.result.project);
      assert.equal(Number(row[2]), task.result.score, `${task.key}: the score its match computed`);
    }
  });

  await check(`a screenshot of the flow view is written to ${screenshotPath}, its boxes in their colours`, async () => {
    fs.mkdirSync(path.dirname(screenshotPath), { recursive: true });
    await page.evaluate(() => document.querySelectorAll('.notice').forEach((n) => n.remove()));
    const view = matchView();
    await view.scrollIntoViewIfNeeded();
    await view.screenshot({ path: screenshotPath });
    const size = fs.statSync(screenshotPath).size;
    assert.ok(size > 8000, `a PNG of some substance, ${size} bytes`);
    const png = readPng(screenshotPath);
    const frame = await view.boundingBox();
    assert.ok(Math.abs(png.width - Math.round(frame.width)) <= 1, `the PNG is the view: ${png.width} vs ${frame.width}`);
    for (const key of ['rank', keys()[0]]) {
      const box = await view.locator(`.flow-node[data-key="${key}"] rect`).boundingBox();
      const x = Math.round(box.x - frame.x + 5);
      const y = Math.round(box.y - frame.y + box.height / 2);
      const pixel = png.pixel(x, y);
      log(`pixel of ${key} at ${x},${y}: ${pixel}`);
      fills.succeeded.forEach((channel, i) => assert.ok(Math.abs(pixel[i] - channel) <= 3,
        `box ${key} is the succeeded colour ${fills.succeeded} in the screenshot, got ${pixel}`));
    }
    const graph = await view.locator('.flow-graph').boundingBox();
    const blank = png.pixel(Math.round(graph.x - frame.x + graph.width - 4), Math.round(graph.y - frame.y + 4));
    assert.deepEqual(blank.slice(0, 3), [255, 255, 255], 'the graph is drawn on white');
  });

  await check('the Flows list shows the flow: name, succeeded, 6/6', async () => {
    const row = page.locator(`#flow-table tbody tr[data-flow-id="${flowId}"]`);
    await page.waitForFunction((id) => {
      const tr = document.querySelector(`#flow-table tbody tr[data-flow-id="${id}"]`);
      return tr && tr.dataset.state === 'succeeded';
    }, flowId, { timeout: 15000 });
    const cells = await row.locator('th, td').allTextContents();
    assert.match(cells[0], /Brightwave IT Consulting/);
    assert.equal(cells[1].trim(), 'succeeded');
    assert.equal(cells[2].trim(), '6/6');
  });

  await check('a flow opened from the list is drawn in the Flows section, and a box shows its task', async () => {
    await page.locator(`#flow-table tbody tr[data-flow-id="${flowId}"] button`).click();
    const view = page.locator(`#flow-view .flow-view[data-flow-id="${flowId}"]`);
    await view.locator('.flow-node').nth(5).waitFor();
    await allBoxes(page, '#flow-view .flow-view', 'succeeded', 15000);
    await page.waitForFunction(() => document.querySelector('#flow-view .flow-view').dataset.live === 'done');
    assert.equal(await view.locator('.flow-edge').count(), 5);
    assert.equal((await view.locator('.flow-head .badge').textContent()).trim(), 'succeeded');
    assert.ok(await view.locator('button', { hasText: 'Cancel' }).isDisabled(), 'nothing to cancel');
    assert.ok(await view.locator('button', { hasText: 'Retry' }).isDisabled(), 'nothing to retry');
    await view.locator('.flow-node[data-key="rank"]').click();
    await view.locator('.flow-detail dl').waitFor();
    assert.match(await view.locator('.flow-detail').textContent(), /rank on default/);
    assert.match(await view.locator('.flow-node[data-key="rank"]').getAttribute('class'), /\bselected\b/);
  });

  await check('Cancel on a running flow cancels what waits, and the flow ends cancelled', async () => {
    const made = await http('POST', '/api/flows', {
      name: 'to cancel',
      chain: [{ key: 'slow', type: 'sleep', payload: { ms: 6000, steps: 6 } }, { key: 'after', type: 'sleep', payload: { ms: 0 } }],
    });
    assert.equal(made.status, 202, made.text);
    const id = made.json.flowId;
    const button = page.locator(`#flow-table tbody tr[data-flow-id="${id}"] button`);
    await button.waitFor({ timeout: 15000 });
    await button.click();
    const view = page.locator(`#flow-view .flow-view[data-flow-id="${id}"]`);
    await view.locator('.flow-node[data-key="slow"].state-running').waitFor();
    assert.match(await view.locator('.flow-node[data-key="after"]').getAttribute('class'), /\bstate-blocked\b/);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/api/flows/${id}/cancel`)),
      view.locator('button', { hasText: 'Cancel' }).click(),
    ]);
    assert.equal(response.status(), 202);
    await view.locator('.flow-node[data-key="after"].state-cancelled').waitFor();
    await page.waitForFunction(() => {
      const v = document.querySelector('#flow-view .flow-view');
      return v.dataset.live === 'done' && v.dataset.state === 'cancelled';
    }, null, { timeout: 15000 });
    assert.equal((await http('GET', `/api/flows/${id}`)).json.state, 'cancelled');
  });

  await check('Retry on a failed flow runs its failed task again', async () => {
    const made = await http('POST', '/api/flows', {
      name: 'to retry',
      chain: [{ key: 'flaky', type: 'sleep', maxAttempts: 1, payload: { ms: 0, failTimes: 5 } }, { key: 'after', type: 'sleep', payload: { ms: 0 } }],
    });
    assert.equal(made.status, 202, made.text);
    const id = made.json.flowId;
    const flakyId = made.json.tasks.find((t) => t.key === 'flaky').id;
    const button = page.locator(`#flow-table tbody tr[data-flow-id="${id}"] button`);
    await button.waitFor({ timeout: 15000 });
    await button.click();
    const view = page.locator(`#flow-view .flow-view[data-flow-id="${id}"]`);
    await view.locator('.flow-node[data-key="flaky"].state-failed').waitFor();
    await view.locator('.flow-node[data-key="after"].state-cancelled').waitFor();
    await page.waitForFunction(() => document.querySelector('#flow-view .flow-view').dataset.state === 'failed');
    const failedFill = rgb(await view.locator('.flow-node[data-key="flaky"] rect').evaluate((r) => getComputedStyle(r).fill));
    assert.notDeepEqual(failedFill, fills.succeeded);
    const before = (await http('GET', `/api/tasks/${flakyId}`)).json.history.length;
    const retry = view.locator('button', { hasText: 'Retry' });
    assert.ok(await retry.isEnabled());
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/api/flows/${id}/retry`)),
      retry.click(),
    ]);
    assert.equal(response.status(), 202);
    assert.deepEqual((await response.json()).retried, [flakyId]);
    await page.locator('.notice', { hasText: '1 task retried' }).waitFor();
    const task = await (async () => {
      for (let i = 0; i < 300; i++) {
        const t = (await http('GET', `/api/tasks/${flakyId}`)).json;
        if (t.history.length > before && t.state === 'failed') {
          return t;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the retried task did not run again');
    })();
    assert.match(JSON.stringify(task.error), /planned failure/);
    await page.waitForFunction(() => {
      const v = document.querySelector('#flow-view .flow-view');
      return v.dataset.live === 'done' && v.dataset.state === 'failed';
    }, null, { timeout: 15000 });
  });

  await check('a flow of 230 tasks draws its first 200 boxes and says how many are not', async () => {
    const made = await http('POST', '/api/flows', {
      name: 'wide',
      group: Array.from({ length: 230 }, (_, i) => ({ key: `w${i}`, type: 'sleep', payload: { ms: 0 } })),
    });
    assert.equal(made.status, 202, made.text);
    const id = made.json.flowId;
    const flows = (await http('GET', '/api/flows?limit=3')).json.flows;
    assert.equal(flows[0].id, id);
    const button = page.locator(`#flow-table tbody tr[data-flow-id="${id}"] button`);
    await button.waitFor({ timeout: 15000 });
    await button.click();
    const view = page.locator(`#flow-view .flow-view[data-flow-id="${id}"]`);
    await view.locator('.flow-note').waitFor();
    assert.equal(await view.locator('.flow-node').count(), 200);
    assert.match(await view.locator('.flow-note').textContent(), /^30 more tasks are not drawn/);
    await page.waitForFunction(() => document.querySelector('#flow-view .flow-view').dataset.state === 'succeeded', null, { timeout: 30000 });
    assert.match(await view.locator('.flow-counts').textContent(), /^230\/230 succeeded/);
  });

  assert.deepEqual(pageErrors, [], 'no uncaught errors in the page and nothing refused by its policy');
} catch (e) {
  if (!failed) {
    failed++;
    log(`FAIL ${e && e.stack ? e.stack : e}`);
  }
} finally {
  if (browser) {
    await browser.close();
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

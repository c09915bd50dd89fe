// Taskline dashboard: queues and totals every second, a five-minute chart sampled in the browser,
// the schedules, the recent tasks and the dead letters a page at a time, the flows with a drawing of
// each, and the qualification-match form.

import { api, session, signIn } from './api.js';
import { LiveChart } from './chart.js';
import { $, h, num, reconcileRows, time } from './dom.js';
import { flowsSection } from './flows.js';
import { setupMatchForm } from './match.js';
import { nodesTable } from './nodes.js';
import { schedulesTable } from './schedules.js';
import { StepsPanel } from './steps.js';
import { deadLetterTable, recentTasksTable } from './tasks.js';

const SAMPLE_MS = 1000;

// ---------------------------------------------------------------------------------------------
// Notices: short messages for actions (retry, cancel) and their errors.

const notices = $('#notices');

function notify(message, kind = 'info') {
  const close = h('button.notice-close', { type: 'button', 'aria-label': 'Dismiss' }, '×');
  const el = h('div.notice', { dataset: { kind }, role: kind === 'error' ? 'alert' : 'status' }, h('span', null, message), close);
  close.addEventListener('click', () => el.remove());
  notices.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 15000 : 6000);
  while (notices.children.length > 4) {
    notices.firstChild.remove();
  }
}

// ---------------------------------------------------------------------------------------------
// Connection state in the header.

const connection = $('#connection');
const updated = $('#updated');
const banner = $('#banner');

function connected(ok, message) {
  connection.dataset.state = ok ? 'up' : 'down';
  connection.textContent = ok ? 'connected' : 'offline';
  banner.hidden = ok;
  if (!ok) {
    banner.textContent = message;
  } else {
    updated.textContent = `updated ${time(new Date().toISOString())}`;
  }
}

async function checkReady() {
  const ready = $('#ready');
  try {
    await api.get('/health/ready');
    ready.dataset.state = 'up';
    ready.textContent = 'ready';
    ready.title = 'the journal answers and the node takes work';
  } catch (e) {
    ready.dataset.state = 'down';
    ready.textContent = 'not ready';
    ready.title = e.problem && e.problem.reason ? e.problem.reason : e.message;
  }
  setTimeout(checkReady, 5000);
}

// ---------------------------------------------------------------------------------------------
// Queues and the throughput chart, every second.

const queueBody = $('#queue-table tbody');
const queueNames = [];

function meter(value, max, label) {
  const share = max > 0 ? Math.min(1, value / max) : 0;
  const level = share >= 0.9 ? 'high' : share >= 0.6 ? 'mid' : 'low';
  return h('span.meter', { role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': max, 'aria-valuenow': value, 'aria-label': label, title: `${Math.round(share * 100)}%` },
    h('span', { style: `width:${(share * 100).toFixed(1)}%`, dataset: { level } }));
}

function renderQueues(queues) {
  reconcileRows(queueBody, queues, (q) => q.name,
    (q) => h('tr', { dataset: { queue: q.name } },
      h('th', { scope: 'row' }, q.name),
      ...Array.from({ length: 11 }, () => h('td.num')),
      h('td.flow', null, h('span.badge'), h('button.pause-toggle', { type: 'button' }))),
    (row, q) => {
      const c = row.cells;
      const rates = q.rates || {};
      c[1].textContent = num(q.waiting);
      c[2].textContent = num(q.scheduled);
      c[3].replaceChildren(`${num(q.running)}`, meter(q.running, q.slots, `${q.name}: slots in use`));
      c[4].textContent = num(q.slots);
      c[5].replaceChildren(`${num(q.capacity)}`, meter(q.waiting, q.capacity, `${q.name}: waiting places taken`));
      c[6].textContent = num(q.accepted);
      c[7].textContent = num(q.finished);
      c[8].textContent = num(q.rejected);
      c[8].classList.toggle('warn', q.rejected > 0);
      c[9].textContent = num(q.expired || 0);
      c[9].classList.toggle('warn', q.expired > 0);
      c[10].textContent = num(rates.arrival10s);
      c[11].textContent = num(rates.completion10s);
      row.title = `backlog trend ${num(rates.backlogTrend10s)}/s · oldest waiting ${num(q.lagSeconds)} s`;
      showPause(row, q.name, q.paused, q.pausedAt);
    });
  const names = queues.map((q) => q.name);
  if (names.join('\n') !== queueNames.join('\n')) {
    queueNames.splice(0, queueNames.length, ...names);
    fillQueueSelects(names);
  }
}

// A paused queue takes tasks and starts none, on every node; the switch is an admin's.
function showPause(row, name, paused, since) {
  row.dataset.paused = String(Boolean(paused));
  const cell = row.cells[12];
  const badge = cell.querySelector('.badge');
  badge.textContent = paused ? 'paused' : 'running';
  badge.dataset.state = paused ? 'paused' : 'running';
  badge.title = paused && since ? `paused since ${time(since)}` : '';
  const button = cell.querySelector('button');
  if (button.dataset.busy !== 'true') {
    button.textContent = paused ? 'Resume' : 'Pause';
    button.setAttribute('aria-label', `${paused ? 'Resume' : 'Pause'} queue ${name}`);
  }
}

queueBody.addEventListener('click', async (event) => {
  const button = event.target.closest('button.pause-toggle');
  if (!button) {
    return;
  }
  const row = button.closest('tr');
  const name = row.dataset.queue;
  const pause = row.dataset.paused !== 'true';
  button.dataset.busy = 'true';
  button.disabled = true;
  try {
    const answer = await api.post(`/api/queues/${encodeURIComponent(name)}/${pause ? 'pause' : 'resume'}`, {});
    button.dataset.busy = 'false';
    showPause(row, name, answer.paused, answer.changedAt);
    notify(answer.paused ? `Queue “${name}” paused on every node: it takes tasks and starts none.` : `Queue “${name}” resumed.`);
  } catch (e) {
    notify(`${pause ? 'Pause' : 'Resume'} failed: ${e.message}`, 'error');
  } finally {
    button.dataset.busy = 'false';
    button.disabled = false;
  }
});

const chart = new LiveChart($('#throughput-chart'), [
  { key: 'arrival', label: 'arrivals/s', color: '#2563eb', axis: 'left' },
  { key: 'completion', label: 'completions/s', color: '#059669', axis: 'left' },
  { key: 'backlog', label: 'backlog', color: '#d97706', axis: 'right', dash: [6, 3] },
]);

for (const box of document.querySelectorAll('#chart-legend input[type=checkbox]')) {
  box.addEventListener('change', () => chart.toggle(box.value, box.checked));
}

function renderStats(stats) {
  const rates = stats.rates || {};
  const backlog = (stats.waiting || 0) + (stats.scheduled || 0) + (stats.running || 0);
  chart.push({ t: Date.now(), arrival: rates.arrival10s || 0, completion: rates.completion10s || 0, backlog });
  $('#legend-arrival').textContent = num(rates.arrival10s || 0);
  $('#legend-completion').textContent = num(rates.completion10s || 0);
  $('#legend-backlog').textContent = num(backlog);
  $('#totals').textContent = `accepted ${num(stats.accepted)} · finished ${num(stats.finished)} (expired ${num(stats.expired || 0)}) · rejected ${num(stats.rejected)} · waiting ${num(stats.waiting)} · scheduled ${num(stats.scheduled)} · running ${num(stats.running)}`;
  $('#throughput-chart').setAttribute('aria-label',
    `Throughput over the last 5 minutes. Now: ${num(rates.arrival10s || 0)} arrivals per second, ${num(rates.completion10s || 0)} completions per second, backlog ${num(backlog)}.`);
}

async function sample() {
  const started = Date.now();
  try {
    const [queues, stats] = await Promise.all([api.get('/api/queues'), api.get('/api/stats')]);
    renderQueues(queues.queues || []);
    renderStats(stats);
    connected(true);
  } catch (e) {
    connected(false, `Cannot read the server's state: ${e.message}`);
    chart.push({ t: Date.now() }); // a gap in the lines
  }
  setTimeout(sample, Math.max(0, SAMPLE_MS - (Date.now() - started)));
}

// ---------------------------------------------------------------------------------------------
// Schedules, every two seconds, with their Pause / Resume buttons.

const schedules = schedulesTable($('#schedules'), { notify });
const nodes = nodesTable($('#nodes'));

// ---------------------------------------------------------------------------------------------
// Recent tasks and dead letters.

const recentSection = $('#recent');
const recentState = $('#recent-state');
const recentQueue = $('#recent-queue');
const steps = new StepsPanel($('#task-steps'));
const recent = recentTasksTable(recentSection, () => ({ state: recentState.value, queue: recentQueue.value }), {
  onSteps: (id) => steps.toggle(id),
});
recentState.addEventListener('change', () => recent.reset());
recentQueue.addEventListener('change', () => recent.reset());

const deadSection = $('#dead');
const deadQueue = $('#dead-queue');
const retryAll = $('#retry-all');
const dead = deadLetterTable(deadSection, () => ({ state: 'failed', queue: deadQueue.value }), {
  async onRetry(id, button) {
    button.disabled = true;
    button.dataset.busy = 'true';
    try {
      await api.post(`/api/tasks/${id}/retry`);
      notify(`Task ${id.slice(0, 8)}… is pending again.`);
      dead.refresh();
      recent.refresh();
    } catch (e) {
      notify(`Retry failed: ${e.message}`, 'error');
    } finally {
      button.dataset.busy = 'false';
      button.disabled = false;
    }
  },
});

function updateRetryAll() {
  const queue = deadQueue.value;
  retryAll.disabled = !queue;
  retryAll.textContent = queue ? `Retry up to 100 on “${queue}”` : 'Choose a queue to retry all';
}

deadQueue.addEventListener('change', () => {
  updateRetryAll();
  dead.reset();
});

retryAll.addEventListener('click', async () => {
  const queue = deadQueue.value;
  if (!queue) {
    return;
  }
  retryAll.disabled = true;
  try {
    const answer = await api.post('/api/tasks/retry', { queue, limit: 100 });
    notify(answer.retried ? `${answer.retried} dead letter${answer.retried === 1 ? '' : 's'} on “${queue}” pending again.` : `No dead letters on “${queue}”.`);
    dead.reset();
    recent.refresh();
  } catch (e) {
    notify(`Retry all failed: ${e.message}`, 'error');
  } finally {
    updateRetryAll();
  }
});

function fillQueueSelects(names) {
  for (const select of [recentQueue, deadQueue]) {
    const value = select.value;
    const first = select.options[0];
    select.replaceChildren(first, ...names.map((n) => h('option', { value: n }, n)));
    select.value = names.includes(value) ? value : '';
  }
  updateRetryAll();
}

// ---------------------------------------------------------------------------------------------

// With API keys on, the first refused request shows this form; the requests go on once signed in.
session.signIn = () => new Promise((resolve) => {
  const form = $('#signin');
  const error = $('#signin-error');
  form.hidden = false;
  $('#signin-key').focus();
  form.onsubmit = async (event) => {
    event.preventDefault();
    error.textContent = '';
    try {
      const who = await signIn($('#signin-key').value.trim());
      $('#signin-key').value = '';
      form.hidden = true;
      form.dataset.signedIn = who.tenant || 'every tenant';
      resolve();
    } catch (e) {
      error.textContent = e.status === 401 ? 'that key is not known here' : e.message;
    }
  };
});

const flows = flowsSection($('#flows'), { notify });

setupMatchForm($('#match'), {
  notify,
  onSubmitted: () => {
    recent.refresh();
    flows.refresh();
  },
});
updateRetryAll();
sample();
checkReady();
schedules.start();
nodes.start();
flows.start();
recent.start();
dead.start();
document.documentElement.dataset.ready = 'true';

// The motivating case: pick a company profile and up to ten projects, submit them as one batch on
// the `matching` queue, and follow every match live over Server-Sent Events. With "rank when all
// are done" they go as a flow instead, a chord whose last task ranks the matches by score: the page
// draws the flow and shows the ranking once that task has ended.

import { api, ApiError } from './api.js';
import { badge, h, progressBar, renderSoon, setBadge, setProgress, shortId } from './dom.js';
import { FlowView } from './flows.js';
import { COMPANIES, MAX_PROJECTS, PROJECTS } from './samples.js';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'expired']);
const MAX_BATCH_VIEWS = 3;

export function today() {
  const d = new Date();
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export function setupMatchForm(root, { notify, onSubmitted }) {
  const form = root.querySelector('form');
  const companySelect = form.querySelector('#company');
  const qualificationList = root.querySelector('#company-qualifications');
  const projectList = root.querySelector('#project-list');
  const counter = root.querySelector('#project-count');
  const simulate = form.querySelector('#simulate-ms');
  const submit = form.querySelector('button[type=submit]');
  const formError = root.querySelector('#match-error');
  const batches = root.querySelector('#batches');
  const rankBox = form.querySelector('#rank-all');
  const ranking = root.querySelector('#ranking');
  const views = [];

  for (const profile of COMPANIES) {
    companySelect.append(h('option', { value: profile.key }, profile.label));
  }

  PROJECTS.forEach((project, index) => {
    const id = `project-${index}`;
    const mandatory = project.requirements.filter((r) => r.mandatory).length;
    const details = project.requirements
      .map((r) => `${r.name} ≥ ${r.minLevel}${r.mandatory ? ' (mandatory)' : ''}, weight ${r.weight}`)
      .join('; ');
    projectList.append(h('li', null,
      h('input', { type: 'checkbox', id, name: 'project', value: String(index) }),
      h('label', { for: id, title: details },
        h('span.project-name', null, project.name),
        h('span.muted', null, `${project.requirements.length} requirements, ${mandatory} mandatory`))));
  });

  function renderQualifications() {
    const profile = COMPANIES.find((c) => c.key === companySelect.value) || COMPANIES[0];
    const asOf = today();
    qualificationList.replaceChildren(...profile.company.qualifications.map((q) => {
      const expired = q.expires < asOf;
      return h('li', { class: expired ? 'expired' : '' },
        h('span', null, q.name),
        h('span.level', { title: `level ${q.level} of 5`, 'aria-label': `level ${q.level} of 5` }, '●'.repeat(q.level) + '○'.repeat(Math.max(0, 5 - q.level))),
        h('span.muted', null, expired ? `expired ${q.expires}` : `until ${q.expires}`));
    }));
  }

  function selected() {
    return Array.from(projectList.querySelectorAll('input:checked')).map((box) => PROJECTS[Number(box.value)]);
  }

  function updateCount() {
    const count = selected().length;
    counter.textContent = `${count} of at most ${MAX_PROJECTS} selected`;
    for (const box of projectList.querySelectorAll('input')) {
      box.disabled = !box.checked && count >= MAX_PROJECTS;
    }
    submit.disabled = count === 0;
    submit.textContent = count ? `Match ${count} project${count === 1 ? '' : 's'}${rankBox.checked ? ' and rank' : ''}` : 'Choose projects to match';
  }

  function showError(message) {
    formError.textContent = message;
    formError.hidden = !message;
  }

  companySelect.addEventListener('change', renderQualifications);
  projectList.addEventListener('change', updateCount);
  rankBox.addEventListener('change', updateCount);
  renderQualifications();
  updateCount();

  function show(view) {
    views.unshift(view);
    batches.prepend(view.el);
    while (views.length > MAX_BATCH_VIEWS) {
      views.pop().dispose();
    }
  }

  /**
   * The matches as one flow: a chord of them, then `rank`. Keys are the projects' names made
   * short, so that the boxes of the graph and the ranking say which project is which.
   */
  async function submitRanked(company, projects, tasks) {
    const keys = projectKeys(projects);
    const names = new Map(keys.map((key, i) => [key, projects[i].name]));
    const answer = await api.post('/api/flows', {
      name: `${company.name}: ${projects.length} project${projects.length === 1 ? '' : 's'} ranked`,
      chord: {
        group: tasks.map((task, i) => ({ key: keys[i], ...task })),
        then: { key: 'rank', type: 'rank' },
      },
    });
    const shown = { key: '' };
    ranking.hidden = false;
    ranking.dataset.flowId = answer.flowId;
    ranking.dataset.state = 'waiting';
    ranking.replaceChildren(h('p.muted', null, `The ranking shows here once the ${projects.length} matches are done.`));
    const view = new FlowView(answer.flowId, {
      notify,
      eventsUrl: answer.eventsUrl,
      title: `${company.name} · ${projects.length} project${projects.length === 1 ? '' : 's'}, ranked`,
      onUpdate(flowTasks) {
        if (ranking.dataset.flowId !== answer.flowId) {
          return; // a newer ranked match owns the ranking
        }
        const rank = flowTasks.find((t) => t.key === 'rank');
        if (!rank || !TERMINAL.has(rank.state)) {
          return;
        }
        const key = `${rank.state}|${JSON.stringify(rank.result)}|${JSON.stringify(rank.error)}`;
        if (shown.key !== key) {
          shown.key = key;
          ranking.replaceChildren(...rankingTable(company, rank, names));
          ranking.dataset.state = rank.state;
        }
      },
    });
    show(view);
    view.load();
    return answer;
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showError('');
    const projects = selected();
    if (!projects.length) {
      showError('Choose at least one project.');
      return;
    }
    if (projects.length > MAX_PROJECTS) {
      showError(`Choose at most ${MAX_PROJECTS} projects.`);
      return;
    }
    const simulateMs = Number(simulate.value);
    if (!Number.isInteger(simulateMs) || simulateMs < 0 || simulateMs > 600000) {
      showError('The simulated time must be a whole number of milliseconds from 0 to 600000.');
      simulate.focus();
      return;
    }
    const profile = COMPANIES.find((c) => c.key === companySelect.value) || COMPANIES[0];
    const asOf = today();
    const tasks = projects.map((project) => ({
      type: 'qualification-match',
      queue: 'matching',
      payload: { company: profile.company, project, asOf, simulateMs },
    }));
    submit.disabled = true;
    const label = submit.textContent;
    submit.textContent = 'Submitting…';
    try {
      if (rankBox.checked) {
        const answer = await submitRanked(profile.company, projects, tasks);
        if (onSubmitted) {
          onSubmitted(answer);
        }
        return;
      }
      const answer = await api.post('/api/batches', { tasks });
      const view = new BatchView(answer, profile.company, projects, { notify });
      show(view);
      view.follow();
      if (onSubmitted) {
        onSubmitted(answer);
      }
    } catch (e) {
      let message = e.message;
      if (e instanceof ApiError && e.status === 429) {
        message = `Not accepted: ${e.message}.${e.retryAfter ? ` Try again in ${e.retryAfter} s.` : ''}`;
      } else if (e instanceof ApiError && e.status) {
        message = `Not accepted (${e.status}): ${e.message}`;
      }
      showError(message);
    } finally {
      submit.textContent = label;
      updateCount();
    }
  });
}

/** One submitted batch: a row per project, fed by the batch's event stream. */
class BatchView {
  constructor(answer, company, projects, { notify }) {
    this.batchId = answer.batchId;
    this.notify = notify;
    this.source = null;
    this.pollTimer = 0;
    this.disposed = false;
    this.lastEventId = null;
    this.tasks = new Map();
    this.renderQueued = false;

    this.liveLabel = h('span.live', { role: 'status' }, 'connecting…');
    this.counts = h('span.muted');
    this.cancelButton = h('button.btn.small.secondary', { type: 'button', onclick: () => this.cancel() }, 'Cancel batch');
    const tbody = h('tbody');
    this.el = h('article.batch', { dataset: { batchId: this.batchId, live: 'connecting' }, 'aria-label': `batch ${this.batchId}` },
      h('header.batch-head', null,
        h('div', null,
          h('h3', null, `${company.name} · ${projects.length} project${projects.length === 1 ? '' : 's'}`),
          h('div.muted.mono', { title: this.batchId }, `batch ${this.batchId}`)),
        h('div.batch-meta', null, this.counts, this.liveLabel, this.cancelButton)),
      h('div.table-wrap', null,
        h('table.match-table', null,
          h('thead', null, h('tr', null,
            h('th', { scope: 'col' }, 'Project'),
            h('th', { scope: 'col' }, 'State'),
            h('th', { scope: 'col' }, 'Progress'),
            h('th', { scope: 'col' }, 'Score'),
            h('th', { scope: 'col' }, 'Mandatory'),
            h('th', { scope: 'col' }, 'Breakdown'))),
          tbody)));

    answer.tasks.forEach((task, i) => {
      const project = projects[i];
      const row = h('tr.match-row', { dataset: { taskId: task.id, state: task.state } });
      const state = badge(task.state);
      const progress = progressBar(`progress of ${project ? project.name : task.id}`);
      const score = h('td.score', { 'data-col': 'score' }, h('span.muted', null, '…'));
      const mandatory = h('td', { 'data-col': 'mandatory' });
      const breakdown = h('td', { 'data-col': 'breakdown' });
      row.append(
        h('th', { scope: 'row' }, project ? project.name : shortId(task.id), h('div.muted.mono', { title: task.id }, shortId(task.id))),
        h('td', null, state),
        h('td', null, progress),
        score, mandatory, breakdown);
      tbody.append(row);
      this.tasks.set(task.id, {
        row, stateEl: state, progress, score, mandatory, breakdown,
        state: task.state, attempt: 0, percent: 0, message: null, result: null, error: null,
      });
    });
    this.render();
  }

  follow() {
    if (typeof EventSource !== 'function') {
      this.poll();
      return;
    }
    const source = new EventSource(api.url(`/api/batches/${this.batchId}/events`));
    this.source = source;
    source.addEventListener('open', () => this.setLive('sse', 'live'));
    source.addEventListener('snapshot', (e) => {
      this.setLive('sse', 'live');
      const data = JSON.parse(e.data);
      for (const task of data.tasks || []) {
        this.applyTask(task);
        const entry = this.tasks.get(task.id);
        if (entry) {
          // Until the stream passes the point the snapshot shows, older events it replays must
          // not move the row backwards (a running task flashing back to pending).
          entry.catchUp = { state: task.state, attempt: task.attempt || 0, lastEventId: Number.isInteger(task.lastEventId) ? task.lastEventId : null };
        }
      }
      this.scheduleRender();
    });
    // A durable task's suspend and resume move its state as any transition does.
    const onState = (e) => {
      const data = JSON.parse(e.data);
      this.lastEventId = e.lastEventId || this.lastEventId;
      const task = this.tasks.get(data.taskId);
      if (task && !isBehindSnapshot(task, data, Number(e.lastEventId))) {
        const attempt = Number.isInteger(data.attempt) ? data.attempt : task.attempt;
        if (TERMINAL.has(data.from)) {
          // Retried by hand after it had finished: it starts over with fresh attempts.
          Object.assign(task, { attempt, percent: 0, message: null, result: null, error: null });
        } else {
          if (data.to === 'running' && attempt > task.attempt) {
            task.percent = 0; // a new attempt starts from nothing
            task.message = null;
          }
          task.attempt = Math.max(task.attempt, attempt);
        }
        task.state = data.to;
        if (TERMINAL.has(data.to)) {
          // The outcome rides on the terminal transition, so a resumed stream has it too.
          task.result = data.result || null;
          task.error = data.error || null;
        }
        if (data.to === 'succeeded') {
          task.percent = 100;
        }
        this.scheduleRender();
      }
    };
    for (const name of ['state', 'suspended', 'resumed']) {
      source.addEventListener(name, onState);
    }
    source.addEventListener('progress', (e) => {
      const data = JSON.parse(e.data);
      const task = this.tasks.get(data.taskId);
      if (task && !TERMINAL.has(task.state)) {
        task.percent = data.percent;
        task.message = data.message;
        this.scheduleRender();
      }
    });
    source.addEventListener('result', (e) => {
      const data = JSON.parse(e.data);
      const task = this.tasks.get(data.taskId);
      if (task) {
        task.state = data.state || task.state;
        task.result = data.result || null;
        task.error = data.error || null;
        if (task.state === 'succeeded') {
          task.percent = 100;
        }
        this.scheduleRender();
      }
    });
    source.addEventListener('end', () => {
      // Every task has finished and the server closes the stream: do not let the browser reconnect.
      source.close();
      this.source = null;
      this.setLive('done', 'finished');
      this.render();
      this.fillMissingResults();
    });
    source.addEventListener('error', () => {
      if (this.disposed || !this.source) {
        return;
      }
      if (source.readyState === EventSource.CLOSED) {
        // Refused outright (not 200 text/event-stream, e.g. 503 when the node has too many
        // streams): follow the batch by polling instead.
        this.source = null;
        this.setLive('polling', 'polling (stream unavailable)');
        this.poll();
      } else {
        this.setLive('reconnecting', 'reconnecting…');
      }
    });
  }

  async poll() {
    if (this.disposed) {
      return;
    }
    if (this.el.dataset.live !== 'polling') {
      this.setLive('polling', 'polling');
    }
    try {
      const batch = await api.get(`/api/batches/${this.batchId}`);
      for (const task of batch.tasks || []) {
        this.applyTask(task);
      }
      this.render();
      if (this.allFinished()) {
        this.setLive('done', 'finished');
        return;
      }
    } catch (e) {
      this.liveLabel.textContent = `polling: ${e.message}`;
    }
    this.pollTimer = setTimeout(() => this.poll(), 1000);
  }

  /** A snapshot entry or a task read over REST. */
  applyTask(task) {
    const entry = this.tasks.get(task.id);
    if (!entry) {
      return;
    }
    entry.state = task.state;
    if (Number.isInteger(task.attempt)) {
      entry.attempt = task.attempt;
    }
    if (task.progress) {
      entry.percent = task.progress.percent || 0;
      entry.message = task.progress.message || null;
    }
    if (task.result) {
      entry.result = task.result;
    }
    if (task.error) {
      entry.error = task.error;
    }
    if (entry.state === 'succeeded') {
      entry.percent = 100;
    }
  }

  /**
   * Renders once per frame at most: a burst of events (the catch-up after the snapshot, many
   * progress steps) then shows only its outcome instead of flickering through every step.
   */
  scheduleRender() {
    renderSoon(this);
  }

  /**
   * A safety net: should a finished task still lack its result or error when the stream ends (the
   * stream carries both, on the terminal state event and in the snapshot), read them from the API.
   */
  async fillMissingResults() {
    const missing = Array.from(this.tasks.values()).some((t) => TERMINAL.has(t.state) && t.state !== 'cancelled' && t.state !== 'expired' && !t.result && !t.error);
    if (!missing) {
      return;
    }
    try {
      const batch = await api.get(`/api/batches/${this.batchId}`);
      for (const task of batch.tasks || []) {
        this.applyTask(task);
      }
      this.render();
    } catch (e) {
      this.notify(`Could not read the results of batch ${shortId(this.batchId)}: ${e.message}`, 'error');
    }
  }

  allFinished() {
    for (const task of this.tasks.values()) {
      if (!TERMINAL.has(task.state)) {
        return false;
      }
    }
    return true;
  }

  setLive(mode, text) {
    this.el.dataset.live = mode;
    this.liveLabel.dataset.mode = mode;
    this.liveLabel.textContent = text;
  }

  render() {
    const counts = { succeeded: 0, failed: 0, cancelled: 0, expired: 0 };
    for (const task of this.tasks.values()) {
      if (counts[task.state] !== undefined) {
        counts[task.state]++;
      }
      task.row.dataset.state = task.state;
      setBadge(task.stateEl, task.state);
      setProgress(task.progress, task.percent, task.state, task.message);
      this.renderResult(task);
    }
    const finished = counts.succeeded + counts.failed + counts.cancelled + counts.expired;
    this.counts.textContent = `${finished} of ${this.tasks.size} finished${counts.failed ? `, ${counts.failed} failed` : ''}${counts.cancelled ? `, ${counts.cancelled} cancelled` : ''}${counts.expired ? `, ${counts.expired} expired` : ''}`;
    this.cancelButton.hidden = finished === this.tasks.size;
  }

  renderResult(task) {
    const key = task.result ? `r${task.result.score}` : task.error ? 'e' : task.state === 'cancelled' ? 'c' : task.state === 'expired' ? 'x' : '';
    if (task.rendered === key) {
      return;
    }
    task.rendered = key;
    const { result } = task;
    if (result && result.score !== undefined) {
      task.row.dataset.score = String(result.score);
      const level = result.score >= 80 ? 'high' : result.score >= 50 ? 'mid' : 'low';
      task.score.replaceChildren(
        h('span.score-value', { dataset: { level } }, String(result.score)),
        h('span.score-bar', { 'aria-hidden': 'true' }, h('span', { style: `width:${result.score}%`, dataset: { level } })));
      task.mandatory.replaceChildren(result.mandatoryMet
        ? h('span.ok', null, '✓ all met')
        : h('span.bad', null, '✗ not met'));
      task.row.dataset.mandatoryMet = String(Boolean(result.mandatoryMet));
      task.breakdown.replaceChildren(breakdownDetails(result.breakdown || []));
    } else if (task.error) {
      const message = typeof task.error === 'string' ? task.error : task.error.message || JSON.stringify(task.error);
      task.score.replaceChildren(h('span.error-text', null, message));
      task.mandatory.replaceChildren();
      task.breakdown.replaceChildren();
    } else if (task.state === 'cancelled') {
      task.score.replaceChildren(h('span.muted', null, 'cancelled'));
    } else if (task.state === 'expired') {
      task.score.replaceChildren(h('span.muted', { title: 'not started by its deadline, so never run' }, 'expired'));
    } else {
      delete task.row.dataset.score;
      delete task.row.dataset.mandatoryMet;
      task.score.replaceChildren(h('span.muted', null, '…'));
      task.mandatory.replaceChildren();
      task.breakdown.replaceChildren();
    }
  }

  async cancel() {
    this.cancelButton.disabled = true;
    try {
      const answer = await api.post(`/api/batches/${this.batchId}/cancel`);
      this.notify(`Batch ${shortId(this.batchId)}: ${answer.cancelled} cancelled, ${answer.cancelling} stopping, ${answer.alreadyFinished} already finished.`);
    } catch (e) {
      this.notify(`Cancel failed: ${e.message}`, 'error');
    } finally {
      this.cancelButton.disabled = false;
    }
  }

  dispose() {
    this.disposed = true;
    if (this.source) {
      this.source.close();
      this.source = null;
    }
    clearTimeout(this.pollTimer);
    this.el.remove();
  }
}

function eventRank(event) {
  if (event.to === 'running') {
    return 1;
  }
  if (TERMINAL.has(event.to)) {
    return 3;
  }
  return event.from === 'running' ? 2 : 0;
}

function stateRank(state, attempt) {
  if (state === 'running') {
    return 1;
  }
  if (TERMINAL.has(state)) {
    return 3;
  }
  return attempt > 0 ? 2 : 0; // pending again after an attempt, or not yet run
}

/**
 * Whether a state event describes a moment before the snapshot the row was last set from, so that
 * it must be skipped. Once an event at or after that moment arrives, every later one applies.
 */
function isBehindSnapshot(task, event, eventId) {
  const point = task.catchUp;
  if (!point) {
    return false;
  }
  let behind;
  if (point.lastEventId !== null && Number.isFinite(eventId)) {
    behind = eventId <= point.lastEventId;
  } else if (TERMINAL.has(event.from)) {
    behind = false; // a manual retry of a finished task: always news
  } else if (event.to === point.state && event.attempt === point.attempt) {
    behind = false; // the very transition the snapshot shows
  } else {
    const attempt = Number.isInteger(event.attempt) ? event.attempt : 0;
    behind = attempt < point.attempt
      || (attempt === point.attempt && eventRank(event) < stateRank(point.state, point.attempt));
  }
  if (!behind) {
    task.catchUp = null;
  }
  return behind;
}

/** Short flow keys from the projects' names ("Harbour bridge retrofit" → "harbour-bridge-retrofit"), unique. */
export function projectKeys(projects) {
  const used = new Set(['rank']);
  return projects.map((project, i) => {
    const base = String(project.name || '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || `match-${i + 1}`;
    let key = base;
    for (let n = 2; used.has(key); n++) {
      key = `${base}-${n}`;
    }
    used.add(key);
    return key;
  });
}

/** The rank task's outcome: a table of rank, project and score, best first, and what was not ranked. */
function rankingTable(company, rank, names) {
  const heading = h('h3', null, `Ranking for ${company.name}`);
  if (rank.state !== 'succeeded' || !rank.result) {
    const why = rank.error ? (typeof rank.error === 'string' ? rank.error : rank.error.message || JSON.stringify(rank.error)) : rank.state;
    return [heading, h('p.error-text', null, `No ranking: the rank task ${rank.state}${why && why !== rank.state ? ` (${why})` : ''}.`)];
  }
  const by = rank.result.by || 'score';
  const rows = (rank.result.ranking || []).map((line) => h('tr', { dataset: { key: line.key, score: String(line[by]) } },
    h('td.num', null, String(line.rank)),
    h('th', { scope: 'row' }, line.project || names.get(line.key) || line.key),
    h('td.num', null, String(line[by]))));
  const parts = [heading, h('table.data.ranking-table', null,
    h('caption.visually-hidden', null, `The projects ranked by ${by}, best first`),
    h('thead', null, h('tr', null,
      h('th', { scope: 'col', class: 'num' }, 'Rank'),
      h('th', { scope: 'col' }, 'Project'),
      h('th', { scope: 'col', class: 'num' }, by === 'score' ? 'Score' : by))),
    h('tbody', null, rows))];
  const unranked = rank.result.unranked || [];
  if (unranked.length) {
    parts.push(h('p.muted', null, `Not ranked: ${unranked.map((u) => `${names.get(u.key) || u.key} (${u.state || 'no score'})`).join(', ')}.`));
  }
  return parts;
}

function breakdownDetails(breakdown) {
  const rows = breakdown.map((item) => h('tr', { dataset: { status: item.status } },
    h('td', null, item.requirement, item.mandatory ? h('span.tag', { title: 'mandatory' }, 'M') : null),
    h('td.num', null, String(item.required)),
    h('td.num', null, item.held === null || item.held === undefined ? '–' : String(item.held)),
    h('td.num', null, String(item.weight)),
    h('td', null, h('span.req-status', { dataset: { status: item.status } }, item.status)),
    h('td.num', null, `${Math.round((item.credit || 0) * 100)}%`)));
  return h('details.breakdown', null,
    h('summary', null, `${breakdown.length} requirement${breakdown.length === 1 ? '' : 's'}`),
    h('table.mini', null,
      h('thead', null, h('tr', null,
        h('th', { scope: 'col' }, 'Requirement'),
        h('th', { scope: 'col' }, 'Needs'),
        h('th', { scope: 'col' }, 'Holds'),
        h('th', { scope: 'col' }, 'Weight'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'Credit'))),
      h('tbody', null, rows)));
}

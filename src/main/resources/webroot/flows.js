// Flows: the recent flows, refreshed every couple of seconds, and a flow view that draws the graph
// of a flow's tasks as SVG (a column per depth, a box per task coloured by its state, a path per
// edge), kept live by the flow's event stream, with Cancel and Retry.

import { api, query } from './api.js';
import { badge, dateTime, h, reconcileRows, renderSoon, setBadge, shortId, time } from './dom.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'expired']);
export const TASK_STATES = ['blocked', 'pending', 'running', 'succeeded', 'failed', 'cancelled', 'expired'];

/** Boxes drawn at most; the rest of a bigger flow is counted, not drawn. */
export const MAX_DRAWN = 200;
const LIST_LIMIT = 15;
const REFRESH_MS = 2000;
const POLL_MS = 1000;

// Geometry of the drawing, in CSS pixels.
const BOX_W = 244;
const BOX_H = 46;
const COL_GAP = 64;
const ROW_GAP = 14;
const PAD = 14;
const TEXT_X = 12;
const STATE_W = 66; // room kept right of the type for the state's word
const KEY_CHARS = 28; // before the text can be measured
const TYPE_CHARS = 20;

/**
 * Places a flow's tasks: a task's column is 1 + the largest column of its parents (roots in 0),
 * rows in the tasks' order within a column, each column centred on the tallest. Only the first
 * `max` tasks in column order are placed; edges only between placed boxes. Pure, no DOM.
 */
export function layoutFlow(tasks, max = MAX_DRAWN) {
  const keys = new Set(tasks.map((t) => t.key));
  const parentsOf = new Map(tasks.map((t) => [t.key, (t.dependsOn || []).filter((k) => keys.has(k))]));
  const childrenOf = new Map(tasks.map((t) => [t.key, []]));
  const waiting = new Map();
  for (const t of tasks) {
    const parents = parentsOf.get(t.key);
    waiting.set(t.key, parents.length);
    for (const parent of parents) {
      childrenOf.get(parent).push(t.key);
    }
  }
  // Kahn's order, without recursion: a chain of thousands of tasks needs no deep stack.
  const column = new Map(tasks.map((t) => [t.key, 0]));
  const ready = tasks.filter((t) => waiting.get(t.key) === 0).map((t) => t.key);
  for (let i = 0; i < ready.length; i++) {
    const key = ready[i];
    for (const child of childrenOf.get(key)) {
      column.set(child, Math.max(column.get(child), column.get(key) + 1));
      waiting.set(child, waiting.get(child) - 1);
      if (waiting.get(child) === 0) {
        ready.push(child);
      }
    }
  }
  const columns = [];
  for (const t of tasks) {
    const c = column.get(t.key);
    (columns[c] ||= []).push(t);
  }
  const drawn = [];
  for (const list of columns) {
    for (const t of list || []) {
      if (drawn.length < max) {
        drawn.push(t);
      }
    }
  }
  const rowsIn = [];
  const nodes = new Map();
  for (const t of drawn) {
    const c = column.get(t.key);
    rowsIn[c] = (rowsIn[c] || 0) + 1;
    nodes.set(t.key, { task: t, key: t.key, col: c, row: rowsIn[c] - 1 });
  }
  const tallest = Math.max(1, ...rowsIn.filter(Boolean));
  const stride = BOX_H + ROW_GAP;
  for (const node of nodes.values()) {
    const offset = ((tallest - rowsIn[node.col]) * stride) / 2;
    node.x = PAD + node.col * (BOX_W + COL_GAP);
    node.y = PAD + offset + node.row * stride;
  }
  const edges = [];
  for (const node of nodes.values()) {
    for (const parentKey of parentsOf.get(node.key)) {
      const parent = nodes.get(parentKey);
      if (parent) {
        edges.push({
          from: parentKey, to: node.key,
          x1: parent.x + BOX_W, y1: parent.y + BOX_H / 2, x2: node.x - 1, y2: node.y + BOX_H / 2,
        });
      }
    }
  }
  const usedColumns = rowsIn.length;
  return {
    nodes: Array.from(nodes.values()),
    edges,
    columns: usedColumns,
    hidden: tasks.length - drawn.length,
    width: PAD * 2 + usedColumns * BOX_W + Math.max(0, usedColumns - 1) * COL_GAP,
    height: PAD * 2 + tallest * stride - ROW_GAP,
  };
}

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    el.setAttribute(key, String(value));
  }
  el.append(...children);
  return el;
}

function clip(text, chars) {
  const value = String(text);
  return value.length > chars ? `${value.slice(0, chars - 1)}…` : value;
}

/** Shortens an SVG text to `width` pixels, with an ellipsis, once it is in the document and can be measured. */
function fitText(text, full, width) {
  if (!text.isConnected || typeof text.getComputedTextLength !== 'function') {
    return;
  }
  text.textContent = full;
  if (text.getComputedTextLength() <= width) {
    return;
  }
  let lo = 0;
  let hi = full.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    text.textContent = `${full.slice(0, mid)}…`;
    if (text.getComputedTextLength() <= width) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  text.textContent = `${full.slice(0, lo)}…`;
}

/** Running while any task is unfinished; else failed, cancelled or succeeded as the flow's counters say. */
function derivedState(tasks) {
  let failed = false;
  let cancelled = false;
  for (const t of tasks) {
    if (!TERMINAL.has(t.state)) {
      return 'running';
    }
    failed ||= t.state === 'failed' || t.state === 'expired';
    cancelled ||= t.state === 'cancelled';
  }
  return failed ? 'failed' : cancelled ? 'cancelled' : 'succeeded';
}

function errorText(error) {
  if (!error) {
    return '';
  }
  return typeof error === 'string' ? error : error.message || error.type || JSON.stringify(error);
}

let viewCount = 0;

/**
 * One flow, drawn and followed. `onUpdate(tasks, view)` is called after each render with the
 * tasks (key, id, type, state, result, error, ...), for a page that waits on one of them.
 */
export class FlowView {
  constructor(flowId, { notify, title, eventsUrl, onUpdate, onEnd } = {}) {
    this.flowId = flowId;
    this.notify = notify || (() => {});
    this.onUpdate = onUpdate || null;
    this.onEnd = onEnd || null;
    this.eventsUrl = eventsUrl || null;
    this.flow = null;
    this.tasks = new Map(); // by task id
    this.byKey = new Map();
    this.source = null;
    this.pollTimer = 0;
    this.disposed = false;
    this.renderQueued = false;
    this.selected = null;
    this.markerId = `flow-arrow-${++viewCount}`;

    this.titleEl = h('h3', null, title || `flow ${shortId(flowId)}`);
    this.stateEl = badge('running');
    this.counts = h('span.flow-counts');
    this.liveLabel = h('span.live', { role: 'status' }, 'loading…');
    this.cancelButton = h('button.btn.small.secondary', { type: 'button', onclick: () => this.cancel() }, 'Cancel');
    this.retryButton = h('button.btn.small.secondary', { type: 'button', onclick: () => this.retry() }, 'Retry');
    this.cancelButton.disabled = true;
    this.retryButton.disabled = true;
    this.graph = h('div.flow-graph');
    this.note = h('p.flow-note.muted', { hidden: true });
    this.detail = h('div.flow-detail', { hidden: true });
    this.el = h('article.flow-view', { dataset: { flowId, live: 'loading' }, 'aria-label': `flow ${flowId}` },
      h('header.flow-head', null,
        h('div', null, this.titleEl, h('div.muted.mono', { title: flowId }, `flow ${flowId}`)),
        h('div.flow-meta', null, this.stateEl, this.counts, this.liveLabel, this.cancelButton, this.retryButton)),
      this.graph,
      this.note,
      h('ul.flow-legend', { 'aria-label': 'Colours of the task states' },
        TASK_STATES.map((s) => h('li', null, h('span', { class: `flow-swatch state-${s}`, 'aria-hidden': 'true' }), s))),
      this.detail);
  }

  /** Reads the flow and draws it; follows its stream while it runs (unless `follow` is false). */
  async load({ follow = true } = {}) {
    let flow;
    try {
      flow = await api.get(`/api/flows/${this.flowId}`);
    } catch (e) {
      if (!this.disposed) {
        this.setLive('error', `cannot read the flow: ${e.message}`);
      }
      return null;
    }
    if (this.disposed) {
      return null;
    }
    this.flow = flow;
    this.eventsUrl = flow.eventsUrl || this.eventsUrl;
    if (flow.name) {
      this.titleEl.textContent = flow.name;
    }
    const known = flow.tasks.length === this.byKey.size && flow.tasks.every((t) => this.byKey.has(t.key));
    for (const t of flow.tasks) {
      const entry = this.tasks.get(t.id) || {};
      Object.assign(entry, {
        key: t.key, id: t.id, type: t.type, queue: t.queue, join: t.join, dependsOn: t.dependsOn || [],
        state: t.state, attempt: t.attempt, result: t.result, error: t.error,
      });
      this.tasks.set(t.id, entry);
      this.byKey.set(t.key, entry);
    }
    if (!known) {
      this.draw();
    }
    this.render();
    if (flow.state === 'running' && follow && !this.source) {
      this.follow();
    } else if (flow.state !== 'running' && !this.source) {
      this.setLive('done', 'finished');
    }
    return flow;
  }

  draw() {
    const tasks = Array.from(this.byKey.values());
    const layout = layoutFlow(tasks);
    this.layout = layout;
    const marker = svg('marker', {
      id: this.markerId, viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse',
    }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'flow-arrow' }));
    const edges = svg('g', { class: 'flow-edges' });
    for (const e of layout.edges) {
      const bend = Math.max(24, (e.x2 - e.x1) / 2);
      edges.append(svg('path', {
        class: 'flow-edge',
        d: `M${e.x1},${e.y1} C${e.x1 + bend},${e.y1} ${e.x2 - bend},${e.y2} ${e.x2},${e.y2}`,
        'marker-end': `url(#${this.markerId})`,
        'data-from': e.from,
        'data-to': e.to,
      }));
    }
    const nodes = svg('g', { class: 'flow-nodes' });
    const fitted = [];
    for (const n of layout.nodes) {
      const entry = this.byKey.get(n.key);
      const tip = svg('title');
      const stateText = svg('text', { class: 'flow-state', x: BOX_W - TEXT_X + 2, y: 36, 'text-anchor': 'end' });
      const keyText = svg('text', { class: 'flow-key', x: TEXT_X, y: 19 }, clip(n.key, KEY_CHARS));
      const typeText = svg('text', { class: 'flow-type', x: TEXT_X, y: 36 }, clip(entry.type, TYPE_CHARS));
      const g = svg('g', {
        class: `flow-node state-${entry.state}`, transform: `translate(${n.x},${n.y})`, tabindex: 0, role: 'button',
        'data-key': n.key, 'data-task-id': entry.id, 'data-col': n.col, 'data-row': n.row,
      }, tip, svg('rect', { width: BOX_W, height: BOX_H, rx: 8, ry: 8 }), keyText, typeText, stateText);
      fitted.push([keyText, n.key, BOX_W - 2 * TEXT_X], [typeText, entry.type, BOX_W - 2 * TEXT_X - STATE_W]);
      g.addEventListener('click', () => this.select(n.key));
      g.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          this.select(n.key);
        }
      });
      Object.assign(entry, { g, tip, stateText, shown: null });
      nodes.append(g);
    }
    const picture = svg('svg', {
      class: 'flow-svg', width: layout.width, height: layout.height, viewBox: `0 0 ${layout.width} ${layout.height}`,
      role: 'group', 'aria-label': `the ${tasks.length} tasks of the flow in ${layout.columns} column${layout.columns === 1 ? '' : 's'} by depth`,
    }, svg('defs', null, marker), edges, nodes);
    this.graph.replaceChildren(picture);
    for (const [text, full, width] of fitted) {
      fitText(text, full, width);
    }
    this.el.dataset.nodes = String(layout.nodes.length);
    this.el.dataset.edges = String(layout.edges.length);
    this.note.hidden = !layout.hidden;
    this.note.textContent = layout.hidden
      ? `${layout.hidden} more task${layout.hidden === 1 ? ' is' : 's are'} not drawn: the first ${layout.nodes.length} of ${tasks.length} are, by column.`
      : '';
  }

  follow() {
    if (typeof EventSource !== 'function' || !this.eventsUrl) {
      this.poll();
      return;
    }
    const source = new EventSource(api.url(this.eventsUrl));
    this.source = source;
    source.addEventListener('open', () => this.setLive('sse', 'live'));
    source.addEventListener('snapshot', (e) => {
      this.setLive('sse', 'live');
      for (const t of JSON.parse(e.data).tasks || []) {
        const entry = this.tasks.get(t.id);
        if (entry) {
          Object.assign(entry, { state: t.state, attempt: t.attempt ?? entry.attempt });
          if (t.result !== undefined && t.result !== null) {
            entry.result = t.result;
          }
          if (t.error !== undefined && t.error !== null) {
            entry.error = t.error;
          }
          // Replayed events up to this one are already in the snapshot: they must not move it back.
          entry.seenEventId = Number.isInteger(t.lastEventId) ? t.lastEventId : null;
        }
      }
      this.scheduleRender();
    });
    // A durable task's suspend and resume move its state as any transition does.
    const onState = (e) => {
      const data = JSON.parse(e.data);
      const entry = this.tasks.get(data.taskId);
      const id = Number(e.lastEventId);
      if (!entry || (entry.seenEventId !== null && entry.seenEventId !== undefined && Number.isFinite(id) && id <= entry.seenEventId)) {
        return;
      }
      entry.state = data.to;
      if (Number.isInteger(data.attempt)) {
        entry.attempt = data.attempt;
      }
      if (TERMINAL.has(data.from) && !TERMINAL.has(data.to)) {
        entry.result = null; // retried: the old outcome no longer holds
        entry.error = null;
      }
      if (TERMINAL.has(data.to)) {
        entry.result = data.result ?? entry.result ?? null;
        entry.error = data.error ?? entry.error ?? null;
      }
      this.scheduleRender();
    };
    for (const name of ['state', 'suspended', 'resumed']) {
      source.addEventListener(name, onState);
    }
    source.addEventListener('result', (e) => {
      const data = JSON.parse(e.data);
      const entry = this.tasks.get(data.taskId);
      if (entry) {
        entry.state = data.state || entry.state;
        entry.result = data.result ?? null;
        entry.error = data.error ?? null;
        this.scheduleRender();
      }
    });
    source.addEventListener('end', () => {
      // Every task has ended and the server closes the stream: read the flow once, for its state.
      source.close();
      this.source = null;
      this.setLive('done', 'finished');
      this.render();
      this.load({ follow: false }).then(() => this.ended());
    });
    source.addEventListener('error', () => {
      if (this.disposed || this.source !== source) {
        return;
      }
      if (source.readyState === EventSource.CLOSED) {
        this.source = null;
        this.poll();
      } else {
        this.setLive('reconnecting', 'reconnecting…');
      }
    });
  }

  async poll() {
    clearTimeout(this.pollTimer);
    if (this.disposed) {
      return;
    }
    this.setLive('polling', 'polling');
    const flow = await this.load({ follow: false });
    if (flow && flow.state !== 'running') {
      this.setLive('done', 'finished');
      this.ended();
      return;
    }
    if (!this.disposed) {
      this.pollTimer = setTimeout(() => this.poll(), POLL_MS);
    }
  }

  scheduleRender() {
    renderSoon(this);
  }

  render() {
    const tasks = Array.from(this.byKey.values());
    const counts = Object.fromEntries(TASK_STATES.map((s) => [s, 0]));
    for (const t of tasks) {
      counts[t.state] = (counts[t.state] || 0) + 1;
      if (t.g && t.shown !== t.state) {
        t.shown = t.state;
        t.g.setAttribute('class', `flow-node state-${t.state}${this.selected === t.key ? ' selected' : ''}`);
        t.g.dataset.state = t.state;
        t.stateText.textContent = t.state;
        t.g.setAttribute('aria-label', `${t.key}, ${t.type}: ${t.state}`);
      }
      if (t.tip) {
        const error = errorText(t.error);
        t.tip.textContent = `${t.key} (${t.type} on ${t.queue}): ${t.state}${t.attempt ? `, attempt ${t.attempt}` : ''}${error ? ` — ${error}` : ''}`;
      }
    }
    const state = derivedState(tasks) === 'running' || !this.flow ? derivedState(tasks) : this.flow.state;
    this.el.dataset.state = state;
    setBadge(this.stateEl, state);
    const bad = [
      counts.failed ? `${counts.failed} failed` : '',
      counts.expired ? `${counts.expired} expired` : '',
      counts.cancelled ? `${counts.cancelled} cancelled` : '',
      counts.running ? `${counts.running} running` : '',
    ].filter(Boolean);
    this.counts.textContent = `${counts.succeeded}/${tasks.length} succeeded${bad.length ? ` · ${bad.join(', ')}` : ''}`;
    this.cancelButton.disabled = !tasks.some((t) => !TERMINAL.has(t.state));
    this.retryButton.disabled = !tasks.some((t) => t.state === 'failed' || t.state === 'expired');
    if (this.selected) {
      this.showDetail(this.selected);
    }
    if (this.onUpdate) {
      this.onUpdate(tasks, this);
    }
  }

  select(key) {
    const previous = this.selected && this.byKey.get(this.selected);
    if (previous && previous.g) {
      previous.g.classList.remove('selected');
    }
    this.selected = this.selected === key ? null : key;
    const entry = this.selected && this.byKey.get(key);
    if (entry && entry.g) {
      entry.g.classList.add('selected');
    }
    this.showDetail(this.selected);
  }

  showDetail(key) {
    const t = key && this.byKey.get(key);
    this.detail.hidden = !t;
    if (!t) {
      this.detail.replaceChildren();
      return;
    }
    const outcome = t.error ? h('span.error-text', null, errorText(t.error))
      : t.result !== null && t.result !== undefined ? h('code', null, clip(JSON.stringify(t.result), 300)) : h('span.muted', null, '–');
    const row = (label, ...value) => [h('dt', null, label), h('dd', null, ...value)];
    this.detail.replaceChildren(h('dl', null,
      row('Task', h('strong', null, t.key), ' ', h('a.mono', { href: `api/tasks/${t.id}`, target: '_blank', rel: 'noopener', title: t.id }, shortId(t.id))),
      row('Type', `${t.type} on ${t.queue}`),
      row('State', badge(t.state), t.attempt ? ` attempt ${t.attempt}` : ''),
      row('Waits for', t.dependsOn.length ? `${t.join || 'all'} of ${t.dependsOn.join(', ')}` : 'nothing (a root)'),
      row(t.error ? 'Error' : 'Result', outcome)));
  }

  ended() {
    if (this.onEnd && !this.disposed) {
      this.onEnd(this);
    }
  }

  setLive(mode, text) {
    this.el.dataset.live = mode;
    this.liveLabel.dataset.mode = mode;
    this.liveLabel.textContent = text;
  }

  async cancel() {
    this.cancelButton.disabled = true;
    try {
      const answer = await api.post(`/api/flows/${this.flowId}/cancel`);
      this.notify(`Flow ${shortId(this.flowId)}: ${answer.cancelled} cancelled, ${answer.cancelling} stopping.`);
      if (!this.source) {
        this.load();
      }
    } catch (e) {
      this.notify(`Cancel failed: ${e.message}`, 'error');
      this.render();
    }
  }

  async retry() {
    this.retryButton.disabled = true;
    try {
      const answer = await api.post(`/api/flows/${this.flowId}/retry`);
      const n = (answer.retried || []).length;
      this.notify(`Flow ${shortId(this.flowId)}: ${n} task${n === 1 ? '' : 's'} retried.`);
      if (!this.source) {
        this.load(); // running again: follow its stream anew
      }
    } catch (e) {
      this.notify(`Retry failed: ${e.message}`, 'error');
      this.render();
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

/**
 * The Flows section: the newest flows (filtered by state), refreshed every couple of seconds; a
 * click on one opens its view under the list. Returns {start, refresh, open}.
 */
export function flowsSection(root, { notify }) {
  const tbody = root.querySelector('tbody');
  const table = tbody.closest('table');
  const status = root.querySelector('.status');
  const stateFilter = root.querySelector('#flows-state');
  const viewHolder = root.querySelector('#flow-view');
  let view = null;
  let timer = 0;
  let generation = 0;

  function setStatus(text, isError) {
    status.textContent = text;
    status.hidden = !text;
    status.classList.toggle('error', Boolean(isError));
  }

  function update(row, f) {
    const c = row.cells;
    row.dataset.state = f.state;
    row.classList.toggle('selected', Boolean(view && view.flowId === f.id));
    const button = c[0].querySelector('button');
    const name = f.name || `flow ${shortId(f.id)}`;
    if (button.textContent !== name) {
      button.textContent = name;
    }
    setBadge(c[1].firstChild, f.state);
    const succeeded = f.size - f.unfinished - f.failed - f.cancelled;
    c[2].textContent = `${succeeded}/${f.size}`;
    c[2].title = `${succeeded} of ${f.size} tasks succeeded, ${f.unfinished} unfinished, ${f.failed} failed or expired, ${f.cancelled} cancelled`;
    const also = [f.failed ? `${f.failed} failed` : '', f.cancelled ? `${f.cancelled} cancelled` : ''].filter(Boolean).join(', ');
    c[3].textContent = also;
    c[4].textContent = time(f.createdAt);
    c[4].title = dateTime(f.createdAt);
  }

  function render(flows) {
    reconcileRows(tbody, flows, (f) => f.id,
      (f) => h('tr', { dataset: { flowId: f.id } },
        h('th', { scope: 'row' },
          h('button.link', { type: 'button', 'aria-label': `Open flow ${f.name || f.id}` }),
          h('div.muted.mono', { title: f.id }, shortId(f.id))),
        h('td', null, badge(f.state)),
        h('td.num', { 'data-col': 'done' }),
        h('td.error-text', { 'data-col': 'also' }),
        h('td.num', { 'data-col': 'created' })),
      update);
    let empty = table.querySelector('tbody.empty-body');
    if (!flows.length) {
      if (!empty) {
        empty = h('tbody.empty-body', null, h('tr', null, h('td.empty', { colspan: table.tHead.rows[0].cells.length },
          'No flows yet. Submit one with POST /api/flows, or tick “rank when all are done” in the qualification match.')));
        table.append(empty);
      }
    } else if (empty) {
      empty.remove();
    }
    root.dataset.count = String(flows.length);
  }

  async function refresh() {
    clearTimeout(timer);
    const mine = ++generation;
    try {
      const page = await api.get(`/api/flows${query({ state: stateFilter.value, limit: LIST_LIMIT })}`);
      if (mine !== generation) {
        return;
      }
      render(page.flows || []);
      setStatus('');
    } catch (e) {
      if (mine !== generation) {
        return;
      }
      setStatus(e.message, true);
    }
    timer = setTimeout(refresh, REFRESH_MS);
  }

  function open(flowId) {
    if (view) {
      view.dispose();
    }
    view = new FlowView(flowId, { notify, onEnd: () => refresh() });
    viewHolder.replaceChildren(view.el);
    for (const row of tbody.rows) {
      row.classList.toggle('selected', row.dataset.flowId === flowId);
    }
    view.load();
    return view;
  }

  tbody.addEventListener('click', (event) => {
    const row = event.target.closest('tr[data-flow-id]');
    if (row && !event.target.closest('a')) {
      open(row.dataset.flowId);
    }
  });
  stateFilter.addEventListener('change', refresh);

  return { start: refresh, refresh, open };
}

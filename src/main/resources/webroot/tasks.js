// The recent-tasks and dead-letter tables: one page of 25 at a time, keyset paged (the API's
// `next` cursor), refreshed in place every couple of seconds. Never more than a page in the DOM.

import { api, query } from './api.js';
import { badge, dateTime, h, num, progressBar, reconcileRows, setBadge, setProgress, shortId, time } from './dom.js';

export const PAGE_SIZE = 25;

/** A short human description of what a task is about. */
export function summary(task) {
  const payload = task.payload || {};
  if (task.type === 'qualification-match') {
    const company = payload.company && payload.company.name;
    const project = payload.project && payload.project.name;
    let text = `${company || '?'} → ${project || '?'}`;
    if (task.result && task.result.score !== undefined) {
      text += ` · score ${task.result.score}${task.result.mandatoryMet === false ? ' (mandatory not met)' : ''}`;
    }
    return text;
  }
  if (task.type === 'sleep') {
    return `sleep ${num(payload.ms || 0)} ms${payload.steps ? ` in ${payload.steps} steps` : ''}`;
  }
  return task.type;
}

function errorMessage(task) {
  const error = task.error;
  if (!error) {
    return '';
  }
  if (typeof error === 'string') {
    return error;
  }
  return error.message || error.type || JSON.stringify(error);
}

/**
 * A table of one page of tasks. `params()` gives the filters; `columns` build and update a row.
 */
export class PagedTaskTable {
  constructor({ tbody, prev, next, pageLabel, status, params, createRow, updateRow, intervalMs = 2000, emptyText }) {
    Object.assign(this, { tbody, prev, next, pageLabel, status, params, createRow, updateRow, intervalMs, emptyText });
    this.cursors = [null];
    this.nextCursor = null;
    this.generation = 0;
    this.inflight = null;
    this.timer = 0;
    prev.addEventListener('click', () => this.go(-1));
    next.addEventListener('click', () => this.go(+1));
  }

  start() {
    this.refresh();
  }

  /** Filters changed: back to the first page. */
  reset() {
    this.cursors = [null];
    this.nextCursor = null;
    this.generation++;
    this.refresh();
  }

  go(direction) {
    if (direction > 0 && this.nextCursor) {
      this.cursors.push(this.nextCursor);
    } else if (direction < 0 && this.cursors.length > 1) {
      this.cursors.pop();
    } else {
      return;
    }
    this.generation++;
    this.refresh();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), this.intervalMs);
  }

  async refresh() {
    clearTimeout(this.timer);
    const generation = this.generation;
    const cursor = this.cursors[this.cursors.length - 1];
    const path = `/api/tasks${query({ ...this.params(), limit: PAGE_SIZE, after: cursor })}`;
    const call = api.get(path);
    this.inflight = call;
    try {
      const page = await call;
      if (generation !== this.generation) {
        return; // the user paged or filtered meanwhile; that request's answer will render
      }
      const tasks = page.tasks || [];
      if (!tasks.length && !page.next && this.cursors.length > 1) {
        // The page emptied under us (tasks retried or deleted): step back. (An empty page with a
        // next is a window of the journal where the filter matched nothing: Next reads on.)
        this.cursors.pop();
        this.generation++;
        this.refresh();
        return;
      }
      this.nextCursor = page.next || null;
      this.render(tasks);
      this.setStatus(tasks.length < PAGE_SIZE && page.next
        ? 'A page reads up to 10,000 tasks of the journal: Next reads on for more matches.' : '');
    } catch (e) {
      if (generation === this.generation) {
        this.setStatus(e.message, true);
      }
    } finally {
      if (this.inflight === call) {
        this.inflight = null;
        if (generation === this.generation) {
          this.schedule();
        }
      }
    }
  }

  render(tasks) {
    reconcileRows(this.tbody, tasks, (t) => t.id, this.createRow, this.updateRow);
    const table = this.tbody.closest('table');
    let empty = table.querySelector('tbody.empty-body');
    if (!tasks.length) {
      if (!empty) {
        const cols = table.tHead ? table.tHead.rows[0].cells.length : 1;
        empty = h('tbody.empty-body', null, h('tr', null, h('td.empty', { colspan: cols }, this.emptyText || 'Nothing here.')));
        table.append(empty);
      }
    } else if (empty) {
      empty.remove();
    }
    const page = this.cursors.length;
    this.pageLabel.textContent = `page ${page}${tasks.length ? ` · ${tasks.length} shown` : ''}`;
    this.prev.disabled = page <= 1;
    this.next.disabled = !this.nextCursor;
    this.tbody.closest('section').dataset.count = String(tasks.length);
  }

  setStatus(text, isError) {
    this.status.textContent = text;
    this.status.hidden = !text;
    this.status.classList.toggle('error', Boolean(isError));
  }
}

function idCell(task) {
  return h('td.mono', { title: task.id }, h('a', { href: `api/tasks/${task.id}`, target: '_blank', rel: 'noopener' }, shortId(task.id)));
}

/**
 * The recent tasks, each with a button that opens its steps ({@code onSteps(id)}): a durable
 * task's timeline of steps and the wait it is in.
 */
export function recentTasksTable(root, params, { onSteps } = {}) {
  return new PagedTaskTable({
    tbody: root.querySelector('tbody'),
    prev: root.querySelector('[data-page=prev]'),
    next: root.querySelector('[data-page=next]'),
    pageLabel: root.querySelector('.page-label'),
    status: root.querySelector('.status'),
    params,
    emptyText: 'No tasks yet.',
    createRow(task) {
      return h('tr', null,
        idCell(task),
        h('td', { 'data-col': 'type' }, task.type),
        h('td', { 'data-col': 'queue' }, task.queue),
        h('td', { 'data-col': 'state' }, badge(task.state)),
        h('td.num', { 'data-col': 'attempt' }),
        h('td', { 'data-col': 'progress' }, progressBar(`progress of task ${shortId(task.id)}`)),
        h('td.summary', { 'data-col': 'summary' }),
        h('td.num', { 'data-col': 'updated' }),
        h('td.actions', null, stepsButton(task, onSteps)));
    },
    updateRow(row, task) {
      row.dataset.state = task.state;
      if (task.schedule) {
        row.dataset.schedule = task.schedule;
        row.dataset.scheduledFor = task.scheduledFor;
      }
      const cells = row.cells;
      setBadge(cells[3].firstChild, task.state);
      cells[4].textContent = `${task.attempt}/${task.maxAttempts}`;
      const percent = task.state === 'succeeded' ? 100 : (task.progress && task.progress.percent) || 0;
      setProgress(cells[5].firstChild, percent, task.state, task.progress && task.progress.message);
      const about = task.schedule ? `${summary(task)} · schedule “${task.schedule}”, tick ${time(task.scheduledFor)}` : summary(task);
      const text = task.state === 'failed' || task.state === 'cancelled' ? `${about}${errorMessage(task) ? ` — ${errorMessage(task)}` : ''}`
        : task.state === 'expired' ? `${about} — not started by its deadline, ${time(task.startBy)}` : about;
      if (cells[6].textContent !== text) {
        cells[6].textContent = text;
        cells[6].title = task.schedule ? `${text} (tick ${dateTime(task.scheduledFor)})` : text;
      }
      cells[7].textContent = time(task.updatedAt);
      cells[7].title = dateTime(task.updatedAt);
    },
  });
}

function stepsButton(task, onSteps) {
  const button = h('button.btn.secondary.small', { type: 'button', 'aria-label': `Steps of task ${task.id}`, 'data-steps': task.id }, 'Steps');
  button.addEventListener('click', () => onSteps && onSteps(task.id));
  return button;
}

export function deadLetterTable(root, params, { onRetry }) {
  return new PagedTaskTable({
    tbody: root.querySelector('tbody'),
    prev: root.querySelector('[data-page=prev]'),
    next: root.querySelector('[data-page=next]'),
    pageLabel: root.querySelector('.page-label'),
    status: root.querySelector('.status'),
    params,
    emptyText: 'No dead letters. Every task that ran out of attempts would be listed here.',
    createRow(task) {
      const button = h('button.btn.small', { type: 'button', 'aria-label': `Retry task ${task.id}` }, 'Retry');
      button.addEventListener('click', () => onRetry(task.id, button));
      return h('tr', null,
        idCell(task),
        h('td', null, task.type),
        h('td', null, task.queue),
        h('td.num', { 'data-col': 'attempts' }),
        h('td.error-text', { 'data-col': 'error' }),
        h('td.num', { 'data-col': 'failed-at' }),
        h('td.actions', null, button));
    },
    updateRow(row, task) {
      const cells = row.cells;
      const button = cells[6].firstChild;
      if (button.dataset.busy !== 'true') {
        button.disabled = false; // a retried task that failed again comes back in the same row
      }
      cells[3].textContent = `${task.attempt}/${task.maxAttempts}`;
      const message = errorMessage(task) || '(no error recorded)';
      if (cells[4].textContent !== message) {
        cells[4].textContent = message;
        cells[4].title = message;
      }
      const at = task.finishedAt || task.updatedAt;
      cells[5].textContent = dateTime(at);
    },
  });
}

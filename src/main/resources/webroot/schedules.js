// The schedules table: every schedule with its cadence, next fire time, last result, skipped ticks
// and last error, refreshed in place every couple of seconds, with a Pause / Resume button each.
// Schedules belong to no tenant: a key bound to one is refused (403), and the table says so.

import { api } from './api.js';
import { badge, dateTime, h, num, reconcileRows, setBadge, shortId, time } from './dom.js';

const REFRESH_MS = 2000;

const DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** "PT2S" → "2 s", "PT1H30M" → "1 h 30 min", "P1D" → "1 d"; anything else as it is. */
export function duration(iso) {
  const m = DURATION.exec(iso || '');
  if (!m || !m.slice(1).some(Boolean)) {
    return iso || '';
  }
  const parts = [[m[1], 'd'], [m[2], 'h'], [m[3], 'min'], [m[4], 's']]
    .filter(([value]) => value && Number(value) !== 0)
    .map(([value, unit]) => `${Number(value)} ${unit}`);
  return parts.length ? parts.join(' ') : iso;
}

/** A <time> element: the time of day, or the date too when it is not today here. */
function when(iso) {
  const date = new Date(iso);
  const today = !Number.isNaN(date.getTime()) && date.toDateString() === new Date().toDateString();
  return h('time', { datetime: iso, title: dateTime(iso) }, today ? time(iso) : dateTime(iso));
}

/** The instant as a clock in `zone` shows it (a cron is read there), or '' when this browser does not know the zone. */
function inZone(iso, zone) {
  try {
    return new Date(iso).toLocaleString(undefined, { hour12: false, timeZone: zone, timeZoneName: 'short' });
  } catch {
    return '';
  }
}

function cadence(schedule) {
  const zone = h('span.muted.zone', null, schedule.timezone || 'UTC');
  if (schedule.cron) {
    return [h('code', { title: 'cron: minute hour day-of-month month day-of-week' }, schedule.cron), ' ', zone];
  }
  return [h('span', { title: `every ${schedule.every}` }, `every ${duration(schedule.every)}`), ' ', zone];
}

function nextFire(schedule) {
  if (schedule.paused) {
    // No tick fires while paused, nor is owed after: a resume fires the next one after it.
    const would = (schedule.nextFireTimes || [])[0];
    return h('span.muted', { title: would ? `resumed now, it would fire next at ${dateTime(would)}` : '' }, 'paused');
  }
  if (!schedule.nextFireAt) {
    return h('span.muted', null, 'none');
  }
  const later = (schedule.nextFireTimes || []).slice(1).map(dateTime).join(', ');
  const there = schedule.cron ? inZone(schedule.nextFireAt, schedule.timezone) : '';
  const el = when(schedule.nextFireAt);
  el.title = `${dateTime(schedule.nextFireAt)}${there ? ` (${there} in ${schedule.timezone})` : ''}${later ? `; then ${later}` : ''}`;
  return el;
}

function taskLink(id) {
  return h('a.mono', { href: `api/tasks/${id}`, target: '_blank', rel: 'noopener', title: id }, shortId(id));
}

function lastResult(tick) {
  if (!tick) {
    return [h('span.muted', null, 'no tick yet')];
  }
  const parts = [badge(tick.outcome)];
  if (tick.outcome === 'fired') {
    if (tick.taskId) {
      parts.push(' ', taskLink(tick.taskId));
    }
    if (tick.taskState) {
      parts.push(' ', badge(tick.taskState));
    } else if (tick.taskId) {
      parts.push(' ', h('span.muted', { title: 'the task is no longer in the journal' }, 'gone'));
    }
  } else {
    parts.push(' ', h('span.reason', { title: tick.detail || '' }, tick.reason || 'skipped'));
  }
  parts.push(' ', h('span.muted.tick', null, 'tick ', when(tick.tickAt)));
  return parts;
}

function lastError(error) {
  if (!error) {
    return [];
  }
  return [h('span.clip', null, h('span.muted', null, when(error.tickAt), ' '), error.detail || '(no detail recorded)')];
}

// The key of what a cell shows: it is rebuilt only when that changes, so that a refresh leaves
// links, focus and selection alone.
function fill(cell, key, build) {
  if (cell.dataset.shown !== key) {
    cell.dataset.shown = key;
    cell.replaceChildren(...build());
  }
}

/**
 * The schedules section: `root` holds a table whose tbody it fills, and a status paragraph.
 * `notify(message, kind)` tells of a pause or resume and its errors.
 */
export function schedulesTable(root, { notify }) {
  const tbody = root.querySelector('tbody');
  const status = root.querySelector('.status');
  const table = tbody.closest('table');
  let timer = 0;
  let stopped = false;
  let generation = 0; // an answer older than a pause or resume is not shown over it

  function setStatus(text, kind) {
    status.textContent = text;
    status.hidden = !text;
    status.classList.toggle('error', kind === 'error');
  }

  function showState(row, schedule) {
    row.dataset.paused = String(Boolean(schedule.paused));
    const cell = row.cells[6];
    const state = cell.querySelector('.badge');
    state.textContent = schedule.paused ? 'paused' : 'running';
    state.dataset.state = schedule.paused ? 'paused' : 'running';
    state.title = schedule.paused && schedule.changedAt
      ? `paused since ${dateTime(schedule.changedAt)}${schedule.changedBy ? ` by ${schedule.changedBy}` : ''}` : '';
    const button = cell.querySelector('button');
    if (button.dataset.busy !== 'true') {
      button.textContent = schedule.paused ? 'Resume' : 'Pause';
      button.setAttribute('aria-label', `${schedule.paused ? 'Resume' : 'Pause'} schedule ${schedule.name}`);
    }
  }

  function update(row, s) {
    const c = row.cells;
    const tick = s.lastTick;
    fill(c[1], `${s.cron || ''}|${s.every || ''}|${s.timezone}`, () => cadence(s));
    fill(c[2], `${s.paused}|${s.nextFireAt}|${(s.nextFireTimes || []).join(',')}`, () => [nextFire(s)]);
    c[3].dataset.outcome = tick ? tick.outcome : '';
    fill(c[3], tick ? `${tick.tickAt}|${tick.outcome}|${tick.taskId}|${Boolean(tick.taskState)}|${tick.reason}|${tick.detail}` : '',
      () => lastResult(tick));
    if (tick && tick.taskState) {
      const state = c[3].querySelectorAll('.badge')[1];
      if (state) {
        setBadge(state, tick.taskState); // a task that ran since: only its badge changes
      }
    }
    c[4].textContent = num(s.skippedTicks);
    c[4].classList.toggle('warn', s.skippedTicks > 0);
    const error = s.lastError;
    fill(c[5], error ? `${error.tickAt}|${error.detail}` : '', () => lastError(error));
    c[5].title = error ? `tick ${dateTime(error.tickAt)}, decided ${dateTime(error.at)}: ${error.detail || ''}` : '';
    showState(row, s);
  }

  function render(schedules) {
    reconcileRows(tbody, schedules, (s) => s.name,
      (s) => h('tr', { dataset: { schedule: s.name } },
        h('th', { scope: 'row' }, s.name,
          s.origin === 'config' ? h('span.tag', { title: 'declared in a node\'s config' }, 'config') : null),
        h('td.cadence', { 'data-col': 'cadence' }),
        h('td', { 'data-col': 'next' }),
        h('td.last', { 'data-col': 'last' }),
        h('td.num', { 'data-col': 'skipped' }),
        h('td.error-text', { 'data-col': 'error' }),
        h('td.flow', { 'data-col': 'state' }, h('span.badge'), h('button.pause-toggle', { type: 'button' }))),
      update);
    let empty = table.querySelector('tbody.empty-body');
    if (!schedules.length) {
      if (!empty) {
        const cols = table.tHead.rows[0].cells.length;
        empty = h('tbody.empty-body', null, h('tr', null, h('td.empty', { colspan: cols },
          'No schedules. Make one with POST /api/schedules: a task at each tick of a cron or an interval.')));
        table.append(empty);
      }
    } else if (empty) {
      empty.remove();
    }
    root.dataset.count = String(schedules.length);
  }

  async function refresh() {
    clearTimeout(timer);
    if (stopped) {
      return;
    }
    const mine = ++generation;
    try {
      const answer = await api.get('/api/schedules');
      if (mine !== generation) {
        return; // a newer refresh renders, and times the next
      }
      render(answer.schedules || []);
      setStatus('');
    } catch (e) {
      if (mine !== generation) {
        return;
      }
      if (e.status === 403) {
        // Schedules belong to no tenant; this key will not see them until the page signs in anew.
        stopped = true;
        render([]);
        table.hidden = true;
        setStatus(`Schedules are not shown to this key: ${e.message}`);
        root.dataset.forbidden = 'true';
        return;
      }
      setStatus(e.message, 'error');
    }
    clearTimeout(timer);
    timer = setTimeout(refresh, REFRESH_MS);
  }

  tbody.addEventListener('click', async (event) => {
    const button = event.target.closest('button.pause-toggle');
    if (!button) {
      return;
    }
    const row = button.closest('tr');
    const name = row.dataset.schedule;
    const pause = row.dataset.paused !== 'true';
    button.dataset.busy = 'true';
    button.disabled = true;
    generation++;
    try {
      const answer = await api.post(`/api/schedules/${encodeURIComponent(name)}/${pause ? 'pause' : 'resume'}`, {});
      button.dataset.busy = 'false';
      update(row, answer);
      notify(answer.paused ? `Schedule “${name}” paused on every node: no tick fires, and none is owed once resumed.`
        : `Schedule “${name}” resumed.`);
    } catch (e) {
      notify(`${pause ? 'Pause' : 'Resume'} failed: ${e.message}`, 'error');
    } finally {
      button.dataset.busy = 'false';
      button.disabled = false;
    }
    refresh();
  });

  return { start: refresh, refresh };
}

// Small DOM helpers: element building, badges, progress bars, formatting.

/** h('tag.class', {attrs}, ...children): a terse createElement. */
export function h(spec, attrs, ...children) {
  const [tag, ...classes] = spec.split('.');
  const el = document.createElement(tag || 'div');
  if (classes.length) {
    el.className = classes.join(' ');
  }
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) {
        continue;
      }
      if (key === 'dataset') {
        Object.assign(el.dataset, value);
      } else if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value);
      } else if (key === 'text') {
        el.textContent = value;
      } else if (key === 'style') {
        // Through the CSSOM: a style attribute is inline style, which the page's policy refuses.
        el.style.cssText = String(value);
      } else if (value === true) {
        el.setAttribute(key, '');
      } else {
        el.setAttribute(key, String(value));
      }
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) {
      continue;
    }
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const $ = (selector, root = document) => root.querySelector(selector);

const STATE_LABELS = {
  pending: 'pending',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'expired',
  cancelling: 'cancelling',
  submitting: 'submitting',
};

export function badge(state) {
  const el = h('span.badge', { dataset: { state: state || 'unknown' } });
  setBadge(el, state);
  return el;
}

export function setBadge(el, state) {
  const value = state || 'unknown';
  if (el.dataset.state !== value || !el.textContent) {
    el.dataset.state = value;
    el.textContent = STATE_LABELS[value] || value;
  }
}

/** A progress bar with an accessible value; update it with setProgress. */
export function progressBar(label) {
  const fill = h('span.progress-fill');
  const text = h('span.progress-text', null, '0%');
  const el = h('div.progress', {
    role: 'progressbar',
    'aria-valuemin': 0,
    'aria-valuemax': 100,
    'aria-valuenow': 0,
    'aria-label': label || 'progress',
    dataset: { progress: '0' },
  }, fill, text);
  return el;
}

export function setProgress(el, percent, state, message) {
  const value = Math.max(0, Math.min(100, Math.round(Number(percent) || 0)));
  if (el.dataset.progress !== String(value)) {
    el.dataset.progress = String(value);
    el.setAttribute('aria-valuenow', String(value));
    el.firstChild.style.width = `${value}%`;
    el.lastChild.textContent = `${value}%`;
  }
  el.dataset.state = state || '';
  const title = message ? `${value}% — ${message}` : `${value}%`;
  if (el.title !== title) {
    el.title = title;
  }
}

export function shortId(id) {
  return id ? `${id.slice(0, 8)}…${id.slice(-4)}` : '';
}

const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

export function num(value) {
  return value === undefined || value === null ? '–' : numberFormat.format(value);
}

export function time(iso) {
  if (!iso) {
    return '';
  }
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) {
    return iso;
  }
  return date.toLocaleTimeString(undefined, { hour12: false });
}

export function dateTime(iso) {
  if (!iso) {
    return '';
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { hour12: false });
}

/**
 * Keeps the rows of a tbody in the order of `items`, reusing the row of each key, so that a
 * refresh updates the rows in place (no flicker, progress bars animate) instead of rebuilding them.
 */
export function reconcileRows(tbody, items, keyOf, create, update) {
  const existing = new Map();
  for (const row of Array.from(tbody.rows)) {
    if (row.dataset.key) {
      existing.set(row.dataset.key, row);
    } else {
      row.remove();
    }
  }
  let previous = null;
  for (const item of items) {
    const key = keyOf(item);
    let row = existing.get(key);
    if (row) {
      existing.delete(key);
    } else {
      row = create(item);
      row.dataset.key = key;
    }
    update(row, item);
    const wanted = previous ? previous.nextSibling : tbody.firstChild;
    if (wanted !== row) {
      tbody.insertBefore(row, wanted);
    }
    previous = row;
  }
  for (const row of existing.values()) {
    row.remove();
  }
}

/**
 * Renders {@code view} (its render()) once per frame at most, however many events ask for it: a
 * burst (the catch-up after a snapshot, many progress steps) shows only its outcome instead of
 * flickering through every step. The view keeps the flag (renderQueued) and may say it is gone
 * (disposed).
 */
export function renderSoon(view) {
  if (view.renderQueued || view.disposed) {
    return;
  }
  view.renderQueued = true;
  const run = () => {
    if (view.renderQueued) {
      view.renderQueued = false;
      view.render();
    }
  };
  requestAnimationFrame(run);
  setTimeout(run, 250); // rAF does not run in a background tab; keep the view current anyway
}

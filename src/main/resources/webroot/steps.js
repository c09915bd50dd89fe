// A task's durable steps as a timeline: the steps done, in the order reached (name, when, which
// attempt, what it returned), the wait it is in, and the signals no wait has taken yet. Opened
// from a row of the recent tasks; read again every two seconds while open.

import { api } from './api.js';
import { badge, dateTime, h, shortId, time } from './dom.js';

const REFRESH_MS = 2000;

function clip(text, most) {
  return text.length > most ? `${text.slice(0, most - 1)}…` : text;
}

/** What a suspended task waits for, in words; empty for a task in no wait. */
export function waitText(wait) {
  if (!wait) {
    return '';
  }
  const until = wait.until ? ` until ${dateTime(wait.until)}` : '';
  if (wait.kind === 'sleep') {
    return `Sleeping in step “${wait.step}”${until}.`;
  }
  if (wait.kind === 'signal') {
    return `Waiting for the signal “${wait.name}”${until ? `${until} at most` : ''}.`;
  }
  return `Waiting for the event “${wait.name}” where ${wait.field} = ${wait.value}${until ? `${until} at most` : ''}.`;
}

export class StepsPanel {
  constructor(el) {
    this.el = el;
    this.id = null;
    this.timer = 0;
    this.title = h('h3');
    this.wait = h('p.wait');
    this.list = h('ol.timeline', { 'aria-label': 'Steps done, in order' });
    this.signals = h('p.muted');
    const close = h('button.btn.secondary.small', { type: 'button' }, 'Close');
    close.addEventListener('click', () => this.hide());
    el.replaceChildren(h('div.card-head', null, this.title, close), this.wait, this.list, this.signals);
  }

  /** Shows task {@code id}'s steps, or hides them when they are already shown. */
  toggle(id) {
    if (this.id === id && !this.el.hidden) {
      this.hide();
    } else {
      this.show(id);
    }
  }

  show(id) {
    this.id = id;
    this.el.hidden = false;
    this.el.dataset.task = id;
    this.refresh();
  }

  hide() {
    clearTimeout(this.timer);
    this.id = null;
    this.el.hidden = true;
    delete this.el.dataset.task;
  }

  async refresh() {
    clearTimeout(this.timer);
    const id = this.id;
    if (!id) {
      return;
    }
    try {
      const task = await api.get(`/api/tasks/${id}`);
      if (this.id === id) {
        this.render(task);
      }
    } catch (e) {
      this.wait.textContent = `Cannot read the task: ${e.message}`;
    }
    if (this.id === id) {
      this.timer = setTimeout(() => this.refresh(), REFRESH_MS);
    }
  }

  render(task) {
    this.title.replaceChildren('Steps of ', h('code', { title: task.id }, shortId(task.id)), ` · ${task.type} `, badge(task.state));
    this.wait.textContent = waitText(task.wait);
    this.wait.hidden = !task.wait;
    const steps = task.steps || [];
    this.list.replaceChildren(...(steps.length ? steps.map((step) => h('li', { dataset: { step: step.name } },
      h('strong.step-name', null, step.name), ' ',
      h('time', { datetime: step.at, title: dateTime(step.at) }, time(step.at)), ' ',
      h('span.muted', null, `attempt ${step.attempt}`), ' ',
      h('code', null, clip(JSON.stringify(step.result), 160)))) : [h('li.muted', null, 'No step done yet.')]));
    const kept = task.signals || [];
    this.signals.textContent = kept.length ? `Signals kept for a wait: ${kept.map((s) => `“${s.name}”`).join(', ')}.` : '';
    this.signals.hidden = !kept.length;
  }
}

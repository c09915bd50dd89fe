// A small live line chart on <canvas>: rates on the left axis, backlog on the right, the last
// `windowMs` of samples on a time axis that ends at "now".

const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/** The smallest "nice" number (1, 2, 2.5, 5 x 10^n) at or above value. */
function niceCeil(value) {
  if (!(value > 0)) {
    return 1;
  }
  const exponent = Math.floor(Math.log10(value));
  const base = 10 ** exponent;
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (step * base >= value - 1e-9) {
      return step * base;
    }
  }
  return 10 * base;
}

function formatTick(value) {
  if (value === 0) {
    return '0';
  }
  if (Math.abs(value) >= 1000) {
    return `${Number((value / 1000).toFixed(1))}k`;
  }
  return String(Number(value.toFixed(2)));
}

export class LiveChart {
  /**
   * @param canvas the <canvas>
   * @param series [{key, label, color, axis: 'left'|'right'}]
   */
  constructor(canvas, series, { windowMs = 5 * 60 * 1000, maxSamples = 600 } = {}) {
    this.canvas = canvas;
    this.series = series;
    this.windowMs = windowMs;
    this.maxSamples = maxSamples;
    this.samples = [];
    this.hidden = new Set();
    this.frame = 0;
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(() => this.requestDraw()).observe(canvas);
    } else {
      window.addEventListener('resize', () => this.requestDraw());
    }
  }

  /** Adds a sample {t: ms since epoch, <series key>: number}. */
  push(sample) {
    this.samples.push(sample);
    const oldest = sample.t - this.windowMs - 5000;
    while (this.samples.length > this.maxSamples || (this.samples.length && this.samples[0].t < oldest)) {
      this.samples.shift();
    }
    this.requestDraw();
  }

  toggle(key, visible) {
    if (visible) {
      this.hidden.delete(key);
    } else {
      this.hidden.add(key);
    }
    this.requestDraw();
  }

  requestDraw() {
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
    }
  }

  draw() {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (!width || !height) {
      return;
    }
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = FONT;

    const pad = { left: 48, right: 52, top: 12, bottom: 26 };
    const plotW = Math.max(10, width - pad.left - pad.right);
    const plotH = Math.max(10, height - pad.top - pad.bottom);
    const now = this.samples.length ? this.samples[this.samples.length - 1].t : Date.now();
    const start = now - this.windowMs;
    const visible = this.samples.filter((s) => s.t >= start);

    const maxOf = (axis) => {
      let max = 0;
      for (const s of this.series) {
        if (s.axis !== axis || this.hidden.has(s.key)) {
          continue;
        }
        for (const sample of visible) {
          const v = sample[s.key];
          if (Number.isFinite(v) && v > max) {
            max = v;
          }
        }
      }
      return niceCeil(max);
    };
    const leftMax = maxOf('left');
    const rightMax = maxOf('right');
    const x = (t) => pad.left + ((t - start) / this.windowMs) * plotW;
    const yOf = (value, max) => pad.top + plotH - (value / max) * plotH;

    // Grid and axes.
    const ticks = 4;
    ctx.lineWidth = 1;
    ctx.textBaseline = 'middle';
    for (let i = 0; i <= ticks; i++) {
      const y = Math.round(pad.top + (plotH * i) / ticks) + 0.5;
      ctx.strokeStyle = i === ticks ? '#9aa5b1' : '#e4e7eb';
      ctx.beginPath();
      ctx.moveTo(pad.left, y);
      ctx.lineTo(pad.left + plotW, y);
      ctx.stroke();
      ctx.fillStyle = '#52606d';
      ctx.textAlign = 'right';
      ctx.fillText(formatTick(leftMax * (1 - i / ticks)), pad.left - 6, y);
      ctx.textAlign = 'left';
      ctx.fillText(formatTick(rightMax * (1 - i / ticks)), pad.left + plotW + 6, y);
    }
    ctx.textBaseline = 'top';
    ctx.textAlign = 'center';
    const minutes = Math.round(this.windowMs / 60000);
    for (let m = 0; m <= minutes; m++) {
      const t = start + m * 60000;
      const px = Math.round(x(t)) + 0.5;
      ctx.strokeStyle = '#f0f2f4';
      ctx.beginPath();
      ctx.moveTo(px, pad.top);
      ctx.lineTo(px, pad.top + plotH);
      ctx.stroke();
      ctx.fillStyle = '#52606d';
      ctx.fillText(m === minutes ? 'now' : `-${minutes - m}m`, px, pad.top + plotH + 6);
    }

    // Lines. A gap of more than 3 s between samples (tab asleep, server away) breaks the line.
    ctx.save();
    ctx.beginPath();
    ctx.rect(pad.left, pad.top - 2, plotW, plotH + 4);
    ctx.clip();
    ctx.lineJoin = 'round';
    for (const s of this.series) {
      if (this.hidden.has(s.key)) {
        continue;
      }
      const max = s.axis === 'right' ? rightMax : leftMax;
      ctx.strokeStyle = s.color;
      ctx.lineWidth = 2;
      ctx.setLineDash(s.dash || []);
      ctx.beginPath();
      let previousT = null;
      for (const sample of visible) {
        const v = sample[s.key];
        if (!Number.isFinite(v)) {
          previousT = null;
          continue;
        }
        const px = x(sample.t);
        const py = yOf(v, max);
        if (previousT === null || sample.t - previousT > 3000) {
          ctx.moveTo(px, py);
        } else {
          ctx.lineTo(px, py);
        }
        previousT = sample.t;
      }
      ctx.stroke();
    }
    ctx.restore();

    if (!visible.length) {
      ctx.fillStyle = '#7b8794';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText('waiting for the first sample…', pad.left + plotW / 2, pad.top + plotH / 2);
    }
  }
}

// What the many-node load tests share: a PostgreSQL of their own (the system's binaries, a cluster
// made in a temporary directory, on 127.0.0.1 only, trust auth on that address alone, removed at
// the end), and Taskline nodes started from target/taskline.jar on it, each with its own port and
// log, that can be killed (SIGKILL) and started again. The callers stop every node and remove the
// PostgreSQL in their finally; an interrupted run (SIGINT) leaves its temporary directories.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const root = process.getuid && process.getuid() === 0;

function pgBin() {
  const base = '/usr/lib/postgresql';
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    if (existsSync(path.join(base, v, 'bin', 'pg_ctl'))) return path.join(base, v, 'bin');
  }
  throw new Error('no PostgreSQL binaries under /usr/lib/postgresql (or set PG_BIN)');
}

/** Runs a PostgreSQL binary, as the postgres user when we are root (initdb refuses root). */
export function pgRun(bin, args, options = {}) {
  const exe = path.join(pgBin(), bin);
  return root
    ? execFileSync('runuser', ['-u', 'postgres', '--', exe, ...args], { encoding: 'utf8', ...options })
    : execFileSync(exe, args, { encoding: 'utf8', ...options });
}

export class Postgres {
  constructor(port) {
    this.port = port;
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'taskline-pg-'));
    chmodSync(this.dir, 0o777);
    this.data = path.join(this.dir, 'data');
    this.url = `postgresql://postgres@127.0.0.1:${port}/taskline`;
  }

  start() {
    if (!existsSync(this.data)) {
      pgRun('initdb', ['-D', this.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions'], { stdio: 'ignore' });
    }
    pgRun('pg_ctl', ['-D', this.data, '-l', path.join(this.dir, 'log'), '-w', '-t', '60', '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start'], { stdio: 'ignore' });
    try {
      this.psql('postgres', 'CREATE DATABASE taskline');
    } catch {
      // there already
    }
  }

  /** Stops it: fast (connections cut, a clean checkpoint) or immediate (as a crash would). */
  stop(mode = 'fast') {
    pgRun('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '60', 'stop'], { stdio: 'ignore' });
  }

  /** Rows of one query, as arrays of strings. */
  psql(db, sql) {
    const out = execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1',
      '-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', db, '-c', sql],
    { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120000, stdio: ['ignore', 'pipe', 'pipe'] });
    return out.split('\n').filter((l) => l.length).map((l) => l.split('\t'));
  }

  remove() {
    try { this.stop('immediate'); } catch { /* not running */ }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class Node {
  /** @param config the node's config object (written to a file of its own) */
  constructor(name, port, pgUrl, config, dir, env = {}, headers = {}) {
    this.name = name;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.pgUrl = pgUrl;
    this.dir = dir;
    this.configPath = path.join(dir, `${name}.json`);
    writeFileSync(this.configPath, JSON.stringify(config));
    this.env = env;
    this.headers = headers;
    this.starts = 0;
  }

  /** One call to this node with its headers: status, JSON body (or null), text, receipt time (ms), Retry-After. */
  async call(method, pathname, body, headers = {}) {
    const all = { ...this.headers, ...headers };
    if (body !== undefined) all['Content-Type'] = 'application/json';
    const r = await fetch(this.url + pathname, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, json: text && text[0] === '{' ? JSON.parse(text) : null, text, at: Date.now(),
      retryAfter: r.headers.get('retry-after') };
  }

  async start() {
    const log = openSync(path.join(this.dir, `${this.name}.log`), 'a');
    this.process = spawn('java', ['-XX:+UseSerialGC', '-Xmx512m', '-jar', this.jar || 'target/taskline.jar'], {
      env: { ...process.env, TASKLINE_CONFIG: this.configPath, TASKLINE_PG_URL: this.pgUrl,
        TASKLINE_HTTP_PORT: String(this.port), TASKLINE_HANDLERS_DIR: path.join(this.dir, 'handlers'), ...this.env },
      stdio: ['ignore', log, log],
    });
    this.starts++;
    this.exited = new Promise((ok) => this.process.once('exit', ok));
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline) {
      try {
        const r = await fetch(`${this.url}/health/ready`);
        if (r.status === 200) {
          this.id = (await (await fetch(`${this.url}/api/nodes`, { headers: this.headers || {} })).json()).self;
          return this;
        }
      } catch { /* not yet */ }
      if (this.process.exitCode !== null) throw new Error(`${this.name} exited with ${this.process.exitCode}; see its log`);
      await sleep(50);
    }
    throw new Error(`${this.name} not ready within 60 s`);
  }

  /** SIGKILL, and wait for the process to be gone. */
  async kill() {
    if (this.process && this.process.exitCode === null) {
      this.process.kill('SIGKILL');
      await this.exited;
    }
  }

  /** SIGTERM (a graceful stop), waited for. */
  async stop() {
    if (this.process && this.process.exitCode === null) {
      this.process.kill('SIGTERM');
      await Promise.race([this.exited, sleep(40000).then(() => this.kill())]);
    }
  }
}

/** A temporary directory for configs and logs, and an empty handlers directory. */
export function workDir() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'taskline-nodes-'));
  execFileSync('mkdir', ['-p', path.join(dir, 'handlers')]);
  return dir;
}

/** Removes a workDir() at the end of a run, unless KEEP=1 asks to keep the nodes' configs and logs. */
export function removeWorkDir(dir) {
  if (process.env.KEEP === '1') {
    console.error(`nodes' configs and logs kept in ${dir}`);
    return;
  }
  rmSync(dir, { recursive: true, force: true });
}

/** A free TCP port on 127.0.0.1, from a range the tests keep to. */
export function ports(base, n) {
  return Array.from({ length: n }, (_, i) => base + i);
}

export function percentile(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function summary(values) {
  const s = [...values].sort((a, b) => a - b);
  const r = (x) => Math.round(x * 100) / 100;
  return { n: s.length, p50: r(percentile(s, 50)), p90: r(percentile(s, 90)), p99: r(percentile(s, 99)), max: r(s[s.length - 1]) };
}

/**
 * Reads a text/event-stream answer, calling {@code onEvent({event, id, data, receivedAt})} per frame
 * (receivedAt: Date.now() when its chunk arrived); returns when the stream ends, or when onEvent
 * returns true.
 */
export async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const receivedAt = Date.now();
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = (frame.match(/^event: (.*)$/m) || [])[1];
      const id = (frame.match(/^id: (.*)$/m) || [])[1];
      const data = (frame.match(/^data: (.*)$/m) || [])[1];
      if (onEvent({ event, id, data, receivedAt })) return;
    }
  }
}

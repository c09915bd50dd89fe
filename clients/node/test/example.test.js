// The onboarding example, as the README runs it: installed with npm from the repository, started by
// the event user.created, through its steps, wait and sleep, each mail sent once.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KEY, URL, client, skip, until } from './helpers.js';

const EXAMPLE = fileURLToPath(new globalThis.URL('../../../examples/node-package/', import.meta.url));

test('the onboarding example mails a welcome, a nudge and a survey, once each', { skip }, async () => {
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: EXAMPLE, stdio: 'inherit' });
  const effects = join(mkdtempSync(join(tmpdir(), 'taskline-onboarding-')), 'mails.jsonl');
  const worker = spawn(process.execPath, ['onboarding.mjs'], { cwd: EXAMPLE, stdio: 'inherit',
    env: { ...process.env, TASKLINE_URL: URL, TASKLINE_KEY: KEY, DAY_MS: '300', EFFECTS: effects } });
  const ended = new Promise((resolve) => worker.on('exit', (code) => resolve(code)));
  const tl = client();
  try {
    const userId = `u-${Date.now()}`;
    const sent = await tl.sendEvent('user.created', { userId, email: 'ada@example.com' });
    assert.equal(sent.started.length, 1, JSON.stringify(sent));
    const taskId = sent.started[0].id ?? sent.started[0];
    const done = await tl.wait(taskId, { timeoutMs: 60000 });
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    assert.deepEqual(done.result, { userId, loggedIn: false, followUp: 'nudge-mail' });
    await until(() => existsSync(effects), 'the mails');
    const mails = readFileSync(effects, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((m) => m.task === taskId);
    assert.deepEqual(mails.map((m) => m.mail), ['welcome-mail', 'nudge-mail', 'survey-mail']);
  } finally {
    worker.kill('SIGTERM');
    assert.equal(await ended, 0);
  }
});

#!/usr/bin/env node
// Inngest's user onboarding, as a Taskline durable task run by a remote Node worker. The event
// `user.created` starts one `onboarding` task per user (a trigger in the node's config, its data
// {userId, email} the payload); the task mails a welcome, waits up to a day for the user's first
// `user.login`, mails tips (logged in) or a nudge (did not), waits three days, mails a survey.
// While it waits it holds no slot and no process: the worker may stop and another pick it up.
//
//   node onboarding.mjs --url http://127.0.0.1:8080 --queue node [--exit-when-idle] \
//     [--effects FILE] [--day-ms N]
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { run } from './durable.mjs';

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    queue: { type: 'string', default: 'node' },
    worker: { type: 'string', default: 'node-onboarding-1' },
    max: { type: 'string', default: '8' },
    'exit-when-idle': { type: 'boolean', default: false },
    effects: { type: 'string' }, // a file to append each outside effect to, one JSON line each
    'day-ms': { type: 'string', default: '86400000' }, // shorter days, for a test
  },
});
const DAY = Number(opts['day-ms']);

// The mail service, simulated: one line per mail, so a test can check that each went out once. A
// real one would get ctx.stepId(name) as its idempotency key: a step that dies between its effect
// and its journal write runs again, and the key makes the second send a no-op.
function send(ctx, name) {
  const line = JSON.stringify({ task: ctx.taskId, effect: name, stepId: ctx.stepId(name) });
  if (opts.effects) appendFileSync(opts.effects, line + '\n');
  else console.log(line);
  return { sent: name, to: ctx.payload.email, at: new Date().toISOString() };
}

async function onboarding(ctx) {
  const { userId } = ctx.payload;
  if (ctx.cancelled) {
    // Resumed by a compensating cancel: mails cannot be taken back, but the user leaves the drip
    // list. (Sleeps and waits would not wait now, so the path below must not run: it would mail on.)
    await ctx.step('unsubscribe', async () => send(ctx, 'unsubscribe'));
    return { userId, unsubscribed: true };
  }
  await ctx.step('welcome-mail', async () => send(ctx, 'welcome-mail'));
  // Waiting is a step too ("first-login"): the server journals the login event, or a time-out
  // after a day, and every later run takes the same branch.
  const login = await ctx.waitForEvent('user.login', 'data.userId', userId, { timeoutMs: DAY, step: 'first-login' });
  const followUp = login ? 'tips-mail' : 'nudge-mail';
  await ctx.step(followUp, async () => send(ctx, followUp));
  await ctx.sleep('wait-3-days', 3 * DAY);
  await ctx.step('survey-mail', async () => send(ctx, 'survey-mail'));
  return { userId, loggedIn: login !== null, followUp };
}

await run({
  url: opts.url, queue: opts.queue, worker: opts.worker, max: Number(opts.max),
  exitWhenIdle: opts['exit-when-idle'], handlers: { onboarding },
});

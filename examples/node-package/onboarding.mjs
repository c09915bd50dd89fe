// The onboarding function of the motivating documents, with @taskline/client: the event
// `user.created` starts one `onboarding` task per user (a trigger in the node's config, the event's
// data the payload). It mails a welcome, waits up to a day for the user's first `user.login`, mails
// tips (logged in) or a nudge (did not), sleeps three days, mails a survey. While it waits it holds
// no slot and no process: this worker may stop, and another pick the task up where it was.
//
//   cd examples/node-package && npm install && node onboarding.mjs
//   curl -s -X POST localhost:8080/api/events -H 'Content-Type: application/json' \
//     -d '{"name": "user.created", "data": {"userId": "u-1", "email": "ada@example.com"}}'
import { appendFileSync } from 'node:fs';
import { Worker } from '@taskline/client';

const DAY = Number(process.env.DAY_MS ?? 86_400_000); // shorter days, for a try-out or a test
const EFFECTS = process.env.EFFECTS; // a file to append each mail to, one JSON line each

// The mail service, simulated. A real one gets ctx.stepId(name) as its idempotency key: a step that
// dies between its effect and its journal write runs again, and the key makes the resend a no-op.
function send(ctx, mail) {
  const line = JSON.stringify({ task: ctx.id, mail, to: ctx.payload.email, idempotencyKey: ctx.stepId(mail) });
  if (EFFECTS) appendFileSync(EFFECTS, line + '\n');
  else console.log(line);
  return { sent: mail, at: new Date().toISOString() };
}

const worker = new Worker({
  url: process.env.TASKLINE_URL ?? 'http://127.0.0.1:8080', key: process.env.TASKLINE_KEY,
  queue: 'node', concurrency: 20,
});

worker.handle('onboarding', async (ctx, { userId }) => {
  await ctx.step('welcome-mail', () => send(ctx, 'welcome-mail'));
  // The wait is a step too: the login event, or the day's time-out, is journaled, and every later
  // run of this task takes the same branch.
  const login = await ctx.waitForEvent('user.login', 'data.userId', userId, { timeoutMs: DAY, step: 'first-login' });
  const followUp = login ? 'tips-mail' : 'nudge-mail';
  await ctx.step(followUp, () => send(ctx, followUp));
  await ctx.sleep('three-days', 3 * DAY);
  await ctx.step('survey-mail', () => send(ctx, 'survey-mail'));
  return { userId, loggedIn: login !== null, followUp };
});

await worker.run(); // until Ctrl-C or SIGTERM

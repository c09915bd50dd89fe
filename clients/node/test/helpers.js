// The suite runs against a real node: TASKLINE_URL (and TASKLINE_KEY, an admin's key, and
// TASKLINE_READ_KEY, a key with the read scope only) name it. `mvn test` starts one and sets them
// (ClientPackagesTest).
import { randomUUID } from 'node:crypto';
import { Taskline } from '../src/index.js';

export const URL = process.env.TASKLINE_URL;
export const KEY = process.env.TASKLINE_KEY;
export const READ_KEY = process.env.TASKLINE_READ_KEY;
export const skip = URL ? false : 'TASKLINE_URL names no node';

export const client = (options = {}) => new Taskline({ url: URL, key: KEY, ...options });

// A task type of the test's own, so that no worker of another test takes its tasks.
export const kind = () => `t-${randomUUID().slice(0, 12)}`;

// Waits until check() gives something true (the node's state, read again and again).
export async function until(check, what, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const reasons = (t) => t.history.map((h) => h.reason);

// Task specs and the flow shorthands (the node's own chain, group and chord), as plain objects
// ready for submitBatch and flow. Nest them as deep as needed:
//   flow(chord(group(task('match', p1), task('match', p2)), task('rank')))
const OPTIONS = ['key', 'queue', 'priority', 'delayMs', 'runAt', 'maxAttempts', 'timeoutMs', 'concurrencyKey',
  'startWithinMs', 'startBy', 'dependsOn', 'join'];

// A task as the node takes it; options as the node names them (delayMs, maxAttempts, ...), and
// Date objects for runAt and startBy.
export function task(type, payload, options = {}) {
  const unknown = Object.keys(options).filter((k) => !OPTIONS.includes(k));
  if (unknown.length) throw new TypeError(`unknown task options: ${unknown.join(', ')}`);
  const spec = { type };
  if (payload !== undefined) spec.payload = payload;
  for (const [k, v] of Object.entries(options)) {
    if (v === undefined || v === null) continue;
    spec[k] = v instanceof Date ? v.toISOString() : v;
  }
  return spec;
}

// Each step after the one before, reading its result (ctx.parents).
export const chain = (...steps) => ({ chain: steps });
// Side by side.
export const group = (...members) => ({ group: members });
// `then` after every member of the group succeeded, reading all their results.
export const chord = (members, then) => ({ chord: { group: Array.isArray(members) ? members : members.group, then } });

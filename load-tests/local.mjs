// What the flow-control load tests share: they talk to this machine only, in JSON, and read the
// journal's times to the microsecond.

/** Throws unless {@code url} is a node on this machine: the load tests send nowhere else. */
export function localOnly(url) {
  if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(url)) throw new Error(`only 127.0.0.1: ${url}`);
  return url;
}

/** One request; the answer's status, its JSON (an object body, else null), text and headers. */
export async function call(url, method, path, body, headers = {}) {
  const all = body === undefined ? { ...headers } : { 'Content-Type': 'application/json', ...headers };
  const r = await fetch(url + path, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text && text[0] === '{' ? JSON.parse(text) : null, text, headers: r.headers };
}

/** Microseconds since the epoch of one of the journal's ISO times (Date.parse stops at the millisecond). */
export function micros(at) {
  return Date.parse(at) * 1000 + Number((at.match(/\.\d{3}(\d{3})/) || [0, 0])[1]);
}

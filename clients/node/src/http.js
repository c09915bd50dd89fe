// What the package sends and reads at the edge of HTTP, for the client and the worker alike.
import { AnswerTooLarge, ConnectionFailed, TasklineError } from './errors.js';

// What is read from the node is bounded, whatever it sends: an answer's body (the node bounds its
// own answers far below this) and an event of a stream (one task's result must fit). Header lines
// are bounded by Node's HTTP parser (http.maxHeaderSize, 16 KiB). Past a bound the connection is
// closed unread.
export const MAX_ANSWER_BYTES = 64 * 2 ** 20;
export const MAX_EVENT_BYTES = 16 * 2 ** 20;

// RFC 9110: a field name is a token; a value holds no control character but HTAB and no character
// past Latin-1. CR, LF and NUL would end the header, or the request, where the caller did not mean
// it to (request smuggling): refused before anything is sent, the value kept out of the message
// since it may be a key.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function headerValueOk(value) { return typeof value === 'string' && VALUE.test(value); }

export function checkHeaders(headers) {
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new TypeError(`header name ${JSON.stringify(name)} is not an HTTP token: refused before sending`);
    if (typeof value !== 'string') throw new TypeError(`header ${name}: a string is needed, not ${typeof value}`);
    if (!VALUE.test(value)) {
      throw new TypeError(`header ${name} holds a control character (CR, LF, NUL or another) or one past Latin-1: refused before sending`);
    }
  }
  return headers;
}

// The node's url, without a trailing slash. One with user:pass@ is refused rather than used: the
// node takes a Bearer key, and a password in a url ends up in logs.
export function baseUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('url is not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`url must be http:// or https://, not ${parsed.protocol}`);
  }
  if (parsed.username || parsed.password) {
    throw new TypeError("the url carries a user name or password (user:pass@host): give the node's key as key, not in the url");
  }
  return String(url).replace(/\/$/, '');
}

// A path segment from an id or a name: percent-encoded, and never empty, '.' or '..', which a URL
// parser (fetch's, or the node's router) would resolve into another route.
export function q(segment) {
  const text = String(segment);
  if (text === '' || text === '.' || text === '..') throw new TypeError(`${JSON.stringify(text)} cannot be a path segment (an id or a name)`);
  return encodeURIComponent(text);
}

// The answer's body as text, read up to `limit` bytes; past it, the body is cancelled (which
// closes the connection) and AnswerTooLarge thrown.
export async function readText(answer, limit) {
  const declared = answer.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) {
    await answer.body?.cancel().catch(() => {});
    throw new AnswerTooLarge(`the answer's Content-Length ${declared} passes maxAnswerBytes (${limit})`);
  }
  if (!answer.body) return '';
  const reader = answer.body.getReader();
  const pieces = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new AnswerTooLarge(`the answer passed maxAnswerBytes (${limit}): cut`);
    }
    pieces.push(value);
  }
  return Buffer.concat(pieces).toString('utf8');
}

// A failed fetch as this package's error: a bound of Node's HTTP parser passed, or a connection
// that failed. Errors of this package pass as they are.
export function fetchError(what, e) {
  if (e instanceof TasklineError) return e;
  const cause = e.cause ?? e;
  if (cause?.code === 'UND_ERR_HEADERS_OVERFLOW') return new AnswerTooLarge(`${what}: the answer's headers passed Node's bound (${cause.message})`);
  return new ConnectionFailed(`${what}: ${cause?.message ?? e.message}`);
}

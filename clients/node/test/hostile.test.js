// What the package sends and reads at the edge of HTTP, against servers of the test's own on
// 127.0.0.1 (no node needed): headers that would break the request apart, answers without end.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, test } from 'node:test';
import { inspect } from 'node:util';
import { AnswerTooLarge, ConnectionFailed, Taskline, Worker } from '../src/index.js';

const SMUGGLED = 'order-1\r\nContent-Length: 72\r\n\r\n{"type":"evil"}';
const MiB = 2 ** 20;
const servers = [];
after(() => { for (const s of servers) s.close(); });

// A server answering every request with answer(socket, n) (n: which connection, from 1), keeping
// what each connection sent, and whether the client closed it.
async function capture(answer = (socket) => socket.end('HTTP/1.1 202 Accepted\r\nContent-Length: 11\r\n\r\n{"id":"t1"}')) {
  const received = [], closed = [];
  const server = createServer((socket) => {
    let data = '', answered = false;
    const n = received.length + 1;
    socket.on('error', () => {});
    socket.on('close', () => closed.push(n));
    socket.on('data', (piece) => {
      data += piece.toString('latin1');
      if (!answered && data.includes('\r\n\r\n')) {
        answered = true;
        received.push(data);
        answer(socket, n);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return { url: `http://127.0.0.1:${server.address().port}`, received, closed };
}

// `head`, then `piece` again and again until the client hangs up.
const endless = (head, piece = Buffer.alloc(65536, 'x')) => (socket) => {
  socket.write(head);
  const more = () => { while (!socket.destroyed && socket.write(piece)); };
  socket.on('drain', more);
  more();
};

const chunked = (data) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
const SSE = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';

async function closedSoon(server, n) {
  for (let i = 0; i < 200 && !server.closed.includes(n); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(server.closed.includes(n), `connection ${n} closed by the client`);
}

test('CR, LF and NUL in a header are refused before anything is sent', async () => {
  const server = await capture();
  const tl = new Taskline({ url: server.url });
  for (const bad of [SMUGGLED, 'order-1\u0000', 'order-1\n', 'order\r1']) {
    await assert.rejects(tl.submit('ok', {}, { idempotencyKey: bad }), (e) => e instanceof TypeError && /Idempotency-Key/.test(e.message));
  }
  await tl.submit('ok', {}, { idempotencyKey: 'order-1' });
  assert.equal(server.received.length, 1);
  assert.ok(!server.received.join('').includes('evil'));
  assert.throws(() => new Taskline({ key: 'tl_a\r\nX-Admin: yes' }), /Authorization/);
  assert.throws(() => new Taskline({ tenant: 'acme\n' }), /Taskline-Tenant/);
  assert.throws(() => new Worker({ queue: 'q', key: 'tl_\u0000' }), /Authorization/);
  await assert.rejects(tl.call({ name: 'x', path: '/', headers: { 'X-A\r\nB': '1' } }), /not an HTTP token/);
});

test('the key is kept out of inspect, console.log and JSON.stringify', () => {
  const tl = new Taskline({ url: 'http://127.0.0.1:1', key: 'tl_very_secret', tenant: 'acme' });
  const worker = new Worker({ url: 'http://127.0.0.1:1', key: 'tl_very_secret', queue: 'q' });
  for (const shown of [inspect(tl, { showHidden: true, depth: null }), JSON.stringify(tl),
    inspect(worker, { showHidden: true, depth: null }), JSON.stringify(Object.entries(tl))]) {
    assert.ok(!shown.includes('very_secret'), shown);
  }
});

test('a url with a user name or password is refused, without showing the password', () => {
  assert.throws(() => new Taskline({ url: 'http://user:s3cret@127.0.0.1:8080' }),
    (e) => e instanceof TypeError && /key/.test(e.message) && !e.message.includes('s3cret'));
  assert.throws(() => new Worker({ url: 'http://user@127.0.0.1:8080', queue: 'q' }), TypeError);
});

test('an id that a URL parser would resolve into another route is refused', async () => {
  const tl = new Taskline({ url: 'http://127.0.0.1:1' });
  for (const id of ['', '.', '..']) await assert.rejects(tl.get(id), TypeError);
  await assert.rejects(tl.signal('t1', '..'), TypeError);
  assert.throws(() => new Worker({ queue: '..' }), TypeError);
});

for (const [name, head] of [
  ['until closed', 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n'],
  ['one giant chunk', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000\r\n'],
  ['an error body', 'HTTP/1.1 503 Unavailable\r\nContent-Type: application/json\r\n\r\n'],
]) {
  test(`an endless answer (${name}) is cut at maxAnswerBytes and its connection closed`, async () => {
    const server = await capture(endless(head));
    const tl = new Taskline({ url: server.url, maxAnswerBytes: MiB, readRetries: 0 });
    await assert.rejects(tl.get('t1'), (e) => e instanceof AnswerTooLarge && /maxAnswerBytes/.test(e.message));
    await closedSoon(server, 1);
  });
}

test('the default bound is 64 MiB, and a declared length past it is refused unread', async () => {
  const server = await capture(endless('HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n'));
  await assert.rejects(new Taskline({ url: server.url }).get('t1'),
    (e) => e instanceof AnswerTooLarge && e.message.includes(String(64 * MiB)));
  await closedSoon(server, 1);
});

test('the worker reads its answers within maxAnswerBytes', async () => {
  const server = await capture(endless('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n'));
  const worker = new Worker({ url: server.url, queue: 'q', maxAnswerBytes: MiB }).handle('t', async () => null);
  await assert.rejects(worker.serve(), (e) => e instanceof AnswerTooLarge && e instanceof ConnectionFailed);
  await closedSoon(server, 1);
});

test('endless header lines are cut', async () => {
  const server = await capture(endless('HTTP/1.1 200 OK\r\n', Buffer.from('X-A: 1\r\n'.repeat(1000))));
  await assert.rejects(new Taskline({ url: server.url, readRetries: 0 }).get('t1'), AnswerTooLarge);
});

for (const [name, piece] of [
  ['a line without end', chunked('x'.repeat(65536))],
  ['an event of lines without end', chunked(`data: ${'x'.repeat(65530)}\n`)],
]) {
  test(`a stream's endless event (${name}) is cut at maxEventBytes, not reconnected`, async () => {
    const server = await capture(endless(SSE + chunked('data: '), Buffer.from(piece)));
    const tl = new Taskline({ url: server.url, maxEventBytes: MiB });
    await assert.rejects((async () => { for await (const e of tl.events('t1')) void e; })(),
      (e) => e instanceof AnswerTooLarge && /maxEventBytes/.test(e.message));
    assert.equal(server.received.length, 1);
    await closedSoon(server, 1);
  });
}

test('an event id that would break a header is not sent back', async () => {
  const server = await capture((socket, n) => socket.end(n === 1
    ? `${SSE}${chunked('id: 7\n\nid: 8\rX-Smuggled: 1\ndata: {}\n\nid: 9\u0001\ndata: {}\n\n')}0\r\n\r\n`
    : `${SSE}${chunked('event: end\ndata: {}\n\n')}0\r\n\r\n`));
  const seen = [];
  for await (const e of new Taskline({ url: server.url }).events('t1')) seen.push(e.event);
  assert.equal(seen.at(-1), 'end');
  // A lone CR ends a line (8 is the id, X-Smuggled a field of no meaning); an id with a control
  // character is ignored.
  assert.match(server.received[1], /\r\nlast-event-id: 8\r\n/i);
  assert.ok(!server.received[1].includes('X-Smuggled'));
});

"""What the package sends and reads at the edge of HTTP, against servers of the test's own on
127.0.0.1: headers that would break the request apart, and answers without end."""
import asyncio
import socket
import threading

import pytest

from taskline import AnswerTooLarge, AsyncTaskline, Taskline, Worker, _http

pytestmark = pytest.mark.local

SMUGGLED = 'order-1\r\nContent-Length: 72\r\n\r\n{"type":"evil"}'


class Capture:
    """A server that answers every request with `answer` (bytes, or a function of the socket) and
    keeps what each connection sent."""

    def __init__(self, answer=b'HTTP/1.1 202 Accepted\r\nContent-Length: 11\r\n\r\n{"id":"t1"}'):
        self.answer = answer
        self.received = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    piece = conn.recv(65536)
                    if not piece:
                        break
                    data += piece
                self.received.append(data)
                if callable(self.answer):
                    self.answer(conn)
                else:
                    conn.sendall(self.answer)
            except OSError:
                pass

    def close(self):
        self.sock.close()


@pytest.fixture
def capture():
    servers = []

    def start(*args):
        s = Capture(*args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()


def test_the_asyncio_client_refuses_crlf_in_a_header_and_sends_nothing(capture):
    server = capture()

    async def submit():
        async with AsyncTaskline(server.url) as atl:
            with pytest.raises(ValueError, match="Idempotency-Key"):
                await atl.submit("ok", {}, idempotency_key=SMUGGLED)
            await atl.submit("ok", {}, idempotency_key="order-1")  # the connection is still good

    asyncio.run(submit())
    assert len(server.received) == 1 and b"evil" not in b"".join(server.received)


def test_the_blocking_client_refuses_crlf_and_nul_in_headers_and_sends_nothing(capture):
    server = capture()
    with Taskline(server.url) as tl:
        for bad in (SMUGGLED, "order-1\x00", "order-1\n", "order\r1"):
            with pytest.raises(ValueError, match="Idempotency-Key"):
                tl.submit("ok", {}, idempotency_key=bad)
        tl.submit("ok", {}, idempotency_key="order-1")
    assert len(server.received) == 1 and b"order-1\r\n" in server.received[0]


def test_a_key_tenant_or_header_name_that_http_cannot_carry_is_refused_at_once(capture):
    with pytest.raises(ValueError, match="Authorization"):
        Taskline("http://127.0.0.1:1", key="tl_a\r\nX-Admin: yes")
    with pytest.raises(ValueError, match="Taskline-Tenant"):
        AsyncTaskline("http://127.0.0.1:1", tenant="acme\n")
    with pytest.raises(ValueError, match="Authorization"):
        Worker("http://127.0.0.1:1", queue="q", key="tl_\x00")
    with pytest.raises(ValueError, match="not an HTTP token"):
        _http.check_header("X-A\r\nB", "1")
    with pytest.raises(ValueError, match="Latin-1"):
        _http.check_header("X-A", "\u2603")
    _http.check_header("X-A", "tab\tand spaces and caf\u00e9")  # HTAB, SP and obs-text are allowed


def test_a_url_with_user_and_password_is_refused_without_showing_the_password(capture):
    with pytest.raises(ValueError, match="key=") as refused:
        Taskline("http://user:s3cret@127.0.0.1:8080")
    assert "s3cret" not in str(refused.value)
    with pytest.raises(ValueError):
        AsyncTaskline("http://user@127.0.0.1:8080")
    server = capture()
    with Taskline(server.url + "/") as tl:
        tl.submit("ok", {})
    assert f"Host: 127.0.0.1:{server.port}\r\n".encode() in server.received[0]
    assert _http.Endpoint("http://[::1]:8080/taskline/").host_header == "[::1]:8080"


def endless(head: bytes, piece: bytes = b"x" * 65536):
    """An answer: `head`, then `piece` again and again until the client hangs up."""
    def answer(conn):
        conn.sendall(head)
        while True:
            conn.sendall(piece)
    return answer


def both(url, call, **options):
    """`call(client)` on the blocking client and on the asyncio one: what each raised."""
    raised = []
    with Taskline(url, **options) as tl:
        try:
            call(tl)
        except Exception as e:  # noqa: BLE001 - the test looks at it
            raised.append(e)

    async def on_async():
        async with AsyncTaskline(url, **options) as atl:
            try:
                result = call(atl)
                if hasattr(result, "__anext__"):
                    async for _ in result:
                        pass
                else:
                    await result
            except Exception as e:  # noqa: BLE001
                raised.append(e)

    asyncio.run(asyncio.wait_for(on_async(), 30))
    return raised


def drain(events):
    if hasattr(events, "__anext__"):
        return events
    for _ in events:
        pass


MiB = 2 ** 20


@pytest.mark.parametrize("head", [
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n",                       # until closed
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000\r\n",          # one giant chunk
    b"HTTP/1.1 503 Unavailable\r\nContent-Type: application/json\r\n\r\n",             # an error's body
], ids=["endless", "giant-chunk", "error-body"])
def test_an_endless_answer_is_cut_at_max_answer_bytes(capture, head):
    server = capture(endless(head))
    raised = both(server.url, lambda c: c.get("t1"), max_answer_bytes=MiB, read_retries=0)
    assert [type(e) for e in raised] == [AnswerTooLarge, AnswerTooLarge], raised
    assert all("max_answer_bytes" in str(e) for e in raised)


def test_the_default_bound_is_64_mib_and_a_declared_length_past_it_is_refused_unread(capture):
    server = capture(endless(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n"))
    raised = both(server.url, lambda c: c.get("t1"))
    assert [type(e) for e in raised] == [AnswerTooLarge, AnswerTooLarge], raised
    assert all(str(64 * MiB) in str(e) for e in raised)


@pytest.mark.parametrize("head", [
    b"HTTP/1.1 200 OK\r\nX-Long: ",                      # one header line without end
    b"HTTP/1.1 200 OK\r\n",                              # header lines without end
], ids=["long-line", "many-lines"])
def test_an_endless_head_is_cut(capture, head):
    server = capture(endless(head, b"a" * 65536 if head.endswith(b": ") else b"X-A: 1\r\n" * 1000))
    raised = both(server.url, lambda c: c.get("t1"), read_retries=0)
    assert [type(e) for e in raised] == [AnswerTooLarge, AnswerTooLarge], raised


SSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@pytest.mark.parametrize("piece", [
    chunked(b"x" * 65536),                               # a line without end
    chunked(b"data: " + b"x" * 65530 + b"\n"),           # an event of lines without end
], ids=["line", "event"])
def test_an_endless_event_is_cut_at_max_event_bytes(capture, piece):
    server = capture(endless(SSE + chunked(b"data: "), piece))
    raised = both(server.url, lambda c: drain(c.events("t1")), max_event_bytes=MiB)
    assert [type(e) for e in raised] == [AnswerTooLarge, AnswerTooLarge], raised
    assert all("max_event_bytes" in str(e) for e in raised)
    assert len(server.received) == 2  # not reconnected: the same would come again


def test_an_event_id_that_would_break_a_header_is_not_sent_back(capture):
    def answer(conn):
        if len(server.received) == 1:
            conn.sendall(SSE + chunked(b"id: 7\n\nid: 8\rX-Smuggled: 1\ndata: {}\n\nid: 9\x01\ndata: {}\n\n") + b"0\r\n\r\n")
        else:
            conn.sendall(SSE + chunked(b"event: end\ndata: {}\n\n") + b"0\r\n\r\n")

    server = capture(answer)

    async def follow():
        async with AsyncTaskline(server.url) as atl:
            return [e.event async for e in atl.events("t1")]

    assert asyncio.run(asyncio.wait_for(follow(), 30))[-1] == "end"
    again = server.received[1].decode("latin-1")
    # A lone CR ends a line (8 is the id, X-Smuggled a field of no meaning); an id with a control
    # character is ignored.
    assert "Last-Event-ID: 8\r\n" in again and "X-Smuggled" not in again


def test_an_id_that_a_router_would_resolve_into_another_route_is_refused():
    with Taskline("http://127.0.0.1:1") as tl:
        for ident in ("", ".", ".."):
            with pytest.raises(ValueError, match="path segment"):
                tl.get(ident)
        with pytest.raises(ValueError, match="path segment"):
            tl.signal("t1", "..")
    with pytest.raises(ValueError, match="path segment"):
        Worker("http://127.0.0.1:1", queue="..")

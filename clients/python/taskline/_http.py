"""HTTP/1.1 over kept-alive connections, standard library only: blocking (http.client) and asyncio.

Why not httpx: the package must install where only the standard library is at hand (`pip install
./clients/python` with no index to fetch from), and what it needs of HTTP is small: JSON requests
on a few kept-alive connections and one long-lived streamed answer (Server-Sent Events)."""
from __future__ import annotations

import asyncio
import http.client
import json
import re
import ssl
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import AsyncIterator, Iterator

from .errors import AnswerTooLarge

# What is read from the node is bounded, whatever it sends: an answer's body (the node bounds its
# own answers far below this), an event of a stream (one task's result must fit), a status or
# header line, the count of header lines. Past a bound the connection is closed unread.
MAX_ANSWER_BYTES = 64 * 2 ** 20
MAX_EVENT_BYTES = 16 * 2 ** 20
MAX_LINE = 65536
MAX_HEADERS = 100
PIECE = 65536  # the most read at once: a chunk the node declares huge is read piece by piece

# RFC 9110: a field name is a token; a value holds no control character but HTAB. CR, LF and NUL
# would end the header, or the request, where the caller did not mean it to (request smuggling).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_BAD_TARGET = re.compile(r"[\x00-\x20\x7f]")


def check_header(name, value) -> None:
    """Raises ValueError (TypeError for what is not text) for a header HTTP cannot carry as it is;
    the value is not in the message, since it may be a key."""
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        raise ValueError(f"header name {name!r} is not an HTTP token: refused before sending")
    if not isinstance(value, str):
        raise TypeError(f"header {name}: a str is needed, not {type(value).__name__}")
    if _CONTROL.search(value):
        raise ValueError(f"header {name} holds a control character (CR, LF, NUL or another): refused before sending")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"header {name} holds characters HTTP/1.1 cannot carry (past Latin-1)") from None


def check_headers(headers: dict) -> dict:
    for name, value in headers.items():
        check_header(name, value)
    return headers


def _check_target(target: str) -> str:
    if _BAD_TARGET.search(target) or not target.isascii():
        raise ValueError("a request path holds a space, a control character or non-ASCII text: refused before sending")
    return target


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case
    body: bytes = b""

    def json(self):
        return json.loads(self.body) if self.body else None


class Endpoint:
    """Where the node is: scheme, host, port and the path prefix every route is put under."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"url must be http:// or https://, not {parts.scheme or 'none'}")
        if parts.username is not None or parts.password is not None:
            # Not used as credentials: the node takes a Bearer key, and a password in a url ends up
            # in logs and in the Host header. Refused, so that it is neither sent nor silently dropped.
            raise ValueError("the url carries a user name or password (user:pass@host): "
                             "give the node's key as key=, not in the url")
        try:
            port = parts.port
        except ValueError:
            raise ValueError("the url's port is not a number from 0 to 65535") from None
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = port or (443 if self.tls else 80)
        if _BAD_TARGET.search(self.host):
            raise ValueError("the url's host holds a space or a control character")
        self.host_header = (f"[{self.host}]" if ":" in self.host else self.host) + ("" if port is None else f":{port}")
        check_header("Host", self.host_header)
        if _BAD_TARGET.search(parts.path):
            raise ValueError("the url's path holds a space or a control character")
        self.prefix = urllib.parse.quote(parts.path.rstrip("/"), safe="/%!$&'()*+,;=:@-._~")

    def target(self, path: str) -> str:
        return _check_target(self.prefix + path)


# Errors that mean the connection, not the request, failed: a node that closed an idle connection
# shows as one of these on the next request sent over it.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class SyncTransport:
    """One kept-alive connection, its requests one after another (a lock), for the blocking client."""

    def __init__(self, endpoint: Endpoint, timeout: float, max_answer: int = MAX_ANSWER_BYTES,
                 max_event: int = MAX_EVENT_BYTES):
        self.endpoint, self.timeout = endpoint, timeout
        self.max_answer, self.max_event = max_answer, max_event
        self._conn: http.client.HTTPConnection | None = None
        self._used = False
        self._lock = threading.Lock()

    def _connect(self, timeout: float | None = None) -> http.client.HTTPConnection:
        e, timeout = self.endpoint, timeout or self.timeout
        if e.tls:
            return http.client.HTTPSConnection(e.host, e.port, timeout=timeout, context=ssl.create_default_context())
        return http.client.HTTPConnection(e.host, e.port, timeout=timeout)

    def _send(self, conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None,
              headers: dict[str, str]):
        # http.client lets NUL and folded lines through: the headers are checked here, and Host is
        # put as the endpoint says (without a url's user name), not as http.client would.
        conn.putrequest(method, self.endpoint.target(path), skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", self.endpoint.host_header)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Response:
        check_headers(headers)
        self.endpoint.target(path)
        with self._lock:
            for last in (False, True):
                if self._conn is None:
                    self._conn, self._used = self._connect(), False
                reused = self._used
                try:
                    try:
                        self._send(self._conn, method, path, body, headers)
                        answer = self._conn.getresponse()
                    except STALE:
                        # Nothing of an answer came. Only a connection that served before may have
                        # been closed by the node while idle: the request never reached it then, so
                        # sending it again on a new one does not send it twice.
                        self.close_locked()
                        if last or not reused:
                            raise
                        continue
                    data = _read_all(answer, self.max_answer)  # cut here, the node did answer: not sent again
                    self._used = True
                    if answer.getheader("connection", "").lower() == "close":
                        self.close_locked()
                    return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, data)
                except http.client.HTTPException as e:
                    self.close_locked()
                    raise _http_error(e) from e
                except BaseException:
                    self.close_locked()
                    raise
        raise AssertionError("unreachable")

    def stream(self, path: str, headers: dict[str, str],
               timeout: float | None = None) -> tuple[Response, Iterator[bytes]]:
        """A request on a connection of its own whose answer is read line by line as it comes;
        `timeout`: the longest silence (the node sends a comment every 15 s)."""
        check_headers(headers)
        self.endpoint.target(path)
        conn = self._connect(timeout or max(self.timeout, 45.0))
        try:
            self._send(conn, "GET", path, None, headers)
            answer = conn.getresponse()
            head = Response(answer.status, {k.lower(): v for k, v in answer.getheaders()})
            if answer.status != 200:
                head.body = _read_all(answer, self.max_answer)
                conn.close()
                return head, (line for line in ())
        except http.client.HTTPException as e:
            conn.close()
            raise _http_error(e) from e
        except BaseException:
            conn.close()
            raise

        def lines():
            buffer = bytearray()
            try:
                while True:
                    piece = answer.read1(PIECE)  # what has come (readline would read byte by byte)
                    if not piece:
                        if buffer:
                            yield bytes(buffer)
                        return
                    yield from _split_lines(buffer, piece, self.max_event)
            except http.client.HTTPException as e:  # cut mid-chunk: as any dropped connection
                raise _http_error(e) from e
            finally:
                conn.close()

        return head, lines()

    def close_locked(self):
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def close(self):
        with self._lock:
            self.close_locked()


def _read_all(answer: http.client.HTTPResponse, limit: int) -> bytes:
    """The body, piece by piece (http.client reads a chunk no further than asked), up to `limit`."""
    if answer.length is not None and answer.length > limit:
        raise AnswerTooLarge(f"the answer's Content-Length {answer.length} passes max_answer_bytes ({limit})")
    parts, size = [], 0
    while True:
        piece = answer.read(PIECE)
        if not piece:
            return b"".join(parts)
        size += len(piece)
        if size > limit:
            raise AnswerTooLarge(f"the answer passed max_answer_bytes ({limit}): cut")
        parts.append(piece)


def _http_error(e: http.client.HTTPException) -> Exception:
    """http.client's protocol errors as this package's: a bound passed, or a dropped connection."""
    if isinstance(e, http.client.LineTooLong) or "more than" in str(e):  # "got more than 100 headers"
        return AnswerTooLarge(f"the answer's head passed a bound: {e}")
    return ConnectionResetError(f"the answer broke HTTP: {e!r}")


def _split_lines(buffer: bytearray, piece: bytes, limit: int) -> list[bytes]:
    """The lines `piece` completes (each with its b"\\n"); the rest stays in `buffer`, at most `limit`."""
    start = len(buffer)
    buffer += piece
    lines, begin = [], 0
    while (end := buffer.find(b"\n", start)) >= 0:
        lines.append(bytes(buffer[begin:end + 1]))
        begin = start = end + 1
    del buffer[:begin]
    if len(buffer) > limit:
        raise AnswerTooLarge(f"a line of the stream passed max_event_bytes ({limit}): cut")
    return lines


class _AsyncConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.used = False

    def close(self):
        self.writer.close()


def _request_bytes(endpoint: Endpoint, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> bytes:
    check_headers(headers)  # before anything is sent: a CR or LF here would start a request of its own
    lines = [f"{method} {endpoint.target(path)} HTTP/1.1", f"Host: {endpoint.host_header}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


class _NothingRead(Exception):
    """The connection failed before any byte of the answer came: the request may be sent again."""


async def _readline(reader: asyncio.StreamReader, what: str) -> bytes:
    try:
        return await reader.readline()
    except ValueError:  # the reader's limit (MAX_LINE) passed without a line's end
        raise AnswerTooLarge(f"{what} passed {MAX_LINE} bytes: cut") from None


_STATUS = re.compile(rb"HTTP/1\.[01] ([1-5][0-9][0-9])(?: .*)?\r?\n", re.S)
_LENGTH = re.compile(r"[0-9]{1,18}")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,15})[ \t]*(?:;[^\r\n]*)?\r?\n")


async def _read_head(reader: asyncio.StreamReader, status_line: bytes | None = None) -> Response:
    if status_line is None:
        status_line = await _readline(reader, "the status line")
    if not status_line:
        raise http.client.RemoteDisconnected("the node closed the connection without an answer")
    status = _STATUS.fullmatch(status_line)
    if not status:
        raise ConnectionResetError(f"not an HTTP status line: {status_line[:80]!r}")  # as a dropped connection
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = await _readline(reader, "a header line")
        if line in (b"\r\n", b"\n", b""):
            return Response(int(status.group(1)), headers)
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    raise AnswerTooLarge(f"the answer has more than {MAX_HEADERS} header lines: cut")


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The pieces of a chunked body as they arrive, none longer than PIECE, whatever size a chunk
    declares (a reader of the pieces bounds their sum)."""
    while True:
        size_line = await _readline(reader, "a chunk's size line")
        if not size_line:
            raise ConnectionResetError("the connection closed inside a chunked answer")
        size = _CHUNK_SIZE.fullmatch(size_line)
        if not size:
            raise ConnectionResetError(f"a chunk's size is not hexadecimal: {size_line[:40]!r}")
        left = int(size.group(1), 16)
        if left == 0:
            for _ in range(MAX_HEADERS + 1):  # trailers, read and dropped
                if (await _readline(reader, "a trailer line")) in (b"\r\n", b"\n", b""):
                    return
            raise AnswerTooLarge(f"the answer has more than {MAX_HEADERS} trailer lines: cut")
        while left:
            data = await reader.readexactly(min(left, PIECE))
            left -= len(data)
            yield data
        if await reader.readexactly(2) != b"\r\n":
            raise ConnectionResetError("a chunk does not end where its size says")


async def _read_body(reader: asyncio.StreamReader, head: Response, limit: int) -> bytes:
    if head.headers.get("transfer-encoding", "").lower() == "chunked":
        pieces = _chunks(reader)
    elif "content-length" in head.headers:
        length = head.headers["content-length"]
        if not _LENGTH.fullmatch(length):
            raise ConnectionResetError(f"the answer's Content-Length is not a number: {length[:40]!r}")
        if int(length) > limit:
            raise AnswerTooLarge(f"the answer's Content-Length {length} passes max_answer_bytes ({limit})")
        return await reader.readexactly(int(length))
    elif head.status in (204, 304) or 100 <= head.status < 200:
        return b""
    else:
        pieces = _until_closed(reader)
    parts, size = [], 0
    async for piece in pieces:
        size += len(piece)
        if size > limit:
            raise AnswerTooLarge(f"the answer passed max_answer_bytes ({limit}): cut")
        parts.append(piece)
    return b"".join(parts)


class AsyncTransport:
    """Kept-alive connections for asyncio: a request takes an idle one or opens another, and gives
    it back when its answer has been read, so concurrent requests each have their own."""

    def __init__(self, endpoint: Endpoint, timeout: float, max_idle: int = 16, max_answer: int = MAX_ANSWER_BYTES,
                 max_event: int = MAX_EVENT_BYTES):
        self.endpoint, self.timeout, self.max_idle = endpoint, timeout, max_idle
        self.max_answer, self.max_event = max_answer, max_event
        self._idle: list[_AsyncConnection] = []

    async def _open(self) -> _AsyncConnection:
        e = self.endpoint
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(e.host, e.port, ssl=ssl.create_default_context() if e.tls else None,
                                    limit=MAX_LINE), self.timeout)
        return _AsyncConnection(reader, writer)

    async def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str],
                      timeout: float | None = None) -> Response:
        request = _request_bytes(self.endpoint, method, path, body, headers)  # checked before a connection is taken
        for last in (False, True):
            # A second try takes a new connection: the other idle ones may be as stale as the first.
            conn = self._idle.pop() if self._idle and not last else await self._open()
            reused = conn.used
            try:
                conn.writer.write(request)
                head = await asyncio.wait_for(self._answer(conn), timeout or self.timeout)
            except _NothingRead as e:
                conn.close()
                if last or not reused:  # see SyncTransport.request
                    raise http.client.RemoteDisconnected(str(e)) from e
                continue
            except asyncio.IncompleteReadError as e:  # cut inside the answer: the node did answer
                conn.close()
                raise ConnectionResetError(f"the answer was cut short: {e}") from e
            except BaseException:
                conn.close()
                raise
            conn.used = True
            if head.headers.get("connection", "").lower() == "close" or len(self._idle) >= self.max_idle:
                conn.close()
            else:
                self._idle.append(conn)
            return head
        raise AssertionError("unreachable")

    async def _answer(self, conn: _AsyncConnection) -> Response:
        try:
            await conn.writer.drain()
            first = await _readline(conn.reader, "the status line")
        except STALE as e:
            raise _NothingRead(str(e)) from e
        if not first:
            raise _NothingRead("the node closed the connection without an answer")
        head = await _read_head(conn.reader, first)
        head.body = await _read_body(conn.reader, head, self.max_answer)
        return head

    async def stream(self, path: str, headers: dict[str, str]) -> tuple[Response, AsyncIterator[bytes]]:
        """A GET on a connection of its own; its answer's body, line by line, as it comes."""
        request = _request_bytes(self.endpoint, "GET", path, None, headers)
        conn = await self._open()
        try:
            conn.writer.write(request)
            await conn.writer.drain()
            head = await asyncio.wait_for(_read_head(conn.reader), self.timeout)
            if head.status != 200:
                head.body = await asyncio.wait_for(_read_body(conn.reader, head, self.max_answer), self.timeout)
                conn.close()
                return head, _nothing()
        except BaseException:
            conn.close()
            raise
        return head, _lines(conn, head, self.max_event)

    async def close(self):
        for conn in self._idle:
            conn.close()
        self._idle.clear()


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover  (makes this an async generator)


STREAM_SILENCE = 45.0  # seconds without a byte, comments included (the node sends one every 15 s): a drop


async def _lines(conn: _AsyncConnection, head: Response, max_line: int) -> AsyncIterator[bytes]:
    buffer = bytearray()
    try:
        if head.headers.get("transfer-encoding", "").lower() == "chunked":
            pieces = _chunks(conn.reader)
        else:
            pieces = _until_closed(conn.reader)
        while True:
            try:
                piece = await asyncio.wait_for(pieces.__anext__(), STREAM_SILENCE)
            except StopAsyncIteration:
                break
            except asyncio.TimeoutError:
                raise ConnectionResetError(f"no byte for {STREAM_SILENCE:.0f} s: a half-open connection") from None
            for line in _split_lines(buffer, piece, max_line):
                yield line
        if buffer:
            yield bytes(buffer)
    finally:
        conn.close()


async def _until_closed(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        data = await reader.read(PIECE)
        if not data:
            return
        yield data

"""HTTP/1.1 over kept-alive connections, standard library only: blocking (http.client) and asyncio.

Why not httpx: the package must install where only the standard library is at hand (`pip install
./clients/python` with no index to fetch from), and what it needs of HTTP is small: JSON requests
on a few kept-alive connections and one long-lived streamed answer (Server-Sent Events)."""
from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import AsyncIterator, Iterator


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
            raise ValueError(f"url must be http:// or https://, not {url!r}")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")
        self.host_header = parts.netloc

    def target(self, path: str) -> str:
        return self.prefix + path


# Errors that mean the connection, not the request, failed: a node that closed an idle connection
# shows as one of these on the next request sent over it.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class SyncTransport:
    """One kept-alive connection, its requests one after another (a lock), for the blocking client."""

    def __init__(self, endpoint: Endpoint, timeout: float):
        self.endpoint, self.timeout = endpoint, timeout
        self._conn: http.client.HTTPConnection | None = None
        self._used = False
        self._lock = threading.Lock()

    def _connect(self, timeout: float | None = None) -> http.client.HTTPConnection:
        e, timeout = self.endpoint, timeout or self.timeout
        if e.tls:
            return http.client.HTTPSConnection(e.host, e.port, timeout=timeout, context=ssl.create_default_context())
        return http.client.HTTPConnection(e.host, e.port, timeout=timeout)

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Response:
        with self._lock:
            for last in (False, True):
                if self._conn is None:
                    self._conn, self._used = self._connect(), False
                reused = self._used
                try:
                    try:
                        self._conn.request(method, self.endpoint.target(path), body, headers)
                        answer = self._conn.getresponse()
                    except STALE:
                        # Nothing of an answer came. Only a connection that served before may have
                        # been closed by the node while idle: the request never reached it then, so
                        # sending it again on a new one does not send it twice.
                        self.close_locked()
                        if last or not reused:
                            raise
                        continue
                    data = answer.read()  # cut here, the node did answer: not sent again
                    self._used = True
                    if answer.getheader("connection", "").lower() == "close":
                        self.close_locked()
                    return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, data)
                except BaseException:
                    self.close_locked()
                    raise
        raise AssertionError("unreachable")

    def stream(self, path: str, headers: dict[str, str],
               timeout: float | None = None) -> tuple[Response, Iterator[bytes]]:
        """A request on a connection of its own whose answer is read line by line as it comes;
        `timeout`: the longest silence (the node sends a comment every 15 s)."""
        conn = self._connect(timeout or max(self.timeout, 45.0))
        try:
            conn.request("GET", self.endpoint.target(path), None, headers)
            answer = conn.getresponse()
        except BaseException:
            conn.close()
            raise
        head = Response(answer.status, {k.lower(): v for k, v in answer.getheaders()})
        if answer.status != 200:
            head.body = answer.read()
            conn.close()
            return head, iter(())

        def lines():
            buffer = b""
            try:
                while True:
                    piece = answer.read1(65536)  # what has come (readline would read byte by byte)
                    if not piece:
                        if buffer:
                            yield buffer
                        return
                    buffer += piece
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        yield line + b"\n"
            except http.client.HTTPException as e:  # cut mid-chunk: as any dropped connection
                raise ConnectionResetError(str(e)) from e
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


class _AsyncConnection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.used = False

    def close(self):
        self.writer.close()


def _request_bytes(endpoint: Endpoint, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {endpoint.target(path)} HTTP/1.1", f"Host: {endpoint.host_header}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


class _NothingRead(Exception):
    """The connection failed before any byte of the answer came: the request may be sent again."""


async def _read_head(reader: asyncio.StreamReader, status_line: bytes | None = None) -> Response:
    if status_line is None:
        status_line = await reader.readline()
    if not status_line:
        raise http.client.RemoteDisconnected("the node closed the connection without an answer")
    parts = status_line.decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise http.client.BadStatusLine(status_line.decode("latin-1", "replace"))
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return Response(int(parts[1]), headers)


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The pieces of a chunked body as they arrive."""
    while True:
        size_line = await reader.readline()
        if not size_line:
            raise ConnectionResetError("the connection closed inside a chunked answer")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return
        data = await reader.readexactly(size)
        await reader.readexactly(2)
        yield data


async def _read_body(reader: asyncio.StreamReader, head: Response) -> bytes:
    if head.headers.get("transfer-encoding", "").lower() == "chunked":
        return b"".join([c async for c in _chunks(reader)])
    if "content-length" in head.headers:
        return await reader.readexactly(int(head.headers["content-length"]))
    if head.status in (204, 304) or 100 <= head.status < 200:
        return b""
    return await reader.read()  # until the node closes


class AsyncTransport:
    """Kept-alive connections for asyncio: a request takes an idle one or opens another, and gives
    it back when its answer has been read, so concurrent requests each have their own."""

    def __init__(self, endpoint: Endpoint, timeout: float, max_idle: int = 16):
        self.endpoint, self.timeout, self.max_idle = endpoint, timeout, max_idle
        self._idle: list[_AsyncConnection] = []

    async def _open(self) -> _AsyncConnection:
        e = self.endpoint
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(e.host, e.port, ssl=ssl.create_default_context() if e.tls else None,
                                    limit=2 ** 20), self.timeout)
        return _AsyncConnection(reader, writer)

    async def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str],
                      timeout: float | None = None) -> Response:
        for last in (False, True):
            # A second try takes a new connection: the other idle ones may be as stale as the first.
            conn = self._idle.pop() if self._idle and not last else await self._open()
            reused = conn.used
            try:
                conn.writer.write(_request_bytes(self.endpoint, method, path, body, headers))
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

    @staticmethod
    async def _answer(conn: _AsyncConnection) -> Response:
        try:
            await conn.writer.drain()
            first = await conn.reader.readline()
        except STALE as e:
            raise _NothingRead(str(e)) from e
        if not first:
            raise _NothingRead("the node closed the connection without an answer")
        head = await _read_head(conn.reader, first)
        head.body = await _read_body(conn.reader, head)
        return head

    async def stream(self, path: str, headers: dict[str, str]) -> tuple[Response, AsyncIterator[bytes]]:
        """A GET on a connection of its own; its answer's body, line by line, as it comes."""
        conn = await self._open()
        try:
            conn.writer.write(_request_bytes(self.endpoint, "GET", path, None, headers))
            await conn.writer.drain()
            head = await asyncio.wait_for(_read_head(conn.reader), self.timeout)
            if head.status != 200:
                head.body = await _read_body(conn.reader, head)
                conn.close()
                return head, _nothing()
        except BaseException:
            conn.close()
            raise
        return head, _lines(conn, head)

    async def close(self):
        for conn in self._idle:
            conn.close()
        self._idle.clear()


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover  (makes this an async generator)


STREAM_SILENCE = 45.0  # seconds without a byte, comments included (the node sends one every 15 s): a drop


async def _lines(conn: _AsyncConnection, head: Response) -> AsyncIterator[bytes]:
    buffer = b""
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
            buffer += piece
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                yield line + b"\n"
        if buffer:
            yield buffer
    finally:
        conn.close()


async def _until_closed(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        data = await reader.read(65536)
        if not data:
            return
        yield data

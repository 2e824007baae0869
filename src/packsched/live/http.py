"""A lean HTTP/1.1 client for the API server's short requests (binds, events, status writes, gets, lists).

urllib3 spends about 0.4 ms of CPU on one small request (URL parsing, the pool's key, ``http.client``'s header
parsing through the ``email`` package, its Retry and Timeout objects): at two writes a pod (the binding and its
``Scheduled`` event) that was the largest share of ``serve``'s CPU. This client writes the request in one
``sendall`` and reads the status line and headers itself, on keep-alive connections it keeps; the connections
themselves are made by the official client's urllib3 pool (``_new_conn``), so TLS (the cluster's CA, client
certificates, ``tls-server-name``, verification off) is set up exactly as for every other request. Watches stay on
urllib3 (long-lived streams, cut by ``close``); a configuration with a proxy uses urllib3 throughout.

Every failure to get an answer (refused, reset, timed out, a malformed answer) raises :class:`NoAnswer`, which
the port turns into an ``ApiError`` of status 0, as it does urllib3's.
"""

from __future__ import annotations

import io
import socket
import struct
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO

import urllib3
from urllib3.util import parse_url
from urllib3.util.wait import wait_for_read

MAX_LINE = 65536  # the longest status or header line read
MAX_HEADERS = 200


class NoAnswer(Exception):
    """The request got no (readable) answer."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class Answer:
    status: int
    reason: str
    body: bytes


class _Conn:
    __slots__ = ("raw", "rfile", "sock")

    def __init__(self, raw: Any, sock: socket.socket, kernel_timeout: bool = False) -> None:
        self.raw = raw  # urllib3's connection: it owns the socket (and closes it)
        self.sock = sock
        # (a socket with the kernel's timeout is blocking for Python, whose file object would read its timeout as
        # "no data yet": read through _Receiver, which reports it as the timeout it is)
        self.rfile: BinaryIO = io.BufferedReader(_Receiver(sock)) if kernel_timeout else sock.makefile("rb")

    def close(self) -> None:
        try:
            self.rfile.close()
        finally:
            self.raw.close()


class LeanClient:
    def __init__(self, pool_manager: urllib3.PoolManager, base_url: str, timeout_s: float, connect_timeout_s: float):
        url = parse_url(base_url)
        self._pools = pool_manager
        self._base_url = base_url
        self.prefix = (url.path or "").rstrip("/")  # a server URL may carry a path (a proxying front end)
        self.host_header = url.netloc or ""
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.max_idle = max(int(pool_manager.connection_pool_kw.get("maxsize") or 1), 1)
        self._idle: list[_Conn] = []
        self._lock = threading.Lock()

    @staticmethod
    def usable(pool_manager: object) -> bool:
        """Whether requests may bypass the pool manager: a plain one (no proxy) of a urllib3 that makes its
        connections as expected."""
        from urllib3.connectionpool import HTTPConnectionPool

        return type(pool_manager) is urllib3.PoolManager and hasattr(HTTPConnectionPool, "_new_conn")

    # -- connections ------------------------------------------------------------------------------------

    def _connect(self) -> _Conn:
        pool = self._pools.connection_from_url(self._base_url)
        raw: Any = pool._new_conn()  # TLS and socket options as the pool sets them up
        raw.timeout = self.connect_timeout_s
        try:
            raw.connect()
            sock = raw.sock
            if sock is None:
                raise OSError("no socket after connect")
            return _Conn(raw, sock, _set_timeout(sock, self.timeout_s))
        except BaseException:
            raw.close()
            raise

    def _take(self) -> _Conn:
        """An idle connection the server has not closed meanwhile, else a new one."""
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._connect()
            try:
                dropped = wait_for_read(conn.sock, timeout=0.0)  # readable while idle: closed (or garbage)
            except OSError:
                dropped = True
            if not dropped:
                return conn
            conn.close()

    def _give_back(self, conn: _Conn) -> None:
        with self._lock:
            if len(self._idle) < self.max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close the idle connections (requests on the wire finish; later ones connect again)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # -- requests ---------------------------------------------------------------------------------------

    def request(self, method: str, target: str, headers: bytes, body: bytes | None) -> Answer:
        """``target``: the path and query (the server URL's own path is put before it); ``headers``: header lines,
        each ending in CRLF (Host and Content-Length are added)."""
        head = f"{method} {self.prefix}{target} HTTP/1.1\r\nHost: {self.host_header}\r\n".encode("latin-1")
        if body is not None:
            data = b"%sContent-Length: %d\r\n%s\r\n%s" % (head, len(body), headers, body)
        else:
            data = head + headers + b"\r\n"
        try:
            conn = self._take()
        except (OSError, urllib3.exceptions.HTTPError) as exc:  # refused, unresolvable, TLS handshake failed
            raise NoAnswer(type(exc).__name__, str(exc) or type(exc).__name__) from None
        try:
            conn.sock.sendall(data)
            answer, keep = _read_response(conn.rfile, method)
        except NoAnswer:
            conn.close()
            raise
        except BlockingIOError:  # the kernel's timeout (SO_RCVTIMEO, SO_SNDTIMEO) of a plain socket ran out
            conn.close()
            raise NoAnswer("TimeoutError", "timed out") from None
        except (OSError, ValueError) as exc:  # socket.timeout and ssl.SSLError are OSErrors
            conn.close()
            raise NoAnswer(type(exc).__name__, str(exc) or type(exc).__name__) from None
        except BaseException:
            conn.close()
            raise
        if keep:
            self._give_back(conn)
        else:
            conn.close()
        return answer


class _Receiver(io.RawIOBase):
    """A plain socket with the kernel's receive timeout, read as a file: a receive that runs out raises
    TimeoutError (as a socket in Python's timeout mode does)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            return self._sock.recv_into(buffer)
        except BlockingIOError:  # EAGAIN: SO_RCVTIMEO ran out
            raise TimeoutError("timed out") from None


def _set_timeout(sock: socket.socket, timeout_s: float) -> bool:
    """Bound every send and receive on ``sock`` by ``timeout_s``. A plain TCP socket gets the kernel's own timeouts
    (SO_SNDTIMEO, SO_RCVTIMEO: a call that runs out fails with EAGAIN) and stays blocking for Python (answers
    True): in Python's timeout mode every send and receive polls first, a second system call, and each of the two
    gives up the interpreter lock and then waits to get it back from the scheduling thread. A TLS socket keeps
    Python's timeout (the ssl module drives its reads by it)."""
    if type(sock) is socket.socket and timeout_s > 0:
        seconds = int(timeout_s)
        tv = struct.pack("ll", seconds, int((timeout_s - seconds) * 1_000_000))
        try:
            sock.settimeout(None)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
            return True
        except OSError:
            pass  # (a platform without them): Python's timeout below
    sock.settimeout(timeout_s)
    return False


def _read_response(rfile: BinaryIO, method: str) -> tuple[Answer, bool]:
    """One response: the answer, and whether the connection may carry another request."""
    while True:
        line = rfile.readline(MAX_LINE + 1)
        if not line:
            raise NoAnswer("RemoteDisconnected", "the server closed the connection without an answer")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            raise NoAnswer("BadStatusLine", f"not an HTTP status line: {line[:100]!r}")
        status = int(parts[1])
        reason = parts[2].strip().decode("latin-1") if len(parts) > 2 else ""
        length, chunked, close = _read_headers(rfile, http10=parts[0] == b"HTTP/1.0")
        if 100 <= status < 200:
            continue  # an interim answer (100 Continue): the real one follows
        if method == "HEAD" or status in (204, 304):
            return Answer(status, reason, b""), not close
        if chunked:
            return Answer(status, reason, _read_chunked(rfile)), not close
        if length is not None:
            body = rfile.read(length)
            if len(body) < length:
                raise NoAnswer("IncompleteRead", f"{len(body)} bytes read, {length} more expected")
            return Answer(status, reason, body), not close
        return Answer(status, reason, rfile.read()), False  # delimited by the connection's end


def _read_headers(rfile: BinaryIO, http10: bool) -> tuple[int | None, bool, bool]:
    """The headers that say how the body is framed: its Content-Length (None: not given), whether it is chunked,
    and whether the server closes the connection after it."""
    length: int | None = None
    chunked = False
    close = http10
    for _ in range(MAX_HEADERS + 1):
        h = rfile.readline(MAX_LINE + 1)
        if h in (b"\r\n", b"\n"):
            return length, chunked, close
        if not h:
            raise NoAnswer("IncompleteRead", "the connection closed within the response's headers")
        name, _, value = h.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            tokens = value.lower()
            close = b"close" in tokens or (close and b"keep-alive" not in tokens)
    raise NoAnswer("BadResponse", "too many header lines")


def _read_chunked(rfile: BinaryIO) -> bytes:
    parts: list[bytes] = []
    while True:
        line = rfile.readline(MAX_LINE + 1)
        if not line:
            raise NoAnswer("IncompleteRead", "the connection closed within a chunked body")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while True:  # trailers, up to the blank line
                t = rfile.readline(MAX_LINE + 1)
                if t in (b"\r\n", b"\n", b""):
                    return b"".join(parts)
        chunk = rfile.read(size)
        if len(chunk) < size:
            raise NoAnswer("IncompleteRead", "the connection closed within a chunk")
        parts.append(chunk)
        rfile.readline(MAX_LINE + 1)  # the CRLF after the chunk

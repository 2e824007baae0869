"""The lean HTTP/1.1 client (packsched.live.http) under KubernetesPort: keep-alive, the ways a body may be framed,
connections the server closed, a server URL with a path, TLS set up from the kubeconfig, answers it cannot read."""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import urllib3
import yaml
from kubernetes import client as k8s_client

from packsched.live.http import LeanClient
from packsched.live.kube import KubernetesPort
from packsched.live.port import EVENTS, NODES, ApiError

DATA = Path(__file__).parent / "data"
CERT, KEY = DATA / "tls-127.0.0.1.crt", DATA / "tls-127.0.0.1.key"
OTHER_CA = DATA / "tls-other-ca.crt"

Serve = Callable[..., tuple["RawServer", KubernetesPort]]  # the fixture: a server and a port connected to it
# A request as the server saw it (method, target, headers, body) -> the raw answer, and whether to close after it.
Script = Callable[["Seen"], tuple[bytes, bool]]


@dataclass
class Seen:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    conn: int  # which connection (0, 1, ...) carried it


def ok(body: bytes = b'{"kind": "Node"}') -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


@dataclass
class RawServer:
    """A server that answers each request with what ``script`` says, over plain TCP or TLS."""

    script: Script
    tls: bool = False
    seen: list[Seen] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.ctx: ssl.SSLContext | None = None
        if self.tls:
            self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ctx.load_cert_chain(CERT, KEY)
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            n = self.connections
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn, n), daemon=True).start()

    def _serve(self, raw: socket.socket, n: int) -> None:
        try:
            conn = self.ctx.wrap_socket(raw, server_side=True) if self.ctx is not None else raw
        except (OSError, ssl.SSLError):
            raw.close()
            return
        self.conns.append(conn)
        rfile = conn.makefile("rb")
        try:
            while True:
                line = rfile.readline()
                if not line:
                    return
                method, target, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (h := rfile.readline()) not in (b"\r\n", b""):
                    k, _, v = h.decode().partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = rfile.read(int(headers.get("content-length", "0")))
                seen = Seen(method, target, headers, body, n)
                self.seen.append(seen)
                answer, close = self.script(seen)
                conn.sendall(answer)
                if close:
                    return
        except OSError:
            return
        finally:
            conn.close()

    def close_idle(self) -> None:
        """Close every connection from the server's side (as an idle timeout does)."""
        for c in self.conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self.sock.close()
        self.close_idle()


def kubeconfig(tmp: Path, server: str, ca: Path | None = None) -> str:
    cluster: dict[str, object] = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca.read_bytes()).decode()
    data = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": "secret-token"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path = tmp / "kubeconfig"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    servers: list[RawServer] = []

    def make(
        script: Script, tls: bool = False, path: str = "", ca: Path | None = None
    ) -> tuple[RawServer, KubernetesPort]:
        srv = RawServer(script, tls=tls)
        servers.append(srv)
        url = f"{'https' if tls else 'http'}://127.0.0.1:{srv.port}{path}"
        port = KubernetesPort.connect(kubeconfig(tmp_path, url, ca), timeout_s=2, qps=0)
        return srv, port

    yield make
    for srv in servers:
        srv.stop()


def test_requests_share_one_keep_alive_connection_and_carry_the_credentials(
    serve: Serve,
) -> None:
    srv, port = serve(lambda s: (ok(), False))
    assert port.transport == "lean"
    for _ in range(3):
        assert port.get(NODES, "", "a") == {"kind": "Node"}
    port.create(EVENTS, "default", {"metadata": {"name": "e"}, "note": "ünïcode"})
    assert srv.connections == 1
    assert [s.target for s in srv.seen[:1]] == ["/api/v1/nodes/a"]
    last = srv.seen[-1]
    assert last.method == "POST" and last.headers["content-type"] == "application/json"
    assert last.headers["authorization"] == "Bearer secret-token"
    assert last.headers["host"] == f"127.0.0.1:{srv.port}"
    assert last.body.decode() == '{"metadata": {"name": "e"}, "note": "\\u00fcn\\u00efcode"}'


CHUNKED = b'5;x=y\r\n{"a":\r\n3\r\n 1}\r\n0\r\nX-T: 1\r\n\r\n'  # an extension, two chunks, a trailer


def test_a_chunked_body_and_one_ended_by_the_connection_are_read_whole(
    serve: Serve,
) -> None:
    answers = iter(
        [
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED, False),
            (b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{"b": 2}', False),
            (b'HTTP/1.0 200 OK\r\n\r\n{"c": 3}', True),  # no length: the body ends with the connection
            (ok(b'{"d": 4}'), False),
        ]
    )
    srv, port = serve(lambda s: next(answers))
    assert port.get(NODES, "", "a") == {"a": 1}
    assert port.get(NODES, "", "a") == {"b": 2}
    assert port.get(NODES, "", "a") == {"c": 3}
    assert port.get(NODES, "", "a") == {"d": 4}
    assert srv.connections == 2


def test_connection_close_and_a_connection_the_server_closed_while_idle_are_not_reused(
    serve: Serve,
) -> None:
    srv, port = serve(
        lambda s: (ok() if s.conn else ok().replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1), False)
    )
    port.get(NODES, "", "a")  # answered "Connection: close"
    port.get(NODES, "", "a")  # on a second connection, kept
    assert srv.connections == 2
    srv.close_idle()
    assert port.get(NODES, "", "a") == {"kind": "Node"}  # not sent on the closed one
    assert srv.connections == 3


def test_the_server_urls_path_goes_before_every_request(serve: Serve) -> None:
    srv, port = serve(lambda s: (ok(), False), path="/k8s/clusters/c-1")
    port.bind("default", "p", "", "n1")
    assert srv.seen[0].target == "/k8s/clusters/c-1/api/v1/namespaces/default/pods/p/binding"


def test_refusals_carry_the_status_and_unreadable_answers_are_status_0(
    serve: Serve,
) -> None:
    conflict = b'{"kind": "Status", "reason": "AlreadyExists", "message": "taken", "code": 409}'
    answers = iter(
        [
            (b"HTTP/1.1 409 Conflict\r\nContent-Length: %d\r\n\r\n%s" % (len(conflict), conflict), False),
            (b"SPDY/3 200 OK\r\n\r\n", True),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{}", True),  # cut short
            (b"", True),  # closed without an answer
        ]
    )
    _, port = serve(lambda s: next(answers))
    with pytest.raises(ApiError) as err:
        port.bind("default", "p", "", "n1")
    assert (err.value.status, err.value.reason, err.value.message) == (409, "AlreadyExists", "taken")
    for reason in ("BadStatusLine", "IncompleteRead", "RemoteDisconnected"):
        with pytest.raises(ApiError) as err:
            port.get(NODES, "", "a")
        assert (err.value.status, err.value.reason) == (0, reason)


def test_tls_is_verified_against_the_kubeconfigs_certificate_authority(
    serve: Serve,
) -> None:
    srv, port = serve(lambda s: (ok(), False), tls=True, ca=CERT)
    assert port.get(NODES, "", "a") == {"kind": "Node"}
    assert port.get(NODES, "", "a") == {"kind": "Node"}
    assert srv.connections == 1
    _, wrong = serve(lambda s: (ok(), False), tls=True, ca=OTHER_CA)
    with pytest.raises(ApiError) as err:
        wrong.get(NODES, "", "a")
    assert err.value.status == 0 and "CERTIFICATE_VERIFY_FAILED" in err.value.message


def test_a_client_through_a_proxy_keeps_urllib3() -> None:
    assert LeanClient.usable(urllib3.PoolManager())
    assert not LeanClient.usable(urllib3.ProxyManager("http://127.0.0.1:3128"))
    cfg = k8s_client.Configuration()
    cfg.host, cfg.proxy = "https://10.0.0.1:6443", "http://127.0.0.1:3128"
    assert KubernetesPort(cfg).transport == "urllib3"


def test_a_credential_with_a_line_break_is_refused_not_sent(serve: Serve, tmp_path: Path) -> None:
    srv, port = serve(lambda s: (ok(), False))
    port._cfg.refresh_api_key_hook = None  # (it would read the kubeconfig again)
    port._cfg.api_key["BearerToken"] = "Bearer a\r\nX-Injected: 1"
    port._auth = None  # ask the configuration again
    with pytest.raises(ApiError) as err:
        port.get(NODES, "", "a")
    assert (err.value.status, err.value.reason) == (0, "InvalidHeader") and srv.seen == []


def test_a_plain_connection_times_out_by_the_kernels_timeout_as_by_pythons(tmp_path: Path) -> None:
    """A plain TCP connection is blocking with SO_RCVTIMEO/SO_SNDTIMEO set (no poll before each call); an answer
    that does not come within the timeout is a TimeoutError all the same (status 0), and the connection is dropped."""
    held = threading.Event()

    def hang(seen: Seen) -> tuple[bytes, bool]:
        if seen.target.endswith("/slow"):
            held.wait(10)
            return b"", True
        return ok(), False

    srv = RawServer(hang)
    try:
        url = f"http://127.0.0.1:{srv.port}"
        port = KubernetesPort.connect(kubeconfig(tmp_path, url), timeout_s=0.3, qps=0)
        assert port.get(NODES, "", "a") == {"kind": "Node"}
        lean = port._lean
        assert lean is not None and len(lean._idle) == 1
        sock = lean._idle[0].sock
        assert sock.gettimeout() is None  # blocking for Python
        tv = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.calcsize("ll"))
        assert struct.unpack("ll", tv) == (0, 300000)
        with pytest.raises(ApiError) as err:
            port.get(NODES, "", "slow")
        assert (err.value.status, err.value.reason, err.value.message) == (0, "TimeoutError", "timed out")
        assert lean._idle == []  # the timed-out connection is not kept
        held.set()
        assert port.get(NODES, "", "a") == {"kind": "Node"}
        assert srv.connections == 2
    finally:
        held.set()
        srv.stop()

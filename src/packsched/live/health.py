"""``/healthz``, ``/livez``, ``/readyz`` and ``/metrics`` on a small HTTP server of the standard library."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from packsched.live.metrics import CONTENT_TYPE, Metrics

Check = Callable[[], tuple[bool, str]]


class HealthServer:
    def __init__(self, address: str, port: int, metrics: Metrics, healthy: Check, ready: Check) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path in ("/healthz", "/livez"):
                    outer._answer(self, *healthy())
                elif path == "/readyz":
                    outer._answer(self, *ready())
                elif path == "/metrics":
                    body = metrics.exposition()
                    self.send_response(200)
                    self.send_header("Content-Type", CONTENT_TYPE)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    outer._answer(self, False, "not found", 404)

            def log_message(self, format: str, *args: object) -> None:
                return  # requests are not worth a log line each

        self.httpd = ThreadingHTTPServer((address, port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @staticmethod
    def _answer(h: BaseHTTPRequestHandler, ok: bool, text: str, failure_code: int = 500) -> None:
        body = (text + "\n").encode()
        h.send_response(200 if ok else failure_code)
        h.send_header("Content-Type", "text/plain; charset=utf-8")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.1,), name="health", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

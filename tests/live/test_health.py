"""The health endpoints answer as the live guide says (issue 24: the guide said `/readyz` answers 503 during an API
server outage; it answers 500, as kube-scheduler's healthz handlers do)."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

from packsched.live.health import HealthServer
from packsched.live.metrics import Metrics

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "live.md"


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_readyz_during_an_outage_answers_what_the_guide_says() -> None:
    claim = re.search(r"`/readyz` answers (\d{3}) `([^`]+)`", GUIDE.read_text(encoding="utf-8"))
    assert claim is not None, "the live guide no longer says what /readyz answers during an outage"
    server = HealthServer("127.0.0.1", 0, Metrics(), lambda: (True, "ok"), lambda: (False, "API server unreachable"))
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        assert _get(base + "/readyz") == (int(claim.group(1)), claim.group(2) + "\n")
        assert _get(base + "/healthz") == (200, "ok\n")
    finally:
        server.stop()

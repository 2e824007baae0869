"""Fixtures for the live adapter's tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from live.fakeapi import FakeApiServer


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    server = FakeApiServer(max_watch_s=float(os.environ.get("FAKEAPI_MAX_WATCH_S", "3")))
    server.start()
    try:
        yield server
    finally:
        server.stop()

"""The headless browser the HTML report's tests share (tests/browser_pages.py): one per test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser_pages import start_browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from start_browser()

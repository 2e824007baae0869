"""``packsched.live.logs``: the serve command's structured logs, one JSON object per line or key=value text, with
the fields given as ``extra``, the exception's traceback, and ``setup`` pointing the packsched logger at stderr."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sys
from collections.abc import Iterator

import pytest

from packsched.live import logs

CREATED = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.UTC).timestamp()


def record(msg: str = "bound %s", *args: object, exc: bool = False, **extra: object) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            exc_info = sys.exc_info()
    rec = logging.getLogger("packsched.live").makeRecord(
        "packsched.live", logging.WARNING, "f.py", 1, msg, args or None, exc_info, extra=extra or None
    )
    rec.created = CREATED
    return rec


def test_json_has_time_level_logger_message_and_the_extra_fields() -> None:
    line = logs.JsonFormatter().format(record("bound %s", "ns/p", node="n1", attempt=2, when=dt.date(2024, 1, 2)))
    assert json.loads(line) == {
        "ts": "2024-05-06T07:08:09.123456Z",
        "level": "warning",
        "logger": "packsched.live",
        "msg": "bound ns/p",
        "node": "n1",
        "attempt": 2,
        "when": "2024-01-02",  # what JSON cannot hold is written as text
    }
    assert "\n" not in line


def test_json_carries_the_traceback() -> None:
    data = json.loads(logs.JsonFormatter().format(record("failed", exc=True)))
    assert data["msg"] == "failed"
    assert data["exception"].startswith("Traceback") and "ValueError: boom" in data["exception"]


def test_text_is_time_level_letter_message_then_fields() -> None:
    fmt = logs.TextFormatter()
    assert fmt.format(record("bound %s", "ns/p", node="n1", attempt=2)) == (
        '07:08:09.123 W bound ns/p node="n1" attempt=2'
    )
    assert fmt.format(record("plain")) == "07:08:09.123 W plain"  # no fields: no trailing space


def test_text_carries_the_traceback_on_the_next_lines() -> None:
    first, *rest = logs.TextFormatter().format(record("failed", exc=True)).split("\n")
    assert first == "07:08:09.123 W failed"
    assert rest[0].startswith("Traceback") and rest[-1] == "ValueError: boom"


@pytest.fixture
def packsched_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger("packsched")
    saved = (root.handlers[:], root.level, root.propagate)
    yield root
    root.handlers[:], root.level, root.propagate = saved[0], saved[1], saved[2]


@pytest.mark.parametrize(("fmt", "formatter"), [("json", logs.JsonFormatter), ("text", logs.TextFormatter)])
def test_setup_writes_the_chosen_format_to_stderr_at_the_level(
    fmt: str,
    formatter: type[logging.Formatter],
    packsched_logger: logging.Logger,
    capsys: pytest.CaptureFixture[str],
) -> None:
    logs.setup(fmt, "warning")
    logs.setup(fmt, "warning")  # again: still one handler
    (handler,) = packsched_logger.handlers
    assert isinstance(handler.formatter, formatter)
    assert packsched_logger.level == logging.WARNING and not packsched_logger.propagate
    log = logging.getLogger("packsched.live.test")
    log.info("hidden")
    log.warning("shown", extra={"pod": "ns/p"})
    out, err = capsys.readouterr()
    assert out == "" and "hidden" not in err
    (line,) = err.splitlines()
    if fmt == "json":
        assert json.loads(line)["msg"] == "shown" and json.loads(line)["pod"] == "ns/p"
    else:
        assert re.fullmatch(r'\d\d:\d\d:\d\d\.\d{3} W shown pod="ns/p"', line)

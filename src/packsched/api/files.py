"""Reading input files, ``-`` meaning standard input (as kubectl's ``-f -``)."""

from __future__ import annotations

import sys

STDIN = "-"
STDIN_LABEL = "<stdin>"

# Standard input can be read only once: what was read, and from which stream (a test may swap sys.stdin).
_stdin_read: tuple[object, str] | None = None


def read_text(path: str) -> str:
    """The UTF-8 text of ``path``, or of standard input when ``path`` is ``-`` (read once: every later call gets
    the same text). Raises OSError and UnicodeDecodeError as ``open`` does."""
    global _stdin_read
    if path != STDIN:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    stream = sys.stdin
    if stream is None:  # started without one
        raise OSError("no standard input")
    if _stdin_read is None or _stdin_read[0] is not stream:
        buffer = getattr(stream, "buffer", None)
        text = buffer.read().decode("utf-8") if buffer is not None else stream.read()
        _stdin_read = (stream, text)
    return _stdin_read[1]


def display_name(path: str) -> str:
    """How messages name ``path``."""
    return STDIN_LABEL if path == STDIN else path

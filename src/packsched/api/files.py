"""Reading input files, ``-`` meaning standard input (as kubectl's ``-f -``); writing output files whole or not at
all (:func:`replacing`), a write error being an :class:`OutputError` that names the file."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

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


# -- output files ----------------------------------------------------------------------------------------------


class OutputError(Exception):
    """An output file that could not be written (a full disk, an I/O error, no permission): the CLI prints one
    line naming the file and exits with code 2."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: cannot write: {reason}")


def write_error(path: str | os.PathLike[str], exc: OSError) -> OutputError:
    """``exc``, met writing ``path``, as an OutputError naming ``path``."""
    return OutputError(path, exc.strerror or str(exc))


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """``with replacing(path) as tmp:`` write ``tmp``, a new file beside ``path`` with the same suffix (a writer that
    picks the format by the suffix, as matplotlib does, picks the same one); when the block ends without error
    ``tmp`` is renamed onto ``path``, at once: a reader sees the old file or the new one, never half of one. On
    any error (Ctrl-C included) ``tmp`` is removed and ``path`` is left as it was; an OSError (a full disk, an I/O
    error) becomes an :class:`OutputError` naming ``path``. The file gets the permissions a new file gets (the
    umask), or those of the file it replaces. A path that names no regular file (``/dev/stdout``, ``/dev/null``, a
    pipe) is written in place: renaming onto it would put a file where the device or pipe was (a pipe whose reader
    stopped early raises BrokenPipeError, as standard output does). A symbolic link stays one: the file it points to
    is replaced."""
    shown = Path(path)
    try:
        kind = os.stat(shown).st_mode
    except OSError:  # not there yet (or unreachable: the write below says why)
        kind = None
    if kind is not None and not stat.S_ISREG(kind):
        try:
            yield shown
        except BrokenPipeError:
            raise  # a pipe whose reader stopped early (``-o /dev/stdout | head``): the CLI exits quietly
        except OSError as exc:
            raise write_error(shown, exc) from None
        return
    target = Path(os.path.realpath(shown)) if kind is not None and shown.is_symlink() else shown
    folder = target.parent
    tmp: Path | None = None
    try:
        for _ in range(100):
            candidate = folder / f".{target.stem}.{secrets.token_hex(4)}.tmp{target.suffix}"
            try:
                os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except FileExistsError:
                continue
            tmp = candidate
            break
        else:  # pragma: no cover - 100 random names taken
            raise FileExistsError(f"no free temporary name beside {target}")
        with contextlib.suppress(OSError):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        yield tmp
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise write_error(shown, exc) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_text_replacing(path: str | os.PathLike[str], text: str) -> None:
    """``text`` into ``path`` (UTF-8) through :func:`replacing`: the whole text or the file as it was."""
    with replacing(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)

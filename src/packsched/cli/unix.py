"""What every command does as a Unix tool, whatever it runs:

- SIGTERM (what ``timeout``, systemd, Kubernetes and CI send) raises :class:`Terminated`, a KeyboardInterrupt, in
  the main thread: the command stops as Ctrl-C stops it (worker processes ended, partial results written, a
  snapshot's temporary folder removed) and exits with 143 (128 + SIGTERM) where Ctrl-C gives 130. A second
  SIGTERM while it stops is ignored (``timeout`` sends one to the command and one to its process group).
- A reader that closes standard output early (``packsched ... | head -1``): the rest of the output is dropped and
  the command exits with 0, without a traceback (standard output redirected to /dev/null, as Python's
  documentation on SIGPIPE recommends).
- Standard output that cannot be written (a full disk, an I/O error): one line, ``error: standard output: cannot
  write: REASON``, exit 2. An output file that cannot be written (:class:`~packsched.api.files.OutputError`): the
  same line naming the file; output files are written whole or not at all (:func:`~packsched.api.files.replacing`).

:class:`Group` is the command group that does all this around every command.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TextIO, cast

import typer
from rich.markup import escape
from typer.core import TyperGroup

from packsched.api.files import OutputError
from packsched.cli.console import make_console, to_devnull

EXIT_OUTPUT = 2  # an output that cannot be written: the project's error exit (as bad input)
err = make_console(stderr=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that the command stops as on Ctrl-C."""

    signum = signal.SIGTERM


def exit_code(stop: BaseException) -> int:
    """128 + the signal that stopped a command: 130 for Ctrl-C, 143 for SIGTERM (``stop``: the KeyboardInterrupt,
    or a sweep's Interrupted, that stopped it)."""
    return 128 + int(getattr(stop, "signum", signal.SIGINT))


def stop_text(stop: BaseException) -> str:
    """How the messages after a stop name it: ``interrupted`` (Ctrl-C) or ``terminated (SIGTERM)``."""
    return "terminated (SIGTERM)" if exit_code(stop) == 128 + signal.SIGTERM else "interrupted"


class StdoutError(Exception):
    """Standard output could not be written (not a closed pipe: that is BrokenPipeError)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"standard output: cannot write: {reason}")
        self.reason = reason


class _GuardedStdout:
    """Standard output, whose write errors other than a closed pipe become :class:`StdoutError`, so that they are
    told from the errors of the files a command reads or writes."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc.strerror or str(exc)) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc.strerror or str(exc)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def discard_stdout() -> None:
    """Standard output's file descriptor at /dev/null (:func:`packsched.cli.console.to_devnull`)."""
    to_devnull(sys.stdout)


def flush_stdout(text: str = "") -> None:
    """Write ``text`` to standard output and flush it now, while its errors can still be reported: a closed pipe
    ends the command quietly (exit 0), another error prints one line and exits with code 2."""
    try:
        if text:
            sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        discard_stdout()
        raise typer.Exit(0) from None
    except (StdoutError, OSError) as exc:
        discard_stdout()
        reason = exc.reason if isinstance(exc, StdoutError) else (exc.strerror or str(exc))
        _error(f"standard output: cannot write: {reason}")
        raise typer.Exit(EXIT_OUTPUT) from None


def _error(message: str) -> None:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)


def _raise_terminated() -> Callable[[], None]:
    """Install the SIGTERM handler (in the main thread only: elsewhere signals cannot be handled); returns what
    puts the previous one back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    raised = False

    def on_sigterm(_signum: int, _frame: FrameType | None) -> None:
        nonlocal raised
        if raised:  # stopping already: let it finish
            return
        raised = True
        raise Terminated

    previous = signal.signal(signal.SIGTERM, on_sigterm)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


class Group(TyperGroup):
    """packsched's command group: around every command, SIGTERM as Ctrl-C, a closed standard output ends it
    quietly, a write error is one line (see the module's doc)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Around the whole command line, parsing included: a reader that closed standard output while typer
        printed help or a usage text met rich's own answer (standard output pointed at /dev/null, exit code 1);
        as for every other output, that is exit code 0."""
        before = _identity(1)
        try:
            return super().main(*args, **kwargs)
        except SystemExit as exc:
            null = _identity_of(os.devnull)
            if exc.code == 1 and before != null and null is not None and _identity(1) == null:
                raise SystemExit(0) from None
            raise

    def invoke(self, ctx: Any) -> Any:  # typer's Context
        stdout = sys.stdout
        guarded = _GuardedStdout(stdout) if stdout is not None else None
        if guarded is not None:
            sys.stdout = cast(TextIO, guarded)
        restore_sigterm = _raise_terminated()
        try:
            try:
                result = super().invoke(ctx)
            except typer.Exit:
                with contextlib.suppress(typer.Exit):  # the command's exit code stands
                    flush_stdout()
                raise
            flush_stdout()
            return result
        except BrokenPipeError:
            discard_stdout()
            raise typer.Exit(0) from None
        except StdoutError as exc:
            discard_stdout()
            _error(str(exc))
            raise typer.Exit(EXIT_OUTPUT) from None
        except OutputError as exc:
            _error(str(exc))
            raise typer.Exit(EXIT_OUTPUT) from None
        except Terminated as stop:
            raise typer.Exit(exit_code(stop)) from None
        finally:
            restore_sigterm()
            if guarded is not None and sys.stdout is guarded:
                sys.stdout = stdout


def _identity(fd: int) -> tuple[int, int] | None:
    """The device and inode a file descriptor points at (None when it is closed)."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _identity_of(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino

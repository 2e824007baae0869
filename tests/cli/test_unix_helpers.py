"""``packsched.cli.unix`` in process (``test_unix_behaviour.py`` runs real subprocesses, which coverage does not
see): SIGTERM raised as :class:`Terminated`, a closed standard output ending the command with 0, a standard
output that cannot be written ending it with 2 and one line, and :class:`Group` doing all this around a command."""

from __future__ import annotations

import errno
import io
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from packsched.api.files import OutputError
from packsched.cli import unix
from packsched.cli.unix import (
    EXIT_OUTPUT,
    Group,
    StdoutError,
    Terminated,
    _GuardedStdout,
    _raise_terminated,
    discard_stdout,
    exit_code,
    flush_stdout,
    stop_text,
)


class Failing(io.StringIO):
    """A stream whose writes and flushes raise ``exc``."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc

    def write(self, text: str) -> int:
        raise self.exc

    def flush(self) -> None:
        raise self.exc


def test_exit_codes_and_stop_texts() -> None:
    assert exit_code(KeyboardInterrupt()) == 130 and stop_text(KeyboardInterrupt()) == "interrupted"
    assert exit_code(Terminated()) == 143 and stop_text(Terminated()) == "terminated (SIGTERM)"
    assert isinstance(Terminated(), KeyboardInterrupt)  # stops what Ctrl-C stops


# -- SIGTERM --------------------------------------------------------------------------------------------------------


@pytest.fixture
def sigterm_restored() -> Iterator[None]:
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


@pytest.mark.usefixtures("sigterm_restored")
def test_sigterm_raises_terminated_once_then_the_handler_is_restored() -> None:
    previous = signal.getsignal(signal.SIGTERM)
    restore = _raise_terminated()
    try:
        with pytest.raises(Terminated):
            os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)  # a second SIGTERM while stopping is ignored: no exception
    finally:
        restore()
    assert signal.getsignal(signal.SIGTERM) is previous


@pytest.mark.usefixtures("sigterm_restored")
def test_outside_the_main_thread_no_handler_is_installed() -> None:
    before = signal.getsignal(signal.SIGTERM)
    restores = []
    thread = threading.Thread(target=lambda: restores.append(_raise_terminated()))
    thread.start()
    thread.join()
    assert signal.getsignal(signal.SIGTERM) is before
    restores[0]()  # a no-op
    assert signal.getsignal(signal.SIGTERM) is before


# -- standard output ------------------------------------------------------------------------------------------------


def test_guarded_stdout_passes_writes_and_attributes_through() -> None:
    inner = io.StringIO()
    guarded = _GuardedStdout(inner)
    assert guarded.write("abc") == 3
    guarded.flush()
    assert inner.getvalue() == "abc" and guarded.getvalue() == "abc"  # other attributes are the stream's


@pytest.mark.parametrize("method", ["write", "flush"])
def test_guarded_stdout_tells_a_closed_pipe_from_a_write_error(method: str) -> None:
    def call(guarded: _GuardedStdout) -> None:
        guarded.write("x") if method == "write" else guarded.flush()

    with pytest.raises(BrokenPipeError):
        call(_GuardedStdout(Failing(BrokenPipeError(errno.EPIPE, "Broken pipe"))))
    with pytest.raises(StdoutError) as info:
        call(_GuardedStdout(Failing(OSError(errno.ENOSPC, "No space left on device"))))
    assert info.value.reason == "No space left on device"
    assert str(info.value) == "standard output: cannot write: No space left on device"
    with pytest.raises(StdoutError) as info:
        call(_GuardedStdout(Failing(OSError("no errno"))))
    assert info.value.reason == "no errno"  # no strerror: the exception's text


def test_discard_stdout_points_the_descriptor_at_dev_null(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.txt"
    with path.open("w", encoding="utf-8") as fh:
        monkeypatch.setattr(sys, "stdout", fh)
        fh.write("before\n")
        fh.flush()
        discard_stdout()
        fh.write("after\n")
        fh.flush()
        assert os.path.samestat(os.fstat(fh.fileno()), os.stat(os.devnull))
    assert path.read_text(encoding="utf-8") == "before\n"


def test_discard_stdout_leaves_a_stream_without_a_descriptor_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    discard_stdout()  # StringIO.fileno raises: nothing to point anywhere
    stream.write("still here")
    assert stream.getvalue() == "still here"


def test_flush_stdout_writes_and_flushes(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    flush_stdout("text\n")
    flush_stdout()
    assert stream.getvalue() == "text\n"


def test_flush_stdout_on_a_closed_pipe_exits_0_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", Failing(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    with pytest.raises(typer.Exit) as info:
        flush_stdout("x")
    assert info.value.exit_code == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "exc",
    [OSError(errno.EIO, "Input/output error"), StdoutError("Input/output error")],
    ids=["OSError", "StdoutError"],
)
def test_flush_stdout_on_a_write_error_exits_2_with_one_line(
    exc: Exception, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", Failing(exc))
    with pytest.raises(typer.Exit) as info:
        flush_stdout()
    assert info.value.exit_code == EXIT_OUTPUT == 2
    assert capsys.readouterr().err == "error: standard output: cannot write: Input/output error\n"


# -- Group: around a command ------------------------------------------------------------------------------------


def make_app() -> typer.Typer:
    app = typer.Typer(cls=Group)

    @app.command()
    def ok() -> None:
        sys.stdout.write("fine\n")

    @app.command()
    def pipe() -> None:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    @app.command()
    def full() -> None:
        raise StdoutError("No space left on device")

    @app.command()
    def outfile() -> None:
        raise OutputError("/x/report.html", "Permission denied")

    @app.command()
    def term() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not stop the command")  # pragma: no cover

    @app.command()
    def code() -> None:
        sys.stdout.write("partial\n")
        raise typer.Exit(3)

    @app.command()
    def stdout_type() -> None:
        sys.stdout.write(type(sys.stdout).__name__ + "\n")

    return app


@pytest.fixture
def app() -> typer.Typer:
    return make_app()


def run(app: typer.Typer, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_group_runs_a_command_with_a_guarded_stdout_then_puts_it_back(app: typer.Typer) -> None:
    assert run(app, "ok") == (0, "fine\n", "")
    assert run(app, "stdout-type")[1] == "_GuardedStdout\n"
    assert not isinstance(sys.stdout, _GuardedStdout)


def test_group_closed_pipe_exits_0(app: typer.Typer) -> None:
    assert run(app, "pipe") == (0, "", "")


def test_group_stdout_error_exits_2_with_one_line(app: typer.Typer) -> None:
    assert run(app, "full") == (2, "", "error: standard output: cannot write: No space left on device\n")


def test_group_output_file_error_names_the_file(app: typer.Typer) -> None:
    assert run(app, "outfile") == (2, "", "error: /x/report.html: cannot write: Permission denied\n")


@pytest.mark.usefixtures("sigterm_restored")
def test_group_sigterm_exits_143_and_restores_the_handler(app: typer.Typer) -> None:
    before = signal.getsignal(signal.SIGTERM)
    assert run(app, "term")[0] == 143
    assert signal.getsignal(signal.SIGTERM) is before


def test_group_keeps_the_commands_exit_code_and_flushes(app: typer.Typer) -> None:
    assert run(app, "code") == (3, "partial\n", "")


def test_group_exit_code_stands_when_the_flush_fails(app: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that exits with its own code keeps it, even if the last flush of standard output fails."""

    def failing_flush(text: str = "") -> None:
        raise typer.Exit(EXIT_OUTPUT)

    monkeypatch.setattr(unix, "flush_stdout", failing_flush)
    assert run(app, "code")[0] == 3
    assert run(app, "ok")[0] == EXIT_OUTPUT  # a command that ran to its end gets the flush's code

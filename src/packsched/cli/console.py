"""The consoles the commands print to: full width when the output is not a terminal."""

from __future__ import annotations

import errno
import os
import sys

from rich.console import Console, ConsoleDimensions

# Wide enough for any table: a pipe or a file gets every cell whole (rich's tables take only the width they need).
PIPE_WIDTH = 1_000_000


class PipeConsole(Console):
    """A rich Console that, writing to a pipe or a file, never wraps or cuts a table to the terminal's width
    (rich takes the width of whichever standard stream is a terminal, else 80). Colour is rich's choice: none
    when the stream is not a terminal as the console is made."""

    @property
    def size(self) -> ConsoleDimensions:
        dimensions = super().size
        if self.is_terminal:
            return dimensions
        return ConsoleDimensions(PIPE_WIDTH, dimensions.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def on_broken_pipe(self) -> None:
        """A reader that closed the pipe: nothing more is printed here (rich's own answer is exit code 1). On
        standard output the BrokenPipeError goes on to the command group (packsched.cli.unix), which ends the
        command quietly; on standard error the command goes on and ends with its own exit code (an error must not
        turn into success because nobody reads the message), what is left of the stream going to /dev/null."""
        self.quiet = True
        if not self.stderr:
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
        to_devnull(sys.stderr)


def to_devnull(stream: object) -> None:
    """Point ``stream``'s file descriptor at /dev/null, so that what is still buffered (flushed as Python exits)
    goes nowhere instead of failing again. A stream without one (a test's) is left alone."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def make_console(stderr: bool = False) -> Console:
    return PipeConsole(stderr=stderr)

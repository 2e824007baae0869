"""The consoles the commands print to: full width when the output is not a terminal."""

from __future__ import annotations

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


def make_console(stderr: bool = False) -> Console:
    return PipeConsole(stderr=stderr)

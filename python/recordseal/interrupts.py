"""Ctrl-C for the commands that run long (``ingest``, ``disclose``, ``verify`` over many
bundles): the first SIGINT asks the command to stop, and it finishes what is in flight (for a
bounded time), says what was done and how to resume, and exits 130; a second SIGINT exits at
once, with one line on standard error and no traceback.

A process started with SIGINT ignored (``nohup``, a shell's background job without job
control) keeps ignoring it, as it would without this module.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

#: The exit code of a command stopped by SIGINT (128 + 2, as shells report it).
EXIT_INTERRUPTED = 130


class Interrupt:
    """Whether SIGINT came: ``requested`` after the first one; ``on_first`` is called then
    (from the signal handler: it must only set a flag or schedule work), or at once when it
    is given after the first SIGINT came."""

    def __init__(self, command: str, resume: str, on_first: Callable[[], None] | None) -> None:
        self.command = command
        self.resume = resume
        self._on_first = on_first
        self.requested = False

    @property
    def on_first(self) -> Callable[[], None] | None:
        return self._on_first

    @on_first.setter
    def on_first(self, callback: Callable[[], None] | None) -> None:
        self._on_first = callback
        if self.requested and callback is not None:  # it came while the work was starting
            callback()

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            line = f"{self.command}: interrupted again: stopped at once; {self.resume}\n"
            os.write(sys.stderr.fileno(), line.encode())
            os._exit(EXIT_INTERRUPTED)
        self.requested = True
        if self._on_first is not None:
            self._on_first()


@contextmanager
def interruptible(
    command: str, resume: str, on_first: Callable[[], None] | None = None
) -> Iterator[Interrupt]:
    """SIGINT handled as the module says for the block; the previous handler after it.
    ``command`` begins the line of a second SIGINT, ``resume`` ends it (how to go on)."""
    interrupt = Interrupt(command, resume, on_first)
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        yield interrupt
        return
    signal.signal(signal.SIGINT, interrupt.handle)
    try:
        yield interrupt
    finally:
        signal.signal(signal.SIGINT, previous)

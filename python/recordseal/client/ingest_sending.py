"""How ``recordseal ingest`` sends its batches: read in a thread of its own, at most
``concurrency`` batches in flight, each reported as it is answered, in line order.

It stops reading at the first batch that fails as a whole, at an input that cannot be read,
or when asked to (``stop``, set by the first Ctrl-C): the batches in flight are still
answered and reported, within :data:`GRACE_SECONDS` after a Ctrl-C (a batch still unanswered
then is counted as not answered: it may have been stored, and a rerun recognises it).

The reading thread is a daemon: a read blocked on a pipe or a terminal that never ends holds
up neither the answer nor the exit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recordseal.client.lines import Batch
from recordseal.client.models import Problem, Receipt, Refused, Unavailable

if TYPE_CHECKING:
    from recordseal.client.session import Client

#: How long in-flight batches may take to be answered after a Ctrl-C.
GRACE_SECONDS = 5.0

#: A batch read and the task that sends it (None when it has nothing to send).
Sent = tuple[Batch, "asyncio.Task[list[Receipt | Problem]] | None"]
#: What is told of each batch reported: its bytes of input and its records answered.
Advance = Callable[[int, int], None]
#: Writes one batch's refusals and receipts (the command's output).
Report = Callable[[Batch, "list[Receipt | Problem]"], None]


@dataclass
class Tally:
    """What became of the lines read so far."""

    lines: int = 0
    stored: int = 0
    already_stored: int = 0
    blank: int = 0
    unsent: int = 0
    #: lines of batches sent but not answered within the grace after a Ctrl-C
    unanswered: int = 0
    refused: Counter[str] = field(default_factory=Counter)


class BatchReader:
    """Batches of the file open as ``fd``, read by a daemon thread ``depth`` at most ahead of
    the sender. The thread reads a descriptor of its own (a duplicate), which only it closes:
    a read it is blocked in holds no lock that the command's own file, or standard input,
    needs to close at the end."""

    def __init__(
        self, fd: int, batches: Callable[[Iterable[bytes]], Iterator[Batch]], depth: int
    ) -> None:
        self._fd = os.dup(fd)
        self._batches = batches
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Batch | OSError | None] = asyncio.Queue(maxsize=depth)
        self._stop = threading.Event()
        self.ended = False
        threading.Thread(target=self._run, name="recordseal-ingest-reader", daemon=True).start()

    def _run(self) -> None:
        try:
            with os.fdopen(self._fd, "rb") as lines:
                for batch in self._batches(lines):
                    if self._stop.is_set() or not self._put(batch):
                        return
        except OSError as error:
            self._put(error)
            return
        self._put(None)

    def _put(self, item: Batch | OSError | None) -> bool:
        """Hand ``item`` over (waiting while the sender is ``depth`` behind); False when the
        sender is gone."""
        try:
            asyncio.run_coroutine_threadsafe(self._queue.put(item), self._loop).result()
        except (RuntimeError, concurrent.futures.CancelledError):  # the loop closed, or
            return False  # cancelled the hand-over as the run ended
        return True

    async def next(self) -> Batch | None:
        """The next batch, or None at the end; OSError when the input cannot be read."""
        item = await self._queue.get()
        if isinstance(item, OSError):
            self.ended = True
            raise item
        if item is None:
            self.ended = True
        return item

    def stop(self) -> None:
        self._stop.set()


class Sender:
    """One run of batches through ``client``: :meth:`run` returns the failure, or None."""

    def __init__(
        self,
        client: Client,
        reader: BatchReader,
        tally: Tally,
        report: Report,
        advance: Advance,
        concurrency: int,
    ) -> None:
        self.client, self.reader, self.tally = client, reader, tally
        self.report, self.advance, self.concurrency = report, advance, concurrency
        self.pending: deque[Sent] = deque()
        self.failure: str | None = None

    async def run(self, stop: asyncio.Event) -> str | None:
        stopped = asyncio.ensure_future(stop.wait())
        read: asyncio.Future[Batch | None] | None = None
        try:
            while not stop.is_set():
                self._settle_answered(stop)  # first: what it frees makes room to read
                if stop.is_set():
                    break
                if read is None and not self.reader.ended and len(self.pending) < self.concurrency:
                    read = asyncio.ensure_future(self.reader.next())
                head = self.pending[0][1] if self.pending else None
                if read is None and head is None:
                    break  # the input read to its end, nothing in flight
                waits = {f for f in (read, head, stopped) if f is not None}
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                if read is not None and read.done():
                    self._take(read, stop)
                    read = None
        finally:
            stopped.cancel()
            if read is not None:
                read.cancel()
            self.reader.stop()
        await self._drain(GRACE_SECONDS if self.failure is None else None)
        return self.failure

    def _take(self, read: asyncio.Future[Batch | None], stop: asyncio.Event) -> None:
        try:
            batch = read.result()
        except OSError as error:
            self.failure = self.failure or f"reading the input: {error}"
            stop.set()
            return
        if batch is None:
            return
        task = None
        if batch.items:
            task = asyncio.create_task(self.client.ingest_batch(batch.items, batch.key))
        self.pending.append((batch, task))

    def _settle_answered(self, stop: asyncio.Event) -> None:
        """Report the answered batches at the head of the line, in line order."""
        while self.pending and (self.pending[0][1] is None or self.pending[0][1].done()):
            batch, task = self.pending.popleft()
            self._settle(batch, task, stop)

    def _settle(
        self, batch: Batch, task: asyncio.Task[list[Receipt | Problem]] | None, stop: Any
    ) -> None:
        results: list[Receipt | Problem] = []
        if task is not None:
            try:
                results = task.result()
            except (Refused, Unavailable) as error:
                self.failure = self.failure or f"lines from {batch.first_line}: {error}"
                stop.set()
                self.tally.unsent += sum(item is not None for item in batch.items)
        self.report(batch, results)
        self.advance(batch.size, len(results))

    async def _drain(self, grace: float | None) -> None:
        """Answer and report the batches in flight (within ``grace`` seconds, when given);
        those still unanswered are cancelled and counted."""
        tasks = [task for _, task in self.pending if task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        stop = asyncio.Event()
        while self.pending:
            batch, task = self.pending.popleft()
            if task is None or task.done():
                self._settle(batch, task, stop)
                continue
            task.cancel()
            self.tally.lines += batch.lines
            self.tally.blank += batch.blank
            self.tally.unanswered += sum(item is not None for item in batch.items)
        await asyncio.gather(*tasks, return_exceptions=True)  # none is left pending

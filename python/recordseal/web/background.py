"""The service's background tasks under one supervisor (docs/operations.md, "Background tasks").

A worker runs a few loops beside its requests: sealing and offering checkpoints to witnesses
(``ledger/sealer.py``), the purge of old idempotency keys (``services/retention.py``), the
fleet manifest's watch (``fleet/reload.py``) and the daily transparency files
(``fleet/transparency.py``). Each loop survives a failed round itself (it logs the round and
tries again on the next). :class:`TaskSupervisor` owns the tasks: it starts them all, stops them
all on shutdown (cancels, then awaits each, so none outlives the store it uses), and reports
them. A task that ends while the service runs, by an error or by returning, is a fault: it is
logged at ERROR with the task's name and the error's class (never its message, which may quote
a customer value), counted in ``recordseal_background_task_failures_total{task}``, and named
in ``GET /readyz``'s ``detail`` (the worker still serves: it stays ready).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from recordseal import metrics

log = logging.getLogger("recordseal")

#: ``app.state`` key of the worker's :class:`TaskSupervisor` (``/readyz`` reports it).
BACKGROUND_STATE = "background"

#: A background task's state: not started, running, stopped by the supervisor, or ended on its
#: own while the service ran (``ended``: it returned; ``failed``: it raised).
TaskState = Literal["idle", "running", "stopped", "ended", "failed"]


@dataclass(slots=True)
class _Entry:
    name: str
    work: Callable[[], Coroutine[Any, Any, None]]
    task: asyncio.Task[None] | None = None
    state: TaskState = "idle"
    #: The class of the error a failed task raised (its message is never kept).
    error: str | None = None


class TaskSupervisor:
    """Starts, stops and reports the named background tasks of one worker."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._stopping = False

    def add(self, name: str, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Register ``work`` (a coroutine function, called once at :meth:`start`) as ``name``."""
        if name in self._entries:
            raise ValueError(f"a background task named {name!r} is already registered")
        self._entries[name] = _Entry(name, work)

    def start(self) -> None:
        """Start every registered task (in the running event loop)."""
        for entry in self._entries.values():
            if entry.task is None:
                entry.task = asyncio.create_task(entry.work(), name=f"recordseal.{entry.name}")
                entry.state = "running"
                entry.task.add_done_callback(partial(self._ended, entry))

    async def stop(self) -> None:
        """Cancel every task, then wait for each to end (the store closes after this)."""
        self._stopping = True
        running = [entry.task for entry in self._entries.values() if entry.task is not None]
        for task in running:
            task.cancel()
        # Each task's outcome is read by _ended: a cancellation is the expected end here.
        await asyncio.gather(*running, return_exceptions=True)

    def report(self) -> dict[str, TaskState]:
        """Every task by name, with its state."""
        return {name: entry.state for name, entry in self._entries.items()}

    def faults(self) -> list[str]:
        """One line per task that ended while the service ran, for ``/readyz``'s ``detail``."""
        return [
            f"background task {entry.name} stopped"
            + (f" ({entry.error})" if entry.error else " (it returned)")
            for entry in self._entries.values()
            if entry.state in ("ended", "failed")
        ]

    def _ended(self, entry: _Entry, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            entry.state = "stopped"
            return
        error = task.exception()
        if self._stopping and error is None:
            entry.state = "stopped"
            return
        entry.state = "failed" if error is not None else "ended"
        entry.error = type(error).__name__ if error is not None else None
        metrics.BACKGROUND_TASK_FAILURES.labels(entry.name).inc()
        log.error(
            "background.task_ended",
            extra={"task": entry.name, "error": entry.error, "note": "not restarted"},
        )

"""Processes as Linux's /proc shows them (the platform whose ``PR_SET_PDEATHSIG`` ends a
service's workers with it): each named by (pid, start time), since a pid alone may be another
process's by the time it is looked at again (pids wrap around at 32768 here, and the test
suite starts thousands of processes)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

Process = tuple[int, str]


def stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (None: no such process)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def process(pid: int) -> Process:
    """The process ``pid`` names now."""
    fields = stat(pid)
    assert fields is not None, f"no process {pid}"
    return pid, fields[19]


def children(pid: int) -> list[Process]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = stat(int(entry.name))
            if fields is not None and int(fields[1]) == pid:
                found.append((int(entry.name), fields[19]))
    return found


def descendants(pid: int) -> list[Process]:
    """The children of ``pid``, theirs, and so on."""
    found = children(pid)
    for child in list(found):
        found += descendants(child[0])
    return found


def alive(process: Process) -> bool:
    """Whether that very process (same pid, same start time) still runs (a zombie does not)."""
    fields = stat(process[0])
    return fields is not None and fields[19] == process[1] and fields[0] != "Z"


def describe(process: Process) -> str:
    """Which process it is and what it is doing: its state, parent and command line."""
    fields = stat(process[0]) or ["?", "?"]
    try:
        command = Path(f"/proc/{process[0]}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        command = b"?"
    return f"pid {process[0]} state {fields[0]} parent {fields[1]}: {command.decode()[:200]}"


def wait_gone(processes: Iterable[Process], timeout: float = 120) -> list[str]:
    """Wait until none of ``processes`` runs; those still running after ``timeout`` seconds
    (a bound on a hang, not a guess of how fast the machine is), described."""
    processes = list(processes)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in processes):
        time.sleep(0.1)
    return [describe(p) for p in processes if alive(p)]


def kill_all(processes: Iterable[Process]) -> None:
    """SIGKILL those of ``processes`` still running (and no other process with their pid)."""
    for p in processes:
        if alive(p):
            os.kill(p[0], signal.SIGKILL)

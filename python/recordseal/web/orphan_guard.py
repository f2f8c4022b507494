"""The orphan guard: workers end with their supervisor. When ``recordseal serve`` dies
(SIGKILL, the OOM killer), its worker processes must not live on as orphans still holding its
port, where a restart would run old and new workers side by side. (Not to be confused with
``web/background.py``'s ``TaskSupervisor``, which runs a worker's background tasks.)

On Linux the kernel sends the worker one SIGTERM when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), which lets it finish its requests; and a watchdog process
forked from the worker, which waits for the supervisor's exit without sharing the worker's
interpreter, kills the worker ``GRACE`` seconds later should it still run. The kill must not
need the worker's Python: granian 2.8 blocks a worker for good, holding its GIL, on a second
stop signal that comes before the worker serves (its stop channel holds one signal, and the
call that sends another waits without releasing the GIL), so no thread of the worker could
act then. For the same reason nothing here sends the worker a stop signal of its own where the
kernel already sent one. Elsewhere a thread watches the parent, stops the worker with SIGTERM
and ends it ``GRACE`` seconds later. Nothing acknowledged is lost either way: no request is
answered before its commit.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import threading
import time

#: Set by ``recordseal serve`` for its workers: the pid of the supervisor they belong to.
SUPERVISOR_VARIABLE = "RECORDSEAL_SUPERVISOR_PID"
#: Seconds a worker has, once its supervisor is gone, to finish after SIGTERM.
GRACE = 5.0
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
#: The watchdog's name in ps and top (its command line is the worker's).
WATCHDOG_NAME = b"serve-watchdog"


def exit_with_supervisor() -> None:
    """Arrange for this worker to end when its supervisor does (a no-op outside ``serve``)."""
    text = os.environ.get(SUPERVISOR_VARIABLE)
    if not text or not text.isdigit():
        return
    supervisor = int(text)
    signalled = sys.platform.startswith("linux") and _set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != supervisor:  # it died before anything was armed: nothing started yet
        os._exit(1)
    if signalled and _start_watchdog(supervisor):
        return
    threading.Thread(
        target=_watch, args=(supervisor, signalled), daemon=True, name="supervisor"
    ).start()


def _set_parent_death_signal(signum: int) -> bool:
    return _prctl(_PR_SET_PDEATHSIG, int(signum))


def _prctl(option: int, value: int | bytes) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _start_watchdog(supervisor: int) -> bool:
    """Fork the process that kills this worker ``GRACE`` seconds after ``supervisor`` exits;
    False where it cannot wait for that exit (no ``pidfd_open``)."""
    try:
        supervisor_fd = os.pidfd_open(supervisor)
    except (AttributeError, OSError):
        return False
    if os.getppid() != supervisor:  # gone before the descriptor was taken: it names another
        os._exit(1)
    worker = os.getpid()
    if os.fork():
        os.close(supervisor_fd)
        return True
    try:  # the watchdog: it never returns into the worker's code
        _watchdog(worker, supervisor_fd)
    finally:
        os._exit(0)


def _watchdog(worker: int, supervisor_fd: int) -> None:
    # A Ctrl-C or a stop meant for the worker's process group is not for the watchdog: it
    # ends with the worker (SIGKILL when its parent dies), or once it has killed it.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    # Nothing of the worker's stays open here: not its listening socket (the port is free as
    # soon as the worker is gone), nor its output (a reader sees its end with the worker).
    kept = os.dup2(supervisor_fd, 3) if supervisor_fd != 3 else 3
    os.closerange(kept + 1, os.sysconf("SC_OPEN_MAX"))
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    if null > 3:
        os.close(null)
    _prctl(_PR_SET_NAME, WATCHDOG_NAME)
    if not _set_parent_death_signal(signal.SIGKILL) or os.getppid() != worker:
        return  # the worker is already gone
    worker_fd = os.pidfd_open(worker)
    select.select([kept], [], [])  # readable once the supervisor has exited
    time.sleep(GRACE)
    signal.pidfd_send_signal(worker_fd, signal.SIGKILL)


def _watch(supervisor: int, signalled: bool) -> None:
    while os.getppid() == supervisor:
        time.sleep(0.5)
    if not signalled:  # one stop signal: a second can block a starting worker (see above)
        os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(GRACE)
    os._exit(1)

"""Workers end with their supervisor: when ``recordseal serve`` dies (SIGKILL, the OOM
killer), its worker processes must not live on as orphans still answering on its port, where
a restart would run old and new workers side by side.

Two mechanisms, so neither a missed signal nor a slow start keeps a worker alive: on Linux
the kernel sends the worker SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG)``), which
lets it finish its requests; and a thread watches the parent and, should the worker still be
running ``GRACE`` seconds after the parent is gone (a worker still starting may not act on
SIGTERM), ends it. Nothing acknowledged is lost either way: no request is answered before its
commit.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

#: Set by ``recordseal serve`` for its workers: the pid of the supervisor they belong to.
SUPERVISOR_VARIABLE = "RECORDSEAL_SUPERVISOR_PID"
#: Seconds a worker has, once its supervisor is gone, to finish after SIGTERM.
GRACE = 5.0
_PR_SET_PDEATHSIG = 1


def exit_with_supervisor() -> None:
    """Arrange for this worker to end when its supervisor does (a no-op outside ``serve``)."""
    text = os.environ.get(SUPERVISOR_VARIABLE)
    if not text or not text.isdigit():
        return
    supervisor = int(text)
    if sys.platform.startswith("linux"):
        _set_parent_death_signal()
    if os.getppid() != supervisor:  # it died before anything was armed: nothing started yet
        os._exit(1)
    threading.Thread(target=_watch, args=(supervisor,), daemon=True, name="supervisor").start()


def _set_parent_death_signal() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(supervisor: int) -> None:
    while os.getppid() == supervisor:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)  # as the kernel does on Linux; elsewhere the first
    time.sleep(GRACE)
    os._exit(1)

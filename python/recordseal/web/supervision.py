"""Workers end with their supervisor: when ``recordseal serve`` dies (SIGKILL, the OOM
killer), its worker processes must not live on as orphans still answering on its port, where
a restart would run old and new workers side by side.

On Linux the kernel delivers SIGTERM to the worker when its parent dies
(``prctl(PR_SET_PDEATHSIG)``); elsewhere a thread watches the parent and ends the worker.
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
_PR_SET_PDEATHSIG = 1


def exit_with_supervisor() -> None:
    """Arrange for this worker to end when its supervisor does (a no-op outside ``serve``)."""
    text = os.environ.get(SUPERVISOR_VARIABLE)
    if not text or not text.isdigit():
        return
    supervisor = int(text)
    if not (sys.platform.startswith("linux") and _set_parent_death_signal()):
        threading.Thread(target=_watch, args=(supervisor,), daemon=True).start()
    if os.getppid() != supervisor:  # it died before the signal was armed
        os.kill(os.getpid(), signal.SIGTERM)


def _set_parent_death_signal() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(supervisor: int) -> None:
    while os.getppid() == supervisor:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)

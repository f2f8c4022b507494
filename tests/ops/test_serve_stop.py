"""``recordseal serve`` stops on Ctrl-C even when it comes right after the start.

With two workers, a stop signal that arrives while one worker is still starting could be
missed by that worker, and the server then waited for it for good (granian 2.8; about 1 in 8
stops right after the first answer). A worker that has not stopped within
``WORKERS_KILL_TIMEOUT`` seconds is now killed. The race cannot be forced from outside, so the
test stops the server right after its first answer several times; each must exit in time.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from recordseal.serve import WORKERS_KILL_TIMEOUT
from tests.servers import free_port, kill_service, start_service


def test_serve_exits_after_sigint_sent_right_after_it_answers(tmp_path: Path) -> None:
    for attempt in range(6):
        data = tmp_path / f"data-{attempt}"
        data.mkdir()
        server = start_service(data, free_port(), workers=2)
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=WORKERS_KILL_TIMEOUT + 15)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"attempt {attempt}: serve did not exit after SIGINT") from None
        finally:
            kill_service(server)

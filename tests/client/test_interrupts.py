"""Ctrl-C, as a person gives it: a real SIGINT to a real ``recordseal`` process, without a
terminal (``kill -INT``, a process group) and typed on a pseudo-terminal. The first one stops
the run: what is in flight is answered (at most 5 s), the summary says what was stored and
how to go on, the exit is 130; a second one exits at once; never a traceback, never a hang.
``ingest`` reads from a pipe left open, so its reader is blocked in a read when it comes."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.conftest import Service
from tests.client.test_cli import count_lines, create_stream, environment, line, next_seq, run
from tests.servers import create_token, free_port, kill_service, start_service

RECORDSEAL = [sys.executable, "-m", "recordseal.cli"]


def lines(start: int, count: int) -> str:
    return "".join(line(f"i-{n % 7}", {"amount": n}) + "\n" for n in range(start, start + count))


def wait_for(condition: object, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(0.05)


@pytest.fixture
def frozen_service(tmp_path: Path) -> Iterator[tuple[Service, subprocess.Popen[bytes]]]:
    """A service of its own, which a test may stop (SIGSTOP) so that requests hang."""
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    server = start_service(data, port)
    try:
        yield Service(f"http://127.0.0.1:{port}", create_token(data, "acme"), data), server
    finally:
        os.killpg(server.pid, signal.SIGCONT)
        kill_service(server)


def piped_ingest(
    service: Service, stream: str, receipts: Path, *, group: bool = False
) -> subprocess.Popen[str]:
    command = ["ingest", "-", "--stream", stream, "--source", stream, "--json"]
    return subprocess.Popen(
        [*RECORDSEAL, *command, "--receipts", str(receipts)], env=environment(service),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=group,
    )  # fmt: skip


@pytest.mark.parametrize("to", ["process", "process group"])
def test_ctrl_c_without_a_terminal_stops_says_what_was_stored_and_exits_130(
    service: Service, tmp_path: Path, to: str
) -> None:
    stream = f"sigint-{to.replace(' ', '-')}"
    create_stream(service, stream)
    receipts = tmp_path / "receipts.jsonl"
    ingest = piped_ingest(service, stream, receipts, group=to == "process group")
    assert ingest.stdin is not None
    try:
        # three batches, and a line of the fourth (which makes the third whole); the pipe
        # stays open
        ingest.stdin.write(lines(0, 301))
        ingest.stdin.flush()
        wait_for(lambda: count_lines(receipts) == 300, "the three batches answered")
        if to == "process group":
            os.killpg(ingest.pid, signal.SIGINT)
        else:
            ingest.send_signal(signal.SIGINT)
        ingest.wait(timeout=20)  # the reader is blocked on the open pipe: no hang
        stdout, stderr = ingest.stdout.read(), ingest.stderr.read()  # type: ignore[union-attr]
    finally:
        ingest.kill()
        ingest.communicate()
    assert ingest.returncode == 130, stderr
    assert "Traceback" not in stderr
    summary = json.loads(stdout.splitlines()[-1])["summary"]
    assert (summary["lines"], summary["stored"], summary["unanswered"]) == (300, 300, 0)
    assert "recordseal ingest: 300 lines: 300 stored, 0 already stored in " in stderr
    assert "interrupted (Ctrl-C) after line 300\nrun the same command again" in stderr
    # Going on: the same command with the whole input stores the rest, nothing twice.
    command = ["ingest", "-", "--stream", stream, "--source", stream, "--json"]
    again = run(command, environment(service), lines(0, 400))
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout.splitlines()[-1])["summary"]
    assert (summary["stored"], summary["already_stored"]) == (100, 300)
    assert next_seq(service, stream) == 401


def on_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """``recordseal ARGV`` with a pseudo-terminal as its controlling terminal (standard input,
    output and error on it, in the foreground): what a person types reaches it as a person's
    keys do. Returns the process and the terminal's leader end."""
    leader, follower = os.openpty()

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        [*RECORDSEAL, *argv], env=env | {"TERM": "xterm", "COLUMNS": "120"},
        stdin=follower, stdout=follower, stderr=follower, preexec_fn=controlling_terminal,
    )  # fmt: skip
    os.close(follower)
    return process, leader


def read_all(leader: int, into: list[bytes]) -> threading.Thread:
    def drain() -> None:
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's last follower end closed
                return
            if not chunk:
                return
            into.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    return reader


def test_ctrl_c_typed_on_a_terminal_stops_ingest_with_its_summary(
    service: Service, tmp_path: Path
) -> None:
    create_stream(service, "sigint-terminal")
    fifo = tmp_path / "input.jsonl"
    os.mkfifo(fifo)
    receipts = tmp_path / "receipts.jsonl"
    command = ["ingest", str(fifo), "--stream", "sigint-terminal", "--receipts", str(receipts)]
    ingest, leader = on_a_terminal(command, environment(service))
    written: list[bytes] = []
    reader = read_all(leader, written)
    writer = os.open(fifo, os.O_WRONLY)  # kept open: the command's read blocks for more
    try:
        os.write(writer, lines(0, 201).encode())
        wait_for(lambda: count_lines(receipts) == 200, "the two batches answered")
        os.write(leader, b"\x03")  # Ctrl-C, as typed
        ingest.wait(timeout=20)
    finally:
        os.close(writer)
        ingest.kill()
        ingest.wait()
        reader.join(timeout=10)
        os.close(leader)
    terminal = b"".join(written).decode(errors="replace")
    assert ingest.returncode == 130, terminal
    assert "Traceback" not in terminal
    assert "200 lines: 200 stored, 0 already stored in " in terminal
    assert "interrupted (Ctrl-C) after line 200" in terminal


def test_the_first_ctrl_c_waits_5_s_for_batches_in_flight_a_second_exits_at_once(
    frozen_service: tuple[Service, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    service, server = frozen_service
    create_stream(service, "stuck")
    for second in (False, True):
        receipts = tmp_path / f"receipts-{second}.jsonl"
        ingest = piped_ingest(service, "stuck", receipts)
        assert ingest.stdin is not None
        try:
            ingest.stdin.write(lines(0, 101))
            ingest.stdin.flush()
            wait_for(lambda at=receipts: count_lines(at) == 100, "the first batch answered")
            os.killpg(server.pid, signal.SIGSTOP)  # the next batch hangs in flight
            ingest.stdin.write(lines(101, 100))  # the second batch, and a line of the third
            ingest.stdin.flush()
            time.sleep(1)
            ingest.send_signal(signal.SIGINT)
            began = time.monotonic()
            if second:
                time.sleep(0.5)
                ingest.send_signal(signal.SIGINT)
            ingest.wait(timeout=20)
            took = time.monotonic() - began
            stdout, stderr = ingest.stdout.read(), ingest.stderr.read()  # type: ignore[union-attr]
        finally:
            os.killpg(server.pid, signal.SIGCONT)
            ingest.kill()
            ingest.communicate()
        assert ingest.returncode == 130, stderr
        assert "Traceback" not in stderr
        if second:
            assert took < 3, took
            assert stderr.strip().endswith(
                "recordseal ingest: interrupted again: stopped at once; run the same command"
                " again: the stored lines are recognised"
            ), stderr
        else:
            assert 4.5 < took < 15, took  # the grace for the batch in flight, then the end
            summary = json.loads(stdout.splitlines()[-1])["summary"]
            assert (summary["stored"], summary["unanswered"]) == (100, 100)
            assert "100 not answered (they may be stored)" in stderr
    # What hung may have been stored: a rerun recognises it, and stores each line once.
    command = ["ingest", "-", "--stream", "stuck", "--source", "stuck", "--json"]
    again = run(command, environment(service), lines(0, 201))
    assert again.returncode == 0, again.stderr
    assert next_seq(service, "stuck") == 202


def test_ctrl_c_abandons_a_disclosure_and_writes_nothing(
    frozen_service: tuple[Service, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    service, server = frozen_service
    create_stream(service, "asked")
    receipts = tmp_path / "receipts.jsonl"
    ingested = run(
        ["ingest", "-", "--stream", "asked", "--source", "asked", "--receipts", str(receipts)],
        environment(service),
        lines(0, 1),
    )
    assert ingested.returncode == 0, ingested.stderr
    record_id = json.loads(receipts.read_text())["record_id"]
    out = tmp_path / "bundle.json"
    os.killpg(server.pid, signal.SIGSTOP)  # the service does not answer
    disclose = subprocess.Popen(
        [*RECORDSEAL, "disclose", record_id, "--field", "o:/amount", "-o", str(out)],
        env=environment(service), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: connected(disclose.pid), "the request sent")
        disclose.send_signal(signal.SIGINT)
        _, stderr = disclose.communicate(timeout=20)
    finally:
        os.killpg(server.pid, signal.SIGCONT)
        disclose.kill()
    assert disclose.returncode == 130, stderr
    assert stderr == "recordseal disclose: interrupted (Ctrl-C); nothing was written\n"
    assert not out.exists()


def test_ctrl_c_stops_verifying_a_directory_after_the_bundle_at_hand(
    service: Service, tmp_path: Path
) -> None:
    """The verifier is reading the second of three bundles (a pipe that has not been written
    yet) when Ctrl-C comes: that one is verified, the third is not, and the summary and the
    exit say so."""
    create_stream(service, "checked-dir")
    receipts = tmp_path / "receipts.jsonl"
    command = ["ingest", "-", "--stream", "checked-dir", "--source", "d", "--receipts"]
    assert run([*command, str(receipts)], environment(service), lines(0, 1)).returncode == 0
    record_id = json.loads(receipts.read_text())["record_id"]
    bundle = tmp_path / "one.json"
    asked = ["disclose", record_id, "--field", "o:/amount", "--wait", "30", "-o", str(bundle)]
    assert run(asked, environment(service)).returncode == 0
    keys = tmp_path / "keys.json"
    keys.write_bytes(httpx_get(f"{service.url}/v1/keys"))
    fifo = tmp_path / "two.json"
    os.mkfifo(fifo)
    verify = subprocess.Popen(
        [*RECORDSEAL, "verify", str(bundle), str(fifo), str(bundle), "--keys", str(keys)],
        env=environment(None), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # The first verified, the verifier blocked reading the second: a writer can open it.
        writer = None
        while writer is None:
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                assert verify.poll() is None, verify.communicate()
                time.sleep(0.05)
        verify.send_signal(signal.SIGINT)
        time.sleep(0.5)
        os.set_blocking(writer, True)
        os.write(writer, bundle.read_bytes())
        os.close(writer)
        stdout, stderr = verify.communicate(timeout=20)
    finally:
        verify.kill()
    assert verify.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stdout.count(f"{bundle}") == 1 and stdout.count(f"{fifo}") == 1, stdout
    assert stderr.endswith(
        "recordseal verify: interrupted (Ctrl-C) after 2 of 3 bundles; run it again on the"
        " bundles it did not reach\n"
    )


def connected(pid: int) -> bool:
    """Whether process ``pid`` has a socket open (its request is on its way)."""
    links = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            links.append(os.readlink(fd))
        except FileNotFoundError:  # closed meanwhile
            continue
    return any(link.startswith("socket:") for link in links)


def httpx_get(url: str) -> bytes:
    import httpx

    answer = httpx.get(url, timeout=30)
    assert answer.status_code == 200
    return answer.content

"""Helpers for tests that run real server processes on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright import sync_api

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
#: Names the folder browser tests write their screenshots to (``make screenshots`` sets it to
#: docs/screenshots); unset, they go to a temporary folder and a test run leaves the tree clean.
SCREENSHOTS_VARIABLE = "RECORDSEAL_SCREENSHOTS"


def screenshot_dir() -> Path:
    """The folder for browser tests' screenshots (see :data:`SCREENSHOTS_VARIABLE`)."""
    configured = os.environ.get(SCREENSHOTS_VARIABLE)
    folder = Path(configured) if configured else Path(tempfile.gettempdir()) / "recordseal-shots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(url: str, seconds: float = 30) -> None:
    """Return once ``url`` answers HTTP at all; raise after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {seconds} s")


@contextmanager
def asgi_server(app: str, probe: str, env: dict[str, str], workers: int = 2) -> Iterator[int]:
    """Serve the ASGI ``module:attribute`` with granian (``workers`` processes, two by default
    as ``make run`` starts the service) on a free port; yield the port once ``probe`` (a path)
    answers 200; stop the server afterwards. Fails the test, with the server's output (kept
    in a temporary file, so a chatty server never blocks on a full pipe), when it does not
    start."""
    port = free_port()
    command = [
        sys.executable, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1",
        "--port", str(port), "--workers", str(workers), app,
    ]  # fmt: skip
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    answer = httpx.get(f"http://127.0.0.1:{port}{probe}", timeout=1)
                    if answer.status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    process.wait()
                    output.seek(0)
                    pytest.fail(f"the server did not start:\n{output.read().decode()}")
                time.sleep(0.1)
            yield port
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def chromium() -> Iterator[sync_api.Browser]:
    """Debian's Chromium (``make test`` installs it), headless, driven by Playwright."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


def virtual_authenticator(context: sync_api.BrowserContext, page: sync_api.Page) -> None:
    """A CDP virtual authenticator on ``page`` (CTAP2, internal, resident keys, user
    verification, presence simulated): it answers passkey ceremonies without a person."""
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )


def start_service(
    data_dir: Path,
    port: int,
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    args: list[str] | None = None,
) -> subprocess.Popen[bytes]:
    """``recordseal serve`` in a process group of its own (so :func:`kill_service` reaches
    every worker), returned once ``/health`` answers 200. Its output goes to
    ``data_dir/server-<port>.log`` and is shown when it does not start within 60 s."""
    log_path = data_dir / f"server-{port}.log"
    # The child keeps its own descriptor of the log; ours is closed once it has started.
    with log_path.open("ab") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "recordseal.cli", "serve", "--data-dir", str(data_dir),
             "--port", str(port), "--workers", str(workers), *(args or [])],
            env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.1)
    kill_service(server)
    output = log_path.read_text(errors="replace")[-4000:]
    raise RuntimeError(f"server did not start (exit {server.returncode}); its output:\n{output}")


def kill_service(server: subprocess.Popen[bytes]) -> None:
    """SIGKILL the service's whole process group (a no-op once it has exited)."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def create_token(data_dir: Path, tenant: str, database_url: str | None = None) -> str:
    """``recordseal token create``: the token, from the last line of its output."""
    url = ["--database-url", database_url] if database_url else []
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "token", "create", "--data-dir", str(data_dir),
         "--tenant", tenant, *url],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def witness_key(data_dir: Path, name: str, algorithm: str = "ed25519") -> str:
    """``recordseal witness key``: the witness's cosignature vkey (made on first use), of
    its last key for ``algorithm`` (its ML-DSA-44 one with ``both``)."""
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "witness", "key", "--data-dir", str(data_dir),
         "--name", name, "--algorithm", algorithm],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


@contextmanager
def witness_server(
    data_dir: Path,
    name: str,
    logs: dict[str, str],
    port: int | None = None,
    *,
    algorithm: str = "ed25519",
    families: Sequence[str] = (),
) -> Iterator[str]:
    """A real ``recordseal witness serve`` for ``logs`` (origin -> log vkey) and log
    ``families`` (vkeys), cosigning with ``algorithm``, on ``port`` (a free one unless given);
    yields its URL once ``/health`` answers, kills it afterwards."""
    port = port or free_port()
    command = [
        sys.executable, "-m", "recordseal.cli", "witness", "serve", "--data-dir", str(data_dir),
        "--name", name, "--port", str(port), "--algorithm", algorithm,
    ]  # fmt: skip
    for origin, vkey in logs.items():
        command += ["--log", f"{origin}={vkey}"]
    for vkey in families:
        command += ["--logs-under", vkey]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(url + "/health")
        yield url
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class Posting:
    """Concurrent clients posting ``record`` (with ``subject(client, n)`` and payload
    ``{"n": n}``) to a service, each in a thread, until stopped; every answer is kept, in
    ``answers``. A context manager: leaving it stops and joins the clients."""

    def __init__(
        self,
        url: str,
        token: str,
        record: dict[str, object],
        subject: Callable[[int, int], str],
        clients: int = 4,
    ) -> None:
        self.answers: list[httpx.Response] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._post, args=(url, token, record, subject, number))
            for number in range(clients)
        ]

    def _post(
        self,
        url: str,
        token: str,
        record: dict[str, object],
        subject: Callable[[int, int], str],
        number: int,
    ) -> None:
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=auth, timeout=30) as http:
            n = 0
            while not self._stop.is_set():
                n += 1
                body = {**record, "subject_id": subject(number, n), "payload": {"n": n}}
                self.answers.append(http.post("/v1/records", json=body))

    def __enter__(self) -> Posting:
        for thread in self._threads:
            thread.start()
        return self

    def wait_for(self, answers: int) -> None:
        """Until at least ``answers`` answers came back (the clients are posting)."""
        while len(self.answers) < answers:
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Witnessed:
    """A ``recordseal serve --demo-witness`` with a token of tenant ``acme`` and ``bundle``, a
    disclosure of ``o:/amount`` of a record sealed in a checkpoint its witness cosigned: it
    verifies ``VERIFIED`` with the key directory and trust store the service publishes."""

    url: str
    token: str
    data_dir: Path
    bundle: bytes


@contextmanager
def witnessed_service(root: Path) -> Iterator[Witnessed]:
    """:class:`Witnessed` with its state under ``root``; the service (and its witness) are
    killed afterwards."""
    data = root / "data"
    data.mkdir(parents=True)
    token = create_token(data, "acme")
    port = free_port()
    server = start_service(
        data,
        port,
        args=["--demo-witness", str(root / "witness")],
        env={"RECORDSEAL_SEAL_INTERVAL": "0.2"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=auth, timeout=120) as http:
            created = http.post(
                "/v1/streams", json={"name": "orders", "declarations": {"o:/amount": "money"}}
            )
            assert created.status_code == 201, created.text
            record = {
                "stream": "orders",
                "record_type": "order.placed",
                "occurred_at": "2026-11-21T08:00:00Z",
                "subject_id": "customer-1",
                "payload": {"amount": 1250, "currency": "EUR"},
            }
            posted = http.post("/v1/records", json=record)
            assert posted.status_code == 201, posted.text
            # ?wait: the answer comes once the record is sealed and its checkpoint witnessed.
            disclosed = http.post(
                f"/v1/records/{posted.json()['record_id']}/disclosure?wait=60",
                json={"fields": ["o:/amount"]},
            )
            assert disclosed.status_code == 200, disclosed.text
            assert disclosed.json()["seal"] is not None, "not sealed within 60 s"
        yield Witnessed(url, token, data, disclosed.content)
    finally:
        kill_service(server)

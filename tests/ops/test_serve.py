"""``recordseal serve`` checks before it listens: a bad setting stops it with one line, the
variable named, exit 2; a busy port stops it (exit 1); the pure-Python core only when allowed;
and its workers end with it, even when it is killed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from recordseal.core import backend
from recordseal.settings import Settings
from recordseal.web.preflight import core_refusal
from tests.processes import children, descendants, kill_all, wait_gone
from tests.servers import free_port, kill_service, start_service

CLI = [sys.executable, "-m", "recordseal.cli"]


def serve(
    data: Path, port: int, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``serve`` expected to refuse: its exit code and output (a start is killed at timeout)."""
    return subprocess.run(
        [*CLI, "serve", "--data-dir", str(data), "--port", str(port)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def bad_files(tmp_path: Path) -> dict[str, tuple[str, str]]:
    manifest = tmp_path / "fleets.toml"
    manifest.write_text('version = 1\n[[fleet]]\nid = "f1"\ncolour = "red"\n')
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate\n")
    return {
        "manifest": ("RECORDSEAL_PANEL_FLEET_MANIFEST", str(manifest)),
        "seed": ("RECORDSEAL_PANEL_TENANT_SEED", str(tmp_path / "missing.json")),
        "ca file": ("RECORDSEAL_PANEL_SSO_CA_FILE", str(ca)),
    }


KINDS = [
    ("RECORDSEAL_PORT", "abc"),
    ("RECORDSEAL_SEAL_INTERVAL", "-1"),
    ("RECORDSEAL_ALLOW_REFERENCE_CORE", "maybe"),
    ("RECORDSEAL_RATE_LIMIT_FAILED_TOKENS", "lots"),
    ("RECORDSEAL_DATABASE_URL", "mysql://user:secret@db/x"),
    ("RECORDSEAL_WITNESSES", "[{"),
    ("RECORDSEAL_WITNESSES", '[{"name": "w", "url": "http://w", "vkey": "nonsense"}]'),
    ("RECORDSEAL_TIMESTAMP_AUTHORITIES", '[{"name": "t", "url": "http://t", "roots_pem": "x"}]'),
    ("RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW", "everything"),
    ("RECORDSEAL_HOST", "no-such-host.invalid"),
    ("manifest", ""),
    ("seed", ""),
    ("ca file", ""),
]


@pytest.mark.parametrize(("variable", "value"), KINDS)
def test_a_bad_setting_stops_serve_with_one_line_naming_it(
    tmp_path: Path, variable: str, value: str
) -> None:
    files = bad_files(tmp_path)
    if variable in files:
        variable, value = files[variable]
    port = free_port()
    done = serve(tmp_path / "data", port, {variable: value})
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and variable in lines[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout and "secret" not in done.stderr
    assert "listening" not in done.stdout
    with socket.socket() as probe:  # nothing listens
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_an_unknown_variable_is_a_warning_not_a_stop(tmp_path: Path) -> None:
    done = serve(tmp_path / "data", free_port(), {"RECORDSEAL_PROT": "1", "RECORDSEAL_PORT": "x"})
    assert "RECORDSEAL_PROT is not a setting" in done.stderr
    assert "did you mean RECORDSEAL_PORT?" in done.stderr


def test_a_second_serve_on_a_busy_port_exits_and_the_first_keeps_serving(
    tmp_path: Path,
) -> None:
    port = free_port()
    (tmp_path / "one").mkdir()
    first = start_service(tmp_path / "one", port, workers=2)
    try:
        began = time.monotonic()
        second = serve(tmp_path / "two", port, {})
        assert second.returncode == 1, second.stdout + second.stderr
        assert f"port {port} on 127.0.0.1 is in use" in second.stderr
        assert time.monotonic() - began < 30
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
        assert not (tmp_path / "two" / "keys").exists()  # the second made nothing
    finally:
        kill_service(first)


def test_workers_exit_when_the_supervisor_is_killed(tmp_path: Path) -> None:
    """No process of the service outlives its supervisor: the kernel sends each worker one
    SIGTERM, and its watchdog (web/orphan_guard.py) kills it GRACE (5) s later should it
    still run; a worker still importing when the supervisor dies exits when its import
    reaches web/asgi.py, before it could answer anything."""
    port = free_port()
    supervisor = start_service(tmp_path, port, workers=2)
    service = descendants(supervisor.pid)  # the workers and their watchdogs
    try:
        assert len(children(supervisor.pid)) >= 2, service
        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
        survivors = wait_gone(service)
        assert not survivors, f"a process of the service outlived its supervisor: {survivors}"
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
    finally:
        kill_service(supervisor)
        kill_all(service)


BLOCK_NATIVE = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "recordseal._native":
            raise ModuleNotFoundError("no native build", name=name)
sys.meta_path.insert(0, Block())
from recordseal.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_serve_refuses_the_pure_python_core_unless_allowed(tmp_path: Path) -> None:
    port = free_port()
    args = [sys.executable, "-c", BLOCK_NATIVE, "serve", "--data-dir", str(tmp_path), "--port"]
    refused = subprocess.run([*args, str(port)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1
    assert "RECORDSEAL_ALLOW_REFERENCE_CORE" in refused.stderr and "Traceback" not in refused.stderr
    log = tmp_path / "allowed.log"
    with log.open("w") as output:  # the child keeps its own descriptor
        allowed = subprocess.Popen(
            [*args, str(port)],
            env={**os.environ, "RECORDSEAL_ALLOW_REFERENCE_CORE": "true"},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "listening" not in log.read_text():
            time.sleep(0.1)
        assert "core=reference" in log.read_text()
    finally:
        os.killpg(allowed.pid, signal.SIGKILL)
        allowed.wait()


def test_serve_says_which_core_it_runs(tmp_path: Path) -> None:
    port = free_port()
    server = start_service(tmp_path, port)
    try:
        log = (tmp_path / f"server-{port}.log").read_text()
        assert "core=native" in log
    finally:
        kill_service(server)


def test_serve_runs_the_reference_core_when_chosen(tmp_path: Path) -> None:
    """``RECORDSEAL_CORE=reference`` serves with the pure-Python core on purpose, though the
    extension is built and nothing else allows it (the README's quick start on it:
    tests/ops/test_quickstart.py)."""
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [*CLI, "serve", "--data-dir", str(tmp_path / "data"), "--port", str(port)],
            env={**os.environ, "RECORDSEAL_CORE": "reference"},
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "listening" not in log.read_text():
            time.sleep(0.1)
        assert "core=reference" in log.read_text()
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def test_a_core_set_in_the_file_alone_is_refused(tmp_path: Path) -> None:
    """The core is chosen as the process starts, from the variable: a file's ``core`` that the
    variable does not repeat would not be obeyed, so serve refuses it, saying what to set."""
    config = tmp_path / "recordseal.toml"
    config.write_text('core = "reference"\n')
    env = {"RECORDSEAL_CONFIG": str(config)}
    done = serve(tmp_path / "data", free_port(), env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "recordseal: the configuration file's core = 'reference' is not the core this process"
        " runs: the core is chosen when a process starts, from the variable alone; set"
        " RECORDSEAL_CORE=reference instead"
    ]
    # Where the variable says the same (or neither names a core), the core passes.
    assert core_refusal(Settings(core=backend.REQUESTED)) is None
    assert core_refusal(Settings(core="reference")) is not None  # this process: unset

"""``recordseal doctor`` against real processes: a service with a running witness and a real
RFC 3161 authority (openssl) passes; a stopped witness, an authority with other roots, a
witness whose clock is an hour off, a port in use, a missing keys directory and an unmigrated
store each fail their check with a fix, and the exit code says so."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from recordseal.tlog import Ed25519Signer
from tests.servers import free_port, kill_service, start_service, wait_for
from tests.tlog.tsa_support import make_authority, serve

CLI = [sys.executable, "-m", "recordseal.cli"]


def doctor(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    done = subprocess.run(
        [*CLI, "doctor", "--json", *args], env={**clean, **env}, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in report["checks"]}


def failed(report: dict[str, Any]) -> list[str]:
    return [check["name"] for check in report["checks"] if not check["ok"]]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A service that ran with a witness and an authority: the settings and the port."""
    root = tmp_path_factory.mktemp("doctor")
    other_log = Ed25519Signer.generate("elsewhere.example/log").verifier().vkey
    witness_port = free_port()
    witness = subprocess.Popen(
        [*CLI, "witness", "serve", "--data-dir", str(root / "witness"), "--name", "w.example",
         "--port", str(witness_port), "--log", f"elsewhere.example/log={other_log}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    authority = make_authority(root / "tsa")
    roots = (authority.directory / "ca.pem").read_text()
    try:
        wait_for(f"http://127.0.0.1:{witness_port}/health")
        witness_url = f"http://127.0.0.1:{witness_port}"
        vkey = httpx.get(f"{witness_url}/health").json()["witness"]
        with serve(authority) as tsa_url:
            env = {
                "RECORDSEAL_WITNESSES": json.dumps(
                    [{"name": "w.example", "url": witness_url, "vkey": vkey}]
                ),
                "RECORDSEAL_TIMESTAMP_AUTHORITIES": json.dumps(
                    [{"name": "tsa", "url": f"{tsa_url}/tsa", "roots_pem": roots}]
                ),
                "RECORDSEAL_DATA_DIR": str(root / "data"),
            }
            (root / "data").mkdir()
            port = free_port()
            service = start_service(root / "data", port, env=env)
            try:
                yield {"env": env, "port": port, "root": root, "vkey": vkey}
            finally:
                kill_service(service)
    finally:
        kill_service(witness)  # its whole group: witness serve forks a granian worker


def test_a_healthy_deployment_passes(deployment: dict[str, Any]) -> None:
    code, report = doctor(deployment["env"], "--port", str(deployment["port"]))
    assert (code, report["ok"], failed(report)) == (0, True, [])
    checks = by_name(report)
    assert set(checks) == {"settings", "keys", "store", "witness w.example",
                           "time-stamping authority tsa", "clock", "port"}  # fmt: skip
    assert "held by a service answering /health" in checks["port"]["detail"]
    assert (
        "within" in checks["clock"]["detail"]
        and "2 witnesses and authorities" in (checks["clock"]["detail"])
    )


def test_doctor_and_config_show_take_the_running_service_s_settings(
    deployment: dict[str, Any],
) -> None:
    """A shell without the service's variables, naming only its data directory: the witness,
    the authority and the port come from the service's ``service.json``, and both commands
    say which settings came from there."""
    data = ["--data-dir", str(deployment["root"] / "data")]
    code, report = doctor({}, *data)
    assert (code, failed(report)) == (0, []), report
    checks = by_name(report)
    assert {"witness w.example", "time-stamping authority tsa"} <= set(checks)
    assert "2 witnesses and authorities" in checks["clock"]["detail"]
    assert str(deployment["port"]) in checks["port"]["detail"]
    taken = checks["settings"]["detail"]
    assert taken.startswith(f"from {deployment['root'] / 'data' / 'service.json'} (the service")
    assert taken.endswith(": host, port, witnesses, timestamp_authorities, witness_quorum"), taken
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    shown = subprocess.run(
        [*CLI, "config", "show", *data, "--json"], env=clean, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    document = json.loads(shown.stdout)
    settings = {entry["key"]: entry for entry in document["settings"]}
    assert settings["witnesses"]["source"] == "service.json"
    assert settings["witnesses"]["value"][0]["vkey"] == deployment["vkey"]
    assert (settings["port"]["value"], settings["port"]["source"]) == (
        deployment["port"],
        "service.json",
    )
    assert document["from_service_file"] == [
        "host", "port", "witnesses", "timestamp_authorities", "witness_quorum"
    ]  # fmt: skip
    text = subprocess.run(
        [*CLI, "config", "show", *data, "--port", "9"], env=clean, capture_output=True,
        text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    taken = "host, witnesses, timestamp_authorities, witness_quorum"
    assert f"# from the service file: {taken}\n" in text
    assert "\nport = 9  # command line\n" in text


def test_a_stopped_witness_fails_with_a_fix(deployment: dict[str, Any]) -> None:
    stopped = f"http://127.0.0.1:{free_port()}"
    witnesses = json.loads(deployment["env"]["RECORDSEAL_WITNESSES"])
    witnesses.append({"name": "stopped", "url": stopped, "vkey": deployment["vkey"]})
    env = {**deployment["env"], "RECORDSEAL_WITNESSES": json.dumps(witnesses)}
    code, report = doctor(env, "--port", str(deployment["port"]))
    assert (code, failed(report)) == (1, ["witness stopped"])
    check = by_name(report)["witness stopped"]
    assert stopped in check["detail"] and "start the witness" in check["fix"]
    assert by_name(report)["witness w.example"]["ok"]


def test_an_authority_whose_token_does_not_verify_fails(
    deployment: dict[str, Any], tmp_path: Path
) -> None:
    other_roots = (make_authority(tmp_path / "other").directory / "ca.pem").read_text()
    authorities = json.loads(deployment["env"]["RECORDSEAL_TIMESTAMP_AUTHORITIES"])
    authorities[0]["roots_pem"] = other_roots
    env = {**deployment["env"], "RECORDSEAL_TIMESTAMP_AUTHORITIES": json.dumps(authorities)}
    code, report = doctor(env, "--port", str(deployment["port"]))
    assert (code, failed(report)) == (1, ["time-stamping authority tsa"])
    assert "roots_pem" in by_name(report)["time-stamping authority tsa"]["fix"]


def test_a_clock_an_hour_off_fails(deployment: dict[str, Any]) -> None:
    """A witness whose Date is an hour behind this host's: one of them is wrong."""

    class Behind(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def date_time_string(self, timestamp: float | None = None) -> str:
            return formatdate(time.time() - 3600, usegmt=True)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Behind)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        witnesses = [{"name": "behind", "url": url, "vkey": deployment["vkey"]}]
        env = {**deployment["env"], "RECORDSEAL_WITNESSES": json.dumps(witnesses)}
        code, report = doctor(env, "--port", str(deployment["port"]))
    finally:
        server.shutdown()
        server.server_close()
    assert (code, failed(report)) == (1, ["clock"])
    clock = by_name(report)["clock"]
    assert re.fullmatch(
        r"360[01] s ahead of a witness or authority \(at most 30\)", clock["detail"]
    )
    assert "NTP" in clock["fix"]


def test_a_port_in_use_fails(deployment: dict[str, Any]) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        code, report = doctor(deployment["env"], "--port", str(port))
    assert (code, failed(report)) == (1, ["port"])
    assert f"port {port} on 127.0.0.1 is in use" in by_name(report)["port"]["detail"]
    assert "ss -ltnp" in by_name(report)["port"]["fix"]


def test_missing_keys_and_an_unmigrated_store_fail(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    code, report = doctor({}, "--data-dir", str(tmp_path / "data"), "--port", str(free_port()))
    assert (code, failed(report)) == (1, ["keys", "store"])
    checks = by_name(report)
    assert "keys does not exist" in checks["keys"]["detail"]
    assert "restore keys/" in checks["keys"]["fix"]
    assert "recordseal migrate" in checks["store"]["fix"]
    code, report = doctor({}, "--data-dir", str(tmp_path / "nowhere"), "--port", str(free_port()))
    assert (code, failed(report)) == (1, ["data directory"])


def test_an_unusable_key_fails(tmp_path: Path) -> None:
    """A key file without read permission (or empty, for root, who reads every file)."""
    data = tmp_path / "data"
    (data / "keys").mkdir(parents=True)
    key = data / "keys" / "log-signing.ed25519"
    key.write_bytes(b"" if os.geteuid() == 0 else bytes(32))
    key.chmod(0)
    code, report = doctor({}, "--data-dir", str(data), "--port", str(free_port()))
    assert code == 1 and "keys" in failed(report)
    assert "log-signing.ed25519" in by_name(report)["keys"]["detail"]


def test_text_output_names_each_failure_and_its_fix(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    done = subprocess.run(
        [*CLI, "doctor", "--data-dir", str(tmp_path / "nowhere"), "--port", str(free_port())],
        env=clean, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == f"FAIL  data directory: {tmp_path / 'nowhere'} does not exist"
    assert lines[1].startswith("      fix: check --data-dir")
    assert lines[-1] == "recordseal: something is wrong"


def test_keys_in_a_module_are_found_or_named_with_a_fix(tmp_path: Path) -> None:
    """Keys in a hardware module (SoftHSM2, tests/hsm.py): doctor opens each one keys/ names;
    a PIN file that is gone fails the check, naming the key file and where to look."""
    from tests.hsm import softhsm, unique

    hsm = softhsm()
    data = tmp_path / "data"
    for purpose in ("log", "kek"):
        subprocess.run(
            [*CLI, "keys", "init", purpose, "--hsm", hsm.uri(unique(purpose)), "--data-dir",
             str(data), "--create-data-dir"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    code, report = doctor({}, "--data-dir", str(data), "--port", str(free_port()))
    checks = by_name(report)
    assert checks["keys in a module"]["ok"], checks["keys in a module"]
    assert "4 keys found" in checks["keys in a module"]["detail"]
    reference = data / "keys" / "kek.pkcs11"
    reference.write_text(reference.read_text().replace(str(hsm.pin_file), str(tmp_path / "no")))
    code, report = doctor({}, "--data-dir", str(data), "--port", str(free_port()))
    assert code == 1 and "keys in a module" in failed(report)
    check = by_name(report)["keys in a module"]
    assert "kek.pkcs11" in check["detail"] and "pin-source" in check["fix"]

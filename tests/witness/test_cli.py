"""``witness serve`` and ``witness key`` as processes: granian on 127.0.0.1, a free port."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from recordseal.network.witness_client import WitnessClient
from recordseal.tlog import CosignatureVerifier, TlogError
from recordseal.tlog.protocol import encode_add_checkpoint
from tests.servers import free_port
from tests.tlog.support import WITNESS_NAME, Log

SOURCE = str(Path(__file__).resolve().parents[2] / "python")
# The CLI as recordseal/cli.py mounts it: one top-level parser with the witness commands.
ENTRY = (
    "import argparse, sys\n"
    "from recordseal.witness.cli import add_witness_parser\n"
    "top = argparse.ArgumentParser(prog='recordseal')\n"
    "add_witness_parser(top.add_subparsers(required=True))\n"
    "args = top.parse_args()\n"
    "sys.exit(args.run(args))\n"
)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-c", ENTRY, "witness", *args]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [SOURCE, env.get("PYTHONPATH")]))
    return env


@contextmanager
def serving(data_dir: Path, log: Log) -> Iterator[tuple[str, str]]:
    """Run ``witness serve``; yield its URL and the vkey it printed; stop it."""
    port = free_port()
    command = cli(
        "serve",
        "--data-dir", str(data_dir),
        "--port", str(port),
        "--name", WITNESS_NAME,
        "--log", f"{log.origin}={log.signer.verifier().vkey}",
    )  # fmt: skip
    process = subprocess.Popen(
        command, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"{url}/health", timeout=1)
                if health.status_code == 200:
                    vkey = health.json()["witness"]
                    assert health.json()["demo"] is False
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.stdout.read()
            assert time.monotonic() < deadline, "the witness did not start"
            time.sleep(0.1)
        yield url, vkey
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()  # our end of the pipe


def test_witness_key_command(tmp_path: Path) -> None:
    first = subprocess.run(
        cli("key", "--data-dir", str(tmp_path), "--name", WITNESS_NAME),
        env=environment(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    vkey = first.stdout.strip()
    assert CosignatureVerifier.from_vkey(vkey).name == WITNESS_NAME
    key_file = tmp_path / "witness-key.ed25519"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = subprocess.run(
        cli("key", "--data-dir", str(tmp_path), "--name", WITNESS_NAME),
        env=environment(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert again.stdout.strip() == vkey


def test_serve_refuses_a_bad_log_argument(tmp_path: Path) -> None:
    result = subprocess.run(
        cli("serve", "--data-dir", str(tmp_path), "--name", WITNESS_NAME, "--log", "o=nonsense"),
        env=environment(), capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert result.returncode == 2
    assert "key_malformed" in result.stderr


def test_granian_witness_cosigns_and_remembers_across_restarts(
    tmp_path: Path, log: Log, forked_log: Log
) -> None:
    data_dir = tmp_path / "witness"
    log.append(4)
    with serving(data_dir, log) as (url, vkey):
        witness = CosignatureVerifier.from_vkey(vkey)
        client = WitnessClient(url, witness, backoff_seconds=0.01)
        cosignature = asyncio.run(client.add_checkpoint(log.signed(), 0, log.proof))
        witness.verify_cosignature(log.checkpoint().text(), cosignature)
        log.append(3)
        asyncio.run(client.add_checkpoint(log.signed(), 0, log.proof))  # 409, then from 4
    assert stat.S_IMODE((data_dir / "witness-key.ed25519").stat().st_mode) == 0o600

    forked_log.append(9, "fork")
    with serving(data_dir, log) as (url, vkey_after_restart):
        assert vkey_after_restart == vkey
        body = encode_add_checkpoint(7, forked_log.proof(7), forked_log.signed())
        response = httpx.post(f"{url}/add-checkpoint", content=body, timeout=10)
        assert response.status_code == 422
        response = httpx.post(
            f"{url}/add-checkpoint", content=b"old 0\n\n" + log.signed().encode(), timeout=10
        )
        assert (response.status_code, response.content) == (409, b"7\n")
        assert response.headers["content-type"] == "text/x.tlog.size"
        client = WitnessClient(url, CosignatureVerifier.from_vkey(vkey), backoff_seconds=0.01)
        try:
            asyncio.run(client.add_checkpoint(forked_log.signed(), 7, forked_log.proof))
        except TlogError as error:
            assert error.code == "witness_refused"
        else:
            raise AssertionError("the witness cosigned a forked tree after a restart")


def test_witness_key_command_with_ml_dsa(tmp_path: Path) -> None:
    """``witness key --algorithm both --json``: the Ed25519 key first (``vkey``, as before),
    then the ML-DSA-44 key, both under the witness's name; the seed files are 0600."""
    import json

    from recordseal.tlog import MLDSA44, parse_vkey

    done = subprocess.run(
        cli("key", "--data-dir", str(tmp_path), "--name", WITNESS_NAME, "--algorithm", "both",
            "--json"),
        env=environment(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    answer = json.loads(done.stdout)
    ed25519, mldsa = answer["vkeys"]
    assert answer["vkey"] == ed25519 and answer["name"] == WITNESS_NAME
    assert parse_vkey(mldsa).signature_type == MLDSA44
    assert parse_vkey(mldsa).name == WITNESS_NAME
    for name in ("witness-key.ed25519", "witness-key.ml-dsa-44"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_granian_witness_cosigns_with_ml_dsa_and_serves_monitors(tmp_path: Path, log: Log) -> None:
    """A ``witness serve --algorithm ml-dsa-44`` process: its cosignature is ML-DSA-44 with the
    time, it refuses another root at one size with 422, and its monitoring API serves the
    checkpoint it cosigned."""
    import hashlib

    from recordseal.tlog import MLDSA44CosignatureVerifier, cosigner_verifier, parse_note
    from tests.servers import witness_key, witness_server

    data_dir = tmp_path / "witness"
    vkey = witness_key(data_dir, WITNESS_NAME, "ml-dsa-44")
    log.append(4)
    logs = {log.origin: log.signer.verifier().vkey}
    with witness_server(data_dir, WITNESS_NAME, logs, algorithm="ml-dsa-44") as url:
        assert httpx.get(f"{url}/health", timeout=10).json()["vkeys"] == [vkey]
        witness = cosigner_verifier(vkey)
        assert isinstance(witness, MLDSA44CosignatureVerifier)
        client = WitnessClient(url, witness, backoff_seconds=0.01)
        before = int(time.time())
        cosignature = asyncio.run(client.add_checkpoint(log.signed(), 0, log.proof))
        assert cosignature.timestamp >= before > 0
        witness.verify_cosignature(log.checkpoint().text(), cosignature)
        other = Log(log.signer)
        other.append(4, "fork")
        response = httpx.post(
            f"{url}/add-checkpoint", content=b"old 4\n\n" + other.signed().encode(), timeout=10
        )
        assert response.status_code == 422
        origin_hash = hashlib.sha256(log.origin.encode()).hexdigest()
        served = httpx.get(f"{url}/monitor/{origin_hash}/checkpoint", timeout=10)
        assert served.status_code == 200
        note = parse_note(served.text)
        assert note.text == log.checkpoint().text()
        assert note.signatures[-1] == cosignature.note_signature

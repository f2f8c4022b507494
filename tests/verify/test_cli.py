"""``python -m recordseal.verify.cli``: the report, ``--json``, and the exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import tampered
from .factory import World


@pytest.fixture(scope="module")
def files(world: World, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cli")
    documents = {
        "bundle.json": world.bundle(),
        "unsealed.json": world.bundle(sealed=False, coverage=None),
        "tampered.json": tampered(world.bundle(), lambda d: d["fields"][0].update(value=1)),
        "malformed.json": b"{not json",
        "keys.json": json.dumps(world.keys_document()).encode(),
        "trust.json": json.dumps(world.trust_document()).encode(),
        "bad-keys.json": b'{"format": "recordseal/keys/v1"}',
    }
    for name, data in documents.items():
        (folder / name).write_bytes(data)
    return {name.removesuffix(".json"): folder / name for name in documents}


def _run(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recordseal.verify.cli", *map(str, args)],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_verified_exits_0_with_a_table(files: dict[str, Path]) -> None:
    done = _run(files["bundle"], "--keys", files["keys"], "--trust", files["trust"])
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "verdict     VERIFIED\n" in out
    assert "field commitments" in out and "sequence continuity" in out
    assert out.count("passed") >= 7
    assert "not before" in out and "(witness.example)" in out
    assert "o:/amount = 1400" in out


def test_bundle_alone_exits_2_and_lists_the_reasons(files: dict[str, Path]) -> None:
    done = _run(files["unsealed"])
    assert done.returncode == 2, done.stderr
    out = done.stdout
    assert "verdict     VERIFICATION INCOMPLETE (unchecked: 3, 4, 5, 7)" in out
    assert "unchecked  no public key in the supplied directory" in out
    assert "unchecked  no chain inclusion proof" in out
    assert "unchecked  no witness receipts" in out
    assert "not after   unknown" in out


def test_tampered_exits_1(files: dict[str, Path]) -> None:
    done = _run(files["tampered"], "--keys", files["keys"], "--trust", files["trust"])
    assert done.returncode == 1
    assert "verdict     FAILED\n" in done.stdout
    assert "root_mismatch" in done.stdout


def test_malformed_exits_1_without_a_traceback(files: dict[str, Path]) -> None:
    done = _run(files["malformed"], "--json")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "FAILED"
    assert result["checks"][0]["detail"].startswith("malformed bundle")


def test_json_output(files: dict[str, Path]) -> None:
    done = _run(files["bundle"], "--keys", files["keys"], "--trust", files["trust"], "--json")
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["format"] == "recordseal/verification/v1"
    assert result["verdict"] == "VERIFIED"
    assert [check["status"] for check in result["checks"]] == ["passed"] * 7
    assert result["time_bracket"]["not_after_by"] == "witness.example"


def test_bundle_from_standard_input(files: dict[str, Path]) -> None:
    done = _run("-", "--json", stdin=files["unsealed"].read_bytes())
    assert done.returncode == 2
    assert json.loads(done.stdout)["verdict"] == "VERIFICATION INCOMPLETE"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "missing.json"),
        (["BUNDLE", "--keys", "bad-keys"], "key directory: "),
        (["BUNDLE", "--trust", "missing-trust.json"], "missing-trust.json"),
    ],
)
def test_unreadable_inputs_exit_3(files: dict[str, Path], args: list[str], message: str) -> None:
    resolved = [
        str(files["bundle"]) if arg == "BUNDLE" else str(files.get(arg, arg)) for arg in args
    ]
    done = _run(*resolved)
    assert done.returncode == 3
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_the_module_entry_point(files: dict[str, Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.verify", str(files["unsealed"])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2

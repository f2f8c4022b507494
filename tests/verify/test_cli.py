"""``python -m recordseal.verify.cli``: the report, ``--json``, and the exit codes."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import tampered
from .factory import World, write_documents
from .test_tamper import SEAL_TAMPERING


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
    return write_documents(folder, documents)


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
    assert "verdict     VERIFIED\n            All seven checks passed.\n" in out
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
    # Check 7 passed: its signed header's time bracket holds, and is shown.
    assert "\nverdict     FAILED\n            Check " in done.stdout
    assert " Its time bracket is the signed header's: check 7 passed.\n" in done.stdout
    assert "\nnot before  " in done.stdout and "\nnot after   " in done.stdout


def test_a_broken_seal_shows_no_time_bracket(files: dict[str, Path], tmp_path: Path) -> None:
    """A failed bundle whose check 7 did not pass proves no time (docs/bundle.md, "How a
    result is shown"): the report says so in the words of the verify page."""
    broken = tmp_path / "broken.json"
    broken.write_bytes(tampered(files["bundle"].read_bytes(), SEAL_TAMPERING["log index"][0]))
    done = _run(broken, "--keys", files["keys"], "--trust", files["trust"])
    assert done.returncode == 1
    assert (
        "\nverdict     FAILED\n            Check 4 (sealed batch) failed: the bundle is not what it"
        " claims. Time bracket: none: a bundle that failed proves no time for its record.\n"
    ) in done.stdout
    assert "\nnot before  " not in done.stdout and "\nnot after   " not in done.stdout


def test_a_document_that_is_not_a_bundle_is_said_to_be_none(files: dict[str, Path]) -> None:
    """No table whose check 1 reads "field commitments failed": the page's words instead."""
    done = _run(files["malformed"])
    assert done.returncode == 1
    first, second = done.stdout.splitlines()
    assert first == "verdict     FAILED"
    assert second.startswith("            This is not a disclosure bundle: bundle: ")
    assert second.endswith(". None of the seven checks was run.")
    assert "field commitments" not in done.stdout and "passed" not in done.stdout


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
    ("args", "message", "code"),
    [
        (["missing.json"], "missing.json", 66),
        (["BUNDLE", "--keys", "bad-keys"], "key directory: ", 65),
        (["BUNDLE", "--trust", "missing-trust.json"], "missing-trust.json", 66),
        (["BUNDLE", "--frobnicate"], "unrecognized arguments: --frobnicate", 64),
        # no abbreviation: --key is not --keys, --tru not --trust
        (["BUNDLE", "--key", "keys"], "unrecognized arguments: --key", 64),
        (["BUNDLE", "--tru", "trust"], "unrecognized arguments: --tru", 64),
        # a trust store for the key directory, and the reverse: the mix-up is named
        (
            ["BUNDLE", "--keys", "trust"],
            "key directory: this is a trust store (recordseal/trust/v1), not a key directory"
            " - at `$.format`; give the trust store as --trust",
            65,
        ),
        (
            ["BUNDLE", "--trust", "keys"],
            "trust store: this is a key directory (recordseal/keys/v1), not a trust store"
            " - at `$.format`; give the key directory as --keys",
            65,
        ),
        (["BUNDLE", "--keys", "bundle"], "give the bundle as a BUNDLE argument", 65),
        ([], "the following arguments are required: BUNDLE", 64),
    ],
)
def test_input_and_usage_errors_have_their_own_exit_codes(
    files: dict[str, Path], args: list[str], message: str, code: int
) -> None:
    """65 invalid key directory or trust store, 66 unreadable file, 64 usage: never 2,
    which means VERIFICATION INCOMPLETE."""
    resolved = [
        str(files["bundle"]) if arg == "BUNDLE" else str(files.get(arg, arg)) for arg in args
    ]
    done = _run(*resolved)
    assert done.returncode == code
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


@pytest.fixture(scope="module")
def folder(world: World, files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of 24 good bundles (enough for a progress bar), with the key directory and
    trust store inside it (which the run must skip)."""
    folder = tmp_path_factory.mktemp("many")
    good = files["bundle"].read_bytes()
    for i in range(24):
        (folder / f"b{i:02}.json").write_bytes(good)
    (folder / "keys.json").write_bytes(files["keys"].read_bytes())
    (folder / "trust.json").write_bytes(files["trust"].read_bytes())
    (folder / "notes.txt").write_text("not a bundle: no .json")
    return folder


def test_a_directory_verifies_every_bundle_with_a_line_each_and_a_summary(folder: Path) -> None:
    done = _run(folder, "--keys", folder / "keys.json", "--trust", folder / "trust.json")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    verified = [line for line in lines if line.startswith("VERIFIED ")]
    assert len(verified) == 24
    assert f"{folder / 'b00.json'}  acme" in verified[0]
    assert lines[-1] == "24 bundles: 24 VERIFIED"
    assert done.stderr == ""  # no progress bar when standard error is no terminal


def test_many_bundles_exit_with_the_worst_verdict(files: dict[str, Path], folder: Path) -> None:
    trust = ("--keys", files["keys"], "--trust", files["trust"])
    incomplete = _run(files["bundle"], files["unsealed"], *trust)
    assert incomplete.returncode == 2
    assert incomplete.stdout.splitlines()[-1] == "2 bundles: 1 VERIFIED, 1 VERIFICATION INCOMPLETE"
    assert "check 4 sealed batch unchecked: " in incomplete.stdout
    unreadable = _run(files["bundle"], files["unsealed"], "gone.json", *trust)
    assert unreadable.returncode == 66
    assert "UNREADABLE               gone.json  cannot be read: No such file" in unreadable.stdout
    inside = ("--keys", folder / "keys.json", "--trust", folder / "trust.json")
    failed = _run(folder, files["tampered"], "gone.json", files["unsealed"], *inside)
    assert failed.returncode == 1
    assert failed.stdout.splitlines()[-1] == (
        "27 bundles: 24 VERIFIED, 1 FAILED, 1 VERIFICATION INCOMPLETE, 1 UNREADABLE"
    )
    tampered = next(line for line in failed.stdout.splitlines() if line.startswith("FAILED"))
    assert "check 2 record tree failed: " in tampered


def test_many_bundles_as_json(files: dict[str, Path]) -> None:
    done = _run(files["bundle"], files["tampered"], "gone.json", "--json")
    assert done.returncode == 1
    summary = json.loads(done.stdout)
    assert summary["format"] == "recordseal/verification-summary/v1"
    assert summary["counts"] == {
        "VERIFIED": 0,
        "FAILED": 1,
        "VERIFICATION INCOMPLETE": 1,
        "UNREADABLE": 1,
    }
    first, second, third = summary["results"]
    assert (
        first["bundle"] == str(files["bundle"]) and first["format"] == "recordseal/verification/v1"
    )
    assert second["verdict"] == "FAILED" and len(second["checks"]) == 7
    assert third == {"bundle": "gone.json", "verdict": "UNREADABLE", "error": third["error"]}


def test_a_terminal_sees_a_progress_bar_on_long_runs(files: dict[str, Path], folder: Path) -> None:
    """Standard error on a pseudo-terminal: rich draws the bar there; standard output keeps
    the lines and the summary."""
    import pty

    primary, secondary = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.verify.cli", str(folder),
         "--keys", str(folder / "keys.json"), "--trust", str(folder / "trust.json")],
        stdout=subprocess.PIPE, stderr=secondary, text=True, timeout=120,
    )  # fmt: skip
    os.close(secondary)
    drawn = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(primary, 65536):
            drawn += chunk
    os.close(primary)
    assert done.returncode == 0
    assert done.stdout.count("VERIFIED ") == 24
    assert done.stdout.splitlines()[-1] == "24 bundles: 24 VERIFIED"
    assert b"verifying" in drawn and b"24/24" in drawn


def test_the_verifier_has_a_version(files: dict[str, Path]) -> None:
    done = _run("--version")
    assert done.returncode == 0 and done.stdout.startswith("recordseal verify ")

"""The README's quick start, as a new user runs it: ``make run`` (its recipe, without the
build step the test run already did), then the README's shell block, unchanged but for the
port, in another directory. It must end in VERIFIED, for a tenant that exists before the
first record and for one that comes later (the demo witness covers every log), and again
after the data directory was removed and ``make run`` started afresh. The README's
client example, run after the quick start as the README says (and on a tenant of its own),
must print VERIFIED too."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.servers import ROOT, free_port

MARKER = "<!-- quick start: tests/ops/test_quickstart.py runs this block against `make run` -->"
COMMAND_LINE_MARKER = (
    "<!-- command line: tests/ops/test_quickstart.py runs this block after the quick start -->"
)
CLIENT_MARKER = (
    "<!-- client example: tests/ops/test_quickstart.py runs this block after the quick start -->"
)


def readme_block(marker: str = MARKER, language: str = "sh") -> str:
    """The ``language`` block right after ``marker`` in README.md."""
    text = (ROOT / "README.md").read_text()
    assert marker in text, f"the README lost its marker {marker}"
    match = re.match(rf"\s*```{language}\n(.*?)\n```", text.split(marker, 1)[1], re.DOTALL)
    assert match, f"no ```{language} block after the marker {marker}"
    return match.group(1)


@contextmanager
def make_run_in(home: Path, core: str | None = None) -> Iterator[int]:
    """``make run`` (its recipe; the Makefile's default witness directory) with ``home/data``
    as ``DATA_DIR``, on a free port, with ``RECORDSEAL_CORE=core`` when given; yields the port
    once ``/readyz`` answers 200, stops it afterwards. Its output is appended to
    ``home/make-run.log``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECORDSEAL_", "MAKE"))}
    if core is not None:
        env["RECORDSEAL_CORE"] = core
    log = (home / "make-run.log").open("ab")
    make = subprocess.Popen(
        ["make", "--no-print-directory", "-C", str(ROOT), "-o", "build", "run",
         f"DATA_DIR={home / 'data'}", f"PORT={port}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if make.poll() is not None or time.monotonic() > deadline:
                pytest.fail("make run did not start:\n" + (home / "make-run.log").read_text())
            time.sleep(0.2)
        yield port
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGTERM)
            try:
                make.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(make.pid, signal.SIGKILL)
                make.wait()
        log.close()


def quick_start_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding a link to the repository's virtualenv, so the README's relative
    paths (``.venv/bin``, ``data``) hold there."""
    home = tmp_path_factory.mktemp("quickstart")
    (home / ".venv").symlink_to(ROOT / ".venv")
    return home


@pytest.fixture(scope="module")
def make_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """``make run`` with its state in a temporary directory (:func:`quick_start_home`)."""
    home = quick_start_home(tmp_path_factory)
    with make_run_in(home) as port:
        yield home, port


def run_block(home: Path, port: int, tenant: str, *then: str) -> subprocess.CompletedProcess[str]:
    """The quick start's block for ``tenant``, followed in the same shell by ``then``."""
    script = "\n".join([readme_block(), *then]).replace("localhost:8000", f"localhost:{port}")
    script = script.replace("--tenant acme", f"--tenant {tenant}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=home, env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_the_readme_quick_start_ends_verified(make_run: tuple[Path, int]) -> None:
    home, port = make_run
    done = run_block(home, port, "acme")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\nverdict     VERIFIED\n" in done.stdout
    assert (
        "passed     1 trusted witness vouches (quorum 1): demo witness on this machine"
        in done.stdout
    )
    trust = json.loads((home / "try" / "recordseal-trust.json").read_text())
    assert [w["name"] for w in trust["witnesses"]] == ["demo witness on this machine"]
    assert trust["quorum"] == 1


def test_the_readme_steps_write_into_a_directory_the_checkout_ignores(
    make_run: tuple[Path, int],
) -> None:
    """Run in a checkout, the quick start and the command-line block leave no untracked file:
    what they write lands in ``try/``, which the repository's .gitignore ignores."""
    home, port = make_run
    done = run_block(home, port, "wayne", readme_block(COMMAND_LINE_MARKER))
    assert done.returncode == 0, done.stdout + done.stderr
    made = {p.name for p in home.iterdir()} - {".venv", "data", "make-run.log", "try"}
    assert not made, f"the README's steps wrote outside try/: {sorted(made)}"
    written = sorted(p.name for p in (home / "try").iterdir())
    assert {"bundle.json", "orders.jsonl", "recordseal-keys.json"} <= set(written)
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", *(f"try/{n}" for n in written)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ignored.stdout.split() == [f"try/{n}" for n in written], ignored


def test_a_tenant_that_comes_later_is_witnessed_too(make_run: tuple[Path, int]) -> None:
    home, port = make_run
    done = run_block(home, port, "globex")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "record      globex / orders / seq 1" in done.stdout
    assert "\nverdict     VERIFIED\n" in done.stdout


def test_the_demo_witness_is_its_own_process_and_says_it_is_a_demo(
    make_run: tuple[Path, int],
) -> None:
    home, _ = make_run
    service = json.loads((home / "data" / "service.json").read_text())
    (witness,) = service["witnesses"]
    health = httpx.get(f"{witness['url']}/health").json()
    assert health == {
        "status": "ok",
        "witness": witness["vkey"],
        "demo": True,
        "vkeys": [witness["vkey"]],  # Ed25519 only: the demo witness's --algorithm default
    }
    assert health["witness"].startswith("demo-witness.localhost+")
    # Its own key and state, kept in the data directory it witnesses (make run's default).
    assert (home / "data" / "demo-witness" / "witness-key.ed25519").stat().st_mode & 0o777 == 0o600
    assert not (home / "data" / "witness-key.ed25519").exists()


def test_a_new_data_directory_reaches_verified_again(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """``make run``, ``rm -rf data``, ``make run``: the second data directory signs a new
    history of the same origins. A demo witness kept outside it refused them for good (its
    409 reported the old, larger size, which now fences the log: 503 store_rolled_back)."""
    home = quick_start_home(tmp_path_factory)
    for start in ("first", "after rm -rf data"):
        with make_run_in(home) as port:
            done = run_block(home, port, "acme")
        assert done.returncode == 0, f"{start}:\n{done.stdout}{done.stderr}"
        assert "\nverdict     VERIFIED\n" in done.stdout, start
        shutil.rmtree(home / "data")


def test_the_quick_start_ends_verified_on_the_reference_core(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """``RECORDSEAL_CORE=reference make run``: the service runs the pure-Python core on
    purpose (docs/performance.md compares the two), and the quick start still ends in
    VERIFIED. The commands of the block run as a user's would, on the default core."""
    home = quick_start_home(tmp_path_factory)
    with make_run_in(home, core="reference") as port:
        done = run_block(home, port, "acme")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\nverdict     VERIFIED\n" in done.stdout
    log = (home / "make-run.log").read_text()
    assert "core=reference" in log and "core=native" not in log


def recordseal(home: Path, *argv: str, tenant: str, port: int) -> str:
    """``recordseal ARGV`` with a token of ``tenant`` and the service on ``port``; its output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    token = subprocess.run(
        [".venv/bin/recordseal", "token", "create", "--data-dir", "data", "--tenant", tenant],
        cwd=home, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()[-1]  # fmt: skip
    env |= {"RECORDSEAL_TOKEN": token, "RECORDSEAL_URL": f"http://127.0.0.1:{port}"}
    return subprocess.run(
        [".venv/bin/recordseal", *argv], cwd=home, env=env, capture_output=True, text=True,
        check=True, timeout=60,
    ).stdout  # fmt: skip


def run_client_example(home: Path, port: int, tenant: str) -> subprocess.CompletedProcess[str]:
    """The README's Python block saved as ``try/example.py`` and run there as the README says,
    with a token of ``tenant`` in ``RECORDSEAL_TOKEN`` (and the test's port in
    ``RECORDSEAL_URL``)."""
    (home / "try").mkdir(exist_ok=True)
    (home / "try" / "example.py").write_text(readme_block(CLIENT_MARKER, "python") + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    token = subprocess.run(
        [".venv/bin/recordseal", "token", "create", "--data-dir", "data", "--tenant", tenant],
        cwd=home, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()[-1]  # fmt: skip
    env |= {"RECORDSEAL_TOKEN": token, "RECORDSEAL_URL": f"http://127.0.0.1:{port}"}
    return subprocess.run(
        [str(home / ".venv" / "bin" / "python"), "example.py"],
        cwd=home / "try", env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_the_readme_client_example_prints_verified_after_the_quick_start(
    make_run: tuple[Path, int],
) -> None:
    """The quick start declared "orders" first: the example takes it as it is (it was a 409
    ``stream_exists``), and its bundle, asked with ``wait``, verifies against the key
    directory and trust store the service publishes (it was VERIFICATION INCOMPLETE)."""
    home, port = make_run
    quick_start = run_block(home, port, "initech")
    assert quick_start.returncode == 0, quick_start.stdout + quick_start.stderr
    for _ in (1, 2):  # and a second run of the same script, which stores nothing twice
        done = run_client_example(home, port, "initech")
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert lines[-2:] == ["1000 stored, 0 refused", "VERIFIED"], done.stdout
        assert lines[0].startswith("2 "), done.stdout  # after the quick start's, both times
        assert done.stderr.count("500 more records answered") == 2, done.stderr
    orders = recordseal(home, "stream", "show", "orders", "--json", tenant="initech", port=port)
    assert json.loads(orders)["record_count"] == 1 + 1 + 1000


def test_the_readme_client_example_prints_verified_on_a_tenant_of_its_own(
    make_run: tuple[Path, int],
) -> None:
    home, port = make_run
    done = run_client_example(home, port, "hooli")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "VERIFIED", done.stdout
    assert done.stdout.startswith("1 "), done.stdout


def test_the_readme_command_line_block_ingests_discloses_and_verifies(
    make_run: tuple[Path, int],
) -> None:
    home, port = make_run
    done = run_block(home, port, "umbrella", readme_block(COMMAND_LINE_MARKER))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("\nverdict     VERIFIED\n") == 2  # the quick start's, then this
    assert "record      umbrella / orders / seq 2" in done.stdout
    assert (home / "try" / "refused.jsonl").read_text() == ""
    assert len((home / "try" / "receipts.jsonl").read_text().splitlines()) == 2
    assert "recordseal ingest: 2 lines: 2 stored, 0 already stored" in done.stderr

"""``recordseal-verify``, the verifier alone (packaging/recordseal-verify): built from the same
sources, installed into a fresh virtualenv from binary wheels with no compiler on the path,
with none of the service's dependencies, it gives the same output and exit codes as
``recordseal verify``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tools.verify_dist import ROOT, build_wheel, install, installed

from tests.verify.conftest import tampered
from tests.verify.factory import World

#: The service's own dependencies: none may come with the verifier.
SERVER_ONLY = {"litestar", "granian", "httpx", "asyncpg", "jinja2", "webauthn", "authlib",
               "joserfc", "prometheus-client", "prometheus_client", "maturin"}  # fmt: skip


def run_alone(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` of the verifier's virtualenv, without the tests' ``PYTHONPATH``: what it
    runs comes from its own installation, never from the source tree the tests run from."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    return subprocess.run(command, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``bin`` directory of a fresh virtualenv holding the verifier-only wheel."""
    work = tmp_path_factory.mktemp("verify-dist")
    wheel = build_wheel(work / "dist")
    yield install(work / "venv", [str(wheel)])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    world = World()
    folder = tmp_path_factory.mktemp("inputs")
    documents = {
        "good.json": world.bundle(),
        "unsealed.json": world.bundle(sealed=False, coverage=None),
        "tampered.json": tampered(world.bundle(), lambda d: d["fields"][0].update(value=1)),
        "keys.json": json.dumps(world.keys_document()).encode(),
        "trust.json": json.dumps(world.trust_document()).encode(),
        "bad-keys.json": b'{"format": "recordseal/keys/v1"}',
    }
    for name, data in documents.items():
        (folder / name).write_bytes(data)
    return {name.removesuffix(".json"): folder / name for name in documents}


def test_it_installs_without_the_server_nor_the_native_core(verifier: Path) -> None:
    packages = installed(verifier)
    assert "recordseal-verify" in packages and "recordseal" not in packages
    assert not SERVER_ONLY & set(packages), SERVER_ONLY & set(packages)
    probe = (
        "import sys, recordseal.core, recordseal.verify.cli;"
        "print(recordseal.core.BACKEND);"
        "print(sorted(m.split('.')[0] for m in sys.modules if m.split('.')[0] in"
        " {'httpx', 'litestar', 'granian', 'asyncpg', 'jinja2'}))"
    )
    done = run_alone([str(verifier / "python"), "-c", probe])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["reference", "[]"]


def test_every_shipped_module_imports(verifier: Path) -> None:
    """The wheel's module list is hand-kept (packaging/recordseal-verify/pyproject.toml): each
    shipped module must import with only what the verifier installs."""
    probe = (
        "import importlib, pkgutil, recordseal;"
        "names = [m.name for m in pkgutil.walk_packages(recordseal.__path__, 'recordseal.')];"
        # The native binding is shipped for the core's fallback and must miss its extension;
        # a __main__ runs the command.
        "skip = {'recordseal.core.native', 'recordseal.verify.__main__'};"
        "[importlib.import_module(n) for n in names if n not in skip];"
        "print(len(names))"
    )
    done = run_alone([str(verifier / "python"), "-c", probe])
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 40
    native = run_alone([str(verifier / "python"), "-c", "import recordseal.core.native"])
    assert "No module named 'recordseal._native'" in native.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["good", "--keys", "keys", "--trust", "trust"],
        ["good", "--keys", "keys", "--trust", "trust", "--json"],
        ["unsealed"],
        ["tampered", "--keys", "keys", "--trust", "trust"],
        ["good", "unsealed", "tampered", "missing", "--keys", "keys", "--trust", "trust"],
        ["good", "unsealed", "--json"],
        ["good", "--keys", "bad-keys"],
        ["missing"],
    ],
)
def test_same_output_and_exit_code_as_recordseal_verify(
    verifier: Path, inputs: dict[str, Path], args: list[str]
) -> None:
    resolved = [str(inputs.get(arg, arg)) if not arg.startswith("--") else arg for arg in args]
    alone = run_alone([str(verifier / "recordseal-verify"), *resolved])
    full = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "verify", *resolved],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert (alone.returncode, alone.stdout) == (full.returncode, full.stdout)
    assert alone.stderr == full.stderr
    assert alone.returncode in {0, 1, 2, 65, 66}


def test_usage_errors_and_version(verifier: Path) -> None:
    done = run_alone([str(verifier / "recordseal-verify"), "--frobnicate"])
    assert done.returncode == 64 and done.stderr.startswith("usage: recordseal-verify")
    version = run_alone([str(verifier / "recordseal-verify"), "--version"])
    from recordseal import __version__

    assert version.stdout.strip() == f"recordseal-verify {__version__}"


def test_the_license_is_at_the_root_and_in_the_wheel(verifier: Path) -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n") and "Version 2.0, January 2004" in text
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    (shipped,) = verifier.parent.glob(
        "lib/python3*/site-packages/recordseal_verify-*/licenses/LICENSE"
    )
    assert shipped.read_text() == text

"""``RECORDSEAL_CORE`` (core/backend.py): ``reference`` runs the pure-Python core on purpose
where the extension is built, ``native`` refuses to run without the extension, with one line
and no traceback; unset (or empty), the extension runs. Each case in a process of its own,
since the core is chosen when it is first imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SHOW = """
from recordseal import core
from recordseal.core import backend
from recordseal.services.header_keys import pipeline_from_seed
from recordseal.web import ingest
print(core.BACKEND, backend.REQUESTED, backend.extension is None,
      core.canonicalize.__module__, type(pipeline_from_seed(bytes(32))).__name__,
      ingest.encode_answers.__name__)
"""

BLOCKED = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "recordseal._native":
            raise ModuleNotFoundError("absent", name=name)
sys.meta_path.insert(0, Block())
"""


def run(code: str, core: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RECORDSEAL_CORE"}
    if core is not None:
        env["RECORDSEAL_CORE"] = core
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=120, check=False)  # fmt: skip


def test_reference_runs_the_pure_python_core_where_the_extension_is_built() -> None:
    done = run(SHOW, "reference")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "reference",
        "reference",
        "True",
        "recordseal.core.reference.rfc8785",
        "ReferencePipeline",
        "reference_answer",
    ]


@pytest.mark.parametrize("core", ["native", "", None], ids=["native", "empty", "unset"])
def test_native_and_unset_run_the_extension(core: str | None) -> None:
    done = run(SHOW, core)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "native",
        "native" if core else "None",
        "False",
        "recordseal._native",
        "NativePipeline",
        "encode_answers",
    ]


def test_native_without_the_extension_is_refused_in_one_line() -> None:
    done = run(BLOCKED + "import recordseal.cli\n", "native")
    assert done.returncode == 1
    assert done.stderr == (
        "recordseal: RECORDSEAL_CORE=native, but the native extension recordseal._native is not"
        " built: build it (make build), or set RECORDSEAL_CORE=reference to run the pure-Python"
        " core\n"
    )


def test_unset_without_the_extension_falls_back_to_the_reference() -> None:
    done = run(BLOCKED + "from recordseal.core import backend; print(backend.BACKEND)\n", None)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "reference\n"


def test_another_value_is_refused_naming_the_variable_and_the_rule() -> None:
    done = run("import recordseal.core\n", "rust")
    assert done.returncode == 1
    assert done.stderr == "recordseal: RECORDSEAL_CORE must be native or reference\n"

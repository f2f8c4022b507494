"""The machine and the build a run measured, recorded with every result: figures from another
CPU, a busy machine or a debug build are not comparable, and the result says so itself."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

import recordseal
from recordseal.ops.bench.results import Build, Machine

#: The checkout the package runs from, when it is installed in place (``make build``).
CHECKOUT = Path(recordseal.__file__).resolve().parents[2]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _output(*command: str) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()] if hasattr(os, "getloadavg") else []


def machine(load_before: list[float]) -> Machine:
    return Machine(
        cpu=cpu_model(),
        cores=os.cpu_count() or 1,
        usable_cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0,
        memory_bytes=memory_bytes(),
        os=platform.platform(),
        python=f"{platform.python_implementation()} {platform.python_version()}",
        rustc=_output("rustc", "--version"),
        load_before=load_before,
        load_after=load(),
    )


def build(profile: str) -> Build:
    commit = dirty = None
    if (CHECKOUT / ".git").exists():
        commit = _output("git", "-C", str(CHECKOUT), "rev-parse", "HEAD")
        status = _output(
            "git", "-C", str(CHECKOUT), "status", "--porcelain", "--untracked-files=no"
        )
        dirty = None if status is None else bool(status)
    return Build(
        recordseal=recordseal.__version__,
        commit=commit,
        dirty=dirty,
        extension_profile=profile,
    )

"""The verifier-only distribution, ``recordseal-verify`` (packaging/recordseal-verify): build
its wheel, install it into a fresh virtualenv with no compiler on the path and binary wheels
only, and measure what that install holds against the service's own runtime dependencies,
installed the same way in the same run.

    .venv/bin/python tools/verify_dist.py            # build, install, measure, compare
    .venv/bin/python tools/verify_dist.py --keep DIR # and keep the wheel and venvs in DIR

``tests/verify_dist`` uses the same functions (docs/operations.md, "A verifier without Rust").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "packaging" / "recordseal-verify"
#: Installed by every virtualenv, not by the packages measured.
TOOLING = frozenset({"pip", "setuptools", "wheel", "pkg_resources", "_distutils_hack"})


def build_wheel(out: Path) -> Path:
    """``pip wheel`` of the verifier-only project into ``out``; the wheel's path."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
         str(PROJECT)],
        check=True,
    )  # fmt: skip
    (wheel,) = out.glob("recordseal_verify-*.whl")
    return wheel


def no_compiler_path(directory: Path) -> str:
    """A ``PATH`` of one directory holding nothing but ``python3``: no cc, no cargo."""
    directory.mkdir(parents=True, exist_ok=True)
    link = directory / "python3"
    if not link.exists():
        link.symlink_to(sys._base_executable)  # type: ignore[attr-defined]
    return str(directory)


def install(venv: Path, requirements: list[str]) -> Path:
    """A fresh virtualenv at ``venv`` with ``requirements`` from binary wheels only, with no
    compiler reachable; its ``bin`` directory."""
    path = no_compiler_path(venv.parent / f"{venv.name}-path")
    env = {"PATH": path, "HOME": os.environ.get("HOME", "/root"), "CC": "false"}
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, env=env)  # type: ignore[attr-defined]
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", "--only-binary=:all:", *requirements],
        check=True, env=env,
    )  # fmt: skip
    return venv / "bin"


def installed(bin_dir: Path) -> dict[str, str]:
    """Name -> version of every distribution in the virtualenv, tooling left out."""
    listing = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "list", "--format=json",
         "--disable-pip-version-check"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return {
        item["name"].lower(): item["version"]
        for item in json.loads(listing.stdout)
        if item["name"].lower() not in TOOLING
    }


def site_packages_bytes(venv: Path) -> int:
    """Bytes of everything installed in ``site-packages`` but the virtualenv's tooling."""
    (site,) = venv.glob("lib/python3*/site-packages")
    total = 0
    for entry in site.iterdir():
        if entry.name.split("-")[0] in TOOLING or entry.name in TOOLING:
            continue
        files = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        total += sum(p.stat().st_size for p in files)
    return total


def server_requirements() -> list[str]:
    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build and install here, and keep it all")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temporary:
        work = args.keep or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        wheel = build_wheel(work / "dist")
        verifier = install(work / "verify-venv", [str(wheel)])
        server = install(work / "server-venv", server_requirements())
        rows = (
            ("recordseal-verify", installed(verifier), site_packages_bytes(work / "verify-venv")),
            (
                "recordseal's runtime dependencies (no Rust build)",
                installed(server),
                site_packages_bytes(work / "server-venv"),
            ),
        )
        print(f"wheel: {wheel.name}, {wheel.stat().st_size / 1024:.0f} KiB")
        for name, packages, size in rows:
            print(f"{name}: {len(packages)} distributions, {size / 1e6:.1f} MB installed")
            print("  " + ", ".join(f"{k} {v}" for k, v in sorted(packages.items())))
        ratio = rows[1][2] / rows[0][2]
        print(f"the service's dependencies take {ratio:.1f}x the verifier's install")
    return 0


if __name__ == "__main__":
    sys.exit(main())

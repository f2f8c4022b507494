"""Building the Go checkers of this folder offline: GOPATH mode with Debian's ``golang-go``
and golang.org/x/mod's source under ``/usr/share/gocode`` (``golang-golang-x-mod-dev``;
``make system`` installs both). No module download, no network."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

GOCODE = Path("/usr/share/gocode")


def build_go(source: Path, root: Path) -> Path:
    """Build the program ``source`` (a ``main.go``) in the temporary folder ``root``; the
    binary's path."""
    go = shutil.which("go")
    assert go is not None, "the Go toolchain is missing: `make system` installs golang-go"
    assert (GOCODE / "src/golang.org/x/mod/sumdb/tlog").is_dir(), (
        "golang.org/x/mod is missing: `make system` installs golang-golang-x-mod-dev"
    )
    name = source.parent.name
    package = root / "gopath" / "src" / "recordseal.test" / name
    package.mkdir(parents=True)
    shutil.copy(source, package / "main.go")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(root),
        "GO111MODULE": "off",  # GOPATH mode: no module download, no network
        "GOPATH": f"{root / 'gopath'}{os.pathsep}{GOCODE}",
        "GOCACHE": str(root / "cache"),
        "GOPROXY": "off",
        "GOFLAGS": "",
        "CGO_ENABLED": "0",
    }
    binary = root / name
    built = subprocess.run(
        [go, "build", "-o", str(binary), f"recordseal.test/{name}"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return binary

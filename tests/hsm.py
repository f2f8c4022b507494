"""A real PKCS#11 module for the tests: Debian's SoftHSM2 (``make system`` installs it), with
its token directory in a temporary folder.

SoftHSM reads its configuration (``SOFTHSM2_CONF``) when a process first loads it, so a test
session has one token directory: ``softhsm`` makes it once, points ``SOFTHSM2_CONF`` of this
process (and of every process it starts, which inherit the environment) at it, and
initialises the tokens that tests ask for by label. Tests keep apart by their keys' labels.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

MODULE = Path("/usr/lib/softhsm/libsofthsm2.so")
USER_PIN = "fifty-one-75"
SO_PIN = "so-pin-1234"


@dataclass(frozen=True)
class SoftHsm:
    root: Path
    pin_file: Path

    def token(self, label: str) -> str:
        """Initialise the token ``label`` (once) and return its label."""
        marker = self.root / f"{label}.initialised"
        if not marker.exists():
            subprocess.run(
                ["softhsm2-util", "--init-token", "--free", "--label", label,
                 "--so-pin", SO_PIN, "--pin", USER_PIN],
                check=True, capture_output=True, env={**os.environ},
            )  # fmt: skip
            marker.touch()
        return label

    def uri(self, label: str, token: str = "recordseal") -> str:
        """The RFC 7512 URI of the key ``label`` in ``token`` (initialised if need be)."""
        self.token(token)
        return (
            f"pkcs11:token={token};object={label}"
            f"?module-path={MODULE}&pin-source=file:{self.pin_file}"
        )


_session: SoftHsm | None = None
_labels = itertools.count(1)


def softhsm() -> SoftHsm:
    """The session's SoftHSM (made on first use; ``SOFTHSM2_CONF`` set for this process)."""
    global _session
    if _session is None:
        root = Path(tempfile.mkdtemp(prefix="recordseal-softhsm-"))
        (root / "tokens").mkdir()
        conf = root / "softhsm2.conf"
        conf.write_text(
            f"directories.tokendir = {root / 'tokens'}\nobjectstore.backend = file\n"
            "log.level = ERROR\nslots.removable = false\n"
        )
        pin_file = root / "pin"
        pin_file.write_text(USER_PIN + "\n")
        os.environ["SOFTHSM2_CONF"] = str(conf)
        _session = SoftHsm(root, pin_file)
    return _session


def unique(prefix: str) -> str:
    """A key label no other test of this session uses."""
    return f"{prefix}-{os.getpid()}-{next(_labels)}"

"""A throwaway PostgreSQL cluster for tests and benchmarks: Debian's server binaries, a
temporary directory, a free port on 127.0.0.1, stopped (and deleted) afterwards.

``initdb`` and the server refuse to run as root, so as root they run as the ``postgres``
user (created by Debian's package). Authentication is ``trust`` on 127.0.0.1 only: the
cluster lives for one test run and holds nothing but test data.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path


def _bin_dir() -> Path:
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if not candidates:
        raise RuntimeError(
            "PostgreSQL's server binaries are missing: `make system` installs Debian's package"
        )
    return Path(candidates[-1]).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Cluster:
    """One running cluster; ``url(schema)`` names a fresh schema of its one database."""

    directory: Path
    port: int
    database: str = "recordseal"
    _bin: Path = field(default_factory=_bin_dir)

    def _run(self, *argv: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run(
            [*prefix, *argv], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    @classmethod
    def start(cls) -> Cluster:
        directory = Path(tempfile.mkdtemp(prefix="recordseal-pg-"))
        cluster = cls(directory, _free_port())
        if os.geteuid() == 0:
            shutil.chown(directory, "postgres", "postgres")
        data = directory / "data"
        cluster._run(
            str(cluster._bin / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        cluster.serve()
        cluster._run(
            str(cluster._bin / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(cluster.port),
            "-U",
            "postgres",
            cluster.database,
        )
        return cluster

    def serve(self) -> None:
        """Start the server on its data directory (after ``initdb``, a base backup, or a kill:
        crash recovery runs first) and wait until it answers."""
        options = (
            f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
            " -c max_connections=200 -c shared_buffers=256MB"
        )
        self._run(
            str(self._bin / "pg_ctl"), "-D", str(self.directory / "data"), "-o", options,
            "-l", str(self.directory / "server.log"), "-w", "start",
        )  # fmt: skip

    @property
    def postmaster_pid(self) -> int:
        """The postmaster's process id (every other server process is its child)."""
        return int((self.directory / "data" / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        try:
            self._run(
                str(self._bin / "pg_ctl"), "-D", str(self.directory / "data"), "-m", "fast", "stop"
            )
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def base_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"

    def dump(self, url: str, path: Path) -> None:
        """``pg_dump`` (custom format) of the schema ``url`` names: a backup, as an operator
        takes one."""
        schema = url.rsplit("search_path=", 1)[1]
        subprocess.run(
            [str(self._bin / "pg_dump"), "-Fc", "-n", schema, "-f", str(path), self.base_url],
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def restore(self, url: str, path: Path) -> None:
        """Put the schema ``url`` names back to the dump at ``path`` (``pg_restore``)."""
        schema = url.rsplit("search_path=", 1)[1]
        subprocess.run(
            [
                "psql",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                self.base_url,
                "-c",
                f"DROP SCHEMA {schema} CASCADE",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        subprocess.run(
            [str(self._bin / "pg_restore"), "-d", self.base_url, str(path)],
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def url(self) -> str:
        """The URL of a new, empty schema of the cluster's database: one per test."""
        schema = f"t_{uuid.uuid4().hex[:16]}"
        subprocess.run(
            ["psql", "-q", "-v", "ON_ERROR_STOP=1", self.base_url, "-c", f"CREATE SCHEMA {schema}"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return f"{self.base_url}?search_path={schema}"

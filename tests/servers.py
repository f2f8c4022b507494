"""Helpers for tests that run real server processes on 127.0.0.1."""

from __future__ import annotations

import socket
import time

import httpx


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(url: str, seconds: float = 30) -> None:
    """Return once ``url`` answers HTTP at all; raise after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {seconds} s")

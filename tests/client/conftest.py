"""One real service process (``recordseal serve``, SQLite) for the client's tests, with a
token of tenant ``acme``; each test uses streams of its own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.servers import create_token, free_port, kill_service, start_service


@dataclass
class Service:
    url: str
    token: str
    data_dir: Path


@pytest.fixture(scope="package")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("client-service")
    port = free_port()
    server = start_service(data, port, env={"RECORDSEAL_SEAL_INTERVAL": "0.1"})
    try:
        yield Service(f"http://127.0.0.1:{port}", create_token(data, "acme"), data)
    finally:
        kill_service(server)


class Forwarding(httpx.AsyncBaseTransport):
    """A test transport in front of a real one (``inner``), which it closes with itself: a
    client closes only its own transport, and the inner pool's sockets would leak."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()

    async def aclose(self) -> None:
        await self.inner.aclose()

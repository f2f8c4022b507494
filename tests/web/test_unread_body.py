"""An answer given before the request's body was read says ``Connection: close``
(web/unread_body.py), against a real ``recordseal serve``: the HTTP server closes such a
connection, and a client that reused it would get no answer at all."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from recordseal.web.unread_body import announces_body
from tests.servers import create_token, free_port, kill_service, start_service

BODY = (
    b'{"stream":"s","record_type":"t","occurred_at":"2026-11-21T08:00:00Z",'
    b'"subject_id":"c-1","payload":{}}'
)


@dataclass(frozen=True)
class Served:
    port: int
    token: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir: Path = tmp_path_factory.mktemp("unread-body")
    port = free_port()
    off = {"RECORDSEAL_RATE_LIMIT_FAILED_TOKENS": "off", "RECORDSEAL_RATE_LIMIT_LOGIN": "off"}
    process = start_service(data_dir, port, workers=1, env=off)
    try:
        yield Served(port, create_token(data_dir, "acme"))
    finally:
        kill_service(process)


def _head(path: str, length: int, token: str | None = None) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",  # not the passkeys' host: their ceremonies refuse it before the body
        "Content-Type: application/json",
        f"Content-Length: {length}",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _answer(conn: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One answer read from ``conn``: status, headers by lower-case name, body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.strip().lower(): value.strip()
        for name, value in (line.split(":", 1) for line in lines)
    }
    while len(rest) < int(headers.get("content-length", "0")):
        rest += conn.recv(65536)
    return int(status_line.split()[1]), headers, rest


def _closed_by_server(conn: socket.socket) -> bool:
    try:
        return conn.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/v1/records", 401),  # the ingest routes' own handler: the token comes first
        ("/v1/records:batch", 401),
        ("/v1/streams", 401),  # a framework route's guard
        ("/login/register/start", 400),  # a ceremony from an origin that is not configured
        ("/nowhere", 404),
    ],
)
def test_an_answer_before_the_body_is_sent_says_connection_close_and_closes(
    served: Served, path: str, status: int
) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as conn:
        conn.sendall(_head(path, len(BODY)))  # the body is never sent
        got, headers, _ = _answer(conn)
        assert got == status
        assert headers["connection"] == "close"
        assert _closed_by_server(conn)


def test_an_answer_after_the_whole_body_keeps_the_connection(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as conn:
        for path in ("/v1/records", "/v1/records:batch", "/v1/verify"):
            body = b'{"records":[' + BODY + b"]}" if path.endswith("batch") else BODY
            conn.sendall(_head(path, len(body), served.token) + body)
            status, headers, _ = _answer(conn)
            assert status in (200, 404), (path, status)  # the stream does not exist: 404
            assert "connection" not in headers, path
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        status, headers, _ = _answer(conn)
        assert (status, "connection" in headers) == (200, False)


def test_a_client_reusing_its_connections_always_gets_an_answer(served: Served) -> None:
    """Early refusals among ordinary requests on one pooled client: every request answered,
    and every early refusal followed by a new connection, none by a dead one."""
    connects = 0

    def trace(event: str, _info: object) -> None:
        nonlocal connects
        connects += event == "connection.connect_tcp.complete"

    good = {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"}
    bad = {"Content-Type": "application/json"}
    traced = {"trace": trace}
    with httpx.Client(base_url=f"http://127.0.0.1:{served.port}", timeout=30) as client:
        for _ in range(150):
            early = client.post("/v1/records", content=BODY, headers=bad, extensions=traced)
            assert (early.status_code, early.headers["connection"]) == (401, "close")
            read = client.post("/v1/records", content=BODY, headers=good, extensions=traced)
            assert read.status_code == 404 and "connection" not in read.headers
    assert connects == 1 + 150  # the first, then one after each early refusal


@pytest.mark.parametrize(
    ("headers", "announced"),
    [
        ([], False),
        ([(b"content-length", b"0")], False),
        ([(b"host", b"x"), (b"content-length", b"15")], True),
        ([(b"transfer-encoding", b"chunked")], True),
    ],
)
def test_what_announces_a_body(headers: list[tuple[bytes, bytes]], announced: bool) -> None:
    assert announces_body(headers) is announced

"""Hostile input against a real ``recordseal serve`` (SQLite, two workers): never a 5xx.

Chunked framing is the server's, so these run against the process the CLI starts, not the
in-process client. Every route with a body gets hypothesis-generated and seeded byte-mutated
bodies; every record route gets deep and unclosed nesting up to 100,000 levels and invalid
UTF-8 at every position of a valid envelope; the body routes get broken chunked framing on a
raw socket. Afterwards: no answer was a 5xx, every refusal was problem+json (or the panel's
empty body), refusals stored nothing, the stream's sequence numbers are dense, and the server
log holds no traceback.
"""

from __future__ import annotations

import json
import random
import socket
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.servers import create_token, free_port, kill_service, start_service

STREAM = "fuzz"
ENVELOPE = {
    "stream": STREAM,
    "record_type": "order.placed",
    "occurred_at": "2026-11-21T08:00:00Z",
    "subject_id": "customer-1",
    "payload": {"amount": 1500, "currency": "EUR", "lines": [{"sku": "b-1", "n": 2}]},
}
VALID = json.dumps(ENVELOPE, separators=(",", ":")).encode()
JSON = {"Content-Type": "application/json"}
#: Answers a route may give to hostile input; a 5xx is never one of them.
PANEL_EMPTY = {400, 401, 404, 415}
MAX_BODY = 512 * 1024
PROBLEM = "application/problem+json"


@dataclass
class Server:
    port: int
    data_dir: Path
    client: httpx.Client
    headers: dict[str, str]
    process: subprocess.Popen[bytes]
    seqs: list[int] = field(default_factory=list)
    subjects: set[str] = field(default_factory=set)
    answers: int = 0

    def post(self, path: str, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
        try:
            response = self.client.post(path, content=body, headers=headers or self.headers)
        except httpx.RemoteProtocolError:
            # A body over the route's limit is answered 413 from its Content-Length, before it
            # is read; the server then closes the connection, which the client may see first.
            assert len(body) > MAX_BODY, (path, body[:200])
            response = httpx.Response(413, headers={"content-type": PROBLEM})
        self.answers += 1
        assert response.status_code < 500, (path, body[:200], response.text[:300])
        html = response.headers.get("content-type", "").startswith("text/html")
        if response.status_code >= 400 and response.content and not html:
            assert response.headers["content-type"] == "application/problem+json", response.text
        return response

    def record(self, body: bytes) -> httpx.Response:
        """A record post; a stored record is remembered for the density check."""
        response = self.post("/v1/records", body)
        if response.status_code == 201:
            stored = response.json()
            assert stored["stream"] == STREAM  # mutations cannot reach another stream
            self.seqs.append(stored["seq"])
            self.subjects.add(json.loads(body)["subject_id"])
        else:
            assert response.status_code in (400, 404, 409, 413, 422), response.text
        return response


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("hostile")
    port = free_port()
    env = {"RECORDSEAL_RATE_LIMIT_LOGIN": "off", "RECORDSEAL_RATE_LIMIT_SSO": "off"}
    process = start_service(data_dir, port, workers=2, env=env)
    token = create_token(data_dir, "acme")
    headers = {"Authorization": f"Bearer {token}", **JSON}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        server = Server(port, data_dir, client, headers, process)
        declared = {"name": STREAM, "declarations": {"o:/amount": "money"}}
        assert server.post("/v1/streams", json.dumps(declared).encode()).status_code == 201
        server.record(VALID)
        try:
            yield server
            check_afterwards(server)
        finally:
            kill_service(process)


def check_afterwards(server: Server) -> None:
    """Dense sequence numbers, nothing stored by a refusal, no traceback in the log."""
    final = server.record(VALID)
    assert final.status_code == 201
    assert sorted(server.seqs) == list(range(1, len(server.seqs) + 1))
    with sqlite3.connect(server.data_dir / "recordseal.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == len(server.seqs)
        assert db.execute("SELECT count(*) FROM payloads").fetchone()[0] == len(server.seqs)
        assert db.execute("SELECT count(*) FROM subjects").fetchone()[0] == len(server.subjects)
    log = (server.data_dir / f"server-{server.port}.log").read_text(errors="replace")
    assert "Traceback" not in log
    assert "internal error" not in log


def mutate(body: bytes, rng: random.Random) -> bytes:
    """One to four byte-level edits: flip, insert, delete, duplicate a slice, truncate."""
    data = bytearray(body)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data) + 1)
        edit = rng.randrange(5)
        if edit == 0 and at < len(data):
            data[at] ^= 1 << rng.randrange(8)
        elif edit == 1:
            data[at:at] = bytes([rng.randrange(256)])
        elif edit == 2 and at < len(data):
            del data[at]
        elif edit == 3:
            end = min(len(data), at + rng.randint(1, 16))
            data[at:at] = data[at:end]
        else:
            del data[at:]
    return bytes(data)


def test_byte_mutated_records_never_get_a_5xx(server: Server) -> None:
    rng = random.Random(15)
    statuses: dict[int, int] = {}
    for _ in range(2000):
        status = server.record(mutate(VALID, rng)).status_code
        statuses[status] = statuses.get(status, 0) + 1
    assert statuses.get(400, 0) > 500  # most mutations break the JSON text


def test_byte_mutated_bodies_of_every_other_route_never_get_a_5xx(server: Server) -> None:
    rng = random.Random(1515)
    record_id = server.record(VALID).json()["record_id"]
    bodies = {
        "/v1/streams": b'{"name":"s-x","declarations":{"o:/a":"money"},"strict":true}',
        "/v1/records:batch": b'{"records":[' + VALID + b"," + VALID + b"]}",
        f"/v1/records/{record_id}/disclosure": (
            b'{"fields":["o:/amount"],"coverage":{"from_seq":1,"to_seq":1}}'
        ),
        "/v1/verify": server.post(
            f"/v1/records/{record_id}/disclosure", b'{"fields":["o:/amount"]}'
        ).content,
    }
    for path, body in bodies.items():
        for _ in range(250):
            mutated = mutate(body, rng)
            response = server.post(path, mutated)
            if path == "/v1/records:batch" and response.status_code == 200:
                for result in response.json()["results"]:
                    if result["status"] == 201:
                        server.seqs.append(result["record"]["seq"])
                        server.subjects.add("customer-1")
    for path, body in {
        "/login/authenticate/finish": b'{"state":"x","credential":{"id":"a"}}',
        "/login/register/start": b'{"token":"abc"}',
        "/sso/nobody/callback": b'{"state_nonce":"n","callback_data":"YQ=="}',
    }.items():
        for _ in range(100):
            response = server.post(path, mutate(body, rng), headers=JSON)
            assert response.status_code in PANEL_EMPTY, (path, response.status_code)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    pasted = b"bundle=" + bodies["/v1/verify"].replace(b"%", b"%25").replace(b"&", b"%26")
    for _ in range(100):
        response = server.post("/verify-record", mutate(pasted, rng), headers=form)
        assert response.status_code in (200, 400, 413, 415)


def test_invalid_utf8_at_every_position_of_an_envelope(server: Server) -> None:
    for at in range(len(VALID)):
        for bad in (b"\xff", b"\xc3", b"\xed\xa0\x80"):  # never valid, truncated, surrogate
            body = VALID[:at] + bad + VALID[at + 1 :]
            response = server.record(body)
            assert response.status_code == 400, (at, response.text)
            assert response.json()["code"] == "request_not_json"


DEPTHS = (126, 1000, 20_000, 100_000)


def deep(levels: int, *, closed: bool = True, objects: bool = False) -> bytes:
    opening, value, closing = (b'{"a":', b"1", b"}") if objects else (b"[", b"1", b"]")
    return opening * levels + value + (closing * levels if closed else b"")


@pytest.mark.parametrize("levels", DEPTHS)
def test_deep_nesting_is_refused_or_failed_on_every_route(server: Server, levels: int) -> None:
    for objects in (False, True):
        for closed in (True, False):
            nested = deep(levels, closed=closed, objects=objects)
            envelope = VALID.replace(b'"payload":{', b'"payload":{"deep":' + nested + b",", 1)
            refused = server.record(envelope)
            assert refused.status_code in (400, 413, 422), refused.text
            bodies = {
                "/v1/streams": b'{"name":"deep","declarations":' + nested + b"}",
                "/v1/records:batch": b'{"records":[' + envelope + b"]}",
            }
            for path, body in bodies.items():
                assert server.post(path, body).status_code in (400, 413, 422)
            # A bundle to verify is never refused for its content: it is malformed (rule M1).
            verified = server.post("/v1/verify", nested)
            assert verified.status_code == 200, verified.text[:300]
            assert verified.json()["verdict"] == "FAILED"
            assert verified.json()["checks"][0]["detail"].startswith("malformed bundle: ")


def test_huge_numbers_and_wrong_types_are_refused(server: Server) -> None:
    for payload in (b"1e400", b"-1e400", b"1" * 5000, b"123456789012345678901234567890"):
        body = VALID.replace(b'"amount":1500', b'"amount":' + payload)
        assert server.record(body).status_code in (400, 422)
    for member, value in (("stream", 1), ("subject_id", ["a"]), ("payload", "x"), ("x", 1)):
        body = json.dumps({**ENVELOPE, member: value}).encode()
        assert server.record(body).status_code in (400, 422)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
ROUTES = ["/v1/streams", "/v1/records", "/v1/records:batch", "/v1/verify"]


@settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    route=st.sampled_from(ROUTES),
    body=st.one_of(
        st.binary(max_size=300),
        JSON_VALUES.map(lambda value: json.dumps(value).encode()),
        st.fixed_dictionaries(
            {"stream": st.just(STREAM)},
            optional={
                "record_type": st.text(max_size=4) | st.integers(),
                "occurred_at": st.just("2026-01-01T00:00:00Z") | st.text(max_size=4),
                "subject_id": st.just("customer-2") | st.booleans(),
                "payload": JSON_VALUES,
            },
        ).map(lambda value: json.dumps(value).encode()),
    ),
)
def test_generated_bodies_never_get_a_5xx(server: Server, route: str, body: bytes) -> None:
    if route == "/v1/records":
        server.record(body)
        return
    response = server.post(route, body)
    if route == "/v1/records:batch" and response.status_code == 200:
        for result in response.json()["results"]:
            if result["status"] == 201:
                server.seqs.append(result["record"]["seq"])
                server.subjects.add(json.loads(body)["records"][result["index"]]["subject_id"])


CHUNKED = [
    b"zz\r\n{}\r\n0\r\n\r\n",  # a size that is not hex
    b"5\r\n{}\r\n0\r\n\r\n",  # a size larger than the chunk
    b"2\r\n{}0\r\n\r\n",  # no CRLF after the chunk
    b"-2\r\n{}\r\n0\r\n\r\n",  # a negative size
    b"ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n",  # a size beyond any integer
    b"2\r\n{}\r\n",  # no last chunk: the client stops sending
    b"2;ext=\x00\r\n{}\r\n0\r\n\r\n",  # a NUL in a chunk extension
    b"2\r\n{}\r\n0\r\nX-Trailer: \xff\r\n\r\n",  # a trailer that is not text
]


@pytest.mark.parametrize("path", ["/v1/records", "/v1/records:batch", "/v1/verify"])
@pytest.mark.parametrize("framing", CHUNKED, ids=range(len(CHUNKED)))
def test_bad_chunked_framing_never_gets_a_5xx(server: Server, path: str, framing: bytes) -> None:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: {server.headers['Authorization']}\r\nTransfer-Encoding: chunked\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(head + framing)
        raw.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while chunk := raw.recv(65536):
                answer += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    server.answers += 1
    status_line = answer.split(b"\r\n", 1)[0]
    # The server may answer 4xx or close the connection unanswered; never a 5xx.
    assert not status_line.startswith(b"HTTP/1.1 5"), answer[:300]

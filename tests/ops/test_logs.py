"""One logging setup for the service, its workers and the demo witness: readable text by
default, JSON lines with ``RECORDSEAL_LOG_FORMAT=json``, and an access log that names routes,
never tokens, query strings or customer values."""

from __future__ import annotations

import json
import logging
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from recordseal.logs import Formatter, dict_config
from tests.servers import create_token, free_port, kill_service, start_service

SECRET_NOTE = "note-that-must-not-be-logged"
SECRET_SUBJECT = "subject-that-must-not-be-logged"
SECRET_QUERY = "query-value-that-must-not-be-logged"
TEXT_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) +[\w.]+: \S+"
)


def _record(message: str, level: int = logging.INFO, **fields: object) -> logging.LogRecord:
    record = logging.LogRecord("recordseal.test", level, __file__, 1, message, None, None)
    record.__dict__.update(fields)
    return record


def test_text_lines_are_time_level_logger_event_and_fields() -> None:
    line = Formatter("text").format(
        _record("witness.cosign_failed", logging.WARNING, witness="demo w", size=3, ok=True)
    )
    assert TEXT_LINE.match(line), line
    assert line.endswith(
        ' WARNING recordseal.test: witness.cosign_failed witness="demo w" size=3 ok=true'
    )


def test_a_value_cannot_forge_a_line_or_a_field() -> None:
    line = Formatter("text").format(_record("event", path="/a\n2026 INFO forged x=1"))
    assert "\n" not in line
    assert 'path="/a\\n2026 INFO forged x=1"' in line


def test_json_lines_have_time_level_event_and_fields() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = _record("sealer.round_failed", logging.ERROR, origin="o")
        record.exc_info = sys.exc_info()
    document = json.loads(Formatter("json").format(record))
    assert list(document)[:4] == ["time", "level", "logger", "event"]
    assert document["level"] == "error" and document["event"] == "sealer.round_failed"
    assert document["origin"] == "o"
    assert "ValueError: boom" in document["exception"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", document["time"])


def test_an_unknown_format_or_level_is_refused() -> None:
    with pytest.raises(ValueError, match="xml"):
        dict_config("xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="loud"):
        dict_config("text", "loud")


def exercise(url: str, token: str) -> None:
    """Requests whose token, query string and values must stay out of the log."""
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=auth, timeout=30) as client:
        assert client.post("/v1/streams", json={"name": "orders"}).status_code == 201
        record = {
            "stream": "orders",
            "record_type": "order.placed",
            "occurred_at": "2026-11-21T08:00:00Z",
            "subject_id": SECRET_SUBJECT,
            "payload": {"note": SECRET_NOTE},
        }
        created = client.post("/v1/records", json=record, params={"q": SECRET_QUERY}).json()
        assert client.get(
            f"/v1/records/{created['record_id']}", params={"x": SECRET_QUERY}
        ).is_success
        assert client.post(f"/v1/subjects/{SECRET_SUBJECT}/erase").is_success
        assert client.post("/v1/records", json={**record, "stream": "nope"}).status_code == 404
        assert client.get(f"/no/such/{SECRET_QUERY}").status_code == 404
        assert httpx.get(f"{url}/health").status_code == 200


@pytest.fixture(scope="module")
def json_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    root = tmp_path_factory.mktemp("json-logs")
    data = root / "data"
    data.mkdir()
    port = free_port()
    server = start_service(
        data,
        port,
        workers=2,
        env={"RECORDSEAL_LOG_FORMAT": "json"},
        args=["--demo-witness", str(root / "witness")],
    )
    try:
        token = create_token(data, "acme")
        exercise(f"http://127.0.0.1:{port}", token)
        time.sleep(2.5)  # a sealing round and its cosignature
    finally:
        kill_service(server)
    yield token, str(root), data / f"server-{port}.log"


def test_every_line_of_service_workers_and_witness_is_a_json_object(
    json_service: tuple[str, str, Path],
) -> None:
    _, _, log = json_service
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    documents = [json.loads(line) for line in lines]  # fails on any line that is not JSON
    for document in documents:
        assert {"time", "level", "logger", "event"} <= set(document), document
    loggers = {document["logger"] for document in documents}
    # The supervisor, the workers' access log, the sealer's audit, the demo witness; granian's
    # lines under the name of the process that runs it, never `_granian`.
    assert {"recordseal.serve", "recordseal.access", "recordseal.audit"} <= loggers
    assert "recordseal.witness" in loggers
    assert not any(name.startswith("_granian") for name in loggers), loggers
    granian = {d["logger"] for d in documents if d["event"].startswith("Starting granian")}
    assert granian == {"recordseal.serve", "recordseal.witness"}
    demo = [d for d in documents if d["event"] == "witness.demo"]
    assert (
        demo and demo[0]["level"] == "warning" and "demo witness on this machine" in demo[0]["note"]
    )
    assert not any(d["level"] == "info" and d["logger"].startswith("httpx") for d in documents)


def test_the_access_log_names_routes_never_tokens_queries_or_values(
    json_service: tuple[str, str, Path],
) -> None:
    token, _, log = json_service
    text = log.read_text()
    for secret in (token, SECRET_NOTE, SECRET_SUBJECT, SECRET_QUERY):
        assert secret not in text
    access = [json.loads(line) for line in text.splitlines() if '"recordseal.access"' in line]
    seen = {(a["method"], a["route"], a["status"]) for a in access}
    assert ("POST", "/v1/records", 201) in seen
    assert ("GET", "/v1/records/{record_id}", 200) in seen
    erasures = {route for method, route, status in seen if route.startswith("/v1/subjects/")}
    assert erasures == {"/v1/subjects/{subject_id}/erase"}  # the OpenAPI path, not the catch-all
    assert ("GET", "(unmatched)", 404) in seen
    refused = next(a for a in access if a["route"] == "/v1/records" and a["status"] == 404)
    assert refused["code"] == "stream_not_found" and refused["tenant"] == "acme"
    assert all(isinstance(a["duration_ms"], float) and a["level"] == "info" for a in access)
    # Probes are logged at DEBUG only: not at the default level.
    assert not any(a["route"] == "/health" for a in access)


def test_the_service_s_listening_line_comes_first_and_names_it(tmp_path: Path) -> None:
    """As `make run` starts it (with the demo witness, text lines): the first address in
    the output is the service's, on its own line; granian's `Listening at` lines (the
    witness's came first) are left out, and no line is `_granian`'s. The hint's command
    runs as printed."""
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    server = start_service(data, port, workers=2, args=["--demo-witness", str(data / "witness")])
    kill_service(server)
    lines = [line for line in (data / f"server-{port}.log").read_text().splitlines() if line]
    said = [re.sub(r"^\S+ +\S+ +", "", line) for line in lines]  # no time, no level
    listening = [line for line in said if re.search(r"listening url=|Listening at", line)]
    assert len(listening) == 2, listening
    assert (
        listening[0] == f"recordseal.serve: serve.listening url=http://127.0.0.1:{port} workers=2"
    )
    assert listening[1].startswith("recordseal.witness: witness.listening url=")
    assert not any("_granian" in line or "Listening at" in line for line in lines), lines
    assert any("recordseal.serve: Spawning worker-1" in line for line in lines), lines
    (hint,) = [line for line in lines if "serve.hint" in line]
    command = json.loads(hint.split(" next=", 1)[1]).replace("<tenant>", "hinted")
    program, *rest = shlex.split(command)
    # The script beside this interpreter, as seen from the service's working directory (this
    # one): relative when under it (`.venv/bin/recordseal` after `make run`), else absolute.
    assert Path(program).resolve() == Path(sys.executable).with_name("recordseal").resolve()
    assert rest[:2] == ["token", "create"], command
    done = subprocess.run([program, *rest], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_text_is_the_default_and_reads_as_one_format(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    server = start_service(data, port, workers=2)
    try:
        exercise(f"http://127.0.0.1:{port}", create_token(data, "acme"))
    finally:
        kill_service(server)
    lines = [line for line in (data / f"server-{port}.log").read_text().splitlines() if line]
    assert lines and all(TEXT_LINE.match(line) for line in lines), lines
    assert any(
        "recordseal.access: request method=POST route=/v1/records status=201" in line
        for line in lines
    )
    assert any("serve.no_witness" in line and "WARNING" in line for line in lines)

"""``recordseal stream create|list|show`` and ``recordseal records list`` against a real
service process, with the tenant's token from the environment, as docs/client.md shows them:
declarations from options and from a file, a second run with ``--exist-ok``, refusals with
the service's code and the documented exit codes, ``--json`` alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.conftest import Service
from tests.servers import create_token, free_port, kill_service, start_service


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("streams-service")
    port = free_port()
    server = start_service(data, port, env={"RECORDSEAL_SEAL_INTERVAL": "0.1"})
    try:
        yield Service(f"http://127.0.0.1:{port}", create_token(data, "acme"), data)
    finally:
        kill_service(server)


def recordseal(
    service: Service | None, *argv: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    if service is not None:
        env |= {"RECORDSEAL_URL": service.url, "RECORDSEAL_TOKEN": service.token}
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *argv], env=env, input=stdin,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_stream_create_show_and_list(service: Service, tmp_path: Path) -> None:
    declarations = tmp_path / "declarations.json"
    declarations.write_text(json.dumps({"o:/placed": "timestamp"}))
    made = recordseal(
        service, "stream", "create", "orders", "--declare", "o:/amount=money",
        "--declarations", str(declarations), "--strict",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stdout == (
        "stream 'orders': declarations o:/amount=money, o:/placed=timestamp; strict; next seq 1\n"
    )
    again = recordseal(service, "stream", "create", "orders", "--declare", "o:/amount=money")
    assert again.returncode == 3
    assert again.stderr.startswith("recordseal stream create: 409 stream_exists")
    same = recordseal(
        service, "stream", "create", "orders", "--declare", "o:/amount=money",
        "--declarations", str(declarations), "--strict", "--exist-ok", "--json",
    )  # fmt: skip
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["declarations"] == {
        "o:/amount": "money",
        "o:/placed": "timestamp",
    }
    assert recordseal(service, "stream", "create", "notes").returncode == 0
    shown = recordseal(service, "stream", "show", "orders")
    assert shown.returncode == 0, shown.stderr
    assert "records      0\nnext seq     1\nstrict       yes\n" in shown.stdout
    assert "declared     o:/amount = money\n" in shown.stdout
    listed = recordseal(service, "stream", "list", "--json")
    names = [s["name"] for s in json.loads(listed.stdout)]
    assert names == sorted(names) and {"orders", "notes"} <= set(names)
    table = recordseal(service, "stream", "list").stdout.splitlines()
    assert table[0] == "name\trecords\tnext seq\tstrict\tdeclarations\tcreated"
    assert any(row.startswith("notes\t0\t1\tno\t-\t") for row in table[1:]), table


def test_stream_refusals_name_the_rule(service: Service) -> None:
    missing = recordseal(service, "stream", "show", "nowhere")
    assert missing.returncode == 3
    assert missing.stderr == (
        "recordseal stream show: 404 stream_not_found at name: no stream of this name\n"
    )
    bad = recordseal(service, "stream", "create", "x", "--declare", "o:/amount")
    assert bad.returncode == 2
    assert "--declare 'o:/amount': give PATH=KIND" in bad.stderr
    kind = recordseal(service, "stream", "create", "y", "--declare", "o:/amount=dollars")
    assert kind.stderr == (
        "recordseal stream create: 422 unknown_kind at o:/amount: unknown field kind\n"
    )
    assert kind.returncode == 3
    no_service = recordseal(None, "stream", "list")
    assert no_service.returncode == 2
    assert no_service.stderr == (
        "recordseal stream list: no service: give --url or set RECORDSEAL_URL\n"
    )


def test_records_list_shows_a_stream_s_records_and_their_seals(service: Service) -> None:
    assert recordseal(service, "stream", "create", "listed").returncode == 0
    lines = "".join(
        json.dumps(
            {"record_type": "t", "occurred_at": f"2026-11-21T08:00:0{n}Z", "subject_id": "s",
             "payload": {"n": n}}
        ) + "\n"
        for n in range(5)
    )  # fmt: skip
    command = ["ingest", "-", "--stream", "listed", "--source", "l"]
    ingested = recordseal(service, *command, stdin=lines)
    assert ingested.returncode == 0, ingested.stderr
    listed = recordseal(service, "records", "list", "listed", "--from-seq", "2", "--limit", "3")
    assert listed.returncode == 0, listed.stderr
    table = [row.split("\t") for row in listed.stdout.splitlines()]
    assert table[0] == ["seq", "record_id", "kind", "occurred_at", "sealed"]
    assert [(row[0], row[2], row[3]) for row in table[1:]] == [
        ("2", "record", "2026-11-21T08:00:01Z"),
        ("3", "record", "2026-11-21T08:00:02Z"),
        ("4", "record", "2026-11-21T08:00:03Z"),
    ]
    as_json = json.loads(recordseal(service, "records", "list", "listed", "--json").stdout)
    assert [r["seq"] for r in as_json] == [1, 2, 3, 4, 5]
    assert all(r["header"]["stream"] == "listed" for r in as_json)
    refused = recordseal(service, "records", "list", "listed", "--limit", "0")
    assert refused.returncode == 2
    assert refused.stderr == "recordseal records list: --limit 0: give 1 to 1000\n"
    missing = recordseal(service, "records", "list", "nowhere")
    assert missing.returncode == 3 and "404 stream_not_found" in missing.stderr

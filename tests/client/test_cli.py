"""``recordseal ingest`` and ``recordseal disclose`` against a real service process (issue 33,
item 2): every line stored once however often the command runs, refusals as JSON Lines naming
line, code and field, a progress bar on a terminal only, and the documented exit codes."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from recordseal.client import Client, Record
from recordseal.settings import unknown_variables
from tests.client.conftest import Service
from tests.servers import create_token, free_port, kill_service, start_service

RECORDSEAL = [sys.executable, "-m", "recordseal.cli"]


def line(subject: str, payload: Any, **extra: Any) -> str:
    record = {
        "record_type": "order.placed",
        "occurred_at": "2026-11-21T08:00:00Z",
        "subject_id": subject,
        "payload": payload,
        **extra,
    }
    return json.dumps(record)


def environment(service: Service | None, **variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    if service is not None:
        env |= {"RECORDSEAL_URL": service.url, "RECORDSEAL_TOKEN": service.token}
    return env | variables


def run(
    args: list[str], env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RECORDSEAL, *args], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


def outputs(done: subprocess.CompletedProcess[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The refusals and the summary an ``ingest`` wrote on standard output."""
    *refusals, last = [json.loads(text) for text in done.stdout.splitlines()]
    return refusals, last["summary"]


def create_stream(service: Service, name: str) -> None:
    async def create() -> None:
        async with Client(service.url, service.token) as client:
            await client.create_stream(name, {"o:/amount": "money"})

    asyncio.run(create())


def next_seq(service: Service, name: str) -> int:
    async def read() -> int:
        async with Client(service.url, service.token) as client:
            return (await client.stream(name)).next_seq

    return asyncio.run(read())


def test_ingest_stores_the_lines_and_names_each_refusal(service: Service, tmp_path: Path) -> None:
    create_stream(service, "cli-orders")
    lines = [
        line("c-1", {"amount": 1500, "note": "two books"}),  # 1
        line("c-2", {"amount": 12.5}),  # 2: the service refuses it
        "",  # 3: blank
        "not json",  # 4: refused here
        line("c-3", {"amount": 1}).replace("1}", "1e400}"),  # 5: refused here, in the payload
        line("c-4", {"amount": 2}, stream="another"),  # 6: refused here
        "[1, 2]",  # 7: not an object: the service says so
        line("c-5", {"amount": 3}).replace('"order.placed"', "5"),  # 8: a wrong type
        line("c-6", {"amount": 4}, stream="cli-orders"),  # 9: its own stream, the same
        "{}",  # 10
        line("c-7", {"amount": 5}, stream=None),  # 11: a stream, if null, is another one
    ]
    source = tmp_path / "orders.jsonl"
    source.write_text("\n".join(lines) + "\n")
    receipts = tmp_path / "receipts.jsonl"
    done = run(
        ["ingest", str(source), "--stream", "cli-orders", "--receipts", str(receipts), "--json"],
        environment(service),
    )
    assert done.returncode == 1, done.stderr
    refusals, summary = outputs(done)
    elapsed, rate = summary.pop("elapsed_seconds"), summary.pop("records_per_second")
    assert elapsed > 0 and rate == pytest.approx(10 / elapsed, rel=0.01)  # 10 lines judged
    assert [(r["line"], r["status"], r["code"], r["field"]) for r in refusals] == [
        (2, 422, "money_fraction", "o:/amount"),
        (4, 400, "invalid_json", None),
        (5, 422, "number_out_of_range", "o:/amount"),
        (6, 400, "stream_mismatch", "stream"),
        (7, 400, "request_invalid", None),
        (8, 400, "request_invalid", "record_type"),
        (10, 400, "request_invalid", "record_type"),
        (11, 400, "stream_mismatch", "stream"),
    ]
    assert refusals[0]["detail"] == (
        "money is a whole number of minor units (cents): 12.50 is sent as 1250"
    )
    assert summary == {
        "source": str(source),
        "stream": "cli-orders",
        "lines": 11,
        "stored": 2,
        "already_stored": 0,
        "refused": 8,
        "refused_by_code": {
            "invalid_json": 1,
            "money_fraction": 1,
            "number_out_of_range": 1,
            "request_invalid": 3,
            "stream_mismatch": 2,
        },
        "blank": 1,
        "unsent": 0,
        "unanswered": 0,
    }
    assert "11 lines: 2 stored, 0 already stored, 8 refused" in done.stderr
    assert f" in {elapsed:.1f} s (" in done.stderr and " records/s)\n" in done.stderr
    stored = [json.loads(text) for text in receipts.read_text().splitlines()]
    assert [(r["line"], r["seq"], r["replayed"]) for r in stored] == [(1, 1, False), (9, 2, False)]

    async def payloads() -> list[dict[str, Any]]:
        async with Client(service.url, service.token) as client:
            return [await client.payload(r["record_id"]) for r in stored]

    assert asyncio.run(payloads()) == [{"amount": 1500, "note": "two books"}, {"amount": 4}]


def test_a_line_that_would_spoil_its_batch_is_refused_alone(
    service: Service, tmp_path: Path
) -> None:
    """A line over the size a batch has room for, or nested as deep as a single post allows
    but a batch does not (docs/security.md, "Depth is counted from the body"), would make the
    service refuse the whole batch: it is refused here, and its neighbours are stored."""
    create_stream(service, "cli-spoilers")
    deep: Any = 0
    for _ in range(122):  # the payload nests 123 levels: a post takes 124, a batch 122
        deep = [deep]
    lines = [
        line("y-1", {"amount": 1}),
        line("y-2", {"amount": 2, "blob": "x" * 330_000}),
        line("y-3", {"amount": 3, "deep": deep}),
        line("y-4", {"amount": 4}),
    ]
    source = tmp_path / "spoilers.jsonl"
    source.write_text("\n".join(lines) + "\n")
    done = run(["ingest", str(source), "--stream", "cli-spoilers", "--json"], environment(service))
    assert done.returncode == 1, done.stderr
    refusals, summary = outputs(done)
    assert [(r["line"], r["status"], r["code"]) for r in refusals] == [
        (2, 413, "request_too_large"),
        (3, 422, "depth_exceeded"),
    ]
    # The array that opens level 126 of the batch (batch, records, record, payload, deep…).
    assert refusals[1]["field"] == "o" + "a" * 121 + ":/deep" + "/0" * 121
    assert summary["stored"] == 2


def test_a_rerun_stores_no_line_twice(service: Service, tmp_path: Path) -> None:
    """Run again as it is, then with refused lines corrected in place (one refused by the
    service, one refused here before any later line of its batch was sent), then with lines
    appended past the next batch: each time only the new lines are stored."""
    create_stream(service, "cli-rerun")
    lines = [line(f"s-{n % 7}", {"amount": n}) for n in range(1, 251)]
    lines[49] = line("s-0", {"amount": 0.5})  # line 50: refused by the service
    lines[119] = "{not json"  # line 120: refused here, in the middle of the second batch
    source = tmp_path / "many.jsonl"
    source.write_text("\n".join(lines) + "\n")
    command = ["ingest", str(source), "--stream", "cli-rerun", "--concurrency", "2", "--json"]

    first = run(command, environment(service))
    assert first.returncode == 1, first.stderr
    assert outputs(first)[1]["stored"] == 248
    assert next_seq(service, "cli-rerun") == 249

    again = run(command[:-1], environment(service))  # without --json: the refusals alone
    assert again.returncode == 1, again.stderr
    refusals = [json.loads(text) for text in again.stdout.splitlines()]
    assert [(r["line"], r["code"]) for r in refusals] == [
        (50, "money_fraction"),
        (120, "invalid_json"),
    ]
    assert "250 lines: 0 stored, 248 already stored, 2 refused" in again.stderr
    assert next_seq(service, "cli-rerun") == 249

    lines[49] = line("s-0", {"amount": 50})
    lines[119] = line("s-1", {"amount": 120})
    lines += [line("s-2", {"amount": n}) for n in range(251, 321)]
    source.write_text("\n".join(lines) + "\n")
    corrected = run(command, environment(service))
    assert corrected.returncode == 0, corrected.stdout + corrected.stderr
    refusals, summary = outputs(corrected)
    assert refusals == []
    assert (summary["lines"], summary["stored"], summary["already_stored"]) == (320, 72, 248)
    assert next_seq(service, "cli-rerun") == 321
    assert "320 lines: 72 stored, 248 already stored" in corrected.stderr


def test_standard_input_needs_a_name_and_reruns_under_it(service: Service) -> None:
    create_stream(service, "cli-stdin")
    text = "\n".join(line(f"p-{n}", {"amount": n}) for n in range(3))
    nameless = run(["ingest", "-", "--stream", "cli-stdin"], environment(service), text)
    assert nameless.returncode == 64
    assert "give --source NAME" in nameless.stderr
    command = ["ingest", "-", "--stream", "cli-stdin", "--json", "--source", "export-2026-11-21"]
    first = run(command, environment(service), text)
    assert first.returncode == 0, first.stderr
    assert outputs(first)[1]["stored"] == 3
    again = run(command, environment(service), text)
    assert (outputs(again)[1]["stored"], outputs(again)[1]["already_stored"]) == (0, 3)
    other = run([*command[:-1], "export-2026-11-22"], environment(service), text)
    assert outputs(other)[1]["stored"] == 3  # another input: its lines are its own


def test_the_service_and_token_come_from_options_or_the_environment(
    service: Service, tmp_path: Path
) -> None:
    create_stream(service, "cli-settings")
    source = tmp_path / "one.jsonl"
    source.write_text(line("t-1", {"amount": 1}) + "\n")
    command = ["ingest", str(source), "--stream", "cli-settings", "--json"]

    nothing = run(command, environment(None))
    assert (nothing.returncode, nothing.stderr.strip()) == (
        2,
        "recordseal ingest: no service: give --url or set RECORDSEAL_URL",
    )
    no_token = run(command, environment(None, RECORDSEAL_URL=service.url))
    assert no_token.returncode == 2
    assert "no API token: give --token-file FILE or set RECORDSEAL_TOKEN" in no_token.stderr

    token_file = tmp_path / "token"
    token_file.write_text(service.token + "\n")
    by_options = run(
        [*command, "--url", service.url, "--token-file", str(token_file)], environment(None)
    )
    assert by_options.returncode == 0, by_options.stderr
    assert outputs(by_options)[1]["stored"] == 1
    by_environment = run(command, environment(service))
    assert outputs(by_environment)[1]["already_stored"] == 1
    # The two variables are the client's: `serve` does not take them for misspelt settings.
    assert unknown_variables({"RECORDSEAL_URL": "x", "RECORDSEAL_TOKEN": "y"}) == []


def test_a_refusal_of_the_whole_run_exits_3(service: Service, tmp_path: Path) -> None:
    source = tmp_path / "one.jsonl"
    source.write_text(line("u-1", {"amount": 1}) + "\n")
    no_stream = run(["ingest", str(source), "--stream", "nowhere"], environment(service))
    assert no_stream.returncode == 3
    assert no_stream.stderr.strip() == (
        "recordseal ingest: 404 stream_not_found: no stream of this name\ncreate it first:"
        " recordseal stream create nowhere [--declare PATH=KIND ...] (docs/client.md)"
    )
    assert no_stream.stdout == ""  # nothing was read: no refusal, no summary
    bad_token = run(
        ["ingest", str(source), "--stream", "nowhere"],
        environment(service, RECORDSEAL_TOKEN="rs_not-a-token"),
    )
    assert bad_token.returncode == 3
    assert "401 unauthenticated" in bad_token.stderr
    unreadable = run(
        ["ingest", str(tmp_path / "missing.jsonl"), "--stream", "x"], environment(service)
    )
    assert unreadable.returncode == 3
    assert "missing.jsonl" in unreadable.stderr


def count_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_an_interrupted_run_is_finished_by_running_it_again(tmp_path: Path) -> None:
    """The service goes away between two batches read from a pipe: the first batch is stored,
    the run stops with exit 3 saying so, and the same command against the restarted service
    stores the rest and nothing twice."""
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    server = start_service(data, port)
    token = create_token(data, "acme")
    service = Service(f"http://127.0.0.1:{port}", token, data)
    create_stream(service, "piped")
    lines = [line(f"v-{n}", {"amount": n}) + "\n" for n in range(200)]
    receipts = tmp_path / "receipts.jsonl"
    command = ["ingest", "-", "--stream", "piped", "--source", "pipe", "--json"]
    command += ["--receipts", str(receipts)]
    ingest = subprocess.Popen(
        [*RECORDSEAL, *command], env=environment(service), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert ingest.stdin is not None
        ingest.stdin.write("".join(lines[:101]))  # the first batch, and one line of the next
        ingest.stdin.flush()
        deadline = time.monotonic() + 60
        while count_lines(receipts) < 100:  # the event: the first batch is answered
            assert time.monotonic() < deadline, "the first batch was not answered in 60 s"
            time.sleep(0.05)
        kill_service(server)
        stdout, stderr = ingest.communicate("".join(lines[101:]), timeout=120)
    finally:
        ingest.kill()
        kill_service(server)
    assert ingest.returncode == 3, stderr
    summary = json.loads(stdout.splitlines()[-1])["summary"]
    assert (summary["stored"], summary["unsent"]) == (100, 100)
    assert "stopped: lines from 101:" in stderr

    port = free_port()
    server = start_service(data, port)
    try:
        service = Service(f"http://127.0.0.1:{port}", token, data)
        again = run(command, environment(service), "".join(lines))
        assert again.returncode == 0, again.stderr
        assert (outputs(again)[1]["stored"], outputs(again)[1]["already_stored"]) == (100, 100)
        assert next_seq(service, "piped") == 201
    finally:
        kill_service(server)


def stderr_on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run with standard error on a pseudo-terminal; its exit code and what it wrote there."""
    leader, follower = pty.openpty()
    written: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the last end of the follower closed
                return
            if not chunk:
                return
            written.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        done = subprocess.run(
            [*RECORDSEAL, *args], env=env | {"TERM": "xterm", "COLUMNS": "100"},
            stdout=subprocess.DEVNULL, stderr=follower, timeout=120,
        )  # fmt: skip
    finally:
        os.close(follower)
        reader.join(timeout=10)
        os.close(leader)
    return done.returncode, b"".join(written).decode(errors="replace")


def test_a_progress_bar_on_a_terminal_only(service: Service, tmp_path: Path) -> None:
    create_stream(service, "cli-progress")
    source = tmp_path / "progress.jsonl"
    source.write_text("".join(line(f"w-{n % 5}", {"amount": n}) + "\n" for n in range(400)))
    command = ["ingest", str(source), "--stream", "cli-progress"]
    code, terminal = stderr_on_a_terminal(command, environment(service))
    assert code == 0, terminal
    assert "ingesting" in terminal and "━" in terminal  # rich's bar, with its label
    assert " records, " in terminal and " records/s" in terminal  # records, not bytes alone
    assert "400 lines: 400 stored" in terminal
    piped = run(command, environment(service))
    assert piped.returncode == 0
    assert "ingesting" not in piped.stderr and "━" not in piped.stderr
    assert piped.stderr.startswith("recordseal ingest: 400 lines: 0 stored, 400 already stored")


def test_disclose_writes_a_bundle_that_verifies(service: Service, tmp_path: Path) -> None:
    async def ingest() -> tuple[str, bytes]:
        async with Client(service.url, service.token) as client:
            await client.create_stream("cli-disclose", {"o:/amount": "money"})
            payload = {"amount": 7, "note": "hello", "items": [{"sku": "a"}]}
            receipt = await client.ingest(
                Record("cli-disclose", "t", "2026-11-21T08:00:00Z", "x-1", payload)
            )
            return receipt.record_id, await client.key_directory()

    record_id, keys = asyncio.run(ingest())
    out = tmp_path / "bundle.json"
    done = run(
        ["disclose", record_id, "--field", "o:/amount", "oao:/items/0/sku", "--wait", "30",
         "-o", str(out)],
        environment(service),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr.strip() == (f"recordseal disclose: 2 fields of {record_id} to {out}; sealed")
    result = Client.verify(out.read_bytes(), keys)
    assert result.disclosed == {"o:/amount": 7, "oao:/items/0/sku": "a"}
    assert [c.status for c in result.checks][:4] == ["passed"] * 4  # sealed: 4 is the log

    as_json = run(["disclose", record_id, "--field", "o:/note", "--json"], environment(service))
    assert as_json.returncode == 0, as_json.stderr
    written = json.loads(as_json.stdout)
    assert (written["fields"], written["sealed"], written["out"]) == (["o:/note"], True, None)
    assert [f["value"] for f in written["bundle"]["fields"]] == ["hello"]

    unknown = run(["disclose", record_id, "--field", "note"], environment(service))
    assert unknown.returncode == 3
    assert unknown.stderr.startswith(
        "recordseal disclose: 422 unknown_field at note: the record has no field at this path;"
        " did you mean o:/note?"
    )
    assert run(["disclose", record_id, "--field", "o:/note"], environment(None)).returncode == 2
    abbreviated = run(["disclose", record_id, "--fie", "o:/note"], environment(service))
    assert abbreviated.returncode == 64  # no option is taken for another by its prefix


@pytest.mark.parametrize("command", ["ingest", "disclose"])
def test_help_states_the_exit_codes(command: str) -> None:
    done = run([command, "--help"], environment(None))
    assert done.returncode == 0
    assert "Exit codes:" in done.stdout


def test_batch_size_sets_the_lines_per_request_and_is_bounded(
    service: Service, tmp_path: Path
) -> None:
    create_stream(service, "cli-batches")
    source = tmp_path / "batches.jsonl"
    source.write_text("".join(line(f"b-{n % 3}", {"amount": n}) + "\n" for n in range(250)))
    command = ["ingest", str(source), "--stream", "cli-batches", "--json"]
    for size in ("0", "1001", "many"):
        refused = run([*command, "--batch-size", size], environment(service))
        assert refused.returncode == 64, refused.stderr
    assert (
        "--batch-size must be 1 to 1000"
        in run([*command, "--batch-size", "0"], environment(service)).stderr
    )
    done = run([*command, "--batch-size", "1000"], environment(service))
    assert done.returncode == 0, done.stderr
    summary = outputs(done)[1]
    assert (summary["stored"], summary["unanswered"]) == (250, 0)
    assert summary["elapsed_seconds"] > 0 and summary["records_per_second"] > 0
    # A rerun with the same size recognises every line.
    again = run([*command, "--batch-size", "1000"], environment(service))
    assert outputs(again)[1]["already_stored"] == 250
    assert next_seq(service, "cli-batches") == 251


def test_one_batch_in_flight_reads_the_input_to_its_end(service: Service, tmp_path: Path) -> None:
    """``--concurrency 1``: each answer frees the one place; the next batch is read, up to
    the end of the input (a run must not end when it has nothing in flight but more to read)."""
    create_stream(service, "cli-one-at-a-time")
    source = tmp_path / "one.jsonl"
    source.write_text("".join(line(f"o-{n % 3}", {"amount": n}) + "\n" for n in range(350)))
    command = ["ingest", str(source), "--stream", "cli-one-at-a-time", "--concurrency", "1"]
    done = run([*command, "--json"], environment(service))
    assert done.returncode == 0, done.stderr
    assert (outputs(done)[1]["lines"], outputs(done)[1]["stored"]) == (350, 350)
    assert next_seq(service, "cli-one-at-a-time") == 351

"""``recordseal subject erase ID [--receipt FILE]`` against a real service process: the
subject's payloads go, a repeat changes nothing, and the receipt it keeps verifies with
``recordseal verify-receipt`` and the exported key directory."""

from __future__ import annotations

import json
from pathlib import Path

from tests.client.conftest import Service
from tests.ops.test_streams import recordseal, service  # noqa: F401 (the fixture)


def test_subject_erase_keeps_a_receipt_that_verifies(service: Service, tmp_path: Path) -> None:  # noqa: F811
    assert recordseal(service, "stream", "create", "erasing").returncode == 0
    line = json.dumps(
        {"record_type": "t", "occurred_at": "2026-11-21T08:00:00Z", "subject_id": "bob/1",
         "payload": {"n": 1}}
    )  # fmt: skip
    receipts = tmp_path / "receipts.jsonl"
    done = recordseal(
        service, "ingest", "-", "--stream", "erasing", "--source", "e", "--receipts",
        str(receipts), stdin=line + "\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    receipt = tmp_path / "erasure.json"
    erased = recordseal(service, "subject", "erase", "bob/1", "--receipt", str(receipt))
    assert erased.returncode == 0, erased.stderr
    assert erased.stdout.startswith("subject erased at ")
    assert ": its key destroyed, 1 payload deleted; its records' headers stay in the chain\n" in (
        erased.stdout
    )
    keys = tmp_path / "keys.json"
    exported = recordseal(
        None, "keys", "export", "--data-dir", str(service.data_dir), "--keys-out", str(keys),
        "--trust-out", str(tmp_path / "trust.json"),
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    checked = recordseal(None, "verify-receipt", str(receipt), "--keys", str(keys))
    assert checked.returncode == 0 and checked.stdout.startswith("VALID erasure"), checked.stdout
    again = recordseal(service, "subject", "erase", "bob/1", "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout)["status"] == "already_erased"
    record_id = json.loads(receipts.read_text())["record_id"]
    listed = json.loads(recordseal(service, "records", "list", "erasing", "--json").stdout)
    assert [r["record_id"] for r in listed] == [record_id]  # the chain keeps its header

"""The online verifier's context (keyring and trust policy) is built once and rebuilt only when
keys or logs change (docs/bundle.md, "Verifying online"), here when a header-signing key
appears: ``recordseal keys rotate header`` beside the running service, which then signs
records with a key its verifier has never seen.

Counted through the verifier of the application's typed state (``builds``), never timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from litestar.testing import TestClient

from recordseal.services.verification import OnlineVerifier
from recordseal.settings import Settings
from recordseal.web.state import provide_verifier
from tests.pg_cluster import Cluster
from tests.web.test_proofs import JSON, post_records, service, settings_of


def _verifier(client: TestClient) -> OnlineVerifier:  # type: ignore[type-arg]
    return provide_verifier(client.app.state)


def _disclosure(client: TestClient, headers: dict[str, str], record_id: str) -> bytes:  # type: ignore[type-arg]
    answer = client.post(
        f"/v1/records/{record_id}/disclosure?wait=20", headers=headers, json={"fields": ["o:/a"]}
    )
    assert answer.status_code == 200, answer.text
    assert json.loads(answer.content)["seal"] is not None
    return answer.content


def _signature_check(client: TestClient, bundle: bytes) -> str:  # type: ignore[type-arg]
    """The status of check 3 (the header's signature by a key of the directory)."""
    result = client.post("/v1/verify", content=bundle, headers=JSON).json()
    return str(result["checks"][2]["status"])


def test_a_new_header_key_rebuilds_the_verifier_once(tmp_path: Path, postgres: Cluster) -> None:
    database = Settings(database_url=postgres.url())
    first = tmp_path / "first"
    with service(settings_of(first, database)) as (one, headers):
        (record,) = post_records(one, headers, [{"a": 1}])
        own = _disclosure(one, headers, record)
        for _ in range(4):
            assert _signature_check(one, own) == "passed"
        verifier = _verifier(one)
        assert verifier.builds == 1  # built once, for every bundle of known keys

        # `recordseal keys rotate header`, run beside the service: it signs with the new key
        # within seconds (docs/operations.md, "Keys").
        rotated = subprocess.run(
            [sys.executable, "-m", "recordseal.cli", "keys", "rotate", "header", "--data-dir",
             str(first), "--database-url", str(database.database_url), "--json"],
            capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        new = json.loads(rotated.stdout)["new"]["key_id"]
        deadline = time.monotonic() + 10
        while True:
            (other,) = post_records(one, headers, [{"a": 2}])
            foreign = _disclosure(one, headers, other)
            if json.loads(foreign)["header"]["key_id"] == new:
                break
            assert time.monotonic() < deadline, "the service never signed with the new key"
            time.sleep(0.2)

        # The first host learns the new key from its store: one rebuild (the store is read
        # again at most once a second while a bundle names a key it does not know).
        deadline = time.monotonic() + 10
        while _signature_check(one, foreign) != "passed":
            assert time.monotonic() < deadline, "the new header key was never picked up"
            time.sleep(0.2)
        assert verifier.builds == 2
        for bundle in (own, foreign, own, foreign):
            assert _signature_check(one, bundle) == "passed"
        assert verifier.builds == 2  # nothing changed since: no rebuild

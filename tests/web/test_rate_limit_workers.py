"""The rate limits hold for a ``serve`` as a whole: its two workers share the counters."""

from __future__ import annotations

import httpx

from tests.servers import create_token, free_port, kill_service, start_service

ENVELOPE = (
    b'{"stream":"orders","record_type":"t","occurred_at":"2026-01-01T00:00:00Z",'
    b'"subject_id":"s","payload":{"amount":1}}'
)


def test_failed_tokens_count_across_workers(tmp_path) -> None:
    port = free_port()
    env = {"RECORDSEAL_RATE_LIMIT_FAILED_TOKENS": "4/3600"}
    server = start_service(tmp_path, port, workers=2, env=env)
    try:
        token = create_token(tmp_path, "acme")
        base = f"http://127.0.0.1:{port}"
        good = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        assert httpx.post(f"{base}/v1/streams", content=b'{"name":"orders"}', headers=good)
        statuses = []
        for _ in range(12):  # a new connection each time: the workers take turns
            answer = httpx.post(
                f"{base}/v1/records",
                content=ENVELOPE,
                headers={**good, "Authorization": "Bearer x"},
            )
            statuses.append(answer.status_code)
        assert statuses == [401] * 4 + [429] * 8
        assert int(answer.headers["retry-after"]) > 0
        # Ingest with a valid token from the same address goes on.
        seqs = [
            httpx.post(f"{base}/v1/records", content=ENVELOPE, headers=good).json()["seq"]
            for _ in range(4)
        ]
        assert seqs == [1, 2, 3, 4]
    finally:
        kill_service(server)
    assert (tmp_path / "ratelimit.sqlite3").exists()

"""The ingest routes answer and store what the implementation before the native read did
(tests/vectors/ingest_answers.json, written by it: tests/vectors/generate_ingest_answers.py),
on both backends: every status, media type and problem byte for byte, every record's members
and signed header (what chance decides named in order), and the store's rows."""

from __future__ import annotations

import json
from pathlib import Path

from recordseal.settings import Settings
from tests.ingest_answers import Request, answers_of

VECTORS = Path(__file__).parents[1] / "vectors" / "ingest_answers.json"


def test_the_ingest_routes_answer_as_recorded(store_settings: Settings) -> None:
    recorded = json.loads(VECTORS.read_text())
    requests = [Request.of(item) for item in recorded["requests"]]
    got = answers_of(store_settings.data_dir, requests, store_settings.database_url)
    for number, (answer, expected) in enumerate(
        zip(got["answers"], recorded["answers"], strict=True)
    ):
        assert answer == expected, f"request {number}: {recorded['requests'][number]}"[:2000]
    assert got["stored"] == recorded["stored"]

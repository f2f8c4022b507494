"""Record ids and the envelope's control-character rule (reference and native read), against
independent oracles."""

from __future__ import annotations

import json
import time
import unicodedata
import uuid

from recordseal._native import read_request
from recordseal.clock import new_record_id
from recordseal.services.reading import label_refusal


def _has_control_character(text: str) -> bool:
    return label_refusal(text, "record_type", 128) is not None


def test_record_ids_are_uuidv7_time_ordered_and_unique():
    before = time.time_ns() // 1_000_000
    ids = [new_record_id() for _ in range(20_000)]
    after = time.time_ns() // 1_000_000
    assert len(set(ids)) == len(ids)
    for text in ids[:2000]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text  # canonical lowercase 8-4-4-4-12
        assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
        assert before <= parsed.int >> 80 <= after
    millis = [uuid.UUID(text).int >> 80 for text in ids]
    assert millis == sorted(millis)


def test_control_characters_are_exactly_unicode_cc():
    for code in range(0x110000):
        character = chr(code)
        assert _has_control_character(f"a{character}b") == (unicodedata.category(character) == "Cc")


def test_the_native_read_refuses_exactly_unicode_cc_in_a_label():
    for code in [*range(0x3000), *range(0xFFF0, 0x10010), 0x10FFFF]:
        character = chr(code)
        if unicodedata.category(character) == "Cs":
            continue
        envelope = {"stream": "s", "record_type": f"a{character}b",
                    "occurred_at": "2026-01-01T00:00:00Z", "subject_id": "s",
                    "payload": {"a": 1}}  # fmt: skip
        (read,) = read_request(json.dumps(envelope).encode(), None, False)
        refused = read.refusal is not None and read.refusal.code == "record_type_invalid"
        assert refused == (unicodedata.category(character) == "Cc"), hex(code)

"""Record ids and the envelope's control-character rule, against independent oracles."""

from __future__ import annotations

import time
import unicodedata
import uuid

from recordseal.clock import new_record_id
from recordseal.services.records import _has_control_character


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

"""Fixtures: one real world (stream, log, witness) per session, and helpers to tamper."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from recordseal.verify import (
    TimeBracket,
    VerificationResult,
)
from recordseal.verify.encoding import parse_instant

from .factory import World

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="session")
def world() -> World:
    return World()


def tampered(bundle: bytes, edit: Edit) -> bytes:
    """The bundle after ``edit`` changed its JSON document in place."""
    document = json.loads(bundle)
    edit(document)
    return json.dumps(document).encode()


def statuses(result: VerificationResult, status: str) -> set[int]:
    """The numbers of the checks with ``status``."""
    return {check.number for check in result.checks if check.status == status}


def in_order(bracket: TimeBracket) -> bool:
    """``not_before <= not_after`` as instants, when both are set (docs/bundle.md check 7)."""
    if bracket.not_before is None or bracket.not_after is None:
        return True
    before, after = parse_instant(bracket.not_before), parse_instant(bracket.not_after)
    return before is not None and after is not None and before <= after

"""The one exception class of the transparency-log package.

Every parse and verification failure in ``recordseal.tlog`` (notes, checkpoints,
cosignatures, witness requests, time-stamp responses) is a :class:`TlogError`, so callers
catch one class and branch on its stable ``code``.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Evidence values are short, printable facts: sizes, key names, hashes in hex or base64.
Evidence = Mapping[str, str | int]


class TlogError(ValueError):
    """A refused input: ``code`` names the rule, ``evidence`` what was seen.

    ``evidence`` holds what a person needs to act (expected and found sizes, the key name
    and key ID, the offending line number), never secret material.
    """

    code: str
    evidence: dict[str, str | int]

    def __init__(self, code: str, message: str, evidence: Evidence | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.evidence = dict(evidence or {})

    def __repr__(self) -> str:
        return f"TlogError(code={self.code!r}, message={str(self)!r}, evidence={self.evidence!r})"

    def __reduce__(self) -> tuple[type[TlogError], tuple[str, str, dict[str, str | int]]]:
        return (TlogError, (self.code, str(self), self.evidence))

"""Committed paths, ``<vector>:<pointer>`` (docs/spec.md section 2).

The pointer is an RFC 6901 JSON Pointer; the vector has one character per step, ``o`` for an
object member and ``a`` for an array element, because a pointer alone cannot tell an array
index from a numeric member name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: One step from a container to a value: a member name or an array index.
Step = str | int


def escape_token(name: str) -> str:
    """RFC 6901 section 3: ``~`` is written ``~0`` and ``/`` is written ``~1``."""
    # "~" first, or the "~" of every "~1" would be escaped again.
    return name.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True, slots=True)
class Path:
    """A committed path under construction, and the declaration pattern that covers it."""

    vector: str = ""
    pointer: str = ""
    #: The pointer with every array index written ``*``: the only pattern matching this path.
    pattern_pointer: str = ""

    def member(self, name: str) -> Path:
        token = "/" + escape_token(name)
        return Path(self.vector + "o", self.pointer + token, self.pattern_pointer + token)

    def element(self, index: int) -> Path:
        return Path(self.vector + "a", f"{self.pointer}/{index}", self.pattern_pointer + "/*")

    @property
    def text(self) -> str:
        return f"{self.vector}:{self.pointer}"

    @property
    def pattern(self) -> str:
        return f"{self.vector}:{self.pattern_pointer}"


def committed_path(steps: Iterable[Step]) -> str:
    """The committed path of the value reached from the document root by ``steps``."""
    path = Path()
    for step in steps:
        path = path.member(step) if isinstance(step, str) else path.element(step)
    return path.text

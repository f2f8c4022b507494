"""Hints for paths that name no field: someone who writes ``note`` meant ``o:/note``.

Fields are named by committed paths (docs/spec.md, section 2): one letter per step, ``o`` for
an object member and ``a`` for an array element, a colon, then the JSON Pointer. A refusal of a
path says which committed path was meant when one is close, and how the syntax goes when the
path was not written in it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

#: How committed paths are written, for refusals of paths that are not.
SYNTAX = (
    "a field is named by its committed path: one letter per step (o an object member, a an"
    " array element), a colon, then the JSON Pointer, as in o:/amount or oao:/items/0/sku"
)
_COMMITTED = re.compile(r"([oa]*):(.*)", re.DOTALL)
#: How many fields of a container a hint lists.
_LISTED = 3


def unknown_field(path: str, known: Sequence[str]) -> str:
    """The detail of ``unknown_field`` for ``path``, given the record's committed paths."""
    detail = "the record has no field at this path"
    hint = _closest(path, known)
    if hint:
        detail += f"; {hint}"
    if not _well_formed(path):
        detail += f" ({SYNTAX})"
    return detail


def declaration(pattern: str | None) -> str | None:
    """What a declaration ``pattern`` written without its letters meant (``amount`` ->
    ``o:/amount``, ``items/*/sku`` -> ``oao:/items/*/sku``), or None."""
    if pattern is None or ":" in pattern or not pattern.strip("/"):
        return None
    steps = pattern.lstrip("/").split("/")
    letters = "".join("a" if step == "*" else "o" for step in steps)
    return f"did you mean {letters}:/{'/'.join(steps)}? ({SYNTAX})"


def _well_formed(path: str) -> bool:
    """True when ``path`` has a letter for each step of its pointer."""
    match = _COMMITTED.fullmatch(path)
    if match is None or not match.group(2).startswith("/"):
        return False
    return len(match.group(1)) == match.group(2).count("/")


def _pointer(path: str) -> str:
    """The JSON Pointer ``path`` most likely means: its own after a prefix of letters, else
    the path read as one (``note`` and ``/note`` are ``/note``)."""
    match = _COMMITTED.fullmatch(path)
    pointer = match.group(2) if match else path
    return pointer if pointer.startswith("/") else "/" + pointer


def _closest(path: str, known: Sequence[str]) -> str | None:
    pointer = _pointer(path)
    by_pointer = {_pointer(candidate): candidate for candidate in known}
    exact = by_pointer.get(pointer)
    if exact is not None and exact != path:
        return f"did you mean {exact}?"
    inside = sorted(c for p, c in by_pointer.items() if p.startswith(pointer + "/"))
    if inside:
        listed = ", ".join(inside[:_LISTED]) + (", …" if len(inside) > _LISTED else "")
        noun = "field" if len(inside) == 1 else "fields"
        return f"it holds {len(inside)} {noun}, named by their own paths: {listed}"
    close = difflib.get_close_matches(path, known, n=1, cutoff=0.8)
    return f"did you mean {close[0]}?" if close else None

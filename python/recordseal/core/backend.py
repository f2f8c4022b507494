"""Which core runs: the native extension (``rust-core/``, :mod:`recordseal._native`) when it
is built, else the pure-Python reference (:mod:`recordseal.core.reference`).

The one place that decides. Every module with a native fast path asks :data:`extension` here and
never tries the import itself (``tests/layers/test_one_switch.py``). Only an absent extension
falls back: a broken or stale build raises where it is imported, loudly.
"""

from __future__ import annotations

from types import ModuleType
from typing import Final, Literal


def _load() -> ModuleType | None:
    try:
        import recordseal._native as built
    except ModuleNotFoundError as missing:
        if missing.name != "recordseal._native":
            raise
        return None
    return built


#: :mod:`recordseal._native` when the extension is built, else None. Modules that use a part
#: of it under its types import that part from ``recordseal._native`` when this is not None.
extension: Final[ModuleType | None] = _load()

#: ``"native"`` or ``"reference"``: the core in use (``recordseal.core.BACKEND``).
BACKEND: Final[Literal["native", "reference"]] = "reference" if extension is None else "native"

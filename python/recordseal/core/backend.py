"""Which core runs: the native extension (``rust-core/``, :mod:`recordseal._native`) or the
pure-Python reference (:mod:`recordseal.core.reference`).

The one place that decides. Every module with a native fast path asks :data:`extension` here and
never tries the import itself (``tests/layers/test_one_switch.py``). ``RECORDSEAL_CORE``
(docs/configuration.md) chooses on purpose: ``reference`` runs the reference although the
extension is built (to compare the two, ``recordseal bench``), ``native`` refuses to run
without the extension. Unset, the extension runs when it is built, else the reference: only an
absent extension falls back, a broken or stale build raises where it is imported, loudly.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Final, Literal

#: The variable that chooses the core; read once, when this module is imported.
VARIABLE: Final = "RECORDSEAL_CORE"


class CoreUnavailable(SystemExit):
    """``RECORDSEAL_CORE`` asks for what cannot run: a core that does not exist, or the native
    one where the extension is not built. Nothing the process would do is what was asked, so
    it ends where the core is first imported (a command, a worker, a script), with one line on
    standard error and exit status 1, as a refused setting does, without a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(f"recordseal: {message}")


def _load() -> ModuleType | None:
    try:
        import recordseal._native as built
    except ModuleNotFoundError as missing:
        if missing.name != "recordseal._native":
            raise
        return None
    return built


def _requested() -> Literal["native", "reference"] | None:
    text = os.environ.get(VARIABLE, "").strip()  # empty counts as unset, as for every setting
    if not text:
        return None
    if text not in ("native", "reference"):
        raise CoreUnavailable(f"{VARIABLE} must be native or reference")
    return "native" if text == "native" else "reference"


def _choose(requested: Literal["native", "reference"] | None) -> ModuleType | None:
    if requested == "reference":
        return None
    built = _load()
    if built is None and requested == "native":
        raise CoreUnavailable(
            f"{VARIABLE}=native, but the native extension recordseal._native is not built:"
            f" build it (make build), or set {VARIABLE}=reference to run the pure-Python core"
        )
    return built


#: ``"native"`` or ``"reference"`` when ``RECORDSEAL_CORE`` chose the core, None when unset.
REQUESTED: Final = _requested()

#: :mod:`recordseal._native` when it runs, else None. Modules that use a part of it under its
#: types import that part from ``recordseal._native`` when this is not None.
extension: Final[ModuleType | None] = _choose(REQUESTED)

#: ``"native"`` or ``"reference"``: the core in use (``recordseal.core.BACKEND``).
BACKEND: Final[Literal["native", "reference"]] = "reference" if extension is None else "native"

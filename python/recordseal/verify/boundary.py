"""The verifier's outer boundary: its public entry points never raise on their input.

``verify_bundle`` (and :class:`~.verifier.Verifier`'s ``verify`` and ``verify_decoded``) and
``verify_erasure_receipt`` answer every input with a result: what is wrong with a bundle is a
check's finding (``checks.guarded`` turns a :class:`~.errors.Refused` into a failed check). An
exception that still escapes is a fault of the verifier itself, not of its input; here, and
only here, it is caught, so that a service handler or a run over a folder of bundles gets a
``FAILED`` answer naming it ("internal error: <class>: <message>") instead of a crash.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def internal_error(error: Exception) -> str:
    return f"internal error: {type(error).__name__}: {error}"


def outermost(answer: Callable[[str], R]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A public entry point that answers a fault of the verifier as ``answer(reason)``."""

    def wrap(entry: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(entry)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return entry(*args, **kwargs)
            except Exception as error:  # the outermost boundary: a fault of the verifier
                return answer(internal_error(error))

        return run

    return wrap

"""The commitment core: canonical JSON, field commitments and RFC 6962 trees (docs/spec.md).

The native core (``rust-core/``) is used when it is built; otherwise the pure-Python reference,
which gives the same results and refusals (code, field and message), more slowly. ``BACKEND``
says which one is in use; :mod:`.backend` decides it, for every module with a native fast path.
The API's names are listed once, by the reference (``reference.__all__``).
Every refusal is a :class:`CommitError`.
"""

from typing import TYPE_CHECKING

from . import reference
from .backend import BACKEND, extension
from .errors import CommitError

if TYPE_CHECKING:
    # Typed as the native API (recordseal/_native.pyi); the reference has the same signatures.
    # The stub also types the extension's other parts, which this module does not export:
    # tests/core/test_api.py checks that no module imports them from here.
    from recordseal._native import *  # noqa: F403
elif extension is not None:
    from .native import *  # noqa: F403
else:
    from .reference import *  # noqa: F403

__all__ = ["BACKEND", "CommitError", *reference.__all__]

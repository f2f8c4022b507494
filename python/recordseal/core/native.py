"""The native core, :mod:`recordseal._native` (``rust-core/``), under the public names: the
names of the API, listed once, by the reference (``reference.__all__``).

Importing this module raises :class:`ModuleNotFoundError` when the extension is not built.
"""

from recordseal._native import *  # noqa: F403

from .reference import __all__  # noqa: F401

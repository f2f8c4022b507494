"""The one exception class of the verifier's inputs.

Every parse failure of a bundle, a key directory or a trust store is a :class:`BundleError`
(never a raw ``ValueError`` from below), so a caller catches one class. ``verify_bundle``
itself never raises on bad input: it reports the error in check 1 of a ``FAILED`` result.
"""

from __future__ import annotations


class BundleError(ValueError):
    """A refused verifier input: ``what`` names the document, the message says where and why."""

    what: str

    def __init__(self, what: str, message: str) -> None:
        super().__init__(f"{what}: {message}")
        self.what = what

    def __reduce__(self) -> tuple[type[BundleError], tuple[str, str]]:
        return (BundleError, (self.what, str(self).removeprefix(f"{self.what}: ")))

"""The exceptions of ``recordseal.verify``: one root, :class:`VerificationError`.

Everything the package raises is a :class:`VerificationError` (a ``ValueError``): a refused
input document (:class:`BundleError`), a disclosure that cannot be built
(``build.DisclosureError``), a transparency log file that does not replay
(``transparency.TransparencyLogError``, with the expected and computed values when a hash
disagrees). ``verify_bundle`` itself never raises on bad input: it reports the error in
check 1 of a ``FAILED`` result.
"""

from __future__ import annotations


class VerificationError(ValueError):
    """The root of every error ``recordseal.verify`` raises."""


class BundleError(VerificationError):
    """A refused verifier input: ``what`` names the document, the message says where and why;
    ``found`` names the document it is instead, when it is another of the verifier's (a trust
    store given as the key directory)."""

    what: str
    found: str | None

    def __init__(self, what: str, message: str, found: str | None = None) -> None:
        super().__init__(f"{what}: {message}")
        self.what = what
        self.found = found

    def __reduce__(self) -> tuple[type[BundleError], tuple[str, str, str | None]]:
        return (BundleError, (self.what, str(self).removeprefix(f"{self.what}: "), self.found))

"""The exceptions of ``recordseal.verify``: one root, :class:`VerificationError`, and the one
place the errors of the layers below become the verifier's.

Everything the package raises is a :class:`VerificationError` (a ``ValueError``): a refused
input document (:class:`BundleError`), a transparency log file that does not replay
(``transparency.TransparencyLogError``, with the expected and computed values when a hash
disagrees), or what the layers below refused, said as the verifier says it
(:class:`Refused`). ``verify_bundle`` itself never raises on bad input: it reports the error
in the check it concerns (check 1 of a ``FAILED`` result for a malformed bundle).

The verifier stands on two layers, each with one exception root: the commitment core
(:class:`~recordseal.core.CommitError`: a proof that does not verify, a value refused as its
kind) and the transparency-log formats (:class:`~recordseal.tlog.TlogError`: a note,
checkpoint, cosignature or time-stamp token refused). :func:`refused` is the only place in the
package that catches them: it turns one into a :class:`Refused` carrying the lower error's
``code`` and ``evidence``, and the words of the rule it broke. A check then either reports the
refusal in its own words (a problem among several) or lets it end the check:
``checks.guarded`` turns a :class:`Refused` into the check's ``failed`` result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

from recordseal.core import CommitError
from recordseal.tlog import TlogError

T = TypeVar("T")

#: What the layers below raise: the core's root and the formats' root.
Below = CommitError | TlogError
BELOW = (CommitError, TlogError)


class VerificationError(ValueError):
    """The root of every error ``recordseal.verify`` raises."""


class BundleError(VerificationError):
    """A refused verifier input: ``what`` names the document, the message says where and why;
    ``found`` names the document it is instead, when it is another of the verifier's (a trust
    store given as the key directory); ``code`` the rule of the layer below that refused a
    part of it (a vkey, the checkpoint, the JSON), when one did."""

    what: str
    found: str | None
    code: str | None

    def __init__(
        self, what: str, message: str, found: str | None = None, *, code: str | None = None
    ) -> None:
        super().__init__(f"{what}: {message}")
        self.what = what
        self.found = found
        self.code = code

    def __reduce__(self) -> tuple[type[BundleError], tuple[str, str, str | None]]:
        return (BundleError, (self.what, str(self).removeprefix(f"{self.what}: "), self.found))


class Refused(VerificationError):
    """What a layer below refused, in the verifier's words: the message is the rule that
    failed; ``code`` and ``evidence`` are the lower error's (``CommitError.code`` and its
    ``field``, ``TlogError.code`` and its ``evidence``), and ``cause`` is the error itself."""

    code: str
    evidence: dict[str, str | int]
    cause: Below

    def __init__(self, message: str, cause: Below) -> None:
        super().__init__(message)
        self.cause = cause
        self.code = cause.code
        self.evidence = dict(_evidence_of(cause))

    def __reduce__(self) -> tuple[type[Refused], tuple[str, Below]]:
        return (Refused, (str(self), self.cause))


def _evidence_of(error: Below) -> Mapping[str, str | int]:
    if isinstance(error, TlogError):
        return error.evidence
    return {} if error.field is None else {"field": error.field}


#: The words of a refusal: a template of the rule, whose ``{code}`` and ``{error}`` are the
#: lower error's code and message and whose other fields are given by name (a template is a
#: constant: what is put in it is never read as a template); or a function of the error.
Words = str | Callable[[Below], str]


def _said(words: Words, error: Below, values: Mapping[str, object]) -> str:
    if isinstance(words, str):
        return words.format(**values, code=error.code, error=error)
    return words(error)


@contextmanager
def refused(words: Words, /, *, document: str | None = None, **values: object) -> Iterator[None]:
    """Run the block; a :class:`CommitError` or :class:`TlogError` it raises leaves it as a
    :class:`Refused` saying ``words`` (with ``document``: as the :class:`BundleError` of that
    document). The package's one translation of the errors of the layers below."""
    try:
        yield
    except BELOW as error:
        if document is not None:
            raise BundleError(document, _said(words, error, values), code=error.code) from error
        raise Refused(_said(words, error, values), error) from error


def attempt(compute: Callable[[], T], words: Words, /, **values: object) -> T | Refused:
    """``compute()``, or the :class:`Refused` it ends in (:func:`refused`): for a check that
    reports each refused part among several and goes on."""
    try:
        with refused(words, document=None, **values):
            return compute()
    except Refused as refusal:
        return refusal

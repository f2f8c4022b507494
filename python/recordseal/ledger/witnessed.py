"""Which checkpoint a bundle proves against: the newest one its log's witnesses vouch for.

A checkpoint is *witnessed* when at least ``quorum`` of the configured witnesses and
time-stamping authorities (by name) have a stored receipt on it: a cosignature or an RFC 3161
time-stamp. Bundles prove against the newest witnessed checkpoint that includes the record,
or, when none does, against the newest checkpoint (docs/bundle.md, "Which checkpoint").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from recordseal.storage import rows
from recordseal.storage.logs import LogStore
from recordseal.storage.rows import CheckpointRow


@dataclass(frozen=True, slots=True)
class WitnessPolicy:
    """The configured vouchers (witness and authority names) and the quorum among them."""

    names: tuple[str, ...] = ()
    quorum: int = 1
    #: The vouchers of one kind of log only (the tenant logs', or the aggregate's): the
    #: quorum, the deployment's, may exceed their number (then nothing of that kind alone
    #: is witnessed).
    part: bool = False

    def __post_init__(self) -> None:
        if len(set(self.names)) != len(self.names):
            raise ValueError("two witnesses or time-stamping authorities share a name")
        if self.quorum < 1 or (self.names and self.quorum > len(self.names) and not self.part):
            raise ValueError(
                f"the witness quorum {self.quorum} is not between 1 and the {len(self.names)}"
                " configured witnesses and time-stamping authorities"
            )
        if len(self.names) >= rows.RECEIPT_PAGE:
            raise ValueError(f"at most {rows.RECEIPT_PAGE - 1} witnesses and authorities")

    @property
    def configured(self) -> bool:
        return bool(self.names)

    def met_by(self, vouched: Iterable[str]) -> bool:
        """Whether these names make a quorum (never, when nobody is configured)."""
        return self.configured and len(set(vouched) & set(self.names)) >= self.quorum


async def newest_witnessed(
    store: LogStore, origin: str, above: int, policy: WitnessPolicy
) -> CheckpointRow | None:
    """The newest checkpoint of ``origin`` larger than ``above`` (so holding leaf ``above``)
    that carries the quorum, or None.

    Reads receipts from the newest down, a page at a time: the first page usually holds the
    answer, whatever the number of older checkpoints.
    """
    if not policy.configured:
        return None
    below: int | None = None
    while True:
        cosigned, stamped = await store.receipts_below(origin, above, below, policy.names)
        # A full page may stop inside the receipts of its smallest size: sizes above it are
        # complete in both pages, that size and below are read again with the next pages.
        floor = max(
            (page[-1][0] for page in (cosigned, stamped) if len(page) >= rows.RECEIPT_PAGE),
            default=above,
        )
        vouched: dict[int, set[str]] = {}
        for size, name in (*cosigned, *stamped):
            if size > floor:
                vouched.setdefault(size, set()).add(name)
        for size in sorted(vouched, reverse=True):
            if len(vouched[size]) >= policy.quorum:
                return await store.checkpoint_at(origin, size)
        if floor == above:  # both pages were short: every receipt above ``above`` was read
            return None
        below = floor + 1


async def with_cosignatures(store: LogStore, origin: str, size: int, note: str) -> str:
    """The signed checkpoint ``note`` (of ``origin`` at ``size``) with every stored witness
    cosignature line on it appended: what bundles, transparency files and tiles publish."""
    lines = await store.cosignatures(origin, size)
    return note + "".join(line if line.endswith("\n") else line + "\n" for line in lines)

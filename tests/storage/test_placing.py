"""The placement rules of ``storage.placing`` on their own (the store tests run them through
both backends): what each rule refuses, in which order, and what the builder is given."""

from __future__ import annotations

from recordseal.storage.placing import new_subjects, place
from recordseal.storage.requests import Append, Call, IdempotencyClaim, NewRecord, SubjectClaim


class Rows:
    """What a backend would have read under its locks."""

    def __init__(self, keys=None, subjects=None, heads=None) -> None:  # type: ignore[no-untyped-def]
        self.keys = keys or {}
        self.subjects = subjects or {}
        self.heads = heads or {}

    def stored_key(self, tenant, key):  # type: ignore[no-untyped-def]
        return self.keys.get((tenant, key))

    def stored_subject(self, tenant, subject):  # type: ignore[no-untyped-def]
        return self.subjects.get((tenant, subject.index))

    def head(self, stream_id):  # type: ignore[no-untyped-def]
        return self.heads[stream_id]


built: list[tuple[list[str], list[int], list[tuple[int, bytes]]]] = []


def build(appends, slots, heads):  # type: ignore[no-untyped-def]
    """Records whose chain leaf is the record id, padded; remembers what it was given."""
    built.append(([a.record_id for a in appends], list(slots), list(heads)))
    records = []
    for append, slot in zip(appends, slots, strict=True):
        seq, _ = heads[slot]
        leaf = append.record_id.encode().ljust(32, b".")
        heads[slot] = (seq + 1, leaf)
        records.append(NewRecord(append.record_id, seq, b"{}", b"sig", leaf, b"sealed"))
    return records


LIVE = SubjectClaim(b"a", "ref-a", None)


def test_each_rule_refuses_alone_and_the_rest_are_built_in_one_call_in_order() -> None:
    built.clear()
    rows = Rows(
        keys={("t", "old"): (b"h", "r-old"), ("t", "reused"): (b"other", "r-x")},
        subjects={("t", b"a"): ("ref-a", True), ("t", b"e"): ("ref-e", False)},
        heads={1: (5, b"p1".ljust(32, b".")), 2: (9, b"p2".ljust(32, b"."))},
    )
    appends = [
        Append(1, LIVE, "r1", None),
        Append(1, LIVE, "r2", None, IdempotencyClaim("old", b"h")),  # replayed
        Append(2, LIVE, "r3", None, IdempotencyClaim("reused", b"h")),  # reused
        Append(2, SubjectClaim(b"e", "ref-e", None), "r4", None),  # erased
        Append(2, LIVE, "r5", None, IdempotencyClaim("new", b"h")),
        Append(1, LIVE, "r6", None, IdempotencyClaim("new", b"h")),  # placed above
        Append(1, LIVE, "r7", None),
    ]
    placed = place([Call("t", appends)], rows, build)
    kinds = [type(o).__name__ for o in placed.outcomes]
    assert kinds == [
        "NewRecord", "Replayed", "KeyReused", "SubjectErased", "NewRecord", "Replayed", "NewRecord"
    ]  # fmt: skip
    assert placed.outcomes[1].record_id == "r-old"  # type: ignore[union-attr]
    assert placed.outcomes[5].record_id == "r5"  # type: ignore[union-attr]
    # One build call for the three placed, each on its stream's head.
    assert len(built) == 1
    ids, slots, heads = built[0]
    assert ids == ["r1", "r5", "r7"] and slots == [0, 1, 0]
    assert heads == [rows.heads[1], rows.heads[2]]  # read once per stream, in order
    assert [o.seq for o in placed.outcomes if isinstance(o, NewRecord)] == [5, 9, 6]
    assert placed.heads == {1: (7, b"r7".ljust(32, b".")), 2: (10, b"r5".ljust(32, b"."))}
    assert placed.keys == {("t", "new"): (b"h", "r5")}


def test_a_raced_subject_defers_the_rest_of_its_stream_in_that_call_only() -> None:
    built.clear()
    rows = Rows(
        subjects={("t", b"a"): ("ref-a", True), ("t", b"n"): ("someone-else", True)},
        heads={1: (1, bytes(32)), 2: (1, bytes(32))},
    )
    raced = SubjectClaim(b"n", "mine", b"wrapped")
    calls = [
        Call(
            "t",
            [
                Append(1, raced, "r1", None),
                Append(1, LIVE, "r2", None),  # same call and stream: deferred
                Append(2, LIVE, "r3", None),  # another stream: placed
            ],
        ),
        Call("t", [Append(1, LIVE, "r4", None)]),  # another call: placed
    ]
    kinds = [type(o).__name__ for o in place(calls, rows, build).outcomes]
    assert kinds == ["SubjectRace", "Deferred", "NewRecord", "NewRecord"]
    assert built[0][0] == ["r3", "r4"]


def test_nothing_placed_builds_nothing() -> None:
    built.clear()
    rows = Rows(keys={("t", "k"): (b"h", "r0")})
    calls = [Call("t", [Append(1, LIVE, "r1", None, IdempotencyClaim("k", b"h"))])]
    assert [type(o).__name__ for o in place(calls, rows, build).outcomes] == ["Replayed"]
    assert built == []


def test_new_subjects_first_claim_wins_sorted_and_none_for_a_refused_key() -> None:
    first, second = SubjectClaim(b"z", "ref-1", b"w1"), SubjectClaim(b"z", "ref-2", b"w2")
    keyed = SubjectClaim(b"k", "ref-k", b"wk")
    again = SubjectClaim(b"j", "ref-j", b"wj")
    calls = [
        Call("t", [
            Append(1, first, "r1", None),
            Append(1, second, "r2", None),  # later claim of z: a race, not created
            Append(1, keyed, "r3", None, IdempotencyClaim("stored", b"h")),
            Append(1, again, "r4", None, IdempotencyClaim("twice", b"h")),
            Append(1, SubjectClaim(b"y", "ref-y", b"wy"), "r5", None,
                   IdempotencyClaim("twice", b"h")),  # key used above: refused
        ]),
        Call("u", [Append(2, SubjectClaim(b"a", "ref-u", b"wu"), "r6", None)]),
        Call("t", [Append(1, LIVE, "r7", None)]),  # stored already: nothing to create
    ]  # fmt: skip
    stored = {("t", "stored"): (b"h", "r0")}
    assert new_subjects(calls, lambda t, k: stored.get((t, k))) == [
        ("t", b"j", "ref-j", b"wj"),
        ("t", b"z", "ref-1", b"w1"),
        ("u", b"a", "ref-u", b"wu"),
    ]

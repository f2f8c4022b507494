"""The placement rules of ``storage.placing`` on their own (the store tests run them through
both backends): what each rule refuses, in which order, and what the builder is given."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recordseal.core.backend import extension
from recordseal.storage.native_placing import native_place
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


# --- the native placement against the reference ----------------------------------------------

STREAMS = (1, 2, 3)
INDEXES = (b"a", b"b", b"c", b"d")
KEYS = ("k0", "k1", "k2", "k3")


class Known(Rows):
    """``Rows``, with what the native placement takes whole."""

    def known_keys(self):  # type: ignore[no-untyped-def]
        return self.keys

    def known_subjects(self):  # type: ignore[no-untyped-def]
        return self.subjects


@st.composite
def transactions(draw: st.DrawFn) -> tuple[Known, list[Call], dict[int, bool]]:
    """What a backend read under its locks and the calls of one transaction: subjects stored
    live, erased, under another handle or not at all; keys stored with the same request hash
    or another; streams behind what was signed or not; appends on any of them, keyed or not."""
    tenants = ("t", "u")
    subjects = {}
    for tenant in tenants:
        for index in INDEXES:
            state = draw(st.sampled_from(["live", "erased", "other", "absent"]))
            if state != "absent":
                handle = "someone-else" if state == "other" else f"ref-{index.decode()}"
                subjects[(tenant, index)] = (handle, state != "erased")
    keys = {
        (tenant, key): (draw(st.sampled_from([b"h", b"x"])), f"stored-{tenant}-{key}")
        for tenant in tenants
        for key in draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=3))
    }
    heads = {stream: (stream * 10, bytes([stream]) * 32) for stream in STREAMS}
    behind = {stream: draw(st.booleans()) for stream in STREAMS}
    calls, number = [], 0
    for _ in range(draw(st.integers(1, 3))):
        appends = []
        for _ in range(draw(st.integers(0, 6))):
            index = draw(st.sampled_from(INDEXES))
            claim = draw(
                st.none() | st.builds(IdempotencyClaim, st.sampled_from(KEYS),
                                      st.sampled_from([b"h", b"x"]))
            )  # fmt: skip
            stream = draw(st.sampled_from(STREAMS))
            check = None if draw(st.integers(0, 4)) == 0 else stream
            number += 1
            appends.append(
                Append(stream, SubjectClaim(index, f"ref-{index.decode()}", None),
                       f"r{number}", None, claim, check)  # type: ignore[arg-type]
            )  # fmt: skip
        calls.append(Call(draw(st.sampled_from(tenants)), appends))
    return Known(keys, subjects, heads), calls, behind


def run(placer, rows: Known, calls: list[Call], behind: dict[int, bool]):  # type: ignore[no-untyped-def]
    """One placement: its outcome, what the builder was given and every check asked."""
    given: list[object] = []
    asked: list[tuple[int, int, bytes]] = []

    def recording_build(appends, slots, heads):  # type: ignore[no-untyped-def]
        given.append(([a.record_id for a in appends], list(slots), list(heads)))
        built.clear()
        return build(appends, slots, heads)

    def with_checks(call: Call) -> Call:
        def check_of(stream: int):  # type: ignore[no-untyped-def]
            def check(next_seq: int, prev: bytes) -> bool:
                asked.append((stream, next_seq, prev))
                return behind[stream]

            return check

        return Call(call.tenant, [
            a._replace(behind=None if a.behind is None else check_of(a.stream_id))
            for a in call.appends
        ])  # fmt: skip

    placed = placer([with_checks(call) for call in calls], rows, recording_build)
    return placed, given, asked


@settings(max_examples=400, deadline=None)
@given(transactions())
def test_the_native_placement_decides_as_the_reference(
    transaction: tuple[Known, list[Call], dict[int, bool]],
) -> None:
    """Outcomes, refusals, new heads, placed keys, the builder's input and the rule-4 checks
    (which fence a stream as a side effect: asked exactly where the reference asks them)."""
    assert extension is not None, "the tests run with the native core built (make test builds it)"
    rows, calls, behind = transaction
    reference = run(place, rows, calls, behind)
    native = run(native_place, rows, calls, behind)
    assert native == reference

"""Manifest reloads (spec panel 6.5) and fleet audit events (spec panel 6.1)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import msgspec
import pytest

from recordseal.audit import AuditEvent, AuditJournal, FleetAudit, FleetScope
from recordseal.fleet.manifest import FleetBinding, load_manifest, parse_manifest
from recordseal.fleet.reload import FleetRegistry, classify
from recordseal.logs import Formatter, fields_of
from recordseal.storage.panel import AuditEntry, ManifestStep
from recordseal.storage.sqlite import SQLiteStore
from tests.backends import opened

BASE = """\
version = 1
[[fleet]]
id = "keep"
tenant_id = "acme"
[[fleet]]
id = "tune"
tenant_id = "acme"
preset = "balanced"
[[fleet]]
id = "drop"
[[fleet]]
id = "move"
tenant_id = "acme"
"""


def kinds(old: str, new: str, bound: dict[str, str | None] | None = None) -> dict[str, str]:
    changes = classify(parse_manifest(old), parse_manifest(new), bound)
    return {change.fleet: change.kind for change in changes}


def test_each_change_is_classified() -> None:
    new = """\
version = 1
[[fleet]]
id = "keep"
tenant_id = "acme"
[[fleet]]
id = "tune"
tenant_id = "acme"
preset = "strict"
seed_path = "/s"
[[fleet]]
id = "move"
tenant_id = "globex"
[[fleet]]
id = "fresh"
"""
    assert kinds(BASE, new) == {
        "keep": "unchanged",
        "tune": "updated",
        "move": "unsupported_change",
        "fresh": "added",
        "drop": "removed",
    }
    tune = next(c for c in classify(parse_manifest(BASE), parse_manifest(new)) if c.fleet == "tune")
    assert tune.fields == ("seed_path", "preset")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('tenant_id = "acme"', 'tenant_id = "globex"'),
        ('tenant_id = "acme"', ""),
        ("", 'tenant_id = "acme"'),
    ],
)
def test_setting_clearing_or_replacing_a_running_fleets_tenant_is_unsupported(
    before: str, after: str
) -> None:
    old = f'version = 1\n[[fleet]]\nid = "f"\n{before}\n'
    new = f'version = 1\n[[fleet]]\nid = "f"\n{after}\n'
    assert kinds(old, new) == {"f": "unsupported_change"}


def test_a_tenant_change_through_the_defaults_is_unsupported_too() -> None:
    old = 'version = 1\n[defaults]\ntenant_id = "acme"\n[[fleet]]\nid = "f"\n'
    new = 'version = 1\n[defaults]\ntenant_id = "globex"\n[[fleet]]\nid = "f"\n'
    assert kinds(old, new) == {"f": "unsupported_change"}


def test_a_fleet_added_back_under_another_tenant_is_unsupported_until_restart() -> None:
    assert kinds("version = 1\n", 'version = 1\n[[fleet]]\nid = "f"\n', {"f": "acme"}) == {
        "f": "unsupported_change"
    }
    assert kinds(
        "version = 1\n", 'version = 1\n[[fleet]]\nid = "f"\ntenant_id = "acme"\n', {"f": "acme"}
    ) == {"f": "added"}


class Recorder:
    """The audit journal of a real store (SQLite in a temporary directory), recording what
    the store kept; ``fail`` makes it fail as a broken database would."""

    def __init__(self, journal: AuditJournal) -> None:
        self.journal = journal
        self.events: list[AuditEvent] = []
        self.fail = False

    async def record_audit(
        self, entries: Sequence[AuditEntry], step: ManifestStep | None = None
    ) -> list[AuditEntry]:
        if self.fail:
            raise OSError("the audit stream cannot be written")
        kept = await self.journal.record_audit(entries, step)
        self.events += [msgspec.json.decode(entry.line, type=AuditEvent) for entry in kept]
        return kept


Body = Callable[[FleetRegistry, Path, Recorder], Awaitable[None]]


def run_on(tmp_path: Path, text: str, body: Body) -> None:
    """``body(registry, manifest path, recorder)`` with a started registry (bound) whose
    events go to a real store."""
    path = tmp_path / "fleets.toml"
    path.write_text(text)

    async def main() -> None:
        async with opened(SQLiteStore(tmp_path / "recordseal.sqlite3")) as store:
            recorder = Recorder(store.panel)
            audit = FleetAudit(recorder, clock=lambda: "2026-11-21T00:00:00.000000Z")
            registry = FleetRegistry(load_manifest(path), audit)
            await registry.bind()
            await body(registry, path, recorder)

    asyncio.run(main())


MOVED = BASE.replace('id = "move"\ntenant_id = "acme"', 'id = "move"\ntenant_id = "globex"')


def test_a_reload_with_an_unsupported_change_is_refused_as_a_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        running = registry.manifest
        path.write_text(MOVED + '[[fleet]]\nid = "fresh"\n')
        with caplog.at_level(logging.WARNING, logger="recordseal.fleet"):
            outcome = await registry.reload()
        assert not outcome.applied
        assert [c.fleet for c in outcome.refused] == ["move"]
        assert registry.manifest is running  # nothing applied, not even the added fleet
        assert any(
            "error=unsupported_change" in line and "restart" in line
            for line in map(Formatter().format, caplog.records)
        )
        refused = [e for e in recorder.events if e.event == "fleet.rebind_refused"]
        assert [(e.fleet, e.tenant, e.details) for e in refused] == [
            ("move", "acme", {"requested_tenant": "globex"})
        ]

    run_on(tmp_path, BASE, body)


def test_an_allowed_reload_is_applied_and_audited(tmp_path: Path) -> None:
    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        path.write_text(
            BASE.replace('preset = "balanced"', 'preset = "strict"') + '[[fleet]]\nid = "fresh"\n'
        )
        outcome = await registry.reload()
        assert outcome.applied and outcome.refused == []
        assert registry.manifest.fleet("tune") == FleetBinding("tune", "acme", None, "strict")
        assert registry.manifest.fleet("fresh") is not None
        events = [(e.event, e.fleet, e.tenant) for e in recorder.events if e.event != "fleet.bound"]
        assert events == [("fleet.updated", "tune", "acme"), ("fleet.added", "fresh", None)]

    run_on(tmp_path, BASE, body)


def test_a_manifest_that_no_longer_loads_keeps_the_running_one(tmp_path: Path) -> None:
    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        running = registry.manifest
        path.write_text("version = 2\n")
        outcome = await registry.reload()
        assert not outcome.applied and outcome.error and "unsupported version 2" in outcome.error
        assert registry.manifest is running

    run_on(tmp_path, BASE, body)


def test_events_of_a_fleet_with_a_tenant_carry_the_tenant_scope(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = FleetAudit(clock=lambda: "2026-11-21T00:00:00.000000Z")

    async def main() -> tuple[AuditEvent | None, AuditEvent | None]:
        scoped = await audit.emit(FleetScope("edge", "acme"), "anchor.sealed", size=3)
        legacy = await audit.emit(FleetScope("solo", None), "anchor.sealed", size=1)
        return scoped, legacy

    with caplog.at_level(logging.INFO, logger="recordseal.audit"):
        scoped, legacy = asyncio.run(main())
    assert scoped is not None and scoped.tenant == "acme"
    assert legacy is not None and legacy.tenant is None
    lines = [(r.getMessage(), fields_of(r)) for r in caplog.records if r.name == "recordseal.audit"]
    assert lines == [
        (
            "audit.anchor.sealed",
            {"fleet": "edge", "at": "2026-11-21T00:00:00.000000Z", "tenant": "acme", "size": 3},
        ),
        ("audit.anchor.sealed", {"fleet": "solo", "at": "2026-11-21T00:00:00.000000Z", "size": 1}),
    ]


def test_every_fleet_bound_at_start_is_audited_with_its_tenant(tmp_path: Path) -> None:
    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        assert [(e.event, e.fleet, e.tenant) for e in recorder.events] == [
            ("fleet.bound", "keep", "acme"),
            ("fleet.bound", "tune", "acme"),
            ("fleet.bound", "drop", None),
            ("fleet.bound", "move", "acme"),
        ]

    run_on(tmp_path, BASE, body)


def test_the_stream_keeps_each_event_as_one_json_object_and_a_key_once(tmp_path: Path) -> None:
    async def main() -> None:
        async with opened(SQLiteStore(tmp_path / "recordseal.sqlite3")) as store:
            audit = FleetAudit(store.panel, clock=lambda: "2026-11-21T00:00:00.000000Z")
            assert await audit.emit(FleetScope("edge", "acme"), "anchor.sealed", key="k", size=2)
            assert await audit.emit(FleetScope("edge", "acme"), "anchor.sealed", key="k") is None
            assert await audit.emit(FleetScope("solo", None), "anchor.sealed", size=1)
            stored = await store.panel.audit_entries()
        lines = [json.loads(entry.line) for _, entry in stored]
        assert [(line["fleet"], line.get("tenant")) for line in lines] == [
            ("edge", "acme"),
            ("solo", None),
        ]
        assert "tenant" not in lines[1]
        assert [(e.fleet, e.tenant) for _, e in stored] == [("edge", "acme"), ("solo", None)]

    asyncio.run(main())


def test_the_watcher_reloads_when_the_file_changes(tmp_path: Path) -> None:
    from recordseal.fleet.reload import ReloadOutcome, watch_manifest

    seen: list[ReloadOutcome] = []

    async def applied(outcome: ReloadOutcome) -> None:
        seen.append(outcome)

    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        task = asyncio.create_task(watch_manifest(registry, 0.01, applied))
        await asyncio.sleep(0.05)
        path.write_text(BASE + '[[fleet]]\nid = "fresh"\n')
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        assert [c.fleet for c in seen[0].changes if c.kind == "added"] == ["fresh"]
        assert registry.manifest.fleet("fresh") is not None

    run_on(tmp_path, BASE, body)


def test_seed_path_or_preset_changes_are_updates_also_through_the_defaults() -> None:
    old = 'version = 1\n[defaults]\npreset = "a"\n[[fleet]]\nid = "f"\nseed_path = "/s1"\n'
    seed = 'version = 1\n[defaults]\npreset = "a"\n[[fleet]]\nid = "f"\nseed_path = "/s2"\n'
    preset = 'version = 1\n[defaults]\npreset = "b"\n[[fleet]]\nid = "f"\nseed_path = "/s1"\n'
    for new, fields in ((seed, ("seed_path",)), (preset, ("preset",))):
        (change,) = classify(parse_manifest(old), parse_manifest(new))
        assert (change.kind, change.fields) == ("updated", fields)
    assert kinds(old, old) == {"f": "unchanged"}


def test_a_refused_reload_changes_nothing_and_a_later_one_applies_from_the_running_state(
    tmp_path: Path,
) -> None:
    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        running = registry.manifest
        before = len(recorder.events)
        path.write_text(
            MOVED.replace('preset = "balanced"', 'preset = "strict"').replace(
                '[[fleet]]\nid = "drop"\n', ""
            )
            + '[[fleet]]\nid = "fresh"\n'
        )
        assert not (await registry.reload()).applied
        assert registry.manifest is running
        # nothing of the refused file was applied or audited as applied: only the refusal
        assert [e.event for e in recorder.events[before:]] == ["fleet.rebind_refused"]
        # the operator puts "move" back: the rest of the same edit now applies, against the
        # manifest that kept running (drop removed, tune updated, fresh added)
        path.write_text(path.read_text().replace('tenant_id = "globex"', 'tenant_id = "acme"'))
        outcome = await registry.reload()
        assert outcome.applied
        assert {c.fleet: c.kind for c in outcome.changes} == {
            "keep": "unchanged",
            "tune": "updated",
            "move": "unchanged",
            "fresh": "added",
            "drop": "removed",
        }

    run_on(tmp_path, BASE, body)


def test_a_fleet_removed_then_added_back_under_another_tenant_is_refused(tmp_path: Path) -> None:
    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        path.write_text(BASE.replace('[[fleet]]\nid = "move"\ntenant_id = "acme"\n', ""))
        assert (await registry.reload()).applied and registry.manifest.fleet("move") is None
        removed = registry.manifest
        path.write_text(BASE.replace('id = "move"\ntenant_id = "acme"', 'id = "move"'))
        outcome = await registry.reload()
        assert not outcome.applied and [c.fleet for c in outcome.refused] == ["move"]
        assert registry.manifest is removed
        refused = [e for e in recorder.events if e.event == "fleet.rebind_refused"]
        assert [(e.fleet, e.tenant, e.details) for e in refused] == [
            ("move", "acme", {"requested_tenant": None})
        ]
        # back under its first tenant it is an ordinary addition
        path.write_text(BASE)
        outcome = await registry.reload()
        assert outcome.applied and [c.kind for c in outcome.changes if c.fleet == "move"] == [
            "added"
        ]

    run_on(tmp_path, BASE, body)


def test_an_audit_stream_failing_during_a_reload_leaves_a_consistent_state(
    tmp_path: Path,
) -> None:
    """The new manifest and every fleet's tenant are in place before the events go out: a
    stream that fails part-way cannot let a later reload rebind a fleet it just added."""

    async def body(registry: FleetRegistry, path: Path, recorder: Recorder) -> None:
        recorder.fail = True  # the audit stream cannot be written any more
        path.write_text(BASE + '[[fleet]]\nid = "one"\ntenant_id = "acme"\n[[fleet]]\nid = "two"\n')
        with pytest.raises(OSError):
            await registry.reload()
        assert registry.manifest.ids == ["keep", "tune", "drop", "move", "one", "two"]
        recorder.fail = False
        one = '[[fleet]]\nid = "one"\ntenant_id = "acme"\n'
        path.write_text(BASE + one)  # "two" removed
        assert (await registry.reload()).applied
        path.write_text(BASE + one + '[[fleet]]\nid = "two"\ntenant_id = "globex"\n')
        outcome = await registry.reload()  # "two" was bound with no tenant in this process
        assert not outcome.applied and [c.fleet for c in outcome.refused] == ["two"]

    run_on(tmp_path, BASE, body)


# -- one event per change, however many processes run -------------------------------------


def test_processes_on_one_database_record_each_change_once(tmp_path: Path) -> None:
    """Three processes (registries on one database) start, then see the same reloads: each
    event is in the stream once, also a change made, undone and made again, and a refusal
    seen again after the file went back."""
    path = tmp_path / "fleets.toml"
    path.write_text(BASE)
    tuned = BASE.replace('preset = "balanced"', 'preset = "strict"')

    async def main() -> list[tuple[str, str]]:
        database = tmp_path / "recordseal.sqlite3"
        async with (
            opened(SQLiteStore(database)) as a,
            opened(SQLiteStore(database)) as b,
            opened(SQLiteStore(database)) as c,
        ):
            registries = [
                FleetRegistry(load_manifest(path), FleetAudit(store.panel)) for store in (a, b, c)
            ]
            for registry in registries:
                await registry.bind()

            async def everyone_reloads(text: str) -> None:
                path.write_text(text)
                await asyncio.gather(*(registry.reload() for registry in registries))

            for text in (tuned, BASE, tuned, MOVED, tuned, MOVED):
                await everyone_reloads(text)
            return [(e.event, e.fleet) for _, e in await a.panel.audit_entries()]

    events = asyncio.run(main())
    bound = [("fleet.bound", fleet) for fleet in ("keep", "tune", "drop", "move")]
    tune = ("fleet.updated", "tune")
    refused = ("fleet.rebind_refused", "move")
    assert events == [*bound, tune, tune, tune, refused, refused]


def test_a_restart_with_the_same_manifest_records_no_new_binding(tmp_path: Path) -> None:
    path = tmp_path / "fleets.toml"
    path.write_text(BASE)

    async def start() -> int:
        async with opened(SQLiteStore(tmp_path / "recordseal.sqlite3")) as store:
            registry = FleetRegistry(load_manifest(path), FleetAudit(store.panel))
            return len(await registry.bind())

    assert asyncio.run(start()) == 4
    assert asyncio.run(start()) == 0
    path.write_text(BASE + '[[fleet]]\nid = "fresh"\n')
    assert asyncio.run(start()) == 5  # another manifest: every fleet bound under it

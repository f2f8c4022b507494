"""Manifest reloads (spec panel 6.5) and fleet audit events (spec panel 6.1)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from recordseal.audit import AuditEvent, FleetAudit, FleetScope
from recordseal.fleet.manifest import FleetBinding, load_manifest, parse_manifest
from recordseal.fleet.reload import FleetRegistry, classify
from recordseal.logs import Formatter, fields_of

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
    def __init__(self) -> None:
        self.events: list[AuditEvent] = []

    def __call__(self, event: AuditEvent) -> None:
        self.events.append(event)


def registry_on(tmp_path: Path, text: str) -> tuple[FleetRegistry, Path, Recorder]:
    path = tmp_path / "fleets.toml"
    path.write_text(text)
    recorder = Recorder()
    audit = FleetAudit(recorder, clock=lambda: "2026-11-21T00:00:00.000000Z")
    return FleetRegistry(load_manifest(path), audit), path, recorder


def test_a_reload_with_an_unsupported_change_is_refused_as_a_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry, path, recorder = registry_on(tmp_path, BASE)
    running = registry.manifest
    path.write_text(
        BASE.replace('id = "move"\ntenant_id = "acme"', 'id = "move"\ntenant_id = "globex"')
        + '[[fleet]]\nid = "fresh"\n'
    )
    with caplog.at_level(logging.WARNING, logger="recordseal.fleet"):
        outcome = registry.reload()
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


def test_an_allowed_reload_is_applied_and_audited(tmp_path: Path) -> None:
    registry, path, recorder = registry_on(tmp_path, BASE)
    path.write_text(
        BASE.replace('preset = "balanced"', 'preset = "strict"') + '[[fleet]]\nid = "fresh"\n'
    )
    outcome = registry.reload()
    assert outcome.applied and outcome.refused == []
    assert registry.manifest.fleet("tune") == FleetBinding("tune", "acme", None, "strict")
    assert registry.manifest.fleet("fresh") is not None
    events = [(e.event, e.fleet, e.tenant) for e in recorder.events if e.event != "fleet.bound"]
    assert events == [("fleet.updated", "tune", "acme"), ("fleet.added", "fresh", None)]


def test_a_manifest_that_no_longer_loads_keeps_the_running_one(tmp_path: Path) -> None:
    registry, path, _ = registry_on(tmp_path, BASE)
    running = registry.manifest
    path.write_text("version = 2\n")
    outcome = registry.reload()
    assert not outcome.applied and outcome.error and "unsupported version 2" in outcome.error
    assert registry.manifest is running


def test_events_of_a_fleet_with_a_tenant_carry_the_tenant_scope(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = FleetAudit(clock=lambda: "2026-11-21T00:00:00.000000Z")
    with caplog.at_level(logging.INFO, logger="recordseal.audit"):
        scoped = audit.emit(FleetScope("edge", "acme"), "anchor.sealed", size=3)
        legacy = audit.emit(FleetScope("solo", None), "anchor.sealed", size=1)
    assert scoped.tenant == "acme" and legacy.tenant is None
    lines = [(r.getMessage(), fields_of(r)) for r in caplog.records if r.name == "recordseal.audit"]
    assert lines == [
        (
            "audit.anchor.sealed",
            {"fleet": "edge", "at": "2026-11-21T00:00:00.000000Z", "tenant": "acme", "size": 3},
        ),
        ("audit.anchor.sealed", {"fleet": "solo", "at": "2026-11-21T00:00:00.000000Z", "size": 1}),
    ]


def test_every_fleet_bound_at_start_is_audited_with_its_tenant(tmp_path: Path) -> None:
    _, _, recorder = registry_on(tmp_path, BASE)
    assert [(e.event, e.fleet, e.tenant) for e in recorder.events] == [
        ("fleet.bound", "keep", "acme"),
        ("fleet.bound", "tune", "acme"),
        ("fleet.bound", "drop", None),
        ("fleet.bound", "move", "acme"),
    ]


def test_the_file_sink_appends_one_json_line_per_event(tmp_path: Path) -> None:
    from recordseal.audit import FileSink

    path = tmp_path / "audit" / "audit.jsonl"
    audit = FleetAudit(FileSink(path), clock=lambda: "2026-11-21T00:00:00.000000Z")
    audit.emit(FleetScope("edge", "acme"), "anchor.sealed", size=2)
    audit.emit(FleetScope("solo", None), "anchor.sealed", size=1)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["fleet"], line.get("tenant")) for line in lines] == [
        ("edge", "acme"),
        ("solo", None),
    ]
    assert "tenant" not in lines[1]
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_the_watcher_reloads_when_the_file_changes(tmp_path: Path) -> None:
    import asyncio

    from recordseal.fleet.reload import ReloadOutcome, watch_manifest

    registry, path, _ = registry_on(tmp_path, BASE)
    seen: list[ReloadOutcome] = []

    async def applied(outcome: ReloadOutcome) -> None:
        seen.append(outcome)

    async def main() -> None:
        task = asyncio.create_task(watch_manifest(registry, 0.01, applied))
        await asyncio.sleep(0.05)
        path.write_text(BASE + '[[fleet]]\nid = "fresh"\n')
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(main())
    assert [c.fleet for c in seen[0].changes if c.kind == "added"] == ["fresh"]
    assert registry.manifest.fleet("fresh") is not None


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
    registry, path, recorder = registry_on(tmp_path, BASE)
    running = registry.manifest
    before = len(recorder.events)
    path.write_text(
        BASE.replace('id = "move"\ntenant_id = "acme"', 'id = "move"\ntenant_id = "globex"')
        .replace('preset = "balanced"', 'preset = "strict"')
        .replace('[[fleet]]\nid = "drop"\n', "")
        + '[[fleet]]\nid = "fresh"\n'
    )
    assert not registry.reload().applied
    assert registry.manifest is running
    # nothing of the refused file was applied or audited as applied: only the refusal
    assert [e.event for e in recorder.events[before:]] == ["fleet.rebind_refused"]
    # the operator puts "move" back: the rest of the same edit now applies, against the
    # manifest that kept running (drop removed, tune updated, fresh added)
    path.write_text(path.read_text().replace('tenant_id = "globex"', 'tenant_id = "acme"'))
    outcome = registry.reload()
    assert outcome.applied
    assert {c.fleet: c.kind for c in outcome.changes} == {
        "keep": "unchanged",
        "tune": "updated",
        "move": "unchanged",
        "fresh": "added",
        "drop": "removed",
    }


def test_a_fleet_removed_then_added_back_under_another_tenant_is_refused(tmp_path: Path) -> None:
    registry, path, recorder = registry_on(tmp_path, BASE)
    path.write_text(BASE.replace('[[fleet]]\nid = "move"\ntenant_id = "acme"\n', ""))
    assert registry.reload().applied and registry.manifest.fleet("move") is None
    removed = registry.manifest
    path.write_text(BASE.replace('id = "move"\ntenant_id = "acme"', 'id = "move"'))
    outcome = registry.reload()
    assert not outcome.applied and [c.fleet for c in outcome.refused] == ["move"]
    assert registry.manifest is removed
    refused = [e for e in recorder.events if e.event == "fleet.rebind_refused"]
    assert [(e.fleet, e.tenant, e.details) for e in refused] == [
        ("move", "acme", {"requested_tenant": None})
    ]
    # back under its first tenant it is an ordinary addition
    path.write_text(BASE)
    outcome = registry.reload()
    assert outcome.applied and [c.kind for c in outcome.changes if c.fleet == "move"] == ["added"]


def test_an_audit_sink_failing_during_a_reload_leaves_a_consistent_state(tmp_path: Path) -> None:
    """The new manifest and every fleet's tenant are in place before the events go out: a
    sink that fails part-way cannot let a later reload rebind a fleet it just added."""
    from recordseal.audit import FileSink

    path = tmp_path / "fleets.toml"
    path.write_text(BASE)
    sink = tmp_path / "audit.jsonl"
    registry = FleetRegistry(load_manifest(path), FleetAudit(FileSink(sink)))
    sink.unlink()
    sink.mkdir()  # the audit file cannot be written any more
    path.write_text(BASE + '[[fleet]]\nid = "one"\ntenant_id = "acme"\n[[fleet]]\nid = "two"\n')
    with pytest.raises(OSError):
        registry.reload()
    assert registry.manifest.ids == ["keep", "tune", "drop", "move", "one", "two"]
    sink.rmdir()
    one = '[[fleet]]\nid = "one"\ntenant_id = "acme"\n'
    path.write_text(BASE + one)  # "two" removed
    assert registry.reload().applied
    path.write_text(BASE + one + '[[fleet]]\nid = "two"\ntenant_id = "globex"\n')
    outcome = registry.reload()  # "two" was bound with no tenant in this process
    assert not outcome.applied and [c.fleet for c in outcome.refused] == ["two"]

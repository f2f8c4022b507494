"""The worker's background tasks under one supervisor (web/background.py): started with the
application, stopped (cancelled and awaited) at its shutdown, and a task that ends while the
service runs logged, counted and named on ``/readyz`` (docs/operations.md, "Background
tasks")."""

from __future__ import annotations

import asyncio
import logging

import msgspec
import pytest
from litestar.testing import TestClient

from recordseal import metrics
from recordseal.settings import Settings
from recordseal.web.app import create_app
from recordseal.web.background import BACKGROUND_STATE, TaskSupervisor


def _failures(task: str) -> float:
    return metrics.BACKGROUND_TASK_FAILURES.labels(task)._value.get()


def test_stop_cancels_every_task_and_waits_for_each_to_end() -> None:
    finished: list[str] = []

    async def loop(name: str) -> None:
        try:
            await asyncio.Event().wait()  # runs until cancelled
        finally:
            await asyncio.sleep(0)  # an await in its cleanup: stop must wait past it
            finished.append(name)

    async def scenario() -> None:
        tasks = TaskSupervisor()
        tasks.add("one", lambda: loop("one"))
        tasks.add("two", lambda: loop("two"))
        assert tasks.report() == {"one": "idle", "two": "idle"}
        tasks.start()
        await asyncio.sleep(0)
        assert tasks.report() == {"one": "running", "two": "running"}
        await tasks.stop()
        assert sorted(finished) == ["one", "two"]
        assert tasks.report() == {"one": "stopped", "two": "stopped"}
        assert tasks.faults() == []

    asyncio.run(scenario())


def test_a_task_that_dies_is_logged_by_class_counted_and_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    died = asyncio.Event()

    async def failing() -> None:
        died.set()
        raise RuntimeError("customer-value-123")

    async def returning() -> None:
        return None

    async def scenario() -> TaskSupervisor:
        tasks = TaskSupervisor()
        tasks.add("probe_failing", failing)
        tasks.add("probe_returning", returning)
        tasks.start()
        await died.wait()
        for _ in range(3):  # the done callbacks run on the loop's next turns
            await asyncio.sleep(0)
        return tasks

    failed_before, ended_before = _failures("probe_failing"), _failures("probe_returning")
    with caplog.at_level(logging.ERROR, logger="recordseal"):
        tasks = asyncio.run(scenario())
    assert tasks.report() == {"probe_failing": "failed", "probe_returning": "ended"}
    assert tasks.faults() == [
        "background task probe_failing stopped (RuntimeError)",
        "background task probe_returning stopped (it returned)",
    ]
    assert _failures("probe_failing") == failed_before + 1
    assert _failures("probe_returning") == ended_before + 1
    ended = [r for r in caplog.records if r.getMessage() == "background.task_ended"]
    assert [(r.task, r.error) for r in ended] == [  # type: ignore[attr-defined]
        ("probe_failing", "RuntimeError"),
        ("probe_returning", None),
    ]
    assert "customer-value-123" not in caplog.text  # the class only, never the message


def test_a_name_is_registered_once() -> None:
    tasks = TaskSupervisor()

    async def nothing() -> None:
        return None

    tasks.add("sealing", nothing)
    with pytest.raises(ValueError, match="sealing"):
        tasks.add("sealing", nothing)


def test_the_application_runs_its_tasks_and_stops_them_at_shutdown(
    store_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(
        store_settings, seal_interval=0.05, transparency_interval=60.0
    )
    app = create_app(settings)
    with TestClient(app) as client:
        tasks = app.state[BACKGROUND_STATE]
        assert isinstance(tasks, TaskSupervisor)
        # No manifest file is named: nothing to watch.
        assert tasks.report() == {
            "shared_fences": "running",
            "sealing": "running",
            "idempotency_purge": "running",
            "transparency_files": "running",
        }
        assert client.get("/readyz").json() == {
            "status": "ready",
            "checks": {"keys": "ok", "store": "ok"},
        }
    assert tasks.report() == {
        "shared_fences": "stopped",
        "sealing": "stopped",
        "idempotency_purge": "stopped",
        "transparency_files": "stopped",
    }


def test_readyz_names_a_task_that_ended_and_stays_ready(store_settings: Settings) -> None:
    app = create_app(
        msgspec.structs.replace(store_settings, seal_interval=0, transparency_interval=0)
    )
    with TestClient(app) as client:
        tasks = app.state[BACKGROUND_STATE]
        assert tasks.report() == {"shared_fences": "running", "idempotency_purge": "running"}

        async def broken() -> None:
            raise OSError("disk gone")

        async def start_and_wait_for_the_end() -> None:
            tasks.add("probe", broken)
            tasks.start()
            while tasks.report()["probe"] == "running":
                await asyncio.sleep(0.01)

        client.blocking_portal.call(start_and_wait_for_the_end)
        ready = client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {
            "status": "ready",
            "checks": {"keys": "ok", "store": "ok"},
            "detail": "background task probe stopped (OSError)",
        }

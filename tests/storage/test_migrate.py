"""``recordseal migrate`` applies the schema migrations of the configured backend, once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from recordseal.settings import Settings
from recordseal.storage.postgres import schema as postgres_schema
from recordseal.storage.sqlite import schema as sqlite_schema
from tests.backends import query


def migrate(settings: Settings) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RECORDSEAL_DATABASE_URL"}
    url = ["--database-url", settings.database_url] if settings.database_url else []
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "migrate", "--data-dir", str(settings.data_dir),
         *url],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip


def test_migrate_brings_an_empty_database_to_the_latest_version_once(store_settings):
    latest = len(
        postgres_schema.MIGRATIONS if store_settings.database_url else sqlite_schema.MIGRATIONS
    )
    for _ in range(2):  # a second run finds nothing to do
        done = migrate(store_settings)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().endswith(f"schema version {latest} of {latest}, up to date")
        versions = query(store_settings, "SELECT version FROM schema_version ORDER BY version")
        assert [v for (v,) in versions] == list(range(1, latest + 1))
    tables = (
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        if store_settings.database_url
        else "SELECT name FROM sqlite_master WHERE type = 'table'"
    )
    names = {name for (name,) in query(store_settings, tables)}
    assert {"records", "payloads", "subjects", "streams", "logs", "idempotency_keys"} <= names


def test_migrate_refuses_a_url_that_is_not_postgresql(tmp_path):
    done = migrate(Settings(data_dir=tmp_path, database_url="mysql://localhost/x"))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "recordseal: RECORDSEAL_DATABASE_URL (--database-url) must be a postgresql:// URL"
    )


def test_serve_refuses_a_url_that_is_not_postgresql_before_starting(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RECORDSEAL_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "serve", "--data-dir", str(tmp_path),
         "--port", "1", "--database-url", "sqlite:///x.db"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "must be a postgresql:// URL" in done.stderr
    assert "Traceback" not in done.stderr


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RECORDSEAL_DATABASE_URL"}
    url = ["--database-url", settings.database_url] if settings.database_url else []
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *args, "--data-dir", str(settings.data_dir),
         *url],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip


def _latest(settings: Settings) -> int:
    return len(postgres_schema.MIGRATIONS if settings.database_url else sqlite_schema.MIGRATIONS)


def test_migrate_status_reports_without_changing_anything(store_settings):
    latest = _latest(store_settings)
    absent = _cli(store_settings, "migrate", "--status", "--json")
    assert absent.returncode == 1, absent.stderr
    assert json.loads(absent.stdout) == {
        "backend": "postgresql" if store_settings.database_url else "sqlite",
        "schema_version": 0,
        "latest": latest,
        "pending": latest,
        "applied": 0,
        "state": "absent",
    }
    if not store_settings.database_url:
        assert not store_settings.database_path.exists()  # --status created no database
    applied = _cli(store_settings, "migrate", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["applied"] == latest
    status = _cli(store_settings, "migrate", "--status")
    assert status.returncode == 0
    assert status.stdout.strip().endswith(f"schema version {latest} of {latest}, up to date")


def test_a_schema_newer_than_the_code_is_refused_and_left_alone(store_settings):
    assert migrate(store_settings).returncode == 0
    newer = _latest(store_settings) + 1
    query(store_settings, f"INSERT INTO schema_version (version) VALUES ({newer})")
    for command in (("migrate",), ("migrate", "--status")):
        done = _cli(store_settings, *command)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.strip() == (
            f"recordseal: the database schema is version {newer}, newer than this recordseal"
            f" knows ({newer - 1}): upgrade recordseal; nothing was changed"
        )
    serve = _cli(store_settings, "serve", "--port", "1")
    assert serve.returncode == 2
    assert "newer than this recordseal knows" in serve.stderr and "Traceback" not in serve.stderr
    versions = query(store_settings, "SELECT max(version) FROM schema_version")
    assert versions == [(newer,)]

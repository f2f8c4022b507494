"""``recordseal tenant create|list|show|freeze|unfreeze`` and ``recordseal org create|list``,
run as processes on both backends: what they print (text and ``--json``), their exit codes,
refusals naming the field and the rule and changing nothing, and their audit lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recordseal.settings import Settings


def cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    url = ["--database-url", settings.database_url] if settings.database_url else []
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *args, "--data-dir", str(settings.data_dir),
         *url],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip


def ok(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    done = cli(settings, *args)
    assert done.returncode == 0, done.stderr
    return done


def listed(settings: Settings) -> list[dict[str, object]]:
    tenants: list[dict[str, object]] = json.loads(ok(settings, "tenant", "list", "--json").stdout)
    return tenants


def test_tenants_are_created_listed_shown_frozen_and_unfrozen(store_settings: Settings) -> None:
    s = store_settings
    made = ok(s, "tenant", "create", "acme", "--display-name", "Acme Corp",
              "--contact-email", "ops@acme.test")  # fmt: skip
    assert made.stdout == "tenant 'acme' created: Acme Corp\n"
    assert "panel.tenant_created tenant=acme by=" in made.stderr and "via=cli" in made.stderr
    made = ok(s, "tenant", "create", "globex", "--display-name", "Globex", "--json")
    assert json.loads(made.stdout) == {
        "id": "globex",
        "display_name": "Globex",
        "contact_email": None,
        "active": True,
    }
    assert ok(s, "tenant", "list").stdout.splitlines() == [
        "id\tstatus\tdisplay name\tcontact",
        "acme\tactive\tAcme Corp\tops@acme.test",
        "globex\tactive\tGlobex\t-",
    ]

    frozen = ok(s, "tenant", "freeze", "acme")
    assert frozen.stdout.startswith("tenant 'acme' is frozen read-only: every service process")
    assert "panel.tenant_frozen tenant=acme" in frozen.stderr
    again = ok(s, "tenant", "freeze", "acme", "--json")
    assert (
        json.loads(again.stdout)["changed"] is False and "panel.tenant_frozen" not in again.stderr
    )
    assert [t["active"] for t in listed(s)] == [False, True]
    refused = cli(s, "token", "create", "--tenant", "acme")
    assert refused.returncode == 2
    assert "frozen read-only: no new API tokens (tenant_inactive)" in refused.stderr
    thawed = ok(s, "tenant", "unfreeze", "acme")
    assert thawed.stdout.startswith("tenant 'acme' is active again")
    assert "panel.tenant_unfrozen tenant=acme" in thawed.stderr
    assert [t["active"] for t in listed(s)] == [True, True]

    ok(s, "org", "create", "acme", "eng", "--display-name", "Engineering")
    shown = ok(s, "tenant", "show", "acme").stdout.splitlines()
    assert shown == [
        "tenant       acme",
        "display name Acme Corp",
        "status       active",
        "contact      ops@acme.test",
        "organization eng: Engineering (no fleets)",
    ]
    document = json.loads(ok(s, "tenant", "show", "acme", "--json").stdout)
    assert document["organizations"] == [
        {
            "tenant_id": "acme",
            "id": "eng",
            "display_name": "Engineering",
            "sso_provider_ref": None,
            "fleets": [],
        }
    ]
    missing = cli(s, "tenant", "show", "nobody")
    assert (missing.returncode, missing.stderr) == (
        1,
        "recordseal: no tenant 'nobody' (tenant_not_found)\n",
    )
    for action in ("freeze", "unfreeze"):
        assert cli(s, "tenant", action, "nobody").returncode == 1


def test_a_token_s_tenant_is_listed_and_named_later(store_settings: Settings) -> None:
    """The quick start: a token for a tenant nobody created; the tenant is listed by its id,
    and ``tenant create`` gives it its name."""
    ok(store_settings, "token", "create", "--tenant", "acme", "--create-data-dir")
    assert listed(store_settings) == [
        {"id": "acme", "display_name": "acme", "contact_email": None, "active": True}
    ]
    ok(store_settings, "tenant", "create", "acme", "--display-name", "Acme Corp")
    assert listed(store_settings)[0]["display_name"] == "Acme Corp"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("bad/id", "--display-name", "X"),
            "recordseal: id must be 1 to 64 characters of letters, digits, '.', '_' and '-',"
            " starting with a letter or digit (id_invalid)",
        ),
        (
            ("acme", "--display-name", " "),
            "recordseal: display_name must be 1 to 128 characters, not only spaces, with no"
            " control characters (display_name_invalid)",
        ),
        (
            ("acme", "--display-name", "Acme", "--contact-email", "ops at acme"),
            "recordseal: contact_email must be an e-mail address: a local part, '@' and a"
            " domain, at most 254 characters, with no spaces or control characters"
            " (contact_email_invalid)",
        ),
        (
            ("taken", "--display-name", "Again"),
            "recordseal: a tenant with id 'taken' exists (tenant_exists)",
        ),
    ],
)
def test_a_refused_tenant_names_the_field_and_the_rule(
    store_settings: Settings, args: tuple[str, ...], message: str
) -> None:
    ok(store_settings, "tenant", "create", "taken", "--display-name", "Taken", "--create-data-dir")
    refused = cli(store_settings, "tenant", "create", *args)
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[-1] == message
    assert "panel.tenant_created" not in refused.stderr
    assert [t["id"] for t in listed(store_settings)] == ["taken"]
    assert listed(store_settings)[0]["display_name"] == "Taken"


def test_organizations_are_created_and_listed(store_settings: Settings) -> None:
    s = store_settings
    for tenant in ("acme", "globex"):
        ok(s, "tenant", "create", tenant, "--display-name", tenant.title(), "--create-data-dir")
    made = ok(s, "org", "create", "acme", "eng", "--display-name", "Engineering")
    assert made.stdout == "organization 'eng' of tenant 'acme' created: Engineering\n"
    assert "panel.organization_created tenant=acme org=eng" in made.stderr
    ok(s, "org", "create", "globex", "eng", "--display-name", "Globex Eng", "--json")
    assert ok(s, "org", "list").stdout.splitlines() == [
        "tenant\tid\tdisplay name\tsign-on provider",
        "acme\teng\tEngineering\t-",
        "globex\teng\tGlobex Eng\t-",
    ]
    only = json.loads(ok(s, "org", "list", "--tenant", "globex", "--json").stdout)
    assert [(o["tenant_id"], o["id"]) for o in only] == [("globex", "eng")]

    refusals = [
        (("nobody", "x"), 1, "recordseal: no tenant 'nobody' (tenant_not_found)"),
        (("acme", "eng"), 2, "recordseal: tenant 'acme' has an organization with id 'eng'"
                             " (organization_exists)"),
        (("acme", "a b"), 2, "recordseal: id must be 1 to 64 characters of letters, digits,"
                             " '.', '_' and '-', starting with a letter or digit (id_invalid)"),
    ]  # fmt: skip
    for args, code, message in refusals:
        refused = cli(s, "org", "create", *args, "--display-name", "X")
        assert (refused.returncode, refused.stderr.splitlines()[-1]) == (code, message)
    ok(s, "tenant", "freeze", "acme")
    frozen = cli(s, "org", "create", "acme", "ops", "--display-name", "Ops")
    assert frozen.returncode == 2
    assert frozen.stderr.splitlines()[-1] == (
        "recordseal: the tenant is frozen read-only: no new organizations (tenant_inactive)"
    )
    assert len(json.loads(ok(s, "org", "list", "--json").stdout)) == 2
    assert cli(s, "org", "list", "--tenant", "nobody").returncode == 1


def test_a_data_directory_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "typo")
    refused = cli(settings, "tenant", "create", "acme", "--display-name", "Acme")
    assert refused.returncode == 2 and "does not exist" in refused.stderr
    assert cli(settings, "tenant", "list").returncode == 2
    assert not settings.data_dir.exists()

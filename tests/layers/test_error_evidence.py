"""Errors carry their evidence as fields, not only in their message (issue 31, item 2): what
a caller needs to act on (the field, the setting, the path) is an attribute of the error."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from recordseal.cli import MissingDataDir, _data_dir_for
from recordseal.client.connection import MissingSetting, service_of
from recordseal.panel.sso.contract import Principal, PrincipalError
from recordseal.settings import Settings


def test_a_principal_refusal_names_its_field_and_rule() -> None:
    with pytest.raises(PrincipalError) as empty:
        Principal("", "acme", "eng")
    assert (empty.value.field, empty.value.rule) == ("subject_id", "is empty")
    assert str(empty.value) == "subject_id is empty"
    with pytest.raises(PrincipalError) as tenantless:
        Principal("a", "", "eng")
    assert (tenantless.value.field, str(tenantless.value)) == ("tenant_id", "tenant_id is required")


def test_a_missing_client_setting_names_which(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("RECORDSEAL_URL", raising=False)
    monkeypatch.delenv("RECORDSEAL_TOKEN", raising=False)
    with pytest.raises(MissingSetting) as no_url:
        service_of(argparse.Namespace(url=None, token_file=None))
    assert no_url.value.setting == "url"
    empty = tmp_path / "token"
    empty.write_text("\n")
    with pytest.raises(MissingSetting) as no_token:
        service_of(argparse.Namespace(url="http://127.0.0.1:1", token_file=empty))
    assert no_token.value.setting == "token"
    assert str(no_token.value) == f"the token file {empty} is empty"


def test_a_missing_data_directory_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    with pytest.raises(MissingDataDir) as refused:
        _data_dir_for(Settings(data_dir=missing), create=False)
    assert refused.value.path == missing
    assert str(refused.value).startswith(f"data directory {missing} does not exist")
    assert not missing.exists()

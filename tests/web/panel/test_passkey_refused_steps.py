"""Every refused passkey ceremony step, in the assembled application: one answer (the
controller's exception handler, web/panel/passkeys.py), whatever step refused and why."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.settings import Settings
from recordseal.web.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore:The base_url:UserWarning")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient[Litestar]]:
    settings = Settings(data_dir=tmp_path, rate_limit_login=None, rate_limit_sso=None)
    with TestClient(create_app(settings), base_url="http://localhost:8000") as test_client:
        yield test_client


#: (route, body, headers, status, reason logged): one refusal of each ceremony step.
REFUSALS = [
    (
        "/login/authenticate/start",
        {},
        {"Origin": "http://elsewhere.example"},
        400,
        "Origin header 'http://elsewhere.example' differs from 'http://localhost:8000'",
    ),
    (
        "/login/authenticate/finish",
        {"state": "nope", "credential": {}},
        {},
        401,
        "unknown, used or expired state",
    ),
    ("/login/register/start", {"token": 1}, {}, 400, "malformed JSON body"),
    (
        "/login/register/finish",
        {"state": "nope", "credential": {}},
        {},
        401,
        "unknown, used or expired state",
    ),
]


@pytest.mark.parametrize(("path", "body", "headers", "status", "reason"), REFUSALS)
def test_a_refused_step_answers_its_status_with_an_empty_private_body_and_logs_why(
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
    path: str,
    body: object,
    headers: dict[str, str],
    status: int,
    reason: str,
) -> None:
    with caplog.at_level(logging.INFO, logger="recordseal.panel.web"):
        response = client.post(path, json=body, headers=headers)
    assert response.status_code == status
    assert response.content == b""
    assert response.headers["cache-control"] == "no-store"
    assert "set-cookie" not in response.headers
    refused = [r for r in caplog.records if r.getMessage() == "panel.passkey_refused"]
    assert [getattr(r, "reason", None) for r in refused] == [reason]

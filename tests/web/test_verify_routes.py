"""``POST /v1/verify`` and ``/verify-record`` (``web/verify.py``) on a minimal Litestar app with
the verify routes, wired as ``create_app`` wires them (the controller, its static files, the
problem handlers). The verifier's worlds and tampering come from tests/verify."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from html import unescape
from urllib.parse import urlencode

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.services.verification import OnlineVerifier
from recordseal.verify import (
    KeyDirectory,
    TrustStore,
    verify_bundle,
)
from recordseal.verify.encoding import format_instant
from recordseal.verify.sealing import end_of_second
from recordseal.web.problems import EXCEPTION_HANDLERS
from recordseal.web.verify import static_files, verify_controller
from tests.verify.conftest import tampered
from tests.verify.factory import World
from tests.verify.test_malformed import RAW
from tests.verify.test_outcomes import GAP_SEQ, LAST_SEQ, gap_world
from tests.verify.test_tamper import SEAL_TAMPERING

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


JSON = {"Content-Type": "application/json"}


#: A small limit keeps the 413 tests light; the service's own is 16 MiB (test_proofs.py).
MAX_BUNDLE_BYTES = 1 << 20


def _verify_app() -> Litestar:
    return Litestar(
        route_handlers=[verify_controller(MAX_BUNDLE_BYTES), static_files],
        exception_handlers=dict(EXCEPTION_HANDLERS),
    )


@pytest.fixture(scope="module")
def world() -> World:
    """A stream, its log and its witness (tests/verify's session world, made here once)."""
    return World()


def _app(world: World | None) -> Litestar:
    app = _verify_app()
    keys, trust = (world.keys(), world.trust()) if world is not None else (None, None)

    async def context() -> tuple[KeyDirectory | None, TrustStore | None]:
        return keys, trust

    app.state.verifier = OnlineVerifier(context)
    return app


@pytest.fixture(scope="module")
def client(world: World) -> Iterator[TestClient[Litestar]]:
    with TestClient(_app(world)) as test_client:
        yield test_client


def _verdict(html: str) -> str:
    match = re.search(r'<p class="verdict [A-Z]+" id="verdict" role="status">([^<]*)</p>', html)
    assert match is not None, html
    return unescape(match.group(1))


# --- POST /v1/verify -------------------------------------------------------------------------


def test_api_verifies_with_the_service_context(client: TestClient[Litestar], world: World) -> None:
    response = client.post("/v1/verify", content=world.bundle(), headers=JSON)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    result = response.json()
    assert result["format"] == "recordseal/verification/v1"
    assert result["verdict"] == "VERIFIED"
    assert result["time_bracket"]["not_after_by"] == "witness.example"


def test_api_answers_200_for_a_failed_bundle(client: TestClient[Litestar], world: World) -> None:
    bundle = tampered(world.bundle(), lambda d: d.update(signature="00" * 64))
    result = client.post("/v1/verify", content=bundle, headers=JSON).json()
    assert result["verdict"] == "FAILED"
    assert [check["status"] for check in result["checks"]][2] == "failed"


def test_api_answers_200_for_json_that_is_no_bundle(client: TestClient[Litestar]) -> None:
    response = client.post("/v1/verify", content=b'{"format": 1}', headers=JSON)
    assert response.status_code == 200
    assert response.json()["verdict"] == "FAILED"
    assert response.json()["attestation"] == "hosted-ingest"


#: Bodies that are not RFC 8259 JSON (rule M1): each a malformed bundle, never a 400.
NOT_JSON = {
    **RAW,
    "html": b"<html>",
    "deeply unclosed": b"[" * 100_000,
    "invalid UTF-8 in a member": b'{"a": "\xff"}',
}


@pytest.mark.parametrize("body", NOT_JSON.values(), ids=NOT_JSON)
def test_api_answers_a_body_that_is_not_json_as_the_cli_does(
    client: TestClient[Litestar], world: World, body: bytes
) -> None:
    """One verdict for one bundle: the result ``recordseal verify`` gives, with 200."""
    response = client.post("/v1/verify", content=body, headers=JSON)
    assert response.status_code == 200, response.text
    online = response.json()
    assert online.pop("attestation") == "hosted-ingest"
    offline = json.loads(verify_bundle(body, world.keys(), world.trust()).to_json())
    assert online == offline
    assert online["verdict"] == "FAILED"
    assert online["checks"][0]["detail"].startswith("malformed bundle: bundle: ")
    assert online["record"] is None and online["disclosed"] == {}


def test_api_names_why_a_real_bundle_stops_being_json(
    client: TestClient[Litestar], world: World
) -> None:
    text = world.bundle().decode()
    for edit, rule in (
        (text.replace('"seq":4,', '"seq":4,"seq":5,', 1), "duplicate_member"),
        (text.replace('"tenant":"acme"', '"tenant":"\\udc00"', 1), "lone_surrogate"),
        (text.replace('"seq":4,', '"seq":4e400,', 1), "number_out_of_range"),
    ):
        response = client.post("/v1/verify", content=edit.encode(), headers=JSON)
        assert response.status_code == 200, response.text
        detail = response.json()["checks"][0]["detail"]
        assert detail.startswith("malformed bundle: ") and rule in detail, detail
        assert detail == verify_bundle(edit.encode(), world.keys()).check(1).detail
    repeated = text.replace('"seq":4,', '"seq":4,"seq":5,', 1).encode()
    answer = client.post("/v1/verify", content=repeated, headers=JSON).json()
    assert "$.header.seq" in answer["checks"][0]["detail"]


def test_api_refuses_a_body_not_declared_json(client: TestClient[Litestar], world: World) -> None:
    for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": FORM["Content-Type"]}):
        response = client.post("/v1/verify", content=world.bundle(), headers=headers)
        assert response.status_code == 415
        assert response.json()["code"] == "unsupported_media_type"


def test_api_refuses_a_body_over_1_mib(client: TestClient[Litestar]) -> None:
    response = client.post("/v1/verify", content=b" " * (MAX_BUNDLE_BYTES + 1), headers=JSON)
    assert response.status_code == 413


def test_api_without_a_context_verifies_the_bundle_alone(world: World) -> None:
    with TestClient(_app(None)) as alone:
        result = alone.post("/v1/verify", content=world.bundle(coverage=None), headers=JSON).json()
    assert result["verdict"] == "VERIFICATION INCOMPLETE"
    assert [check["status"] for check in result["checks"]] == [
        "passed",
        "passed",
        "unchecked",
        "unchecked",
        "unchecked",
        "passed",
        "unchecked",
    ]


def test_the_context_is_read_once_for_known_keys(world: World) -> None:
    app = _verify_app()
    keys, trust = world.keys(), world.trust()
    reads = []

    async def context() -> tuple[KeyDirectory, TrustStore]:
        reads.append(1)
        return keys, trust

    app.state.verifier = verifier = OnlineVerifier(context)
    with TestClient(app) as test_client:
        for _ in range(5):
            result = test_client.post("/v1/verify", content=world.bundle(), headers=JSON).json()
            assert result["verdict"] == "VERIFIED"
        form = test_client.post("/verify-record", data={"bundle": world.bundle().decode()})
        assert "VERIFIED" in form.text
    assert (len(reads), verifier.builds) == (1, 1)


def _compromised_keys(world: World) -> KeyDirectory:
    """The world's directory, its header key compromised a minute before the witness saw the
    record (docs/bundle.md, "Compromised keys")."""
    moment = end_of_second(world.sealed_at) - timedelta(minutes=1)
    return world.keys(compromised_at=format_instant(moment))


def test_the_api_applies_a_compromise(world: World) -> None:
    app = _verify_app()
    keys, trust = _compromised_keys(world), world.trust()

    async def context() -> tuple[KeyDirectory, TrustStore]:
        return keys, trust

    app.state.verifier = OnlineVerifier(context)
    with TestClient(app) as test_client:
        result = test_client.post("/v1/verify", content=world.bundle(), headers=JSON).json()
    offline = verify_bundle(world.bundle(), keys, trust)
    assert result["verdict"] == offline.verdict == "FAILED"
    assert [check["status"] for check in result["checks"]] == [
        check.status for check in offline.checks
    ]
    assert result["checks"][2]["status"] == "failed"
    assert "compromised at" in result["checks"][2]["detail"]


def test_a_compromise_marked_while_the_service_runs_is_seen(world: World) -> None:
    app = _verify_app()
    directories = [world.keys(), _compromised_keys(world)]
    clock = [0.0]

    async def context() -> tuple[KeyDirectory, TrustStore]:
        return directories[0], world.trust()

    app.state.verifier = OnlineVerifier(context, clock=lambda: clock[0])
    with TestClient(app) as test_client:
        first = test_client.post("/v1/verify", content=world.bundle(), headers=JSON).json()
        assert first["verdict"] == "VERIFIED"
        directories.pop(0)  # `recordseal keys revoke --compromised-at` ran meanwhile
        clock[0] += 3600
        later = test_client.post("/v1/verify", content=world.bundle(), headers=JSON).json()
    assert later["verdict"] == "FAILED"


def test_the_api_is_documented() -> None:
    with TestClient(_app(None)) as test_client:
        schema = test_client.get("/schema/openapi.json").json()
    operation = schema["paths"]["/v1/verify"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert "header" in body["properties"]
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    result = schema["components"]["schemas"][answer.rsplit("/", 1)[-1]]
    assert {"verdict", "checks", "attestation"} <= set(result["properties"])
    assert "/verify-record" not in schema["paths"]
    # A body that is not JSON is a malformed bundle (200): 400 is only for broken framing.
    refused = operation["responses"]["400"]["content"]["application/problem+json"]["examples"]
    assert set(refused) == {"request_incomplete"}
    assert {"413", "415"} <= set(operation["responses"])


# --- the form ----------------------------------------------------------------------------------


def test_the_form_page(client: TestClient[Litestar]) -> None:
    response = client.get("/verify-record")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    html = response.text
    assert '<html lang="en">' in html
    assert '<label for="bundle">' in html
    assert '<textarea id="bundle" name="bundle"' in html
    assert '<form id="verify-form" method="post" action="/verify-record">' in html
    # One script, the browser verifier's module from this origin; nothing inline.
    assert re.findall(r"<script[^>]*>", html) == [
        '<script type="module" src="/static/verify/page.js">'
    ]
    assert "<style" not in html and re.search(r"<[^>]*\son[a-z]+=", html) is None
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self';" in policy
    assert "frame-ancestors 'none'" in policy and "unsafe" not in policy
    assert response.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("name", ["page.js", "checks.js", "json.js", "verify.css"])
def test_the_browser_verifier_is_served_as_static_files(
    client: TestClient[Litestar], name: str
) -> None:
    response = client.get(f"/static/verify/{name}")
    assert response.status_code == 200
    kind = "text/css" if name.endswith(".css") else "javascript"
    assert kind in response.headers["content-type"]


@pytest.mark.parametrize(
    ("edit", "verdict"),
    [
        (None, "VERIFIED"),
        (lambda d: d["fields"][0].update(value=1), "FAILED"),
        (SEAL_TAMPERING["inclusion proof hash"][0], "FAILED"),
        (lambda d: d.update(coverage=None, seal=None), "VERIFICATION INCOMPLETE"),
    ],
    ids=["verified", "failed", "failed-seal", "incomplete"],
)
def test_the_form_shows_the_verdict_checks_and_bracket(
    client: TestClient[Litestar], world: World, edit: object, verdict: str
) -> None:
    bundle = world.bundle() if edit is None else tampered(world.bundle(), edit)  # type: ignore[arg-type]
    response = client.post(
        "/verify-record", content=urlencode({"bundle": bundle.decode()}), headers=FORM
    )
    assert response.status_code == 200
    html = response.text
    assert _verdict(html) == verdict
    assert html.count("<tr><td>") >= 7
    # A failed bundle shows a time bracket only where check 7 passed (its signed header's);
    # a broken seal proves no time: no bracket, and the sentence says so.
    broken_seal = edit is SEAL_TAMPERING["inclusion proof hash"][0]
    assert ('<dl id="time-bracket">' in html) == (not broken_seal)
    assert "<caption>The seven checks</caption>" in html
    sentence = {
        "VERIFIED": "All seven checks passed.",
        "FAILED": "Check 4 (sealed batch) failed: the bundle is not what it claims. Time bracket:"
        " none: a bundle that failed proves no time for its record."
        if broken_seal
        else "Check 2 (record tree) failed: the bundle is not what it claims. Its time bracket"
        " is the signed header's: check 7 passed.",
        "VERIFICATION INCOMPLETE": "Nothing failed, but checks 4, 5, 7 could not be done:",
    }[verdict]
    assert sentence in unescape(html.split('<p id="summary">', 1)[1].split("</p>", 1)[0])
    # the pasted bundle is kept in the text area
    assert unescape(html.split('name="bundle"')[1].split(">", 1)[1].split("</textarea>")[0]) == (
        bundle.decode()
    )


def test_everything_shown_is_escaped(client: TestClient[Litestar], world: World) -> None:
    hostile = "<script>alert(1)</script>"
    bundle = tampered(world.bundle(), lambda d: d["header"].update(record_type=hostile))
    html = client.post(
        "/verify-record", content=urlencode({"bundle": bundle.decode()}), headers=FORM
    ).text
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    malformed = '{"format": "</textarea><script>alert(1)</script>"'
    html = client.post(
        "/verify-record", content=urlencode({"bundle": malformed}), headers=FORM
    ).text
    assert _verdict(html) == "FAILED"
    assert "<script>" not in html and "</textarea><script>" not in html


def test_an_empty_form_asks_for_a_bundle(client: TestClient[Litestar]) -> None:
    response = client.post("/verify-record", content="bundle=", headers=FORM)
    assert response.status_code == 400
    assert "Paste a bundle" in response.text
    assert 'role="alert"' in response.text


def test_a_bundle_over_1_mib_gets_a_clear_message(client: TestClient[Litestar]) -> None:
    response = client.post(
        "/verify-record", content="bundle=" + "a" * (MAX_BUNDLE_BYTES + 1), headers=FORM
    )
    assert response.status_code == 413
    assert "larger than 1 MiB" in response.text
    assert "recordseal verify" in response.text


def test_a_form_body_beyond_the_limit_gets_the_same_message(client: TestClient[Litestar]) -> None:
    response = client.post(
        "/verify-record", content="bundle=" + "%7B" * (MAX_BUNDLE_BYTES + 2000), headers=FORM
    )
    assert response.status_code == 413
    assert "larger than 1 MiB" in response.text


def test_the_form_needs_url_encoding(client: TestClient[Litestar], world: World) -> None:
    response = client.post(
        "/verify-record",
        content=json.dumps({"bundle": "x"}),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 415


def test_invalid_utf8_in_the_form_is_refused(client: TestClient[Litestar]) -> None:
    response = client.post("/verify-record", content="bundle=%FF%FE", headers=FORM)
    assert response.status_code == 400


def test_api_reports_a_declared_gap_as_incomplete() -> None:
    """The online verifier is the Python one: a window across a gap header is INCOMPLETE and
    names the range (docs/bundle.md, rule 6.15); a window before it is VERIFIED."""
    world = gap_world()
    with TestClient(_app(world)) as gap_client:
        across = gap_client.post(
            "/v1/verify", content=world.bundle(coverage=(1, LAST_SEQ)), headers=JSON
        ).json()
        before = gap_client.post("/v1/verify", content=world.bundle(coverage=(1, 4)), headers=JSON)
    assert across["verdict"] == "VERIFICATION INCOMPLETE"
    assert across["checks"][5]["status"] == "unchecked"
    assert f"seqs 5\u2013{GAP_SEQ - 1} declared lost on " in across["checks"][5]["detail"]
    assert before.json()["verdict"] == "VERIFIED"


def test_a_document_that_is_not_a_bundle_is_said_to_be_none_and_nothing_passed(
    client: TestClient[Litestar],
) -> None:
    """Not a bundle: the page says so, with the reason, and shows no check (it read "field
    commitments failed"), no record and no time bracket."""
    response = client.post(
        "/verify-record", content=urlencode({"bundle": '{"hello": "world"}'}), headers=FORM
    )
    html = response.text
    assert _verdict(html) == "FAILED"
    said = unescape(html.split('<p id="summary">', 1)[1].split("</p>", 1)[0])
    assert said.startswith("This is not a disclosure bundle: ")
    assert said.endswith(". None of the seven checks was run.")
    section = html.split('id="server-result"', 1)[1].split("</section>", 1)[0]
    assert "passed" not in section and "field commitments" not in section
    assert 'id="checks"' not in section and 'id="time-bracket"' not in section

"""/verify-record in a real browser: Debian's Chromium driven by Playwright.

A granian process serves the verify routes and the static modules. With script, the page
verifies in the browser: the tests give it bundles (pasted, picked, dropped), a key directory
and a trust store (as files, or the opt-in GET /v1/keys), read the verdict and the checks,
compare them with the Python verifier, and intercept every request after page load to show
that none carries anything of the bundle. Without script, the form posts to the server.
Needs ``apt-get install chromium`` and ``pip install playwright`` (Playwright drives
/usr/bin/chromium; no browser download).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# `make test` installs both (Makefile SYSTEM_TOOLS, pyproject dev extras): a missing one fails.
from playwright import sync_api

from recordseal.verify import (
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from tests.servers import asgi_server, chromium, screenshot_dir

from ..verify.conftest import tampered
from ..verify.factory import World
from ..verify.test_tamper import SEAL_TAMPERING


@pytest.fixture(scope="module")
def world() -> World:
    return World()


@pytest.fixture(scope="module")
def server(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("browser")
    (folder / "keys.json").write_text(json.dumps(world.keys_document()))
    (folder / "trust.json").write_text(json.dumps(world.trust_document()))
    environment = {
        **os.environ,
        "RECORDSEAL_VERIFY_KEYS": str(folder / "keys.json"),
        "RECORDSEAL_VERIFY_TRUST": str(folder / "trust.json"),
    }
    with asgi_server("tests.browser.verify_app:app", "/verify-record", environment) as port:
        yield f"http://localhost:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


class VerifierPage:
    """The page after load, with every later request intercepted and recorded."""

    def __init__(self, page: sync_api.Page) -> None:
        self.page = page
        self.requests: list[sync_api.Request] = []
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(str(error)))

    def _console(self, message: sync_api.ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(message.text)

    def intercept(self) -> None:
        def record(route: sync_api.Route) -> None:
            self.requests.append(route.request)
            route.continue_()

        self.page.route("**/*", record)

    def files(self, keys: dict[str, Any] | None, trust: dict[str, Any] | None) -> None:
        for name, document in (("keys", keys), ("trust", trust)):
            if document is not None:
                selector = f"#{name}-file"
                payload = {"name": f"{name}.json", "mimeType": "application/json"}
                self.page.set_input_files(
                    selector, {**payload, "buffer": json.dumps(document).encode()}
                )

    def verify(self, bundle: bytes) -> str:
        self.page.fill("#bundle", bundle.decode())
        self.page.get_by_role("button", name="Verify").click()
        self.page.wait_for_selector("#result[data-verified-in=browser] #verdict")
        return self.page.inner_text("#verdict")

    def statuses(self) -> list[str]:
        rows = self.page.locator("#checks tbody tr")
        return [rows.nth(i).locator("td").nth(2).inner_text() for i in range(rows.count())]


@pytest.fixture
def verifier(browser: sync_api.Browser, server: str) -> Iterator[VerifierPage]:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    wrapped = VerifierPage(page)
    page.goto(f"{server}/verify-record")
    page.wait_for_selector("html[data-verifier=browser]")
    assert page.locator("#browser-inputs").is_visible()
    wrapped.intercept()
    try:
        yield wrapped
        assert wrapped.problems == []  # no CSP violation, no script error
    finally:
        page.close()


def _python_statuses(world: World, bundle: bytes, keys: bool, trust: bool) -> list[str]:
    result = verify_bundle(
        bundle,
        load_key_directory(json.dumps(world.keys_document())) if keys else None,
        load_trust_store(json.dumps(world.trust_document())) if trust else None,
    )
    return [check.status for check in result.checks]


def _bundle_content(world: World, bundle: bytes) -> list[str]:
    """Strings that only the bundle holds: any of them in a request would be a leak."""
    document = json.loads(bundle)
    needles = [document["header"]["record_id"], document["signature"], document["header"]["root"]]
    needles += [field["salt"] for field in document["fields"]]
    return needles


def test_a_verified_bundle_in_the_browser(verifier: VerifierPage, world: World) -> None:
    bundle = world.bundle()
    verifier.files(world.keys_document(), world.trust_document())
    assert verifier.verify(bundle) == "VERIFIED"
    assert verifier.statuses() == ["passed"] * 7
    page = verifier.page
    assert "witness.example" in page.inner_text("#time-bracket")
    disclosed = page.inner_text("#disclosed")
    assert "o:/amount" in disclosed and "1400" in disclosed and '"EUR"' in disclosed
    assert verifier.requests == []
    page.screenshot(path=str(screenshot_dir() / "verify-record.png"), full_page=True)


def test_the_bundle_alone_is_incomplete(verifier: VerifierPage, world: World) -> None:
    bundle = world.bundle()
    assert verifier.verify(bundle) == "VERIFICATION INCOMPLETE"
    assert verifier.statuses() == _python_statuses(world, bundle, keys=False, trust=False)
    assert verifier.statuses() == ["passed", "passed", *["unchecked"] * 5]
    assert "no public key" in verifier.page.locator("#checks tbody tr").nth(2).inner_text()
    assert verifier.requests == []


def test_keys_without_trust_leave_the_witnesses_unchecked(
    verifier: VerifierPage, world: World
) -> None:
    bundle = world.bundle()
    verifier.files(world.keys_document(), None)
    assert verifier.verify(bundle) == "VERIFICATION INCOMPLETE"
    assert verifier.statuses() == _python_statuses(world, bundle, keys=True, trust=False)
    assert "hosted-ingest" in verifier.page.inner_text("#time-bracket")


def test_a_tampered_bundle_fails(verifier: VerifierPage, world: World) -> None:
    document = json.loads(world.bundle())
    document["fields"][0]["value"] = 999999
    bundle = json.dumps(document, indent=2).encode()
    verifier.files(world.keys_document(), world.trust_document())
    assert verifier.verify(bundle) == "FAILED"
    assert verifier.statuses() == _python_statuses(world, bundle, keys=True, trust=True)
    assert verifier.statuses()[1] == "failed"
    assert verifier.page.locator("#disclosed").count() == 0


def test_a_new_verification_takes_the_previous_verdict_away_at_once(
    verifier: VerifierPage, world: World
) -> None:
    """Verifying again clears the last verdict in the same task as the click, before any
    signature is checked: a verdict never stands beside inputs it was not about (and a test
    waiting for ``#verdict`` never reads the one before)."""
    verifier.files(world.keys_document(), world.trust_document())
    assert verifier.verify(world.bundle()) == "VERIFIED"
    verifier.page.fill("#bundle", '{"format": "recordseal/bundle/v2"}')
    shown = verifier.page.evaluate(
        "() => { document.querySelector('#verify-form button[type=submit]').click();"
        " return [document.querySelector('#verdict')?.textContent ?? null,"
        " document.querySelector('#verifying')?.textContent ?? null]; }"
    )
    assert shown == [None, "Verifying…"]
    verifier.page.wait_for_selector("#result[data-verified-in=browser] #verdict")
    assert verifier.page.inner_text("#verdict") == "FAILED"
    assert verifier.page.locator("#verifying").count() == 0


def test_a_document_that_is_not_a_bundle_is_said_to_be_none(verifier: VerifierPage) -> None:
    """FAILED, and the page says why in one sentence: no check table (its check 1 read "field
    commitments failed"), no record, no time bracket, nothing passed."""
    assert verifier.verify(b'{"format": "recordseal/bundle/v2"}') == "FAILED"
    said = verifier.page.inner_text("#summary")
    assert said.startswith("This is not a disclosure bundle: bundle: ")
    assert said.endswith(". None of the seven checks was run.")
    result = verifier.page.locator("#result")
    assert result.locator("#checks, #time-bracket, dl").count() == 0
    assert "passed" not in result.inner_text()


def test_a_failed_bundle_shows_a_time_bracket_only_where_check_7_passed(
    verifier: VerifierPage, world: World
) -> None:
    verifier.files(world.keys_document(), world.trust_document())
    document = json.loads(world.bundle())
    document["fields"][0]["value"] = 1  # the record tree fails; the seal still holds
    assert verifier.verify(json.dumps(document).encode()) == "FAILED"
    assert verifier.page.locator("#time-bracket").count() == 1
    assert verifier.page.inner_text("#summary") == (
        "Check 2 (record tree) failed: the bundle is not what it claims."
        " Its time bracket is the signed header's: check 7 passed."
    )
    broken = tampered(world.bundle(), SEAL_TAMPERING["log index"][0])
    assert verifier.verify(broken) == "FAILED"
    assert verifier.page.locator("#time-bracket").count() == 0
    assert verifier.page.inner_text("#summary") == (
        "Check 4 (sealed batch) failed: the bundle is not what it claims."
        " Time bracket: none: a bundle that failed proves no time for its record."
    )


def test_nothing_after_page_load_carries_the_bundle(
    verifier: VerifierPage, world: World, server: str
) -> None:
    """Every request after load is intercepted: with the opt-in key fetch there is exactly
    one, GET /v1/keys without a body, and no request names anything of the bundle."""
    bundle = world.bundle()
    page = verifier.page
    page.check("#fetch-keys")
    assert page.is_disabled("#keys-file")
    verifier.files(None, world.trust_document())
    assert verifier.verify(bundle) == "VERIFIED"
    assert [(r.method, r.url) for r in verifier.requests] == [("GET", f"{server}/v1/keys")]
    needles = _bundle_content(world, bundle)
    for request in verifier.requests:
        sent = request.url + json.dumps(request.headers) + (request.post_data or "")
        assert not [needle for needle in needles if needle in sent]
        assert request.post_data is None


def test_both_documents_fetched_reach_verified_and_say_whose_word_they_are(
    verifier: VerifierPage, world: World, server: str
) -> None:
    """The two opt-in fetches take the place of both files: a pasted bundle reaches VERIFIED
    with no file at all. The page says plainly, before and after, that this rests on the
    service's own word; neither request carries anything of the bundle."""
    page = verifier.page
    warning = page.locator("#fetch-warning")
    assert warning.is_visible()
    assert "Trusting fetched material means trusting this service." in warning.inner_text()
    page.check("#fetch-keys")
    page.check("#fetch-trust")
    assert page.is_disabled("#keys-file") and page.is_disabled("#trust-file")
    bundle = world.bundle()
    assert verifier.verify(bundle) == "VERIFIED"
    assert verifier.statuses() == ["passed"] * 7
    assert [(r.method, r.url) for r in verifier.requests] == [
        ("GET", f"{server}/v1/keys"),
        ("GET", f"{server}/v1/trust"),
    ]
    needles = _bundle_content(world, bundle)
    for request in verifier.requests:
        sent = request.url + json.dumps(request.headers) + (request.post_data or "")
        assert not [needle for needle in needles if needle in sent]
    said = page.inner_text("#result #provenance")
    assert "own key directory and witness trust store, fetched from it" in said
    assert "trusting this result means trusting this service" in said
    # Unticked again: the files are back, and the result rests on them alone.
    page.uncheck("#fetch-trust")
    assert page.is_enabled("#trust-file")
    page.get_by_role("button", name="Verify").click()  # waits on the new verdict, not the old
    sync_api.expect(page.locator("#verdict")).to_have_text("VERIFICATION INCOMPLETE")
    assert "own key directory, fetched" in page.inner_text("#result #provenance")


def test_a_result_from_files_alone_claims_no_service_word(
    verifier: VerifierPage, world: World
) -> None:
    verifier.files(world.keys_document(), world.trust_document())
    assert verifier.verify(world.bundle()) == "VERIFIED"
    assert verifier.page.locator("#provenance").count() == 0


def test_a_dropped_bundle_file_is_verified(verifier: VerifierPage, world: World) -> None:
    page = verifier.page
    transfer = page.evaluate_handle(
        """(text) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([text], "bundle.json", {type: "application/json"}));
            return transfer;
        }""",
        world.bundle().decode(),
    )
    page.dispatch_event("#bundle", "drop", {"dataTransfer": transfer})
    sync_api.expect(page.locator("#bundle")).not_to_have_value("")
    page.get_by_role("button", name="Verify").click()
    page.wait_for_selector("#result[data-verified-in=browser] #verdict")
    assert page.inner_text("#verdict") == "VERIFICATION INCOMPLETE"
    assert verifier.requests == []


def test_a_bundle_file_can_be_picked(verifier: VerifierPage, world: World) -> None:
    page = verifier.page
    file = {"name": "b.json", "mimeType": "application/json", "buffer": world.bundle()}
    page.set_input_files("#bundle-file", file)
    sync_api.expect(page.locator("#bundle")).not_to_have_value("")
    verifier.files(world.keys_document(), world.trust_document())
    page.get_by_role("button", name="Verify").click()
    page.wait_for_selector("#result[data-verified-in=browser] #verdict")
    assert page.inner_text("#verdict") == "VERIFIED"


def test_a_token_not_in_canonical_base64_is_malformed_in_the_page_and_the_cli(
    verifier: VerifierPage, world: World, tmp_path: Path
) -> None:
    """Rule M8: the page and ``recordseal verify`` both report a malformed bundle, with no
    record and no disclosed value (docs/bundle.md, "A malformed bundle")."""
    document = json.loads(world.bundle())
    document["seal"]["timestamps"] = [{"authority": "tsa.example", "token": "AB=="}]
    bundle = json.dumps(document).encode()
    verifier.files(world.keys_document(), world.trust_document())
    assert verifier.verify(bundle) == "FAILED"
    page = verifier.page
    said = page.inner_text("#summary")
    assert said.startswith("This is not a disclosure bundle: ") and "$.seal.timestamps[0]" in said
    assert page.locator("#result dl").count() == 0  # no record, no time bracket
    assert page.locator("#disclosed, #checks").count() == 0
    (tmp_path / "bundle.json").write_bytes(bundle)
    (tmp_path / "keys.json").write_text(json.dumps(world.keys_document()))
    (tmp_path / "trust.json").write_text(json.dumps(world.trust_document()))
    command = [sys.executable, "-m", "recordseal.cli", "verify", str(tmp_path / "bundle.json")]
    command += ["--keys", str(tmp_path / "keys.json"), "--trust", str(tmp_path / "trust.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    # The same words: the page's sentence is the report's, under its verdict.
    assert done.stdout == f"verdict     FAILED\n            {said}\n"
    assert not done.stdout.startswith("record") and "\ndisclosed" not in done.stdout
    assert "o:/amount" not in done.stdout


def test_an_invalid_key_directory_is_refused_by_name(verifier: VerifierPage, world: World) -> None:
    document = world.keys_document()
    document["keys"][0]["key_id"] = "0" * 16
    verifier.files(document, None)
    verifier.page.fill("#bundle", world.bundle().decode())
    verifier.page.get_by_role("button", name="Verify").click()
    error = verifier.page.wait_for_selector("#input-error")
    assert error is not None
    assert "key directory: keys[0]: key_id" in error.inner_text()


def test_a_trust_store_picked_as_the_key_directory_is_named(
    verifier: VerifierPage, world: World
) -> None:
    verifier.files(world.trust_document(), None)  # the trust store, in the key directory's input
    verifier.page.fill("#bundle", world.bundle().decode())
    verifier.page.get_by_role("button", name="Verify").click()
    error = verifier.page.wait_for_selector("#input-error")
    assert error is not None
    assert "this is a trust store (recordseal/trust/v1), not a key directory" in error.inner_text()


def test_without_script_the_server_verifies(
    browser: sync_api.Browser, server: str, world: World
) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{server}/verify-record")
        assert page.locator("#browser-inputs").is_hidden()
        page.get_by_label("Bundle", exact=True).fill(world.bundle().decode())
        page.get_by_role("button", name="Verify").click()
        page.wait_for_selector("#server-result #verdict")
        assert page.inner_text("#verdict") == "VERIFIED"
    finally:
        context.close()


def test_ml_dsa_44_signatures_verify_in_the_page(verifier: VerifierPage) -> None:
    """A dual-signed checkpoint (Ed25519 and ML-DSA-44 log keys) cosigned by an ML-DSA-44
    witness: Chromium's own WebCrypto ML-DSA-44 verifies it in the page (no library is
    vendored), under each log-signature policy, with the Python verifier's statuses."""
    from recordseal.tlog import MLDSA44CosignatureSigner

    from ..verify.factory import ORIGIN, WITNESS

    pq = World(
        log_mldsa=MLDSA44CosignatureSigner.generate(ORIGIN, clock=None),
        witness=MLDSA44CosignatureSigner.generate(WITNESS),
    )
    page = verifier.page
    assert page.evaluate(
        "async () => { const k = await crypto.subtle.generateKey({name: 'ML-DSA-44'}, false,"
        " ['sign', 'verify']); return k.publicKey.algorithm.name; }"
    ) == "ML-DSA-44"  # fmt: skip
    bundle = pq.bundle()
    for required in (None, ["ML-DSA-44"], ["Ed25519", "ML-DSA-44"]):
        verifier.files(pq.keys_document(), pq.trust_document(checkpoint_signatures=required))
        assert verifier.verify(bundle) == "VERIFIED", (required, verifier.statuses())
        assert "ML-DSA-44" in page.locator("#checks tbody tr").nth(3).inner_text()
    # An old key directory (Ed25519 alone) and a policy requiring ML-DSA-44: rule 4.9.
    # (its Ed25519 entry by its key's length: the entries' order follows their random vkeys)
    ed25519 = [entry for entry in pq.keys_document()["logs"]
               if len(base64.b64decode(entry["vkey"].split("+", 2)[2])) == 1 + 32]  # fmt: skip
    assert len(ed25519) == 1
    old = {**pq.keys_document(), "logs": ed25519}
    trust = pq.trust_document(checkpoint_signatures=["ML-DSA-44"])
    verifier.files(old, trust)
    assert verifier.verify(bundle) == "VERIFICATION INCOMPLETE"
    expected = verify_bundle(
        bundle, load_key_directory(json.dumps(old)), load_trust_store(json.dumps(trust))
    )
    assert verifier.statuses() == [check.status for check in expected.checks]
    # The witness's ML-DSA-44 cosignature changed: check 5 fails.
    document = json.loads(bundle)
    lines = document["seal"]["proof"].split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"— {WITNESS} "))
    lines[at] = lines[at][:-40] + ("A" if lines[at][-40] != "A" else "B") + lines[at][-39:]
    document["seal"]["proof"] = "\n".join(lines)
    verifier.files(pq.keys_document(), pq.trust_document())
    tampered = json.dumps(document).encode()
    assert verifier.verify(tampered) == "FAILED"
    assert verifier.statuses()[4] == "failed"
    expected = verify_bundle(
        tampered,
        load_key_directory(json.dumps(pq.keys_document())),
        load_trust_store(json.dumps(pq.trust_document())),
    )
    assert verifier.statuses() == [check.status for check in expected.checks]
    assert verifier.requests == []

"""The ingest routes with the native pipeline answer and store what they do with the reference
pipeline (the pure-Python read, commitment, sealing and signing: ``ReferencePipeline``), for
generated requests (hypothesis: single posts and batches, keyed or not, with malformed bodies,
envelopes and payloads mixed in), on both backends: statuses and problems byte for byte, every
answer's members and signed header, and the rows stored (tests/ingest_answers.py names what
chance decides). Both services live through all the examples: each example is compared on
the answers it got and on everything stored so far."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordseal.crypto.signing import HeaderSigner
from recordseal.services import header_keys
from recordseal.services.reference_pipeline import ReferencePipeline
from recordseal.settings import Settings
from recordseal.storage import native_placing
from tests.ingest_answers import (
    STREAMS,
    Names,
    Request,
    batch_body,
    key_of,
    normalised,
    run,
    service,
    single_body,
    stored,
)
from tests.services.test_reading import requests as bodies


@pytest.fixture
def services(
    store_settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Iterator[dict[str, Any]]:
    """A service with the native pipeline and one with the reference pipeline, each on its
    own store of the backend."""
    with ExitStack() as stack:
        native = stack.enter_context(service(store_settings.data_dir, store_settings.database_url))
        url = None
        if store_settings.database_url is not None:  # another schema of the cluster
            url = request.getfixturevalue("postgres").url()
        with monkeypatch.context() as patch:
            patch.setattr(header_keys, "pipeline_for", _reference_pipeline)
            reference = stack.enter_context(service(tmp_path / "reference", url))
        yield {"native": native, "reference": reference}


def _reference_pipeline(signer: HeaderSigner) -> ReferencePipeline:
    """The reference service's pipeline for its header key (a file key: it has a seed)."""
    assert signer.seed is not None
    return ReferencePipeline(signer.seed)


@st.composite
def scenarios(draw: st.DrawFn) -> list[Request]:
    """A few requests: adversarial ones (tests/services/test_reading.py), whose records name
    the scenario's streams now and then, and ones as clients send them (the recorded
    scenario's generator, tests/ingest_answers.py), mostly accepted; some retried."""
    requests = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            body = draw(bodies())
            stream = draw(st.sampled_from([s["name"] for s in STREAMS]))
            text = body.body.replace(b'"orders"', b'"' + stream.encode() + b'"')
            request = Request("/v1/records:batch" if body.batch else "/v1/records", text, body.key)
        else:
            rng = random.Random(draw(st.integers(0, 2**32)))
            batch = rng.random() < 0.5
            text = batch_body(rng) if batch else single_body(rng)
            key = key_of(rng) if rng.random() < 0.4 else None
            request = Request("/v1/records:batch" if batch else "/v1/records", text, key)
        requests.append(request)
        if request.key is not None and draw(st.booleans()):
            requests.append(Request(request.path, request.body, request.key))  # a retry
    return requests


#: Hypothesis' settings of the services' oracles: the services live through all examples.
SERVICE_EXAMPLES = dict(
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


@settings(max_examples=40, **SERVICE_EXAMPLES)
@given(requests=scenarios())
def test_native_ingest_answers_and_stores_as_the_reference(
    services: dict[str, Any], requests: list[Request]
) -> None:
    outcomes = {}
    for name, (client, app_settings) in services.items():
        names = Names()
        answers = normalised(run(client, {}, requests), names)
        outcomes[name] = (answers, stored(app_settings, names))
    assert outcomes["native"][0] == outcomes["reference"][0]
    assert outcomes["native"][1] == outcomes["reference"][1]


@pytest.fixture
def placements(
    store_settings: Settings, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[dict[str, Any]]:
    """Two services of the native pipeline, each on its own store of the backend: the test
    has one place by the native placement and the other by the reference placement."""
    with ExitStack() as stack:
        native = stack.enter_context(service(store_settings.data_dir, store_settings.database_url))
        url = None
        if store_settings.database_url is not None:  # another schema of the cluster
            url = request.getfixturevalue("postgres").url()
        reference = stack.enter_context(service(tmp_path / "reference", url))
        yield {"native": native, "reference": reference}


@settings(max_examples=25, **SERVICE_EXAMPLES)
@given(requests=scenarios())
def test_native_placement_answers_and_stores_as_the_reference_placement(
    placements: dict[str, Any], requests: list[Request]
) -> None:
    """The backends' placement (storage/native_placing.py) decided by the core and by the
    reference rules of storage/placing.py: the same answers and the same rows."""
    assert native_placing.extension is not None
    outcomes = {}
    for name, (client, app_settings) in placements.items():
        names = Names()
        with pytest.MonkeyPatch.context() as patch:
            if name == "reference":
                patch.setattr(native_placing, "extension", None)
            answers = normalised(run(client, {}, requests), names)
        outcomes[name] = (answers, stored(app_settings, names))
    assert outcomes["native"][0] == outcomes["reference"][0]
    assert outcomes["native"][1] == outcomes["reference"][1]

"""A fixed scenario of ingest requests and what the service answered and stored, in a form two
implementations can be compared in (``tests/vectors/ingest_answers.json``).

The scenario (:func:`scenario`) is drawn once from a seeded generator: single posts and
batches, with and without ``Idempotency-Key`` (replays and reuses included), every kind of
refusal the ingest routes give (the body's faults, the schema's, the envelope's, the
payload's, an unknown stream, an erased subject, a key), and payloads of many shapes and
spellings. :func:`run` posts it to a service through HTTP; :func:`normalised` keeps of each
answer what does not depend on chance: record ids, subject handles and chain leaves become
names in order of appearance (``R1``, ``S1``, ``L1``), times become ``T``, roots and
signatures are left out (they depend on random keys and ids). Problems are kept byte for
byte. :func:`stored` is the store's rows in the same names.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recordseal.settings import Settings

#: The header-signing key of the scenario's service: a fixed key id in every answer.
HEADER_SEED = bytes(range(7, 39))
STREAMS = [
    {"name": "orders", "declarations": {"o:/amount": "money", "o:/at": "timestamp"}},
    {"name": "strict", "declarations": {"o:/a": "integer", "oa:/b/*": "text"}, "strict": True},
    {"name": "audit"},
]
SUBJECTS = ["alice", "bob", "carol", "dave", "erin", "frank/ü", "gone"]
#: Big bodies are written with markers (the file stays small): ``<<c*n>>`` for ``n`` times
#: the letter c, ``<<fields*n>>`` for ``"f0":0,"f1":1,...`` up to ``n`` members.
FILL = re.compile(r"<<(\w+)\*(\d+)>>")


@dataclass
class Request:
    path: str
    body: bytes
    key: str | None = None

    def as_json(self) -> dict[str, Any]:
        item: dict[str, Any] = {"path": self.path, "key": self.key}
        try:
            item["body"] = _compress(self.body.decode())
        except UnicodeDecodeError:
            item["body_hex"] = self.body.hex()
        return item

    @classmethod
    def of(cls, item: dict[str, Any]) -> Request:
        if "body_hex" in item:
            body = bytes.fromhex(item["body_hex"])
        else:
            body = FILL.sub(_fill, item["body"]).encode()
        return cls(item["path"], body, item["key"])


def _fill(marker: re.Match[str]) -> str:
    what, count = marker.group(1), int(marker.group(2))
    if what == "fields":
        return _fields(count)
    return what * count


def _fields(count: int) -> str:
    return ",".join(f'"f{i}":{i}' for i in range(count))


def _compress(text: str) -> str:
    text = re.sub(
        r'"f0":0(,"f\d+":\d+)+', lambda m: f"<<fields*{m.group(0).count(',') + 1}>>", text
    )
    return re.sub(r"([a-z])\1{99,}", lambda m: f"<<{m.group(1)}*{len(m.group(0))}>>", text)


# --- the scenario -------------------------------------------------------------------------------


def scenario(seed: int = 29) -> list[Request]:
    """The requests, in order (deterministic for a seed)."""
    rng = random.Random(seed)
    requests: list[Request] = []
    keyed: list[Request] = []

    def add(request: Request) -> None:
        requests.append(request)
        if request.key is not None:
            keyed.append(request)

    for number in range(160):
        roll = rng.random()
        if number == 59:
            envelope = {"stream": "audit", "record_type": "t",
                        "occurred_at": "2026-11-21T08:00:00Z", "subject_id": "gone"}  # fmt: skip
            add(
                Request("/v1/records", (json.dumps(envelope)[:-1] + ',"payload":{"a":1}}').encode())
            )
        elif number == 60:
            add(Request("/v1/subjects/gone/erase", b""))
        elif roll < 0.45:
            key = key_of(rng) if rng.random() < 0.3 else None
            add(Request("/v1/records", single_body(rng), key))
        elif roll < 0.8:
            key = key_of(rng) if rng.random() < 0.35 else None
            add(Request("/v1/records:batch", batch_body(rng), key))
        elif keyed:
            again = rng.choice(keyed)
            if rng.random() < 0.6:
                add(Request(again.path, again.body, again.key))  # a retry: replayed
            else:
                other = single_body(rng) if again.path == "/v1/records" else batch_body(rng)
                add(Request(again.path, other, again.key))  # the key with another request
        else:
            add(Request("/v1/records", single_body(rng)))
    return requests


def key_of(rng: random.Random) -> str:
    good = f"key-{rng.randrange(10**6)}.{rng.choice('abc')}:{rng.randrange(100)}"
    return rng.choice([good] * 8 + ["", "has space", "a#b", "é", "x" * 256])


def single_body(rng: random.Random) -> bytes:
    return rng.choice([_record_text] * 12 + [_shape_fault] * 3 + [_body_fault] * 3 + [_big_record])(
        rng
    ).encode()


def batch_body(rng: random.Random) -> bytes:
    kind = rng.random()
    items = [
        rng.choice([_record_text] * 10 + [_shape_fault] * 2 + [_big_record])(rng)
        for _ in range(rng.randint(1, 8))
    ]
    if kind < 0.04:
        return b'{"records":[]}'
    if kind < 0.06:
        return ('{"records":[' + ",".join(["1"] * 1001) + "]}").encode()
    if kind < 0.08:
        return ("[" + ",".join(items) + "]").encode()
    if kind < 0.10:
        return b'{"records":{"a":1}}'
    if kind < 0.12:
        return ('{"records":[' + ",".join(items) + '],"more":1}').encode()
    if kind < 0.16:
        return _body_fault(rng, "{" + '"records" : [ ' + " , ".join(items) + " ]}").encode()
    space = rng.choice(["", " ", "\n  "])
    return ("{" + space + '"records":' + space + "[" + f",{space}".join(items) + "]}").encode()


def _envelope(rng: random.Random) -> dict[str, Any]:
    stream = rng.choice(["orders"] * 4 + ["strict", "audit", "audit", "nowhere"])
    record_type = rng.choice(
        ["order.placed"] * 12 + ["", "t" * 129, "é" * 128, "tab\there", "nel\u0085"]
    )
    subject = rng.choice([*SUBJECTS, "", "s" * 257, "ok\x7f"] if rng.random() < 0.1 else SUBJECTS)
    occurred = rng.choice(
        ["2026-11-21T08:00:00Z"] * 16
        + ["2026-11-21T09:30:00.250+01:30", "2024-02-29t23:59:59.000001z", "2026-11-21T08:00:60Z"]
        + ["yesterday", "2026-02-30T00:00:00Z", "2026-11-21 08:00:00Z"]
    )
    return {"stream": stream, "record_type": record_type, "occurred_at": occurred,
            "subject_id": subject}  # fmt: skip


def _payload(rng: random.Random, stream: str) -> str:
    """A payload's text: spelled as a client might, sometimes breaking a rule."""
    if stream == "strict" and rng.random() < 0.7:
        a = rng.choice(["1", "1.0", "1e2", "-0", "2.5", '"x"'])
        b = ",".join(
            json.dumps(rng.choice(["t", "ü", "e\u0301"])) for _ in range(rng.randint(0, 3))
        )
        return f'{{"a":{a},"b":[{b}]}}' if rng.random() < 0.8 else f'{{"a":{a},"c":1}}'
    if stream == "orders" and rng.random() < 0.7:
        amount = rng.choice(["1500", "1500.0", "15e2", "12.50", '"12.50"', "9007199254740993"])
        at = rng.choice(['"2026-11-21T08:00:00+01:00"', '"noon"'])
        return f'{{"amount":{amount},"at":{at},"note":{json.dumps(_text(rng))}}}'
    return rng.choice(
        [
            lambda: json.dumps(_value(rng, 3), ensure_ascii=rng.random() < 0.5),
            lambda: json.dumps({"n": rng.randrange(10**6), "tags": ["a", "b"], "e": {}, "z": []}),
            lambda: '{"b":1,"a":2,"c":{"y":null,"x":true}}',
            lambda: '{ "x" : 1.0 , "y" : 1e0 , "z" : -0 }',
            lambda: '{"\\u00e9t\\u00e9":"\\ud83d\\ude00","a\\/b":"\\n"}',
            lambda: "[1,2]",
            lambda: "{}",
            lambda: '"text"',
            lambda: '{"ctl\\u0001":1}',
            lambda: "{" + _fields(rng.choice([4096, 4097])) + "}",
            lambda: '{"' + "p" * 600 + '":1}',
            lambda: '{"a":' * 122 + "1" + "}" * 122,
        ]
    )()


def _text(rng: random.Random) -> str:
    return rng.choice(["ring twice", "é€\U0001f600", "line\nbreak", 'quote"back\\slash', ""])


def _value(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.4:
        return rng.choice([None, True, False, 0, -7, 2**53 - 1, 0.5, -1e-7, 1e21, "s", "ü", ""])
    if rng.random() < 0.5:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["a", "b", "ü", "/", "~", "0"]): _value(rng, depth - 1) for _ in range(3)}


def _record_text(rng: random.Random) -> str:
    envelope = _envelope(rng)
    members = [f"{json.dumps(k)}:{json.dumps(v)}" for k, v in envelope.items()]
    members.append('"payload":' + _payload(rng, envelope["stream"]))
    rng.shuffle(members)
    return "{" + rng.choice([",", " , ", ",\n"]).join(members) + "}"


def _big_record(rng: random.Random) -> str:
    envelope = _envelope(rng)
    envelope["stream"] = "audit"
    size = rng.choice([262_144, 262_145])  # the payload's text exactly at the limit, or past it
    payload = '{"s":"' + "x" * (size - 8) + '"}'
    return json.dumps(envelope)[:-1] + ',"payload":' + payload + "}"


def _shape_fault(rng: random.Random) -> str:
    envelope: dict[str, Any] = _envelope(rng)
    fault = rng.randrange(6)
    if fault == 0:
        del envelope[rng.choice(list(envelope))]
    elif fault == 1:
        envelope["extra"] = 1
    elif fault == 2:
        envelope[rng.choice(list(envelope))] = rng.choice([1, 1.5, None, True, [], {}])
    elif fault == 3:
        return rng.choice(["1", "-0", "1.0", "null", '"x"', "[]", "18446744073709551616"])
    elif fault == 4:
        text = json.dumps(envelope)[:-1] + ',"payload":{"a":1}}'
        return text.replace('"stream"', '"str\\u0065am"', 1)
    return json.dumps(envelope)[:-1] + ',"payload":{"a":1}}'


def _body_fault(rng: random.Random, text: str | None = None) -> str:
    text = text or _record_text(rng)
    fault = rng.randrange(7)
    if fault == 0:
        return text[: rng.randrange(len(text))]
    if fault == 1:
        return text.replace('"payload":', '"payload":1,"payload":', 1)
    if fault == 2:
        return text.replace(
            '"payload":', '"payload":{"d":' + '{"a":' * 124 + "1" + "}" * 125 + ',"p":', 1
        )
    if fault == 3:
        return text.replace('"payload":', '"payload":{"n":1e400},"p":', 1)
    if fault == 4:
        return text.replace('"stream":', '"stream":"\\ud800",', 1).replace(",,", ",")
    if fault == 5:
        return text.replace('"record_type"', '"record_type":1e999,"x"', 1)
    return text + " x"


# --- running and normalising --------------------------------------------------------------------


def run(client: Any, headers: dict[str, str], requests: list[Request]) -> list[Any]:
    """Post the requests in order; each answer as ``(status, media type, parsed body)``."""
    answers = []
    for request in requests:
        # Header values go as bytes: a key outside ASCII arrives as its Latin-1 characters.
        extra = {} if request.key is None else {"Idempotency-Key": request.key.encode("latin-1")}
        response = client.post(
            request.path,
            content=request.body,
            headers={**headers, "Content-Type": "application/json", **extra},
        )
        answers.append(
            (response.status_code, response.headers.get("content-type"), response.json())
        )
    return answers


class Names:
    """Random values named in order of appearance."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, str], str] = {}

    def __call__(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self._names:
            count = sum(1 for k, _ in self._names if k == kind)
            self._names[key] = f"{kind}{count + 1}"
        return self._names[key]


def normalised(answers: list[Any], names: Names) -> list[Any]:
    """Answers without what chance decides (module docstring)."""
    return [[status, media, _body(body, names)] for status, media, body in answers]


def _body(body: Any, names: Names) -> Any:
    if isinstance(body, dict) and "results" in body:
        return {**body, "results": [_result(r, names) for r in body["results"]]}
    if isinstance(body, dict) and "record_id" in body and "header" in body:
        return _record(body, names)
    if isinstance(body, dict) and "erased_at" in body:
        return {"status": body["status"], "payloads_deleted": body["payloads_deleted"]}
    return body


def _result(result: dict[str, Any], names: Names) -> dict[str, Any]:
    if "record" in result:
        return {**result, "record": _record(result["record"], names)}
    return result


def _record(record: dict[str, Any], names: Names) -> dict[str, Any]:
    header = dict(record["header"])
    record = dict(record)
    record["record_id"] = names("R", record["record_id"])
    record["chain_leaf"] = names("L", record["chain_leaf"])
    assert header["root"] == record.pop("root")
    assert len(record.pop("signature")) == 128
    header["record_id"] = names("R", header["record_id"])
    header["subject_ref"] = names("S", header["subject_ref"])
    header["prev"] = names("L", header["prev"])
    header["ingested_at"] = "T"
    del header["root"]
    record["header"] = header
    return record


def stored(settings: Settings, names: Names) -> dict[str, Any]:
    """The store's ingest rows (records, payloads, subjects, idempotency keys), named."""
    from tests.backends import query

    records = query(
        settings,
        "SELECT s.name, r.seq, r.record_id, r.subject_ref, r.chain_leaf FROM records r"
        " JOIN streams s ON s.id = r.stream_id ORDER BY s.name, r.seq",
    )
    keys = query(
        settings,
        "SELECT key, request_hash, record_id FROM idempotency_keys ORDER BY key",
    )
    subjects = query(settings, "SELECT subject_ref, wrapped_key IS NULL FROM subjects")
    payloads = query(settings, "SELECT record_id FROM payloads")
    return {
        "records": [
            [stream, seq, names("R", rid), names("S", ref), names("L", bytes(leaf).hex())]
            for stream, seq, rid, ref, leaf in records
        ],
        "idempotency_keys": [[k, bytes(h).hex(), names("R", rid)] for k, h, rid in keys],
        "subjects": sorted([names("S", ref), bool(erased)] for ref, erased in subjects),
        "payloads": sorted(names("R", rid) for (rid,) in payloads),
    }


@contextmanager
def service(data_dir: Path, database_url: str | None = None) -> Iterator[tuple[Any, Settings]]:
    """A service on a fresh data directory whose header key is ``HEADER_SEED``, its streams
    made; yields (test client with a token's headers, settings)."""
    from litestar.testing import TestClient

    from recordseal.ops.tokens import create_token
    from recordseal.web.app import create_app

    keys = data_dir / "keys"
    keys.mkdir(parents=True, exist_ok=True)
    (keys / "header-signing.ed25519").write_bytes(HEADER_SEED)
    settings = Settings(data_dir=data_dir, database_url=database_url)
    with TestClient(create_app(settings)) as client:
        token = asyncio.run(create_token(settings, "acme", "answers"))
        headers = {"Authorization": f"Bearer {token}"}
        for stream in STREAMS:
            assert client.post("/v1/streams", json=stream, headers=headers).status_code == 201
        client.headers.update(headers)
        yield client, settings


def answers_of(
    data_dir: Path, requests: list[Request], database_url: str | None = None
) -> dict[str, Any]:
    """The normalised answers and rows of a fresh service that was sent ``requests``."""
    with service(data_dir, database_url) as (client, settings):
        names = Names()
        answers = normalised(run(client, {}, requests), names)
        return {"answers": answers, "stored": stored(settings, names)}

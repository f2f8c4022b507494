"""The inputs every benchmark of the cores uses: the same bytes on both cores, in every run.

A ~1 KB record of 20 committed fields (with declarations of most kinds), a record of 4,096
fields, a small record of five, one value of each field kind, leaves for the RFC 6962 trees,
and an ingest request's body (``POST /v1/records:batch``) of 100 such 1 KB records.
"""

from __future__ import annotations

import hashlib
import json

SALT_KEY = bytes(range(32))
RECORD_ID = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


def record_1k() -> bytes:
    """A realistic ~1 KB record with 20 committed fields (nested objects and an array)."""
    payload = {
        "order_id": "ORD-2026-000123456-WEB-EU-WEST-CHECKOUT-PRIMARY",
        "customer": {
            "name": "Augusta Ada King, Countess of Lovelace",
            "email": "ada.augusta.lovelace@analytical-engine.example.org",
            "address": {
                "street": "12 Analytical Engine Road, Flat 4, Dorset House, Marylebone",
                "city": "London",
                "country": "GB",
            },
        },
        "amount_minor": 1234567,
        "currency": "EUR",
        "placed_at": "2026-11-21T08:20:26.123456+01:00",
        "delivery_date": "2026-12-01",
        "items": [
            {"sku": "SKU-00012-BLUE-XL", "qty": 3, "unit_minor": 19999},
            {"sku": "SKU-00077-RED-M", "qty": 1, "unit_minor": 1174570},
        ],
        "location": {"lat": 51.5237629, "lon": -0.1584743},
        "notes": "Leave the parcel with the concierge; ring twice. Fragile: contains glassware."
        " Customer asked for a paper invoice and no plastic packaging whatsoever; deliveries"
        " before nine in the morning are refused by the building, and the loading bay at the"
        " back is closed on Sundays and public holidays. Call the mobile number on file first.",
        "document": "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    }
    return json.dumps(payload, separators=(",", ":")).encode()


DECLARATIONS_1K = {
    "o:/amount_minor": "money",
    "o:/currency": "currency",
    "o:/placed_at": "timestamp",
    "o:/delivery_date": "date",
    "oo:/location/lat": "lat6",
    "oo:/location/lon": "lon6",
    "o:/document": "digest",
    "oao:/items/*/qty": "integer",
    "oao:/items/*/unit_minor": "money",
    "o:/notes": "text",
}


def record_4096() -> bytes:
    """A record with exactly 4096 committed fields: 64 objects of 64 numbered members."""
    payload = {
        f"group{g:02d}": {f"field{f:02d}": (g * 64 + f) * 7 for f in range(64)} for g in range(64)
    }
    return json.dumps(payload, separators=(",", ":")).encode()


def record_small() -> bytes:
    """A record of five fields, the smallest shape a client sends."""
    payload = {"event": "door.opened", "door": 12, "badge": "B-4471", "ok": True, "floor": 3}
    return json.dumps(payload, separators=(",", ":")).encode()


#: One value of each field kind (docs/spec.md section 3), accepted by both cores.
KIND_VALUES: dict[str, object] = {
    "boolean": True,
    "currency": "eur",
    "date": "2026-12-01",
    "decimal": 1234.5678,
    "digest": "sha256:9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08",
    "free": "a string, as most free fields are",
    "integer": 9007199254740991,
    "lat6": 51.5237629,
    "lat9": -33.856784123456,
    "lon6": -0.1584743,
    "money": 1174570,
    "text": "Cafe\u0301 cre\u0300me bru\u0302le\u0301e, servie tie\u0300de",
    "timestamp": "2026-11-21T08:20:26.123450+01:00",
    "uuid": "{0193A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B}",
}


def leaves(count: int) -> list[bytes]:
    """``count`` distinct 32-byte leaves, as a record's commitments are."""
    return [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(count)]


def batch_body(count: int) -> bytes:
    """``POST /v1/records:batch`` of ``count`` 1 KB records, each of its own subject."""
    payload = record_1k().decode()
    records = [
        f'{{"stream":"orders","record_type":"order.placed",'
        f'"occurred_at":"2026-11-21T08:20:26+01:00","subject_id":"customer-{k}",'
        f'"payload":{payload}}}'
        for k in range(count)
    ]
    return ('{"records":[' + ",".join(records) + "]}").encode()

"""Deterministic payloads shared by the benchmarks."""

from __future__ import annotations

import json


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
    text = json.dumps(payload, separators=(",", ":")).encode()
    return text


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


SALT_KEY = bytes(range(32))
RECORD_ID = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

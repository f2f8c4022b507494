"""Write kinds.json: ``encode_value`` for every kind of docs/spec.md section 3.

Run from the repository root: ``python tests/vectors/generate_kinds.py``.

Every expected ``encoded`` text and error code below was derived by hand from docs/spec.md
(section 3 and its subsections 3.1-3.4, check order 1-4); no implementation was run to produce
them. The coordinate cases include ties where rounding the shortest decimal text (as 3.4 says)
and rounding the exact binary value give different results. Errors of ``encode_value`` carry no
path, so ``field`` is null throughout.
"""

from __future__ import annotations

import json
from pathlib import Path

CASES: list[dict] = []

H64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
UUID = "123e4567-e89b-12d3-a456-426614174000"


def ok(kind: str, value: object, encoded: str, name: str | None = None) -> None:
    CASES.append(
        {
            "name": name or f"{kind} {json.dumps(value, ensure_ascii=False)}",
            "kind": kind,
            "value": value,
            "encoded": encoded,
        }
    )


def bad(kind: str, value: object, code: str, name: str | None = None) -> None:
    CASES.append(
        {
            "name": name or f"{kind} {json.dumps(value, ensure_ascii=False)} refused",
            "kind": kind,
            "value": value,
            "error": {"code": code, "field": None},
        }
    )


# --- common checks (section 3, checks 1-3) ----------------------------------------------------

bad("Money", 1, "unknown_kind")
bad("", 1, "unknown_kind", "empty kind")
bad("email", "a@b.example", "unknown_kind")
bad("nope", {"a": 1}, "unknown_kind", "unknown kind before value type")
bad("nope", 9007199254740992, "unknown_kind", "unknown kind before integer range")
for kind in ["free", "money", "integer", "decimal", "lat6", "text", "currency", "boolean"]:
    bad(kind, 9007199254740992, "integer_out_of_range", f"{kind} 2^53 refused")
    bad(kind, -9007199254740992, "integer_out_of_range", f"{kind} -2^53 refused")
bad("free", 1e300, "integer_out_of_range")
bad("free", -1e21, "integer_out_of_range")
bad("free", 9007199254740992.0, "integer_out_of_range", "free 2^53 as a float refused")
bad("timestamp", 1e16, "integer_out_of_range", "range check before value type")
for kind in [
    "money",
    "currency",
    "timestamp",
    "date",
    "uuid",
    "lat6",
    "lat9",
    "lon6",
    "text",
    "integer",
    "decimal",
    "boolean",
    "digest",
]:
    bad(kind, None, "value_type", f"{kind} null refused")
    bad(kind, {}, "value_type", f"{kind} empty object refused")
    bad(kind, [], "value_type", f"{kind} empty array refused")
for kind in ["free", "money", "text"]:
    bad(kind, {"a": 1}, "value_type", f"{kind} non-empty object refused")
    bad(kind, [1], "value_type", f"{kind} non-empty array refused")

# --- free (3.1) -------------------------------------------------------------------------------

ok("free", "1", "str:1")
ok("free", 1, "num:1")
ok("free", 1.0, "num:1")
ok("free", 1.5e3, "num:1500")
ok("free", -0.0, "num:0")
ok("free", 0.5, "num:0.5")
ok("free", 1e-7, "num:1e-7")
ok("free", 5e-324, "num:5e-324")
ok("free", 4503599627370495.5, "num:4503599627370495.5")
ok("free", 9007199254740991, "num:9007199254740991")
ok("free", -9007199254740991, "num:-9007199254740991")
ok("free", True, "bool:true")
ok("free", False, "bool:false")
ok("free", None, "null:")
ok("free", {}, "obj:{}")
ok("free", [], "arr:[]")
ok("free", "", "str:")
ok("free", "true", "str:true")
ok("free", "null", "str:null")
ok("free", "e\u0301", "str:e\u0301", "free keeps NFD text")
ok("free", "a\u0000b\n", "str:a\u0000b\n", "free keeps control characters")
ok("free", "\U0001f600", "str:\U0001f600")

# --- money ------------------------------------------------------------------------------------

ok("money", 1500, "money:1500")
ok("money", 1500.0, "money:1500")
ok("money", -20, "money:-20")
ok("money", 0, "money:0")
ok("money", -0.0, "money:0")
ok("money", 1e15, "money:1000000000000000")
ok("money", 9007199254740991, "money:9007199254740991")
ok("money", -9007199254740991, "money:-9007199254740991")
bad("money", 12.5, "money_fraction")
bad("money", 0.1, "money_fraction")
bad("money", -0.5, "money_fraction")
bad("money", 1e-7, "money_fraction")
bad("money", 4503599627370495.5, "money_fraction")
bad("money", "100", "value_type")
bad("money", True, "value_type")

# --- currency ---------------------------------------------------------------------------------

ok("currency", "EUR", "cur:EUR")
ok("currency", "eur", "cur:EUR")
ok("currency", "eUr", "cur:EUR")
ok("currency", "XXX", "cur:XXX")
ok("currency", "dem", "cur:DEM", "currency withdrawn code on the list")
bad("currency", "ABC", "currency_invalid")
bad("currency", "EU", "currency_invalid")
bad("currency", "EURO", "currency_invalid")
bad("currency", "", "currency_invalid")
bad("currency", " EUR", "currency_invalid")
bad("currency", "EUR\n", "currency_invalid")
bad("currency", "EU1", "currency_invalid")
bad("currency", "\uff25\uff35\uff32", "currency_invalid", "currency fullwidth letters refused")
bad("currency", "\u0131nr", "currency_invalid", "currency dotless i does not upper-case to I")
bad("currency", "\u017fek", "currency_invalid", "currency long s does not upper-case to S")
bad("currency", 978, "value_type")

# --- timestamp (3.2) --------------------------------------------------------------------------

T = "timestamp"
ok(T, "2024-02-29t23:30:00.1200+01:00", "time:2024-02-29T22:30:00.12Z", "timestamp spec example")
ok(T, "2024-01-01T00:00:00Z", "time:2024-01-01T00:00:00Z")
ok(T, "2024-01-01T00:00:00z", "time:2024-01-01T00:00:00Z")
ok(T, "2024-01-01t00:00:00z", "time:2024-01-01T00:00:00Z")
ok(T, "1970-01-01T00:00:00Z", "time:1970-01-01T00:00:00Z")
ok(T, "2024-06-15T12:34:56+00:00", "time:2024-06-15T12:34:56Z")
ok(T, "2024-06-15T12:34:56-00:00", "time:2024-06-15T12:34:56Z")
ok(T, "2024-06-15T12:34:56+05:30", "time:2024-06-15T07:04:56Z")
ok(T, "2024-06-15T12:34:56-07:45", "time:2024-06-15T20:19:56Z")
ok(T, "2024-01-01T00:30:00+01:00", "time:2023-12-31T23:30:00Z", "timestamp rolls back a year")
ok(T, "2023-12-31T23:30:00-01:00", "time:2024-01-01T00:30:00Z", "timestamp rolls into a year")
ok(T, "2024-02-28T23:00:00-01:00", "time:2024-02-29T00:00:00Z", "timestamp rolls into leap day")
ok(T, "2023-02-28T23:00:00-01:00", "time:2023-03-01T00:00:00Z", "timestamp skips absent leap day")
ok(T, "2024-03-01T00:59:59+01:00", "time:2024-02-29T23:59:59Z", "timestamp rolls back to leap day")
ok(T, "2100-02-28T23:00:00-02:00", "time:2100-03-01T01:00:00Z", "timestamp 2100 is not leap")
ok(T, "2000-02-28T23:00:00-02:00", "time:2000-02-29T01:00:00Z", "timestamp 2000 is leap")
ok(
    T,
    "2024-04-30T23:59:59.999-00:01",
    "time:2024-05-01T00:00:59.999Z",
    "timestamp rolls into a month",
)
ok(T, "2024-01-01T00:00:00+23:59", "time:2023-12-31T00:01:00Z", "timestamp offset +23:59")
ok(T, "2024-01-01T00:00:00-23:59", "time:2024-01-01T23:59:00Z", "timestamp offset -23:59")
ok(T, "2024-12-31T23:59:59-23:59", "time:2025-01-01T23:58:59Z")
ok(T, "2024-01-01T00:00:00.000Z", "time:2024-01-01T00:00:00Z", "timestamp zero fraction dropped")
ok(T, "2024-01-01T00:00:00.0Z", "time:2024-01-01T00:00:00Z")
ok(
    T,
    "2024-01-01T00:00:00.000+01:00",
    "time:2023-12-31T23:00:00Z",
    "timestamp zero fraction and offset",
)
ok(T, "2024-01-01T00:00:00.5Z", "time:2024-01-01T00:00:00.5Z")
ok(T, "2024-01-01T00:00:00.10Z", "time:2024-01-01T00:00:00.1Z")
ok(
    T,
    "2024-01-01T00:00:00.123456789012Z",
    "time:2024-01-01T00:00:00.123456789012Z",
    "timestamp long fraction kept",
)
ok(T, "2024-01-01T00:00:00.000000001Z", "time:2024-01-01T00:00:00.000000001Z")
ok(T, "2024-02-29T12:00:00Z", "time:2024-02-29T12:00:00Z")
ok(T, "2000-02-29T12:00:00Z", "time:2000-02-29T12:00:00Z")
ok(T, "0001-01-01T00:00:00Z", "time:0001-01-01T00:00:00Z", "timestamp earliest instant")
ok(
    T,
    "0000-12-31T23:00:00-01:00",
    "time:0001-01-01T00:00:00Z",
    "timestamp year 0000 converted into 0001",
)
ok(T, "9999-12-31T23:59:59Z", "time:9999-12-31T23:59:59Z", "timestamp latest second")
ok(T, "9999-12-31T23:59:59.999+23:59", "time:9999-12-31T00:00:59.999Z")
ok(T, "2024-06-15T23:59:59.999999999Z", "time:2024-06-15T23:59:59.999999999Z")
for name, value in [
    ("leap second", "2016-12-31T23:59:60Z"),
    ("leap second with offset", "2016-12-31T23:59:60+00:00"),
    ("month 13", "2024-13-01T00:00:00Z"),
    ("month 00", "2024-00-10T00:00:00Z"),
    ("april 31", "2024-04-31T00:00:00Z"),
    ("day 00", "2024-01-00T00:00:00Z"),
    ("feb 29 of 2023", "2023-02-29T12:00:00Z"),
    ("feb 29 of 1900", "1900-02-29T12:00:00Z"),
    ("hour 24", "2024-01-01T24:00:00Z"),
    ("minute 60", "2024-01-01T23:60:00Z"),
    ("offset hour 24", "2024-01-01T00:00:00+24:00"),
    ("offset minute 60", "2024-01-01T00:00:00+01:60"),
    ("offset without colon", "2024-01-01T00:00:00+0100"),
    ("offset without minutes", "2024-01-01T00:00:00+01"),
    ("no offset", "2024-01-01T00:00:00"),
    ("empty fraction", "2024-01-01T00:00:00.Z"),
    ("comma fraction", "2024-01-01T00:00:00,5Z"),
    ("no seconds", "2024-01-01T00:00Z"),
    ("one-digit month", "2024-1-01T00:00:00Z"),
    ("space separator", "2024-01-01 00:00:00Z"),
    ("trailing newline", "2024-01-01T00:00:00Z\n"),
    ("leading space", " 2024-01-01T00:00:00Z"),
    ("fullwidth digits", "\uff12\uff10\uff12\uff14-01-01T00:00:00Z"),
    ("arabic-indic digit", "2024-01-01T00:00:0\u0660Z"),
    ("fullwidth digit in fraction", "2024-01-01T00:00:00.\uff15Z"),
    ("date only", "2024-01-01"),
    ("basic format", "20240101T000000Z"),
    ("double Z", "2024-01-01T00:00:00ZZ"),
    ("offset and Z", "2024-01-01T00:00:00+01:00Z"),
    ("two fractions", "2024-01-01T00:00:00.1.2Z"),
    ("five-digit year", "10000-01-01T00:00:00Z"),
    ("negative year", "-2024-01-01T00:00:00Z"),
    ("UTC suffix", "2024-01-01T00:00:00UTC"),
    ("other separator", "2024-01-01X00:00:00Z"),
    ("year 0000 in UTC", "0000-01-01T00:00:00Z"),
    ("converted before year 0001", "0001-01-01T00:00:00+00:01"),
    ("converted after year 9999", "9999-12-31T23:00:00-01:00"),
    ("empty", ""),
]:
    bad(T, value, "timestamp_invalid", f"timestamp {name} refused")
bad(T, 0, "value_type")

# --- date -------------------------------------------------------------------------------------

ok("date", "2024-02-29", "date:2024-02-29")
ok("date", "2000-02-29", "date:2000-02-29")
ok("date", "0000-02-29", "date:0000-02-29", "date year 0000 is leap")
ok("date", "0000-01-01", "date:0000-01-01")
ok("date", "9999-12-31", "date:9999-12-31")
ok("date", "2024-12-31", "date:2024-12-31")
for value in [
    "2023-02-29",
    "1900-02-29",
    "2100-02-29",
    "2024-04-31",
    "2024-06-31",
    "2024-00-01",
    "2024-13-01",
    "2024-01-00",
    "2024-12-32",
    "2024-4-1",
    "10000-01-01",
    "-0001-01-01",
    "+2024-01-01",
    "2024/01/01",
    "20240101",
    "2024-01-01T00:00:00Z",
    "2024-01-01\n",
    " 2024-01-01",
    "\uff12\uff10\uff12\uff14-01-01",
    "2024-01-0\u0661",
    "",
]:
    bad("date", value, "date_invalid")
bad("date", 20240101, "value_type")

# --- uuid (3.3) -------------------------------------------------------------------------------

ok("uuid", UUID, f"uuid:{UUID}")
ok("uuid", UUID.upper(), f"uuid:{UUID}")
ok("uuid", "{" + UUID + "}", f"uuid:{UUID}")
ok("uuid", "{" + UUID.upper() + "}", f"uuid:{UUID}")
ok("uuid", "urn:uuid:" + UUID, f"uuid:{UUID}")
ok("uuid", "URN:UUID:" + UUID.upper(), f"uuid:{UUID}")
ok("uuid", UUID.replace("-", ""), f"uuid:{UUID}")
ok("uuid", UUID.replace("-", "").upper(), f"uuid:{UUID}")
ok("uuid", "00000000-0000-0000-0000-000000000000", "uuid:00000000-0000-0000-0000-000000000000")
ok("uuid", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "uuid:ffffffff-ffff-ffff-ffff-ffffffffffff")
for name, value in [
    ("braces around urn", "{urn:uuid:" + UUID + "}"),
    ("urn with braces", "urn:uuid:{" + UUID + "}"),
    ("braces around bare hex", "{" + UUID.replace("-", "") + "}"),
    ("urn with bare hex", "urn:uuid:" + UUID.replace("-", "")),
    ("unbalanced brace", "{" + UUID),
    ("31 digits", UUID[:-1]),
    ("33 digits", UUID + "0"),
    ("31 bare digits", UUID.replace("-", "")[:-1]),
    ("non-hex digit", "g" + UUID[1:]),
    ("misplaced hyphen", "123e4567e-89b-12d3-a456-426614174000"),
    ("missing one hyphen", "123e4567-e89b12d3-a456-426614174000"),
    ("trailing newline", UUID + "\n"),
    ("surrounding spaces", " " + UUID + " "),
    ("fullwidth digit", "\uff11" + UUID[1:]),
    ("urn prefix only", "urn:uuid:"),
    ("empty", ""),
]:
    bad("uuid", value, "uuid_invalid", f"uuid {name} refused")
bad("uuid", 1, "value_type")

# --- coordinates (3.4) ------------------------------------------------------------------------

ok("lat6", 48.8583701, "lat6:48.858370", "lat6 spec example 48.8583701")
ok("lat6", 0.0000005, "lat6:0.000000", "lat6 spec example 0.0000005")
ok("lat6", 0.0000015, "lat6:0.000002", "lat6 spec example 0.0000015")
ok("lat6", -0.0000004, "lat6:0.000000", "lat6 spec example -0.0000004")
ok("lon6", 2.3456785, "lon6:2.345678", "lon6 spec example 2.3456785")
ok("lon6", 2.3456795, "lon6:2.345680", "lon6 spec example 2.3456795")
ok("lat6", 0.0000025, "lat6:0.000002", "lat6 tie on text, binary value above")
ok("lat6", 1.0000005, "lat6:1.000000", "lat6 1.0000005 tie to even")
ok("lat6", 45.1234565, "lat6:45.123456", "lat6 45.1234565 tie to even")
ok("lat6", 12.3456775, "lat6:12.345678", "lat6 12.3456775 tie to even")
ok("lat6", 89.9999995, "lat6:90.000000", "lat6 rounds up to 90")
ok("lat6", -89.9999995, "lat6:-90.000000", "lat6 rounds down to -90")
ok("lat6", -0.0000005, "lat6:0.000000", "lat6 negative tie to zero has no sign")
ok("lat6", -0.0000015, "lat6:-0.000002")
ok("lat6", 1e-7, "lat6:0.000000")
ok("lat6", -1e-7, "lat6:0.000000")
ok("lat6", 5e-324, "lat6:0.000000")
ok("lat6", 0, "lat6:0.000000")
ok("lat6", -0.0, "lat6:0.000000", "lat6 negative zero")
ok("lat6", -1, "lat6:-1.000000")
ok("lat6", 45, "lat6:45.000000")
ok("lat6", 90, "lat6:90.000000")
ok("lat6", -90, "lat6:-90.000000")
ok("lat6", 90.0, "lat6:90.000000", "lat6 90.0")
bad("lat6", 90.0000001, "coordinate_out_of_range")
bad("lat6", 90.0000004, "coordinate_out_of_range", "lat6 range checked before rounding")
bad("lat6", -90.0000001, "coordinate_out_of_range")
bad("lat6", 100, "coordinate_out_of_range")
bad("lat6", 180, "coordinate_out_of_range")
bad("lat6", 1e300, "integer_out_of_range", "lat6 huge number: range of section 3 first")
bad("lat6", "48.85", "value_type")
bad("lat6", True, "value_type")
ok("lat9", 48.8583701, "lat9:48.858370100")
ok("lat9", 1e-9, "lat9:0.000000001")
ok("lat9", 5e-10, "lat9:0.000000000", "lat9 tie on text, binary value above")
ok("lat9", -5e-10, "lat9:0.000000000")
ok("lat9", 1.5e-9, "lat9:0.000000002", "lat9 tie on text, binary value below")
ok("lat9", 2.5e-9, "lat9:0.000000002")
ok("lat9", 0.1234567895, "lat9:0.123456790", "lat9 0.1234567895 tie to even")
ok("lat9", 90, "lat9:90.000000000")
ok("lat9", -90, "lat9:-90.000000000")
ok("lat9", -0.0, "lat9:0.000000000")
bad("lat9", 90.000000001, "coordinate_out_of_range")
bad("lat9", -91, "coordinate_out_of_range")
ok("lon6", 180, "lon6:180.000000")
ok("lon6", -180, "lon6:-180.000000")
ok("lon6", 179.9999995, "lon6:180.000000")
ok("lon6", -179.9999995, "lon6:-180.000000", "lon6 rounds to -180")
ok("lon6", 135, "lon6:135.000000", "lon6 beyond the latitude range")
ok("lon6", -0.0, "lon6:0.000000")
bad("lon6", 180.0000001, "coordinate_out_of_range")
bad("lon6", -180.0000001, "coordinate_out_of_range")
bad("lon6", 181, "coordinate_out_of_range")
bad("lon6", 1000, "coordinate_out_of_range")
bad("lon6", "2.35", "value_type")

# --- text -------------------------------------------------------------------------------------

ok("text", "e\u0301", "txt:\u00e9", "text NFC composes e + acute")
ok("text", "\u00e9", "txt:\u00e9", "text NFC keeps precomposed")
ok("text", "A\u030a", "txt:\u00c5")
ok("text", "\u212b", "txt:\u00c5", "text angstrom sign to A ring")
ok("text", "\u1100\u1161", "txt:\uac00", "text hangul jamo compose")
ok("text", "\ufb01", "txt:\ufb01", "text compatibility ligature kept")
ok("text", "\uac00\u11a8", "txt:\uac01", "text hangul LV + T compose")
ok("text", "\u0958", "txt:\u0915\u093c", "text composition exclusion decomposes")
ok("text", "a\u0307\u0323", "txt:\u1ea1\u0307", "text canonical reordering")
ok("text", "\u1e0d\u0307", "txt:\u1e0d\u0307")
ok("text", "", "txt:")
ok("text", "plain ascii", "txt:plain ascii")
ok("text", "\U0001f600 ok", "txt:\U0001f600 ok")
ok("text", "line\nbreak\u0000", "txt:line\nbreak\u0000", "text keeps control characters")
bad("text", 1, "value_type")
bad("text", False, "value_type")

# --- integer, decimal, boolean ----------------------------------------------------------------

ok("integer", 5, "int:5")
ok("integer", 5.0, "int:5")
ok("integer", 5e0, "int:5", "integer 5e0")
ok("integer", -3, "int:-3")
ok("integer", 0, "int:0")
ok("integer", -0.0, "int:0")
ok("integer", 1e15, "int:1000000000000000")
ok("integer", 9007199254740991, "int:9007199254740991")
ok("integer", -9007199254740991, "int:-9007199254740991")
bad("integer", 1.5, "not_integer")
bad("integer", 0.5, "not_integer")
bad("integer", -1e-7, "not_integer")
bad("integer", "5", "value_type")
bad("integer", True, "value_type")
ok("decimal", 1.5, "dec:1.5")
ok("decimal", 0.1, "dec:0.1")
ok("decimal", -2.5, "dec:-2.5")
ok("decimal", 1e-7, "dec:1e-7")
ok("decimal", 0.000001, "dec:0.000001")
ok("decimal", 100, "dec:100")
ok("decimal", 1.0, "dec:1")
ok("decimal", -0.0, "dec:0")
ok("decimal", 123456789.123, "dec:123456789.123")
ok("decimal", 5e-324, "dec:5e-324")
ok("decimal", 4503599627370495.5, "dec:4503599627370495.5")
ok("decimal", 9007199254740991, "dec:9007199254740991")
bad("decimal", 1e16, "integer_out_of_range")
bad("decimal", "1.5", "value_type")
ok("boolean", True, "bool:true")
ok("boolean", False, "bool:false")
bad("boolean", 1, "value_type")
bad("boolean", 0, "value_type")
bad("boolean", "true", "value_type")

# --- digest -----------------------------------------------------------------------------------

ok("digest", "sha256:" + H64, "digest:sha256:" + H64)
ok("digest", "sha256:" + H64.upper(), "digest:sha256:" + H64, "digest upper-case hex normalised")
ok(
    "digest",
    "sha256:" + H64[:32].upper() + H64[32:],
    "digest:sha256:" + H64,
    "digest mixed-case hex",
)
ok("digest", "sha256:" + "0" * 64, "digest:sha256:" + "0" * 64)
for name, value in [
    ("upper-case prefix", "SHA256:" + H64),
    ("63 digits", "sha256:" + H64[:-1]),
    ("65 digits", "sha256:" + H64 + "0"),
    ("non-hex digit", "sha256:" + "g" + H64[1:]),
    ("no prefix", H64),
    ("sha512 prefix", "sha512:" + H64 + H64),
    ("space after colon", "sha256: " + H64),
    ("trailing newline", "sha256:" + H64 + "\n"),
    ("leading space", " sha256:" + H64),
    ("fullwidth digit", "sha256:\uff10" + H64[1:]),
    ("empty", ""),
]:
    bad("digest", value, "digest_invalid", f"digest {name} refused")
bad("digest", 1, "value_type")


def main() -> None:
    names = [c["name"] for c in CASES]
    dupes = {n for n in names if names.count(n) > 1}
    assert not dupes, dupes
    target = Path(__file__).with_name("kinds.json")
    target.write_text(
        json.dumps({"cases": CASES}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{target}: {len(CASES)} cases")


if __name__ == "__main__":
    main()

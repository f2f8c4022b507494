"""Write records.json: whole records through ``commit_record`` (docs/spec.md sections 2, 4, 6).

Run from the repository root: ``python tests/vectors/generate_records.py``.

This is an independent, deliberately small transcription of docs/spec.md using only hashlib,
hmac and json: it handles the simple payloads written below by hand (no duplicate names, numbers
within +-2^53, kinds limited to those whose rule is a plain string operation, ASCII ``text``) and
computes their canonical text, leaves, salts, commitments and root. It does not check anything:
which payloads are accepted, and every refusal's code and field, are written by hand from
docs/spec.md 6.2 and section 8.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

KEY = bytes(range(32)).hex()
KEY2 = bytes(range(32, 64)).hex()
RID = "rec-0001"
H64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
CURRENCIES = {
    line.strip()
    for line in (Path(__file__).parents[2] / "python/recordseal/core/data/iso4217.txt")
    .read_text()
    .splitlines()
    if line.strip() and not line.startswith("#")
}

# --- RFC 8785 for the simple values used here -------------------------------------------------


def number_text(x: int | float) -> str:
    """ECMAScript Number::toString, from the shortest round-trip digits of repr()."""
    if isinstance(x, int):
        return str(x)
    if x == 0:
        return "0"
    sign, r = ("-", repr(-x)) if x < 0 else ("", repr(x))
    mantissa, _, exp = r.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    n = len(whole) + int(exp or 0) - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mant = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def string_text(s: str) -> str:
    short = {
        '"': '\\"',
        "\\": "\\\\",
        "\b": "\\b",
        "\t": "\\t",
        "\n": "\\n",
        "\f": "\\f",
        "\r": "\\r",
    }
    out = []
    for ch in s:
        if ch in short:
            out.append(short[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def canonical(v: object) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return number_text(v)
    if isinstance(v, str):
        return string_text(v)
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    assert isinstance(v, dict)
    keys = sorted(v, key=lambda k: k.encode("utf-16-be"))
    return "{" + ",".join(string_text(k) + ":" + canonical(v[k]) for k in keys) + "}"


# --- paths, kinds, commitments ----------------------------------------------------------------


def walk(v: object, vector: str = "", pointer: str = ""):
    """(path, value) of every leaf."""
    if isinstance(v, dict) and v:
        for k, child in v.items():
            token = k.replace("~", "~0").replace("/", "~1")
            yield from walk(child, vector + "o", pointer + "/" + token)
    elif isinstance(v, list) and v:
        for i, child in enumerate(v):
            yield from walk(child, vector + "a", f"{pointer}/{i}")
    else:
        yield f"{vector}:{pointer}", v


def declared_kind(path: str, declarations: dict[str, str] | None) -> str:
    vector, _, pointer = path.partition(":")
    tokens = pointer.split("/")[1:]
    for pattern, kind in (declarations or {}).items():
        pv, _, pp = pattern.partition(":")
        ptokens = pp.split("/")[1:]
        if pv == vector and all(
            pt == t or (step == "a" and pt == "*")
            for step, pt, t in zip(pv, ptokens, tokens, strict=True)
        ):
            return kind
    return "free"


def enc(kind: str, v: object) -> str:
    is_num = isinstance(v, (int, float)) and not isinstance(v, bool)
    assert not is_num or abs(v) <= 2**53 - 1, "a hand-written accepted case breaks section 3 rule 2"
    if kind == "free":
        if isinstance(v, str):
            return "str:" + v
        if is_num:
            return "num:" + number_text(v)
        if isinstance(v, bool):
            return "bool:" + ("true" if v else "false")
        if v is None:
            return "null:"
        return "obj:{}" if isinstance(v, dict) else "arr:[]"
    if kind in ("money", "integer", "decimal"):
        assert is_num and (kind == "decimal" or v == int(v))
        return {"money": "money:", "integer": "int:", "decimal": "dec:"}[kind] + number_text(v)
    if kind == "boolean":
        assert isinstance(v, bool)
        return "bool:" + ("true" if v else "false")
    assert isinstance(v, str), (kind, v)
    if kind == "currency":
        assert v.upper() in CURRENCIES and v.isascii()
        return "cur:" + v.upper()
    if kind == "digest":
        assert v.startswith("sha256:") and len(v) == 71
        return "digest:" + v.lower()
    if kind == "text":
        assert v.isascii()
        return "txt:" + v
    if kind == "date":
        return "date:" + v
    if kind == "uuid":
        h = v.lower().removeprefix("urn:uuid:").strip("{}").replace("-", "")
        assert len(h) == 32
        return f"uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if kind == "timestamp":
        # Only UTC inputs here; offsets are covered by kinds.json.
        for suffix in ("+00:00", "-00:00", "z", "Z"):
            if v.endswith(suffix):
                v = v[: -len(suffix)]
                break
        else:
            raise AssertionError(v)
        base, _, frac = v.partition(".")
        frac = frac.rstrip("0")
        return "time:" + base.upper() + ("." + frac if frac else "") + "Z"
    raise AssertionError(kind)


def mth(d: list[bytes]) -> bytes:
    if not d:
        return hashlib.sha256(b"").digest()
    if len(d) == 1:
        return hashlib.sha256(b"\x00" + d[0]).digest()
    k = 1
    while k * 2 < len(d):
        k *= 2
    return hashlib.sha256(b"\x01" + mth(d[:k]) + mth(d[k:])).digest()


def commit(
    payload: str, declarations: dict | None, salt_key: str, record_id: str, with_leaves: bool
) -> dict:
    value = json.loads(payload)
    key = bytes.fromhex(salt_key)
    leaves = []
    for path, v in sorted(walk(value), key=lambda pv: pv[0].encode()):
        kind = declared_kind(path, declarations)
        encoded = enc(kind, v)
        salt = hmac.new(
            key,
            b"recordseal/salt/v1\x00" + record_id.encode() + b"\x00" + path.encode(),
            hashlib.sha256,
        ).digest()
        commitment = hashlib.sha256(
            b"recordseal/field/v1" + path.encode() + b"\x00" + salt + b"\x00" + encoded.encode()
        ).digest()
        leaves.append(
            {
                "path": path,
                "kind": kind,
                "encoded": encoded,
                "salt": salt.hex(),
                "commitment": commitment.hex(),
            }
        )
    out = {
        "canonical": canonical(value),
        "root": mth([bytes.fromhex(leaf["commitment"]) for leaf in leaves]).hex(),
        "field_count": len(leaves),
    }
    if with_leaves:
        out["leaves"] = leaves
    return out


def generated_payload(spec: dict) -> str:
    """The payloads of the README's ``generate`` forms."""
    if "fields" in spec:
        return "{" + ",".join(f'"f{i:04d}":{i}' for i in range(spec["fields"])) + "}"
    if "depth" in spec:
        return '{"a":' * (spec["depth"] - 1) + '{"a":1}' + "}" * (spec["depth"] - 1)
    n = spec["bytes"]
    return '{"s":"' + "x" * (n - 8) + '"}'


# --- cases ------------------------------------------------------------------------------------

CASES: list[dict] = []


def ok(
    name,
    payload,
    declarations=None,
    strict=False,
    salt_key=KEY,
    record_id=RID,
    generate=None,
    leaves=True,
):
    case = {"name": name}
    case.update({"generate": generate} if generate else {"payload": payload})
    case.update(declarations=declarations, strict=strict, salt_key=salt_key, record_id=record_id)
    text = generated_payload(generate) if generate else payload
    case["expected"] = commit(text, declarations, salt_key, record_id, leaves)
    CASES.append(case)


def bad(
    name,
    payload,
    code,
    field=None,
    declarations=None,
    strict=False,
    salt_key=KEY,
    record_id=RID,
    generate=None,
):
    case = {"name": name}
    case.update({"generate": generate} if generate else {"payload": payload})
    case.update(declarations=declarations, strict=strict, salt_key=salt_key, record_id=record_id)
    case["error"] = {"code": code, "field": field}
    CASES.append(case)


def accepted_cases() -> None:
    ok("flat scalars", '{"name":"Ada","age":36,"active":true,"note":null}')
    ok("spec section 2 example", '{"a":{"b":[10,{"c/d":true}]}}')
    ok("empty containers are leaves", '{"k":{},"l":[],"m":[[],{}]}')
    ok("payload with an empty object k", '{"k":{},"x":1}')
    ok("payload without k", '{"x":1}')
    ok("number 1", '{"n":1}')
    ok("number 1.0", '{"n":1.0}')
    ok("number 1e0", '{"n":1e0}')
    ok("key order b,a", '{"b":1,"a":{"d":2,"c":3}}')
    ok("key order a,b", '{"a":{"c":3,"d":2},"b":1}')
    ok("whitespace and key order", ' {\n  "b" : 1 ,\n  "a" : { "d" : 2 , "c" : 3 }\n} ')
    ok("same value, record rec-0001", '{"a":"same"}')
    ok("same value, record rec-0002", '{"a":"same"}', record_id="rec-0002")
    ok("same value, other salt key", '{"a":"same"}', salt_key=KEY2)
    ok("non-ASCII record id", '{"a":"same"}', record_id="r\u00e9c/\U0001f600 1")
    ok("null committed", '{"a":null}')
    ok("array indexes sort as text", '{"a":[0,1,2,3,4,5,6,7,8,9,10]}')
    ok(
        "escaped and non-ASCII names",
        '{"a/b":1,"c~d":2,"":3,"\u00e9":4,"\U0001f600":5,"\uff61":6,"~1":7}',
    )
    ok("empty names nested", '{"":{"":1}}')
    ok("nested arrays", '{"m":[[1,2],[]]}')
    ok(
        "numbers in ECMAScript form",
        '{"x":1e-7,"y":0.1,"z":123.456,"w":1e15,"v":-0,"u":0.000001,"t":-0.0}',
    )
    ok("integer boundaries", '{"max":9007199254740991,"min":-9007199254740991}')
    ok("string escapes committed as values", '{"s":"line\\nbreak \\"q\\" \\\\ \\u0001 \\/"}')
    ok("names with U+2028 and NBSP are not Cc", '{"a\u2028":1,"b\u00a0":2}')
    ok(
        "declared kinds",
        '{"amount":1500.0,"currency":"eur","at":"2024-01-01t10:00:00.500z","day":"2024-02-29",'
        '"id":"{123E4567-E89B-12D3-A456-426614174000}","doc":"sha256:' + H64.upper() + '",'
        '"flag":false,"count":7,"ratio":0.25,"label":"plain","stamp":"2024-01-01T10:00:00-00:00"}',
        declarations={
            "o:/amount": "money",
            "o:/currency": "currency",
            "o:/at": "timestamp",
            "o:/day": "date",
            "o:/id": "uuid",
            "o:/doc": "digest",
            "o:/flag": "boolean",
            "o:/count": "integer",
            "o:/ratio": "decimal",
            "o:/label": "text",
            "o:/stamp": "timestamp",
        },
    )
    ok("money 1.5e3", '{"m":1.5e3}', declarations={"o:/m": "money"})
    ok(
        "wildcard over array elements",
        '{"items":[{"price":100,"sku":"A"},{"price":2.5e2,"sku":"B"}]}',
        declarations={"oao:/items/*/price": "money"},
    )
    ok(
        "array wildcard does not match an object member",
        '{"a":{"0":1.5}}',
        declarations={"oa:/a/*": "money"},
    )
    ok("o step * is the member named *", '{"*":100,"x":1.5}', declarations={"o:/*": "money"})
    ok("member name with a colon", '{"a:b":1}', declarations={"o:/a:b": "integer"})
    ok("declared path absent", '{"a":1}', declarations={"o:/missing": "money", "oa:/x/*": "uuid"})
    ok("free declared on a container", '{"a":{"b":[1,"x"]}}', declarations={"o:/a": "free"})
    ok("nested array wildcard", '{"m":[[1,2],[3]]}', declarations={"oaa:/m/*/*": "integer"})
    ok(
        "strict with a free subtree",
        '{"amount":5,"meta":{"tags":["a","b"],"x":{}}}',
        declarations={"o:/meta": "free", "o:/amount": "money"},
        strict=True,
    )
    ok(
        "strict with wildcards",
        '{"items":[{"price":100,"sku":"A"},{"price":250,"sku":"B"}]}',
        declarations={"oao:/items/*/price": "money", "oao:/items/*/sku": "free"},
        strict=True,
    )
    ok(
        "strict with an empty array declared free",
        '{"tags":[]}',
        declarations={"o:/tags": "free"},
        strict=True,
    )
    ok(
        "strict, own kind below a free subtree",
        '{"a":{"b":100,"c":"x"}}',
        declarations={"o:/a": "free", "oo:/a/b": "money"},
        strict=True,
    )
    ok(
        "strict with every leaf declared",
        '{"a":1,"b":"x"}',
        declarations={"o:/a": "integer", "o:/b": "text"},
        strict=True,
    )
    ok("path of 512 bytes", '{"' + "x" * 509 + '":1}')
    ok("path of 512 bytes with 2-byte characters", '{"' + "\u00e9" * 254 + 'x":1}')
    ok("path of 512 bytes with escaped tildes", '{"' + "~" * 254 + 'a":1}')
    ok("nested path of 512 bytes", '{"a":{"' + "x" * 506 + '":1}}')
    ok(
        "pattern of 512 bytes",
        '{"' + "x" * 509 + '":1}',
        declarations={"o:/" + "x" * 509: "integer"},
    )
    ok("pattern with an escaped solidus", '{"a/b":5}', declarations={"o:/a~1b": "integer"})
    ok("pattern with ~01", '{"a~1":2}', declarations={"o:/a~01": "integer"})
    ok(
        "pattern with an escaped tilde and non-ASCII",
        '{"~\u00e9":"x"}',
        declarations={"o:/~0\u00e9": "text"},
    )
    ok("pattern for the empty name", '{"":5}', declarations={"o:/": "money"})
    ok("pattern with a root array step never matches", '{"a":1}', declarations={"a:/*": "money"})
    ok(
        "pattern of 512 bytes with 2-byte characters",
        '{"' + "\u00e9" * 254 + 'x":1}',
        declarations={"o:/" + "\u00e9" * 254 + "x": "integer"},
    )
    ok(
        "strict, free on an array wildcard covers the elements' subtrees",
        '{"a":[{"x":1},{"y":[2]}]}',
        declarations={"oa:/a/*": "free"},
        strict=True,
    )
    ok("pattern of two empty names", '{"":{"":1}}', declarations={"oo://": "integer"}, strict=True)
    ok("4096 fields", None, generate={"fields": 4096}, leaves=False)
    ok("depth 120", None, generate={"depth": 120})
    ok("depth 125", None, generate={"depth": 125})
    ok("262144 bytes", None, generate={"bytes": 262144}, leaves=False)


def refused_cases() -> None:
    long_x = "x" * 510
    # 6.2 step 1: size, before everything else.
    bad("262145 bytes", None, "payload_too_large", generate={"bytes": 262145})
    bad(
        "262145 bytes before declarations",
        None,
        "payload_too_large",
        generate={"bytes": 262145},
        declarations={"o:/a~2": "nope"},
    )
    # 6.2 step 2: declarations (6.1), in the UTF-8 order of the patterns.
    for name, pattern in [
        ("empty pattern", ""),
        ("no steps", ":"),
        ("vector without pointer", "o:"),
        ("no colon", "o/a"),
        ("pointer without slash", "o:a"),
        ("vector shorter than pointer", "o:/a/b"),
        ("vector longer than pointer", "oo:/a"),
        ("unknown step letter", "x:/a"),
        ("upper-case step letter", "O:/a"),
        ("array step not *", "oa:/a/0"),
        ("empty array step", "oa:/a/"),
        ("tilde followed by 2", "o:/a~2"),
        ("tilde at the end", "o:/a~"),
        ("control character U+0001", "o:/a\u0001"),
        ("control character DEL", "o:/a\u007f"),
        ("control character U+0085", "o:/a\u0085"),
        ("pattern of 513 bytes", "o:/" + long_x),
    ]:
        bad(
            f"declaration: {name}",
            '{"a":1}',
            "declaration_invalid",
            pattern,
            declarations={pattern: "free"},
        )
    bad(
        "declaration: pattern of 513 bytes with 2-byte characters",
        '{"a":1}',
        "declaration_invalid",
        "o:/" + "\u00e9" * 255,
        declarations={"o:/" + "\u00e9" * 255: "free"},
    )
    bad(
        "declarations checked in UTF-8 order, not UTF-16",
        '{"a":1}',
        "declaration_invalid",
        "o:/\uff61~",
        declarations={"o:/\U0001f600~": "free", "o:/\uff61~": "free"},
    )
    bad(
        "declaration: unknown kind",
        '{"a":1}',
        "unknown_kind",
        "o:/a",
        declarations={"o:/a": "Money"},
    )
    bad(
        "declarations checked in UTF-8 order (invalid first)",
        '{"a":1}',
        "declaration_invalid",
        "o:/a~2",
        declarations={"o:/b": "nope", "o:/a~2": "free"},
    )
    bad(
        "declarations checked in UTF-8 order (unknown kind first)",
        '{"a":1}',
        "unknown_kind",
        "o:/a",
        declarations={"o:/b~": "free", "o:/a": "nope"},
    )
    bad(
        "declarations checked in UTF-8 order (non-ASCII last)",
        '{"a":1}',
        "declaration_invalid",
        "o:/z~",
        declarations={"o:/\u00e9": "nope", "o:/z~": "free"},
    )
    bad(
        "declarations before salt key",
        '{"a":1}',
        "declaration_invalid",
        "o:/a~2",
        declarations={"o:/a~2": "free"},
        salt_key=KEY[:-2],
    )
    bad("salt key of 31 bytes", '{"a":1}', "salt_key_invalid", salt_key=KEY[:-2])
    bad("salt key of 33 bytes", '{"a":1}', "salt_key_invalid", salt_key=KEY + "20")
    bad("empty salt key", '{"a":1}', "salt_key_invalid", salt_key="")
    bad("salt key before record id", '{"a":1}', "salt_key_invalid", salt_key="", record_id="")
    bad("empty record id", '{"a":1}', "record_id_invalid", record_id="")
    bad("record id with U+0000", '{"a":1}', "record_id_invalid", record_id="a\u0000b")
    bad("record id before parsing", "{", "record_id_invalid", record_id="")
    # 6.2 step 3: parsing (section 1.1).
    bad("invalid JSON", '{"a":1,}', "invalid_json")
    bad("unclosed object", "{", "invalid_json")
    bad("lone surrogate", '{"a":"\\ud800"}', "lone_surrogate")
    bad("number out of range", '{"a":1e400}', "number_out_of_range", "o:/a")
    bad("duplicate member", '{"a":1,"a":2}', "duplicate_member", "o:/a")
    bad("depth 126", None, "depth_exceeded", "o" * 125 + ":" + "/a" * 125, generate={"depth": 126})
    bad("depth 127", None, "depth_exceeded", "o" * 125 + ":" + "/a" * 125, generate={"depth": 127})
    bad("parse error before shape", "[1e400]", "number_out_of_range", "a:/0")
    # 6.2 step 4: shape.
    for name, payload in [
        ("array", "[1]"),
        ("empty array", "[]"),
        ("number", "1"),
        ("string", '"a"'),
        ("null", "null"),
        ("true", "true"),
    ]:
        bad(f"payload is {name}", payload, "payload_not_object")
    bad("empty object", "{}", "payload_empty")
    bad("empty object with whitespace", " { } ", "payload_empty")
    # 6.2 step 5.1: control characters in member names.
    bad("name with U+0001", '{"a\\u0001":1}', "control_character", "o:/a\u0001")
    bad("name with raw DEL", '{"a\u007f":1}', "control_character", "o:/a\u007f")
    bad("name with U+0085", '{"a\u0085":1}', "control_character", "o:/a\u0085")
    bad("name with U+009F", '{"a\u009f":1}', "control_character", "o:/a\u009f")
    bad("name that is a newline", '{"\\n":1}', "control_character", "o:/\n")
    bad(
        "control character on a container",
        '{"x":{"b\u007f":{"c":1}}}',
        "control_character",
        "oo:/x/b\u007f",
    )
    bad(
        "control character inside an array element",
        '{"l":[{"k\\u0000":1}]}',
        "control_character",
        "oao:/l/0/k\u0000",
    )
    bad(
        "control character before path length",
        '{"\\u0001' + long_x + '":1}',
        "control_character",
        "o:/\u0001" + long_x,
    )
    bad(
        "control character before undeclared",
        '{"b":2,"\\u0001":1}',
        "control_character",
        "o:/\u0001",
        strict=True,
    )
    # 6.2 step 5.2: path length.
    bad("path of 513 bytes", '{"' + long_x + '":1}', "path_too_long", "o:/" + long_x)
    bad(
        "path of 513 bytes with 2-byte characters",
        '{"' + "\u00e9" * 255 + '":1}',
        "path_too_long",
        "o:/" + "\u00e9" * 255,
    )
    bad(
        "path of 513 bytes with escaped tildes",
        '{"' + "~" * 255 + '":1}',
        "path_too_long",
        "o:/" + "~0" * 255,
    )
    bad(
        "path of 513 bytes on a container",
        '{"' + long_x + '":{"a":1}}',
        "path_too_long",
        "o:/" + long_x,
    )
    bad(
        "nested path of 513 bytes",
        '{"a":{"' + "x" * 507 + '":1}}',
        "path_too_long",
        "oo:/a/" + "x" * 507,
    )
    # 6.2 step 5.3: containers at paths declared with a kind other than free.
    bad(
        "object at a money path",
        '{"a":{"b":1}}',
        "value_type",
        "o:/a",
        declarations={"o:/a": "money"},
    )
    bad("array at a text path", '{"a":[1]}', "value_type", "o:/a", declarations={"o:/a": "text"})
    bad(
        "empty object at a money path",
        '{"a":{}}',
        "value_type",
        "o:/a",
        declarations={"o:/a": "money"},
    )
    bad("null at a money path", '{"a":null}', "value_type", "o:/a", declarations={"o:/a": "money"})
    bad(
        "container checked before its children",
        '{"a":{"b":1.5}}',
        "value_type",
        "o:/a",
        declarations={"o:/a": "integer", "oo:/a/b": "money"},
    )
    # 6.2 step 5.4: field count, strict, encode_value.
    bad("4097 fields", None, "too_many_fields", generate={"fields": 4097})
    bad(
        "4097 fields, leaf 4097 also badly typed",
        None,
        "too_many_fields",
        generate={"fields": 4097},
        declarations={"o:/f4096": "text"},
    )
    bad(
        "4097 fields in strict mode",
        None,
        "undeclared_field",
        "o:/f0000",
        generate={"fields": 4097},
        declarations={},
        strict=True,
    )
    bad(
        "strict refuses an undeclared field",
        '{"a":1,"b":2}',
        "undeclared_field",
        "o:/b",
        declarations={"o:/a": "integer"},
        strict=True,
    )
    bad("strict without declarations", '{"a":1}', "undeclared_field", "o:/a", strict=True)
    bad(
        "strict, wildcard covers only its field",
        '{"items":[{"price":1,"sku":"A"}]}',
        "undeclared_field",
        "oao:/items/0/sku",
        declarations={"oao:/items/*/price": "money"},
        strict=True,
    )
    bad(
        "strict, empty array is a field",
        '{"items":[]}',
        "undeclared_field",
        "o:/items",
        declarations={"oao:/items/*/price": "money"},
        strict=True,
    )
    bad(
        "strict, o step * is literal",
        '{"*":1,"a":2}',
        "undeclared_field",
        "o:/a",
        declarations={"o:/*": "free"},
        strict=True,
    )
    bad(
        "strict, free on /a does not cover /ab",
        '{"a":1,"ab":2}',
        "undeclared_field",
        "o:/ab",
        declarations={"o:/a": "free"},
        strict=True,
    )
    bad(
        "strict, first undeclared in canonical order",
        '{"b\\n":1,"a":1}',
        "control_character",
        "o:/b\n",
        declarations={"o:/a": "free"},
        strict=True,
    )
    bad(
        "strict is checked before the integer range",
        '{"a":9007199254740992}',
        "undeclared_field",
        "o:/a",
        strict=True,
    )
    bad(
        "money fraction names the field",
        '{"amount":12.5}',
        "money_fraction",
        "o:/amount",
        declarations={"o:/amount": "money"},
    )
    bad(
        "currency names the field",
        '{"cur":"EU"}',
        "currency_invalid",
        "o:/cur",
        declarations={"o:/cur": "currency"},
    )
    bad(
        "timestamp names the field",
        '{"at":"2024-01-01T00:00:00"}',
        "timestamp_invalid",
        "o:/at",
        declarations={"o:/at": "timestamp"},
    )
    bad(
        "leap second refused",
        '{"at":"2016-12-31T23:59:60Z"}',
        "timestamp_invalid",
        "o:/at",
        declarations={"o:/at": "timestamp"},
    )
    bad(
        "wildcard error names the element",
        '{"items":[{"price":100},{"price":2.5}]}',
        "money_fraction",
        "oao:/items/1/price",
        declarations={"oao:/items/*/price": "money"},
    )
    bad("2^53 refused", '{"a":9007199254740992}', "integer_out_of_range", "o:/a")
    bad("-2^53 refused", '{"a":-9007199254740992}', "integer_out_of_range", "o:/a")
    bad("1e300 refused", '{"a":1e300}', "integer_out_of_range", "o:/a")
    bad(
        "2^53 + 1 in an array refused",
        '{"a":[1,2,9007199254740993]}',
        "integer_out_of_range",
        "oa:/a/2",
    )
    bad(
        "2^53 refused even in a text field",
        '{"a":9007199254740992}',
        "integer_out_of_range",
        "o:/a",
        declarations={"o:/a": "text"},
    )
    bad(
        "boolean field refuses 1", '{"f":1}', "value_type", "o:/f", declarations={"o:/f": "boolean"}
    )
    # Walk order (6.2 step 5): canonical order, each value before its children.
    bad(
        "walk in index order, not path order",
        '{"a":[0,0,1.5,0,0,0,0,0,0,0,2.5]}',
        "money_fraction",
        "oa:/a/2",
        declarations={"oa:/a/*": "money"},
    )
    bad(
        "walk in UTF-16 member order",
        '{"\uff61":1.5,"\U0001f600":2.5}',
        "money_fraction",
        "o:/\U0001f600",
        declarations={"o:/\uff61": "money", "o:/\U0001f600": "money"},
    )
    bad(
        "walk depth first",
        '{"b":2.5,"a":{"b":1.5}}',
        "money_fraction",
        "oo:/a/b",
        declarations={"oo:/a/b": "money", "o:/b": "money"},
    )


def main() -> None:
    accepted_cases()
    refused_cases()
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    target = Path(__file__).with_name("records.json")
    target.write_text(
        json.dumps({"cases": CASES}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{target}: {len(CASES)} cases")


if __name__ == "__main__":
    main()

"""Write jcs.json: RFC 8785 canonicalisation cases and the refusals of docs/spec.md 1.1.

Run from the repository root: ``python tests/vectors/generate_jcs.py``.

Every expected output and error below is written by hand; the script only assembles them (deep
nestings are built by repetition) and checks, as a cross-check, that each accepted case agrees
with the ``rfc8785`` package applied to ``json.loads`` of the input where that package takes the
value. Sources:

- RFC 8785 sections 3.2.2 (the whole-transformation example), 3.2.3 (sorting) and 3.2.4
  (UTF-8 output);
- cyberphone/json-canonicalization ``testdata/input/*.json`` and ``testdata/output/*.json``
  (arrays, french, simpleString, structures, unicode, values, weird), transcribed byte for
  byte; the store held no ``output/arrays.json``, so that expected output is written by hand;
- number edge cases and every refusal of docs/spec.md 1.1/1.2, written by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

CASES: list[dict] = []


def _exact_decimal(numerator: int, power_of_two: int) -> str:
    """numerator / 2**power_of_two written out exactly (it always terminates)."""
    digits = str(numerator * 5**power_of_two).rjust(power_of_two + 1, "0")
    return (digits[:-power_of_two] + "." + digits[-power_of_two:]).rstrip("0")


def ok(name: str, text: str, output: str) -> None:
    CASES.append({"name": name, "input": text, "output": output})


def err(name: str, text: str, code: str, field: str | None = None) -> None:
    CASES.append({"name": name, "input": text, "error": {"code": code, "field": field}})


def err_hex(name: str, hex_: str, code: str, field: str | None = None) -> None:
    CASES.append({"name": name, "input_hex": hex_, "error": {"code": code, "field": field}})


# --- RFC 8785 --------------------------------------------------------------------------------

ok(
    "rfc8785 3.2.2 example",
    '{\n  "numbers": [333333333.33333329, 1E30, 4.50,\n'
    "              2e-3, 0.000000000000000000000000001],\n"
    '  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n'
    '  "literals": [null, true, false]\n}',
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
    '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
)
ok(
    "rfc8785 3.2.3 sorting",
    '{\n  "\\u20ac": "Euro Sign",\n  "\\r": "Carriage Return",\n'
    '  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "1": "One",\n'
    '  "\\ud83d\\ude00": "Emoji: Grinning Face",\n  "\\u0080": "Control",\n'
    '  "\\u00f6": "Latin Small Letter O With Diaeresis"\n}',
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
    '"ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign",'
    '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
)
ok(
    "rfc8785 3.2.4 utf-8 generation",
    '{"Unnormalized Unicode":"A\\u030a"}',
    '{"Unnormalized Unicode":"A\u030a"}',
)

# --- cyberphone/json-canonicalization testdata ------------------------------------------------

ok(
    "cyberphone arrays",
    '[\n  56,\n  {\n    "d": true,\n    "10": null,\n    "1": [ ]\n  }\n]',
    '[56,{"1":[],"10":null,"d":true}]',
)
ok(
    "cyberphone french",
    '{\n  "peach": "This sorting order",\n  "péché": "is wrong according to French",\n'
    '  "pêche": "but canonicalization MUST",\n  "sin":   "ingnore locale"\n}\n',
    '{"peach":"This sorting order","péché":"is wrong according to French",'
    '"pêche":"but canonicalization MUST","sin":"ingnore locale"}',
)
ok(
    "cyberphone simpleString",
    '    "this is a test string 1235"',
    '"this is a test string 1235"',
)
ok(
    "cyberphone structures",
    '{\n  "1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0},\n  "10": { },\n  "": "empty",\n'
    '  "a": { },\n  "111": [ { } ],\n  "A": { }\n}',
    '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
)
ok(
    "cyberphone unicode",
    '{\n  "Unnormalized Unicode":"\\u1e0d\\u0307"\n}\n',
    '{"Unnormalized Unicode":"\u1e0d\u0307"}',
)
ok(
    "cyberphone values",
    '{\n  "numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],\n'
    '  "escaping": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n'
    '  "literals": [null, true, false]\n}',
    '{"escaping":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],'
    '"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
)
ok(
    "cyberphone weird",
    '{\n  "\\u20ac": "Euro Sign",\n  "1": "One",\n  "\\u0080": "Control\\u007f",\n'
    '  "\\ud83d\\ude02": "Smiley",\n  "\\u00f6": "Latin Small Letter O With Diaeresis",\n'
    '  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "</script>": "Browser Challenge"\n}\n',
    '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f",'
    '"ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","\U0001f602":"Smiley",'
    '"\ufb33":"Hebrew Letter Dalet With Dagesh"}',
)

# --- numbers (docs/spec.md 1.4) ---------------------------------------------------------------

for text, out in [
    ("1", "1"),
    ("1.0", "1"),
    ("1e0", "1"),
    ("1E+0", "1"),
    ("10e-1", "1"),
    ("0.1e1", "1"),
    ("-0", "0"),
    ("-0.0", "0"),
    ("0e10", "0"),
    ("-0e-10", "0"),
    ("100", "100"),
    ("1E2", "100"),
    ("123e-2", "1.23"),
    ("4.50", "4.5"),
    ("0.1", "0.1"),
    ("0.30000000000000004", "0.30000000000000004"),
    ("1e20", "100000000000000000000"),
    ("123456789012345678901", "123456789012345680000"),
    ("1e21", "1e+21"),
    ("999999999999999999999", "1e+21"),
    ("1e23", "1e+23"),
    ("100000000000000000000000000000000", "1e+32"),
    ("-1.5e300", "-1.5e+300"),
    ("1e-6", "0.000001"),
    ("0.0000015", "0.0000015"),
    ("0.000001234", "0.000001234"),
    ("1e-7", "1e-7"),
    ("0.1e-6", "1e-7"),
    ("1.5e-7", "1.5e-7"),
    ("-1.5e-7", "-1.5e-7"),
    ("5e-324", "5e-324"),
    ("3e-324", "5e-324"),
    ("2e-324", "0"),
    ("1e-400", "0"),
    ("-1e-400", "0"),
    ("2.2250738585072014e-308", "2.2250738585072014e-308"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ("1.7976931348623158e308", "1.7976931348623157e+308"),
    ("-1.7976931348623157e308", "-1.7976931348623157e+308"),
    ("9007199254740991", "9007199254740991"),
    ("9007199254740992", "9007199254740992"),
    ("9007199254740993", "9007199254740992"),
    ("9007199254740995", "9007199254740996"),
    ("-9007199254740993", "-9007199254740992"),
    ("1.00000000000000011102230246251565404236316680908203125", "1"),
    ("1.00000000000000011102230246251565404236316680908203126", "1.0000000000000002"),
    ("0." + "0" * 400 + "1", "0"),
]:
    ok(f"number {text if len(text) < 60 else text[:20] + '...'}", f"[{text}]", f"[{out}]")
for text, out in [
    ("1e01", "10"),
    ("1E-01", "0.1"),
    ("-0e0", "0"),
    ("0e400", "0"),
    ("0.0e99999999999999999999", "0"),
    ("1e-99999999999999999999", "0"),
    ("0.00001e310", "1e+305"),
    ("1000000000000000000000000e-20", "10000"),
    ("100000e-5", "1"),
    ("123456789012345678901234567890", "1.2345678901234568e+29"),
    ("0.1000000000000000055511151231257827021181583404541015625", "0.1"),
    ("2.4703282292062327e-324", "0"),
    ("2.4703282292062328e-324", "5e-324"),
]:
    ok(f"number {text}", f"[{text}]", f"[{out}]")
# Exact decimal expansions of two binary midpoints; round half to even decides.
_HALF_MIN_SUBNORMAL = _exact_decimal(1, 1075)  # 2^-1075, halfway between 0 and 5e-324
ok("number exactly half the smallest subnormal", f"[{_HALF_MIN_SUBNORMAL}]", "[0]")
ok("number just above half the smallest subnormal", f"[{_HALF_MIN_SUBNORMAL}1]", "[5e-324]")
_MAX_MIDPOINT = str(2**1024 - 2**970)  # halfway between the largest double and 2^1024
ok(
    "number just below the overflow midpoint",
    f"[{2**1024 - 2**970 - 1}]",
    "[1.7976931348623157e+308]",
)
err("number exactly at the overflow midpoint", f"[{_MAX_MIDPOINT}]", "number_out_of_range", "a:/0")
ok("number as the whole document", " 1.50 ", "1.5")
ok("negative zero as the whole document", "-0", "0")

# --- strings ----------------------------------------------------------------------------------

ok("control characters escaped", r'["\u0000\u0001\u001f"]', r'["\u0000\u0001\u001f"]')
ok("short escapes kept", r'["\b\f\n\r\t"]', r'["\b\f\n\r\t"]')
ok("short escapes from \\u form", r'["\u0008\u0009\u000a\u000c\u000d"]', r'["\b\t\n\f\r"]')
ok("vertical tab as \\u000b", r'["\u000b"]', r'["\u000b"]')
ok("upper-case hex escape of a control", r'["\u001F"]', r'["\u001f"]')
ok(
    "DEL, C1, U+2028/2029 written raw",
    r'["\u007f\u0080\u009f\u2028\u2029"]',
    '["\x7f\x80\x9f\u2028\u2029"]',
)
ok("raw DEL accepted", '["\x7f"]', '["\x7f"]')
ok("solidus unescaped", r'["\/"]', '["/"]')
ok("quote and backslash", r'["\"\\"]', r'["\"\\"]')
ok("quote and backslash from \\u form", r'["\u0022\u005C"]', r'["\"\\"]')
ok("non-ASCII from escape", r'["\u00E9\u20AC"]', '["é€"]')
ok("surrogate pair escape", r'["\uD83D\uDE00"]', '["\U0001f600"]')
ok("raw non-BMP", '["\U0001f600"]', '["\U0001f600"]')
ok("html characters untouched", '["<>&\'"]', '["<>&\'"]')
ok("no unicode normalisation", '["e\u0301", "\u212b"]', '["e\u0301","\u212b"]')

# --- structure and sorting --------------------------------------------------------------------

ok("whitespace removed", ' \t\r\n{ "a" : [ 1 , 2 ] ,"b" :{ } } \n', '{"a":[1,2],"b":{}}')
ok(
    "members sorted, nested too",
    '{"b":1,"a":2,"c":{"z":1,"y":2}}',
    '{"a":2,"b":1,"c":{"y":2,"z":1}}',
)
ok("shorter prefix first", '{"aa":1,"b":3,"a":2}', '{"a":2,"aa":1,"b":3}')
ok("upper case before lower case", '{"a":2,"B":1}', '{"B":1,"a":2}')
ok(
    "UTF-16 order, not code point order",
    '{"\uff61":1,"\\ud83d\\ude00":2}',
    '{"\U0001f600":2,"\uff61":1}',
)
ok("NFC and NFD names are distinct", '{"\u00e9":1,"e\u0301":2}', '{"e\u0301":2,"\u00e9":1}')
ok("names differing in case are distinct", '{"a":1,"A":2}', '{"A":2,"a":1}')
ok("array order kept", "[3,1,2]", "[3,1,2]")
ok("empty name", '{"":1}', '{"":1}')
ok("same name in different objects", '{"a":{"a":1}}', '{"a":{"a":1}}')
ok("escaped NUL in a name", '{"\\u0000":1}', '{"\\u0000":1}')
ok("top-level string", '"x"', '"x"')
ok("top-level null", " null ", "null")
ok("top-level true", "true", "true")
ok("top-level false", "false", "false")
ok("top-level empty array", "[ ]", "[]")
ok("top-level empty object", "{ }", "{}")

# --- depth (docs/spec.md 1.1: 125 levels) -----------------------------------------------------

ok("depth 125 arrays", "[" * 125 + "]" * 125, "[" * 125 + "]" * 125)
ok("depth 125 objects", '{"a":' * 125 + "1" + "}" * 125, '{"a":' * 125 + "1" + "}" * 125)
err("depth 126 arrays", "[" * 126 + "]" * 126, "depth_exceeded", "a" * 125 + ":" + "/0" * 125)
err(
    "depth 126 objects",
    '{"a":' * 126 + "1" + "}" * 126,
    "depth_exceeded",
    "o" * 125 + ":" + "/a" * 125,
)
err(
    "depth 126 in a later element",
    "[0," + "[" * 125 + "]" * 125 + "]",
    "depth_exceeded",
    "a" * 125 + ":/1" + "/0" * 124,
)
err("depth 126 unclosed", "[" * 126, "depth_exceeded", "a" * 125 + ":" + "/0" * 125)
err(
    "depth 127 reports level 126",
    "[" * 127 + "]" * 127,
    "depth_exceeded",
    "a" * 125 + ":" + "/0" * 125,
)

# --- invalid_utf8 (checked before anything else) ----------------------------------------------

err_hex("invalid byte ff", "5b22ff225d", "invalid_utf8")
err_hex("invalid byte f5", "5b22f5808080225d", "invalid_utf8")
err_hex("overlong 2-byte solidus", "5b22c0af225d", "invalid_utf8")
err_hex("overlong c1", "5b22c1bf225d", "invalid_utf8")
err_hex("overlong 3-byte", "5b22e080af225d", "invalid_utf8")
err_hex("overlong 4-byte", "5b22f08080af225d", "invalid_utf8")
err_hex("encoded high surrogate", "5b22eda080225d", "invalid_utf8")
err_hex("encoded low surrogate", "5b22edb080225d", "invalid_utf8")
err_hex("encoded surrogate pair (CESU-8)", "5b22eda0bdedb880225d", "invalid_utf8")
err_hex("above U+10FFFF", "5b22f4908080225d", "invalid_utf8")
err_hex("truncated sequence", "5b22e282225d", "invalid_utf8")
err_hex("truncated at end of input", "5b22e282", "invalid_utf8")
err_hex("lone continuation byte", "5b2280225d", "invalid_utf8")
err_hex("invalid byte in a member name", "7b22ff223a317d", "invalid_utf8")
err_hex("invalid byte between tokens", "5bff5d", "invalid_utf8")
err_hex("invalid utf8 beats an earlier syntax error", "5b312c5dff", "invalid_utf8")
err_hex("invalid utf8 beats an earlier lone surrogate", "5b225c7564383030225dff", "invalid_utf8")
err_hex("invalid utf8 after a duplicate", "7b2261223a312c2261223a327dff", "invalid_utf8")

# --- invalid_json -----------------------------------------------------------------------------

err("byte-order mark", "\ufeff{}", "invalid_json")
err_hex("byte-order mark as bytes", "efbbbf7b7d", "invalid_json")
err("byte-order mark beats out-of-range number", "\ufeff[1e400]", "invalid_json")
for name, text in [
    ("empty input", ""),
    ("whitespace only", " \n\t "),
    ("NaN", "[NaN]"),
    ("nan", "[nan]"),
    ("Infinity", "[Infinity]"),
    ("-Infinity", "[-Infinity]"),
    ("leading zero", "[01]"),
    ("negative leading zero", "[-01]"),
    ("double zero", "[00]"),
    ("leading zero before fraction", "[00.5]"),
    ("trailing comma in array", "[1,]"),
    ("trailing comma in object", '{"a":1,}'),
    ("leading comma", "[,1]"),
    ("double comma", '{"a":1,,"b":2}'),
    ("empty object with comma", "{,}"),
    ("missing comma", "[1 2]"),
    ("missing colon", '{"a" 1}'),
    ("unquoted name", "{a:1}"),
    ("single quotes", "['a']"),
    ("fraction without integer", "[.5]"),
    ("integer without fraction digits", "[1.]"),
    ("plus sign", "[+1]"),
    ("exponent without digits", "[1e]"),
    ("exponent sign without digits", "[1e+]"),
    ("minus alone", "[-]"),
    ("hexadecimal number", "[0x10]"),
    ("True capitalised", "[True]"),
    ("truncated literal", "[nul]"),
    ("comment", "/* c */ {}"),
    ("unclosed array", "[1"),
    ("unclosed object", '{"a":'),
    ("unclosed string", '["abc'),
    ("extra closing brace", '{"a":1}}'),
    ("two documents", "[1] [2]"),
    ("two scalars", "1 2"),
    ("trailing NUL", "[1]\u0000"),
    ("unknown escape", r'["\x"]'),
    ("short unicode escape", r'["\u12"]'),
    ("non-hex unicode escape", r'["\u12G4"]'),
    ("raw control character in string", '["a\u0001b"]'),
    ("raw tab in string", '["a\tb"]'),
    ("raw newline in string", '["a\nb"]'),
    ("raw control character in name", '{"a\u001fb":1}'),
    ("escaped solidus outside string", "[\\/]"),
    ("form feed between tokens", "[1,\f2]"),
    ("vertical tab between tokens", "[1,\u000b2]"),
    ("no-break space before a document", "\u00a0[]"),
    ("line separator after a document", "[]\u2028"),
    ("upper-case U escape", r'["\U0041"]'),
    ("exponent with decimal point", "[1e1.5]"),
    ("double exponent sign", "[1e+-1]"),
]:
    err(name, text, "invalid_json")

# --- lone_surrogate ---------------------------------------------------------------------------

for name, text in [
    ("lone high surrogate", r'["\ud800"]'),
    ("lone high surrogate upper case", r'["\uD800"]'),
    ("lone low surrogate", r'["\udc00"]'),
    ("lone low surrogate dfff", r'["\udfff"]'),
    ("high surrogate followed by text", r'["\ud800x"]'),
    ("high surrogate followed by an escaped letter", r'["\ud800\u0041"]'),
    ("high surrogate followed by a short escape", r'["\ud800\n"]'),
    ("two high surrogates", r'["\ud800\ud800"]'),
    ("reversed pair", r'["\udc00\ud800"]'),
    ("lone high surrogate in a name", r'{"\ud800":1}'),
    ("lone low surrogate inside a name", r'{"a\udc00b":1}'),
    ("lone surrogate as the whole document", r'"\ud83d"'),
]:
    err(name, text, "lone_surrogate")

# --- number_out_of_range ----------------------------------------------------------------------

err("1e400 as the whole document", "1e400", "number_out_of_range")
err("-1e400 as the whole document", "-1e400", "number_out_of_range")
err("1e400 in an array", "[1e400]", "number_out_of_range", "a:/0")
err("1e400 in a nested array", '{"a":[1,1e400]}', "number_out_of_range", "oa:/a/1")
err("1e400 under escaped names", '{"a":{"b~/c":1e400}}', "number_out_of_range", "oo:/a/b~0~1c")
err("1e400 under the empty name", '{"":1e400}', "number_out_of_range", "o:/")
err("1e309", "[[1],[2,1e309]]", "number_out_of_range", "aa:/1/1")
err("just above the largest double", "[1.7976931348623159e308]", "number_out_of_range", "a:/0")
err("401-digit integer", "[1" + "0" * 400 + "]", "number_out_of_range", "a:/0")
err("-1e400 in an object", '{"n":-1e400}', "number_out_of_range", "o:/n")

# --- duplicate_member -------------------------------------------------------------------------

err("duplicate name", '{"a":1,"a":2}', "duplicate_member", "o:/a")
err("duplicate name not adjacent", '{"a":1,"b":2,"a":3}', "duplicate_member", "o:/a")
err("duplicate with equal values", '{"a":1,"a":1}', "duplicate_member", "o:/a")
err("duplicate in a nested object", '{"x":{"b":1,"b":2}}', "duplicate_member", "oo:/x/b")
err("duplicate in an array element", '[{"a":1,"a":1}]', "duplicate_member", "ao:/0/a")
err("duplicate after unescaping", r'{"a":1,"\u0061":2}', "duplicate_member", "o:/a")
err("duplicate with solidus", r'{"a/b":1,"a\/b":2}', "duplicate_member", "o:/a~1b")
err("first repetition reported (b)", '{"a":1,"b":1,"b":2,"a":2}', "duplicate_member", "o:/b")
err("first repetition reported (a)", '{"b":1,"a":1,"a":2,"b":2}', "duplicate_member", "o:/a")
err("name given three times", '{"a":1,"a":2,"a":3}', "duplicate_member", "o:/a")
err("duplicate tilde", '{"~":1,"~":2}', "duplicate_member", "o:/~0")
err("duplicate empty name", '{"":1,"":2}', "duplicate_member", "o:/")
err(
    "duplicate non-BMP name",
    '{"\U0001f600":1,"\\ud83d\\ude00":2}',
    "duplicate_member",
    "o:/\U0001f600",
)
err(
    "duplicate of raw and escaped e-acute",
    '{"\u00e9":1,"\\u00e9":2}',
    "duplicate_member",
    "o:/\u00e9",
)

# --- fault order (docs/spec.md 1.1: first fault in document order) ----------------------------

err("duplicate then syntax error in the same object", '{"a":1,"a":2,}', "invalid_json")
err("duplicate in an unclosed object", '{"a":1,"a":2', "invalid_json")
err("duplicate then out-of-range number", '{"a":1,"a":2,"b":1e400}', "number_out_of_range", "o:/b")
err("duplicate then lone surrogate", '{"a":1,"a":2,"b":"\\ud800"}', "lone_surrogate")
err(
    "duplicate whose value holds 1e400", '{"a":1,"a":{"b":1e400}}', "number_out_of_range", "oo:/a/b"
)
err(
    "inner duplicate closes before outer syntax error",
    '{"x":{"a":1,"a":2},}',
    "duplicate_member",
    "oo:/x/a",
)
err(
    "inner duplicate before outer duplicate",
    '{"a":{"x":1,"x":2},"a":3}',
    "duplicate_member",
    "oo:/a/x",
)
err("duplicate then trailing data", '{"a":1,"a":2} x', "duplicate_member", "o:/a")
err("out-of-range number then duplicate", '{"a":1e400,"a":1}', "number_out_of_range", "o:/a")
err("out-of-range number before syntax error", "[1e400,]", "number_out_of_range", "a:/0")
err("out-of-range number at end of input", "[1e400", "number_out_of_range", "a:/0")
err("out-of-range number then trailing data", "1e400 x", "number_out_of_range")
err("syntax error before out-of-range number", "[01,1e400]", "invalid_json")
err("lone surrogate before syntax error", '["\\ud800",]', "lone_surrogate")
err("lone surrogate before out-of-range number", '["\\ud800",1e400]', "lone_surrogate")
err("out-of-range number before lone surrogate", '[1e400,"\\ud800"]', "number_out_of_range", "a:/0")
# A lone surrogate is reported at the position of its string, so before any later fault
# inside that same string (an unterminated string, a bad escape after it).
err("lone surrogate then end of input", '["\\ud800', "lone_surrogate")
err("lone surrogate then a bad escape", '["\\ud800\\x"]', "lone_surrogate")
err("lone surrogate then a short unicode escape", '["\\ud800\\u12"]', "lone_surrogate")
err("high surrogate then a truncated low surrogate", '["\\ud800\\udc0"]', "lone_surrogate")
err("lone surrogate then a raw control character", '["\\ud800\u0001"]', "lone_surrogate")
err("lone surrogate names then duplicate", '{"\\ud800":1,"\\ud800":2}', "lone_surrogate")
err("syntax error before depth 126", "[0 " + "[" * 125, "invalid_json")
err(
    "out-of-range number at depth 125",
    "[" * 125 + "1e400" + "]" * 125,
    "number_out_of_range",
    "a" * 125 + ":" + "/0" * 125,
)
err(
    "depth 126 before out-of-range number",
    "[" * 126 + "1e400" + "]" * 126,
    "depth_exceeded",
    "a" * 125 + ":" + "/0" * 125,
)
err(
    "out-of-range number before depth 126",
    "[1e400," + "[" * 125 + "]" * 125 + "]",
    "number_out_of_range",
    "a:/0",
)


def _cross_check() -> None:
    """Accepted cases must agree with the rfc8785 package where it takes the value."""
    import rfc8785

    checked = 0
    for case in CASES:
        if "output" not in case:
            continue
        try:
            value = json.loads(case["input"])
            expected = rfc8785.dumps(value)
        except (ValueError, rfc8785.CanonicalizationError, RecursionError):
            continue
        assert expected == case["output"].encode(), (case["name"], expected)
        checked += 1
    print(f"cross-checked {checked} accepted cases against rfc8785")


def main() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    target = Path(__file__).with_name("jcs.json")
    target.write_text(
        json.dumps({"cases": CASES}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"{target}: {len(CASES)} cases")
    _cross_check()


if __name__ == "__main__":
    main()

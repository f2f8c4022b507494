"""Write numbers.json: IEEE-754 doubles and their ECMAScript text (docs/spec.md 1.4).

Run from the repository root: ``python tests/vectors/generate_numbers.py``.

The first block is RFC 8785 Appendix B (its NaN and Infinity rows are left out: they have no
text and cannot appear in JSON). The second block, written by hand, adds extremes: subnormals,
the normal/subnormal boundary, neighbours of 1, of 2^53 and of 10^21, the fixed/exponent
switches at 1e-6 and 1e21, and negative values. Each expected text was written from
ECMA-262 7.1.12.1; the script cross-checks every row against the ``rfc8785`` package and checks
that the text reads back to the same bits.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

APPENDIX_B = [
    ("0000000000000000", "0", "zero"),
    ("8000000000000000", "0", "minus zero"),
    ("0000000000000001", "5e-324", "min pos number"),
    ("8000000000000001", "-5e-324", "min neg number"),
    ("7fefffffffffffff", "1.7976931348623157e+308", "max pos number"),
    ("ffefffffffffffff", "-1.7976931348623157e+308", "max neg number"),
    ("4340000000000000", "9007199254740992", "max pos int"),
    ("c340000000000000", "-9007199254740992", "max neg int"),
    ("4430000000000000", "295147905179352830000", "~2**68"),
    ("44b52d02c7e14af5", "9.999999999999997e+22", ""),
    ("44b52d02c7e14af6", "1e+23", ""),
    ("44b52d02c7e14af7", "1.0000000000000001e+23", ""),
    ("444b1ae4d6e2ef4e", "999999999999999700000", ""),
    ("444b1ae4d6e2ef4f", "999999999999999900000", ""),
    ("444b1ae4d6e2ef50", "1e+21", ""),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7", ""),
    ("3eb0c6f7a0b5ed8d", "0.000001", ""),
    ("41b3de4355555553", "333333333.3333332", ""),
    ("41b3de4355555554", "333333333.33333325", ""),
    ("41b3de4355555555", "333333333.3333333", ""),
    ("41b3de4355555556", "333333333.3333334", ""),
    ("41b3de4355555557", "333333333.33333343", ""),
    ("becbf647612f3696", "-0.0000033333333333333333", ""),
    ("43143ff3c1cb0959", "1424953923781206.2", "round to even"),
]

EXTREMES = [
    ("0000000000000002", "1e-323", "second subnormal"),
    ("0000000000000003", "1.5e-323", "third subnormal"),
    ("000fffffffffffff", "2.225073858507201e-308", "largest subnormal"),
    ("0010000000000000", "2.2250738585072014e-308", "smallest normal"),
    ("800fffffffffffff", "-2.225073858507201e-308", "largest negative subnormal"),
    ("7fe0000000000000", "8.98846567431158e+307", "2^1023"),
    ("7feffffffffffffe", "1.7976931348623155e+308", "below the largest double"),
    ("3ff0000000000000", "1", "one"),
    ("bff0000000000000", "-1", "minus one"),
    ("3ff0000000000001", "1.0000000000000002", "after one"),
    ("3fefffffffffffff", "0.9999999999999999", "before one"),
    ("4000000000000000", "2", "two"),
    ("3fe0000000000000", "0.5", "half"),
    ("4024000000000000", "10", "ten"),
    ("3fb999999999999a", "0.1", "0.1"),
    ("3fc999999999999a", "0.2", "0.2"),
    ("3fd3333333333334", "0.30000000000000004", "0.1 + 0.2"),
    ("3f50624dd2f1a9fc", "0.001", "1e-3"),
    ("3ee4f8b588e368f1", "0.00001", "1e-5"),
    ("3e7ad7f29abcaf48", "1e-7", "1e-7"),
    ("be7ad7f29abcaf48", "-1e-7", "-1e-7"),
    ("3eb0c6f7a0b5ed8e", "0.0000010000000000000002", "after 1e-6"),
    ("4330000000000000", "4503599627370496", "2^52"),
    ("433fffffffffffff", "9007199254740991", "2^53 - 1"),
    ("c33fffffffffffff", "-9007199254740991", "-(2^53 - 1)"),
    ("4340000000000001", "9007199254740994", "2^53 + 2"),
    ("4340000000000002", "9007199254740996", "2^53 + 4"),
    ("43e0000000000000", "9223372036854776000", "2^63"),
    ("43f0000000000000", "18446744073709552000", "2^64"),
    ("4415af1d78b58c40", "100000000000000000000", "1e20"),
    ("444b1ae4d6e2ef51", "1.0000000000000001e+21", "after 1e21"),
    ("c44b1ae4d6e2ef50", "-1e+21", "-1e21"),
    ("4341c37937e08000", "10000000000000000", "1e16"),
    ("4363c0c7485b9a7e", "44479893619921900", "integer with trailing zeros"),
    ("3ff8000000000000", "1.5", "1.5"),
    ("400921fb54442d18", "3.141592653589793", "pi"),
    ("4005bf0a8b145769", "2.718281828459045", "e"),
    ("41dfffffffc00000", "2147483647", "2^31 - 1"),
    ("c1e0000000000000", "-2147483648", "-2^31"),
    ("3cb0000000000000", "2.220446049250313e-16", "machine epsilon"),
    ("7fd5555555555555", "5.992310449541053e+307", "large repeating"),
    ("0001000000000000", "1.390671161567e-309", "subnormal with short text"),
]


def _check(bits: str, text: str) -> None:
    import rfc8785

    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert rfc8785.dumps(value).decode() == text, (bits, text, rfc8785.dumps(value))
    if bits != "8000000000000000":
        assert struct.pack(">d", float(text)).hex() == bits, (bits, text)


def main() -> None:
    cases = []
    for prefix, rows in (("rfc8785 appendix B", APPENDIX_B), ("extreme", EXTREMES)):
        for bits, text, note in rows:
            _check(bits, text)
            name = f"{prefix} {bits}" + (f" ({note})" if note else "")
            cases.append({"name": name, "bits": bits, "text": text})
    assert len({c["bits"] for c in cases}) == len(cases), "duplicate bit patterns"
    target = Path(__file__).with_name("numbers.json")
    target.write_text(json.dumps({"cases": cases}, indent=1) + "\n", encoding="utf-8")
    print(f"{target}: {len(cases)} cases, all cross-checked against rfc8785")


if __name__ == "__main__":
    main()

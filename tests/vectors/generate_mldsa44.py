"""Write ``mldsa44.json``: ML-DSA-44 signatures (c2sp.org/tlog-cosignature v1.1, type 0x06) on
checkpoints, and bundles whose checkpoints are dual-signed or cosigned with ML-DSA-44
(docs/tlog.md "Dual-signed checkpoints", docs/bundle.md rules 4.9 and 5.6).

- ``torchwood``: the published ML-DSA-44 checkpoint of filippo.io/torchwood
  (``cmd/litewitness/testdata/mldsa.txt``, commit fac5716bb321b939f69bc706463bcfd5835d13ae: a
  log key from the gentest seed, signing with type 0x06 and timestamp 0), transcribed; this
  script checks that the seed gives the vkey and that the signature verifies with
  ``cryptography`` before writing.
- ``messages``: ``subtree/v1`` messages spelt out byte by byte here with ``struct`` (label,
  length-prefixed cosigner name, timestamp, length-prefixed origin, start, end, root), not
  with the project's code, which must give the same bytes.
- ``example``: docs/tlog.md's worked example with ML-DSA-44 keys from fixed seeds: the log's
  vkey and dual-signed checkpoint, the witness's vkey and cosignature line.
- ``cosignatures``: lines over a checkpoint, valid and tampered, with the code each verifier
  gives.
- ``bundles``: bundles of the verifier tests' factory (``tests/verify/factory.py``), their
  log dual-signed, their witness cosigning with ML-DSA-44, each with a key directory and a
  trust store; the expected verdicts and statuses are written here by hand from
  docs/bundle.md, and the script refuses to write unless the Python verifier gives them.

ML-DSA-44 signing is randomized (FIPS 204's hedged variant: ``cryptography`` offers no other),
so running this script again writes other signature bytes with the same outcomes; everything
else (keys, vkeys, messages, checkpoints) is reproducible byte for byte.
Run: ``.venv/bin/python tests/vectors/generate_mldsa44.py`` from the repository root.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "python")]

from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey  # noqa: E402
from tests.verify.factory import ORIGIN, WITNESS, World  # noqa: E402

from recordseal.core import merkle_root  # noqa: E402
from recordseal.crypto.signing import HeaderSigner  # noqa: E402
from recordseal.tlog import (  # noqa: E402
    Checkpoint,
    CosignatureSigner,
    Ed25519Signer,
    MLDSA44CosignatureSigner,
    log_verifier,
    open_checkpoint,
    parse_note,
    sign_note,
    subtree_message,
)
from recordseal.verify import (  # noqa: E402
    load_key_directory,
    load_trust_store,
    verify_bundle,
)

OUT = Path(__file__).with_name("mldsa44.json")
P, F, U = "passed", "failed", "unchecked"
Doc = dict[str, Any]

TORCHWOOD = {
    "source": "filippo.io/torchwood cmd/litewitness/testdata/mldsa.txt at commit"
    " fac5716bb321b939f69bc706463bcfd5835d13ae",
    "seed": "2886adc2b0eabfce67c0472939127998bf886cf256bfee8ba76a253fce1146e0",
    "vkey": "example.com/mldsa-log+b5df45c5+BuhtcL97l3dcitjZ8Y9J54gmQ1TWn/BMF0yePKpTzhlFCkN6ouJDf+9kT9wve4/Y+JGXBUjlRvktAynZ6XOQSO+fOaxyPOQAwrtbZKYXnZWSQj9gHPz18q6brnckUv87Rsk/m5GIBvH8J3ymxZjUQS+DnAUIbctLsG2DD6I/ou0JtXpPLvfGhPDTkwc9QeFyBLBa02Pr9uuWCMohciLqRiFUo5+leUUDKba1g5TYjOjK/VKfntpdbEwoqhTJTG4armjUeXdrYDHeaaMaCAnW5F0lMWYsHjqzRpKjeTjgItseaWKSm+ga/mzTAgqsbo5Ob/AwaXf4Av7/mN+ZM6vHON/NE7Ip5vpXpCiNb9YbEQavn+fjNucFxffCacvzXghvaaQ+3C/5h5lpR8jeajBFsFIOvdkYKizt29lCjqZDkYQgVfB9nWeH6rbayMkBdDpmRH03cI+urD0Eb5zvRuGJn3PgfwdyQJ3WcDH5Gqn5dkKs5NIVMBC+FfKeD47ruAIruda4JiiYCAxZbWgwzTI80N5lZFHEndmxKWaw6z/QyphuYkNyvZVZ0R3kH3JN4jdy9KKpNtFoQqnoBTGeEE/fXEEs5ByPlKnrrefRgWTqxssE4nPzHHr5GGgv/NKNTXNKI4LvNPH5yO3Vv/gIiDZxPPc1Jen8uKkmc0s3kT7XtcuWTlb+zdQeSme9ODj0IoVu29Eav2OsGJpReX7vZx9i2fVfHEMHY5nFew8L5RxcWmZFFiYhMFZnLvk/SWmHcwr3DhzZchrODhabHQ+S6S49Ws+5aoBBPM3mOrSSKHgobdI7BJrdzdT07kjzyiyS9Gyv8iylUHHMuuh1O05RNRcX5SXmenwGDPcT9HuLS+hoesO0FQgEt+jAR7vVyUUU2C6g6FC6QNfHL/EUsulvYIAS5fOK7acOeVnoJlpI57Bq+uzLZm6g7IZD0xxQwZPYyT4ek99l9HxDSrVnU0rAr+Tq5vVh5YxvDkQVWroYIWek/AI5awjmhgpW4LPapBhLk2ipkF5CmU3T0cm3ET5f14gYQZfz23nCsmZ7qyqiQilgOxJzVYacVoGAStGzJNY1wEf26MADW5McyQzYI/3Fpaa4Ay6p2yFmcJMfpqZnu4flgWMqN1UpMbbJ6I7hOrCFWryExK/nvSbRrErHTkPz2wvVfI+enbFz86c0iNb7naQKv6LoIZYEHFOCEsWGL/sCChn6BR4nk1qAakyXEQwi96CkIa3AX562F8lhw6CU4x7T+NWqi2AWfEXImJenORhMP69hGIFsiLAVIjHtsWtJOi8cu+Brg1bFERkB4ryUTrLf/jFeb6KifZ+s8PZWclDaOLMINZ3E78a5u6AzgXpigJsAJ1A4BY89muedrW2O8kFyh3TTTKyY4kedCW6L+8bFHV2Gce25ZulNC1mZs41XAI9CteeYaWaiL7uGMXgyQ73wr4ftwAEMdsoQVQsQriutS1AhpBGvjzPCwD5LC5p1fa0WXBQ1puuaNqr3IJodmDLhEIAsZcv1gdXMg8EQg9QLqgLLrBijU3GxFUQllS8lpQ4TLwFYUJ41+qt28JEeky/VzSEeQd/qob8cbyNM44o7INB+lbhEXEGWvVO8Ak+uWMY+PRKeY9OQcE6E27Nf3eUoHQXkwmXkjGgj0NKeXBIJc1k/Ws6WDbsU4graVKk5FQjwULcRngOpyiJQ/n8sObkAPXr+1rImK3lQJnxif/B6p5/tsh4rrcUht4yVIvFAaqsgAAE=",  # noqa: E501 (transcribed)
    "signed_checkpoint": "example.com/mldsa-log\n1\n+zoErtsZtGO6sfiSV/v4UJSIyowisE8hvjw0q5+bD38=\n\n— example.com/mldsa-log td9FxQAAAAAAAAAAkjFvCxC6244QGemHL0hurmk5M3Hj6noQQtBM1TiwnC1lFmT+t+cUG9W0ENlRQtV20lJFLKCzoJ08ulQEkfiVueKHeMyURh97Iup0R9d41Monv472jkyfDoX3ILyX/kEOuSV4Ed2tU4VmtDSbP0rofMWAbKJRMnzCpNIT5xMe3tRbWLVTvAtnX9OB4UMKL1dvGS/uuhqW9Ddjik2D8veitBvk3TbQcT8fanSyZqCbDZ5zzw5JS3Gu5oD1zK7z+KiyqbzKUhglESs7YXFbeU0E03FrXdAPYS6GAuZtBWTJp4DEm4rL+NqU6Xp0n2ehhqd1rFAJUAcsE5CFakQdlmKkkzVMy3VZYll5ptS0amlYfGqX6/N9bJAYdAoWWpdgCep5eXCutQcTQXc69UocKT99/vholeAP1097GfS+hNL2ndNS2ieMnj8XLD1LCHVoBjKZUIObB0lx3leGRe9VjYgTRAY2WlE+K32b6Iz1rKzzDD8YBNQdkHgdx44uPOU3I+8szYS6NzQ2Z0QlqAtz0j9vZu9yEUUxCEORAiMAHLtV5oWZ/RvSE7qq5B0b8WrHGPGoR/qUNK4ECmlIe/SRo6M7yRrPs3das3ox1bkC3f92c98ewHLeQtLwwsqQJny6rlYaiaiPMxgdT2CVcJEcKOfaK8pdy2fucBDxHrQitpGkeLJLmWk6LLxR/Ut6s6xNyyKSuZlVslS40n9MJ837uMmJFyecKPliwAj8HzTWQywSkMpEQfJyr4i2Kfa2paOZ4izmotRTfdvbFWlWFwuGLWOQ0X/pKaExpdNDwqahAwbfGkw/iHbsV7ZIlNIuSNs2ccQvnjM8xqkT6sYYVxYiHpmk5sOwGsdeiMdwQqn7Q/Lz+uc3F6k/r0Ox7MJTX6fPhFdhe8RJg/77USR/MIGiT4YZHV+XgrtbV0jvMEgB4yEOircsScaBmLv18tTn1GiGlzFjK/s7gOzjk70jf1qCZ1MNgDAPstd/5sXdwYON0FnA5zPUp9yMkq1/wZq+DuePQDT6nj8zgFrkrvl8s7nibKKaL2bKcje5YP3CFcXLZoESZnC3BJkV85VqXlAKl+dctM3vNfMVrqk3/boBARw27mdKLsysIREkWR4caByW0csjL3Js9tn1hB0yf6hIGo8mvPIUjPIXn1rFSSKWkQlq15wu2gwEo9FdVF5beMdF4LVwuO9PZ1Y4oXuRE2pIzMWq/jEzHAZ7GucP7yzU78X767ucrwO/AXjMlLUsLLFZaQcHHBsrQJLpy5w1Jn/L7XFyR2g0lBOdT+lSOhx7j33oIlzxmqdR47ovtkg+LJpbAJG7n/JiQ/h/xffe3VdqSsrB8S4ltKz+rq51swoZ59zmRzWaoNkyWX0eu0E7y6EfpfrKEmr0H+fYtVnJvCznWFKzbv7oDXKC0pOyKZsNctvFwhSGEEURCs1G+4IrAEWG2Y231thQ8HdMvaMcm+ocvBGhZjmE7bXFkdiJ7S09csFjljFDGCiGRiU+flxkyiqpa1DDgeFRWOEyNAdMeY2iQMTJU9ApqNVrPpjGbg7kL0HrfKCQM236d16DKfXIiUmZw/NONKnrliAIs6/WSzKdW/JUyTLiKfPV1ItODmw5eNz7lV36dR8g3us/bpWp4OaDIInrLxYZRfkLHLvXGGg5ogY2k/FMno/3UBbS0QfstK+ByB/pFVYCHWgDjctwpOHaqAAXAiWHAUh1KOpXBMv8qndpzhsYhvKbrL371aBST0e3iPW/K4x+kFfgdeClsftS9RnE8KDCf4Uz+9QMP9sxj4+ZACztE19eBVaSvCqv54wO6n5248UzbqPXzA1dweKQziw/FnPWC7qMrcs3jDi6PBPhpruk1xBy08MQg58l4YzuXrPm5gAyiUAyfNszvhTotaU02oljhvg24CycDo/2PvQY7sBmisIsVVeHssiRxg23CMgWHaPMDn6OM+IhF2xaAqJOjfnsFBWlvMg8LxsrBnOQ1YABVLLtMvCSaIvgBjPt8XtLn9gZ0HL9OvGsR3efWHTR5p4nZyuHH2Nm8F3nWKVkEI4p4H6Yo5O0hkzCi1ZB7QT3uEIeR0Hq3g/bLTzmm6XzsjWSmQ8CtPapmXX476QT44wU0CWJ096SqUGUq2ZCDg3kFkV0BuKPIfLCt4sYK9bjj8UZCqkhyHbVm2x+HQwk8mNnDbUd7PK89riPjA33KX0Sw32RE0uKtB0sC8m7t028aEupsRx56/M0jBgeYmEHuRrXpW9nuOkQPTBaHdmYBHNkzTF2arPzZK3diFuhKPvmSQh2CN6g8r0p3EN+dmps1fIUfHM6emkEuaod+ZG83vyJsyd5B2oPMTVP12z8VJtDRAYfA5bRj+HEw2aD4f23u/Zq3PHk2C9T5LTAu28WCuO/EpXGSIkq1/hRpyE0qhJSnPN9/iE74PoU1OgjGBv6uSUsNhNZJeMe2W23s8EAyStB5+u83IBgUctrGwXzNdoC9LY1p+kNFSAZXIggNB3alVzoS+D9rcCYTUAafpkdwLaYq5/w0wRchljkG61rl+gZCiwtqZv3SHVxO7kRTAzfHsGDB1yc/9Sz++IMGyFHYvuqtclhpHPPToFByaVl687b1P4t2i/U4fWPZ4BBhN5Q7HGTxubspw1GY2MjBYU5OXvEJu9aWeibkM/fg6QrxPRYNsJBNJQRywMjYHj6AefrZeGXGxSNgS50kCNBvV7XTli/17y3MFgR4WfNmBK3BqKb87v3DBMVnLHcqvw1ZVjFPv91q0XYaDdVFHqOnS4Fh5nfwh1qfuvKrUZlwFPcwW+pG4YDyjx90MTFugpQ6KfEusmUhB5Dqr79nYWbOhW3e0PCEZtxmVrH9EtCHEgO6wnkWjPke6XULARu0ECF1gZvQczEjKfzxCt6Rknz+27lXyzgzRyHWxr0kB/pFty+8IebrDfIW9757d+1QLonDTmkLQiirF0ygsgQALmk1KljcHD/qiAZPHh5YX+Q2VdDfIfGeMXmCg3nX5r5DINcx47fNHtgWeGn8MjF8Hnff6x+ZU/7YqcBrDOvGqn46FBvuRY0+mWkRo576207vQR/023owl7pXZ5p/75V5yDkTZWDtXsfKjpypcxrWIBsg5GC25nZdjQQGBtFUF1pfn+xvunq9AEIFidYY2Vyc3mYw8TW7PkVKis5PENhdbfJHDtIdIiQsLe+1Nr+/wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA4eKDU=\n",  # noqa: E501 (transcribed)
    "timestamp": 0,
}

# --- the worked example of docs/tlog.md, with ML-DSA-44 keys --------------------------------

EXAMPLE_LOG = "example.com/recordseal/tenant-a/fleet-1"
EXAMPLE_WITNESS = "witness.example.com/w1"
EXAMPLE_TIMESTAMP = 1767225600  # 2026-01-01T00:00:00Z
#: The seeds of docs/tlog.md: SHA-256 of these texts (RFC 8032 and FIPS 204 seeds alike).
LOG_SEED_TEXT = b"recordseal docs: log key"
LOG_MLDSA_SEED_TEXT = b"recordseal docs: log ML-DSA-44 key"
WITNESS_MLDSA_SEED_TEXT = b"recordseal docs: witness ML-DSA-44 key"


def spelled_message(name: str, timestamp: int, origin: str, size: int, root: bytes) -> bytes:
    """``cosigned_message`` spelt out as tlog-cosignature v1.1 says, independently."""
    label = b"subtree/v1\n\x00"
    name_bytes, origin_bytes = name.encode(), origin.encode()
    return (
        label
        + struct.pack(">B", len(name_bytes))
        + name_bytes
        + struct.pack(">Q", timestamp)
        + struct.pack(">B", len(origin_bytes))
        + origin_bytes
        + struct.pack(">QQ", 0, size)
        + root
    )


def torchwood() -> Doc:
    seed = bytes.fromhex(TORCHWOOD["seed"])  # type: ignore[arg-type]
    public = MLDSA44PrivateKey.from_seed_bytes(seed).public_key().public_bytes_raw()
    vkey = str(TORCHWOOD["vkey"])
    assert base64.b64decode(vkey.split("+", 2)[2]) == b"\x06" + public, "the seed is not the vkey's"
    checkpoint, note = open_checkpoint(str(TORCHWOOD["signed_checkpoint"]), [log_verifier(vkey)])
    assert checkpoint.root_hash == hashlib.sha256(b"\x00testonly").digest()  # RecordHash
    assert len(note.verified) == 1
    return TORCHWOOD


def example() -> tuple[Doc, list[Doc], list[Doc]]:
    leaves = [f"leaf {i}".encode() for i in range(5)]
    checkpoint = Checkpoint(EXAMPLE_LOG, 5, merkle_root(leaves))
    text = checkpoint.text()
    ed25519 = Ed25519Signer.from_seed(EXAMPLE_LOG, hashlib.sha256(LOG_SEED_TEXT).digest())
    log = MLDSA44CosignatureSigner.from_seed(
        EXAMPLE_LOG, hashlib.sha256(LOG_MLDSA_SEED_TEXT).digest(), clock=None
    )
    witness = MLDSA44CosignatureSigner.from_seed(
        EXAMPLE_WITNESS, hashlib.sha256(WITNESS_MLDSA_SEED_TEXT).digest()
    )
    signed = sign_note(text, [ed25519, log])
    cosignature = witness.cosign(text, EXAMPLE_TIMESTAMP)
    messages = [
        {
            "name": "the witness's cosignature of the worked example",
            "cosigner": EXAMPLE_WITNESS,
            "timestamp": EXAMPLE_TIMESTAMP,
            "checkpoint": text,
            "message": spelled_message(
                EXAMPLE_WITNESS, EXAMPLE_TIMESTAMP, EXAMPLE_LOG, 5, checkpoint.root_hash
            ).hex(),
        },
        {
            "name": "the log's own signature of the worked example (no time: 0)",
            "cosigner": EXAMPLE_LOG,
            "timestamp": 0,
            "checkpoint": text,
            "message": spelled_message(EXAMPLE_LOG, 0, EXAMPLE_LOG, 5, checkpoint.root_hash).hex(),
        },
        {
            "name": "torchwood's checkpoint",
            "cosigner": "example.com/mldsa-log",
            "timestamp": 0,
            "checkpoint": parse_note(str(TORCHWOOD["signed_checkpoint"])).text,
            "message": spelled_message(
                "example.com/mldsa-log",
                0,
                "example.com/mldsa-log",
                1,
                hashlib.sha256(b"\x00testonly").digest(),
            ).hex(),
        },
    ]
    for message in messages:
        built = subtree_message(message["cosigner"], message["timestamp"], message["checkpoint"])
        assert built.hex() == message["message"], message["name"]
    documented = {
        "log_name": EXAMPLE_LOG,
        "witness_name": EXAMPLE_WITNESS,
        "seed_recipes": {
            "log Ed25519": f"SHA-256({LOG_SEED_TEXT.decode()!r})",
            "log ML-DSA-44": f"SHA-256({LOG_MLDSA_SEED_TEXT.decode()!r})",
            "witness ML-DSA-44": f"SHA-256({WITNESS_MLDSA_SEED_TEXT.decode()!r})",
        },
        "log_vkey": ed25519.verifier().vkey,
        "log_mldsa_vkey": log.vkey,
        "witness_mldsa_vkey": witness.vkey,
        "checkpoint_text": text,
        "signed_checkpoint": signed,
        "timestamp": EXAMPLE_TIMESTAMP,
        "cosignature_line": cosignature.line,
    }
    return documented, messages, cosignature_cases(text, witness, cosignature.line)


def _flip(line: str, at: int) -> str:
    prefix, _, encoded = line.removesuffix("\n").rpartition(" ")
    raw = bytearray(base64.b64decode(encoded))
    raw[at] ^= 0x01
    return f"{prefix} {base64.b64encode(bytes(raw)).decode()}\n"


def _renamed(line: str, other: MLDSA44CosignatureSigner) -> str:
    """The line under ``other``'s name and key ID, its timestamp and signature kept."""
    raw = base64.b64decode(line.removesuffix("\n").rpartition(" ")[2])
    encoded = base64.b64encode(other.key_id.to_bytes(4, "big") + raw[4:]).decode()
    return f"— {other.name} {encoded}\n"


def _cut(line: str, size: int) -> str:
    prefix, _, encoded = line.removesuffix("\n").rpartition(" ")
    return f"{prefix} {base64.b64encode(base64.b64decode(encoded)[:size]).decode()}\n"


def cosignature_cases(text: str, witness: MLDSA44CosignatureSigner, line: str) -> list[Doc]:
    other = MLDSA44CosignatureSigner.from_seed(
        "witness.example.com/w2", hashlib.sha256(WITNESS_MLDSA_SEED_TEXT).digest()
    )
    extended = text + "an extension line\n"
    return [
        {"name": "valid", "checkpoint": text, "line": line, "error": None},
        {"name": "a timestamp changed", "checkpoint": text, "line": _flip(line, 11),
         "error": "cosignature_invalid"},
        {"name": "a signature byte changed", "checkpoint": text, "line": _flip(line, 100),
         "error": "cosignature_invalid"},
        {"name": "another tree size", "checkpoint": text.replace("\n5\n", "\n6\n"), "line": line,
         "error": "cosignature_invalid"},
        {"name": "an extension line added to the checkpoint", "checkpoint": extended,
         "line": line, "error": "cosignature_malformed"},
        {"name": "the same key under another name (the message commits to the name)",
         "checkpoint": text, "line": _renamed(line, other), "vkey": other.vkey,
         "error": "cosignature_invalid"},
        {"name": "cut to 72 bytes (an Ed25519 cosignature's size)", "checkpoint": text,
         "line": _cut(line, 4 + 72), "error": "cosignature_malformed"},
    ]  # fmt: skip


# --- bundles ------------------------------------------------------------------------------

HEADER_SEED = bytes(range(32))
LOG_SEED = hashlib.sha256(b"recordseal ML-DSA-44 vectors: log Ed25519 key").digest()
LOG_MLDSA_SEED = hashlib.sha256(b"recordseal ML-DSA-44 vectors: log ML-DSA-44 key").digest()
WITNESS_SEED = hashlib.sha256(b"recordseal ML-DSA-44 vectors: witness ML-DSA-44 key").digest()
WITNESS_ED25519_SEED = hashlib.sha256(b"recordseal ML-DSA-44 vectors: witness Ed25519").digest()
BASE = datetime(2026, 11, 26, 7, 58, 53, tzinfo=UTC)
NOW = datetime(2026, 11, 27, tzinfo=UTC)


def world(*, mldsa_log: bool = True) -> World:
    return World(
        base=BASE,
        header_signer=HeaderSigner.from_seed(HEADER_SEED),
        log_signer=Ed25519Signer.from_seed(ORIGIN, LOG_SEED),
        log_mldsa=(
            MLDSA44CosignatureSigner.from_seed(ORIGIN, LOG_MLDSA_SEED, clock=None)
            if mldsa_log
            else None
        ),
        witness=MLDSA44CosignatureSigner.from_seed(WITNESS, WITNESS_SEED),
        seed=b"recordseal ML-DSA-44 vectors",
    )


def _proof_lines(bundle: bytes, edit: Any) -> bytes:
    document = json.loads(bundle)
    lines = document["seal"]["proof"].split("\n")
    edit(lines)
    document["seal"]["proof"] = "\n".join(lines)
    return json.dumps(document).encode()


def _without_log_algorithm(size: int) -> Any:
    """Drop the log's signature line whose signature has ``size`` bytes after the key ID."""

    def edit(lines: list[str]) -> None:
        prefix = f"— {ORIGIN} "
        for at, line in enumerate(lines):
            if line.startswith(prefix) and len(base64.b64decode(line[len(prefix) :])) - 4 == size:
                del lines[at]
                return
        raise AssertionError("no such log signature")

    return edit


def _flip_log_mldsa(lines: list[str]) -> None:
    prefix = f"— {ORIGIN} "
    at = next(
        i for i, line in enumerate(lines)
        if line.startswith(prefix) and len(base64.b64decode(line[len(prefix):])) > 100
    )  # fmt: skip
    raw = bytearray(base64.b64decode(lines[at][len(prefix) :]))
    raw[200] ^= 0x01
    lines[at] = prefix + base64.b64encode(bytes(raw)).decode()


def _flip_witness(lines: list[str]) -> None:
    prefix = f"— {WITNESS} "
    at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    raw = bytearray(base64.b64decode(lines[at][len(prefix) :]))
    raw[300] ^= 0x01
    lines[at] = prefix + base64.b64encode(bytes(raw)).decode()


def _undated(w: World) -> bytes:
    """The witness's cosignature made with timestamp 0 (no statement of time)."""
    assert isinstance(w.witness, MLDSA44CosignatureSigner)
    undated = w.witness.cosign(w.checkpoint(len(w.log)).text(), 0)

    def edit(lines: list[str]) -> None:
        prefix = f"— {WITNESS} "
        at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
        lines[at] = undated.line.removesuffix("\n")

    return _proof_lines(w.bundle(coverage=None), edit)


Case = tuple[str, bytes, Doc, Doc | None, str, list[str]]


def bundle_cases() -> list[Case]:
    w, old = world(), world(mldsa_log=False)
    dual, legacy = w.bundle(coverage=(1, 4)), old.bundle(coverage=(1, 4))
    keys, old_keys = w.keys_document(), old.keys_document()
    both, pq = ["Ed25519", "ML-DSA-44"], ["ML-DSA-44"]
    second = CosignatureSigner.from_seed(WITNESS, WITNESS_ED25519_SEED)
    inc = "VERIFICATION INCOMPLETE"
    return [
        ("dual-signed, ML-DSA-44 witness, default policy", dual, keys, w.trust_document(),
         "VERIFIED", [P] * 7),
        ("dual-signed, policy both", dual, keys,
         w.trust_document(checkpoint_signatures=both), "VERIFIED", [P] * 7),
        ("dual-signed, policy ML-DSA-44 alone", dual, keys,
         w.trust_document(checkpoint_signatures=pq), "VERIFIED", [P] * 7),
        ("dual-signed, no trust store", dual, keys, None, inc, [P, P, P, P, U, P, U]),
        ("an Ed25519-only checkpoint (an older bundle), default policy", legacy, old_keys,
         old.trust_document(), "VERIFIED", [P] * 7),
        ("an Ed25519-only checkpoint (an older bundle), policy both", legacy, old_keys,
         old.trust_document(checkpoint_signatures=both), inc, [P, P, P, U, P, P, U]),
        ("the ML-DSA-44 line removed, policy both", _proof_lines(dual, _without_log_algorithm(
            2428)), keys, w.trust_document(checkpoint_signatures=both), inc,
         [P, P, P, U, P, P, U]),
        ("the Ed25519 line removed, default policy", _proof_lines(dual, _without_log_algorithm(
            64)), keys, w.trust_document(), inc, [P, P, P, U, P, P, U]),
        ("the Ed25519 line removed, policy ML-DSA-44 alone", _proof_lines(
            dual, _without_log_algorithm(64)), keys,
         w.trust_document(checkpoint_signatures=pq), "VERIFIED", [P] * 7),
        ("a directory without the ML-DSA-44 key, policy both", dual, old_keys | {
            "logs": [keys["logs"][0]]}, w.trust_document(checkpoint_signatures=both), inc,
         [P, P, P, U, P, P, U]),
        ("a directory without the ML-DSA-44 key, default policy", dual, old_keys | {
            "logs": [keys["logs"][0]]}, w.trust_document(), "VERIFIED", [P] * 7),
        ("the log's ML-DSA-44 signature changed", _proof_lines(dual, _flip_log_mldsa), keys,
         w.trust_document(), "FAILED", [P, P, P, F, P, P, U]),
        ("the witness's ML-DSA-44 cosignature changed", _proof_lines(dual, _flip_witness), keys,
         w.trust_document(), "FAILED", [P, P, P, P, F, P, U]),
        ("the witness's cosignature dated 0", _undated(w), keys, w.trust_document(), inc,
         [P, P, P, P, U, P, U]),
        ("one witness under two keys counts once (quorum 2)", dual, keys,
         w.trust_document(quorum=2, witnesses=[w.witness, second]), inc,
         [P, P, P, P, U, P, P]),
    ]  # fmt: skip


def bundles() -> list[Doc]:
    written = []
    for name, bundle, keys, trust, verdict, statuses in bundle_cases():
        result = verify_bundle(
            bundle,
            load_key_directory(json.dumps(keys)),
            None if trust is None else load_trust_store(json.dumps(trust)),
            now=NOW,
        )
        found = [check.status for check in result.checks]
        if (result.verdict, found) != (verdict, statuses):
            details = [check.detail for check in result.checks]
            raise SystemExit(f"{name}: {result.verdict} {found}, expected {verdict} {statuses}"
                             f"\n{details}")  # fmt: skip
        written.append(
            {
                "name": name,
                "bundle": json.loads(bundle),
                "keys": keys,
                "trust": trust,
                "expected": {"verdict": verdict, "statuses": statuses},
            }
        )
    return written


def main() -> None:
    documented, messages, cosignatures = example()
    data = {
        "now": NOW.isoformat().replace("+00:00", "Z"),
        "torchwood": torchwood(),
        "example": documented,
        "messages": messages,
        "cosignatures": {
            "vkey": documented["witness_mldsa_vkey"],
            "cases": cosignatures,
        },
        "bundles": bundles(),
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

"""Committed paths ``<vector>:<pointer>`` (docs/spec.md section 2): is a path one?

The verifier needs only the syntax: a disclosed ``path`` must be one the commitment core can
have produced. (The builder lists a payload's leaves by path: ``services.bundles.leaf_values``.)
"""

from __future__ import annotations

import functools
import re
import unicodedata

#: The longest committed path, in UTF-8 bytes (docs/spec.md section 8).
MAX_PATH_BYTES = 512
_INDEX = re.compile("0|[1-9][0-9]*")
_TOKEN = re.compile("(?:[^~]|~[01])*")


@functools.lru_cache(maxsize=8192)
def path_problem(path: str) -> str | None:
    """Why ``path`` is not a committed path, or None when it is one (remembered: bundles of
    one stream disclose the same paths)."""
    try:
        size = len(path.encode())
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    if size > MAX_PATH_BYTES:
        return f"is {size} bytes long, over {MAX_PATH_BYTES}"
    vector, colon, pointer = path.partition(":")
    if not colon or not vector or vector.strip("oa"):
        return "does not start with a vector of 'o' and 'a' steps and a colon"
    if vector[0] != "o":
        return "does not start with an object member (a payload is an object)"
    if not pointer.startswith("/"):
        return "has no JSON Pointer after the colon"
    steps = pointer[1:].split("/")
    if len(steps) != len(vector):
        return f"has {len(steps)} pointer steps for a vector of {len(vector)}"
    for kind, step in zip(vector, steps, strict=True):
        if kind == "a" and not _INDEX.fullmatch(step):
            return f"has the array step {step!r}, not an index without leading zeros"
        if kind == "o" and not _TOKEN.fullmatch(step):
            return "has a '~' not followed by '0' or '1'"
        if any(unicodedata.category(char) == "Cc" for char in step):
            return "has a control character in a member name"
    return None

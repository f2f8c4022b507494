"""The kind ``currency`` accepts exactly the codes docs/spec.md section 3.5 lists (issue 19):
its three groups, read from the page, are the data file, and every implementation accepts
each of them (in any letter case) and refuses the rest."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

from recordseal.core import CommitError

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec.md"
DATA = ROOT / "python" / "recordseal" / "core" / "data" / "iso4217.txt"
#: Withdrawn codes the page names as refused, and codes that never existed.
REFUSED = ["ADP", "AFA", "AON", "AOR", "BGL", "ECS", "RUR", "SRG", "TPE", "ZRN", "ABC", "EUU"]


def documented_groups() -> dict[str, list[str]]:
    """The code blocks of section 3.5, by the sentence that introduces each."""
    section = SPEC.read_text().split("### 3.5 Kind `currency`")[1].split("\n## ")[0]
    blocks = re.findall(r"\n([^\n]*)\n\n```\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 3, "3.5 lists current, funds and special, and withdrawn codes"
    return {intro: block.split() for intro, block in blocks}


def data_codes() -> list[str]:
    return [line for line in DATA.read_text().splitlines() if line and not line.startswith("#")]


def test_the_data_file_is_exactly_the_documented_groups() -> None:
    groups = documented_groups()
    listed = [code for codes in groups.values() for code in codes]
    assert len(listed) == len(set(listed)), "a code is in two groups"
    assert sorted(listed) == sorted(data_codes())
    counts = [int(re.search(r"\((\d+)\)", intro).group(1)) for intro in groups]  # type: ignore[union-attr]
    assert counts == [len(codes) for codes in groups.values()]
    assert f"the {len(listed)} codes below" in SPEC.read_text()


def test_the_spec_names_the_withdrawn_codes_it_refuses() -> None:
    section = SPEC.read_text().split("### 3.5 Kind `currency`")[1].split("\n## ")[0]
    for code in REFUSED[:10]:
        assert f"`{code}`" in section


def test_every_documented_code_commits_in_any_case(impl: ModuleType) -> None:
    for codes in documented_groups().values():
        for code in codes:
            assert impl.encode_value("currency", code) == f"cur:{code}".encode()
            assert impl.encode_value("currency", code.lower()) == f"cur:{code}".encode()
            assert impl.encode_value("currency", code.title()) == f"cur:{code}".encode()


@pytest.mark.parametrize("code", [*REFUSED, "DE", "DEMM", "DÉM", "D M", ""])
def test_other_codes_are_refused(impl: ModuleType, code: str) -> None:
    with pytest.raises(CommitError) as refused:
        impl.encode_value("currency", code)
    assert refused.value.code == "currency_invalid"


def test_the_native_core_builds_from_its_own_copy_of_the_list() -> None:
    """rust-core holds its own copy (so the crate builds alone, without python/); it must be
    the reference's byte for byte."""
    assert (ROOT / "rust-core" / "data" / "iso4217.txt").read_bytes() == DATA.read_bytes()

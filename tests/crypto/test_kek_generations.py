"""KEK generations (crypto/vault.py): the first KEK's wrapped keys are unchanged (60 bytes), a
later KEK's carry its generation, re-wrapping keeps the subject key, and the subject index
never changes across a rotation (docs/operations.md, "Keys")."""

from __future__ import annotations

import pytest

from recordseal.crypto.vault import LEGACY_WRAPPED, KeyWrapper, VaultError, subject_index_key

FIRST, SECOND = bytes(range(32)), bytes(range(32, 64))


def test_the_first_kek_wraps_as_it_always_did() -> None:
    _, wrapped = KeyWrapper(FIRST).new_subject_key("acme", "ref")
    assert len(wrapped) == LEGACY_WRAPPED == 60
    assert KeyWrapper.generation_of(wrapped) == 1


def test_a_later_kek_names_itself_and_re_wrapping_keeps_the_key() -> None:
    before = KeyWrapper(FIRST)
    key, old = before.new_subject_key("acme", "ref")
    both = KeyWrapper({1: FIRST, 2: SECOND})
    new = both.rewrap("acme", "ref", old)
    assert (len(new), new[0], KeyWrapper.generation_of(new)) == (61, 2, 2)
    after = KeyWrapper({2: SECOND}, subject_index_key(FIRST))  # KEK 1 destroyed
    assert after.unwrap("acme", "ref", new) == key
    with pytest.raises(VaultError, match="KEK 1"):
        after.unwrap("acme", "ref", old)  # a copy from before is unreadable
    with pytest.raises(VaultError):
        after.unwrap("acme", "other-ref", new)  # still bound to tenant and handle


def test_the_subject_index_survives_the_first_kek() -> None:
    first = KeyWrapper(FIRST).subject_index("acme", "bob")
    assert KeyWrapper({1: FIRST, 2: SECOND}).subject_index("acme", "bob") == first
    assert KeyWrapper({2: SECOND}, subject_index_key(FIRST)).subject_index("acme", "bob") == first
    with pytest.raises(ValueError, match="subject index key"):
        KeyWrapper({2: SECOND})

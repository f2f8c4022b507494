"""Secret files: created once, complete before anyone can read them, shared by racing processes."""

from __future__ import annotations

import multiprocessing
import stat
import threading
from pathlib import Path

import pytest

from recordseal.crypto import keyfiles
from recordseal.crypto.keyfiles import read_or_create_secret


def test_first_call_creates_a_private_key_and_later_calls_read_it(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "k.key"
    first = read_or_create_secret(path)
    assert len(first) == 32
    assert read_or_create_secret(path) == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["k.key"]  # no temporary file left


def test_a_reader_never_sees_a_key_that_is_still_being_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One worker is held in the middle of creating the key while another starts.

    The second must not find an empty or short file (the failure CI saw when two granian
    workers started together); both must end with the same key.
    """
    path = tmp_path / "keys" / "k.key"
    paused, release = threading.Event(), threading.Event()
    real_token_bytes = keyfiles.secrets.token_bytes
    calls = 0

    def slow_first_token_bytes(size: int) -> bytes:
        nonlocal calls
        calls += 1
        if calls == 1:
            paused.set()
            release.wait(10)
        return real_token_bytes(size)

    monkeypatch.setattr(keyfiles.secrets, "token_bytes", slow_first_token_bytes)
    results: dict[str, bytes] = {}
    first = threading.Thread(
        target=lambda: results.__setitem__("first", read_or_create_secret(path))
    )
    first.start()
    assert paused.wait(10)
    results["second"] = read_or_create_secret(path)  # raised "holds 0 bytes" before the fix
    release.set()
    first.join(10)
    assert results["first"] == results["second"] == path.read_bytes()
    assert [p.name for p in path.parent.iterdir()] == ["k.key"]


def _create_in_child(path: str, barrier: object, out: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    out.put(read_or_create_secret(Path(path)))  # type: ignore[attr-defined]


def test_processes_starting_together_agree_on_one_key(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for attempt in range(5):
        path = tmp_path / f"keys{attempt}" / "k.key"
        barrier, out = context.Barrier(6), context.Queue()
        children = [
            context.Process(target=_create_in_child, args=(str(path), barrier, out))
            for _ in range(6)
        ]
        for child in children:
            child.start()
        keys = {out.get(timeout=30) for _ in children}
        for child in children:
            child.join(30)
            assert child.exitcode == 0
        assert keys == {path.read_bytes()}


def test_a_truncated_key_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "k.key"
    path.write_bytes(b"short")
    with pytest.raises(RuntimeError, match=r"k\.key holds 5 bytes, expected 32"):
        read_or_create_secret(path)

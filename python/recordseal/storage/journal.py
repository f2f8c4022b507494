"""The continuity journal: what the service signed and erased, kept outside the database.

A restore of the database (or a failover to a replica that missed the last commits) must
never make the service sign a second history, nor bring an erased subject back
(docs/continuity.md). The journal is the memory a restore does not roll back: an append-only,
fsynced, hash-chained list of entries, written *after* the database committed what they
describe and *before* anyone is told (an answer, a witness):

- :class:`Head`: a stream's records up to ``seq`` are signed, the last with chain leaf ``leaf``;
- :class:`Signed`: a checkpoint of ``origin`` at ``size`` with ``root`` is signed;
- :class:`Erased`: a subject was erased (written *before* the database erases it);
- :class:`Retired`: a log was retired for a successor by ``recordseal recover``;
- :class:`Fenced`: a process fenced a stream or a log (every process refuses it then);
- :class:`Recovered`: ``recordseal recover`` ran: the fences journaled before it are settled;
- :class:`Unaccepted`: a checkpoint was signed that the journal never accepted (its log then
  held a larger or another one): ``recover`` moves the records it sealed to the successor.

Its state is a merge by maximum (the largest head per stream, the largest checkpoint per log,
the union of erasures), so entries of several writers, in any order, give one state. Each
process writes a segment file of its own (``<writer>.jsonl``, locked while it lives), so
writers never wait for each other; a process that starts absorbs the segments of writers that
died into its own, so the directory holds about one segment per live process. Every line
names the SHA-256 of the line before it in its segment; a segment's first line names the last
hashes of the segments it absorbed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import secrets
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import orjson

from recordseal.clock import utc_now
from recordseal.crypto.keyfiles import sync_directory
from recordseal.storage.errors import StorageError

#: A segment grows to this many bytes before its writer starts a new one with its state.
ROTATE_BYTES = 8 * 1024 * 1024
SEGMENT_SUFFIX = ".jsonl"
_GENESIS = "0" * 64


class JournalError(StorageError):
    """The journal cannot be read (a broken hash chain, an unreadable line) or written."""


@dataclass(frozen=True, slots=True)
class Head:
    tenant: str
    stream: str
    seq: int
    leaf: bytes


@dataclass(frozen=True, slots=True)
class Signed:
    origin: str
    size: int
    root: bytes
    #: the log's (tenant, fleet), so a store that lost the log altogether still names its
    #: scope; ``fleet`` None: not recorded
    tenant: str | None = None
    fleet: str | None = None
    #: the aggregate log's frontier at ``size``: the hashes of its complete subtrees, by
    #: (level, index) in order, so a store put back behind it can take it up again from
    #: there (docs/tlog.md, "The aggregate log"); empty for a tenant log
    frontier: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Erased:
    tenant: str
    index: bytes  # the subject index (an HMAC: never the subject id)
    subject_ref: str
    erased_at: str


@dataclass(frozen=True, slots=True)
class Retired:
    origin: str
    size: int
    root: bytes
    successor: str


@dataclass(frozen=True, slots=True)
class Fenced:
    """A process fenced a stream (``name`` its name) or a log (``name`` its origin): every
    process of the deployment refuses it too, until ``recordseal recover``."""

    kind: str  # "stream" or "log"
    tenant: str | None
    name: str
    reason: str
    since: str
    fleet: str | None = None


@dataclass(frozen=True, slots=True)
class Recovered:
    """``recordseal recover`` ran at ``at``: fences journaled before are settled by it."""

    at: str


@dataclass(frozen=True, slots=True)
class Unaccepted:
    """A checkpoint of ``origin`` at ``size`` signed while the journal held a larger one or
    another root at that size (two histories: a seal on a promoted standby racing the old
    primary's journal write). It is never offered; ``recordseal recover`` moves the records
    it sealed to the successor log."""

    origin: str
    size: int
    root: bytes


Entry = Head | Signed | Erased | Retired | Fenced | Recovered | Unaccepted

#: The order in which a journal writes the entries of one group (every writer the same, so
#: two writers never wait for each other's rows in opposite orders).
_KINDS = {Head: 0, Signed: 1, Erased: 2, Retired: 3, Fenced: 4, Recovered: 5, Unaccepted: 6}


def write_order(entry: Entry) -> tuple[object, ...]:
    """The sort key of an entry within one journal write: its kind, then its row's key."""
    rank = _KINDS[type(entry)]
    match entry:
        case Head(tenant, stream):
            return (rank, tenant, stream)
        case Signed(origin) | Retired(origin):
            return (rank, origin)
        case Erased(tenant, index):
            return (rank, tenant, index.hex())
        case Fenced(kind, tenant, name):
            return (rank, kind, tenant or "", name)
        case Recovered(at):
            return (rank, at)
        case Unaccepted(origin, size):
            return (rank, origin, size)


@dataclass(slots=True)
class JournalState:
    """The merge of every entry: what the service has signed and erased, at most."""

    heads: dict[tuple[str, str], Head] = field(default_factory=dict)
    checkpoints: dict[str, Signed] = field(default_factory=dict)
    erasures: dict[tuple[str, bytes], Erased] = field(default_factory=dict)
    retired: dict[str, Retired] = field(default_factory=dict)
    #: (kind, tenant, name) -> the earliest fence of a stream or log
    fences: dict[tuple[str, str | None, str], Fenced] = field(default_factory=dict)
    #: when ``recordseal recover`` last ran ("" never): it settles the fences before it
    recovered_at: str = ""
    #: (origin, size) -> root of the checkpoints signed that the journal never accepted
    unaccepted: dict[tuple[str, int], bytes] = field(default_factory=dict)
    #: (origin, size) signed with two roots: never expected, kept for whoever inspects it
    conflicts: list[tuple[Signed, Signed]] = field(default_factory=list)

    def live_fences(self) -> list[Fenced]:
        """The fences no ``recordseal recover`` has settled since."""
        return [f for f in self.fences.values() if f.since > self.recovered_at]

    def add(self, entry: Entry) -> bool:
        """Merge one entry; True when it changed the state."""
        match entry:
            case Head(tenant, stream):
                known = self.heads.get((tenant, stream))
                if known is None or entry.seq > known.seq:
                    self.heads[(tenant, stream)] = entry
                    return True
            case Signed(origin):
                known_cp = self.checkpoints.get(origin)
                if known_cp is not None and known_cp.size == entry.size:
                    if known_cp.root != entry.root:
                        self.conflicts.append((known_cp, entry))
                    return False
                if known_cp is None or entry.size > known_cp.size:
                    self.checkpoints[origin] = entry
                    return True
            case Erased(tenant, index):
                known_er = self.erasures.get((tenant, index))
                if known_er is None or entry.erased_at < known_er.erased_at:
                    self.erasures[(tenant, index)] = entry
                    return True
            case Retired(origin):
                if origin not in self.retired:
                    self.retired[origin] = entry
                    return True
            case Fenced(kind, tenant, name):
                known_fence = self.fences.get((kind, tenant, name))
                live = entry.since > self.recovered_at
                if known_fence is None or (
                    live
                    and (known_fence.since <= self.recovered_at or entry.since < known_fence.since)
                ):
                    self.fences[(kind, tenant, name)] = entry
                    return True
            case Recovered(at):
                if at > self.recovered_at:
                    self.recovered_at = at
                    return True
            case Unaccepted(origin, size, root):
                if (origin, size) not in self.unaccepted:
                    self.unaccepted[(origin, size)] = root
                    return True
        return False

    def entries(self) -> Iterator[Entry]:
        yield from self.heads.values()
        yield from self.checkpoints.values()
        yield from self.erasures.values()
        yield from self.retired.values()
        yield from self.live_fences()
        if self.recovered_at:
            yield Recovered(self.recovered_at)
        for (origin, size), root in self.unaccepted.items():
            yield Unaccepted(origin, size, root)


def encode(entry: Entry) -> dict[str, object]:
    match entry:
        case Head(tenant, stream, seq, leaf):
            return {"k": "head", "tenant": tenant, "stream": stream, "seq": seq, "leaf": leaf.hex()}
        case Signed(origin, size, root, tenant, fleet, frontier):
            line: dict[str, object] = {"k": "signed", "origin": origin, "size": size}
            line["root"] = root.hex()
            if fleet is not None:
                line.update(tenant=tenant, fleet=fleet)
            if frontier:
                line["frontier"] = [node.hex() for node in frontier]
            return line
        case Erased(tenant, index, ref, at):
            return {"k": "erased", "tenant": tenant, "index": index.hex(), "ref": ref, "at": at}
        case Retired(origin, size, root, successor):
            return {
                "k": "retired",
                "origin": origin,
                "size": size,
                "root": root.hex(),
                "successor": successor,
            }
        case Fenced(kind, tenant, name, reason, since, fleet):
            return {
                "k": "fenced",
                "kind": kind,
                "tenant": tenant,
                "name": name,
                "reason": reason,
                "since": since,
                "fleet": fleet,
            }
        case Recovered(at):
            return {"k": "recovered", "at": at}
        case Unaccepted(origin, size, root):
            return {"k": "unaccepted", "origin": origin, "size": size, "root": root.hex()}


def decode(line: dict[str, object]) -> Entry | None:
    """The entry of a line; None for a segment's first line."""
    kind = line["k"]
    if kind == "head":
        return Head(
            _str(line["tenant"]), _str(line["stream"]), _int(line["seq"]), _hex(line["leaf"])
        )
    if kind == "signed":
        fleet = line.get("fleet")
        frontier = line.get("frontier", [])
        if not isinstance(frontier, list):
            raise TypeError("a member is not a list")
        return Signed(
            _str(line["origin"]),
            _int(line["size"]),
            _hex(line["root"]),
            None if line.get("tenant") is None else _str(line["tenant"]),
            None if fleet is None else _str(fleet),
            tuple(_hex(node) for node in frontier),
        )
    if kind == "erased":
        return Erased(
            _str(line["tenant"]), _hex(line["index"]), _str(line["ref"]), _str(line["at"])
        )
    if kind == "retired":
        return Retired(
            _str(line["origin"]), _int(line["size"]), _hex(line["root"]), _str(line["successor"])
        )
    if kind == "fenced":
        tenant, fleet = line.get("tenant"), line.get("fleet")
        return Fenced(
            _str(line["kind"]),
            None if tenant is None else _str(tenant),
            _str(line["name"]),
            _str(line["reason"]),
            _str(line["since"]),
            None if fleet is None else _str(fleet),
        )
    if kind == "recovered":
        return Recovered(_str(line["at"]))
    if kind == "unaccepted":
        return Unaccepted(_str(line["origin"]), _int(line["size"]), _hex(line["root"]))
    if kind == "segment":
        return None
    raise ValueError(f"unknown entry kind {kind!r}")


class Journal(Protocol):
    """Where the journal lives: a directory (:class:`DirectoryJournal`) or a PostgreSQL
    database on another server (``storage.postgres.journal.PostgresJournal``)."""

    #: a directory path or a database URL without its password, for messages
    location: str

    async def load(self) -> JournalState:
        """Start writing (taking over what dead writers left) and return the whole state."""
        ...

    async def read(self) -> JournalState:
        """The whole state as every writer has written it so far."""
        ...

    async def current(
        self, streams: Collection[tuple[str, str]], origins: Collection[str]
    ) -> list[Entry]:
        """The journal's entries now for these streams (their heads) and logs (their last
        signed checkpoints): what a process checks before it signs, whoever wrote them."""
        ...

    async def shared(self) -> tuple[list[Fenced], str]:
        """Every fence journaled so far, and when ``recordseal recover`` last ran."""
        ...

    async def append(self, entries: Iterable[Entry]) -> None:
        """Write ``entries`` durably before returning; concurrent calls share one write."""
        ...

    async def other_writers(self) -> int:
        """How many other processes write the journal now (a service is running)."""
        ...

    async def aclose(self) -> None: ...


class GroupWriter:
    """Concurrent ``append`` calls share one ``write``: every call queued while a write runs
    joins the next one, and each call returns once the write that holds it is durable."""

    def __init__(self, write: Callable[[list[Entry]], Awaitable[None]]) -> None:
        self._write = write
        self._queue: list[tuple[list[Entry], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def append(self, entries: Iterable[Entry]) -> None:
        batch = list(entries)
        if not batch:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((batch, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await asyncio.shield(future)

    async def _flush(self) -> None:
        while self._queue:
            waiting, self._queue = self._queue, []
            try:
                await self._write([e for b, _ in waiting for e in b])
            except Exception as error:
                for _, future in waiting:
                    if not future.done():
                        future.set_exception(JournalError(f"journal write failed: {error}"))
            else:
                for _, future in waiting:
                    if not future.done():
                        future.set_result(None)


def largest(entries: Iterable[Entry]) -> list[Entry]:
    """One entry per stream and log (the largest) and every erasure and retirement."""
    merged = JournalState()
    for entry in entries:
        merged.add(entry)
    return list(merged.entries())


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("a member is not a string")
    return value


def _int(value: object) -> int:
    if type(value) is not int:
        raise TypeError("a member is not an integer")
    return value


def _hex(value: object) -> bytes:
    return bytes.fromhex(_str(value))


@dataclass(frozen=True, slots=True)
class _Segment:
    path: Path
    entries: list[Entry]
    last_hash: str
    #: bytes read: up to the end of its last whole line
    end: int = 0


def read_segment(path: Path, start: int = 0, previous: str | None = None) -> _Segment:
    """A segment's entries from byte ``start`` (a line's start, after the line whose hash is
    ``previous``), its chain checked. A last line cut short (a crash mid-write, or a write
    under way: it was never fsynced, so nobody was told of it) is left out; any other damage
    raises."""
    with path.open("rb") as file:
        file.seek(start)
        data = file.read()
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the file ends in a newline
    entries: list[Entry] = []
    end = start
    for number, raw in enumerate(lines, 1):
        try:
            line = orjson.loads(raw)
            if not isinstance(line, dict):
                raise ValueError("not an object")
            prev = line.get("prev")
            if previous is not None and prev != previous:
                raise ValueError("its 'prev' is not the hash of the line before")
            entry = decode(line)
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError) as error:
            where = f"line {number}" if start == 0 else f"a line after byte {start}"
            raise JournalError(f"journal segment {path.name}, {where}: {error}") from None
        if entry is not None:
            entries.append(entry)
        previous = hashlib.sha256(raw).hexdigest()
        end += len(raw) + 1
    del torn  # an unterminated last line was never acknowledged
    return _Segment(path, entries, previous or _GENESIS, end)


class DirectoryJournal:
    """The journal in a directory (``RECORDSEAL_JOURNAL``, default ``<data dir>/journal``)."""

    def __init__(self, directory: Path, *, rotate_bytes: int = ROTATE_BYTES) -> None:
        self.directory = directory
        self._rotate_bytes = rotate_bytes
        self._fd: int | None = None
        self._path: Path | None = None
        self._last = _GENESIS
        self._size = 0
        self._mine = JournalState()  # what this writer's segment holds (for rotation)
        #: what :meth:`current` has read of every segment so far: segment -> (bytes read,
        #: hash of the last line read); and the merge of all it read
        self._tails: dict[Path, tuple[int, str]] = {}
        self._seen = JournalState()
        self._group = GroupWriter(lambda entries: asyncio.to_thread(self._append_now, entries))
        self.location = str(directory)

    # --- opening and reading -------------------------------------------------------------

    @contextlib.contextmanager
    def _directory_lock(self) -> Iterator[None]:
        """Held while segments are created, absorbed or listed for a full read."""
        fd = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def open(self) -> JournalState:
        """Start this process's segment (absorbing the segments of writers that died) and
        return the whole state."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self._directory_lock():
            dead: list[_Segment] = []
            for path in self._segment_paths():
                fd = os.open(path, os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live writer's
                finally:
                    os.close(fd)
                dead.append(read_segment(path))
            for segment in dead:
                for entry in segment.entries:
                    self._mine.add(entry)
            self._start_segment([s.last_hash for s in dead])
            for segment in dead:
                segment.path.unlink()
            sync_directory(self.directory)
            return self._read_all()

    def live_writers(self) -> int:
        """How many segments other than this writer's are held by a live process (a service
        sharing the journal is running)."""
        live = 0
        with self._directory_lock():
            for path in self._segment_paths():
                if path == self._path:
                    continue
                try:
                    fd = os.open(path, os.O_RDONLY)
                except FileNotFoundError:
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    live += 1
                finally:
                    os.close(fd)
        return live

    def read_now(self) -> JournalState:
        """The whole state as every writer has written it so far."""
        with self._directory_lock():
            return self._read_all()

    async def read(self) -> JournalState:
        return await asyncio.to_thread(self.read_now)

    def read_new(self) -> JournalState:
        """Everything journaled so far, reading only what the segments gained since the last
        call (one ``stat`` per segment when nothing changed): the cheap re-read a process
        makes before it signs. Segments absorbed or rotated away held nothing their
        successor does not hold again."""
        with self._directory_lock():
            paths = self._segment_paths()
            for path in paths:
                start, previous = self._tails.get(path, (0, None))
                try:
                    if path.stat().st_size == start:
                        continue
                    segment = read_segment(path, start, previous)
                except FileNotFoundError:
                    continue
                for entry in segment.entries:
                    self._seen.add(entry)
                self._tails[path] = (segment.end, segment.last_hash)
            for gone in set(self._tails) - set(paths):
                del self._tails[gone]
        return self._seen

    async def current(
        self, streams: Collection[tuple[str, str]], origins: Collection[str]
    ) -> list[Entry]:
        state = await asyncio.to_thread(self.read_new)
        found: list[Entry] = [state.heads[key] for key in streams if key in state.heads]
        found += [state.checkpoints[o] for o in origins if o in state.checkpoints]
        found += [state.retired[o] for o in origins if o in state.retired]
        return found

    async def shared(self) -> tuple[list[Fenced], str]:
        state = await asyncio.to_thread(self.read_new)
        return list(state.fences.values()), state.recovered_at

    def _read_all(self) -> JournalState:
        state = JournalState()
        for path in self._segment_paths():
            try:
                segment = read_segment(path)
            except FileNotFoundError:
                continue
            for entry in segment.entries:
                state.add(entry)
        return state

    def _segment_paths(self) -> list[Path]:
        return sorted(p for p in self.directory.iterdir() if p.name.endswith(SEGMENT_SUFFIX))

    def _start_segment(self, absorbed: list[str]) -> None:
        """A new segment of this writer holding its state, fsynced, before the old one goes."""
        name = f"{utc_now().replace(':', '')}-{secrets.token_hex(6)}{SEGMENT_SUFFIX}"
        path = self.directory / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        old_fd, old_path, old_last = self._fd, self._path, self._last
        self._fd, self._path, self._last, self._size = fd, path, _GENESIS, 0
        header: dict[str, object] = {"k": "segment", "created": utc_now(), "absorbed": absorbed}
        if old_path is not None:
            header["continues"] = old_last
        lines = [self._line(header)] + [self._line(encode(e)) for e in self._mine.entries()]
        self._write(b"".join(lines))
        sync_directory(self.directory)
        if old_fd is not None and old_path is not None:
            old_path.unlink()
            os.close(old_fd)
            sync_directory(self.directory)

    def _line(self, body: dict[str, object]) -> bytes:
        raw = orjson.dumps({"prev": self._last, **body})
        self._last = hashlib.sha256(raw).hexdigest()
        return raw + b"\n"

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        os.fdatasync(self._fd)
        self._size += len(data)

    # --- appending -----------------------------------------------------------------------

    async def append(self, entries: Iterable[Entry]) -> None:
        """Write ``entries`` durably (fsynced) before returning. Concurrent calls share one
        write and one fsync."""
        await self._group.append(entries)

    def _append_now(self, entries: list[Entry]) -> None:
        if self._fd is None:
            raise JournalError("the journal is not open")
        # one line per stream and log per write: the largest
        changed = [e for e in largest(entries) if self._mine.add(e)]
        if not changed:
            return
        self._write(b"".join(self._line(encode(e)) for e in changed))
        if self._size > self._rotate_bytes:
            with self._directory_lock():
                self._start_segment([])

    def append_now(self, entries: Iterable[Entry]) -> None:
        """:meth:`append` for callers without an event loop."""
        self._append_now(list(entries))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # --- the Journal protocol, for the service ---------------------------------------------

    async def load(self) -> JournalState:
        return await asyncio.to_thread(self.open)

    async def other_writers(self) -> int:
        return await asyncio.to_thread(self.live_writers)

    async def aclose(self) -> None:
        self.close()

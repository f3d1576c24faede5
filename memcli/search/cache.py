"""A persistent search cache in SQLite for large stores: memcli's own terms in an FTS5 index.

Each document is stored as the terms ``tokenize.terms`` gives each field, joined by spaces, in an
FTS5 table whose tokenizer only splits at spaces, so SQLite's index holds memcli's token stream as
it is. Its fts5vocab tables give the ranker's ``Corpus`` numbers: document frequencies ('row'),
each field's term frequency (the places of 'instance') and head-field document frequencies ('col'
of a sixth column holding each title, summary, tag and alias term once). Field lengths,
importance, dates and the asking share are kept beside it in ``docs``, their totals by triggers.
Ranking is the same code as ``MemoryIndex`` (the ``Corpus`` protocol), so both return the same
results for the same documents.

FTS5 takes the place of packed postings kept by hand in BLOBs (segments, merges, masks of removed
documents); ``benchmarks/search_cache_bench.py`` measures the two side by side.

The cache is disposable: a missing, outdated or corrupt file is rebuilt from the documents by
the next ``sync``. WAL mode and a busy timeout let several processes share it; every write is
one transaction.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from memcli import progress
from memcli.hashes import constructor
from memcli.model import Value
from memcli.search.ranker import (
    MAX_TF,
    Norms,
    Posting,
    Scored,
    SearchDoc,
    asking,
    field_terms,
    importance_value,
    is_fuzzy_candidate,
    length_code,
    search_corpus,
    updated_days,
    weighted_tf,
)
from memcli.search.tokenize import terms

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
FILENAME = "search.sqlite3"
FORMAT = "9"
CHUNK = 5_000  # documents tokenised together in a large build
PARALLEL_MIN = 20_000  # a build this large is tokenised by several processes
_PROBE = (
    "MySQL中文查不到数据 encoding caches speeding states weekly snake_case-kebab 日本語のテキスト 한국어 token爆炸 3.11"
)
_FIELDS = ("title", "summary", "tags", "aliases", "body")
# a document's term frequency in each field (at most MAX_TF), one byte each: title in the lowest
_TFS = " | ".join(f"(min(SUM(col = '{f}'), {MAX_TF}) << {8 * i})" for i, f in enumerate(_FIELDS))
_LENGTHS = ", ".join(f"l{f} = l{f} + {{0}}.l{f}" for f in range(5))
# The tokenizer splits at spaces only: a term is letters, digits and the joiners ' _ - (ASCII
# letters are lower case already; every other character is part of a term to FTS5's ascii).
_SCHEMA = f"""
CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE docs (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, fp TEXT NOT NULL, importance REAL NOT NULL,
    days REAL, asks REAL NOT NULL, codes INTEGER NOT NULL,
    l0 INTEGER NOT NULL, l1 INTEGER NOT NULL, l2 INTEGER NOT NULL, l3 INTEGER NOT NULL, l4 INTEGER NOT NULL
);
CREATE TABLE totals (
    id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL,
    l0 INTEGER NOT NULL, l1 INTEGER NOT NULL, l2 INTEGER NOT NULL, l3 INTEGER NOT NULL, l4 INTEGER NOT NULL,
    version INTEGER NOT NULL, state TEXT NOT NULL
);
INSERT INTO totals VALUES (0, 0, 0, 0, 0, 0, 0, 0, '');
CREATE VIRTUAL TABLE terms USING fts5({", ".join(_FIELDS)}, head,
    tokenize = "ascii tokenchars '''_-'", columnsize = 0);
CREATE VIRTUAL TABLE term_docs USING fts5vocab(terms, row);
CREATE VIRTUAL TABLE term_heads USING fts5vocab(terms, col);
CREATE VIRTUAL TABLE term_places USING fts5vocab(terms, instance);
CREATE TRIGGER docs_added AFTER INSERT ON docs BEGIN
    UPDATE totals SET n = n + 1, {_LENGTHS.format("new")} WHERE id = 0;
END;
CREATE TRIGGER docs_removed AFTER DELETE ON docs BEGIN
    UPDATE totals SET n = n - 1, {_LENGTHS.format("old").replace("+", "-")} WHERE id = 0;
    DELETE FROM terms WHERE rowid = old.id;
END;
"""


class SearchCacheError(Exception):
    """The cache could not be used (busy for too long, unwritable, or reset while in use)."""


class _LoadFailed(Exception):
    """Carries an exception raised by the caller's ``load`` through the corruption guard."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


class SyncStats(Value):
    """What a sync did: documents added, changed and removed."""

    FIELDS = ("added", "changed", "removed")
    __slots__ = FIELDS
    added: int
    changed: int
    removed: int

    def __init__(self, added: int = 0, changed: int = 0, removed: int = 0) -> None:
        object.__setattr__(self, "added", added)
        object.__setattr__(self, "changed", changed)
        object.__setattr__(self, "removed", removed)


def _signature() -> str:
    """Changes whenever the format or the tokenizer's output changes."""
    probe = "\x1f".join(terms(_PROBE))
    digest = constructor("sha1")(probe.encode("utf-8")).hexdigest()[:16]
    return f"{FORMAT}:{sqlite3.sqlite_version}:{digest}"


def _state(current: Mapping[str, str]) -> str:
    """A digest of key -> fingerprint, in the caller's order (another order only costs a diff)."""
    text = "\n".join(map("\t".join, current.items()))
    return (
        f"{len(current)}:" + constructor("blake2b")(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    )


def _is_busy(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text


def _marks(n: int) -> str:
    return ",".join("?" * n)


def chunks(items: Iterable[T], size: int = 500) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


Item = tuple[str, str, SearchDoc]  # key, fingerprint, document


def rows(items: list[Item]) -> list[tuple[tuple, tuple]]:
    """The docs row (without its id) and the terms row (without its rowid) of each document."""
    out = []
    for key, fp, doc in items:
        fields = field_terms(doc)
        lens = [len(f) for f in fields]
        codes = sum(length_code(n) << 8 * f for f, n in enumerate(lens))
        days = updated_days(doc.updated)
        head = " ".join(dict.fromkeys(t for f in fields[:4] for t in f))
        info = (key, fp, importance_value(doc.importance), None if days != days else days, asking(doc), codes, *lens)
        out.append((info, (*(" ".join(f) for f in fields), head)))
    return out


def tokenised(items: Iterable[Item], expected: int, workers: int) -> Iterator[list[tuple[tuple, tuple]]]:
    """``rows`` of ``items`` in order, ``CHUNK`` documents at a time; a large build is tokenised by a
    pool of processes when there are CPUs (spawned and isolated: the caller may run threads and
    would have them start in the root's folder), else here."""
    pool = None
    if expected >= PARALLEL_MIN and workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        from ..procs import isolated, pool_context

        try:
            with isolated():
                pool = ProcessPoolExecutor(max_workers=workers, mp_context=pool_context("spawn"))
        except (OSError, ValueError, NotImplementedError, ImportError):
            pool = None
    if pool is None:
        yield from map(rows, chunks(items, CHUNK))
        return
    pending: deque = deque()
    with pool:
        for chunk in chunks(items, CHUNK):
            try:
                pending.append((pool.submit(rows, chunk), chunk))
            except (RuntimeError, OSError):  # a broken pool: tokenised here
                pending.append((None, chunk))
            while len(pending) > 2 * workers:
                yield _result(*pending.popleft())
        while pending:
            yield _result(*pending.popleft())


def _result(future, chunk: list[Item]) -> list[tuple[tuple, tuple]]:
    import pickle

    if future is not None:
        try:
            return future.result()
        except (RuntimeError, OSError, pickle.PicklingError):  # BrokenProcessPool is a RuntimeError
            pass
    return rows(chunk)


class SearchCache:
    """The terms of many documents in ``<path>/search.sqlite3``."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 10.0, workers: int | None = None) -> None:
        """``timeout``: seconds to wait for another process's write; ``workers``: processes
        that tokenise a large build (None: one per CPU, at most 4; 0 or 1: none). Workers
        are spawned, so a calling script needs the usual ``if __name__ == "__main__"``."""
        self.path = Path(path)
        self.file = self.path / FILENAME
        self.timeout = timeout
        self.workers = min(os.cpu_count() or 1, 4) if workers is None else workers
        self._conn: sqlite3.Connection | None = None
        self._last_sync: tuple[Mapping[str, str], Callable[[str], SearchDoc | None]] | None = None
        self._weights: dict[tuple, float] = {}
        self._weights_norms: Norms | None = None

    # -- connection -------------------------------------------------------------------

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> SearchCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None and not self.file.exists():
            self.close()  # the folder was deleted under us: start over
        if self._conn is None:
            self.path.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.file, timeout=self.timeout, isolation_level=None)
            try:
                self._use_wal(conn)
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA cache_size=-32000")
                row = None
                if conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
                    row = conn.execute("SELECT v FROM meta WHERE k='signature'").fetchone()
                if row is None or row[0] != _signature():
                    self._create(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _use_wal(self, conn: sqlite3.Connection) -> None:
        """Put the database in WAL mode (it stays so). Switching needs the file to itself, and SQLite
        answers "locked" at once rather than waiting, while another process opens or writes it:
        asked again until ``timeout``."""
        import time

        deadline = time.monotonic() + self.timeout
        while True:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                    return
                if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":
                    return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
            if time.monotonic() >= deadline:
                return  # the cache still works in SQLite's default mode, one writer at a time
            time.sleep(0.01)

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT v FROM meta WHERE k='signature'").fetchone() == (_signature(),):
                conn.execute("COMMIT")  # another process made it meanwhile
                return
        except sqlite3.OperationalError:
            pass  # no meta table yet
        try:
            tables = conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger')")
            for kind, name in tables.fetchall():
                if not name.startswith("sqlite_") and not name.startswith("terms_"):
                    conn.execute(f'DROP {kind} IF EXISTS "{name}"')  # an FTS5 table drops its own tables
            statement = ""
            for line in _SCHEMA.splitlines(keepends=True):
                statement += line
                if sqlite3.complete_statement(statement):
                    conn.execute(statement)
                    statement = ""
            conn.execute("INSERT INTO meta VALUES ('signature', ?)", (_signature(),))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _reset(self) -> None:
        """Throw the database away; it is only a cache."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(str(self.file) + suffix)
            except FileNotFoundError:
                pass

    def _guarded(self, action: Callable[[], T], on_reset: Callable[[], None] | None = None) -> T:
        """Run ``action``. A corrupt database is deleted, ``on_reset`` runs, and ``action``
        is tried once more; every other SQLite or OS failure becomes ``SearchCacheError``."""
        for attempt in (1, 2):
            try:
                return action()
            except sqlite3.Error as exc:
                if self._conn is not None and self._conn.in_transaction:
                    try:
                        self._conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if _is_busy(exc):
                    raise SearchCacheError(f"search cache is busy: {self.file}") from exc
                if attempt == 2 or not isinstance(exc, sqlite3.DatabaseError):
                    raise SearchCacheError(f"search cache failed: {self.file}: {exc}") from exc
                self._reset()
                if on_reset is not None:
                    on_reset()
            except OSError as exc:
                raise SearchCacheError(f"search cache unusable: {self.file}: {exc}") from exc
        raise AssertionError("unreachable")

    # -- writing ----------------------------------------------------------------------

    def sync(self, current: Mapping[str, str], load: Callable[[str], SearchDoc | None]) -> SyncStats:
        """Bring the cache in line with ``current`` (key -> fingerprint).

        Only added and changed keys are loaded and tokenised; keys no longer in
        ``current`` are dropped. ``load`` returning None skips an unreadable document
        (and drops an older version of it), so the next sync tries it again.
        """
        self._last_sync = (current, load)
        try:
            return self._guarded(lambda: self._sync(current, load))
        except _LoadFailed as failed:
            raise failed.original from None

    def _sync(self, current: Mapping[str, str], load: Callable[[str], SearchDoc | None]) -> SyncStats:
        conn = self._connection()
        state = _state(current)
        conn.execute("BEGIN")  # the fingerprints and the version from one snapshot
        try:
            version, synced = conn.execute("SELECT version, state FROM totals WHERE id = 0").fetchone()
            if synced == state:
                return SyncStats()  # the cache was last synced to exactly this state
            stored = dict(conn.execute("SELECT key, fp FROM docs"))
        finally:
            conn.execute("COMMIT")
        added = [k for k in current if k not in stored]
        changed = [k for k in current if k in stored and stored[k] != current[k]]
        removed = [k for k in stored if k not in current]
        todo = added + changed

        def docs() -> Iterable[Item]:
            for key in progress.each(todo, "indexing memories for search"):
                try:
                    doc = load(key)
                except Exception as exc:
                    raise _LoadFailed(exc) from exc
                if doc is not None:
                    yield key, current[key], doc
                else:
                    unreadable.append(key)

        unreadable: list[str] = []
        # Remember the state only if no other process wrote since the snapshot and every
        # document could be read: the next sync with the same state is then a no-op.
        self._write(conn, removed + todo, docs(), len(todo), (version, state, unreadable))
        if len(todo) + len(removed) >= 1000:  # give back the disk a big write borrowed
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return SyncStats(len(added), len(changed), len(removed))

    def update_docs(self, docs: Iterable[SearchDoc], fingerprints: Mapping[str, str] | None = None) -> int:
        """Add or replace documents. Without a fingerprint the next ``sync`` reloads the key."""
        fps = fingerprints or {}
        items = [(doc.key, fps.get(doc.key, ""), doc) for doc in docs]

        def run() -> int:
            self._write(self._connection(), [k for k, _, _ in items], items, len(items))
            return len(items)

        return self._guarded(run)

    def remove(self, keys: Iterable[str]) -> int:
        """Drop documents by key; returns how many were present."""
        keys = list(dict.fromkeys(keys))

        def run() -> int:
            conn = self._connection()
            present = 0
            for batch in chunks(keys):
                present += conn.execute(
                    f"SELECT COUNT(*) FROM docs WHERE key IN ({_marks(len(batch))})", batch
                ).fetchone()[0]
            self._write(conn, keys, [])
            return present

        return self._guarded(run)

    def _write(
        self,
        conn: sqlite3.Connection,
        replace: Sequence[str],
        items: Iterable[Item],
        expected: int = 0,
        synced: tuple[int, str, list[str]] | None = None,
    ) -> None:
        """In one transaction: drop the documents ``replace`` names (the triggers take their
        terms and lengths away), then add ``items`` (about ``expected`` of them). ``synced`` is
        (version seen, state, unreadable keys) when a sync writes."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            for keys in chunks(dict.fromkeys(replace)):
                conn.execute(f"DELETE FROM docs WHERE key IN ({_marks(len(keys))})", keys)
            next_id = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM docs").fetchone()[0]
            for batch in tokenised(items, expected, self.workers):
                ids = range(next_id, next_id + len(batch))
                conn.executemany(f"INSERT INTO docs VALUES ({_marks(12)})", [(i, *r[0]) for i, r in zip(ids, batch)])
                conn.executemany(
                    f"INSERT INTO terms (rowid, {', '.join(_FIELDS)}, head) VALUES ({_marks(7)})",
                    [(i, *r[1]) for i, r in zip(ids, batch)],
                )
                next_id += len(batch)
            version = conn.execute("SELECT version FROM totals WHERE id = 0").fetchone()[0]
            state = synced[1] if synced and synced[0] == version and not synced[2] else ""
            conn.execute("UPDATE totals SET version = version + 1, state = ? WHERE id = 0", (state,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # -- reading (the Corpus protocol) --------------------------------------------------

    def size(self) -> tuple[int, tuple[int, ...]]:
        row = self._connection().execute("SELECT n, l0, l1, l2, l3, l4 FROM totals WHERE id = 0").fetchone()
        return row[0], tuple(row[1:])

    def df(self, terms: Sequence[str]) -> Mapping[str, int]:
        conn = self._connection()
        found: dict[str, int] = {}
        for term in dict.fromkeys(terms):
            found.update(conn.execute("SELECT term, doc FROM term_docs WHERE term = ?", (term,)))
        return found

    def postings(self, term: str, norms: Norms, docs: Collection[object] | None = None) -> Sequence[Posting]:
        if norms != self._weights_norms:
            self._weights = {}
            self._weights_norms = norms
        weights = self._weights
        found = self._connection().execute(
            f"SELECT p.doc, d.codes, {_TFS} FROM term_places p JOIN docs d ON d.id = p.doc"
            " WHERE p.term = ? GROUP BY p.doc",
            (term,),
        )
        out: list[Posting] = []
        for ref, codes, tfs in found if docs is None else (row for row in found if row[0] in docs):
            head = 1 if tfs & 0xFFFFFFFF else 0
            key = (codes if head else codes >> 32, tfs)  # only in the body: its length alone counts
            w = weights.get(key)
            if w is None:
                tf = [tfs >> 8 * f & 0xFF for f in range(5)]
                w = weights[key] = weighted_tf(tf, [codes >> 8 * f & 0xFF for f in range(5)], norms)
            out.append((ref, w, head))
        return out

    def fuzzy_candidates(self, first: str, min_len: int, max_len: int) -> Sequence[tuple[str, int, int]]:
        conn = self._connection()
        span = (first, chr(ord(first) + 1), min_len, max_len)
        where = "term >= ? AND term < ? AND length(term) BETWEEN ? AND ?"
        heads = dict(conn.execute(f"SELECT term, doc FROM term_heads WHERE {where} AND col = 'head'", span))
        found = conn.execute(f"SELECT term, doc FROM term_docs WHERE {where} ORDER BY term", span)
        return [(t, df, heads.get(t, 0)) for t, df in found if is_fuzzy_candidate(t)]

    def doc_priors(self, refs: Collection[object]) -> dict[object, tuple[float, float, float]]:
        conn = self._connection()
        out: dict = {}
        for batch in chunks(refs, 900):
            for doc_id, importance, days, asks in conn.execute(
                f"SELECT id, importance, days, asks FROM docs WHERE id IN ({_marks(len(batch))})", batch
            ):
                out[doc_id] = (importance, math.nan if days is None else days, asks)
        return out

    def doc_keys(self, refs: Collection[object]) -> Mapping[object, str]:
        conn = self._connection()
        out: dict = {}
        for batch in chunks(refs, 900):
            out.update(conn.execute(f"SELECT id, key FROM docs WHERE id IN ({_marks(len(batch))})", batch))
        return out

    def fingerprints(self, keys: Collection[str]) -> dict[str, str]:
        """The stored fingerprint of each of these keys that is cached."""
        wanted = list(keys)

        def run() -> dict[str, str]:
            conn = self._connection()
            out: dict[str, str] = {}
            for part in chunks(wanted):
                out.update(conn.execute(f"SELECT key, fp FROM docs WHERE key IN ({_marks(len(part))})", part))
            return out

        return self._guarded(run) if wanted else {}

    def keys(self) -> dict[str, str]:
        """Every cached key with its fingerprint."""
        return self._guarded(lambda: dict(self._connection().execute("SELECT key, fp FROM docs")))

    def __len__(self) -> int:
        return self._guarded(lambda: self.size()[0])

    def search(
        self,
        query: str,
        limit: int = 5,
        threshold: float | None = None,
        now: datetime | None = None,
        floor: float | None = None,
        prior: tuple[float, float] | None = None,
    ) -> list[Scored]:
        """Rank the cached documents exactly as ``MemoryIndex.search`` would.

        A corrupt cache is rebuilt from the arguments of the last ``sync`` in this
        process; without one, ``SearchCacheError`` asks the caller to sync.
        """

        def run() -> list[Scored]:
            conn = self._connection()
            conn.execute("BEGIN")  # one consistent snapshot for the whole query
            try:
                return search_corpus(self, query, limit=limit, threshold=threshold, now=now, floor=floor, prior=prior)
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

        def resync() -> None:
            if self._last_sync is None:
                raise SearchCacheError(f"search cache was corrupt and has been reset; sync it: {self.file}")
            current, load = self._last_sync
            self._guarded(lambda: self._sync(current, load))

        try:
            return self._guarded(run, resync)
        except _LoadFailed as failed:
            raise failed.original from None

"""A persistent search cache in SQLite for large stores.

The cache keeps, per term, packed postings (see ``segments``) in segments: each write
adds one (a large build several), small segments are merged, and removed documents are
masked until their segment is rewritten. Document frequencies, field-length totals and
the vocabulary are kept exact, and ranking is the same code as ``MemoryIndex`` (through
the ``Corpus`` protocol), so both return the same results for the same documents.

SQLite's FTS5 over the same terms was measured in its place (fts5vocab's 'row', 'col' and
'instance' give the same numbers; ``benchmarks/search_cache_bench.py``, docs/evaluation.md): it
builds and writes faster (100k: 19 s against 33; one changed memory 199 ms of CPU against 261) and
finds a rare word as fast, but a recall of common words reads every place of each word, and is
slower where a turn waits: 140 ms of CPU against 113 at 10k, 1.83 s against 1.23 at 100k in
process, 229 against 163 ms and 1.25 s against 0.68 for the whole command. So the postings stay.

The cache is disposable: a missing, outdated or corrupt file is rebuilt from the
documents by the next ``sync``. WAL mode and a busy timeout let several processes share
it; every write is one transaction.
"""

from __future__ import annotations

import math
import os
import sqlite3
import struct
import sys
from array import array
from collections import Counter
from datetime import datetime
from itertools import groupby
from pathlib import Path
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from memcli import progress
from memcli.model import Value
import hashlib
from memcli.search.ranker import Norms, Posting, Scored, SearchDoc, is_fuzzy_candidate, search_corpus, weighted_tf
from memcli.search.segments import chunks, pack, segments, unpack
from memcli.search.tokenize import terms

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

FILENAME = "search.sqlite3"
FORMAT = "8"
SMALL_SEGMENT = 2000  # segments with fewer documents are merged once there are MERGE_AT of them
MERGE_AT = 8
MAX_SEGMENTS = 24  # more than this, or too many removed documents: rewrite everything
DEAD_MIN = 500  # removed documents tolerated before a rewrite (or a quarter of all, if more)
_PROBE = (
    "MySQL中文查不到数据 encoding caches speeding states weekly snake_case-kebab 日本語のテキスト 한국어 token爆炸 3.11"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, fp TEXT NOT NULL, importance REAL NOT NULL, days REAL,
    seg INTEGER NOT NULL, l0 INTEGER NOT NULL, l1 INTEGER NOT NULL, l2 INTEGER NOT NULL, l3 INTEGER NOT NULL,
    l4 INTEGER NOT NULL, head_terms TEXT NOT NULL, body_terms TEXT NOT NULL, asks REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS postings (
    term TEXT NOT NULL, seg INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (term, seg)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_seg ON postings (seg);
CREATE TABLE IF NOT EXISTS segments (seg INTEGER PRIMARY KEY, docs INTEGER NOT NULL, dead INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS dead (id INTEGER PRIMARY KEY, seg INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS terms (
    term TEXT PRIMARY KEY, df INTEGER NOT NULL, hdf INTEGER NOT NULL, fz INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS totals (
    id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL,
    l0 INTEGER NOT NULL, l1 INTEGER NOT NULL, l2 INTEGER NOT NULL, l3 INTEGER NOT NULL, l4 INTEGER NOT NULL,
    next_doc INTEGER NOT NULL, next_seg INTEGER NOT NULL, version INTEGER NOT NULL, state TEXT NOT NULL
);
INSERT OR IGNORE INTO totals VALUES (0, 0, 0, 0, 0, 0, 0, 1, 1, 0, '');
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
    """Changes whenever the format, the byte order or the tokenizer's output changes."""
    probe = "\x1f".join(terms(_PROBE))
    digest = hashlib.sha1(probe.encode("utf-8")).hexdigest()[:16]
    return f"{FORMAT}:{sys.byteorder}:{digest}"


def _state(current: Mapping[str, str]) -> str:
    """A digest of key -> fingerprint, in the caller's order (another order only costs a diff)."""
    text = "\n".join(map("\t".join, current.items()))
    return f"{len(current)}:" + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _is_busy(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SearchCache:
    """Pre-tokenised postings of many documents in ``<path>/search.sqlite3``."""

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
        self._dead: frozenset[int] = frozenset()
        self._body_weights: dict[int, float] = {}
        self._head_weights: dict[tuple[int, int], float] = {}
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
            for table in ("meta", "docs", "postings", "segments", "dead", "terms", "totals"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
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
            except (sqlite3.Error, struct.error, ValueError) as exc:
                if self._conn is not None and self._conn.in_transaction:
                    try:
                        self._conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if isinstance(exc, sqlite3.Error) and _is_busy(exc):
                    raise SearchCacheError(f"search cache is busy: {self.file}") from exc
                corrupt = isinstance(exc, (sqlite3.DatabaseError, struct.error, ValueError))
                if attempt == 2 or not corrupt:
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

        def docs() -> Iterable[tuple[str, str, SearchDoc]]:
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
        items: Iterable[tuple[str, str, SearchDoc]],
        expected: int = 0,
        synced: tuple[int, str, list[str]] | None = None,
    ) -> None:
        """In one transaction: drop the documents ``replace`` names, add ``items`` (about
        ``expected`` of them) as new segments, then merge segments if there are too many.
        ``synced`` is (version seen, state, unreadable keys) when a sync writes."""
        df_delta: Counter[str] = Counter()
        hdf_delta: Counter[str] = Counter()
        counts = [0, 0, 0, 0, 0, 0]  # n, l0..l4
        conn.execute("BEGIN IMMEDIATE")
        try:
            next_doc, seg = conn.execute("SELECT next_doc, next_seg FROM totals WHERE id = 0").fetchone()
            dead_rows: list[tuple[int, int]] = []
            for batch in chunks(dict.fromkeys(replace)):
                rows = conn.execute(
                    "SELECT id, seg, head_terms, body_terms, l0, l1, l2, l3, l4 FROM docs "
                    f"WHERE key IN ({_marks(len(batch))})",
                    batch,
                ).fetchall()
                for doc_id, old_seg, head, body, *lens in rows:
                    dead_rows.append((doc_id, old_seg))
                    counts[0] -= 1
                    for f in range(5):
                        counts[f + 1] -= lens[f]
                    head_terms = head.split()
                    df_delta.subtract(head_terms)
                    hdf_delta.subtract(head_terms)
                    df_delta.subtract(body.split())
            conn.executemany("DELETE FROM docs WHERE id = ?", [(d,) for d, _ in dead_rows])
            conn.executemany("INSERT INTO dead VALUES (?, ?)", dead_rows)
            conn.executemany(
                "UPDATE segments SET dead = dead + ? WHERE seg = ?",
                sorted((n, s) for s, n in Counter(s for _, s in dead_rows).items()),
            )
            for rows, added_df, added_hdf, doc_rows, added in segments(items, next_doc, seg, expected, self.workers):
                conn.executemany(f"INSERT INTO docs VALUES ({_marks(14)})", doc_rows)
                conn.executemany("INSERT INTO postings VALUES (?, ?, ?)", rows)
                conn.execute("INSERT INTO segments VALUES (?, ?, 0)", (seg, len(doc_rows)))
                df_delta.update(added_df)
                hdf_delta.update(added_hdf)
                for f in range(6):
                    counts[f] += added[f]
                next_doc += len(doc_rows)
                seg += 1
            conn.executemany(
                "INSERT INTO terms VALUES (?, ?, ?, ?) ON CONFLICT(term) DO UPDATE "
                "SET df = df + excluded.df, hdf = hdf + excluded.hdf",
                sorted(
                    (t, d, hdf_delta.get(t, 0), int(is_fuzzy_candidate(t)))
                    for t, d in df_delta.items()
                    if d or hdf_delta.get(t, 0)
                ),
            )
            conn.executemany(
                "DELETE FROM terms WHERE term = ? AND df <= 0", sorted((t,) for t, d in df_delta.items() if d < 0)
            )
            conn.execute(
                "UPDATE totals SET n = n + ?, l0 = l0 + ?, l1 = l1 + ?, l2 = l2 + ?, l3 = l3 + ?, l4 = l4 + ?,"
                " next_doc = ?, next_seg = ? WHERE id = 0",
                (*counts, next_doc, seg),
            )
            self._maybe_merge(conn)
            version = conn.execute("SELECT version FROM totals WHERE id = 0").fetchone()[0]
            state = synced[1] if synced and synced[0] == version and not synced[2] else ""
            conn.execute("UPDATE totals SET version = version + 1, state = ? WHERE id = 0", (state,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _maybe_merge(self, conn: sqlite3.Connection) -> None:
        segments = conn.execute("SELECT seg, docs, dead FROM segments ORDER BY seg").fetchall()
        docs = sum(s[1] for s in segments)
        dead = sum(s[2] for s in segments)
        if len(segments) > MAX_SEGMENTS or dead > max(DEAD_MIN, docs // 4):
            chosen = [s[0] for s in segments]
        else:
            small = [s[0] for s in segments if s[1] < SMALL_SEGMENT]
            chosen = small if len(small) >= MERGE_AT else []
        if len(chosen) > 1 or (chosen and dead):
            self._merge(conn, chosen)

    def _merge(self, conn: sqlite3.Connection, segs: list[int]) -> None:
        """Rewrite segments ``segs`` as one, leaving out removed documents."""
        marks = _marks(len(segs))
        dead = {d for (d,) in conn.execute(f"SELECT id FROM dead WHERE seg IN ({marks})", segs)}
        seg = conn.execute("SELECT next_seg FROM totals WHERE id = 0").fetchone()[0]
        rows = conn.execute(
            f"SELECT term, data FROM postings WHERE seg IN ({marks}) ORDER BY term, seg", segs
        ).fetchall()
        merged = []
        for term, group in groupby(rows, key=lambda r: r[0]):
            body, head, head_fields = array("Q"), array("Q"), array("Q")
            for _, data in group:
                b, h, hf = unpack(data)
                body.extend(b)
                head.extend(h)
                head_fields.extend(hf)
            if dead:
                body = array("Q", [x for x in body if x >> 16 not in dead])
                keep = [i for i, x in enumerate(head) if x >> 16 not in dead]
                if len(keep) < len(head):
                    head = array("Q", [head[i] for i in keep])
                    head_fields = array("Q", [head_fields[i] for i in keep])
            if body or head:
                merged.append((term, seg, pack(body, head, head_fields)))
        conn.execute(f"DELETE FROM postings WHERE seg IN ({marks})", segs)
        conn.executemany("INSERT INTO postings VALUES (?, ?, ?)", merged)
        conn.execute(f"DELETE FROM dead WHERE seg IN ({marks})", segs)
        conn.execute(f"UPDATE docs SET seg = ? WHERE seg IN ({marks})", [seg, *segs])
        live = conn.execute(
            f"SELECT COALESCE(SUM(docs - dead), 0) FROM segments WHERE seg IN ({marks})", segs
        ).fetchone()[0]
        conn.execute(f"DELETE FROM segments WHERE seg IN ({marks})", segs)
        conn.execute("INSERT INTO segments VALUES (?, ?, 0)", (seg, live))
        conn.execute("UPDATE totals SET next_seg = ? WHERE id = 0", (seg + 1,))

    # -- reading (the Corpus protocol) --------------------------------------------------

    def size(self) -> tuple[int, tuple[int, ...]]:
        row = self._connection().execute("SELECT n, l0, l1, l2, l3, l4 FROM totals WHERE id = 0").fetchone()
        return row[0], tuple(row[1:])

    def df(self, terms: Sequence[str]) -> Mapping[str, int]:
        conn = self._connection()
        found: dict[str, int] = {}
        for batch in chunks(dict.fromkeys(terms)):
            found.update(conn.execute(f"SELECT term, df FROM terms WHERE term IN ({_marks(len(batch))})", batch))
        return found

    @staticmethod
    def _weight(body: int, head: int, norms: Norms) -> float:
        tfs = [(head >> (16 * f + 8)) & 0xFF for f in range(4)] + [body >> 8]
        codes = [(head >> (16 * f)) & 0xFF for f in range(4)] + [body & 0xFF]
        return weighted_tf(tfs, codes, norms)

    def postings(self, term: str, norms: Norms, docs: Collection[object] | None = None) -> Sequence[Posting]:
        if norms != self._weights_norms:
            self._body_weights = {}
            self._head_weights = {}
            self._weights_norms = norms
        body_weights, head_weights = self._body_weights, self._head_weights
        dead = self._dead
        out: list[Posting] = []
        rows = self._connection().execute("SELECT data FROM postings WHERE term = ? ORDER BY seg", (term,))
        for (data,) in rows:
            body, head, head_fields = unpack(data)
            for b in {x & 0xFFFF for x in body}.difference(body_weights):
                body_weights[b] = self._weight(b, 0, norms)
            if docs is None and not dead:
                out += [(x >> 16, body_weights[x & 0xFFFF], 0) for x in body]
            else:
                out += [
                    (x >> 16, body_weights[x & 0xFFFF], 0)
                    for x in body
                    if x >> 16 not in dead and (docs is None or x >> 16 in docs)
                ]
            for x, h in zip(head, head_fields):
                doc = x >> 16
                if doc in dead or (docs is not None and doc not in docs):
                    continue
                key = (x & 0xFFFF, h)
                w = head_weights.get(key)
                if w is None:
                    w = head_weights[key] = self._weight(key[0], h, norms)
                out.append((doc, w, 1))
        return out

    def fuzzy_candidates(self, first: str, min_len: int, max_len: int) -> Sequence[tuple[str, int, int]]:
        return (
            self._connection()
            .execute(
                "SELECT term, df, hdf FROM terms WHERE term >= ? AND term < ? AND fz = 1 "
                "AND length(term) BETWEEN ? AND ? ORDER BY term",
                (first, chr(ord(first) + 1), min_len, max_len),
            )
            .fetchall()
        )

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
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
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
                self._dead = frozenset(d for (d,) in conn.execute("SELECT id FROM dead"))
                return search_corpus(self, query, limit=limit, threshold=threshold, now=now, prior=prior)
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

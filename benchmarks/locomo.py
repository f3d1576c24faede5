"""Recall on long conversations (LoCoMo): any@1/5/10 for memcli as shipped and a plain BM25.

    python benchmarks/locomo.py [DATA] [--limit 10] [--show-misses N] [--threshold T]
    python benchmarks/locomo.py --semantic      # also memcli with the `semantic` extra (plain and best k)
    python benchmarks/locomo.py --part fit      # the conversations fitted on (--part held: once, at the end)

DATA defaults to ../shared/data/locomo-dev/locomo-dev.json (the LoCoMo licence, CC BY-NC,
keeps it out of this repository: the benchmark reads it from where it lies and writes its
stores to a temporary folder). Each conversation becomes a memory root with one detail file
per dialog turn: title and summary from the turn's text, the speaker, the day and the whole turn
(and the caption of a shared photo) as body, the speaker as tag, the session's date as created/updated; MEMORY.md
is built by `index rebuild`. Each question is asked through the real cascade,
`memcli.recall.recall` with the root's defaults, at the moment of the conversation's last
session; it counts as found at k when any of its evidence turns is among the first k hits.
Category 5 (adversarial) has no reliable evidence and is skipped. BM25 is Okapi BM25
(k1 1.2, b 0.75) over `\\w+` tokens, lower-cased, same stemmer as memcli, no abstention.
`memcli` is the lexical cascade (the extra turned off when it is installed); with --semantic,
`memcli+sem` is a plain recall with the extra's layer and `memcli+sem-k` asks for the best k,
weak ones included (threshold 0).
"""

from __future__ import annotations

from contextlib import contextmanager

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

_REL = Path("shared", "data", "locomo-dev", "locomo-dev.json")
# ../shared/... beside the checkout (or beside the folder of checkouts when this is one of several)
DEFAULT_DATA = next(
    (p / _REL for p in (HERE.parent.parent, HERE.parent.parent.parent) if (p / _REL).is_file()),
    HERE.parent.parent / _REL,
)
# The dev conversations are split once, before the work that fits on them: `fit` is looked at and
# fitted on (benchmarks/fit_gate.py), `held` is scored once, at the end.
PARTS = {"fit": ("conv-26", "conv-30"), "held": ("conv-41",)}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
COLUMNS = (*KS, "s@5")


def session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turns(conv: dict):
    """(dia_id, speaker, text, when) for every turn of a conversation, in order."""
    c = conv["conversation"]
    n = 1
    while f"session_{n}" in c:
        when = session_time(c[f"session_{n}_date_time"])
        for i, t in enumerate(c[f"session_{n}"]):
            text = t.get("text", "")
            if t.get("blip_caption"):
                text += f"\n[shares a photo: {t['blip_caption']}]"
            yield t["dia_id"], t["speaker"], text, when + timedelta(seconds=30 * i)
        n += 1


def day(when: datetime) -> str:
    return f"{when.day} {when:%B %Y}"


def turn_id(dia_id: str) -> str:
    return dia_id.lower().replace(":", "-")


def split_turn(text: str) -> tuple[str, str]:
    """A title (the first sentence, at most 12 words) and a summary (the rest, one line)."""
    flat = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", flat)
    first = m.group(1) if m else flat
    words = first.split()
    title = " ".join(words[:12])
    rest = flat[len(title) :].strip()
    return title, rest[:240]


def write_root(conv: dict, folder: Path):
    """A memory root for one conversation; returns (root, moment of the last session)."""
    from memcli.core import Memory
    from memcli.usecases.init import init_root
    from memcli.model import Detail
    from memcli.store import details as dfile

    init_root(folder)
    last = None
    for dia_id, speaker, text, when in turns(conv):
        title, summary = split_turn(text)
        stamp = when.isoformat().replace("+00:00", "Z")
        d = Detail(
            id=turn_id(dia_id),
            title=title or speaker,
            summary=summary,
            tags=(speaker.lower(),),
            type="event",
            created=stamp,
            updated=stamp,
            body=f"{speaker} ({day(when)}): {text}\n",
        )
        (folder / "memory" / f"{d.id}.md").write_text(dfile.render(d), encoding="utf-8")
        last = when
    mem = Memory(folder)
    mem.rebuild_index()
    return mem, last


class BM25:
    """Okapi BM25 over every field of every turn, no abstention."""

    def __init__(self, docs: dict[str, str]):
        from memcli.search.tokenize import stem

        self._word = re.compile(r"\w+")
        self._stem = stem
        self.keys = list(docs)
        bodies = [self.tok(docs[k]) for k in self.keys]
        self.tfs = [Counter(b) for b in bodies]
        self.lens = [len(b) for b in bodies]
        self.avg = sum(self.lens) / max(len(bodies), 1)
        self.df = Counter(t for tf in self.tfs for t in tf)
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, tf in enumerate(self.tfs):
            for t in tf:
                self.postings[t].append(i)

    def tok(self, text: str) -> list[str]:
        return [self._stem(w) for w in self._word.findall(text.lower())]

    def search(self, query: str, k: int) -> list[str]:
        n = len(self.keys)
        scores: dict[int, float] = defaultdict(float)
        for t in set(self.tok(query)):
            idf = math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5))
            for i in self.postings.get(t, ()):
                tf = self.tfs[i][t]
                scores[i] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lens[i] / self.avg))
        best = sorted(scores.items(), key=lambda x: (-x[1], self.keys[x[0]]))[:k]
        return [self.keys[i] for i, _ in best]


@contextmanager
def semantic_extra(on: bool):
    """The `semantic` extra's layer on or off for a block (it must be installed to be on)."""
    from memcli.search import embed

    installed = embed.available
    if on and not installed():
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    embed.available = installed if on else (lambda: False)
    try:
        yield
    finally:
        embed.available = installed


def memcli_search(mem, when: datetime, limit: int, threshold: float | None, extra: bool = False):
    from memcli.recall import recall

    now = when.isoformat()

    def search(query: str) -> tuple[list[str], str | None]:
        with semantic_extra(extra):
            res = recall(
                mem.store,
                query,
                session="locomo-benchmark",
                scope="locomo-benchmark",
                limit=limit,
                threshold=threshold,
                now=now,
            )
        return [h.id for h in res.hits], (res.hits[0].layer if res.hits else None)

    return search


SESSION_K = 5  # the session-level figure: a right session among the first five sessions found


def session_of(turn: str) -> str:
    """'d3-5' -> 'd3': the session a turn belongs to."""
    return turn.rsplit("-", 1)[0]


def score(found: list[str], evidence: set[str]) -> dict:
    """any@k for each k, and "s@5": a session holding evidence among the first SESSION_K distinct
    sessions of the hits (sessions ranked by their best turn), the figure published for LoCoMo at
    session level."""
    out: dict = {k: bool(evidence & set(found[:k])) for k in KS}
    sessions = list(dict.fromkeys(session_of(t) for t in found))[:SESSION_K]
    out["s@5"] = bool({session_of(e) for e in evidence} & set(sessions))
    return out


SETTINGS = {  # constants a run may vary (--set NAME=VALUE, --loco NAME=V1,V2,...)
    "asking_penalty": ("memcli.search.ranker", "ASKING_PENALTY"),
}


def setting(name: str, value: float | None = None) -> float:
    """Read (and with ``value``, set) one of SETTINGS."""
    import importlib

    if name not in SETTINGS:
        raise SystemExit(f"unknown setting {name!r}: one of {', '.join(SETTINGS)}")
    module, attr = SETTINGS[name]
    mod = importlib.import_module(module)
    if value is not None:
        setattr(mod, attr, type(getattr(mod, attr))(value))
    return getattr(mod, attr)


def evidence_of(qa: dict) -> set:
    return {turn_id(e.strip()) for ev in qa.get("evidence") or () for e in ev.split(";")}


def questions(conv: dict):
    for qa in conv["qa"]:
        if qa.get("category") in CATEGORIES and evidence_of(qa):
            yield qa


def leave_one_out(data: list, grid: dict, limit: int, tmp: Path, semantic: bool) -> list:
    """For each conversation: the values of ``grid`` (setting -> values) that do best on the other
    conversations (any@5 + any@10 of the shipped default, -k ``limit``), then its own figures with
    them and with the shipped values. Returns rows (conversation, chosen values, figures)."""
    import itertools

    roots = [write_root(conv, tmp / f"loco-{ci}") for ci, conv in enumerate(data)]
    shipped = {name: setting(name) for name in grid}
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]

    def figures(ci: int, values: dict, extra: bool = False) -> tuple:
        for name, v in values.items():
            setting(name, v)
        mem, last = roots[ci]
        search = memcli_search(mem, last + timedelta(days=1), limit, 0.0 if extra else None, extra)
        got = [score(search(str(qa["question"]))[0], evidence_of(qa)) for qa in questions(data[ci])]
        for name, v in shipped.items():
            setting(name, v)
        return tuple(sum(g[k] for g in got) for k in KS), len(got)

    table = {}
    for ci in range(len(data)):
        for combo in combos:
            table[ci, tuple(combo.values())] = figures(ci, combo)
    rows = []
    for ci in range(len(data)):

        def trained(combo):
            hits = [table[cj, tuple(combo.values())][0] for cj in range(len(data)) if cj != ci]
            return sum(h[1] + h[2] for h in hits)

        best = max(combos, key=lambda c: (trained(c), c == shipped))
        held, n = table[ci, tuple(best.values())]
        ship, _ = figures(ci, shipped)
        rows.append(
            {
                "conversation": ci,
                "n": n,
                "chosen": best,
                "held-out": {f"any@{k}": round(h / n, 3) for k, h in zip(KS, held)},
                "shipped": {f"any@{k}": round(h / n, 3) for k, h in zip(KS, ship)},
            }
        )
        if semantic:
            sem, _ = figures(ci, best, extra=True)
            rows[-1]["held-out best-k"] = {f"any@{k}": round(h / n, 3) for k, h in zip(KS, sem)}
    return rows


def _column(k) -> str:
    return f"any@{k}" if isinstance(k, int) else k


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA, help="locomo JSON (a list of conversations)")
    ap.add_argument("--limit", type=int, default=10, help="hits asked for (any@k uses the first k)")
    ap.add_argument("--threshold", type=float, default=None, help="override recall.threshold (default: shipped)")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"try another value of a constant: {', '.join(SETTINGS)}",
    )
    ap.add_argument(
        "--loco",
        action="append",
        default=[],
        metavar="NAME=V1,V2,...",
        help="leave one conversation out: choose these settings on the other conversations, "
        "score each conversation with its choice (and with the shipped values)",
    )
    ap.add_argument("--show-misses", type=int, default=0, help="print this many questions memcli missed at 5")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    ap.add_argument("--part", choices=sorted(PARTS), help="only the conversations of this part (default: every one)")
    ap.add_argument("--semantic", action="store_true", help="also memcli with the semantic extra (plain and best k)")
    args = ap.parse_args(argv)
    if not args.data.is_file():
        print(f"locomo data not found: {args.data}", file=sys.stderr)
        return 2
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.part:
        data = [c for c in data if c.get("sample_id") in PARTS[args.part]]
        if args.part == "held":
            print("part held: the one-time final check; do not tune on what it shows.", file=sys.stderr)
    for item in args.set:
        name, _, value = item.partition("=")
        setting(name, float(value))
    if args.loco:
        grid = {}
        for item in args.loco:
            name, _, values = item.partition("=")
            setting(name)
            grid[name] = [float(v) for v in values.split(",")]
        with tempfile.TemporaryDirectory(prefix="memcli-locomo-") as tmp:
            rows = leave_one_out(data, grid, args.limit, Path(tmp), args.semantic)
        print(
            f"LoCoMo {args.data.name}, leave one conversation out over {grid} "
            f"(shipped: { {n: setting(n) for n in grid} }); memcli -k {args.limit}"
        )
        for r in rows:
            print(
                f"conversation {r['conversation']} ({r['n']} questions): chosen {r['chosen']} -> held out "
                f"{r['held-out']}; shipped values {r['shipped']}"
                + (f"; best-k with the extra {r['held-out best-k']}" if "held-out best-k" in r else "")
            )
        total = sum(r["n"] for r in rows)
        for key in ("held-out", "shipped", "held-out best-k"):
            if all(key in r for r in rows):
                pooled = {k: round(sum(r[key][k] * r["n"] for r in rows) / total, 3) for k in rows[0][key]}
                print(f"pooled {key}: {pooled}")
        if args.json:
            print(json.dumps(rows))
        return 0

    names = ("memcli", "bm25") + (("memcli+sem", "memcli+sem-k") if args.semantic else ())
    hits = {name: defaultdict(lambda: Counter()) for name in names}
    counts: Counter = Counter()
    times = {name: [] for name in names}
    layers: Counter = Counter()
    abstained = 0
    misses = []
    with tempfile.TemporaryDirectory(prefix="memcli-locomo-") as tmp:
        for ci, conv in enumerate(data):
            mem, last = write_root(conv, Path(tmp) / f"conv-{ci}")
            docs = {}
            for dia_id, speaker, text, when in turns(conv):
                title, summary = split_turn(text)
                docs[turn_id(dia_id)] = f"{title}\n{summary}\n{speaker.lower()}\n{speaker} ({day(when)}): {text}"
            bm = BM25(docs)
            search = memcli_search(mem, last + timedelta(days=1), args.limit, args.threshold)
            search(conv["qa"][0]["question"])  # the first call builds the search cache: not timed
            others = {}
            if args.semantic:
                others = {
                    "memcli+sem": memcli_search(mem, last + timedelta(days=1), args.limit, args.threshold, True),
                    "memcli+sem-k": memcli_search(mem, last + timedelta(days=1), args.limit, 0.0, True),
                }
                others["memcli+sem-k"](conv["qa"][0]["question"])  # builds the embedding cache: not timed
            for qa in conv["qa"]:
                cat = qa.get("category")
                if cat not in CATEGORIES:
                    continue
                evidence = evidence_of(qa)
                if not evidence:
                    continue
                q = str(qa["question"])
                t0 = time.perf_counter()
                got, layer = search(q)
                times["memcli"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                base = bm.search(q, args.limit)
                times["bm25"].append(time.perf_counter() - t0)
                results = [("memcli", got), ("bm25", base)]
                for name, other in others.items():
                    t0 = time.perf_counter()
                    results.append((name, other(q)[0]))
                    times[name].append(time.perf_counter() - t0)
                layers[layer] += 1
                abstained += not got
                counts[cat] += 1
                for name, found in results:
                    for k, ok in score(found, evidence).items():
                        hits[name][cat][k] += ok
                if not score(got, evidence)[5]:
                    misses.append((ci, q, sorted(evidence), got[:5], layer))

    total = sum(counts.values())
    rows = []
    print(
        f"LoCoMo {args.data.name}: {len(data)} conversations, {total} questions (category 5 skipped); "
        f"memcli hits by layer {dict(layers)}, abstained on {abstained}"
    )
    print(f"{'category':12} {'n':>4}  {'engine':12} " + " ".join(f"{_column(k):>7}" for k in COLUMNS))
    for cat in [*CATEGORIES, "all"]:
        n = total if cat == "all" else counts[cat]
        for name in names:
            got = {
                k: sum(hits[name][c][k] for c in CATEGORIES) if cat == "all" else hits[name][cat][k] for k in COLUMNS
            }
            fig = {k: got[k] / max(n, 1) for k in COLUMNS}
            rows.append(
                {
                    "category": CATEGORIES.get(cat, cat),
                    "engine": name,
                    "n": n,
                    **{_column(k): round(v, 3) for k, v in fig.items()},
                }
            )
            label = CATEGORIES.get(cat, cat)
            print(f"{label:12} {n:>4}  {name:12} " + " ".join(f"{fig[k]:>7.3f}" for k in COLUMNS))
    for name in names:
        print(
            f"{name}: median {statistics.median(times[name]) * 1000:.2f} ms per question "
            f"(p90 {statistics.quantiles(times[name], n=10)[-1] * 1000:.2f} ms, in process)"
        )
    for ci, q, ev, got, layer in misses[: args.show_misses]:
        print(f"  miss conv {ci}: {q!r} evidence {ev} got {got} ({layer})")
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

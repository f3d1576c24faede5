"""A simulated month of use: how many recalls does MEMORY.md (the index layer) answer?

    python benchmarks/index_month.py --seed 2                  # importance vs activity, the shipped weights
    python benchmarks/index_month.py --seed 1 --grid           # the weights and half-lives tried (dev seed)

The workload (generated, fixed seed): a root starts with 120 memories written over the two
months before; every day 4 new ones arrive and 40 recalls are made. Each memory has a hidden
usefulness (a Zipf-like popularity: the k-th most useful is recalled ~1/k as often), and a new
one is in heavy use for its first week or so (a current project). The importance its author gives
it is a noisy guess of that usefulness. A recall asks for a memory by the two words of its title
(as an agent asks "kubernetes rollback"); it is answered by the index layer when MEMORY.md lists
the memory, else by the details layer. Every night `heartbeat --fix` runs. MEMORY.md has the same
40-line cap throughout. Reported: the share of the month's recalls answered from the index
(right memory, layer index), with `index.rank: importance` (before) and `activity` (after).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memcli.core import Memory  # noqa: E402
from memcli.store import indexrules  # noqa: E402

START = datetime(2026, 11, 1, tzinfo=timezone.utc)
SYLLABLES = (
    "ka ro mi zu te val dor fen gri hol jas kel lum nor pax qui ras sul tor ver wyn xan yor zel "
    "bri cla dre fro glo hra kri plo sna tri"
).split()


def stamp(t: datetime) -> str:
    return t.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def word(rng: random.Random, used: set) -> str:
    while True:
        w = "".join(rng.choice(SYLLABLES) for _ in range(3))
        if w not in used:
            used.add(w)
            return w


class Workload:
    """The month's events, the same for every configuration."""

    def __init__(self, seed: int, initial: int = 120, days: int = 30, per_day: int = 4, recalls: int = 40):
        rng = random.Random(seed)
        used: set = set()
        self.memories = []  # (id, title, importance, created, base popularity)
        n = initial + days * per_day
        ranks = list(range(1, n + 1))
        rng.shuffle(ranks)
        for i in range(n):
            pop = 1.0 / ranks[i]
            pct = 1.0 - (ranks[i] - 1) / n  # 1 for the most useful
            imp = min(1.0, max(0.1, round(0.3 + 0.4 * pct + rng.gauss(0, 0.2), 1)))
            if i < initial:
                created = START - timedelta(days=rng.uniform(1, 60))
            else:
                day = (i - initial) // per_day
                created = START + timedelta(days=day, hours=rng.uniform(8, 18))
            w1, w2 = word(rng, used), word(rng, used)
            self.memories.append((f"m{i:03d}-{w1}", f"{w1} {w2}", imp, created, pop))
        self.recalls = []  # (time, memory index)
        for day in range(days):
            for r in range(recalls):
                t = START + timedelta(days=day, hours=9 + 9 * r / recalls)
                weights = []
                for _, _, _, created, pop in self.memories:
                    if created > t:
                        weights.append(0.0)
                        continue
                    age = (t - created).total_seconds() / 86400
                    weights.append(pop * (1 + 8 * math.exp(-age / 6)))
                self.recalls.append((t, rng.choices(range(len(self.memories)), weights=weights)[0]))
        self.days = days


def simulate(
    work: Workload, rank: str, half_life: str | None = None, weights=None, workdir: Path | None = None
) -> dict:
    if weights is not None:
        indexrules.W_IMPORTANCE, indexrules.W_RECENCY, indexrules.W_ACCESS = weights
    root = Path(tempfile.mkdtemp(prefix="memcli-month-", dir=workdir))
    mem = Memory.init(root)
    hl = f"recall.half_life: {half_life}\n" if half_life else ""  # else the default
    (root / "memcli.yaml").write_text(f"index.rank: {rank}\n{hl}", encoding="utf-8")
    mem = Memory(root)
    pending = sorted(range(len(work.memories)), key=lambda i: work.memories[i][3])
    p = 0

    def arrive(until: datetime):
        nonlocal p
        while p < len(pending) and work.memories[pending[p]][3] <= until:
            mid, title, imp, created, _ = work.memories[pending[p]]
            mem.remember(title, f"notes on {title}", id=mid, importance=imp, now=stamp(created))
            p += 1

    arrive(START)
    index_hits = answered = 0
    day = -1
    for t, i in work.recalls:
        if (t - START).days != day:
            if day >= 0:
                mem.repair(now=stamp(START + timedelta(days=day, hours=23)))
            day = (t - START).days
        arrive(t)
        mid, title = work.memories[i][0], work.memories[i][1]
        hits = mem.recall(title, now=stamp(t)).hits
        if hits and hits[0].id == mid:
            answered += 1
            index_hits += hits[0].layer == "index"
    n = len(work.recalls)
    return {
        "rank": rank,
        "half_life": half_life,
        "weights": weights,
        "recalls": n,
        "index_share": index_hits / n,
        "answered": answered / n,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--grid", action="store_true", help="try the weights and half-lives (on the dev seed, 1)")
    a = ap.parse_args(argv)
    work = Workload(a.seed)
    shipped = (indexrules.W_IMPORTANCE, indexrules.W_RECENCY, indexrules.W_ACCESS)
    runs = [("importance", None, None), ("activity", None, (0.6, 0.3, 0.1)), ("activity", None, shipped)]
    if a.grid:
        runs = [("importance", None, None)]
        for w in (
            (0.6, 0.3, 0.1),
            (0.5, 0.3, 0.2),
            (0.4, 0.2, 0.4),
            (0.3, 0.2, 0.5),
            (0.2, 0.2, 0.6),
            (0.4, 0.4, 0.2),
            (0.2, 0.4, 0.4),
        ):
            runs.append(("activity", "90d", w))
        for hl in ("7d", "30d", "90d", "180d"):
            runs.append(("activity", hl, shipped))
    print(
        f"seed {a.seed}: {len(work.memories)} memories ({len(work.memories) - 4 * work.days} at the start), "
        f"{len(work.recalls)} recalls over {work.days} days, MEMORY.md capped at 40 lines"
    )
    print(
        "| index.rank | weights (importance, recency, recalls) | half-life | recalls answered by the index | "
        "answered right at all |"
    )
    print("|---|---|---|---:|---:|")
    for rank, hl, w in runs:
        t0 = time.perf_counter()
        res = simulate(work, rank, hl, w)
        ws = "-" if w is None else "/".join(f"{x:g}" for x in w)
        print(
            f"| {rank} | {ws} | {(hl or 'default') if rank == 'activity' else '-'} | {res['index_share']:.3f} | "
            f"{res['answered']:.3f} |  ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    indexrules.W_IMPORTANCE, indexrules.W_RECENCY, indexrules.W_ACCESS = shipped
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

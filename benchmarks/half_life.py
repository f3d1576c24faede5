"""recall.half_life on data: hit@1 of the bilingual dev split for several half-lives (and the
freshness weight at its default and raised), so the default is one the data does not argue with.

    python benchmarks/half_life.py

The bilingual memories carry realistic `updated` dates over the year before the fixed clock.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "bilingual"))

import run as bilingual  # noqa: E402

from memcli.core import Memory  # noqa: E402
from memcli.recall import recall  # noqa: E402


def main() -> None:
    root = HERE / "bilingual"
    queries = bilingual.load_queries(root, "dev")
    base = Memory(root)
    print("| recall.half_life | recall.freshness_weight | dev hit@1 | dev hit@3 | FP (should find nothing) |")
    print("|---|---:|---:|---:|---:|")
    for weight in (0.05, 0.2):
        for half in ("7d", "30d", "90d", "180d", "365d"):
            mem = Memory(
                root,
                config=base.config.replace(
                    values={**base.config.values, "recall.half_life": half, "recall.freshness_weight": weight}
                ),
            )
            rows = [(q, [h.id for h in recall(mem.store, q["q"], limit=5, now=bilingual.NOW).hits]) for q in queries]
            s = bilingual.score(rows)
            print(f"| {half} | {weight} | {s['hit@1']} | {s['hit@3']} | {s['FP']} |")


if __name__ == "__main__":
    main()

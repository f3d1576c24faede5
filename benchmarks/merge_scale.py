"""How the git merge drivers scale with long files, beside git's own `git merge-file`.

    .venv/bin/python benchmarks/merge_scale.py --body 10000 20000 40000 --index 10000 --runs 3

Cases, each for N lines:

- detail, edits: a body of N lines (paragraphs of words, blank lines between them, a few
  repeated lines such as code fences); each side edits one line (ours near the top, theirs
  near the bottom) and appends lines at the end; the summary and `updated` change on both;
- detail, both add: a short body to which each side adds N/2 lines of its own at the same
  place (memcli keeps both, git merge-file leaves one conflict);
- index, both add: a MEMORY.md to which each side adds N/2 hand-written lines at the same
  place, and an entry.

Times `merge_detail` / `merge_index` in this process (median of --runs) and `git merge-file`
on the same three files (the baseline: git's line merge in C, without memcli's frontmatter and
union rules).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memcli.usecases.merge import merge_detail, merge_index  # noqa: E402

WORDS = (
    "deploy release staging config cache index merge branch token server client query table "
    "schema backup restore migrate rollback monitor alert latency memory session scope"
).split()


def body(n: int, rng: random.Random) -> list[str]:
    lines: list[str] = []
    while len(lines) < n:
        kind = rng.random()
        if kind < 0.1:
            lines += ["```sh", f"make {rng.choice(WORDS)}", "```", ""]
        else:
            lines += [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))) + f" ({len(lines)})"
                for _ in range(rng.randint(2, 6))
            ] + [""]
    return lines[:n]


def detail(summary: str, updated: str, lines: list[str]) -> str:
    return (
        "---\nid: long-note\ntitle: Long note\nsummary: " + summary + "\ntags: [ops]\naliases: []\n"
        "type: note\nimportance: 0.5\npinned: false\ncreated: 2026-01-01T00:00:00Z\nupdated: "
        + updated
        + "\nexpires: null\nsource: null\n---\n"
        + "\n".join(lines)
        + "\n"
    )


def detail_case(n: int) -> tuple[str, str, str]:
    rng = random.Random(n)
    base = body(n, rng)
    ours, theirs = list(base), list(base)
    ours[n // 10] = "edited on ours: " + ours[n // 10]
    theirs[n * 9 // 10] = "edited on theirs: " + theirs[n * 9 // 10]
    ours += ["", "appended on ours"]
    theirs += ["", "appended on theirs", "and a second line"]
    return (
        detail("first", "2026-01-01T00:00:00Z", base),
        detail("ours", "2026-01-02T00:00:00Z", ours),
        detail("theirs", "2026-01-03T00:00:00Z", theirs),
    )


def both_add_case(n: int) -> tuple[str, str, str]:
    rng = random.Random(n + 2)
    base = body(20, rng)
    ours = base[:10] + [f"ours {i}: " + line for i, line in enumerate(body(n // 2, rng))] + base[10:]
    theirs = base[:10] + [f"theirs {i}: " + line for i, line in enumerate(body(n // 2, rng))] + base[10:]
    return (
        detail("first", "2026-01-01T00:00:00Z", base),
        detail("ours", "2026-01-02T00:00:00Z", ours),
        detail("theirs", "2026-01-03T00:00:00Z", theirs),
    )


def index_case(n: int) -> tuple[str, str, str]:
    rng = random.Random(n + 1)

    def hand(side, k):
        return [f"{side} note {i}: " + " ".join(rng.choice(WORDS) for _ in range(5)) for i in range(k)]

    def doc(lines, ids):
        entries = [f"- **Memory {i}**: summary {i} | #t | → memory/m{i}.md" for i in ids]
        return "# MEMORY\n\n" + "\n".join(entries) + "\n\n" + "\n".join(lines) + "\n"

    base = hand("base", 10)
    ours = base[:5] + hand("ours", n // 2) + base[5:]
    theirs = base[:5] + hand("theirs", n // 2) + base[5:]
    return doc(base, range(10)), doc(ours, [*range(10), 100]), doc(theirs, [*range(10), 200])


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def git_merge_file(texts: tuple[str, str, str], runs: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, text in zip(("base", "ours", "theirs"), texts):
            p = Path(d) / name
            p.write_text(text, encoding="utf-8")
            paths.append(str(p))
        cmd = ["git", "merge-file", "-p", paths[1], paths[0], paths[2]]
        return timed(lambda: subprocess.run(cmd, capture_output=True), runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--body", type=int, nargs="*", default=[10_000, 20_000, 40_000])
    ap.add_argument("--index", type=int, nargs="*", default=[10_000])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print("| case | lines | memcli driver (s) | git merge-file (s) | conflicts |")
    print("|---|---:|---:|---:|---:|")
    for n in args.body:
        for name, case, check in (
            ("detail, edits", detail_case, "edited on theirs"),
            ("detail, both add", both_add_case, f"theirs {n // 2 - 1}: "),
        ):
            texts = case(n)
            out = []
            t = timed(lambda: out.append(merge_detail(*texts, "long-note")), args.runs)
            text, conflicts = out[-1]
            assert check in text and "ours 0: " in text or "appended on ours" in text
            base = git_merge_file(texts, args.runs)
            print(f"| {name} | {n:,} | {t:.3f} | {base:.3f} | {conflicts} |", flush=True)
    for n in args.index:
        texts = index_case(n)
        out = []
        t = timed(lambda: out.append(merge_index(*texts)), args.runs)
        assert (
            "ours note 0:" in out[-1] and "theirs note 0:" in out[-1] and "m100.md" in out[-1] and "m200.md" in out[-1]
        )
        print(f"| index, both add | {n:,} | {t:.3f} | {git_merge_file(texts, args.runs):.3f} | 0 |", flush=True)


if __name__ == "__main__":
    main()

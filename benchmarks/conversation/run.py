"""Recall in conversation: the dialogue so far (or its last user turn) as the query, as an agent
hook sends it. Each split is a memory root with `conversations.yaml` (see benchmarks/conversation/README.md).

    python benchmarks/conversation/run.py                   # dev: every engine, both query modes
    python benchmarks/conversation/run.py --show misses     # which probes failed, and what came back
    python benchmarks/conversation/run.py --split fresh     # once, at the end
    python benchmarks/conversation/run.py --json

Figures per engine and query mode (`dialogue`: every turn up to and including the probe, one a
line; `last`: the probe's turn alone; `hook`, for `inject` only: the probe's turn, the turns before
it recorded in the session, as the hook sends it), over the probes a memory answers: any@1 and any@5 (the
memory among the first 1 / 5 hits). For the engines that inject (`inject`: what `context`, and so
the hook, puts into a prompt unasked): `answered`, the share of answerable probes it injects
anything for; `right`, the share of its injections (answerable probes and not) whose first memory is
the one expected; `FP`, the share of the probes no memory answers that get anything.

Engines: `memcli` (a question asked, as `benchmarks/bilingual/run.py` asks it: the default recall
decides whether anything comes back, the list scored is the best 5), `memcli@0` (`--threshold 0`,
the best 5 whatever they score), `inject` (`Memory.context`, the memories it recalls), `bm25-cjk`
(plain BM25 with CJK bigrams, no abstention).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))


def _load(path: Path, name: str):
    """A benchmark script as a module (each folder's script is called run.py)."""
    from importlib import util

    spec = util.spec_from_file_location(name, path)
    module = util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bilingual = _load(HERE.parent / "bilingual" / "run.py", "bilingual_run")

SPLITS = ("dev", "fresh")
FINAL = ("fresh",)
MODES = ("dialogue", "last", "hook")


def probes(root: Path) -> list[dict]:
    """Every probe of a split: its conversation, the dialogue so far, the last turn, what answers it."""
    import yaml

    data = yaml.safe_load((root / "conversations.yaml").read_text(encoding="utf-8"))
    out = []
    for conv in data["conversations"]:
        said: list[tuple[str, str]] = []
        for turn in conv["turns"]:
            (role, text), *_ = ((k, v) for k, v in turn.items() if k in ("user", "assistant"))
            said.append((role, str(text)))
            if "expect" in turn:
                if role != "user":
                    raise SystemExit(f"{conv['id']}: a probe must be a user turn")
                out.append(
                    {
                        "id": f"{conv['id']}-{len(said)}",
                        "dialogue": "\n".join(t for _, t in said),
                        "last": str(text),
                        "before": said[:-1],
                        "expect": turn["expect"],
                    }
                )
    return out


def hook(root: Path, probe: dict) -> list[str]:
    """What the hook injects for the probe's turn, the turns before it recorded in a session of
    their own (as the hook and the agent record them): `context` with the session. The turns are
    recorded into a copy of the root (a long session folds turns into the episode log)."""
    import shutil
    import tempfile

    from memcli.core import Memory

    with tempfile.TemporaryDirectory(prefix="memcli-hook-") as tmp:
        copy = Path(tmp) / "root"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memcli", "conversations.yaml", "sessions.yaml"))
        mem = Memory(copy)
        for role, text in probe["before"]:
            mem.session("bench").add(role, text, now=bilingual.NOW)
        with bilingual._semantic_extra(False):
            return list(mem.context(probe["last"], session="bench", now=bilingual.NOW)["recalled"])


def inject(root: Path, query: str) -> list[str]:
    """The memories `context` (the hook's block) recalls for ``query``."""
    with bilingual._semantic_extra(False):
        return list(bilingual._memory(root).context(query, now=bilingual.NOW)["recalled"])


ENGINES = {
    "memcli": bilingual.ENGINES["memcli"],
    "memcli@0": bilingual.memcli_at(0.0),
    "inject": inject,
    "bm25-cjk": bilingual.ENGINES["bm25-cjk"],
}
INJECTING = ("inject",)


def score(rows: list[tuple[dict, list]], injects: bool) -> dict:
    pos = [(p, got) for p, got in rows if p["expect"]]
    neg = [(p, got) for p, got in rows if not p["expect"]]
    out = {
        "n": len(pos),
        "any@1": round(sum(p["expect"] in got[:1] for p, got in pos) / max(len(pos), 1), 3),
        "any@5": round(sum(p["expect"] in got[:5] for p, got in pos) / max(len(pos), 1), 3),
    }
    if injects:
        given = [(p, got) for p, got in rows if got]
        out["answered"] = round(sum(bool(got) for _, got in pos) / max(len(pos), 1), 3)
        out["right"] = round(sum(got[0] == p["expect"] for p, got in given) / len(given), 3) if given else None
        out["FP"] = round(sum(bool(got) for _, got in neg) / max(len(neg), 1), 3)
    return out


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=SPLITS, default="dev")
    ap.add_argument("--engine", action="append", choices=list(ENGINES), help="repeatable (default: all)")
    ap.add_argument("--mode", action="append", choices=MODES, help="repeatable (default: both)")
    ap.add_argument("--show", choices=["misses", "all"], help="list per-probe results")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.split in FINAL:
        print(f"split {args.split}: the one-time final check; do not tune on what it shows.", file=sys.stderr)
    root = HERE / args.split
    found = probes(root)
    report: dict = {}
    for mode in args.mode or MODES:
        for name in args.engine or ENGINES:
            fn = ENGINES[name]
            if mode == "hook" and name not in INJECTING:
                continue
            rows = [(p, hook(root, p) if mode == "hook" else list(fn(root, p[mode]))) for p in found]
            report[f"{name} ({mode})"] = score(rows, name in INJECTING)
            for p, got in rows:
                right = (got[:1] == [p["expect"]]) if p["expect"] else not got
                if args.show == "all" or (args.show and not right):
                    print(f"  {name} {mode} {p['id']} {p['last']!r}: expect {p['expect']}, got {got[:5]}")
    answerable = sum(1 for p in found if p["expect"])
    if args.json:
        print(json.dumps({"split": args.split, "probes": len(found), "results": report}, ensure_ascii=False))
        return 0
    print(f"{args.split}: {len(found)} probes, {answerable} answerable, {len(found) - answerable} not")
    print("| engine (query) | n | any@1 | any@5 | answered | right | FP |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, f in report.items():
        extra = [f.get(k) for k in ("answered", "right", "FP")]
        cells = " | ".join("-" if x is None else f"{x:.3f}" for x in extra)
        print(f"| {label} | {f['n']} | {f['any@1']:.3f} | {f['any@5']:.3f} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Prompts that should inject nothing: how many get a memory anyway.

    python benchmarks/inject/run.py                 # dev
    python benchmarks/inject/run.py --split fresh   # once, at the end
    python benchmarks/inject/run.py --show          # the prompts that got something, and what

For each prompt of `prompts-SPLIT.yaml`, sent against its root (a folder under benchmarks/):
`inject`, the memories `context` (the hook's block) recalls; `strict`, `recall --strict`; `memcli`,
a question asked (`recall` without -k); `bm25-cjk`, plain BM25 with CJK bigrams (no abstention).
Each figure is the share of prompts that got anything: 0 is right.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

SPLITS = ("dev", "fresh")


def engines() -> dict:
    from importlib import util

    spec = util.spec_from_file_location("conversation_run", HERE.parent / "conversation" / "run.py")
    conversation = util.module_from_spec(spec)
    spec.loader.exec_module(conversation)
    bilingual = conversation.bilingual
    return {
        "inject": conversation.inject,
        "strict": bilingual.ENGINES["memcli-strict"],
        "memcli": bilingual.ENGINES["memcli"],
        "bm25-cjk": bilingual.ENGINES["bm25-cjk"],
    }


def main(argv: list | None = None) -> int:
    import yaml

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=SPLITS, default="dev")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args(argv)
    if args.split == "fresh":
        print("split fresh: the one-time final check; do not tune on what it shows.", file=sys.stderr)
    prompts = yaml.safe_load((HERE / f"prompts-{args.split}.yaml").read_text(encoding="utf-8"))["prompts"]
    print(f"{args.split}: {len(prompts)} prompts that should inject nothing")
    print("| engine | got something | share |")
    print("|---|---:|---:|")
    for name, fn in engines().items():
        bad = []
        for p in prompts:
            got = list(fn((HERE.parent / p["root"]).resolve(), p["prompt"]))
            if got:
                bad.append((p, got))
        print(f"| {name} | {len(bad)} | {len(bad) / len(prompts):.3f} |")
        if args.show:
            for p, got in bad:
                print(f"    {name} {p['root']} {p['prompt']!r}: {got[:3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Score the personal-data detector on a split of benchmarks/pii and on the ordinary notes.

    python benchmarks/pii/run.py --split dev
    python benchmarks/pii/run.py --split fresh
    python benchmarks/pii/run.py --split technical-dev      # ordinary numbers: every find is a false one
    python benchmarks/pii/run.py --split fresh2             # evasive formats, bare numbers said as phones

Detection: a labelled value counts as found when a find of the same kind covers it (kinds:
email, phone, cn-id, card, iban; street addresses are reported apart). False positives: the
share of clean lines (the split's, and tests/data/scan/ordinary_notes.txt, the secret scanner's
ordinary notes) with any find. Beside it, a baseline: one regex per kind with no check digit,
no Luhn, no mod 97 and no exclusions (what a quick scrubber does).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from memcli.safety import pii  # noqa: E402

REQUIRED = ("email", "phone", "cn-id", "card", "iban")

_NAIVE = [
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("cn-id", re.compile(r"\d{17}[\dXx]")),
    ("card", re.compile(r"\d(?:[ -]?\d){12,18}")),
    ("iban", re.compile(r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}")),
    ("phone", re.compile(r"(?:\+\d{1,3}[ -]?)?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{4}")),
]


def naive(text: str) -> list:
    out = []
    for kind, rx in _NAIVE:
        for m in rx.finditer(text):
            out.append(pii.Found(kind, m.start(), m.end(), 1, 1, ""))
    return out


def load(split: str) -> list:
    return [json.loads(x) for x in (HERE / f"{split}.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def ordinary() -> list:
    text = (ROOT / "tests" / "data" / "scan" / "ordinary_notes.txt").read_text(encoding="utf-8")
    return [n.strip("\n") for n in text.split("\n%%\n")]


def score(rows: list, notes: list, find) -> dict:
    per = Counter()
    hit = Counter()
    misses = []
    for r in rows:
        found = find(r["text"])
        for lab in r["pii"]:
            at = r["text"].index(lab["value"])  # the value as written (full-width, no-break spaces)
            end = at + len(lab["value"])
            if lab["kind"] == "address":  # the street and its number: the city after it may stay
                ok = any(f.kind == "address" and f.start < end and f.end > at for f in found)
            else:
                ok = any(f.kind == lab["kind"] and f.start <= at + 1 and f.end >= end - 1 for f in found)
            per[lab["kind"]] += 1
            hit[lab["kind"]] += ok
            if not ok:
                misses.append((lab["kind"], r["text"], [(f.kind, r["text"][f.start : f.end]) for f in found]))
    clean = [r["text"] for r in rows if not r["pii"]]
    fp_clean = [t for t in clean if find(t)]
    fp_notes = [(n, [(f.kind, n[f.start : f.end]) for f in find(n)]) for n in notes if find(n)]
    req = sum(per[k] for k in REQUIRED)
    return {
        "detected": sum(hit[k] for k in REQUIRED) / req if req else 0.0,
        "positives": req,
        "per_kind": {k: f"{hit[k]}/{per[k]}" for k in per},
        "fp_clean": len(fp_clean) / max(len(clean), 1),
        "clean": len(clean),
        "fp_notes": len(fp_notes) / len(notes),
        "notes": len(notes),
        "misses": misses,
        "fp_examples": fp_clean[:10] + [x[0] for x in fp_notes[:10]],
        "fp_notes_found": fp_notes,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev", choices=["dev", "fresh", "technical-dev", "technical-fresh", "fresh2"])
    ap.add_argument("--show", action="store_true", help="print the misses and the false positives")
    args = ap.parse_args()
    rows, notes = load(args.split), ordinary()
    print(
        f"split {args.split}: {sum(len(r['pii']) for r in rows)} labelled values, {sum(not r['pii'] for r in rows)} clean lines "
        f"({sum(r['lang'] == 'zh' for r in rows)} Chinese lines, {sum(r['lang'] == 'en' for r in rows)} English)"
    )
    print("| detector | detection (email, phone, cn-id, card, iban) | per kind | FP clean lines | FP ordinary notes |")
    print("|---|---:|---|---:|---:|")
    for name, find in (("memcli", pii.find), ("naive regexes", naive)):
        s = score(rows, notes, find)
        kinds = ", ".join(f"{k} {v}" for k, v in s["per_kind"].items())
        print(
            f"| {name} | {s['detected']:.3f} of {s['positives']} | {kinds} | {s['fp_clean']:.3f} of {s['clean']} "
            f"| {s['fp_notes']:.3f} of {s['notes']} |"
        )
        if args.show and name == "memcli":
            for m in s["misses"]:
                print("MISS", m)
            for n in s["fp_notes_found"]:
                print("FP", n)
            for t in s["fp_examples"][:10]:
                print("FPC", t)


if __name__ == "__main__":
    main()

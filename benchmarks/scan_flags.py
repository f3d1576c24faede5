"""What the secret and injection rules flag on text that holds neither, and find in text that does.

    .venv/bin/python benchmarks/scan_flags.py

- the 463 ordinary notes of the scanner's tests (tests/data/scan/ordinary_notes.txt, notes a
  developer keeps: commands, config keys, URLs, Chinese and English), and 50 fresh ones
  (ordinary_notes_fresh.txt: German, French, Spanish, Japanese, Russian, Chinese and English
  notes that mention instructions, ignoring, forgetting, passwords, assistants, written after the
  rules of issue 31 and scored once): how many each rule set flags, and which;
- the look-alike lines (tests/data/scan/injection_benign.txt: descriptions of attacks, negations,
  pointers to documents, ordinary text in other languages): how many the injection rules flag;
- the injection corpus (tests/data/scan/injection_positive.tsv): how many are found as their kind.
"""

from __future__ import annotations

import re
from pathlib import Path

from memcli.safety.scanner import find_injection, find_secrets

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "scan"


def lines(name: str) -> list:
    escape = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")
    out = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [escape.sub(lambda m: chr(int(m[1] or m[2], 16)), x) for x in out if x.strip() and not x.startswith("#")]


def main() -> None:
    for name in ("ordinary_notes.txt", "ordinary_notes_fresh.txt"):
        notes = [n.strip("\n") for n in (DATA / name).read_text(encoding="utf-8").split("\n%%\n")]
        for what, find in (("secret", find_secrets), ("injection", find_injection)):
            flagged = [(n, sorted({m.kind for m in find(n)})) for n in notes if find(n)]
            print(f"{name}: flagged by the {what} rules: {len(flagged)} of {len(notes)}")
            for note, kinds in flagged:
                print(f"  {', '.join(kinds)}: {note[:70]!r}")
    benign = lines("injection_benign.txt")
    flagged = [b for b in benign if find_injection(b)]
    print(f"look-alike lines flagged by the injection rules: {len(flagged)} of {len(benign)}")
    for line in flagged:
        print(f"  {line[:70]!r}")
    positives = [tuple(x.split("\t", 1)) for x in lines("injection_positive.tsv")]
    found = sum(kind in {m.kind for m in find_injection(text)} for kind, text in positives)
    print(f"injection corpus found as its kind: {found} of {len(positives)}")


if __name__ == "__main__":
    main()

"""What the secret and injection scanner costs: in this process, in a fresh one, and in `remember`.

    .venv/bin/python benchmarks/scan_speed.py --runs 15

Another tree of memcli (an older commit, exported with `git archive`), its scanner module named:
without site (-S), so that an editable install of this tree does not shadow it:

    SITE=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    PYTHONPATH=/tmp/old:$SITE .venv/bin/python -S benchmarks/scan_speed.py --module memcli.scan

Four figures, medians of --runs:

- parsing the rule files (memcli/safety/rules/*.json) with json, and the same data written as
  TOML with tomllib (Python 3.11+), the format memcli did not choose;

- scanning in this process (rules loaded and compiled by a first scan before timing): a 4 KB
  note and 1 MB of notes (tests/data/scan/ordinary_notes.txt, repeated), find_secrets and
  find_injection each;
- a fresh process that imports the scanner and scans the 4 KB note once (what a per-turn write
  pays), beside `python -c pass`;
- `memcli remember` in a fresh root, whole process, beside `python -c pass`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTES = HERE.parent / "tests" / "data" / "scan" / "ordinary_notes.txt"
PYTHON = [sys.executable, "-S"] if sys.flags.no_site else [sys.executable]  # subprocesses run as this one
MEMCLI = [*PYTHON, "-m", "memcli"]


# Inputs that make a careless pattern backtrack (tests/test_scan.py checks each is scanned and
# redacted right; this times them).
PATHOLOGICAL = [
    "a" * 1_000_000,
    "curl " * 100_000,
    "sk-" * 200_000,
    ":" * 500_000 + "@",
    "password=" * 100_000,
    "-----BEGIN " + "RSA PRIVATE KEY-----\n" + "A" * 64 * 10_000,
    "eyJ" + "a" * 100_000 + "." + "b" * 100_000,
    "<!--" * 100_000,
    "\u200b" * 100_000,
    "ignore all " * 50_000,
]


def text_of(size: int) -> str:
    notes = NOTES.read_text(encoding="utf-8").replace("\n%%\n", "\n\n")
    return (notes * (size // len(notes) + 1))[:size]


def in_process(module: str, text: str, runs: int) -> dict:
    scanner = importlib.import_module(module)
    scanner.find_secrets(text), scanner.find_injection(text)  # load and compile what this text needs
    out = {}
    for name in ("find_secrets", "find_injection"):
        fn = getattr(scanner, name)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            fn(text)
            times.append((time.perf_counter() - t) * 1000)
        out[name] = statistics.median(times)
    return out


def _toml(value) -> str:
    """The rule data as TOML (literal strings where they can be: patterns stay readable)."""
    import json

    def one(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return f"'{v}'" if "'" not in v and "\n" not in v else json.dumps(v, ensure_ascii=False)
        if isinstance(v, list):
            return "[" + ", ".join(map(one, v)) + "]"
        return "{" + ", ".join(f"{json.dumps(k)} = {one(x)}" for k, x in v.items()) + "}"

    out = [
        f"{json.dumps(k)} = {one(v)}"
        for k, v in value.items()
        if not isinstance(v, (dict, list)) or (isinstance(v, list) and v and not isinstance(v[0], dict))
    ]
    for k, v in value.items():
        if isinstance(v, dict):
            out += [f"[{k}]"] + [f"{json.dumps(kk)} = {one(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for rule in v:
                out += [f"[[{k}]]"] + [f"{json.dumps(kk)} = {one(vv)}" for kk, vv in rule.items()]
    return "\n".join(out) + "\n"


def parse_times(runs: int) -> str:
    import json

    rules = HERE.parent / "memcli" / "safety" / "rules"
    raw = [p.read_bytes() for p in sorted(rules.glob("*.json"))]

    def median_ms(fn):
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1000)
        return statistics.median(times)

    out = f"rule files ({sum(map(len, raw)):,} bytes): json {median_ms(lambda: [json.loads(r) for r in raw]):.3f} ms"
    try:
        import tomllib
    except ImportError:
        return out + "; tomllib: not on this Python"
    texts = [_toml(json.loads(r)) for r in raw]
    assert [tomllib.loads(t) for t in texts] == [json.loads(r) for r in raw]
    return out + f", tomllib {median_ms(lambda: [tomllib.loads(t) for t in texts]):.3f} ms"


def whole(cmd: list, runs: int, env=None, setup=None) -> float:
    """Median milliseconds of a whole process, run outside any tree of memcli (`python -c` puts the
    working directory first on the path), that must succeed."""
    times = []
    for i in range(runs + 1):
        if setup is not None:
            cmd = setup(i)
        t = time.perf_counter()
        subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=True, cwd=tempfile.gettempdir()
        )
        if i:  # the first run warms the file cache
            times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _once(scanner, text: str) -> float:
    start = time.perf_counter()
    scanner.find_secrets(text)
    scanner.find_injection(text)
    scanner.redact_secrets(text)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--module", default="memcli.safety.scanner", help="the scanner module to time")
    args = ap.parse_args()
    import compileall

    import memcli

    # as an installed wheel has them (pip compiles on install), whatever PYTHONDONTWRITEBYTECODE says
    compileall.compile_dir(os.path.dirname(memcli.__file__), quiet=1)
    print(
        f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}  python {sys.version.split()[0]}  "
        f"module {args.module} ({os.path.dirname(memcli.__file__)})  runs {args.runs}"
    )
    print(parse_times(args.runs * 10))
    small, large = text_of(4096), text_of(1_000_000)
    for label, text, runs in (("4 KB", small, args.runs * 10), ("1 MB", large, args.runs)):
        r = in_process(args.module, text, runs)
        print(
            f"in process, {label}: find_secrets {r['find_secrets']:.2f} ms, find_injection {r['find_injection']:.2f} ms"
        )
    scanner = importlib.import_module(args.module)
    slowest = max((statistics.median(_once(scanner, text) for _ in range(3)), i) for i, text in enumerate(PATHOLOGICAL))
    print(
        f"the slowest of {len(PATHOLOGICAL)} pathological inputs (#{slowest[1]}): {slowest[0]:.0f} ms to scan and redact"
    )
    with tempfile.TemporaryDirectory() as tmp:
        note = Path(tmp) / "note.txt"
        note.write_text(small, encoding="utf-8")
        code = (
            f"import pathlib; from {args.module} import find_secrets, find_injection; "
            f"t = pathlib.Path({str(note)!r}).read_text(); find_secrets(t); find_injection(t)"
        )
        base = whole([*PYTHON, "-c", "pass"], args.runs)
        scan = whole([*PYTHON, "-c", code], args.runs)
        print(
            f"fresh process, import + scan 4 KB: {scan:.1f} ms (python -c pass {base:.1f} ms, "
            f"difference {scan - base:.1f} ms)"
        )
        root = Path(tmp) / "root"
        subprocess.run([*MEMCLI, "init", str(root)], check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        env = {**os.environ, "MEMCLI_ROOT": str(root)}
        body = small[:1500]
        rem = whole(
            [*MEMCLI, "remember", "t"],
            args.runs,
            env=env,
            setup=lambda i: [*MEMCLI, "remember", f"benchmark note {i}", "a summary", "--body", body],
        )
        base = whole([*PYTHON, "-c", "pass"], args.runs)
        print(f"memcli remember (1.5 KB body): {rem:.1f} ms (python -c pass {base:.1f} ms)")


if __name__ == "__main__":
    main()

"""The semantic model's tokenizer: the ``sentencepiece`` package (what memcli uses) beside another
checkout's (``--baseline SRC``, say memcli's own pure-Python unigram segmentation before it), and
what that costs where it counts: whole cold `memcli recall` processes that embed their query.

    .venv-semantic/bin/python benchmarks/tokenizer_bench.py --baseline /tmp/memcli-before --runs 9

- tokenizer: fresh processes that have already imported numpy (what a process that embeds pays
  for the tokenizer): import and model load, medians of --runs; the ids each side gives on the
  test corpora and 3,000 random texts, compared, and the time to encode 500 of them;
- recall: ``python -m memcli --root R recall --json QUERY`` for a query only embeddings answer, on
  a generated root (--docs memories) with a warm embedding cache, each side its own copy of the
  root and its own unpacked model, rounds interleaved: in its own process, then with each side's
  `memcli serve` running (wall and CPU of the client; the server's work is in the wall time);
  ``python -c pass`` beside it.

SRC is a folder holding a ``memcli`` package (``git archive REV memcli | tar -x -C SRC``); each
side runs with its folder first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERY = "sourdough starter feeding schedule"  # words no generated memory holds
# A side's tokenizer as the model loads it: (import, load) milliseconds, then its encode function.
LOAD = """
import json, sys, time
import numpy
t0 = time.perf_counter()
from memcli.search import embed
if hasattr(embed, "Tokenizer"):  # memcli's own, from the unpacked model
    import marshal
    t1 = time.perf_counter()
    with open(embed.cache_dir() / "tokenizer.marshal", "rb") as f:
        tok = embed.Tokenizer(marshal.loads(f.read()))
else:
    import sentencepiece
    t1 = time.perf_counter()
    tok = sentencepiece.SentencePieceProcessor(model_file=str(embed._resources() / "sp.model"))
t2 = time.perf_counter()
encode = lambda t: tok.encode(t, add_bos=True, add_eos=True)
if sys.argv[1:] == ["ids"]:
    corpus = json.load(sys.stdin)
    t = time.perf_counter()
    for x in corpus[:500]:
        encode(x)
    print(json.dumps([(time.perf_counter() - t) * 1000, [encode(x) for x in corpus]]))
else:
    print(json.dumps([(t1 - t0) * 1000, (t2 - t1) * 1000]))
"""


def texts() -> list[str]:
    sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests")]
    from test_scan import data_lines, injection_positives, ordinary_notes

    out = ordinary_notes() + [t for _, t in injection_positives()] + data_lines("injection_benign.txt")
    rng = random.Random(3)
    codes = [*range(32, 127), *range(0x4E00, 0x4E80), 0x3000, 0xFF21, 0xFF41, 0x2160, 0xFB01, 0x200B, 0xA0]
    codes += [0x2002, 0x1F600, 0x301, 0xE9, 0xAC00, 0x3042, 0x30A2, 0x627, 0x915, 0xE01, 0x410, 0x3B1]
    alphabet = [chr(c) for c in codes + [0xD7A3, 0x2028, 0x85, 0x9, 0xA, 0xD]]
    out += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    return out + ["", " ", "  a  b  ", "ＡＢＣ１２３", "ﬁ", "Ⅸ", "①", "e\u0301", "한국어", "日本語のテキスト"]


def timed(cmd: list, env: dict) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    ms = (time.perf_counter() - t) * 1000
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return ms, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="a folder holding the other memcli package")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--docs", type=int, default=1000, help="memories of the root the recall runs on (0: none)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memcli-bench"))
    args = ap.parse_args()
    sides = {"this": HERE.parent, "other": args.baseline.resolve()}
    args.dir.mkdir(parents=True, exist_ok=True)
    os.chdir(args.dir)  # not the checkout: `python -m` and `-c` put the working folder first on the path
    for src in sides.values():  # compiled ahead, as an install is: each process would compile again otherwise
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "memcli")], check=True)
    env = {}
    for k, src in sides.items():  # each side its own unpacked model: their layouts may differ
        env[k] = {**os.environ, "PYTHONPATH": str(src), "XDG_CACHE_HOME": str(args.dir / f"model-cache-{k}")}
        env[k].pop("MEMCLI_ROOT", None)
        env[k]["MEMCLI_SERVE"] = "off"
        subprocess.run([sys.executable, "-c", "from memcli.search import embed; embed.load()"], env=env[k], check=True)
    print(f"load average {os.getloadavg()[0]:.1f} · Python {sys.version.split()[0]} · medians of {args.runs}")
    loads: dict = {k: [] for k in sides}
    for _ in range(args.runs):
        for k in sides:
            loads[k].append(json.loads(timed([sys.executable, "-c", LOAD], env[k])[1]))
    corpus = texts()
    ids = {}
    for k in sides:
        done = subprocess.run(
            [sys.executable, "-c", LOAD, "ids"],
            input=json.dumps(corpus),
            capture_output=True,
            text=True,
            env=env[k],
            check=True,
        )
        ids[k] = json.loads(done.stdout)
    same = sum(a == b for a, b in zip(ids["this"][1], ids["other"][1]))
    print("\n| tokenizer | import | load the model | 500 texts encoded | ids as the other side's |")
    print("|---|---:|---:|---:|---:|")
    for k, src in sides.items():
        imp, load = statistics.median(r[0] for r in loads[k]), statistics.median(r[1] for r in loads[k])
        print(f"| {k} ({src}) | {imp:.0f} ms | {load:.0f} ms | {ids[k][0]:.0f} ms | {same:,} of {len(corpus):,} |")
    if not args.docs:
        return
    sys.path.insert(0, str(HERE))
    from gen_store import generate

    roots = {}
    for k in sides:
        roots[k] = args.dir / f"semantic-{args.docs}-{k}"
        if not (roots[k] / "MEMORY.md").exists():
            shutil.rmtree(roots[k], ignore_errors=True)
            generate(roots[k], args.docs)
        timed([sys.executable, "-m", "memcli", "--root", str(roots[k]), "recall", "--json", QUERY], env[k])  # embeds
    recall = {k: [sys.executable, "-m", "memcli", "--root", str(roots[k]), "recall", "--json", QUERY] for k in sides}
    got: dict = {}
    for _ in range(args.runs):
        got.setdefault("python -c pass", []).append(cpu_timed([sys.executable, "-c", "pass"], env["this"]))
        for k in sides:
            got.setdefault(f"cold, {k}", []).append(cpu_timed(recall[k], env[k]))
    servers = {}
    from memcli.search import remote

    try:
        for k in sides:  # a server a side; a request is served once it answered a ping
            servers[k] = subprocess.Popen(recall[k][:5] + ["serve"], env=env[k], stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 120
            while remote.ask(roots[k], {"op": "ping"}) is None and time.monotonic() < deadline:
                time.sleep(0.1)
            served = {**env[k], "MEMCLI_SERVE": "manual"}
            cpu_timed(recall[k], served)  # the server loads the model for its first semantic request
        for _ in range(args.runs):
            for k in sides:
                got.setdefault(f"served, {k}", []).append(cpu_timed(recall[k], {**env[k], "MEMCLI_SERVE": "manual"}))
    finally:
        for proc in servers.values():
            proc.terminate()
            proc.wait(30)
    print(f"\n| {args.docs:,} memories, `recall --json` that embeds its query | median wall | min | median CPU |")
    print("|---|---:|---:|---:|")
    for name, rows in got.items():
        wall = [r[0] for r in rows]
        print(
            f"| {name} | {statistics.median(wall):.0f} ms | {min(wall):.0f} ms | {statistics.median(r[1] for r in rows):.0f} ms |"
        )
    print(f"\n{', '.join(f'{k}: {src}' for k, src in sides.items())}; load average {os.getloadavg()[0]:.1f} at the end")


def cpu_timed(cmd: list, env: dict) -> tuple[float, float]:
    """(wall, CPU) milliseconds of one whole process, which must say it embedded the query."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = p.stdout.read() if p.stdout else b""
    _, _, usage = os.wait4(p.pid, 0)
    ms = (time.perf_counter() - t) * 1000
    if cmd[-1] == QUERY:
        assert "embedding" in json.loads(out)["data"]["methods"], out[:500]
    return ms, (usage.ru_utime + usage.ru_stime) * 1000


if __name__ == "__main__":
    main()

"""Concurrent writers and readers on one memory root: is anything lost?

    python benchmarks/stress.py                       # the full counts, each worker a process
    python benchmarks/stress.py --cli                 # every single operation its own `python -m memcli`
    python benchmarks/stress.py --remember 4x20 --scope 4x20 --json

Workers are separate processes that all write to one root at once: `remember` (new memories),
`scope set` (distinct keys, plus one key every writer wants and one key a team shares),
`session add` (one shared session, folded into the episode log as it grows) and `update` (one
memory that every updater appends to and re-summarises). Readers run `recall`, `index check`,
`list`, `context`, `scope check` and `heartbeat` throughout. By default a worker runs its
operations through memcli's command-line entry point inside one process (a start-up costs
~150 ms); with --cli each operation is a fresh `python -m memcli` process.

Then it checks: every write that exited 0 is on disk (and only once), every file parses,
`index check` passes, the scope's collisions are exactly the refused writes on the one
contested key, and no reader printed a traceback. The report is printed as text or JSON
(--json); the exit code is 1 when anything was lost or broken.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TMP_PREFIX = ".memcli-tmp-"
SHARED_NOTE = "shared-note"

# exit codes a reader may give while writers run: 1 is "nothing found" or "findings remain"
READER_CODES = {
    "recall": {0, 1},
    "index check": {0, 1},
    "list": {0},
    "context": {0},
    "scope check": {0, 1},
    "should-recall": {0, 1},
    "heartbeat": {0, 1},
}


# ---------------------------------------------------------------- workers


def worker_ops(kind: str, proc: int, count: int) -> list[list[str]]:
    """The argv of each operation a writer of this kind runs, in order."""
    ops = []
    for i in range(count):
        if kind == "remember":
            ops.append(
                [
                    "remember",
                    f"Stress note {proc} {i}",
                    f"summary of note {proc}-{i}",
                    "-t",
                    f"w{proc}",
                    "--id",
                    f"w{proc}-{i}",
                    "--body",
                    f"body of {proc}-{i}\n\nend-w{proc}-{i}\n",
                ]
            )
        elif kind == "scope":
            ops.append(["scope", "set", f"k-{proc}-{i}", f"v-{proc}-{i}", "--agent", f"agent-{proc}"])
            if i % 10 == 0:
                ops.append(["scope", "set", "contested", f"c-{proc}-{i}", "--agent", f"agent-{proc}"])
                ops.append(["scope", "set", "team", f"t-{proc}-{i}", "--agent", "team"])
        elif kind == "session":
            ops.append(["session", "add", "user", f"turn {proc}-{i} of the stress session"])
        elif kind == "update":
            ops.append(["update", SHARED_NOTE, "--append", f"appended {proc}-{i}"])
            if i % 5 == 0:
                ops.append(["update", SHARED_NOTE, "--summary", f"summary {proc}-{i}"])
    return ops


READER_OPS = [
    ["recall", "stress note summary"],
    ["index", "check"],
    ["recall", "appended turn", "--deep"],
    ["list"],
    ["context", "stress note"],
    ["scope", "check"],
    ["should-recall", "like last time"],
]


def _run_inproc(argv: list[str]) -> tuple[object, str]:
    """One command through memcli's entry point, in this process; (exit code, stderr)."""
    from memcli.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: object = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - a traceback is exactly what this harness looks for
            code = "traceback"
            err.write(traceback.format_exc())
    return code, err.getvalue()


def _run_process(argv: list[str]) -> tuple[object, str]:
    p = subprocess.run([sys.executable, "-m", "memcli", *argv], capture_output=True, text=True, timeout=300)
    return (p.returncode if "Traceback" not in p.stderr else "traceback"), p.stderr


def worker_main(args) -> None:
    """Run one worker's operations and print one JSON line per operation."""
    run = _run_process if args.cli else _run_inproc
    base = ["--root", args.root]
    if args.kind == "reader":
        heartbeat = _has_heartbeat()
        ops = READER_OPS + ([["heartbeat"]] if heartbeat else [])
        i = 0
        while not os.path.exists(args.stop) or i < len(ops):
            argv = ops[i % len(ops)]
            t = time.perf_counter()
            code, err = run(base + argv)
            _emit(argv, code, err, t)
            i += 1
        return
    for argv in worker_ops(args.kind, args.proc, args.count):
        t = time.perf_counter()
        code, err = run(base + argv)
        _emit(argv, code, err, t)


def _emit(argv, code, err, t) -> None:
    first = err.strip().splitlines()[0] if err.strip() else ""
    rec = {
        "argv": argv,
        "code": code,
        "ms": round((time.perf_counter() - t) * 1000, 1),
        "err": err if code == "traceback" else first,
    }
    sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _has_heartbeat() -> bool:
    try:
        from memcli.cli.typer_app import command

        return "heartbeat" in command().list_commands(None)
    except Exception:  # noqa: BLE001
        return False


# ---------------------------------------------------------------- the run


@dataclass
class Report:
    writers: dict = field(default_factory=dict)  # kind -> {attempted, ok, refused, failed, lost}
    readers: dict = field(default_factory=dict)  # command -> {runs, codes}
    problems: list = field(default_factory=list)
    tracebacks: list = field(default_factory=list)
    seconds: float = 0.0
    files: int = 0
    lock_waits_ms: dict = field(default_factory=dict)

    @property
    def lost(self) -> int:
        return sum(w["lost"] for w in self.writers.values())

    @property
    def ok(self) -> bool:
        return not self.problems and not self.tracebacks and self.lost == 0

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "lost": self.lost,
            "writers": self.writers,
            "readers": self.readers,
            "problems": self.problems[:50],
            "tracebacks": self.tracebacks[:5],
            "seconds": round(self.seconds, 1),
            "files": self.files,
            "lock_waits_ms": self.lock_waits_ms,
        }


def prepare(root: Path, max_lines: int | None = None, lock_timeout: str = "60s") -> None:
    """A fresh root with the memory every updater works on."""
    from memcli.core import Memory
    from memcli.usecases.init import init_root

    init_root(root)
    with open(root / "memcli.yaml", "a", encoding="utf-8") as f:
        f.write(f"\nlock_timeout: {lock_timeout}\n")
        if max_lines:
            f.write(f"index.max_lines: {max_lines}\n")
    Memory(root).remember("Shared note", "the first summary", id=SHARED_NOTE, pinned=True, body="Start.\n")


def run(
    root: Path,
    *,
    remember=(16, 50),
    scope=(8, 100),
    session=(4, 50),
    update=(4, 25),
    readers=2,
    cli=False,
    max_lines=None,
    lock_timeout="60s",
    timeout=1800,
) -> Report:
    """Start every worker at once, wait for the writers, stop the readers, verify the root."""
    root = Path(root)
    prepare(root, max_lines, lock_timeout)
    stop = root.parent / f"{root.name}.stop"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")} | {"MEMCLI_SERVE": "off"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    plan = [("remember", *remember), ("scope", *scope), ("session", *session), ("update", *update)]
    t0 = time.perf_counter()
    procs = []
    for kind, n, count in plan:
        for p in range(n):
            procs.append((kind, p, _spawn(kind, p, count, root, stop, cli, env)))
    reader_procs = [_spawn("reader", p, 0, root, stop, cli, env) for p in range(readers)]
    results: dict = {"remember": [], "scope": [], "session": [], "update": []}
    deadline = time.monotonic() + timeout
    for kind, p, proc in procs:
        out, err = proc.communicate(timeout=max(1, deadline - time.monotonic()))
        results[kind] += _parse(out, err, proc.returncode, f"{kind} worker {p}")
    stop.touch()
    reads = []
    for proc in reader_procs:
        out, err = proc.communicate(timeout=max(1, deadline - time.monotonic()))
        reads += _parse(out, err, proc.returncode, "reader")
    seconds = time.perf_counter() - t0
    report = verify(root, results)
    report.seconds = seconds
    _readers(report, reads)
    stop.unlink()
    return report


def _spawn(kind, proc, count, root, stop, cli, env):
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        kind,
        "--proc",
        str(proc),
        "--count",
        str(count),
        "--root",
        str(root),
        "--stop",
        str(stop),
    ] + (["--cli"] if cli else [])
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _parse(out: str, err: str, returncode: int, who: str) -> list[dict]:
    recs = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    if returncode != 0:
        recs.append({"argv": [who], "code": "traceback", "err": err[-3000:]})
    return recs


# ---------------------------------------------------------------- verification


def verify(root: Path, results: dict) -> Report:
    from memcli.store import details as dfile
    from memcli.store.index import IndexDoc

    rep = Report()
    for kind, recs in results.items():
        rep.writers[kind] = {
            "attempted": len(recs),
            "ok": sum(r["code"] == 0 for r in recs),
            "refused": sum(r["code"] == 4 for r in recs),
            "failed": sum(r["code"] not in (0, 4) for r in recs),
            "lost": 0,
        }
        rep.tracebacks += [r["err"] for r in recs if r["code"] == "traceback"]
        rep.problems += [
            f"{kind}: {' '.join(r['argv'][:3])} exited {r['code']}: {r['err']}" for r in recs if r["code"] not in (0, 4)
        ]
        times = sorted(r.get("ms", 0) for r in recs)
        if times:
            rep.lock_waits_ms[kind] = {"median": times[len(times) // 2], "max": times[-1]}

    # every file parses; no temp file is left behind
    details = {}
    for p in sorted((root / "memory").glob("*.md")):
        try:
            details[p.stem] = dfile.parse(p.read_text(encoding="utf-8"), p.stem)
        except Exception as e:  # noqa: BLE001
            rep.problems.append(f"{p.name} does not parse: {e}")
    rep.files = len(details)
    index = IndexDoc.parse((root / "MEMORY.md").read_text(encoding="utf-8"))
    listed = {e.id for e in index.entries}
    state = {}
    for sub in ("scopes", "sessions"):
        for p in (root / ".memcli" / sub).glob("*.json"):
            try:
                state[f"{sub}/{p.name}"] = json.loads(p.read_text(encoding="utf-8"))
            except ValueError as e:
                rep.problems.append(f".memcli/{sub}/{p.name} does not parse: {e}")
    temps = [str(p.relative_to(root)) for p in root.rglob(f"{TMP_PREFIX}*")]
    if temps:
        rep.problems.append(f"temp files left behind: {temps[:5]}")

    # remember: every success is a file with its own body, and an index line when there is room
    full = _index_full(root, index)
    for r in results["remember"]:
        if r["code"] != 0:
            continue
        mid = r["argv"][r["argv"].index("--id") + 1]
        d = details.get(mid)
        if d is None or f"end-{mid}" not in d.body:
            rep.writers["remember"]["lost"] += 1
            rep.problems.append(f"remember {mid}: exited 0, not on disk")
        elif mid not in listed and not full:
            rep.writers["remember"]["lost"] += 1
            rep.problems.append(f"remember {mid}: exited 0, no index line although the index has room")

    # update: every append once in the body; every summary once, current or under ## History
    shared = details.get(SHARED_NOTE)
    for r in results["update"]:
        if r["code"] != 0 or shared is None:
            continue
        flag, text = r["argv"][2], r["argv"][3]
        if flag == "--append":
            found = shared.body.count(text + "\n")
        else:
            found = (shared.summary == text) + shared.body.count(f"summary was: {text}\n")
        if found != 1:
            rep.writers["update"]["lost"] += 1
            rep.problems.append(f"update {flag} {text!r}: exited 0, found {found} times")

    # session: every turn once, in the session or in the episode log
    session = state.get("sessions/default.json", {"turns": []})
    episodes = "".join(p.read_text(encoding="utf-8") for p in sorted((root / "memory" / "episodes").glob("*.md")))
    for r in results["session"]:
        if r["code"] != 0:
            continue
        text = r["argv"][3]
        found = sum(t["text"] == text for t in session["turns"]) + episodes.count(f": {text}\n")
        if found != 1:
            rep.writers["session"]["lost"] += 1
            rep.problems.append(f"session add {text!r}: exited 0, found {found} times")

    # scope: distinct keys exact; the contested key has one owner and a collision per refusal
    scope = state.get("scopes/default.json", {"keys": {}, "collisions": [], "log": []})
    keys = scope["keys"]
    owner = keys.get("contested", {}).get("agent")
    refused = 0
    for r in results["scope"]:
        key, value, agent = r["argv"][2], r["argv"][3], r["argv"][5]
        if r["code"] == 4:
            refused += 1
            if key != "contested" or agent == owner:
                rep.problems.append(f"scope set {key} by {agent}: refused, but it is not another agent's key")
            continue
        if r["code"] != 0:
            continue
        if key.startswith("k-") and (keys.get(key, {}).get("value") != value or keys[key].get("writes") != 1):
            rep.writers["scope"]["lost"] += 1
            rep.problems.append(f"scope set {key}: exited 0, not in the scope")
        if key == "contested" and agent != owner:
            rep.problems.append(f"scope set contested by {agent}: exited 0, but {owner} owns it")
    team_ok = sum(r["code"] == 0 for r in results["scope"] if r["argv"][2] == "team")
    if team_ok and keys.get("team", {}).get("writes") != team_ok:
        rep.writers["scope"]["lost"] += team_ok - keys.get("team", {}).get("writes", 0)
        rep.problems.append(f"scope key team: {team_ok} writes exited 0, {keys.get('team', {}).get('writes')} kept")
    collisions = scope.get("collisions", [])
    if len(collisions) != refused or any(c["key"] != "contested" or c["owner"] != owner for c in collisions):
        rep.problems.append(f"scope collisions: {len(collisions)} logged for {refused} refused writes")
    ok_sets = sum(r["code"] in (0, 4) for r in results["scope"])
    if len(scope.get("log", [])) != ok_sets:
        rep.problems.append(f"scope log: {len(scope.get('log', []))} entries for {ok_sets} writes")

    # the real command line agrees
    check = _cli(root, "index", "check")
    if check.returncode != 0:
        rep.problems.append(f"index check: exit {check.returncode}: {check.stdout.strip()[:500]}")
    sc = _cli(root, "scope", "check", "--json")
    data = json.loads(sc.stdout)["data"]
    if {c["key"] for c in data["collisions"]} - {"contested"} or len(data["collisions"]) != refused:
        rep.problems.append(f"scope check --json: {len(data['collisions'])} collisions, expected {refused}")
    return rep


def _index_full(root: Path, index) -> bool:
    from memcli.settings_guard import load_config

    return len(index.lines) >= int(load_config(root)["index.max_lines"]) - 1


def _cli(root: Path, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")} | {"MEMCLI_SERVE": "off"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "memcli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _readers(rep: Report, reads: list[dict]) -> None:
    for r in reads:
        name = " ".join(r["argv"][:2]) if r["argv"][0] in ("index", "scope") else r["argv"][0]
        entry = rep.readers.setdefault(name, {"runs": 0, "codes": {}})
        entry["runs"] += 1
        entry["codes"][str(r["code"])] = entry["codes"].get(str(r["code"]), 0) + 1
        if r["code"] == "traceback":
            rep.tracebacks.append(r["err"])
        elif r["code"] not in READER_CODES.get(name, {0, 1}):
            rep.problems.append(f"reader {' '.join(r['argv'])}: exit {r['code']}: {r['err']}")


# ---------------------------------------------------------------- command line


def _pair(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text)
    if not m:
        raise argparse.ArgumentTypeError("expected PROCESSESxOPERATIONS, such as 16x50")
    return int(m.group(1)), int(m.group(2))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--remember", type=_pair, default=(16, 50), help="writers x remembers each (16x50)")
    ap.add_argument("--scope", type=_pair, default=(8, 100), help="writers x distinct-key scope sets each (8x100)")
    ap.add_argument("--session", type=_pair, default=(4, 50), help="writers x session turns each (4x50)")
    ap.add_argument("--update", type=_pair, default=(4, 25), help="writers x appends to one memory each (4x25)")
    ap.add_argument("--readers", type=int, default=2, help="reader processes (2)")
    ap.add_argument("--cli", action="store_true", help="every operation a fresh `python -m memcli` process")
    ap.add_argument("--max-lines", type=int, default=None, help="index.max_lines (default: memcli's 40)")
    ap.add_argument(
        "--lock-timeout",
        default="60s",
        help="lock_timeout (60s; at memcli's default 10s a writer queued behind 30 others may give up)",
    )
    ap.add_argument("--root", help="where to build the root (default: a temp folder, removed after)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--proc", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--stop", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        sys.path.insert(0, str(REPO))
        args.kind = args.worker
        worker_main(args)
        return 0
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.root) if args.root else Path(tmp) / "mem"
        rep = run(
            root,
            remember=args.remember,
            scope=args.scope,
            session=args.session,
            update=args.update,
            readers=args.readers,
            cli=args.cli,
            max_lines=args.max_lines,
            lock_timeout=args.lock_timeout,
        )
    if args.json:
        print(json.dumps(rep.to_dict(), indent=1))
    else:
        print(
            f"{'ok' if rep.ok else 'FAILED'} in {rep.seconds:.1f}s ({'--cli' if args.cli else 'workers'}), "
            f"{rep.files} detail files"
        )
        for kind, w in rep.writers.items():
            print(
                f"  {kind:9} attempted {w['attempted']:5}  ok {w['ok']:5}  refused {w['refused']:4}  "
                f"failed {w['failed']:3}  lost {w['lost']}   ms median/max {rep.lock_waits_ms.get(kind)}"
            )
        for name, r in sorted(rep.readers.items()):
            print(f"  reader {name:14} runs {r['runs']:4}  exit codes {r['codes']}")
        for p in rep.problems[:20]:
            print("  problem:", p)
        for t in rep.tracebacks[:2]:
            print(t)
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main())

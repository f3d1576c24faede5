"""What reflection costs the per-turn path: `memcli session add` when the turn folds, with
reflect.on_fold off and on (the fold then starts `memcli reflect --background` and returns).

    python benchmarks/reflect_bench.py [--runs 15]

Whole processes of `python -m memcli session add` (the CLI as an agent calls it), interleaved
off / on, each after the previous background reflection ended; `python -c pass` beside them as
the baseline of the same run. Then the same in process (Memory.session().add), where the spawn is
the whole difference. Medians; prints the machine's load average.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def idle(root: Path, deadline: float = 30.0) -> None:
    """Wait until no background reflection holds the root's run lock."""
    path = root / ".memcli" / "reflect.run"
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if not path.exists():
            return
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return
        except OSError:
            time.sleep(0.02)
        finally:
            os.close(fd)


def make_root(folder: Path, on: bool) -> Path:
    from memcli.usecases.init import init_root

    init_root(folder)
    (folder / "memcli.yaml").write_text(
        f"session:\n  max_rounds: 1\nreflect:\n  on_fold: {'true' if on else 'false'}\n"
    )
    return folder


def timed(cmd: list, env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")} | {"MEMCLI_SERVE": "off"}
    with tempfile.TemporaryDirectory(prefix="memcli-fold-") as tmp:
        roots = {"off": make_root(Path(tmp) / "off", False), "on": make_root(Path(tmp) / "on", True)}
        times: dict = {"python -c pass": [], "session add, fold, on_fold off": [], "session add, fold, on_fold on": []}
        text = "We decided to deploy on Fridays from now on, after the release notes are out."
        for root in roots.values():  # warm-up: the first fold creates the episode file
            for role in ("user", "assistant", "user"):
                subprocess.run(
                    [sys.executable, "-m", "memcli", "--root", str(root), "session", "add", role, text],
                    env=env,
                    check=True,
                    capture_output=True,
                )
            idle(root)
        for i in range(args.runs):
            times["python -c pass"].append(timed([sys.executable, "-c", "pass"], env))
            for name in ("off", "on"):
                root = roots[name]
                for role in ("assistant", "user"):  # the user turn folds the previous round
                    ms = timed(
                        [sys.executable, "-m", "memcli", "--root", str(root), "session", "add", role, f"{text} ({i})"],
                        env,
                    )
                    if role == "user":
                        times[f"session add, fold, on_fold {name}"].append(ms)
                    idle(root)
        from memcli.core import Memory

        inproc: dict = {"off": [], "on": []}
        mems = {k: Memory(v) for k, v in roots.items()}
        for i in range(args.runs):
            for name in ("off", "on"):
                s = mems[name].session("default")
                s.add("assistant", f"{text} [{i}]")
                t0 = time.perf_counter()
                res = s.add("user", f"{text} [{i}]")
                inproc[name].append((time.perf_counter() - t0) * 1000)
                assert res["folded"], res
                idle(roots[name])
        proposals = len(list((roots["on"] / "memory" / "inbox").glob("*.md")))
    print(
        f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
        f"{args.runs} runs each, medians"
    )
    for name, xs in times.items():
        print(f"  {name:34} {statistics.median(xs):7.1f} ms  (min {min(xs):.1f}, max {max(xs):.1f})")
    for name, xs in inproc.items():
        print(
            f"  in process, fold, on_fold {name:3}      {statistics.median(xs):7.2f} ms  (min {min(xs):.2f}, max {max(xs):.2f})"
        )
    off, on = (
        statistics.median(times["session add, fold, on_fold off"]),
        statistics.median(times["session add, fold, on_fold on"]),
    )
    print(
        f"  on_fold adds {on - off:+.1f} ms to the whole process, "
        f"{statistics.median(inproc['on']) - statistics.median(inproc['off']):+.2f} ms in process; "
        f"the background reflections left {proposals} proposal(s) in the inbox"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

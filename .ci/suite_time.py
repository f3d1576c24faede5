"""Run the README's test command, say how long it took, and fail when README's figure is stale.

    python3 .ci/suite_time.py .venv/bin/python -m pytest     # what .ci/run does
    python3 .ci/suite_time.py --stated                       # the CPU-seconds README states

README's Quick start states the test command's wall time and CPU time as measured on a 2-core
machine. The wall time moves with the machine's load; the CPU time of the command and every process
it waited for (pytest, its workers, the memcli processes the tests start) moves much less. This
prints both, with the load average, and exits 1 when the CPU time passes twice what README states:
then measure it again (`/usr/bin/time -v .venv/bin/python -m pytest`) and correct README.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
SLACK = 2.0  # how far past README's figure the CPU time may go before it counts as stale


def stated(text: str | None = None) -> float:
    """The CPU-seconds README's Quick start states for the test command."""
    text = README.read_text(encoding="utf-8") if text is None else text
    lines, fenced, quick = text.split("\n## Quick start\n", 1)[1].split("\n"), False, []
    for line in lines:  # up to the next heading, an example output's `## ` lines aside
        fenced = not fenced if line.startswith("```") else fenced
        if not fenced and line.startswith("## "):
            break
        quick.append(line)
    found = re.findall(r"([\d,]+) CPU-seconds", "\n".join(quick))
    if len(found) != 1:
        raise SystemExit("README's Quick start must state the test command's time once, as 'N CPU-seconds'")
    return float(found[0].replace(",", ""))


def main(argv: list[str]) -> int:
    if argv == ["--stated"]:
        print(f"{stated():g}")
        return 0
    budget = stated()
    load = os.getloadavg()[0]
    start = time.monotonic()
    code = subprocess.call(argv)
    wall = time.monotonic() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = used.ru_utime + used.ru_stime
    print(
        f"the README's test command: {wall:.0f} s wall, {cpu:.0f} CPU-seconds (load average {load:.1f} at the "
        f"start, {os.getloadavg()[0]:.1f} at the end); README states {budget:g} CPU-seconds"
    )
    if code:
        return code
    if cpu > SLACK * budget:
        print(
            f"the test command took more than {SLACK:g} times the CPU time README's Quick start states: "
            "measure it again and correct README",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Start-up is a feature: the hot commands load none of the heavy modules they do not need.

Timings are measured by benchmarks/bench.py; here we pin what gets imported, which is stable.
"""

import json
import subprocess
import sys

import pytest

from tests.conftest import run_memcli

HEAVY = ("typer", "click", "rich", "yaml", "rapidfuzz", "watchdog", "sqlite3")

PROBE = """
import json, sys
from memcli.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)
"""


def loaded(*args) -> set:
    r = subprocess.run([sys.executable, "-c", PROBE, *map(str, args)], capture_output=True, text=True, timeout=60)
    return set(json.loads(r.stderr.strip().splitlines()[-1]))


def test_version_loads_nothing_heavy():
    mods = loaded("--version")
    assert not mods & set(HEAVY), mods & set(HEAVY)
    assert "memcli.core" not in mods


def test_recall_hitting_the_index_needs_no_framework(example_root):
    run_memcli("--root", example_root, "recall", "charset")  # fills the indexed-memory cache
    mods = loaded("--root", example_root, "recall", "charset")
    assert not mods & {"typer", "click", "rich", "yaml", "rapidfuzz", "watchdog", "sqlite3"}, mods


def test_should_recall_needs_no_framework(example_root):
    run_memcli("--root", example_root, "should-recall", "hello")
    mods = loaded("--root", example_root, "should-recall", "上次那个方案")
    assert not mods & {"typer", "click", "rich", "yaml", "rapidfuzz", "watchdog", "sqlite3"}, mods


def test_details_recall_loads_sqlite_but_no_framework(example_root):
    run_memcli("--root", example_root, "recall", "alembic", "--layer", "details")
    mods = loaded("--root", example_root, "recall", "alembic", "--layer", "details")
    assert "sqlite3" in mods
    assert not mods & {"typer", "click", "rich", "watchdog"}, mods


def test_typos_load_rapidfuzz_only_when_needed(example_root):
    run_memcli("--root", example_root, "recall", "charset")
    assert "rapidfuzz" in loaded("--root", example_root, "recall", "chrset")


@pytest.mark.parametrize("args", [["recall", "--help"], ["recall", "x", "--bogus"], ["should-recall"]])
def test_unusual_arguments_go_to_typer(example_root, args):
    r = run_memcli("--root", example_root, *args)
    assert ("Usage" in r.stdout + r.stderr) and r.returncode in (0, 2)


def test_fast_path_and_typer_agree(example_root):
    from typer.testing import CliRunner

    from memcli.cli.app import app

    fast = run_memcli("--root", example_root, "recall", "charset", "--json")
    slow = CliRunner().invoke(app, ["--root", str(example_root), "recall", "charset", "--json"])
    a, b = json.loads(fast.stdout), json.loads(slow.stdout)
    for env in (a, b):
        for t in env["data"]["trace"]:
            t["ms"] = 0
    assert a == b and fast.returncode == slow.exit_code == 0

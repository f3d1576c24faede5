"""Three clones of one bare origin, random operations and racing syncs through the real CLI
(the short run; `python benchmarks/git_stress.py` runs 100 operations per clone)."""

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def _stress():
    spec = importlib.util.spec_from_file_location("memcli_git_stress", REPO / "benchmarks" / "git_stress.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_three_clones_converge_and_lose_nothing(tmp_path):
    res = _stress().run(ops=10, seed=11, clones=3, workdir=tmp_path)
    assert res["failures"] == []
    assert res["ok"], res["checks"]
    assert res["merge_commits"] >= 1  # the syncs really did merge concurrent work
    assert res["memories"] > 4
    assert res["checks"]["outcome_counts_summed"] and res["outcomes"] >= 2

"""memcli and its suite on any calendar day: the example `init --example` writes stays live
whenever it is made, and the README's quick start works on a past and a future day.

The whole suite is swept the same way by hand (CONTRIBUTING.md gives the command)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from memcli.dates import expired
from memcli.store.templates import example_files
from memcli.usecases.init import init_root


def _expires(root):
    text = (root / "memory/release-2026-12.md").read_text(encoding="utf-8")
    return next(ln.split(": ", 1)[1] for ln in text.splitlines() if ln.startswith("expires: "))


@pytest.mark.parametrize("day", ["2025-02-01", "2026-12-03", "2027-03-31", "2027-04-01", "2031-07-15", "2099-12-31"])
def test_24_calendar_the_example_is_live_on_the_day_it_is_made(tmp_path, day):
    root = tmp_path / "ex"
    init_root(root, example=True, now=f"{day}T23:59:30Z")
    until = _expires(root)
    assert not expired(until, day), (day, until)
    if day <= "2027-03-31":
        assert until == "2027-03-31"  # the example as written, while it still holds
    else:
        assert until > day  # given as long again as it was, from that day


def test_24_calendar_only_an_expiry_that_passed_and_the_updates_move():
    """The updates move on with the day (a recall ranks the example alike on any day); an expiry
    only once it passed; nothing else."""

    def kept(text):
        return [ln for ln in text.splitlines() if not ln.startswith(("updated: ", "expires: "))]

    later, sooner = example_files("2031-07-15T00:00:00Z"), example_files("2026-12-01T00:00:00Z")
    assert all(kept(t) == kept(same) for (_, t), (_, same) in zip(later, sooner))
    expiring = [
        t
        for (_, t), (_, same) in zip(later, sooner)
        if "expires: " in t and _line(t, "expires") != _line(same, "expires")
    ]
    assert len(expiring) == 1 and "id: release-2026-12" in expiring[0]
    newest = max(_line(t, "updated") for _, t in later)
    assert newest == "2031-07-15T00:00:00Z" and max(_line(t, "updated") for _, t in sooner) == "2026-12-01T00:00:00Z"


def _line(text, key):
    return next(ln.split(": ", 1)[1] for ln in text.splitlines() if ln.startswith(f"{key}: "))


FAKETIME = shutil.which("faketime")


@pytest.mark.skipif(not FAKETIME, reason="needs faketime (apt-get install faketime)")
@pytest.mark.parametrize("day", ["2025-02-01 10:00:00", "2031-07-15 23:59:30"])
def test_24_calendar_the_quick_start_works_on_a_past_and_a_future_day(tmp_path, day):
    """`init --example`, then the README's recall of the release freeze, on another day."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_") or k == "MEMCLI_SERVE"}

    def mc(*args):
        return subprocess.run(
            [FAKETIME, "-f", f"@{day}", sys.executable, "-m", "memcli", *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )

    root = tmp_path / "notes"
    assert mc("init", root, "--example").returncode == 0
    res = mc("--root", root, "recall", "when is the December release freeze?", "--json")
    assert res.returncode == 0, res.stderr
    hits = json.loads(res.stdout)["data"]["hits"]
    assert hits and hits[0]["id"] == "release-2026-12"
    res = mc("--root", root, "heartbeat", "--check", "--json")
    found = json.loads(res.stdout)["data"]["findings"]
    assert not [f for f in found if f["severity"] in ("error", "warning")], found

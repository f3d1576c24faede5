"""Procedures that keep score: outcome counters and notes, their git merge, ranking, context, heartbeat."""

import json

import pytest

from conftest import Cli, invoke
from memcli.core import Memory
from memcli.usecases.merge import merge_detail
from memcli.store import outcomes

from conftest import shared_origin
from test_git import mc


def proc(mem, title="Deploy to staging", summary="make release, then ./deploy.sh staging", **kw):
    return mem.remember(title, summary, type="procedure", tags=["deploy"], **kw).id


def test_outcome_counts_and_a_dated_bounded_section(root):
    m = Memory(root)
    pid = proc(m)
    for i in range(14):
        m.outcome(pid, "failure" if i % 4 == 3 else "success", f"run {i}", now=f"2026-11-{i + 1:02d}T10:00:00Z")
    d = m.get(pid)
    assert (d.extra["uses"], d.extra["successes"], d.extra["last_outcome"]) == (14, 11, "2026-11-14")
    listed = outcomes.entries(d.body)
    assert len(listed) == outcomes.KEEP and listed[-1] == ("2026-11-14T10:00:00Z", "success", "run 13")
    assert "- 4 earlier outcomes: 3 successes, 1 failure" in d.body  # runs 0-3 folded: 3 worked, run 3 failed
    assert outcomes.record_line(d) == "worked 11 of 14 times, last failed 2026-11-12: run 11"
    assert d.updated == d.created  # an outcome is not an edit: MEMORY.md's order does not move


def test_outcome_keeps_the_frontmatter_layout_and_refuses_bad_input(root):
    m = Memory(root)
    pid = proc(m)
    path = root / "memory" / f"{pid}.md"
    path.write_text(path.read_text().replace("importance: 0.5", "importance: 0.5   # kept as written"))
    m.outcome(pid, "success")
    assert "importance: 0.5   # kept as written" in path.read_text()
    cli = Cli(root)
    assert cli("outcome", pid, "maybe").exit_code == 2
    assert cli("outcome", "no-such-id", "success").exit_code == 3
    assert cli("outcome", pid, "failure", "--note", "x\x1b[31m").exit_code == 2
    res = cli.json("outcome", pid, "failure", "--note", "lock timed out", code=0)
    assert res["data"]["record"] == f"worked 1 of 2 times, last failed {res['data']['last_outcome']}: lock timed out"
    assert m.get(pid).extra["uses"] == 2


def test_merge_adds_both_sides_increments_and_is_symmetric(root):
    m = Memory(root)
    pid = proc(m)
    m.outcome(pid, "success", now="2026-10-01T09:00:00Z")
    path = root / "memory" / f"{pid}.md"
    base = path.read_text()
    for i in range(3):
        m.outcome(pid, "success", f"a{i}", now=f"2026-11-0{i + 1}T09:00:00Z")
    ours = path.read_text()
    path.write_text(base)
    for i in range(12):  # theirs folds the base's outcome and some of its own
        m.outcome(pid, "failure", f"b{i}", now=f"2026-11-{i + 1:02d}T12:00:00Z")
    theirs = path.read_text()
    one, conflicts = merge_detail(base, ours, theirs, pid)
    two, _ = merge_detail(base, theirs, ours, pid)
    assert conflicts == 0 and one == two
    path.write_text(one)
    d = m.get(pid)
    assert (d.extra["uses"], d.extra["successes"]) == (1 + 3 + 12, 1 + 3)  # never one side's number
    listed = outcomes.entries(d.body)
    assert len(listed) == outcomes.KEEP and listed[-1][2] == "b11"
    assert "- 6 earlier outcomes: 4 successes, 2 failures" in d.body  # the base, a0-a2, b0, b1


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_two_clones_recording_outcomes_end_with_the_sum(tmp_path):
    """A bare origin, two clones, the real merge driver: counts are summed, never overwritten."""
    clone = shared_origin(
        tmp_path, mc, lambda seed: mc(seed, "remember", "Deploy to staging", "make release", "--type", "procedure")
    )
    a, b = clone("a"), clone("b")
    for i, result in enumerate(["success", "failure"]):
        Memory(a).outcome("deploy-to-staging", result, f"from a {i}", now=f"2026-11-0{i + 1}T08:00:00Z")
    for i, result in enumerate(["success", "success", "failure"]):
        Memory(b).outcome("deploy-to-staging", result, f"from b {i}", now=f"2026-11-0{i + 1}T09:00:00Z")
    mc(a, "sync")
    mc(b, "sync")
    mc(a, "sync")
    texts = [(r / "memory" / "deploy-to-staging.md").read_text() for r in (a, b)]
    assert texts[0] == texts[1]
    d = Memory(a).get("deploy-to-staging")
    assert (d.extra["uses"], d.extra["successes"]) == (5, 3)
    assert {e[2] for e in outcomes.entries(d.body)} == {"from a 0", "from a 1", "from b 0", "from b 1", "from b 2"}
    assert "<<<<<<<" not in texts[0]


def test_success_rate_orders_candidates_and_filters(root):
    m = Memory(root)
    good = proc(m, "Deploy service to staging with make", "run make deploy then check the service")
    bad = proc(m, "Deploy service to staging with script", "run the deploy script then check the service")
    m.remember("Deploy service notes", "staging deploy service history", type="note")
    for i in range(5):
        m.outcome(good, "success", now=f"2026-11-0{i + 1}T10:00:00Z")
        m.outcome(bad, "failure", "script hung", now=f"2026-11-0{i + 1}T11:00:00Z")
    hits = m.recall("deploy service to staging", limit=5, threshold=0, layer="details").hits
    ids = [h.id for h in hits]
    assert ids.index(good) < ids.index(bad)
    kept = m.recall("deploy service to staging", type="procedure", min_success=0.7, threshold=0).hits
    assert [h.id for h in kept] == [good]
    only = m.recall("deploy service to staging", type="procedure", threshold=0, limit=5).hits
    assert {h.id for h in only} == {good, bad}
    res = invoke(
        [
            "--root",
            root,
            "recall",
            "deploy service to staging",
            "--type",
            "procedure",
            "--min-success",
            "0.7",
            "--threshold",
            "0",
            "--json",
        ]
    )
    assert [h["id"] for h in json.loads(res.stdout)["data"]["hits"]] == [good]
    assert invoke(["--root", root, "recall", "x", "--min-success", "2"]).exit_code == 2


def test_a_details_hit_is_weighed_from_the_file_its_layer_read(root, monkeypatch):
    """The details layer parses a hit's file for its snippet; the procedures weigh that memory
    without reading the file again, and order and filter as before."""
    from memcli.store import details

    m = Memory(root)
    good = proc(m, "Deploy service to staging with make", "run make deploy then check the service")
    bad = proc(m, "Deploy service to staging with script", "run the deploy script then check the service")
    for i in range(5):
        m.outcome(good, "success", now=f"2026-11-0{i + 1}T10:00:00Z")
        m.outcome(bad, "failure", "script hung", now=f"2026-11-0{i + 1}T11:00:00Z")
    reads = []
    real = details.read
    monkeypatch.setattr(details, "read", lambda path, *a: reads.append(path.name) or real(path, *a))
    hits = m.recall("deploy service to staging", limit=5, threshold=0, layer="details").hits
    assert [h.id for h in hits] == [good, bad] and reads == []
    kept = m.recall("deploy service to staging", type="procedure", min_success=0.7, threshold=0, layer="details")
    assert [h.id for h in kept.hits] == [good] and reads == []


def test_weighing_changes_order_only_among_candidates():
    from memcli.recall.procedures import factor

    assert factor(None) == 1.0
    assert factor(outcomes.rate(1, 1)) < factor(outcomes.rate(9, 9))  # one use does not dominate
    assert factor(outcomes.rate(10, 9)) == pytest.approx(1 + 0.2 * (10 / 12 - 0.5))
    assert 0.9 <= factor(outcomes.rate(100, 0)) < 1 < factor(outcomes.rate(100, 100)) <= 1.1


def test_context_shows_the_record(root):
    m = Memory(root)
    pid = proc(m)
    for i, r in enumerate(["success"] * 4):
        m.outcome(pid, r, now=f"2026-11-0{i + 1}T10:00:00Z")
    m.outcome(pid, "failure", "charset not set on the replica", now="2026-11-03T12:00:00Z")
    text = m.context("deploy to staging", budget=800)["text"]
    assert "worked 4 of 5 times, last failed 2026-11-03: charset not set on the replica" in text
    assert "## Outcomes" not in text


def test_heartbeat_reports_a_procedure_that_keeps_failing(root):
    m = Memory(root)
    pid = proc(m)
    ok = proc(m, "Roll back a release", "helm rollback")
    for i in range(6):
        m.outcome(ok, "failure" if i == 2 else "success", now=f"2026-11-0{i + 1}T10:00:00Z")
    for i, (r, note) in enumerate(
        [("success", ""), ("failure", "disk full"), ("success", ""), ("failure", "lock timed out"), ("failure", "")]
    ):
        m.outcome(pid, r, note, now=f"2026-11-0{i + 1}T10:00:00Z")
    found = [f for f in m.audit().findings if f.code == "procedure-failing"]
    assert [f.path for f in found] == [f"memory/{pid}.md"]
    assert "failed 3 of its last 5 uses" in found[0].message and "disk full" in found[0].message
    assert "lock timed out" in found[0].message and found[0].line is not None


def test_text_appended_after_the_outcomes_is_kept(root):
    """The section owns only its outcome lines: `update --append` after it survives later outcomes
    and merges."""
    m = Memory(root)
    pid = proc(m)
    m.outcome(pid, "success", now="2026-11-01T10:00:00Z")
    path = root / "memory" / f"{pid}.md"
    base = path.read_text()
    m.update(pid, append="appended on a")
    m.outcome(pid, "failure", "a", now="2026-11-02T10:00:00Z")
    ours = path.read_text()
    path.write_text(base)
    m.update(pid, append="appended on b")
    m.outcome(pid, "success", "b", now="2026-11-03T10:00:00Z")
    theirs = path.read_text()
    assert "appended on b" in theirs
    merged, conflicts = merge_detail(base, ours, theirs, pid)
    assert conflicts == 0 and "appended on a" in merged and "appended on b" in merged
    path.write_text(merged)
    d = m.get(pid)
    assert d.extra["uses"] == 3 and [e[2] for e in outcomes.entries(d.body)] == ["", "a", "b"]
    assert "record" in m.outcome(pid, "success", now="2026-11-04T10:00:00Z")
    assert "appended on a" in path.read_text() and "appended on b" in path.read_text()

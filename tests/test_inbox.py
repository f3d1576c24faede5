"""The inbox: the proposal file format, accept / reject / edit, the write gate, heartbeat, recall --inbox."""

from datetime import datetime, timedelta, timezone
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcli.core import Memory
from memcli.store import inbox as store
from memcli.store.fs import check_id
from memcli.model import TYPES
from tests.conftest import examples

NOW = "2026-12-01T10:00:00Z"

# text a turn may hold: no control characters but tab and newline, no lone surrogates
_CHARS = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85") | st.sampled_from(
    "\n\t "
)
_TEXT = st.text(_CHARS, max_size=120)
_LINE = (
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=60)
    .map(lambda s: " ".join(s.split()))
    .filter(bool)
)
_TIME = st.datetimes().map(lambda d: d.replace(microsecond=0).isoformat() + "Z")


@st.composite
def proposals(draw):
    quotes = draw(
        st.lists(
            st.builds(
                store.Quote,
                st.sampled_from(["user", "assistant", "summary"]),
                _TIME,
                st.sampled_from(["memory/episodes/2026-12-01.md", "session chat-1"]),
                _TEXT,
            ),
            max_size=4,
        )
    )
    kind = draw(st.sampled_from(store.KINDS))
    return store.make(
        kind,
        draw(_LINE),
        summary=draw(st.one_of(st.just(""), _LINE)),
        type=draw(st.sampled_from(TYPES)),
        target="some-memory" if kind == "update" else None,
        engine=draw(st.sampled_from(["offline", "agent", "cli"])),
        confidence=draw(st.floats(0, 1)),
        created=draw(_TIME),
        tags=draw(st.lists(st.sampled_from(["deploy", "vpn", "部署"]), max_size=3)),
        aliases=draw(st.lists(_LINE, max_size=2)),
        text=draw(_TEXT),
        evidence=quotes,
    )


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(proposals(), st.sampled_from(["pending", "accepted", "rejected"]))
def test_a_proposal_file_round_trips(p, status):
    if status != "pending":
        p = p.replace(status=status, decided="2026-12-02T09:00:00Z", memory="deploy-needs-vpn")
    text = store.render(p)
    back = store.parse(text, p.id)
    assert back == p
    assert store.render(back) == text
    check_id(p.id)


def test_the_file_is_readable_markdown_with_the_evidence_quoted():
    p = store.make(
        "new",
        "Deploy needs the VPN",
        summary="connect the VPN first",
        type="lesson",
        created=NOW,
        text="Connect the VPN before ./deploy.sh.",
        evidence=[store.Quote("user", NOW, "memory/episodes/2026-12-01.md", "the deploy timed out\nagain")],
    )
    text = store.render(p)
    assert "kind: new" in text and "engine: offline" in text and "status: pending" in text
    assert "evidence: [{episode: memory/episodes/2026-12-01.md, time: '2026-12-01T10:00:00Z'}]" in text
    assert text.endswith(
        "Connect the VPN before ./deploy.sh.\n\n## Evidence\n\n> **user** (2026-12-01T10:00:00Z):\n"
        "> the deploy timed out\n> again\n"
    )
    assert p.id.startswith("p-20261201-deploy-needs-the-vpn-")
    # the same proposal made elsewhere (another clone) gets the same id
    assert (
        store.make(
            "new",
            "Deploy needs the VPN",
            summary="connect the VPN first",
            type="lesson",
            created="2026-12-01T11:00:00Z",
            evidence=p.evidence,
        ).id
        == p.id
    )


def test_a_proposal_id_is_dated_by_its_evidence_not_by_the_day_it_is_made():
    quote = store.Quote("user", "2026-03-04T10:00:00Z", "memory/episodes/2026-03-04.md", "the deploy timed out")
    ids = {
        store.make("new", "Deploy needs the VPN", created=day, evidence=[quote]).id
        for day in ("2026-03-04T11:00:00Z", "2026-12-01T09:00:00Z", "2031-07-15T00:00:00Z")
    }
    assert len(ids) == 1 and ids.pop().startswith("p-20260304-deploy-needs-the-vpn-")
    assert store.make("new", "No quote", created="2026-05-06T00:00:00Z").id.startswith("p-20260506-")


def _propose(m, title, **kw):
    kw.setdefault("created", NOW)
    kw.setdefault("evidence", [store.Quote("user", NOW, "memory/episodes/2026-12-01.md", title)])
    return m.inbox.propose([store.make(kw.pop("kind", "new"), title, **kw)])["proposed"][0]


def test_accept_writes_through_remember_and_archives_the_proposal(root, cli):
    m = Memory(root)
    pid = _propose(m, "Deploy needs the VPN", summary="connect the VPN first", type="lesson", text="Body text.")
    assert not (root / "MEMORY.md").read_text().count("Deploy needs the VPN")
    listed = cli.json("inbox", code=0)["data"]["proposals"]
    assert [x["id"] for x in listed] == [pid]
    res = cli.json("inbox", "accept", pid, code=0)["data"]["results"][0]
    assert res["action"] == "accepted" and res["memory"] == "deploy-needs-the-vpn"
    d = m.get("deploy-needs-the-vpn")
    assert d.summary == "connect the VPN first" and d.type == "lesson" and pid in d.source
    assert "Deploy needs the VPN" in (root / "MEMORY.md").read_text()
    assert not store.path(root, pid).exists()
    record = store.read(root, pid, archived=True)
    assert record.status == "accepted" and record.memory == "deploy-needs-the-vpn"
    again = cli("inbox", "accept", pid)
    assert again.exit_code == 0 and "already accepted" in again.stderr
    assert cli.json("inbox")["data"]["proposals"] == []


def test_an_update_keeps_history_and_a_colliding_new_one_becomes_an_update(root, cli):
    m = Memory(root)
    m.remember("Deploy needs the VPN", "connect the VPN", tags=["deploy"], now=NOW)
    up = _propose(
        m,
        "Deploy needs the VPN",
        kind="update",
        target="deploy-needs-the-vpn",
        summary="connect the VPN, then run ./deploy.sh staging",
        text="Also check the token.",
    )
    clash = _propose(m, "Deploy needs the VPN", summary="", text="Use the office VPN profile.", tags=["vpn"])
    cli.json("inbox", "accept", "--all", code=0)
    d = m.get("deploy-needs-the-vpn")
    assert d.summary == "connect the VPN, then run ./deploy.sh staging"
    assert "summary was: connect the VPN" in d.body and "## History" in d.body
    assert "Also check the token." in d.body and "Use the office VPN profile." in d.body
    assert set(d.tags) == {"deploy", "vpn"}
    assert len(m.list().details) == 1  # never a second memory, never an overwrite
    assert {store.read(root, x, archived=True).status for x in (up, clash)} == {"accepted"}


def test_reject_archives_and_accept_all_by_type(root, cli):
    m = Memory(root)
    a = _propose(m, "Prefers tabs", type="preference", summary="tabs over spaces")
    b = _propose(m, "Staging is slow", type="fact", summary="staging takes 5 minutes")
    c = _propose(m, "Small talk", type="note")
    assert cli("inbox", "reject", c).exit_code == 0
    assert store.read(root, c, archived=True).status == "rejected"
    res = cli.json("inbox", "accept", "--all", "--type", "preference", code=0)["data"]["results"]
    assert [x["id"] for x in res] == [a]
    assert [x["id"] for x in cli.json("inbox")["data"]["proposals"]] == [b]
    assert cli("inbox", "accept").exit_code == 2
    assert cli("inbox", "accept", "nope").exit_code == 3
    assert cli("inbox", "accept", "--all", "--type", "bogus").exit_code == 2
    assert Memory(root).get("prefers-tabs").summary == "tabs over spaces"


def test_inbox_edit_checks_the_text(root, cli, tmp_path, monkeypatch):
    m = Memory(root)
    pid = _propose(m, "Deploy needs the VPN", summary="connect the VPN first")
    script = tmp_path / "ed.py"
    script.write_text(
        "import sys;p=sys.argv[1];t=open(p).read();open(p,'w').write(t.replace('VPN first','VPN, then deploy'))"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    assert cli("inbox", "edit", pid).exit_code == 0
    assert store.read(root, pid).summary == "connect the VPN, then deploy"
    script.write_text(
        "import sys;p=sys.argv[1];t=open(p).read();open(p,'w').write(t.replace('kind: new','kind: bogus'))"
    )
    r = cli("inbox", "edit", pid)
    assert r.exit_code == 3 and "kind must be new or update" in r.stderr and "kept in" in r.stderr
    assert store.read(root, pid).kind == "new"


def test_inbox_edit_and_edit_choose_the_editor_alike(root, cli):
    """No $VISUAL or $EDITOR and no terminal for vi: both edits say so (exit 2) before a draft is made."""
    m = Memory(root)
    pid = _propose(m, "Deploy needs the VPN", summary="connect the VPN first")
    m.remember("Edit me", "a summary")
    for args in (("inbox", "edit", pid), ("edit", "edit-me")):
        r = cli(*args)
        assert r.exit_code == 2 and "neither is set (vi needs a terminal)" in r.stderr, r.stderr
        assert f"EDITOR=nano memcli {args[0]}" in r.stderr
    assert not list((root / ".memcli").rglob("*.md")), "no draft is left behind"
    assert store.read(root, pid).summary == "connect the VPN first"


def test_proposals_are_not_recalled_unless_asked(root, cli):
    m = Memory(root)
    _propose(m, "Kubernetes rollback procedure", summary="kubectl rollout undo deployment/web", type="procedure")
    assert cli("recall", "kubernetes rollback").exit_code == 1
    hits = cli.json("recall", "kubernetes rollback", "--inbox", code=0)["data"]["hits"]
    assert hits[0]["layer"] == "inbox" and hits[0]["path"].startswith("memory/inbox/")
    assert "Kubernetes" not in (root / "MEMORY.md").read_text()
    assert cli.json("heartbeat")["data"]["summary"]["not_indexed"] == 0


def test_heartbeat_reports_proposals_waiting_too_long(root, cli):
    m = Memory(root)
    month_ago = (datetime.now(timezone.utc) - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    _propose(m, "Old idea", created=month_ago)  # waiting for a month, whatever the day
    found = [f for f in cli.json("heartbeat")["data"]["findings"] if f["code"] == "inbox-waiting"]
    assert len(found) == 1 and "1 proposal(s)" in found[0]["message"]
    (root / "memcli.yaml").write_text("inbox:\n  max_age: 10000d\n")
    assert not [f for f in cli.json("heartbeat")["data"]["findings"] if f["code"] == "inbox-waiting"]
    (store.folder(root) / "p-broken.md").write_text("---\nkind: what\n---\nx\n")
    codes = [f["code"] for f in cli.json("heartbeat")["data"]["findings"]]
    assert "proposal-broken" in codes and "detail-not-indexed" not in codes


def test_the_write_gate_per_front_end(root, cli):
    (root / "memcli.yaml").write_text("write:\n  gate:\n    cli: inbox\n")
    r = cli("remember", "Use utf8mb4", "on the connection")
    assert r.exit_code == 0 and "proposed" in r.stderr
    pid = r.stdout.strip()
    assert pid.startswith("p-") and Memory(root).list().details == []
    assert store.read(root, pid).engine == "cli"
    cli("inbox", "accept", pid)
    assert Memory(root).get("use-utf8mb4").summary == "on the connection"
    r = cli.json("update", "use-utf8mb4", "-s", "utf8mb4 everywhere", code=0)
    assert r["data"]["action"] == "proposed" and Memory(root).get("use-utf8mb4").summary == "on the connection"
    # the Python API is not a gated front end; the other front ends follow their own key
    Memory(root).remember("Direct from the API", "x")
    (root / "memcli.yaml").write_text("write:\n  gate: inbox\n  gate.cli: direct\n")
    assert cli.json("remember", "Direct again", "y")["data"]["action"] == "remembered"
    from memcli.config import write_gate
    from memcli.settings_guard import load_config

    cfg = load_config(root)
    assert [write_gate(cfg, f) for f in ("cli", "mcp", "hook")] == ["direct", "inbox", "inbox"]
    (root / "memcli.yaml").write_text("write:\n  gate: maybe\n")
    assert cli("list").exit_code == 3


def test_auto_accept_by_type_above_a_confidence(root, cli):
    (root / "memcli.yaml").write_text("write:\n  gate: inbox\ninbox:\n  auto_accept: [preference]\n")
    cli("trust")  # auto-accepting loosens the gate: memcli.yaml needs trust for it
    r = cli.json("remember", "Prefers dark mode", "in every editor", "--type", "preference", code=0)
    assert r["data"]["action"] == "accepted" and Memory(root).get("prefers-dark-mode")
    r = cli.json("remember", "Staging host", "10.0.0.5", "--type", "fact", code=0)
    assert r["data"]["action"] == "proposed"
    m = Memory(root)
    low = _propose(m, "Likes short answers", type="preference", confidence=0.3)
    assert store.path(root, low).exists()


def test_unknown_ids_stop_before_anything_is_decided_and_conflicts_are_settled_first(root, cli):
    m = Memory(root)
    a = _propose(m, "Deploy needs the VPN", summary="connect the VPN first")
    r = cli("inbox", "accept", a, "p-nope")
    assert r.exit_code == 3 and "p-nope" in r.stderr and store.path(root, a).exists()
    path = store.path(root, a)
    path.write_text(
        path.read_text().replace(
            "summary: connect the VPN first",
            "<<<<<<< ours\nsummary: connect the VPN first\n=======\nsummary: x\n>>>>>>> theirs",
        )
    )
    r = cli("inbox", "accept", a)
    assert r.exit_code == 3 and "conflict markers" in r.stderr
    assert cli.json("inbox")["data"]["problems"]

"""The inbox through real git: two clones of one bare origin reflect, propose and accept at the same
time, sync, and end the same: nothing lost, no proposal applied twice."""

import pytest

from conftest import git
from memcli.core import Memory
from memcli.store.git import setup
from memcli.store import inbox as store

# A fixed day for every stamp the test gives, far from any day it runs on: what it checks never
# depends on the calendar (the episode log, proposal ids and decisions are dated by these stamps).
DAY = "2021-03-14T"


def talk(m, name, turns, at):
    for i, (role, text) in enumerate(turns):
        m.session(name).add(role, text, now=f"{DAY}{at}:{i:02d}Z")


LESSON_A = [
    ("user", "The release build failed again on the signing step."),
    ("assistant", "The root cause is the expired signing certificate in the CI keychain."),
    (
        "user",
        "Renewed the certificate and the build passed. Remember that the signing certificate "
        "expires every March and must be renewed before the release.",
    ),
    ("assistant", "Noted."),
]
LESSON_B = [
    ("user", "We decided to keep the staging database on Postgres 15 until the billing migration ends."),
    ("assistant", "Got it."),
]
CHATTER = [("user", "ok, next?"), ("assistant", "The weekly report."), ("user", "fine"), ("assistant", "Done?")] * 3


@pytest.fixture
def clones(tmp_path, git_env):
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = Memory.init(tmp_path / "seed")
    setup(seed.root, init=True)
    git(seed.root, "remote", "add", "origin", str(bare))
    seed.sync()
    out = []
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(bare), name)
        setup(tmp_path / name)
        out.append(Memory(tmp_path / name))
    return out


def test_setup_names_a_driver_for_the_inbox(clones):
    a, _ = clones
    attrs = git(a.root, "check-attr", "merge", "memory/inbox/p-1.md", "memory/inbox/archive/p-1.md").stdout
    assert attrs.count("merge: memcli-detail") == 2


@pytest.mark.slow  # two clones syncing through real git: a long row of processes
def test_two_clones_propose_and_accept_concurrently(clones):
    a, b = clones
    talk(a, "a1", LESSON_A + CHATTER, "09:00")
    assert a.sync()["pushed"]
    assert b.sync()["code"] == 0  # b has a's episode now
    talk(b, "b1", LESSON_B + CHATTER, "10:00")
    pa = a.reflect(now=f"{DAY}11:00:00Z")["proposed"]
    pb = b.reflect(now=f"{DAY}11:00:30Z")["proposed"]
    cert = [p for p in pa if "certificate" in store.read(a.root, p).text]
    pg = [p for p in pb if "Postgres 15" in store.read(b.root, p).text]
    assert len(cert) == 1 and len(pg) == 1
    assert cert[0] in pb  # the same proposal, made on both clones from the same episode, is one file
    # both accept the certificate lesson before either syncs
    assert a.inbox.accept(cert, now=f"{DAY}12:00:00Z")[0]["action"] == "accepted"
    assert b.inbox.accept(cert, now=f"{DAY}12:00:10Z")[0]["action"] == "accepted"
    for m in (a, b, a):
        res = m.sync()
        assert res["code"] == 0 and not res["conflicts"], res
    # the same files on both sides, nothing left with markers
    assert git(a.root, "rev-parse", "HEAD").stdout == git(b.root, "rev-parse", "HEAD").stdout
    assert git(a.root, "status", "--porcelain").stdout == git(b.root, "status", "--porcelain").stdout == ""
    for m in (a, b):
        memory_id = store.read(m.root, cert[0], archived=True).memory
        body = m.get(memory_id).body
        assert body.count("signing certificate expires every March") == 1  # applied once
        assert [p.id for p in m.inbox.list()[0]] == [p for p in pa + pb if p not in cert]
        assert not [f for f in m.audit().findings if f.code == "conflict-markers"]
    # b's Postgres decision reached a; a accepts it and syncs; b, which had it pending, learns it was taken
    assert a.inbox.accept(pg, now=f"{DAY}13:00:00Z")[0]["action"] == "accepted"
    a.sync()
    b.sync()
    again = b.inbox.accept(pg)[0]
    assert again["action"] == "already" and "already accepted" in again["message"]
    assert b.inbox.accept(cert)[0]["action"] == "already"
    assert len([d for d in b.list().details if "Postgres" in d.title + d.summary + d.body]) == 1
    # reflecting again on either clone proposes nothing that was decided
    for m in (a, b):
        again = m.reflect(all=True, dry_run=True)
        assert not {p["id"] for p in again["proposals"]} & set(cert + pg)
        assert {x["id"] for x in again["skipped"]} >= set(cert + pg)
        log = (m.root / "memory" / "episodes" / f"{DAY[:10]}.md").read_text()
        assert "signing certificate" in log and "Postgres 15" in log  # both clones' episodes kept

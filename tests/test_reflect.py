"""memcli reflect: the material and its watermark, the offline engine, the extractor command under the
trust rule, background reflection on a fold, and the seeds' loop end to end (CLI, Python API, MCP)."""

import json
import sys
import time

import pytest

from memcli.core import Memory
from memcli.store import inbox as store
from tests.conftest import Cli

NOW = "2026-12-01T10:00:00Z"

# Session 1 of the loop: a problem and its fix across several turns, Chinese and English mixed
LESSON = [
    ("user", "每晚的导入任务又挂了，报错 MySQL server has gone away。"),
    (
        "assistant",
        "I checked the server log: the root cause is max_allowed_packet. The import sends 40 MB "
        "batches and the server limit is 16 MB.",
    ),
    ("user", "把 max_allowed_packet 调到 64M 之后导入成功了。记住：大批量导入之前要先把 max_allowed_packet 调到 64M。"),
    (
        "assistant",
        "Noted: large MySQL imports need max_allowed_packet of at least 64M; I will check it before every bulk import.",
    ),
]
SMALL_TALK = [
    ("user", "thanks, what's next on the list?"),
    ("assistant", "The report for Friday."),
    ("user", "ok"),
    ("assistant", "Shall I draft it?"),
]
FILLER = [(r, f"{t} ({i})") for i in range(3) for r, t in SMALL_TALK]
# asked in a new session, in other words, in each language
ASK_EN = "what setting do large MySQL imports need?"
ASK_ZH = "大批量导入之前要调什么参数？"


def session_one(add):
    for role, text in LESSON + FILLER:
        add(role, text)


def test_reflect_reads_only_what_is_new(root, cli):
    m = Memory(root)
    s = m.session("a")
    for role, text in LESSON + FILLER:
        s.add(role, text, now=NOW)
    first = cli.json("reflect", code=0)["data"]
    assert first["engine"] == "offline" and first["turns"] == len(LESSON + FILLER) - 10
    assert first["proposed"] and (root / ".memcli" / "reflect.json").is_file()
    again = cli.json("reflect", code=0)["data"]
    assert again["items"] == 0 and again["proposed"] == []
    s.add("user", "From now on we always run the linter before pushing.", now="2026-12-01T11:00:00Z")
    for role, text in SMALL_TALK * 4:  # enough rounds after it for the rule to fold
        s.add(role, text, now="2026-12-01T11:00:00Z")
    later = cli.json("reflect", "--dry-run", code=0)["data"]
    assert 0 < later["turns"] <= 1 + len(SMALL_TALK) * 4
    assert any("linter" in p["summary"] for p in later["proposals"])
    everything = cli.json("reflect", "--all", "--dry-run", code=0)["data"]
    assert everything["turns"] > later["turns"]
    # a proposal already made is not made again
    assert all(p["id"] not in first["proposed"] for p in everything["proposals"])


def test_the_offline_engine_keeps_statements_and_drops_chatter():
    from memcli.usecases.reflect_engines.offline import propose

    turns = [
        ("user", "hi there!"),
        ("assistant", "Hello! How can I help?"),
        ("user", "We decided to use Postgres 16 for the billing service."),
        ("assistant", "OK, got it."),
        ("user", "what time is it?"),
        ("assistant", "It is noon."),
        ("user", "以后提交代码前一定要先跑 make lint，不要直接 push。"),
        ("assistant", "Wow, great!"),
        ("user", "lol"),
        ("assistant", "Anything else?"),
    ]
    feed = {
        "items": [
            {
                "ref": "e#1",
                "episode": "e",
                "heading": "session x",
                "turns": [{"n": i, "role": r, "text": t} for i, (r, t) in enumerate(turns)],
            }
        ]
    }
    out = propose(feed, budget=30)
    said = [p["summary"] for p in out]
    assert any("Postgres 16" in s for s in said) and any("make lint" in s for s in said)
    assert not any(s.startswith(("hi", "what time", "lol", "Anything")) for s in said)
    decided = next(p for p in out if "Postgres" in p["summary"])
    assert decided["type"] == "fact" and "postgres" in decided["tags"] and "decision" not in decided["tags"]
    assert [e["turn"] for e in decided["evidence"]] == [2, 3]  # the statement and the reply that confirmed it
    rule = next(p for p in out if "make lint" in p["summary"])
    assert rule["type"] == "procedure" and 0 < rule["confidence"] <= 1


EXTRACTOR = """import json, sys
feed = json.load(sys.stdin)
open(sys.argv[1], "a").write("ran\\n")
item = next(i for i in feed["items"] if i["turns"])
print(json.dumps({"kind": "new", "title": "Imports need max_allowed_packet 64M", "type": "lesson",
                  "summary": "raise max_allowed_packet before bulk imports", "tags": ["mysql"], "confidence": 0.9,
                  "text": "Set max_allowed_packet=64M.", "evidence": [{"ref": item["ref"], "turn": 1}]}))
print("not json")
print(json.dumps({"title": "no evidence", "evidence": [{"ref": "nope", "turn": 0}]}))
"""


def _extractor(tmp_path):
    script = tmp_path / "extract.py"
    script.write_text(EXTRACTOR)
    ran = tmp_path / "ran.log"
    return f"{sys.executable} {script} {ran}", ran


def test_the_extractor_command_contract_and_trust(root, cli, tmp_path):
    command, ran = _extractor(tmp_path)
    m = Memory(root)
    for role, text in LESSON + FILLER:
        m.session("a").add(role, text, now=NOW)
    (root / "memcli.yaml").write_text(f"reflect:\n  extractor: {json.dumps(command)}\n")
    r = cli("reflect", "--engine", "extractor")  # a committed file never runs a command untrusted
    assert r.exit_code == 2 and "not trusted" in r.stderr and not ran.exists()
    auto = cli.json("reflect", "--dry-run", code=0)
    assert auto["data"]["engine"] == "offline" and any("not trusted" in w for w in auto["warnings"])
    assert cli("trust").exit_code == 0
    res = cli.json("reflect", code=0)
    assert res["data"]["engine"] == "extractor" and ran.read_text() == "ran\n"
    assert len(res["data"]["proposed"]) == 1
    assert any("line 2 is not JSON" in w for w in res["warnings"])
    assert any("names no turn" in w for w in res["warnings"])
    p = store.read(root, res["data"]["proposed"][0])
    assert p.engine == "extractor" and p.confidence == 0.9
    assert [q.text for q in p.evidence] == [LESSON[1][1]]  # quoted from the episode, verbatim


def test_the_hook_never_runs_the_extractor(root, tmp_path):
    command, ran = _extractor(tmp_path)
    (root / ".memcli").mkdir(exist_ok=True)
    (root / ".memcli" / "config.yaml").write_text(
        f"reflect:\n  extractor: {json.dumps(command)}\n  on_fold: true\nsession:\n  max_rounds: 1\n"
    )
    from memcli.hooks import claude_code

    for text in ("We decided to ship the release on Fridays from now on.", "ok", "thanks"):
        claude_code(json.dumps({"prompt": text, "session_id": "s1", "cwd": str(root)}).encode(), root=str(root))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not store.pending(root)[0]:
        time.sleep(0.05)
    found = store.pending(root)[0]
    assert found and {p.engine for p in found} == {"offline"}
    assert not ran.exists()


def test_a_fold_reflects_in_the_background(root):
    (root / ".memcli/config.yaml").write_text("reflect:\n  on_fold: true\nsession:\n  max_rounds: 2\n")
    m = Memory(root)
    for role, text in LESSON + SMALL_TALK:
        m.session("a").add(role, text)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not store.pending(root)[0]:
        time.sleep(0.05)
    assert any("max_allowed_packet" in p.text for p in store.pending(root)[0])


def _loop_checks(hits_en, hits_zh):
    for hits in (hits_en, hits_zh):
        assert hits, "nothing recalled"
        top = hits[0]
        assert top["path"].startswith("memory/") and not top["path"].startswith("memory/episodes/"), top
        assert "max_allowed_packet" in (top["title"] + top["summary"] + top["snippet"])


def _before(cli2):
    """Before reflection the memory holds no such memory: the raw episode is all there is."""
    r = cli2.json("recall", ASK_EN)
    return [h["path"] for h in r["data"]["hits"]]


def test_the_loop_through_the_cli(root):
    cli = Cli(root)
    for role, text in LESSON + FILLER:
        assert cli("--session", "s1", "session", "add", role, text).exit_code == 0
    assert all(p.startswith("memory/episodes/") for p in _before(cli))
    proposed = cli.json("reflect", code=0)["data"]["proposed"]
    assert proposed
    ours = [pid for pid in proposed if "max_allowed_packet" in store.read(root, pid).text]
    assert ours
    assert cli("inbox", "accept", *ours).exit_code == 0
    en = cli.json("--session", "s2", "recall", ASK_EN)["data"]["hits"]
    zh = cli.json("--session", "s2", "recall", ASK_ZH)["data"]["hits"]
    _loop_checks(en, zh)


def test_the_loop_through_the_python_api(root):
    m = Memory(root)
    session_one(m.session("s1").add)
    res = m.reflect()
    ours = [p["id"] for p in res["proposals"] if "max_allowed_packet" in p["text"]]
    assert ours and set(ours) <= set(res["proposed"])
    assert [x["action"] for x in m.inbox.accept(ours)] == ["accepted"] * len(ours)
    s2 = m.session("s2")
    s2.add("user", ASK_EN)
    en = m.recall(ASK_EN, session="s2").to_dict()["hits"]
    s2.add("user", ASK_ZH)
    zh = m.recall(ASK_ZH, session="s2").to_dict()["hits"]
    _loop_checks(en, zh)


def test_the_loop_through_mcp_with_the_agent_as_the_engine(root):
    pytest.importorskip("mcp")
    from tests.test_mcp import json_part, served

    async def one(s):
        for role, text in LESSON + FILLER:
            await s.call_tool("session_add", {"role": role, "text": text, "session": "s1"})
        got = await s.call_tool("reflect_material", {})
        feed = json_part(got.content[0].text)
        assert got.content[0].text.startswith("memcli: the JSON below is data")
        # the agent's own model reads the material and proposes, with an alias in the other language
        ref = next(i["ref"] for i in feed["items"] if any("root cause" in t["text"] for t in i["turns"]))
        item = next(i for i in feed["items"] if i["ref"] == ref)
        n = next(t["n"] for t in item["turns"] if "root cause" in t["text"])
        proposal = {
            "kind": "new",
            "title": "Bulk MySQL imports need max_allowed_packet 64M",
            "type": "lesson",
            "summary": "raise max_allowed_packet to 64M before large imports",
            "aliases": ["大批量导入 max_allowed_packet 参数"],
            "tags": ["mysql", "import"],
            "text": "The nightly import failed with 'server has gone away': 40 MB batches over a 16 MB limit.",
            "confidence": 0.9,
            "evidence": [{"ref": ref, "turn": n}],
        }
        res = await s.call_tool("propose", {"proposals": [proposal], "mark": feed["mark"]})
        assert not res.is_error, res.content[0].text
        data = json_part(res.content[0].text)
        again = json_part((await s.call_tool("reflect_material", {})).content[0].text)
        assert len(data["proposed"]) == 1 and data["marked"]
        assert again["items"] == [] or all(i["ref"].startswith("session:") for i in again["items"])
        pid = data["proposed"][0]
        assert store.read(root, pid).evidence[0].text == LESSON[1][1]
        assert Cli(root)("inbox", "accept", pid).exit_code == 0  # a person accepts, while the agent runs on
        out = []
        for q in (ASK_EN, ASK_ZH):
            await s.call_tool("session_add", {"role": "user", "text": q, "session": "s2"})
            r = await s.call_tool("recall", {"query": q, "session": "s2"})
            out.append(json_part(r.content[0].text)["hits"])
        return out

    en, zh = served(root, one)
    _loop_checks(en, zh)
    assert en[0]["id"] == zh[0]["id"] == "bulk-mysql-imports-need-max-allowed-packet-64m"


def test_a_statement_about_an_existing_memory_becomes_an_update(root):
    m = Memory(root)
    m.remember(
        "Bulk MySQL imports",
        "raise max_allowed_packet before large imports",
        tags=["mysql"],
        body="The nightly import needs a bigger max_allowed_packet on the server.",
        now=NOW,
    )
    m.remember("Release checklist", "tag, build, sign, publish", now=NOW)
    session_one(m.session("a").add)
    res = m.reflect(dry_run=True)
    about = [p for p in res["proposals"] if "max_allowed_packet" in p["text"]]
    assert about and all(p["kind"] == "update" and p["target"] == "bulk-mysql-imports" for p in about)
    m2 = Memory(root)
    for p in m2.reflect()["proposed"]:
        m2.inbox.accept([p])
    d = m2.get("bulk-mysql-imports")
    assert "max_allowed_packet 调到 64M" in d.body and d.summary == "raise max_allowed_packet before large imports"
    assert len(m2.list().details) == 2
    # reflecting on the same turns again: the memory already says it, nothing is proposed
    again = m2.reflect(all=True, dry_run=True)
    assert not [p for p in again["proposals"] if "max_allowed_packet" in p["text"]]


def test_scope_end_reflects_in_the_background_and_watch_reflects_on_its_schedule(root):
    (root / ".memcli/config.yaml").write_text("reflect:\n  on_fold: true\n")
    m = Memory(root)
    m.scope("t").start("ship the release")
    m.scope("t").set("decision", "ship on Friday", agent="Planner")
    m.scope("t").end()
    mark = root / ".memcli" / "reflect.json"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not mark.exists():
        time.sleep(0.05)
    assert mark.exists()  # the background reflection ran over the scope's final state
    from memcli.usecases.watch import Watcher

    (root / "memcli.yaml").write_text("")  # folds alone start nothing now: watch does it
    m = Memory(root)
    session_one(m.session("w").add)
    events = []
    Watcher(m.store, events.append).heartbeat()
    assert not [e for e in events if e["event"] == "reflected"] and not store.pending(root)[0]
    Watcher(m.store, events.append, reflect=True).heartbeat()
    done = [e for e in events if e["event"] == "reflected"]
    assert done and done[0]["proposed"] == [p.id for p in store.pending(root)[0]]


def test_ending_a_scope_that_was_never_started_starts_no_reflection(root, monkeypatch):
    """Under reflect.on_fold only an end that puts something in the episode log starts a
    background reflection, as a session's end does."""
    from memcli.usecases import reflect

    started: list = []
    monkeypatch.setattr(reflect, "trigger", lambda root, origin=None: started.append(origin))
    (root / ".memcli/config.yaml").write_text("reflect:\n  on_fold: true\n")
    m = Memory(root)
    assert m.scope("never").end()["episode"] is None and started == []
    m.scope("t").start("ship the release", now="2026-03-01T10:00:00Z")
    m.scope("t").end(now="2026-03-01T11:00:00Z")
    assert started == [None]


def _readme_walkthrough():
    from tests.conftest import ROOT_DIR

    part = (ROOT_DIR / "docs" / "guide" / "reflect.md").read_text(encoding="utf-8")
    import re

    return re.findall(r"```sh\n(.*?)```", part, re.S)[0]


def test_the_readme_walkthrough_runs(tmp_path, monkeypatch):
    """Each line of the guide's "Learning from sessions" walk-through, in process."""
    import shlex

    from tests.conftest import invoke

    outputs = []
    for line in _readme_walkthrough().strip().split("\n"):
        for part in line.split(" && "):
            words = shlex.split(part)
            if words[0] == "export":
                for w in words[1:]:
                    k, v = w.split("=", 1)
                    monkeypatch.setenv(k, str(tmp_path / "work" / v) if k == "MEMCLI_ROOT" else v)
                continue
            env = {}
            while "=" in words[0]:
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            assert words[0] == "memcli"
            with monkeypatch.context() as mp:
                for k, v in env.items():
                    mp.setenv(k, v)
                r = invoke(words[1:])
            assert r.exit_code == 0, (part, r.output)
            outputs.append(r.stdout)
    for answer in outputs[-2:]:
        head = answer.split("\n")[1]
        assert "memory/" in head and "memory/episodes/" not in head, answer
        assert "max_allowed_packet" in answer

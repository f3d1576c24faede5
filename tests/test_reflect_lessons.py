"""Reflection that yields the memories a person would keep: one proposal per lesson with a title
naming the problem and the fix, confirmations as evidence only, short ids, a rejected lesson not
proposed again, and a quick review (the listing, accept with a new id and title). The two sessions
of the reflection issue run through the real CLI, in subprocesses."""

import json
from pathlib import Path

import pytest

from memcli.core import Memory
from memcli.store import inbox as store
from tests.conftest import Cli, run_memcli

SCENARIOS = {
    s["name"]: s
    for s in json.loads(
        (Path(__file__).resolve().parent.parent / "benchmarks" / "reflect_scenarios" / "scenarios.json").read_text(
            encoding="utf-8"
        )
    )["scenarios"]
}
ORDERS = SCENARIOS["orders-import-garbled"]["turns"]
CERT = SCENARIOS["new-user-cert-session"]["turns"]
KAFKA = SCENARIOS["kafka-consumer-lag"]["turns"]
KAFKA_ZH = SCENARIOS["kafka-lag-and-topic-names"]["turns"]
STAGING = SCENARIOS["staging-readiness-bilingual"]["turns"]
ENGINE_WORDS = {"fix", "cause", "decision", "rule", "lesson", "preference", "e.g", "i.e"}


def mc(root, *args, code=0):
    r = run_memcli("--root", root, *args)
    assert r.returncode == code, (args, r.stdout, r.stderr)
    return r


def record(root, turns, session="s1"):
    for role, text in turns:
        mc(root, "--session", session, "session", "add", role, text)
    mc(root, "--session", session, "session", "clear")


def first_hit(root, question, session="next"):
    r = run_memcli("--root", root, "--session", session, "--json", "recall", question)
    hits = json.loads(r.stdout)["data"]["hits"] if r.stdout.strip() else []
    return hits[0] if hits else None


def test_the_four_turn_fix_is_one_proposal_a_person_would_keep(root):
    record(root, ORDERS)
    res = json.loads(mc(root, "--json", "reflect").stdout)["data"]
    assert len(res["proposed"]) == 1, [p["title"] for p in res["proposals"]]
    p = res["proposals"][0]
    assert p["title"] == "Orders import shows garbled Chinese characters: SET NAMES utf8mb4 on the connection"
    assert p["summary"] == "Always set utf8mb4 on the connection for the orders import."
    assert p["target"] == "orders-import-utf8mb4-connection" and p["type"] == "lesson"
    assert "utf8mb4" in p["tags"] and "latin1" in p["tags"]
    assert len(p["evidence"]) == 4  # "Great, that worked" is evidence, never a proposal of its own
    assert "Great, that worked" not in p["text"]
    listing = mc(root, "inbox").stdout
    assert "new→orders-import-utf8mb4-connection\tlesson" in listing and "4 turns" in listing
    assert "    Always set utf8mb4 on the connection for the orders import." in listing
    mc(root, "inbox", "accept", res["proposed"][0])
    for q in (
        "how did we fix the garbled text in the orders import",
        "which charset does the orders import connection need",
    ):
        hit = first_hit(root, q)
        assert hit and hit["id"] == "orders-import-utf8mb4-connection", (q, hit)


def reflect_one_round_a_section(root, turns) -> list:
    """The session recorded with session.max_rounds: 1 (each round folded into a section of its
    own), ended by `session clear`, then `memcli reflect`: its proposals."""
    with open(root / "memcli.yaml", "a", encoding="utf-8") as f:
        f.write("session:\n  max_rounds: 1\n")
    record(root, turns)
    res = json.loads(mc(root, "--json", "reflect").stdout)["data"]
    return res["proposals"]


def test_a_fix_its_cause_and_its_confirmation_are_one_proposal(root):
    (p,) = reflect_one_round_a_section(root, KAFKA)
    assert [q["text"] for q in p["evidence"]] == [t for _, t in KAFKA[:4]]  # the symptom to the rule kept
    assert "max.poll.records to 50" in p["title"] and "order.created" in p["title"]
    assert p["summary"] == "Keep max.poll.records at 50 for the order consumers."
    assert "the group rebalances" in p["text"] and "nginx" not in p["text"]  # the cause; not the next subject
    assert {"max.poll.records", "order.created"} <= set(p["tags"]) and not ENGINE_WORDS & set(p["tags"])
    assert p["type"] == "lesson"


def test_a_chinese_session_keeps_its_identifiers_whole_one_proposal_per_fact(root):
    props = reflect_one_round_a_section(root, KAFKA_ZH)
    assert len(props) == 2, [p["title"] for p in props]
    fix = next(p for p in props if "50" in p["summary"])
    assert fix["summary"] == "订单相关的消费者 max.poll.records 保持 50。"
    assert "max.poll.records" in fix["title"] and fix["title"].startswith("order.created")
    assert len(fix["evidence"]) == 4 and "max.poll.records" in fix["tags"]
    rule = next(p for p in props if p is not fix)
    assert "e.g. order.created、payment.refunded" in rule["summary"], rule["summary"]
    assert rule["title"].endswith("payment.refunded")
    assert "topic" in rule["tags"] and not ENGINE_WORDS & set(rule["tags"])
    assert not any(w.endswith((".", "-e-g")) for p in props for w in (p["summary"], p["title"], p["target"]))


def test_a_title_cut_short_keeps_an_identifier_whole(root):
    record(root, [("user", "以后我们所有的订单消费者都要把参数max.poll.records设置成五十条以内，不然会一直重平衡的。")])
    (p,) = json.loads(mc(root, "--json", "reflect").stdout)["data"]["proposals"]
    assert p["title"] == "我们所有的订单消费者都要把参数max.poll.records…", p["title"]
    assert "max.poll.records" in p["tags"]


def test_a_fix_restated_in_the_other_language_is_one_proposal(root):
    (p,) = reflect_one_round_a_section(root, STAGING)
    assert len(p["evidence"]) == len(STAGING)
    assert {"readinessprobe", "initialdelayseconds"} <= set(p["tags"])
    mc(root, "inbox", "accept", "--all")
    for q in ("why do staging deploys time out at the health check", "staging 部署健康检查超时怎么办"):
        assert first_hit(root, q)["id"] == p["target"], q


def test_a_new_users_session_gives_one_proposal_per_lesson_and_rejected_stays_rejected(root):
    record(root, CERT)
    res = json.loads(mc(root, "--json", "reflect").stdout)["data"]
    props = {p["target"]: p for p in res["proposals"]}
    assert set(props) == {
        "export-job-ca-certificates-dockerfile",
        "session-store-key",
        "image-build-slim-ca-certificates",
        "喜欢简短-代码注释",
    }, list(props)
    cert = props["export-job-ca-certificates-dockerfile"]
    assert "CERTIFICATE_VERIFY_FAILED" in cert["title"] and "certificate_verify_failed" in cert["tags"]
    assert "CERTIFICATE_VERIFY_FAILED" in cert["aliases"]
    assert any("证书" in a for a in cert["aliases"])  # the turns mix Chinese and English
    assert props["喜欢简短-代码注释"]["type"] == "preference"  # at the default budget
    confirmations = {CERT[i][1] for i in SCENARIOS["new-user-cert-session"]["noise"]}
    assert not any(p["summary"] in confirmations for p in res["proposals"])
    assert all(len(k) <= 48 for k in props)
    ttl = props["session-store-key"]["id"]
    mc(root, "inbox", "reject", ttl)
    mc(root, "inbox", "accept", *[p["id"] for p in res["proposals"] if p["id"] != ttl])
    again = json.loads(mc(root, "--json", "reflect", "--all").stdout)["data"]
    assert again["proposed"] == [] and any(ttl in s["why"] for s in again["skipped"]), again
    for q in (
        "the export fails with CERTIFICATE_VERIFY_FAILED, what was the fix?",
        "why did SSL verification fail in the export container",
        "导出任务报证书校验失败怎么解决",
    ):
        assert first_hit(root, q)["id"] == "export-job-ca-certificates-dockerfile", q
    for q in ("what must every slim based image install", "slim 镜像需要装什么"):
        assert first_hit(root, q)["id"] == "image-build-slim-ca-certificates", q
    assert first_hit(root, "代码注释用什么语言")["id"] == "喜欢简短-代码注释"


def test_new_turns_that_add_to_a_rejected_lesson_propose_it_again(root):
    m = Memory(root)
    ep = "memory/episodes/2026-12-01.md"
    q = [store.Quote("user", f"2026-12-01T10:00:0{i}Z", ep, t) for i, t in enumerate(("the deploy hangs", "VPN first"))]
    first = m.inbox.propose([store.make("new", "Deploy needs the VPN", evidence=q, created="2026-12-01T10:00:00Z")])
    m.inbox.reject(first["proposed"])
    from memcli.usecases.reflect import settle

    same = store.make("update", "Deploy", target="deploy", evidence=q[::-1], created="2026-12-02T10:00:00Z")
    more = store.make(
        "new",
        "Deploy needs the VPN and the token",
        created="2026-12-02T10:00:00Z",
        evidence=q + [store.Quote("user", "2026-12-02T09:00:00Z", ep, "and the token too")],
    )
    kept, dropped = settle(m.store, [same, more])
    assert [p.id for p in kept] == [more.id]
    assert dropped == [{"id": same.id, "why": f"its turns were already proposed as {first['proposed'][0]} (rejected)"}]


@pytest.mark.parametrize(
    "text",
    [
        "Great, that worked. Remember that for next time.",
        "好的",
        "works now, thanks!",
        "Confirmed, the export finished this morning.",
        "好的，可以了。",
        "记下了。",
    ],
)
def test_a_confirmation_is_never_a_proposal(text):
    from memcli.usecases.reflect_engines.offline import acknowledges, propose

    assert acknowledges(text)
    turns = [("user", "From now on we always run make lint before pushing."), ("assistant", text)]
    feed = {
        "items": [
            {
                "ref": "e#1",
                "episode": "e",
                "heading": "session x cleared",
                "turns": [{"n": i, "role": r, "text": t} for i, (r, t) in enumerate(turns)],
            }
        ]
    }
    out = propose(feed, budget=100)
    assert len(out) == 1 and "make lint" in out[0]["summary"]
    assert not acknowledges("确认恢复了。以后所有服务都用共享的 Redis 连接池，不要在请求里新建连接。")


def test_accept_renames_the_memory_and_fixes_the_title_in_one_step(root, cli):
    record(root, ORDERS)
    pid = cli.json("reflect", code=0)["data"]["proposed"][0]
    assert cli("inbox", "accept", pid, "p-other", "--id", "x").exit_code == 2
    assert cli("inbox", "accept", "--all", "--title", "x").exit_code == 2
    assert cli("inbox", "accept", pid, "--id", "../escape").exit_code != 0
    assert cli("inbox", "accept", pid, "--title", "  ").exit_code == 2
    assert store.path(root, pid).is_file()  # nothing was decided
    r = cli.json(
        "inbox",
        "accept",
        pid,
        "--id",
        "orders-import-utf8mb4",
        "--title",
        "Orders import: utf8mb4 on the MySQL connection",
        code=0,
    )["data"]["results"][0]
    assert r["memory"] == "orders-import-utf8mb4"
    d = Memory(root).get("orders-import-utf8mb4")
    assert d.title == "Orders import: utf8mb4 on the MySQL connection"
    assert d.summary == "Always set utf8mb4 on the connection for the orders import."
    record_ = store.read(root, pid, archived=True)
    assert record_.memory == "orders-import-utf8mb4" and record_.title == d.title
    # an update's target is the memory it changes: it cannot be renamed
    m = Memory(root)
    up = m.inbox.propose(
        [store.make("update", "x", target="orders-import-utf8mb4", text="more", created="2026-12-01T10:00:00Z")]
    )["proposed"][0]
    r = cli("inbox", "accept", up, "--id", "other")
    assert r.exit_code == 2 and "updates orders-import-utf8mb4" in r.stderr


def test_a_secret_in_a_new_title_is_refused_like_any_write(root, cli):
    record(root, ORDERS)
    pid = cli.json("reflect", code=0)["data"]["proposed"][0]
    r = cli("inbox", "accept", pid, "--title", "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    assert r.exit_code == 4 and store.path(root, pid).is_file()


def test_the_agents_id_names_the_memory(root):
    m = Memory(root)
    s = m.session("a")
    for role, text in ORDERS:
        s.add(role, text)
    s.clear()
    feed = m.reflect_material().to_dict()
    item = feed["items"][0]
    res = m.propose(
        [
            {
                "kind": "new",
                "id": "Orders Import UTF8MB4",
                "title": "Orders import garbled: utf8mb4",
                "summary": "SET NAMES utf8mb4 on the connection",
                "type": "lesson",
                "evidence": [{"ref": item["ref"], "turn": 1}],
            }
        ],
        feed["mark"],
    )
    assert [a["memory"] for a in m.inbox.accept(res["proposed"])] == ["orders-import-utf8mb4"]


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if s["split"] == "dev"])
def test_each_dev_session_gives_its_lessons_once_with_titles_a_person_keeps(root, name):
    """Every lesson of the session covered by exactly one proposal whose title holds the
    problem's and the fix's words; no proposal made of a confirmation or small talk."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import reflect_scenarios as bench

    sc = SCENARIOS[name]
    m = bench.record(root / "s", sc)
    props = bench.run_engine(m, sc, "offline", {})
    r = bench.score(sc, props, m)
    assert r["covered"] == r["one_each"] == r["lessons"], [p["title"] for p in props]
    assert r["noise"] == 0 and r["kept"] == r["kept_of"], [p["title"] for p in props]
    assert not Cli(root / "s")("inbox").stdout  # all accepted

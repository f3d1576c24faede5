"""Personal data: the detector, masking, the policies, and every capture path (session, scope, hook,
MCP, episodes), deliberate writes that warn, and the heartbeat's `pii` finding."""

import json
from pathlib import Path

import pytest

from conftest import Cli
from memcli.config import pii_policy
from memcli.settings_guard import load_config
from memcli.core import Memory
from memcli.errors import ConfigError
from memcli.safety import pii

ROOT_DIR = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "text, kind, masked",
    [
        ("我的邮箱是zhang.wei88@qq.com，有事联系", "email", "z***@qq.com"),
        ("mail j.doe@example.com please", "email", "j***@example.com"),
        ("手机13812345678", "phone", "138****5678"),
        ("call +86 138 1234 5678", "phone", "+86 138 **** 5678"),
        ("座机 010-62345678 转 8021", "phone", "010-****5678"),
        ("(0755)86123456", "phone", "(0755)****3456"),
        ("+44 20 7946 0958", "phone", "+44 ** **** 0958"),
        ("ring 0049 30 1234567 now", "phone", "0049 ** ***4567"),
        ("身份证 11010519491231002X。", "cn-id", "1101**********002X"),
        ("card 4111 1111 1111 1111 exp 09/28", "card", "**** **** **** 1111"),
        ("IBAN DE89 3704 0044 0532 0130 00 for the wire", "iban", "DE89 **** **** **** **30 00"),
        ("寄到北京市朝阳区建国路88号", "address", "北京市朝阳区建国路**"),
        ("ship to 221B Baker Street, London", "address", "**** Baker Street"),
    ],
)
def test_found_and_masked_usefully_and_only_once(text, kind, masked):
    found = pii.find(text)
    assert [f.kind for f in found] == [kind]
    new, _ = pii.redact(text)
    assert masked in new
    assert pii.redact(new) == (new, [])  # never applied twice


@pytest.mark.parametrize(
    "text",
    [
        "version 2.14.3 released 2026-11-03T10:22:05Z",
        "order 202611031234567890 shipped",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "epoch 1701234567 and 1701234567890",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "git@github.com:acme/api.git",
        "noreply@example.com",
        "postgres://app:secret@db.internal:5432/app",
        "ip 10.138.12.34 port 13812",
        "tel ext 4111-1111",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "ISBN 978-7-111-54742-6",
        "price ¥13,812,345.67",
        "11010519491231002Y",
        "4111 1111 1111 1112",
        "DE89 3704 0044 0532 0130 01",
    ],
)
def test_ordinary_lookalikes_are_not_flagged(text):
    assert pii.find(text) == []


def test_the_labelled_dev_split_and_the_ordinary_notes():
    """The figures the README quotes for dev (the fresh split is scored once, by benchmarks/pii/run.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("memcli_pii_bench", ROOT_DIR / "benchmarks" / "pii" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    s = run.score(run.load("dev"), run.ordinary(), pii.find)
    assert s["positives"] >= 200 and s["detected"] >= 0.95, s["misses"]
    assert s["fp_notes"] <= 0.01 and s["fp_clean"] <= 0.01, s["fp_examples"]


def test_policy_per_front_end_and_bad_settings(root):
    (root / "memcli.yaml").write_text("write:\n  pii: {mcp: redact, hook: refuse}\n  pii_captured: warn\n")
    cfg = load_config(root)
    assert [pii_policy(cfg, d) for d in ("cli", "mcp", "hook")] == ["warn", "redact", "refuse"]
    # keeping captured text unmasked loosens the default: memcli.yaml needs trust for it
    assert pii_policy(cfg, "hook", captured=True) == "redact" and "write.pii_captured" in cfg.warnings[0]
    from memcli.settings_guard import trust

    trust(root)
    assert pii_policy(load_config(root), "hook", captured=True) == "warn"
    for bad in ("write.pii: mask\n", "write:\n  pii: {shell: redact}\n", "write:\n  pii: {mcp: hide}\n"):
        (root / "memcli.yaml").write_text(bad)
        with pytest.raises(ConfigError, match="write.pii"):
            load_config(root)


def test_deliberate_writes_warn_and_keep_the_text(root):
    cli = Cli(root)
    res = cli.json("remember", "Call Li Wei", "his mobile is 13812345678", code=0)
    assert any("personal data in the summary (phone" in w for w in res["warnings"])
    assert "13812345678" in (root / "memory" / "call-li-wei.md").read_text()
    res = cli.json("update", "call-li-wei", "--append", "mail li.wei@163.com", code=0)
    assert any("email" in w for w in res["warnings"])
    (root / "memcli.yaml").write_text("write.pii: refuse\n")
    res = cli.json("remember", "Card", "4111111111111111", code=4)
    assert res["error"]["code"] == "pii" and not (root / "memory" / "card.md").exists()


def test_captured_text_is_masked_in_the_session_the_scope_and_the_episodes(root):
    cli = Cli(root)
    (root / "memcli.yaml").write_text("session.max_rounds: 1\n")
    res = cli.json("session", "add", "user", "我的手机号是13812345678，邮箱 wang.fang@163.com", code=0)
    assert any("masked personal data" in w for w in res["warnings"])
    cli("session", "add", "user", "second turn")
    cli("session", "add", "user", "third turn")
    episodes = "".join(p.read_text() for p in (root / "memory" / "episodes").glob("*.md"))
    assert "138****5678" in episodes and "w***@163.com" in episodes
    assert "13812345678" not in episodes and "wang.fang@163.com" not in episodes
    state = (root / ".memcli" / "sessions" / "default.json").read_text()
    assert "13812345678" not in state
    cli("scope", "start", "call back 13987654321")
    cli("scope", "set", "contact", "IBAN DE89 3704 0044 0532 0130 00", "--agent", "A")
    cli("scope", "end")
    episodes = "".join(p.read_text() for p in (root / "memory" / "episodes").glob("*.md"))
    assert "13987654321" not in episodes and "0532 0130" not in episodes and "139****4321" in episodes


def test_the_hook_masks_the_prompt_it_records(example_root):
    prompt = "上次那个 MySQL charset 问题, 客户邮箱 zhang.san@qq.com 手机 139 8765 4321"
    event = json.dumps(
        {"session_id": "s1", "cwd": str(example_root), "hook_event_name": "UserPromptSubmit", "prompt": prompt},
        ensure_ascii=False,
    )
    from memcli.hooks import claude_code

    r = claude_code(event.encode("utf-8"), root=str(example_root))  # what `memcli hook claude-code` runs
    assert r.code == 0, r.stderr
    turns = json.loads((example_root / ".memcli" / "sessions" / "s1.json").read_text())["turns"]
    assert turns[0]["text"].endswith("客户邮箱 z***@qq.com 手机 139 **** 4321")


def test_mcp_masks_session_turns_and_warns_on_remember(root):
    anyio = pytest.importorskip("anyio")
    pytest.importorskip("mcp")
    from test_mcp import served

    async def body(s):
        turn = await s.call_tool("session_add", {"role": "user", "text": "reach me at li.na@gmail.com"})
        kept = await s.call_tool("remember", {"title": "Vendor contact", "summary": "li.na@gmail.com"})
        return turn, kept

    turn, kept = served(root, body)
    assert not turn.is_error and "masked personal data" in (turn.meta or {}).get("memcli/warnings", [""])[0]
    state = (root / ".memcli" / "sessions" / "default.json").read_text()
    assert "l***@gmail.com" in state and "li.na@gmail.com" not in state
    assert not kept.is_error and any("personal data" in w for w in kept.meta["memcli/warnings"])
    assert "li.na@gmail.com" in (root / "memory" / "vendor-contact.md").read_text()
    del anyio


def test_heartbeat_reports_personal_data_with_line_and_fix(root):
    m = Memory(root)
    m.remember("Vendor", "contact", body="first line\nmail li.na@gmail.com\n")
    ep = root / "memory" / "episodes"
    ep.mkdir(parents=True, exist_ok=True)
    (ep / "2026-11-03.md").write_text("# Episodes 2026-11-03\n\n## 2026-11-03T10:00:00Z note\n\ncall 13812345678\n")
    found = {f.path: f for f in m.audit().findings if f.code == "pii"}
    detail, episode = found["memory/vendor.md"], found["memory/episodes/2026-11-03.md"]
    assert detail.severity == "info" and detail.line == 16 and "l***@gmail.com" in detail.fix
    assert episode.severity == "warning" and episode.line == 5 and "138****5678" in episode.fix


def test_reflection_proposals_are_masked(root):
    from memcli.store.inbox import Proposal, Quote
    from memcli.usecases.inbox import captured

    p = Proposal(
        id="call-the-vendor",
        kind="new",
        type="fact",
        title="Call the vendor",
        summary="mobile 13812345678",
        text="mail li.na@gmail.com",
        evidence=(Quote("user", "2026-11-03T10:00:00Z", "e", "li.na@gmail.com"),),
    )
    out, _ = captured(Memory(root).store, p)
    assert out.summary == "mobile 138****5678" and "li.na@gmail.com" not in out.text + out.evidence[0].text

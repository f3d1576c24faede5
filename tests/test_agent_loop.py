"""The README's shell-scripted agent loop, as printed there, for 30 turns over the example root:
what each recall gives the model, judged by properties rather than by the exact layer: a question
never answers itself, a turn about a memory gets that memory (or the session's record of it), a
turn about nothing in memory gets nothing, and every memory recalled is one of the seeded ones."""

import json
import subprocess

import pytest

from tests.test_readme import loop_blocks, shim

pytestmark = pytest.mark.slow  # about 150 memcli processes

# (message, the memory the turn is about, None when nothing in memory answers it, or "skip" when
# should-recall says the turn needs no memory).
TURNS = [
    ("还记得上次 MySQL 中文乱码的问题吗？", "mysql-charset"),
    ("write a haiku about autumn", "skip"),
    ("how do we deploy to staging?", "staging-deploy"),
    ("thanks", "skip"),
    ("when is the December release freeze?", "release-2026-12"),
    ("上次 token 爆炸是怎么解决的", "token-爆炸-滑动窗口加摘要压缩"),
    ("can I force-push to main?", "skip"),  # no signal and no known name: no recall
    ("the postgres connection pool is exhausted again", "postgres-pool-exhaustion"),
    ("why are commands slow with pyenv shims?", "skip"),
    ("日志用什么时区来着？上次定过", "日志统一用-utc-时间"),
    ("tell me a joke", "skip"),
    ("again: how do we deploy to staging?", "staging-deploy"),
    ("what is the capital of France?", "skip"),
    ("remember how to roll back a staging deploy?", "staging-deploy"),
    ("which output key does the Reviewer write in a shared scope?", "scope-output-keys"),
    ("还记得我说过回复用什么语言吗", "reply-in-chinese"),
    ("did we ever set up a kubernetes ingress TLS certificate before?", "skip"),
    ("量子计算上次讨论到哪了", None),  # recalled, nothing fits
    ("how do we deploy to staging?", "staging-deploy"),  # asked before: its own user turns never answer
    ("last time, what did we say about the alembic migrations?", "staging-deploy"),
    ("good morning", "skip"),
    ("MySQL charset again: utf8mb4 on the table is not enough, right?", "mysql-charset"),
    ("pool_size and max_overflow per worker, what did we pick last time?", "postgres-pool-exhaustion"),
    ("上次说的滑动窗口保留几轮原文？", "token-爆炸-滑动窗口加摘要压缩"),
    ("please continue", None),  # "continue" asks for memory; nothing fits
    ("when is the December release freeze?", "release-2026-12"),
    ("pgbouncer in front of postgres, like last time?", "postgres-pool-exhaustion"),
    ("what do we do about the git history on main, as before?", "never-force-push-main"),
    ("why is the python startup slow in agent loops, as discussed?", "pyenv-shim-slow-startup"),
    ("ok bye", "skip"),
]

# A stand-in model: it logs the first recalled item it was given and replies with that item's
# title (an agent's reply names what it used), or with a fixed line when it was given nothing.
FAKE_LLM = r"""my_llm() {
  input=$(cat)
  head=$(printf '%s\n' "$input" | grep -m1 '^## ' | sed 's/^## //')
  where=$(printf '%s\n' "$input" | grep -m1 '^<!-- ' | sed 's/^<!-- //; s/ -->$//')
  printf '%s\t%s\n' "$head" "$where" >> "$LLM_LOG"
  if [ -n "$head" ]; then echo "From memory: $head"; else echo "Nothing on that in memory."; fi
}
"""


def test_the_readme_loop_gives_the_model_the_right_memory_every_turn(tmp_path, example_root):
    assert len(TURNS) == 30
    loop = loop_blocks()[0]
    assert 'memcli session add user "$msg"' in loop and 'memcli recall --strict "$msg"' in loop
    env = shim(tmp_path)
    log = tmp_path / "llm.log"
    env.update(MEMCLI_ROOT=str(example_root), HOME=str(tmp_path), LLM_LOG=str(log))
    script = FAKE_LLM + loop.replace("export MEMCLI_ROOT=~/agent-memory ", "export ").replace("my-llm", "my_llm")
    r = subprocess.run(
        ["bash", "-c", script],
        input="".join(m + "\n" for m, _ in TURNS),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr

    seeded = {p.stem for p in (example_root / "memory").glob("*.md")}
    titles = {
        p.stem: next(ln[7:] for ln in p.read_text(encoding="utf-8").splitlines() if ln.startswith("title: "))
        for p in (example_root / "memory").glob("*.md")
    }
    trace = [json.loads(x) for x in (example_root / ".memcli" / "trace.jsonl").read_text().splitlines()]
    given = iter(log.read_text(encoding="utf-8").splitlines())
    replies = []
    for msg, expect in TURNS:
        head, where = next(given).split("\t")
        if not where:  # not recalled, or nothing found: the model was given no memory
            assert expect in (None, "skip"), msg
            replies.append(None)
            continue
        path, layer = where.split(" · ")[:2]
        assert not head.startswith("user turn"), f"{msg!r}: the user's own question came back"
        if layer == "session":  # a reply or the summary, which names the memory the earlier reply used
            assert head in ("Session summary",) or head.startswith("assistant turn"), msg
            assert expect not in (None, "skip") and any(titles[expect] in (x or "") for x in replies), msg
        else:
            got = path.rsplit("/", 1)[-1][:-3]
            assert got in seeded and got == expect, (msg, got, expect)
        replies.append(f"From memory: {head}")
    # Recalls ran exactly for the turns should-recall let through; every memory recalled is a seeded one.
    asked = [m for m, e in TURNS if e != "skip"]
    assert [t["query"] for t in trace if t["command"] == "recall"] == asked
    assert all(set(t["ids"]) <= seeded for t in trace)
    # The loop's own writes: every turn in the session (folded ones in the episode log), the draft in the scope.
    session = json.loads((example_root / ".memcli" / "sessions" / "chat-42.json").read_text())
    assert session["folded"] + len(session["turns"]) == 2 * len(TURNS)
    assert session["turns"][-1]["text"] == "Nothing on that in memory."
    episodes = "".join(p.read_text(encoding="utf-8") for p in (example_root / "memory" / "episodes").glob("*.md"))
    assert TURNS[0][0] in episodes and "From memory: MySQL charset double encoding" in episodes
    scope = json.loads((example_root / ".memcli" / "scopes" / "article-7.json").read_text())
    assert scope["keys"]["draft"]["value"] == "Nothing on that in memory."

"""The README's shell-scripted agent loop, as printed there, for 30 turns over the example root:
which layer answers each recall, and with what."""

import json
import subprocess

from tests.test_readme import blocks, shim

# (message, what the loop's recall returns: (layer, id), None when it finds nothing, or
# "skip" when should-recall says the turn needs no memory).
TURNS = [
    ("还记得上次 MySQL 中文乱码的问题吗？", ("index", "mysql-charset")),
    ("write a haiku about autumn", "skip"),
    ("how do we deploy to staging?", ("index", "staging-deploy")),
    ("thanks", "skip"),
    ("when is the December release freeze?", ("index", "release-2026-12")),
    # 解决 and 上次 are not in the index line: not decisive there, the details layer answers.
    ("上次 token 爆炸是怎么解决的", ("details", "token-爆炸-滑动窗口加摘要压缩")),
    ("can I force-push to main?", "skip"),  # no signal and no known name: no recall
    ("the postgres connection pool is exhausted again", ("index", "postgres-pool-exhaustion")),
    ("why are commands slow with pyenv shims?", "skip"),
    ("日志用什么时区来着？上次定过", ("details", "日志统一用-utc-时间")),
    ("tell me a joke", "skip"),
    # Older turns are folded into the summary; its line of the agent's reply holds the whole question.
    ("again: how do we deploy to staging?", ("session", "summary")),
    ("what is the capital of France?", "skip"),
    ("remember how to roll back a staging deploy?", ("index", "staging-deploy")),
    ("which output key does the Reviewer write in a shared scope?", ("index", "scope-output-keys")),
    ("还记得我说过回复用什么语言吗", ("index", "reply-in-chinese")),
    ("did we ever set up a kubernetes ingress TLS certificate before?", "skip"),
    ("量子计算上次讨论到哪了", None),  # recalled, nothing fits
    # The same question again: its own user turn is skipped, the earlier reply answers.
    ("how do we deploy to staging?", ("session", "summary")),
    ("last time, what did we say about the alembic migrations?", ("details", "staging-deploy")),
    ("good morning", "skip"),
    ("MySQL charset again: utf8mb4 on the table is not enough, right?", ("details", "mysql-charset")),
    ("pool_size and max_overflow per worker, what did we pick last time?", ("details", "postgres-pool-exhaustion")),
    ("上次说的滑动窗口保留几轮原文？", ("index", "token-爆炸-滑动窗口加摘要压缩")),
    ("please continue", None),  # "continue" asks for memory; nothing fits
    ("when is the December release freeze?", ("session", "summary")),
    ("pgbouncer in front of postgres, like last time?", ("details", "postgres-pool-exhaustion")),
    ("what do we do about the git history on main, as before?", ("index", "never-force-push-main")),
    ("why is the python startup slow in agent loops, as discussed?", ("index", "pyenv-shim-slow-startup")),
    ("ok bye", "skip"),
]

# A stand-in model: it logs the first recalled item it was given and replies with that item's
# title (an agent's reply names what it used), or with a fixed line when it was given nothing.
FAKE_LLM = r'''my_llm() {
  input=$(cat)
  head=$(printf '%s\n' "$input" | grep -m1 '^## ' | sed 's/^## //')
  where=$(printf '%s\n' "$input" | grep -m1 '^<!-- ' | sed 's/^<!-- //; s/ -->$//')
  printf '%s\t%s\n' "$head" "$where" >> "$LLM_LOG"
  if [ -n "$head" ]; then echo "From memory: $head"; else echo "Nothing on that in memory."; fi
}
'''


def test_the_readme_loop_recalls_the_right_layer_every_turn(tmp_path, example_root):
    assert len(TURNS) == 30
    loop = blocks("A shell-scripted agent loop")[0]
    assert "memcli session add user \"$msg\"" in loop and "memcli recall \"$msg\"" in loop
    env = shim(tmp_path)
    log = tmp_path / "llm.log"
    env.update(MEMCLI_ROOT=str(example_root), HOME=str(tmp_path), LLM_LOG=str(log))
    script = FAKE_LLM + loop.replace("export MEMCLI_ROOT=~/agent-memory ", "export ").replace("my-llm", "my_llm")
    r = subprocess.run(["bash", "-c", script], input="".join(m + "\n" for m, _ in TURNS), cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr

    trace = [json.loads(x) for x in (example_root / ".memcli" / "trace.jsonl").read_text().splitlines()]
    recalls = iter(t for t in trace if t["command"] == "recall")
    given = iter(log.read_text(encoding="utf-8").splitlines())
    got = []
    for _ in TURNS:
        head, where = next(given).split("\t")
        if not where:
            got.append(None)  # not recalled, or nothing found: the model was given no memory
            continue
        path, layer = where.split(" · ")[:2]
        if layer == "session":  # "Session summary" or "assistant turn 6"
            got.append((layer, "summary" if head == "Session summary" else "turn-" + head.rsplit(" ", 1)[-1]))
        else:
            got.append((layer, path.rsplit("/", 1)[-1][:-3]))
    assert [(m, g) for (m, _), g in zip(TURNS, got)] == [(m, None if e == "skip" else e) for m, e in TURNS]
    # Recalls ran exactly for the turns should-recall let through, and the trace agrees with the model's input.
    asked = [(m, e) for m, e in TURNS if e != "skip"]
    assert [t["query"] for t in trace if t["command"] == "recall"] == [m for m, _ in asked]
    for rec, (m, e) in zip(recalls, asked):
        assert rec["layer"] == (e[0] if e else None), m
        assert rec["ids"][:1] == ([e[1]] if e and e[0] != "session" else []), m
    # The loop's own writes: every turn in the session (folded ones in the episode log), the draft in the scope.
    session = json.loads((example_root / ".memcli" / "sessions" / "chat-42.json").read_text())
    assert session["folded"] + len(session["turns"]) == 2 * len(TURNS)
    assert session["turns"][-1]["text"] == "Nothing on that in memory."
    episodes = "".join(p.read_text(encoding="utf-8") for p in (example_root / "memory" / "episodes").glob("*.md"))
    assert TURNS[0][0] in episodes and "From memory: MySQL charset double encoding" in episodes
    scope = json.loads((example_root / ".memcli" / "scopes" / "article-7.json").read_text())
    assert scope["keys"]["draft"]["value"] == "Nothing on that in memory."

"""The README's agent loop, turn by turn, judged by what it puts in front of the model.

    python benchmarks/recall_eval/loop.py                # the example root and a 1k generated store
    python benchmarks/recall_eval/loop.py --store 1000 --show

Each of the 30 turns is a user message and the memory it refers to (an id of the example root,
or none: small talk, a question nothing in memory answers, the same unanswerable question asked
twice). The loop is the README's: `session add user`, `should-recall`, then `recall --strict`
(no -k, as the README runs it), and a stand-in model that replies with the title of the first
recalled item ("From memory: <title>") or "Nothing on that in memory.", added as the assistant's
turn. It runs through the library, with the same defaults as the command line.

Reported, over the recalled lines (hits) the model was given: the share that are relevant (the
memory the turn refers to, or a session turn or summary that carries its title); how many turns
with a memory found it; and echoes, hits that are the user's own question (the turn just added,
or the same question asked before), which must be zero. Beside it, plain BM25 (five best, no
abstention) on the turns that were recalled. The 1k store is `gen_store.py`'s (random
English and Chinese words, a full MEMORY.md) with the example memories added.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE.parent))

NOW = "2026-12-01T00:00:00Z"
TURNS = [
    ("还记得上次 MySQL 中文乱码的问题吗？", "mysql-charset"),
    ("write a haiku about autumn", None),
    ("how do we deploy to staging?", "staging-deploy"),
    ("Is there a guest wifi password for the Berlin office?", None),
    ("when is the December release freeze?", "release-2026-12"),
    ("上次 token 爆炸是怎么解决的", "token-爆炸-滑动窗口加摘要压缩"),
    ("Is there a guest wifi password for the Berlin office?", None),
    ("the postgres connection pool is exhausted again", "postgres-pool-exhaustion"),
    ("日志用什么时区来着？上次定过", "日志统一用-utc-时间"),
    ("is there a promo code for the team dinner?", None),
    ("again: how do we deploy to staging?", "staging-deploy"),
    ("Use the second title instead", None),
    ("remember how to roll back a staging deploy?", "staging-deploy"),
    ("which output key does the Reviewer write in a shared scope?", "scope-output-keys"),
    ("还记得我说过回复用什么语言吗", "reply-in-chinese"),
    ("backup before migration, like last time?", None),
    ("量子计算上次讨论到哪了", None),
    ("上次 MySQL 字符集的问题怎么解决的？", "mysql-charset"),
    ("last time, what did we say about the alembic migrations?", "staging-deploy"),
    ("MySQL charset again: utf8mb4 on the table is not enough, right?", "mysql-charset"),
    ("pool_size and max_overflow per worker, what did we pick last time?", "postgres-pool-exhaustion"),
    ("上次说的滑动窗口保留几轮原文？", "token-爆炸-滑动窗口加摘要压缩"),
    ("please continue", None),
    ("pgbouncer in front of postgres, like last time?", "postgres-pool-exhaustion"),
    ("what do we do about the git history on main, as before?", "never-force-push-main"),
    ("why is the python startup slow in agent loops, as discussed?", "pyenv-shim-slow-startup"),
    ("上次那个磁盘满的问题是怎么解决的？", None),
    ("can I force-push to main? last time you said something about it", "never-force-push-main"),
    ("when is the code freeze, as before?", "release-2026-12"),
    ("last time we set up a kubernetes ingress TLS certificate, what was it?", None),
]


def example_root(folder: Path) -> Path:
    from memcli.usecases.init import init_root

    init_root(folder, example=True)
    return folder


def generated_root(folder: Path, n: int) -> Path:
    """gen_store's store of ``n`` memories with the example memories added and the index rebuilt."""
    from gen_store import generate

    from memcli import Memory
    from memcli.store.templates import example_files

    generate(folder, n)
    for name, text in example_files():
        (folder / "memory" / name).write_text(text, encoding="utf-8")
    Memory(folder).rebuild_index()
    return folder


def bm25_for(mem):
    """Plain BM25 over the detail files (benchmarks/bilingual's, with CJK bigrams), no abstention."""
    sys.path.insert(0, str(HERE.parent / "bilingual"))
    from run import BM25, cjk_bigrams

    docs = [
        (d.id, "\n".join([d.title, d.summary, " ".join(d.tags), " ".join(d.aliases), d.body]))
        for d in (mem.store.load(p) for p in mem.store.detail_files())
    ]
    return BM25(docs, cjk_bigrams)


def run(root: Path, show: bool = False) -> dict:
    from memcli import Memory

    mem = Memory(root)
    titles = {d.id: d.title for d in mem.list().details}
    bm25 = bm25_for(mem)
    base_lines = base_relevant = 0
    session = "loop"
    lines = relevant = echoes = found = wanted = 0
    asked: list[str] = []
    for turn, (msg, expect) in enumerate(TURNS, 1):
        mem.session(session).add("user", msg, now=NOW)
        hits = []
        if mem.should_recall(msg)["kind"] != "none":
            hits = mem.recall(msg, session=session, scope=session, now=NOW, strict=True).hits
            base = bm25.search(msg)  # the same turns, plain BM25's five best
            base_lines += len(base)
            base_relevant += sum(1 for i in base if i == expect)
        marks = []
        for h in hits:
            text = f"{h.title}\n{h.snippet}"
            if h.layer == "session":
                echo = h.title.startswith("user turn") and any(
                    q.strip().casefold() in h.snippet.casefold() for q in asked + [msg]
                )
                ok = not h.title.startswith("user turn") and expect is not None and titles[expect] in text
            else:
                echo = False
                ok = h.id == expect
            lines += 1
            relevant += ok
            echoes += echo
            marks.append(("+" if ok else "-") + ("!" if echo else "") + f"{h.layer}:{h.id}")
        if expect is not None:
            wanted += 1
            found += any(m.startswith("+") for m in marks)
        asked.append(msg)
        reply = f"From memory: {hits[0].title}" if hits else "Nothing on that in memory."
        mem.session(session).add("assistant", reply, now=NOW)
        if show:
            print(f"  {turn:2} {msg[:60]!r:64} expect {expect}: {' '.join(marks) or '-'}")
    return {
        "turns": len(TURNS),
        "recalled lines": lines,
        "relevant": relevant,
        "share relevant": round(relevant / lines, 3) if lines else None,
        "echoes": echoes,
        "memories found": f"{found}/{wanted}",
        "bm25": f"{base_lines} lines, {round(base_relevant / base_lines, 3) if base_lines else None} relevant",
    }


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=int, default=1000, help="size of the generated store (0: only the example root)")
    ap.add_argument("--show", action="store_true", help="print every turn and its hits (+ relevant, ! echo)")
    ap.add_argument(
        "--semantic",
        action="store_true",
        help="with the semantic extra's layer (default: without, as the quick start installs it)",
    )
    ap.add_argument("--keep", type=Path, help="build the roots here and keep them (reused when present)")
    args = ap.parse_args(argv)
    from locomo import semantic_extra

    with semantic_extra(args.semantic):
        return _main(args)


def _main(args) -> int:
    assert len(TURNS) == 30
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="memcli-loop-"))
    try:
        for state in tmp.glob("*/.memcli/sessions"):
            shutil.rmtree(state)  # a kept root starts the loop with no session and no episodes
        for episode in tmp.glob("*/memory/episodes/*.md"):
            episode.unlink()
        example = tmp / "example"
        roots = [("example root", example if (example / "MEMORY.md").exists() else example_root(example))]
        if args.store:
            gen = tmp / f"generated-{args.store}"
            roots.append(
                (
                    f"{args.store} generated + example",
                    gen if (gen / "MEMORY.md").exists() else generated_root(gen, args.store),
                )
            )
        for name, root in roots:
            if args.show:
                print(name)
            r = run(root, args.show)
            print(
                f"{name}: {r['recalled lines']} recalled lines over {r['turns']} turns, "
                f"{r['share relevant']} relevant, {r['echoes']} echoes, memories found {r['memories found']}; "
                f"plain BM25 on the same turns: {r['bm25']}"
            )
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Reflection on long conversations (LoCoMo dev): what the offline engine proposes, and what
accepting it does to recall.

    python benchmarks/reflect_locomo.py                 # every figure, the split in reflect_split.json
    python benchmarks/reflect_locomo.py --only tune     # the conversation the rules were tuned on
    python benchmarks/reflect_locomo.py --budgets 5 10 15 20 30 50

The data is read from ../shared/data/locomo-dev/ (CC BY-NC: never copied into this repository).
Each conversation becomes a root whose episode log holds its sessions (one section per session,
speaker A as "user", speaker B as "assistant", a turn every 30 s from the session's time), and
`Memory.reflect` runs on it as a person would run `memcli reflect` (offline engine, `--budget B`).

Extraction, against LoCoMo's observations (facts per session, each citing dialog turns):
- recall: the share of turns some observation cites that a proposal quotes as evidence;
- per 100: proposals per 100 turns (what a reviewer reads);
- precision: the share of proposals whose main statement (the turn the proposal is made from) is
  a cited turn; `any` also counts a proposal when another of its quoted turns is cited;
- quotes: the mean number of turns a proposal quotes;
- kept: the share of proposals whose title a reviewer would keep as it stands: the title holds a
  content word (a search term, stop words left out, stems compared) of an observation that cites
  one of the turns the proposal quotes. A proposal that covers no observation does not count as kept.

Recall after reflection: each conversation's questions (categories 1-4, as benchmarks/locomo.py)
asked of a root holding one memory per turn, then of the same root after every proposal (at the
default budget) was accepted as it stands (`memcli inbox accept --all`, no edits). A question is
found at 5 when one of the first five hits is an evidence turn or an accepted memory quoting one.
Plain BM25 over the same documents beside it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402  (turns, write_root, BM25, the data path)

SPLIT = HERE / "reflect_split.json"
NOW = "2030-01-01T00:00:00Z"


def cited(conv: dict) -> set:
    """Every dia_id some observation of the conversation cites."""
    import re

    out = set()
    for per_session in conv.get("observation", {}).values():
        for facts in per_session.values():
            for _, ev in facts:
                for x in re.split(r"[;,\s]+", ev if isinstance(ev, str) else " ".join(ev)):
                    if x:
                        out.add(x)
    return out


def episode_root(conv: dict, folder: Path):
    """A root whose episode log holds the conversation; returns (Memory, {(episode, time): dia_id})."""
    from memcli.core import Memory
    from memcli.usecases.init import init_root
    from memcli.store import episodes

    init_root(folder)
    sessions: dict = {}
    for dia_id, speaker, text, when in locomo.turns(conv):
        n = dia_id.split(":")[0]
        sessions.setdefault(n, []).append((dia_id, speaker, text, when))
    where = {}
    role = {conv["conversation"]["speaker_a"]: "user", conv["conversation"]["speaker_b"]: "assistant"}
    for n, rows in sessions.items():
        start = rows[0][3]
        stamp = start.isoformat().replace("+00:00", "Z")
        blocks = []
        rel = None
        for dia_id, speaker, text, when in rows:
            t = when.isoformat().replace("+00:00", "Z")
            blocks.append(episodes.turn_block({"role": role.get(speaker, "user"), "time": t, "text": text}))
            where[(f"memory/episodes/{stamp[:10]}.md", t)] = dia_id
        rel = episodes.append(folder, stamp, f"session {conv['sample_id']}-{n}: {len(rows)} turns folded", blocks)
        assert rel.startswith("memory/episodes/")
    return Memory(folder), where


def reflect_conv(conv: dict, folder: Path, budget: int):
    mem, where = episode_root(conv, folder)
    t0 = time.perf_counter()
    res = mem.reflect(engine="offline", dry_run=True, budget=budget, now=NOW)
    took = time.perf_counter() - t0
    return mem, where, res, took


def main_turn(p: dict) -> dict:
    """The quote the proposal was made from: the one holding its summary sentence."""
    for q in p["evidence"]:
        if p["summary"] and p["summary"].rstrip(".!?") in " ".join(q["text"].split()):
            return q
    return p["evidence"][0]


def observations(conv: dict) -> dict:
    """{dia_id: [the text of every observation citing it]}."""
    import re

    out: dict = {}
    for per_session in conv.get("observation", {}).values():
        for facts in per_session.values():
            for text, ev in facts:
                for x in re.split(r"[;,\s]+", ev if isinstance(ev, str) else " ".join(ev)):
                    if x:
                        out.setdefault(x, []).append(text)
    return out


def kept_title(title: str, ids: set, obs: dict) -> bool:
    """Whether the title holds a content word of an observation citing one of the turns."""
    from memcli.search.tokenize import terms

    words = set(terms(title))
    return any(words & set(terms(text)) for i in ids for text in obs.get(i, ()))


def extraction(conv: dict, res: dict, where: dict) -> dict:
    ev = cited(conv)
    obs = observations(conv)
    n = sum(1 for _ in locomo.turns(conv))
    covered, main_hits, any_hits, quotes, kept = set(), 0, 0, [], 0
    for p in res["proposals"]:
        ids = {where.get((q["episode"], q["time"])) for q in p["evidence"]} - {None}
        covered |= ids
        quotes.append(len(p["evidence"]))
        m = main_turn(p)
        main_hits += where.get((m["episode"], m["time"])) in ev
        any_hits += bool(ids & ev)
        kept += kept_title(p["title"], ids, obs)
    k = len(res["proposals"])
    return {
        "turns": n,
        "cited": len(ev),
        "proposals": k,
        "per100": 100 * k / n,
        "recall": len(covered & ev) / len(ev),
        "precision": main_hits / max(k, 1),
        "precision_any": any_hits / max(k, 1),
        "quotes": statistics.mean(quotes) if quotes else 0.0,
        "kept": kept / max(k, 1),
    }


def after_reflection(conv: dict, folder: Path, res: dict, where: dict, proposals_root) -> dict:
    """any@5 with raw turns, then with the proposals accepted; memcli and BM25."""
    from memcli.recall import recall
    from memcli.store import inbox as store

    mem, last = locomo.write_root(conv, folder)
    now = (last + timedelta(days=1)).isoformat()
    raw_docs = {}
    for dia_id, speaker, text, when in locomo.turns(conv):
        title, summary = locomo.split_turn(text)
        raw_docs[locomo.turn_id(dia_id)] = (
            f"{title}\n{summary}\n{speaker.lower()}\n{speaker} ({locomo.day(when)}): {text}"
        )
    questions = []
    for qa in conv["qa"]:
        if qa.get("category") not in locomo.CATEGORIES:
            continue
        evidence = {e.strip() for ev in qa.get("evidence") or () for e in ev.split(";") if e.strip()}
        if evidence:
            questions.append((str(qa["question"]), evidence))

    def score(search, covers) -> float:
        found = 0
        for q, evidence in questions:
            got = set()
            for key in search(q)[:5]:
                got |= covers(key)
            found += bool(got & evidence)
        return found / max(len(questions), 1)

    def memcli_search(q):
        return [h.id for h in recall(mem.store, q, session="bench", scope="bench", limit=5, now=now).hits]

    back = {locomo.turn_id(d): d for d, *_ in locomo.turns(conv)}
    from_memory: dict = {}

    def covers(key):
        if key in back:
            return {back[key]}
        return from_memory.get(key, set())

    bm = locomo.BM25(raw_docs)
    out = {
        "questions": len(questions),
        "memcli_raw": score(memcli_search, covers),
        "bm25_raw": score(lambda q: bm.search(q, 5), covers),
    }
    # the proposals, accepted as they stand
    folder_inbox = store.folder(mem.root)
    folder_inbox.mkdir(parents=True, exist_ok=True)
    for p in res["proposed"]:
        (folder_inbox / f"{p}.md").write_bytes(store.path(proposals_root, p).read_bytes())
    accepted = mem.inbox.accept(all=True, now=NOW)
    docs = dict(raw_docs)
    for a in accepted:
        pr = store.read(mem.root, a["id"], archived=True)
        from_memory[a["memory"]] = {where.get((q.episode, q.time)) for q in pr.evidence} - {None}
        d = mem.get(a["memory"])
        docs[a["memory"]] = f"{d.title}\n{d.summary}\n{d.body}"
    bm2 = locomo.BM25(docs)
    out.update(
        accepted=len(accepted),
        memcli_reflected=score(memcli_search, covers),
        bm25_reflected=score(lambda q: bm2.search(q, 5), covers),
    )
    return out


def day_of_turns(n: int, folder: Path, memories: int = 0) -> float:
    """Seconds `Memory.reflect` takes over one episode file of n turns (a busy day), offline, in a
    root that holds `memories` memories besides (each proposal is checked against them)."""
    from memcli.core import Memory
    from memcli.usecases.init import init_root
    from memcli.store import episodes

    data = json.loads(locomo.DEFAULT_DATA.read_text(encoding="utf-8"))
    pool = [(speaker, text) for conv in data for _, speaker, text, _ in locomo.turns(conv)]
    init_root(folder)
    for s in range(0, n, 10):  # a fold every five rounds, as session.max_rounds does
        blocks = [
            episodes.turn_block(
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "time": f"2026-12-01T{8 + s // 60:02d}:{s % 60:02d}:{i:02d}Z",
                    "text": pool[(s + i) % len(pool)][1],
                }
            )
            for i in range(min(10, n - s))
        ]
        episodes.append(
            folder, f"2026-12-01T{8 + s // 60:02d}:{s % 60:02d}:30Z", "session day: 10 turns folded", blocks
        )
    mem = Memory(folder)
    for i in range(memories):
        speaker, text = pool[(7919 * i) % len(pool)]
        title, summary = locomo.split_turn(text)
        mem.remember(f"{title} ({i})", summary, body=text, tags=[speaker.lower()], now=NOW)
    if memories:
        from memcli.recall import run

        run(mem.store, "warm the search cache", session="", scope="", limit=1, threshold=0.3, only=["details"])
    t0 = time.perf_counter()
    res = mem.reflect(engine="offline", now=NOW)
    took = time.perf_counter() - t0
    assert res["turns"] == n, res["turns"]
    return took


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", type=Path, default=locomo.DEFAULT_DATA)
    ap.add_argument("--only", choices=("tune", "held_out", "all"), default="all")
    ap.add_argument("--budgets", type=int, nargs="*", default=[5, 10, 15, 20, 30, 50])
    ap.add_argument("--no-recall", action="store_true", help="skip recall after reflection")
    ap.add_argument("--speed", action="store_true", help="also time reflect over a 500-turn day (5 runs)")
    ap.add_argument("--show", type=int, default=0, help="print this many proposals and misses (tune split only)")
    args = ap.parse_args(argv)
    from memcli.config import SCHEMA

    default_budget = SCHEMA["reflect.budget"][0]
    split = json.loads(SPLIT.read_text(encoding="utf-8"))
    data = {c["sample_id"]: c for c in json.loads(args.data.read_text(encoding="utf-8"))}
    groups = {"tune": split["tune"], "held_out": split["held_out"]}
    if args.only != "all":
        groups = {args.only: groups[args.only]}
    groups_all = dict(groups, all=[c for g in groups.values() for c in g]) if args.only == "all" else groups
    budgets = sorted(set(args.budgets) | {default_budget})
    figures: dict = {}
    recall_rows: dict = {}
    with tempfile.TemporaryDirectory(prefix="memcli-reflect-") as tmp:
        for sid in [c for g in groups.values() for c in g]:
            conv = data[sid]
            for b in budgets:
                mem, where, res, took = reflect_conv(conv, Path(tmp) / f"{sid}-{b}", b)
                figures[(sid, b)] = {**extraction(conv, res, where), "seconds": took}
                if b == default_budget and not args.no_recall:
                    real = mem.reflect(engine="offline", budget=b, now=NOW)
                    recall_rows[sid] = after_reflection(conv, Path(tmp) / f"{sid}-store", real, where, mem.root)
                if args.show and b == default_budget and sid in split["tune"]:
                    ev = cited(conv)
                    for p in res["proposals"][: args.show]:
                        m = main_turn(p)
                        print(("HIT " if where.get((m["episode"], m["time"])) in ev else "    ") + p["summary"][:110])
        print(
            f"LoCoMo dev, offline engine; tuned on {', '.join(split['tune'])}, held out "
            f"{', '.join(split['held_out'])} (benchmarks/reflect_split.json)"
        )
        print(
            f"{'split':9} {'budget':>6} {'turns':>5} {'cited':>5} {'props':>5} {'per100':>6} {'recall':>6} "
            f"{'prec':>5} {'p.any':>5} {'quotes':>6} {'kept':>5}"
        )
        rows = []
        for name, sids in groups_all.items():
            for b in budgets:
                f = [figures[(s, b)] for s in sids]
                turns, cites, props = (sum(x[k] for x in f) for k in ("turns", "cited", "proposals"))
                row = {
                    "split": name,
                    "budget": b,
                    "turns": turns,
                    "cited": cites,
                    "proposals": props,
                    "per100": 100 * props / turns,
                    "recall": sum(x["recall"] * x["cited"] for x in f) / cites,
                    "precision": sum(x["precision"] * x["proposals"] for x in f) / max(props, 1),
                    "precision_any": sum(x["precision_any"] * x["proposals"] for x in f) / max(props, 1),
                    "quotes": sum(x["quotes"] * x["proposals"] for x in f) / max(props, 1),
                    "kept": sum(x["kept"] * x["proposals"] for x in f) / max(props, 1),
                }
                rows.append(row)
                print(
                    f"{name:9} {b:>6} {turns:>5} {cites:>5} {props:>5} {row['per100']:>6.1f} {row['recall']:>6.3f} "
                    f"{row['precision']:>5.2f} {row['precision_any']:>5.2f} {row['quotes']:>6.2f} {row['kept']:>5.2f}"
                )
        if recall_rows:
            print(f"\nrecall after reflection (budget {default_budget}, every proposal accepted as it stands), any@5:")
            print(
                f"{'split':9} {'questions':>9} {'accepted':>8} {'memcli raw':>10} {'+accepted':>9} "
                f"{'BM25 raw':>8} {'+accepted':>9}"
            )
            for name, sids in groups_all.items():
                rr = [recall_rows[s] for s in sids]
                nq = sum(r["questions"] for r in rr)

                def avg(k):
                    return sum(r[k] * r["questions"] for r in rr) / nq

                print(
                    f"{name:9} {nq:>9} {sum(r['accepted'] for r in rr):>8} {avg('memcli_raw'):>10.3f} "
                    f"{avg('memcli_reflected'):>9.3f} {avg('bm25_raw'):>8.3f} {avg('bm25_reflected'):>9.3f}"
                )
        secs = [figures[(s, default_budget)]["seconds"] for g in groups.values() for s in g]
        print(f"\nreflect --dry-run per conversation (in process): {', '.join(f'{s:.2f}s' for s in secs)}")
        if args.speed:
            for memories in (0, 300):
                runs = [day_of_turns(500, Path(tmp) / f"day-{memories}-{i}", memories) for i in range(5)]
                print(
                    f"reflect over a 500-turn day (one episode file, 50 sections), {memories} memories, in "
                    f"process: median {statistics.median(runs):.3f}s (min {min(runs):.3f}, max {max(runs):.3f})"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Reflection on working sessions: does it propose the memories a person would keep, and does the
next session's question then find them first?

    python benchmarks/reflect_scenarios.py                  # the dev split, offline engine and scripted agent
    python benchmarks/reflect_scenarios.py --split fresh    # the fresh split (scored once, at the end)
    python benchmarks/reflect_scenarios.py --split fresh-2  # the second fresh split (reflect_scenarios/fresh-2.json)
    python benchmarks/reflect_scenarios.py --show           # every proposal's id, title and summary

Each session of benchmarks/reflect_scenarios/scenarios.json is recorded turn by turn in a root of
its own (`Memory.session().add`, then `clear`: the turns land in the episode log as `memcli session
add` leaves them), then reflected on by
- offline: `Memory.reflect()`, the engine `memcli reflect` runs by default;
- agent: the scripted agent of reflect_scenarios/agent.json through `reflect_material` and
  `propose` (the MCP tools' flow), its evidence turned into the material's refs.
Every proposal is then accepted as it stands (`inbox accept --all`) and each lesson's questions are
asked through recall as shipped, in a new session, with the raw episode still in the store.

Figures, per engine:
- lessons: the share of lessons a proposal covers (it quotes one of the lesson's key turns: the fix,
  rule or decision as stated);
- one each: the share of covered lessons that exactly one proposal covers (not split across several);
- noise: proposals that cover no lesson or whose own statement is a confirmation or small talk;
- cut: proposals whose title or summary stops inside an identifier the turns name (`order.` of
  `order.created`);
- tagged: the share of proposals covering a lesson whose tags hold a word of the lesson's subject
  (its "tags", when it lists them) and no word of the engine's own (a type or cue such as `decision`,
  `cause`, or an abbreviation such as `e.g`);
- kept: the share of proposals covering a lesson whose title a reviewer would keep: it holds a word
  of each of the lesson's word groups (the problem and the fix), stems compared;
- first: the share of questions whose first hit is a memory made from a proposal covering the
  lesson (the raw episode stays in the store); BM25 beside it: plain BM25 over the episode sections
  and the accepted memories, first hit.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402  (BM25)

DATA = HERE / "reflect_scenarios" / "scenarios.json"
AGENT = HERE / "reflect_scenarios" / "agent.json"
FRESH2 = HERE / "reflect_scenarios" / "fresh-2.json"  # scenarios and the scripted agent's proposals
NOT_SUBJECT = {
    "e.g",
    "i.e",
    "etc",
    "decision",
    "decided",
    "fix",
    "cause",
    "lesson",
    "rule",
    "preference",
    "fact",
    "note",
}
START = "2026-12-01T09:00:00Z"
NOW = "2026-12-01T18:00:00Z"
ASKED = "2026-12-02T09:00:00Z"


def stamp(i: int) -> str:
    return f"2026-12-01T09:{i // 60:02d}:{i % 60:02d}Z"


def record(folder: Path, sc: dict):
    """A root whose episode log holds the session, as the agent recorded it."""
    from memcli.core import Memory
    from memcli.usecases.init import init_root

    init_root(folder)
    if sc.get("config"):  # e.g. session.max_rounds: 1, each round folded into a section of its own
        with open(folder / "memcli.yaml", "a", encoding="utf-8") as f:
            f.write(sc["config"])
    m = Memory(folder)
    s = m.session(sc["name"])
    for i, (role, text) in enumerate(sc["turns"]):
        s.add(role, text, now=stamp(i * 20))
    s.clear(now=stamp(len(sc["turns"]) * 20))
    return m


def where_of(feed: dict, sc: dict) -> dict:
    """{(ref, n): index of the session's turn} for the material's turns (in the order recorded)."""
    flat = [(i["ref"], t["n"], t["text"]) for i in feed["items"] for t in i["turns"]]
    out, at = {}, 0
    for ref, n, text in flat:
        while at < len(sc["turns"]) and sc["turns"][at][1] != text:
            at += 1
        if at < len(sc["turns"]):
            out[(ref, n)] = at
            at += 1
    return out


def turn_of(evidence_quote, sc: dict) -> int | None:
    for i, (_, text) in enumerate(sc["turns"]):
        if evidence_quote["text"] == text:
            return i
    return None


def run_engine(m, sc: dict, engine: str, agent: dict) -> list:
    """The proposals written to the inbox, as dicts, each with "turns": the session's turn indices."""
    from memcli.store import inbox as store

    if engine == "offline":
        m.reflect(now=NOW)
    else:
        feed = m.reflect_material().to_dict()
        back = {v: k for k, v in where_of(feed, sc).items()}
        objs = []
        for p in agent.get(sc["name"], []):
            obj = {k: v for k, v in p.items() if k != "turns"}
            obj["evidence"] = [{"ref": back[t][0], "turn": back[t][1]} for t in p["turns"] if t in back]
            objs.append(obj)
        m.propose(objs, feed["mark"], now=NOW)
    out = []
    for p in store.pending(m.root)[0]:
        d = p.to_dict()
        d["turns"] = sorted({t for t in (turn_of(q, sc) for q in d["evidence"]) if t is not None})
        d["own"] = own_turn(d, sc)
        out.append(d)
    return out


def own_turn(p: dict, sc: dict) -> int | None:
    """The turn a proposal states: the one holding its summary, else its first quoted turn."""
    said = " ".join(p["summary"].split()).rstrip(".!?。！？")
    for t in p["turns"]:
        if said and said in " ".join(sc["turns"][t][1].split()):
            return t
    return p["turns"][0] if p["turns"] else None


def title_kept(title: str, groups: list) -> bool:
    from memcli.search.tokenize import terms

    have, low = set(terms(title)), title.lower()

    def holds(word: str) -> bool:
        ws = set(terms(word))
        return bool(ws) and ws <= have or word.lower() in low

    return all(any(holds(w) for w in g) for g in groups)


def cuts(p: dict, sc: dict) -> bool:
    """True when the proposal's title or summary ends inside a dotted identifier of the turns."""
    import re

    said = " ".join(text for _, text in sc["turns"])
    names = set(re.findall(r"[\w*/-]+(?:\.[\w*/-]+)+", said))
    for field in (p["title"], p["summary"]):
        last = (field.split() or [""])[-1].rstrip("…")
        if any(
            n != last.rstrip(".") and (n.startswith(last) and last.endswith(".") or n.startswith(last + "."))
            for n in names
        ):
            return True
    return False


def tagged(p: dict, les: dict) -> bool:
    tags = {t.lower() for t in p["tags"]}
    subject = {t.lower() for t in les.get("tags", [])}
    return not tags & NOT_SUBJECT and (not subject or bool(tags & subject))


def score(sc: dict, props: list, m) -> dict:
    from memcli.recall import recall

    lessons = sc["lessons"]
    covering = [[p for p in props if set(p["turns"]) & set(les["key"])] for les in lessons]
    noise = [
        p
        for p in props
        if not any(set(p["turns"]) & set(les["turns"]) for les in lessons) or p["own"] in sc.get("noise", [])
    ]
    kept = [title_kept(p["title"], les["title_words"]) for les, cov in zip(lessons, covering) for p in cov]
    tags = [tagged(p, les) for les, cov in zip(lessons, covering) for p in cov]
    accepted = m.inbox.accept(all=True, now=NOW)
    memory_of = {a["id"]: a["memory"] for a in accepted}
    from_lesson = [{memory_of[p["id"]] for p in cov if p["id"] in memory_of} for cov in covering]
    docs = {}
    for path in sorted((m.root / "memory" / "episodes").glob("*.md")):
        for n, part in enumerate(path.read_text(encoding="utf-8").split("\n## ")):
            docs[f"episode:{path.stem}:{n}"] = part
    for mid in memory_of.values():
        d = m.get(mid)
        docs[mid] = f"{d.title}\n{d.summary}\n{' '.join(d.tags)}\n{' '.join(d.aliases)}\n{d.body}"
    bm = locomo.BM25(docs)
    asked = []
    for les, mine in zip(lessons, from_lesson):
        for q in les["questions"]:
            hits = recall(m.store, q["q"], session="next", scope="next", limit=5, now=ASKED).hits
            first = hits[0].id if hits else None
            top = bm.search(q["q"], 1)
            asked.append(
                {
                    "q": q["q"],
                    "lang": q["lang"],
                    "first": first in mine,
                    "bm25": bool(top) and top[0] in mine,
                    "got": first,
                    "episode_first": bool(hits) and hits[0].path.startswith("memory/episodes/"),
                }
            )
    return {
        "lessons": len(lessons),
        "covered": sum(bool(c) for c in covering),
        "one_each": sum(len(c) == 1 for c in covering),
        "proposals": len(props),
        "noise": len(noise),
        "kept": sum(kept),
        "kept_of": len(kept),
        "cut": sum(cuts(p, sc) for p in props),
        "tagged": sum(tags),
        "asked": asked,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "fresh", "fresh-2", "all"), default="dev")
    ap.add_argument("--engines", nargs="*", default=["offline", "agent"])
    ap.add_argument("--show", action="store_true", help="print each proposal and each question's first hit")
    args = ap.parse_args(argv)
    fresh2 = json.loads(FRESH2.read_text(encoding="utf-8"))
    scenarios = [
        s
        for s in json.loads(DATA.read_text(encoding="utf-8"))["scenarios"] + fresh2["scenarios"]
        if args.split == "all" or s["split"] == args.split
    ]
    agent = {**json.loads(AGENT.read_text(encoding="utf-8"))["proposals"], **fresh2["proposals"]}
    rows = {}
    with tempfile.TemporaryDirectory(prefix="memcli-scenarios-") as tmp:
        for engine in args.engines:
            rows[engine] = []
            for sc in scenarios:
                m = record(Path(tmp) / f"{engine}-{sc['name']}", sc)
                props = run_engine(m, sc, engine, agent)
                r = score(sc, props, m)
                rows[engine].append(r)
                if args.show:
                    print(f"[{engine}] {sc['name']}")
                    for p in props:
                        target = f" -> {p['target']}" if p["target"] else ""
                        print(
                            f"   {p['id']}{target}\n      {p['title']}\n      = {p['summary']}\n      "
                            f"tags {p['tags']} aliases {p['aliases']} turns {p['turns']}"
                        )
                    for a in r["asked"]:
                        print(f"   {'FIRST' if a['first'] else '     '} {a['q']}  ->  {a['got']}")
    print(
        f"working sessions, split {args.split}: {len(scenarios)} sessions, "
        f"{sum(len(s['turns']) for s in scenarios)} turns, {sum(len(s['lessons']) for s in scenarios)} lessons, "
        f"{sum(len(les['questions']) for s in scenarios for les in s['lessons'])} questions"
    )
    print(
        f"{'engine':8} {'lessons':>7} {'one each':>8} {'props':>5} {'noise':>5} {'kept':>5} "
        f"{'first':>5} {'en':>5} {'zh':>5} {'BM25':>5} {'cut':>4} {'tagged':>6}"
    )
    for engine, rr in rows.items():
        n = sum(r["lessons"] for r in rr)
        cov = sum(r["covered"] for r in rr)
        asked = [a for r in rr for a in r["asked"]]

        def share(xs):
            return sum(xs) / max(len(xs), 1)

        print(
            f"{engine:8} {cov / n:>7.2f} {sum(r['one_each'] for r in rr) / max(cov, 1):>8.2f} "
            f"{sum(r['proposals'] for r in rr):>5} {sum(r['noise'] for r in rr):>5} "
            f"{sum(r['kept'] for r in rr) / max(sum(r['kept_of'] for r in rr), 1):>5.2f} "
            f"{share([a['first'] for a in asked]):>5.2f} {share([a['first'] for a in asked if a['lang'] == 'en']):>5.2f} "
            f"{share([a['first'] for a in asked if a['lang'] == 'zh']):>5.2f} {share([a['bm25'] for a in asked]):>5.2f} "
            f"{sum(r['cut'] for r in rr):>4} {sum(r['tagged'] for r in rr) / max(sum(r['kept_of'] for r in rr), 1):>6.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

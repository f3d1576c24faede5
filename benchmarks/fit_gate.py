"""Fit the confidence of recall (``memcli.recall.confidence``): a logistic regression over the
features of every hit recall rates, on the dev sets only, and the threshold of the injection gate.

    python benchmarks/fit_gate.py                    # fit, print the dev figures, write memcli/recall/gate.json
    python benchmarks/fit_gate.py --dry-run          # fit and print, write nothing
    python benchmarks/fit_gate.py --ablate           # each feature left out in turn, judged leaving one set out
    python benchmarks/fit_gate.py --without echo     # a rule of recall switched off while the rows are gathered
    python benchmarks/fit_gate.py --reliability conversation-fresh   # predicted vs observed, per decile

Dev sets (the rows): benchmarks/bilingual `dev`, benchmarks/newuser, benchmarks/recall_eval (all
tuned on before), benchmarks/conversation/dev (the dialogue so far, the last turn alone, and the
dialogue after the turns of two other conversations, as a long session sends it; its sessions),
benchmarks/inject `dev` (prompts that should inject nothing) and LoCoMo's `fit` part. Each query
asks recall for its best 10 (the lexical layers; `--semantic` also fits the weight of a match by
meaning with the extra installed); every candidate it rated is a row, labelled 1 when it is the
memory (or turn) that answers. Every query weighs the same; so does every set, whatever its size.

The threshold is the lowest at which the best hit, when it reaches it, is the right one for at
least PRECISION of the dev queries (those no memory answers count as wrong). `strong` is where that
share reaches STRONG_PRECISION. numpy is needed here only (the test extra), never by recall.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

NOW = "2026-12-01T00:00:00Z"
GATE = HERE.parent / "memcli" / "recall" / "gate.json"
PRECISION = 0.8
STRONG_PRECISION = 0.95
L2 = 1.0  # ridge on the weights (not the bias), in units of one query's weight
LIMIT = 10


# ---------- the dev sets: (set, root, query, expected ids (empty: none answers), session) ----------


def _yaml(path: Path):
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _root_copy(src: Path, tmp: Path, name: str) -> Path:
    """A memory root in ``tmp`` holding ``src``'s memories, its index rebuilt (the sets stay untouched)."""
    from memcli.core import Memory
    from memcli.usecases.init import init_root

    root = tmp / name
    init_root(root)
    for f in (src / "memory").glob("*.md"):
        shutil.copy(f, root / "memory" / f.name)
    Memory(root).rebuild_index()
    return root


def probes(path: Path) -> list:
    from importlib import util

    spec = util.spec_from_file_location("conversation_run", HERE / "conversation" / "run.py")
    module = util.module_from_spec(spec)
    sys.modules["conversation_run"] = module
    spec.loader.exec_module(module)
    return module.probes(path)


def sessions(tmp: Path) -> list:
    """The dev sessions recorded into a copy of the dev root, one session each; the expected turn
    named by the id recall gives it (a turn still in the session, or the episode log and the
    session's summary it folded into). Set `sessions-asked`: the same, after the question was
    recorded as the user's last turn, as an agent loop does before it recalls."""
    from memcli.core import Memory

    out = []
    for sc in _yaml(HERE / "conversation" / "dev" / "sessions.yaml")["sessions"]:
        root = _root_copy(HERE / "conversation" / "dev", tmp, f"session-{sc['id']}")
        (root / "memcli.yaml").write_text(f"session:\n  max_rounds: {sc['max_rounds']}\n", encoding="utf-8")
        mem = Memory(root)
        for n, a in enumerate(sc["asks"]):
            for asked in (False, True):
                name = f"{sc['id']}-{n}-{int(asked)}"
                turns = [next(iter(t.items())) for t in sc["turns"]] + ([("user", a["q"])] if asked else [])
                folded = 0
                for i, (role, text) in enumerate(turns):
                    folded += mem.session(name).add(role, str(text), now=f"2026-12-01T09:{i:02d}:00Z")["folded"]
                expect = set()
                for e in a["expect"] if isinstance(a["expect"], list) else [a["expect"]]:
                    if isinstance(e, int):  # a folded turn is in the episode log and the session's summary
                        expect |= {f"turn-{e - folded + 1}"} if e >= folded else {"episode:2026-12-01", "summary"}
                    elif e:
                        expect.add(e)
                out.append(("sessions-asked" if asked else "sessions", root, a["q"], expect, name))
    return out


def dev_sets(tmp: Path, only: set | None = None) -> list:
    rows = []

    def want(name: str) -> bool:
        return only is None or name in only

    if want("bilingual-dev"):
        for q in _yaml(HERE / "bilingual" / "queries-dev.yaml")["queries"]:
            rows.append(("bilingual-dev", HERE / "bilingual", q["q"], {q["expect"]} - {None}, "default"))
    if want("newuser"):
        for q in _yaml(HERE / "newuser" / "queries-newuser.yaml")["queries"]:
            rows.append(("newuser", HERE / "newuser", q["q"], {q["expect"]} - {None}, "default"))
    if want("recall-eval"):
        root = _root_copy(HERE / "recall_eval", tmp, "recall-eval")
        for q in _yaml(HERE / "recall_eval" / "queries.yaml")["queries"]:
            rows.append(("recall-eval", root, q["q"], {q["expect"]} - {None}, "default"))
    if want("conversation") or want("conversation-long"):
        found = probes(HERE / "conversation" / "dev")
        for i, p in enumerate(found):
            if want("conversation"):
                for mode in ("dialogue", "last"):
                    rows.append(
                        (
                            f"conversation-{mode}",
                            HERE / "conversation" / "dev",
                            p[mode],
                            {p["expect"]} - {None},
                            "default",
                        )
                    )
            if want("conversation-long"):
                others = [q for q in found if q["id"] != p["id"]]
                pad = [others[(7 * i) % len(others)]["dialogue"], others[(7 * i + 3) % len(others)]["dialogue"]]
                rows.append(
                    (
                        "conversation-long",
                        HERE / "conversation" / "dev",
                        "\n".join([*pad, p["dialogue"]]),
                        {p["expect"]} - {None},
                        "default",
                    )
                )
    if want("inject-dev"):
        talk = {
            "conversation/dev": [p["dialogue"] for p in probes(HERE / "conversation" / "dev") if p["expect"]],
            "newuser": [q["q"] for q in _yaml(HERE / "newuser" / "queries-newuser.yaml")["queries"] if q["expect"]],
            "bilingual": [q["q"] for q in _yaml(HERE / "bilingual" / "queries-dev.yaml")["queries"] if q["expect"]],
        }
        for i, p in enumerate(_yaml(HERE / "inject" / "prompts-dev.yaml")["prompts"]):
            root = (HERE / p["root"]).resolve()
            rows.append(("inject-dev", root, p["prompt"], set(), "default"))
            # after turns on something the store holds, as the hook sends it: the prompt changes the topic
            for j in (0, 1):
                said = talk[p["root"]][(5 * i + 11 * j) % len(talk[p["root"]])]
                before = said.split("\n")[-2:]
                rows.append(("inject-dev-after", root, "\n".join([*before, p["prompt"]]), set(), "default"))
    if want("sessions"):
        rows += sessions(tmp)
    if want("locomo-fit"):
        rows += locomo_part("fit", tmp)
    return rows


def locomo_part(part: str, tmp: Path) -> list:
    import locomo

    if not locomo.DEFAULT_DATA.is_file():
        print(f"LoCoMo data not found at {locomo.DEFAULT_DATA}: left out", file=sys.stderr)
        return []
    data = [c for c in _yaml_json(locomo.DEFAULT_DATA) if c.get("sample_id") in locomo.PARTS[part]]
    rows = []
    for ci, conv in enumerate(data):
        mem, _ = locomo.write_root(conv, tmp / f"locomo-{part}-{ci}")
        for qa in locomo.questions(conv):
            rows.append(
                (f"locomo-{part}", Path(mem.root), str(qa["question"]), locomo.evidence_of(qa), "locomo-benchmark")
            )
    return rows


def _yaml_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


# ---------- gathering rows ----------


def gather(queries: list, semantic: bool = False) -> list:
    """(set, query index, label, features, candidate kind, hit id) for every candidate rated."""
    from locomo import semantic_extra

    from memcli.core import Memory
    from memcli.recall.cascade import run
    from memcli.recall.confidence import threshold

    out = []
    mems: dict = {}
    for qi, (name, root, q, expect, session) in enumerate(queries):
        mem = mems.get(root) or mems.setdefault(root, Memory(root))
        rated: list = []
        now = NOW if not name.startswith("locomo") else "2030-01-01T00:00:00Z"
        with semantic_extra(semantic):
            run(
                mem.store,
                q,
                session=session,
                scope=session,
                limit=LIMIT,
                threshold=threshold(),
                now=now,
                rated=rated,
                policy="candidates",
            )
        for _, x, c in rated:
            out.append((name, qi, int(c.hit.id in expect), x, c.kind, c.hit.id))
    return out


# ---------- the model ----------


def design(rows: list, features: list) -> tuple:
    import numpy as np

    from memcli.recall.confidence import FEATURES

    cols = [FEATURES.index(f) for f in features]
    X = np.array([[r[3][i] for i in cols] for r in rows], dtype=float)
    y = np.array([r[2] for r in rows], dtype=float)
    return X, y


def weights_of(rows: list):
    """Each query weighs 1, shared by its rows; each set weighs the same in all."""
    import numpy as np
    from collections import Counter

    per_query = Counter(r[1] for r in rows)
    sets = Counter(r[0] for r in {(r[0], r[1]): r for r in rows}.values())
    mean = sum(sets.values()) / len(sets)
    return np.array([mean / sets[r[0]] / per_query[r[1]] for r in rows])


def fit(X, y, w, l2: float = L2, iters: int = 60):
    """Weighted logistic regression by Newton's method; returns (bias, weights)."""
    import numpy as np

    A = np.hstack([np.ones((len(X), 1)), X])
    beta = np.zeros(A.shape[1])
    reg = np.eye(A.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(A @ beta, -40, 40)))
        g = A.T @ (w * (p - y)) + reg @ beta
        H = (A * (w * p * (1 - p))[:, None]).T @ A + reg + 1e-9 * np.eye(A.shape[1])
        step = np.linalg.solve(H, g)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(beta[0]), beta[1:]


def predict(X, bias, coef):
    import numpy as np

    return 1 / (1 + np.exp(-np.clip(bias + X @ coef, -40, 40)))


def tops(rows: list, p) -> dict:
    """query -> (best probability, whether that hit answers, whether any memory answers)."""
    best: dict = {}
    answerable: dict = {}
    for r, pr in zip(rows, p):
        key = r[1]
        answerable[key] = answerable.get(key, False) or bool(r[2])
        if key not in best or pr > best[key][0]:
            best[key] = (float(pr), bool(r[2]))
    return {k: (v[0], v[1], answerable[k]) for k, v in best.items()}


def gate_figures(top: dict, t: float, answerable_total: int) -> tuple[float, float]:
    """(answered: the share of answerable queries whose best hit reaches t; precision: the share of
    queries reaching t whose best hit is right)."""
    given = [v for v in top.values() if v[0] >= t]
    right = sum(1 for v in given if v[1])
    answered = sum(1 for v in given if v[2]) / max(answerable_total, 1)
    return answered, (right / len(given) if given else 1.0)


def choose(top: dict, answerable_total: int, precision: float) -> float:
    """The lowest threshold at which the precision is at least ``precision``."""
    grid = [i / 100 for i in range(5, 100)]
    return next((t for t in grid if gate_figures(top, t, answerable_total)[1] >= precision), 0.99)


def loglik(y, p, w) -> float:
    import numpy as np

    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-(w * (y * np.log(p) + (1 - y) * np.log(1 - p))).sum() / w.sum())


ANSWERABLE: dict = {}  # set -> how many of its queries a memory answers (with candidates or not)


def answerable_of(rows: list) -> int:
    return sum(ANSWERABLE.get(name, 0) for name in {r[0] for r in rows})


def evaluate(rows: list, p) -> dict:
    """Figures on these rows with probabilities ``p``: top-1 (answerable queries whose best hit is
    right), log loss, answered and precision at the 0.5 gate."""
    import numpy as np

    top = tops(rows, p)
    answerable = answerable_of(rows)
    y = np.array([r[2] for r in rows], dtype=float)
    w = weights_of(rows)
    answered, precision = gate_figures(top, 0.5, answerable)
    by: dict = {}
    for r, pr in zip(rows, p):
        by.setdefault(r[1], []).append((-pr, r[5], r[2]))
    five = sum(1 for hits in by.values() if any(ok for _, _, ok in sorted(hits)[:5]))
    return {
        "queries": len(top),
        "top1": round(sum(1 for v in top.values() if v[1]) / max(answerable, 1), 3),
        "any@5": round(five / max(answerable, 1), 3),
        "logloss": round(loglik(y, np.asarray(p), w), 4),
        "answered@.5": round(answered, 3),
        "precision@.5": round(precision, 3),
        "given@.5": sum(1 for v in top.values() if v[0] >= 0.5),
    }


def leave_one_set_out(rows: list, features: list) -> dict:
    """Fit on every set but one, score that one; the held-out probabilities pooled."""
    import numpy as np

    p = np.zeros(len(rows))
    names = sorted({r[0] for r in rows})
    for name in names:
        train = [r for r in rows if r[0] != name]
        X, y = design(train, features)
        bias, coef = fit(X, y, weights_of(train))
        idx = [i for i, r in enumerate(rows) if r[0] == name]
        Xh, _ = design([rows[i] for i in idx], features)
        p[idx] = predict(Xh, bias, coef)
    return evaluate(rows, p)


def reliability(rows: list, p, bins: int = 10) -> list:
    """Per decile of predicted probability over the hits recall lists (each query's best 5):
    (range, hits, mean predicted, share that answer)."""
    order: dict = {}
    for i, r in enumerate(rows):
        order.setdefault(r[1], []).append(i)
    listed = [i for idx in order.values() for i in sorted(idx, key=lambda i: -p[i])[:5]]
    out = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [i for i in listed if lo <= p[i] < hi or (b == bins - 1 and p[i] == 1.0)]
        if inside:
            out.append(
                (
                    f"{lo:.1f}–{hi:.1f}",
                    len(inside),
                    sum(p[i] for i in inside) / len(inside),
                    sum(rows[i][2] for i in inside) / len(inside),
                )
            )
    return out


# ---------- rules of recall switched off while gathering (``--without``) ----------


def without(rule: str) -> None:
    """Switch a rule of recall off for this process, to measure what it is worth."""
    if rule == "echo":  # the session and the episode log keep the turns holding the question
        from memcli.recall import details, layer, session

        for m in (layer, session, details):
            m.holds_query = lambda text, query: False
    elif rule == "asking-episodes":  # and in the episode log
        from memcli.search import docs

        docs.without_questions = lambda text: text
    else:
        raise SystemExit(f"unknown rule {rule!r}: echo, asking-episodes")


# ---------- main ----------


def main(argv: list | None = None) -> int:

    from memcli.recall.confidence import FEATURES, KINDS

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="write no gate.json")
    ap.add_argument("--ablate", action="store_true", help="each feature left out in turn")
    ap.add_argument("--without", action="append", default=[], help="a rule switched off: echo, asking-episodes")
    ap.add_argument("--sets", help="comma-separated dev sets (default: all)")
    ap.add_argument("--drop", action="append", default=[], help="a feature left out of the model")
    ap.add_argument("--semantic", action="store_true", help="also fit the match by meaning (the extra installed)")
    ap.add_argument(
        "--recent", metavar="R,FLOOR", help="another weight of a query's earlier lines (search.query.RECENT)"
    )
    ap.add_argument(
        "--reliability", help="predicted vs observed per decile on a set (conversation-fresh, newuser2, locomo-held)"
    )
    args = ap.parse_args(argv)
    for rule in args.without:
        without(rule)
    if args.recent:
        from memcli.search import query

        query.RECENT, query.RECENT_FLOOR = (float(x) for x in args.recent.split(","))
    lexical = [f for f in FEATURES if f not in ("semantic", "meaning") and f not in args.drop]
    with tempfile.TemporaryDirectory(prefix="memcli-fit-") as tmp:
        if args.reliability:
            return show_reliability(args.reliability, Path(tmp))
        queries = dev_sets(Path(tmp), set(args.sets.split(",")) if args.sets else None)
        rows = gather(queries)
        for name, _, _, expect, _ in queries:
            ANSWERABLE[name] = ANSWERABLE.get(name, 0) + bool(expect)
        print(
            f"{len(queries)} dev queries, {len(rows)} rated candidates; sets: "
            + ", ".join(sorted({r[0] for r in rows}))
        )
        X, y = design(rows, lexical)
        w = weights_of(rows)
        bias, coef = fit(X, y, w)
        p = predict(X, bias, coef)
        print(
            "fitted:",
            json.dumps(dict(zip(["bias", *lexical], [round(bias, 3), *map(lambda c: round(float(c), 3), coef)]))),
        )
        print("in sample:", evaluate(rows, p))
        print("leaving one set out:", leave_one_set_out(rows, lexical))
        for name in sorted({r[0] for r in rows}):
            idx = [i for i, r in enumerate(rows) if r[0] == name]
            print(f"  {name}: {evaluate([rows[i] for i in idx], p[idx])}")
        if args.ablate:
            base = leave_one_set_out(rows, lexical)
            print(f"ablation (leaving one set out; all features: {base})")
            for f in lexical:
                got = leave_one_set_out(rows, [g for g in lexical if g != f])
                print(
                    f"  without {f:10} "
                    + "  ".join(
                        f"{k} {got[k]} ({got[k] - base[k]:+.3f})"
                        for k in ("top1", "logloss", "answered@.5", "precision@.5")
                    )
                )
        top = tops(rows, p)
        answerable = answerable_of(rows)
        threshold = choose(top, answerable, PRECISION)
        strong = max(threshold, choose(top, answerable, STRONG_PRECISION))
        a, pr = gate_figures(top, threshold, answerable)
        print(f"threshold {threshold:.2f}: answered {a:.3f} at precision {pr:.3f} (dev); strong {strong:.2f}")
        weights = dict(zip(lexical, (round(float(c), 4) for c in coef)))
        if args.semantic:
            weights.update(fit_meaning(queries, lexical, bias, coef))
        model = {
            "fitted": "python benchmarks/fit_gate.py" + (" --semantic" if args.semantic else ""),
            "features": list(weights),
            "weights": list(weights.values()),
            "bias": round(bias, 4),
            "threshold": threshold,
            "strong": strong,
        }
        if not args.dry_run:
            GATE.write_text(json.dumps(model, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"wrote {GATE.relative_to(HERE.parent)}")
        assert set(KINDS) <= set(FEATURES)
    return 0


def fit_meaning(queries: list, lexical: list, bias: float, coef) -> dict:
    """The weight of a match by meaning: the lexical model held fixed, a logistic regression of the
    semantic layer's hits on their kind and fused score (the extra must be installed)."""
    import numpy as np

    from memcli.search.embed import available

    if not available():
        raise SystemExit("--semantic needs the semantic extra installed")
    rows = [r for r in gather(queries, semantic=True) if r[4] == "semantic"]
    X, y = design(rows, lexical)
    offset = bias + X @ coef
    M, _ = design(rows, ["semantic", "meaning"])
    w = weights_of(rows)

    def newton(A):
        beta = np.zeros(A.shape[1])
        for _ in range(60):
            p = 1 / (1 + np.exp(-np.clip(offset + A @ beta, -40, 40)))
            g = A.T @ (w * (p - y)) + L2 * beta
            H = (A * (w * p * (1 - p))[:, None]).T @ A + L2 * np.eye(A.shape[1])
            beta -= np.linalg.solve(H, g)
        return beta

    beta = newton(np.hstack([np.ones((len(M), 1)), M[:, 1:]]))
    if beta[1] < 0:
        # a closer meaning never lowers the confidence: a negative weight would rank the matches
        # by meaning backwards (the fused score repeats the lexical relevance the model already
        # holds); the weight is then 0 and the kind alone is fitted
        beta = np.array([newton(np.ones((len(M), 1)))[0], 0.0])
    print(f"meaning: {len(rows)} hits by meaning, weights semantic {beta[0]:.3f}, meaning {beta[1]:.3f}")
    return {"semantic": round(float(beta[0]), 4), "meaning": round(float(beta[1]), 4)}


def show_reliability(name: str, tmp: Path) -> int:
    """Predicted vs observed per decile with the shipped model, on a set scored once (fresh)."""
    from memcli.recall.confidence import model

    if name == "conversation-fresh":
        found = probes(HERE / "conversation" / "fresh")
        queries = [
            (f"conversation-{m}", HERE / "conversation" / "fresh", p[m], {p["expect"]} - {None}, "default")
            for p in found
            for m in ("dialogue", "last")
        ]
    elif name == "newuser2":
        queries = [
            ("newuser2", HERE / "newuser2", q["q"], {q["expect"]} - {None}, "default")
            for q in _yaml(HERE / "newuser2" / "queries-newuser2.yaml")["queries"]
        ]
    elif name == "locomo-held":
        queries = locomo_part("held", tmp)
    else:
        raise SystemExit("--reliability takes conversation-fresh, newuser2 or locomo-held")
    print(f"{name}: the one-time final check; do not tune on what it shows.", file=sys.stderr)
    rows = gather(queries)
    p = [r[3] for r in rows]
    from memcli.recall.confidence import probability

    p = [probability(x) for x in p]
    print(f"{name}: {len(queries)} queries; model {model()['fitted']}")
    print("| predicted | hits | mean predicted | observed |")
    print("|---|---:|---:|---:|")
    for rng, n, pred, obs in reliability(rows, p):
        print(f"| {rng} | {n} | {pred:.2f} | {obs:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

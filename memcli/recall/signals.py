"""Whether a turn calls for a recall: explicit signals ("last time"), implicit ones ("that one"),
or a name the index knows (a title, tag or alias)."""

from __future__ import annotations

from ..errors import UsageError
from ..cjk import has_cjk


def _finds(phrase: str, text: str, lowered: str) -> bool:
    p = phrase.strip().lower()
    if not p:
        return False
    if has_cjk(p):
        return p in lowered
    # A whole-word match, found without compiling a pattern per phrase (this runs once per turn).
    start = lowered.find(p)
    while start != -1:
        end = start + len(p)
        before = lowered[start - 1] if start else " "
        after = lowered[end] if end < len(lowered) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = lowered.find(p, start + 1)
    return False


def known_names(root) -> list[tuple[str, str]]:
    """(kind, name) for every title, tag and alias the index knows."""
    names: list[tuple[str, str]] = []
    for e, d in root.indexed():
        names.append(("title", e.title))
        names += [("tag", t) for t in e.tags]
        if d is not None:
            names += [("alias", a) for a in d.aliases]
    return names


def should_recall(text: str, explicit: list, implicit: list, names: list) -> dict:
    """explicit / implicit / none, with the signals that decided it."""
    if not text or not text.strip():
        raise UsageError("the text is empty")
    lowered = text.lower()
    exp = [s for s in explicit if _finds(s, text, lowered)]
    imp = [s for s in implicit if _finds(s, text, lowered)]
    named = []
    for kind, name in names:
        n = name.strip()
        if len(n) < (2 if has_cjk(n) else 3):
            continue
        if _finds(n, text, lowered):
            named.append(f"{kind}:{n}")
    kind = "explicit" if exp else "implicit" if (imp or named) else "none"
    return {"kind": kind, "explicit": exp, "implicit": imp, "names": list(dict.fromkeys(named))}

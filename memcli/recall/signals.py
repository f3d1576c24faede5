"""Whether a turn calls for a recall: explicit signals ("last time"), implicit ones ("that one"),
or a name the index knows (a title, tag or alias)."""

from __future__ import annotations

from ..cjk import has_cjk
from ..errors import UsageError

from collections.abc import Sequence


def _finds(phrase: str, lowered: str) -> bool:
    p = phrase.strip().lower()
    return bool(p) and _found(p, has_cjk(p), lowered)


def _found(p: str, cjk: bool, lowered: str) -> bool:
    """Whether lowered holds p (stripped and lowercased): anywhere for CJK, else as whole words."""
    if cjk:
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


# A long-lived process (``memcli serve``) asks again and again about the same index: the index
# cache hands back the same entries and memories while nothing changed (they are immutable), so
# their names, and the phrases made of them, are made once.
_names: tuple = ((), None)  # (the (entry, detail) pairs read last, their names)
_phrases: tuple = (None, ())  # (names, their phrases)


def known_names(root) -> tuple[tuple[str, str], ...]:
    """(kind, name) for every title, tag and alias the index knows."""
    global _names
    pairs = root.indexed()
    seen, names = _names
    if (
        names is not None
        and len(seen) == len(pairs)
        and all(e is e2 and d is d2 for (e, d), (e2, d2) in zip(seen, pairs))
    ):
        return names
    out: list[tuple[str, str]] = []
    for e, d in pairs:
        out.append(("title", e.title))
        out += [("tag", t) for t in e.tags]
        if d is not None:
            out += [("alias", a) for a in d.aliases]
    _names = (pairs, tuple(out))
    return _names[1]


def _phrases_of(names) -> list[tuple[str, str, bool]]:
    """(signal, lowercased name, whether it is CJK) for each name long enough to count."""
    global _phrases
    if _phrases[0] is names:
        return _phrases[1]
    out = []
    for kind, name in names:
        n = name.strip()
        cjk = has_cjk(n)
        if len(n) >= (2 if cjk else 3):
            out.append((f"{kind}:{n}", n.lower(), cjk))
    if isinstance(names, tuple):  # a list could change under the memo
        _phrases = (names, out)
    return out


def should_recall(text: str, explicit: list, implicit: list, names: Sequence) -> dict:
    """explicit / implicit / none, with the signals that decided it."""
    if not text or not text.strip():
        raise UsageError("the text is empty")
    lowered = text.lower()
    exp = [s for s in explicit if _finds(s, lowered)]
    imp = [s for s in implicit if _finds(s, lowered)]
    named = [signal for signal, p, cjk in _phrases_of(names) if _found(p, cjk, lowered)]
    kind = "explicit" if exp else "implicit" if (imp or named) else "none"
    return {"kind": kind, "explicit": exp, "implicit": imp, "names": list(dict.fromkeys(named))}

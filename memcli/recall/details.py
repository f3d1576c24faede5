"""The details layer: every detail file in memory/ and the episode log in memory/episodes/,
ranked through the on-disk search cache (or in memory when the cache cannot be used).

The episode log is searched without the user turns that only ask: a question is never evidence.
An episode file that matches only through a user turn holding the question being asked (a
statement that repeats it) is not a hit either: the rest of the file must hold the words that
matched, and the snippet comes from the rest.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..errors import FileError
from ..model import Hit
from ..search import docs
from ..store import layout
from ..store.layout import fingerprint as _fingerprint
from .layer import PEEK, Ask, Candidate, Layer, conflicted, holds_query, snip

# A store this large is not stat-ed file by file on every call (that alone would cost more than
# grep): when neither memory/ nor memory/episodes/ changed (every add, delete and rename-on-save
# changes them), the cached fingerprints are trusted for FULL_CHECK_EVERY seconds, and the files
# of the hits are always checked. `memcli watch` keeps the cache current for in-place edits.
LARGE_STORE = 20_000
FULL_CHECK_EVERY = 300.0


SNIPPET_READ = 1_000_000  # bytes of a hit's file read again for its snippet


def detail_doc(root, key: str, ask: Ask | None = None, limit: int | None = None, read: dict | None = None):
    """A SearchDoc for one file of the details layer (``search.docs``: an episode file without the
    user turns that only ask): None when it cannot be read, or when it holds git conflict markers
    or a broken frontmatter (then the recall asking, if any, says it left it out). ``read``: as
    ``search.docs``' (a hit's memory, kept for the procedures' weighing: ``Ask.details``)."""
    return docs.detail_doc(
        root.path,
        key,
        limit,
        lambda k, text, path: conflicted(ask, k, text, path),
        None if ask is None else lambda k, error: skipped(ask, k, error),
        read,
    )


def skipped(ask: Ask, rel: str, error: Exception) -> None:
    """The recall says once a file that it left out a memory it cannot read (with the line, when
    the frontmatter is what is broken); memcli never rewrites a broken file."""
    head = f"skipped {rel}: "
    if not any(w.startswith(head) for w in ask.warnings):
        problem = getattr(error, "problem", None)
        why = (
            f"{problem.message} (line {problem.line})"
            if problem is not None and problem.line
            else str(error).removeprefix(f"{rel}: ")
        )
        ask.warnings.append(f"{head}{why}; fix it by hand (memcli never rewrites a broken file)")


def _folder_marks(root) -> list:
    marks: list = []
    for d in (root.memory_dir(), root.path / layout.EPISODES):
        try:
            marks.append(os.stat(d).st_mtime_ns)
        except OSError:
            marks.append(None)
    return marks


def _sync(root, cache, ask: Ask | None = None) -> tuple[int, bool]:
    """Bring the cache up to date; (files in the layer, whether it was a quick check)."""
    marks_file = root.state_dir(layout.SEARCH) / "folders.json"
    marks = _folder_marks(root)
    try:
        with open(marks_file, encoding="utf-8") as f:
            prev = json.load(f)
        quick = (
            isinstance(prev, dict)
            and prev.get("marks") == marks
            and prev.get("count", 0) > LARGE_STORE
            and 0 <= time.time() - float(prev.get("checked", 0)) < FULL_CHECK_EVERY
        )
    except (OSError, ValueError, TypeError):
        prev, quick = None, False
    if quick:
        return int(prev["count"]), True
    current = docs.detail_files(root)
    cache.sync(current, lambda key: detail_doc(root, key, ask))
    try:
        if len(current) > LARGE_STORE:  # the marks are read only then: below it, no write per recall
            from ..store.fs import atomic_write

            atomic_write(
                marks_file, json.dumps({"marks": marks, "count": len(current), "checked": time.time()}), durable=False
            )  # a cache: lost, the next call checks every file
        elif prev is not None:
            os.unlink(marks_file)  # a store that shrank below it
    except (OSError, FileError):
        pass
    return len(current), False


def prepare(root) -> None:
    """Bring the search cache of a root's details layer up to date now, as the next details recall
    would first: ``memcli serve`` runs it once it has answered a turn, so the next turn does not
    tokenise again what the last one wrote (the day's episode log, a new memory). Nothing when the
    root has no search cache yet (it is built by the first details recall, not behind its back)."""
    from ..search.cache import FILENAME, SearchCache, SearchCacheError

    folder = root.state_dir(layout.SEARCH)
    if not os.path.exists(folder / FILENAME):
        return
    try:
        _sync(root, SearchCache(folder))
    except (SearchCacheError, FileError, OSError):
        pass  # the next recall meets it itself, and says so


def _changed_hits(root, cache, found) -> dict:
    """key -> new fingerprint (None when gone) for hits whose file changed since it was cached."""
    stored = cache.fingerprints([s.key for s in found])
    changed = {}
    for s in found:
        try:
            st = os.stat(root.path / s.key, follow_symlinks=False)
            fp = _fingerprint(st)
        except OSError:
            fp = None
        if stored.get(s.key) != fp:
            changed[s.key] = fp
    return changed


EVIDENCE_DEPTH = 50  # lexical candidates kept for a layer that reads them (``Ask.scored``)


def _ranked(ask: Ask, limit: int) -> tuple[list, int]:
    """Scored hits of the whole layer, through the cache when it can be used."""
    from ..search.cache import SearchCache, SearchCacheError

    root = ask.root

    def search(index) -> list:
        return index.search(ask.text, limit=limit, now=ask.now, prior=ask.prior)

    try:
        cache = SearchCache(root.state_dir(layout.SEARCH))
        count, quick = _sync(root, cache, ask)
        found = search(cache)
        if quick and found:
            changed = _changed_hits(root, cache, found)
            if changed:
                gone = [k for k, fp in changed.items() if fp is None]
                fresh = {k: fp for k, fp in changed.items() if fp is not None}
                new = [d for d in (detail_doc(root, k, ask) for k in fresh) if d is not None]
                if gone:
                    cache.remove(gone)
                if new:
                    cache.update_docs(new, {d.key: fresh[d.key] for d in new})
                found = search(cache)
        return found, count
    except (SearchCacheError, FileError) as e:
        # The cache only saves time: without it, rank the files in memory.
        ask.warnings.append(f"search cache not used ({e}); searched the files directly")
        current = docs.detail_files(root)
        found = [d for d in (detail_doc(root, key, ask) for key in current) if d is not None]
        if not found:
            return [], len(current)
        from ..search.ranker import MemoryIndex

        return search(MemoryIndex(found)), len(current)


def without_echo(text: str, query: str) -> str:
    """An episode file without the user turns that hold the query."""
    return docs.without_user_turns(text, lambda words: holds_query(words, query))


def _terms(text: str) -> set:
    """The terms of episode text, block by block (each block's kept: a server meets the same turns
    recall after recall); a block starts a line, so no term spans two."""
    from ..search.tokenize import term_set
    from ..store.episodes import blocks

    return set().union(*map(term_set, blocks(text)))


def _still_matches(rest: str, matched) -> bool:
    """The rest of an episode holds at least half of the terms that matched (and one at least)."""
    have = _terms(rest)
    found = sum(1 for t in matched if t in have)
    return found >= 1 and 2 * found >= len(matched)


# An episode section that reflection already turned into an accepted memory (``store.quoted_turns``)
# weighs this share of its relevance: the memory says it, and says it better.
DIGESTED = 0.5


class DetailsLayer(Layer):
    name = "details"
    help = "every detail file and the episode log"
    memories = True
    fills = True

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        want = max(ask.limit, PEEK)  # and two more: room for episodes left out
        found, count = _ranked(ask, EVIDENCE_DEPTH if ask.scored is not None else want + 2)
        if ask.scored is not None:
            ask.scored = found
        digested = None
        out = []
        for s in found[: want + 2]:
            doc = detail_doc(ask.root, s.key, ask, SNIPPET_READ, ask.details)
            if doc is None:
                continue
            body = doc.body
            relevance, score = s.relevance, s.score
            is_episode = layout.is_episode(s.key)
            if is_episode:
                body = without_echo(body, ask.query)
                if body != doc.body and not _still_matches(body, s.matched):
                    continue
                if digested is None:
                    from ..store.quoted_turns import digested as read_digested

                    digested = read_digested(ask.root)
                times = digested.get(s.key)
                if times and _digested(body, s.matched, times):
                    relevance, score = relevance * DIGESTED, score * DIGESTED
            hit_id = ("episode:" if is_episode else "") + Path(s.key).stem
            hit = Hit(self.name, hit_id, doc.title, s.key, score, snip(body, ask.text), doc.summary, doc.tags)
            hit = hit.replace(matched=s.matched)
            out.append(Candidate(hit, relevance, "episode" if is_episode else "", s.signals, s.units))
        return out[:want], count


def _digested(body: str, matched, times: frozenset) -> bool:
    """Every section of an episode file that holds a matched term is one an accepted memory quotes."""
    from ..store.quoted_turns import sections

    hits = [done for text, done in sections(body, times) if not _terms(text).isdisjoint(matched)]
    return bool(hits) and all(hits)

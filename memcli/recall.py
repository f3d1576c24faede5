"""The cascade: session, then scope, then the index, then the details. Returns hits, never prints."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .errors import FileError, UnsafePathError, UsageError
from .model import Hit, LayerTrace
from .store import details as dfile
from .store.fs import inside, state_dir, valid_id

LAYERS = ("session", "scope", "index", "details")


@dataclass
class Recall:
    query: str
    hits: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"query": self.query, "hits": [h.to_dict() for h in self.hits],
                "layer": self.hits[0].layer if self.hits else None, "trace": [t.to_dict() for t in self.trace]}


def _now(now: str | None) -> datetime:
    if now:
        return datetime.fromisoformat(now.replace("Z", "+00:00"))
    return datetime.now(timezone.utc)


def _index(docs):
    from .search.ranker import MemoryIndex

    return MemoryIndex(docs)


def session_layer(mem, name: str, query: str, limit: int, threshold: float, now) -> tuple[list, int]:
    from .search.ranker import SearchDoc
    from .store import session

    data = session.load(mem.root, name)  # a session never started is empty
    if not data["turns"] and not data.get("summary"):
        return [], 0
    docs, texts = [], {}
    if data.get("summary"):
        docs.append(SearchDoc(key="summary", title="session summary", body=data["summary"], updated=data.get("updated")))
        texts["summary"] = ("Session summary", data["summary"])
    for i, t in enumerate(data["turns"]):
        key = f"turn-{i + 1}"
        docs.append(SearchDoc(key=key, body=t.get("text", ""), updated=t.get("time")))
        texts[key] = (f"{t.get('role')} turn {i + 1}", t.get("text", ""))
    found = _index(docs).search(query, limit=limit, threshold=threshold, now=now)
    path = f".memcli/sessions/{name}.json"
    return [Hit("session", s.key, texts[s.key][0], path, s.score, _snip(texts[s.key][1], query), matched=s.matched)
            for s in found], len(docs)


def scope_layer(mem, name: str, query: str, limit: int, threshold: float, now) -> tuple[list, int]:
    from .search.ranker import SearchDoc
    from .store import scope

    data = scope.load(mem.root, name)
    if not data or not data["keys"]:
        return [], 0
    docs = [SearchDoc(key=k, title=k, body=str(v["value"]), updated=v.get("time")) for k, v in data["keys"].items()]
    found = _index(docs).search(query, limit=limit, threshold=threshold, now=now)
    path = f".memcli/scopes/{name}.json"
    return [Hit("scope", s.key, s.key, path, s.score, _snip(str(data["keys"][s.key]["value"]), query),
                summary=f"written by {data['keys'][s.key]['agent']}", matched=s.matched) for s in found], len(docs)


def index_layer(mem, query: str, limit: int, threshold: float, now) -> tuple[list, int]:
    from .search.ranker import SearchDoc
    from .store.indexcache import indexed

    pairs = indexed(mem)
    docs = []
    for e, d in pairs:
        if d is None:
            docs.append(SearchDoc(key=e.id, title=e.title, summary=e.summary, tags=e.tags))
        else:
            docs.append(SearchDoc(key=e.id, title=e.title, summary=e.summary, tags=e.tags, aliases=d.aliases,
                                  importance=d.importance, updated=d.updated or d.created))
    if not docs:
        return [], 0
    found = _index(docs).search(query, limit=limit, threshold=threshold, now=now)
    by_id = {e.id: (e, d) for e, d in pairs}
    hits = []
    for s in found:
        e, d = by_id[s.key]
        body = d.body if d is not None else ""
        hits.append(Hit("index", e.id, e.title, e.path, s.score, _snip(body, query) if body.strip() else "",
                        d.summary if d is not None else e.summary, e.tags, s.matched))
    return hits, len(docs)


def detail_doc(mem, key: str):
    """A SearchDoc for one file of the details layer (None when it cannot be read)."""
    from .search.ranker import SearchDoc

    path = mem.root / key
    try:
        if not inside(mem.root, path):
            return None
        if key.startswith("memory/episodes/"):
            from .store.fs import read_text

            return SearchDoc(key=key, title=f"episodes {path.stem}", body=read_text(path, key), importance=0.3,
                             updated=path.stem)
        d = dfile.read(path, path.stem, key)
    except (FileError, UsageError, UnsafePathError, OSError):
        return None
    return SearchDoc(key=key, title=d.title, summary=d.summary, tags=d.tags, aliases=d.aliases, body=d.body,
                     importance=d.importance, updated=d.updated or d.created)


def _fingerprint(st) -> str:
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


def detail_files(mem) -> dict:
    """key -> fingerprint for every file of the details layer (symlinks are never read: left out)."""
    current = {}
    mdir = mem.memory_dir()
    for sub, prefix in ((mdir, "memory/"), (mdir / "episodes", "memory/episodes/")):
        try:
            it = os.scandir(sub)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with it:
            for de in it:
                name = de.name
                if not name.endswith(".md") or de.is_symlink() or not valid_id(name[:-3]):
                    continue
                try:
                    st = de.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not de.is_file(follow_symlinks=False):
                    continue
                current[prefix + name] = _fingerprint(st)
    return current


# A store this large is not stat-ed file by file on every call (that alone would cost more than
# grep): when neither memory/ nor memory/episodes/ changed (every add, delete and rename-on-save
# changes them), the cached fingerprints are trusted for FULL_CHECK_EVERY seconds, and the files
# of the hits are always checked. `memcli watch` keeps the cache current for in-place edits.
LARGE_STORE = 20_000
FULL_CHECK_EVERY = 300.0


def _folder_marks(mem) -> list:
    marks = []
    for d in (mem.memory_dir(), mem.memory_dir() / "episodes"):
        try:
            marks.append(os.stat(d).st_mtime_ns)
        except OSError:
            marks.append(None)
    return marks


def _sync(mem, cache) -> tuple[int, bool]:
    """Bring the cache up to date; (files in the layer, whether it was a quick check)."""
    marks_file = state_dir(mem.root, "search") / "folders.json"
    marks = _folder_marks(mem)
    try:
        with open(marks_file, encoding="utf-8") as f:
            prev = json.load(f)
        quick = (isinstance(prev, dict) and prev.get("marks") == marks and prev.get("count", 0) > LARGE_STORE
                 and 0 <= time.time() - float(prev.get("checked", 0)) < FULL_CHECK_EVERY)
    except (OSError, ValueError, TypeError):
        prev, quick = None, False
    if quick:
        return int(prev["count"]), True
    current = detail_files(mem)
    cache.sync(current, lambda key: detail_doc(mem, key))
    try:
        from .store.fs import atomic_write

        atomic_write(marks_file, json.dumps({"marks": marks, "count": len(current), "checked": time.time()}))
    except (OSError, FileError):
        pass
    return len(current), False


def _changed_hits(mem, cache, found) -> dict:
    """key -> new fingerprint (None when gone) for hits whose file changed since it was cached."""
    stored = cache.fingerprints([s.key for s in found])
    changed = {}
    for s in found:
        try:
            st = os.stat(mem.root / s.key, follow_symlinks=False)
            fp = _fingerprint(st)
        except OSError:
            fp = None
        if stored.get(s.key) != fp:
            changed[s.key] = fp
    return changed


def details_layer(mem, query: str, limit: int, threshold: float, now, warnings: list | None = None
                  ) -> tuple[list, int]:
    from .search.cache import SearchCache, SearchCacheError

    count = 0
    try:
        cache = SearchCache(state_dir(mem.root, "search"))
        count, quick = _sync(mem, cache)
        found = cache.search(query, limit=limit, threshold=threshold, now=now)
        if quick and found:
            changed = _changed_hits(mem, cache, found)
            if changed:
                gone = [k for k, fp in changed.items() if fp is None]
                fresh = {k: fp for k, fp in changed.items() if fp is not None}
                docs = [d for d in (detail_doc(mem, k) for k in fresh) if d is not None]
                if gone:
                    cache.remove(gone)
                if docs:
                    cache.update_docs(docs, {d.key: fresh[d.key] for d in docs})
                found = cache.search(query, limit=limit, threshold=threshold, now=now)
    except (SearchCacheError, FileError) as e:
        # The cache only saves time: without it, rank the files in memory.
        if warnings is not None:
            warnings.append(f"search cache not used ({e}); searched the files directly")
        current = detail_files(mem)
        count = len(current)
        docs = [d for d in (detail_doc(mem, key) for key in current) if d is not None]
        found = _index(docs).search(query, limit=limit, threshold=threshold, now=now) if docs else []
    hits = []
    for s in found:
        doc = detail_doc(mem, s.key)
        if doc is None:
            continue
        is_episode = s.key.startswith("memory/episodes/")
        hit_id = Path(s.key).stem
        hits.append(Hit("details", ("episode:" if is_episode else "") + hit_id, doc.title, s.key, s.score,
                        _snip(doc.body, query), doc.summary, doc.tags, s.matched))
    return hits, count


def _snip(body: str, query: str) -> str:
    from .search.snippet import snippet

    return snippet(body, query)


def recall(mem, query: str, *, session: str = "default", scope: str = "default", limit: int | None = None,
           deep: bool = False, layer: str | None = None, threshold: float | None = None,
           now: str | None = None) -> Recall:
    if not query or not query.strip():
        raise UsageError("the query is empty")
    if layer is not None and layer not in LAYERS:
        raise UsageError(f"--layer must be one of {', '.join(LAYERS)}, got {layer!r}")
    limit = limit or int(mem.config["recall.limit"])
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    threshold = float(mem.config["recall.threshold"]) if threshold is None else threshold
    when = _now(now)
    result = Recall(query)
    layers = [layer] if layer else list(LAYERS)
    for name in layers:
        t0 = time.perf_counter()
        if name == "session":
            hits, n = session_layer(mem, session, query, limit, threshold, when)
        elif name == "scope":
            hits, n = scope_layer(mem, scope, query, limit, threshold, when)
        elif name == "index":
            hits, n = index_layer(mem, query, limit, threshold, when)
        else:
            hits, n = details_layer(mem, query, limit, threshold, when, result.warnings)
        result.trace.append(LayerTrace(name, n, len(hits), (time.perf_counter() - t0) * 1000))
        if deep:
            seen = {(h.id) for h in result.hits if h.layer in ("index", "details")}
            result.hits += [h for h in hits if not (h.layer == "details" and h.id in seen)]
        elif hits:
            result.hits = hits
            break
    if deep:
        result.hits.sort(key=lambda h: -h.score)
        result.hits = result.hits[:limit]
    if layer is None and (deep or not result.hits) and not any(h.layer in ("index", "details") for h in result.hits):
        from .search import semantic

        if semantic.enabled():  # the `semantic` extra: meaning when words did not match
            semantic.recall_step(mem, query, limit, threshold, when, result)
    record(mem, "recall", query, result)
    return result


def record(mem, command: str, query: str, result: Recall) -> None:
    """Append one line to .memcli/trace.jsonl: memory reads are observable (access counts come from it)."""
    line = json.dumps({
        "time": datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "command": command, "query": query[:200],
        "layer": result.hits[0].layer if result.hits else None,
        "ids": [h.id for h in result.hits if h.layer in ("index", "details")],
    }, ensure_ascii=False) + "\n"
    try:
        fd = os.open(state_dir(mem.root) / "trace.jsonl",
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, FileError) as e:
        result.warnings.append(f"could not append to .memcli/trace.jsonl: {getattr(e, 'strerror', None) or e}")


def access(root: Path) -> dict:
    """id -> {"count": n, "last": time}, from the trace log."""
    stats: dict = {}
    try:
        with open(root / ".memcli" / "trace.jsonl", encoding="utf-8", errors="replace") as f:
            for ln in f:
                try:
                    rec = json.loads(ln)
                except ValueError:
                    continue
                for i in rec.get("ids") or ():
                    s = stats.setdefault(i, {"count": 0, "last": None})
                    s["count"] += 1
                    s["last"] = rec.get("time")
    except OSError:
        pass
    return stats


def _has_cjk(s: str) -> bool:
    return any("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" for c in s)


def _finds(phrase: str, text: str, lowered: str) -> bool:
    p = phrase.strip().lower()
    if not p:
        return False
    if _has_cjk(p):
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


def known_names(mem) -> list[tuple[str, str]]:
    """(kind, name) for every title, tag and alias the index knows."""
    from .store.indexcache import indexed

    names: list[tuple[str, str]] = []
    for e, d in indexed(mem):
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
        if len(n) < (2 if _has_cjk(n) else 3):
            continue
        if _finds(n, text, lowered):
            named.append(f"{kind}:{n}")
    kind = "explicit" if exp else "implicit" if (imp or named) else "none"
    return {"kind": kind, "explicit": exp, "implicit": imp, "names": list(dict.fromkeys(named))}

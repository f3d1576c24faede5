"""Which parts of the episode log reflection already turned into memories.

An accepted proposal (memory/inbox/archive/, ``status: accepted``, ``memory: <id>``) quotes the
turns it was made from, each with ``{episode, time}``. Those turns, and the dated sections of the
episode log that hold them, are *digested*: the memory says what they said, so recall weighs
them less (``recall.details``). The log itself is never changed.

Reading every archived proposal on each recall would cost a turn too much, so what they quote is
kept in ``.memcli/search/digested.json`` with the name, size and modification time of each file
of the archive; the next call that finds the archive as it was reads that file only.
"""

from __future__ import annotations

import json
import os

from . import layout

CACHE = "digested.json"
FORMAT = 1


def _listing(folder) -> list:
    """[name, size, mtime_ns] of each proposal in the archive, sorted: what the cache is valid for."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    out = []
    for de in entries:
        if de.name.endswith(".md") and not de.name.startswith("."):
            try:
                st = de.stat(follow_symlinks=False)
            except OSError:
                continue
            out.append([de.name, st.st_size, st.st_mtime_ns])
    return sorted(out)


def _read(root, names: list) -> dict:
    """episode -> sorted times quoted by the accepted proposals among ``names``."""
    from . import inbox

    found: dict[str, set] = {}
    for name, _, _ in names:
        try:
            p = inbox.read(root.path, name[:-3], archived=True)
        except Exception:  # noqa: BLE001 - a broken record is heartbeat's to report; it digests nothing
            continue
        if p.status != "accepted" or not p.memory:
            continue
        for q in p.evidence:
            if q.episode and q.time:
                found.setdefault(q.episode, set()).add(q.time)
    return {k: sorted(v) for k, v in sorted(found.items())}


def digested(root) -> dict[str, frozenset]:
    """episode file (relative path) -> the times of its turns that accepted proposals quote, read
    from the cache when the archive is unchanged (a store.Root)."""
    folder = root.path / layout.INBOX_ARCHIVE
    names = _listing(folder)
    if not names:
        return {}
    cache = root.state_dir(layout.SEARCH) / CACHE
    try:
        with open(cache, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format") == FORMAT and data.get("files") == names:
            return {k: frozenset(v) for k, v in data["episodes"].items()}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        pass
    episodes = _read(root, names)
    try:
        from .fs import atomic_write

        atomic_write(cache, json.dumps({"format": FORMAT, "files": names, "episodes": episodes}, ensure_ascii=False))
    except Exception:  # noqa: BLE001 - the cache only saves time
        pass
    return {k: frozenset(v) for k, v in episodes.items()}


def sections(text: str, times: frozenset) -> list[tuple[str, bool]]:
    """(text, digested) for each dated section of an episode file: digested when the section's
    own time or the time of one of its turns is among ``times``."""
    from .episodes import sections as parse

    out = []
    for sec in parse(text):
        said = {t["time"] for t in sec["turns"]} | {sec["time"]}
        out.append((sec["heading"] + "\n" + sec["text"], not times.isdisjoint(said)))
    return out

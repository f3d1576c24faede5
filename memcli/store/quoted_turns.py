"""Which turns of the episode log reflection already turned into memories: those an accepted
proposal quotes (``{episode, time}`` in memory/inbox/archive/) are *digested*, and recall weighs
them and their sections less (``recall.details``); the log itself is never changed. What they
quote is cached in ``.memcli/search/digested.json``, valid while the archive's files are unchanged.
"""

from __future__ import annotations

import contextlib
import json

from . import layout
from .fs import atomic_write

CACHE = "digested.json"
FORMAT = 1


def _listing(folder) -> list:
    """[name, size, mtime_ns] of each proposal in the archive, sorted: what the cache is valid for."""
    out = []
    for de in layout.md_entries(folder):
        try:
            st = de.stat(follow_symlinks=False)
        except OSError:
            continue
        out.append([de.name, st.st_size, st.st_mtime_ns])
    return out


def _read(root) -> dict:
    """episode -> sorted times quoted by the accepted proposals of the archive."""
    from . import inbox

    try:
        records = inbox.records(root.path)
    except Exception:  # noqa: BLE001 - a broken archive is heartbeat's to report; it digests nothing
        return {}
    found: dict[str, set] = {}
    for p in records:
        if p.status == "accepted" and p.memory:
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
    episodes = _read(root)
    with contextlib.suppress(Exception):  # the cache only saves time
        data = {"format": FORMAT, "files": names, "episodes": episodes}
        atomic_write(cache, json.dumps(data, ensure_ascii=False), durable=False)
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

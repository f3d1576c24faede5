"""Checks for a root shared through git: files left with conflict markers, and a clone whose
merge drivers are not set up (git does not copy its config into clones)."""

from __future__ import annotations

from .checks import TEXT_KINDS, Check, register


@register
class ConflictMarkers(Check):
    """A file with unresolved `<<<<<<<`/`=======`/`>>>>>>>` lines: memcli will not write it and
    recall skips it. `heartbeat --fix` rebuilds a conflicted MEMORY.md (repair.py)."""

    codes = ("conflict-markers",)
    kinds = TEXT_KINDS
    sources = ("memcli.store.markers",)

    def file(self, f):
        from ..store import markers

        return markers.findings(f.rel, f.text, f.marker_size)


@register
class GitSetup(Check):
    codes = ("git-drivers-missing", "git-attributes-missing")

    def root(self, st):
        from ..gitsync import check

        return check(st.mem.root)

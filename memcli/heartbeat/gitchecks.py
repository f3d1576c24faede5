"""Checks for a root shared through git: files left with conflict markers, a clone whose
merge drivers are not set up (git does not copy its config into clones), and local state that
git tracks."""

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
    """A clone whose merge drivers are not set up, a .gitattributes line that sends another file
    to them, and a .memcli/ that git tracks (someone force-added local state: it is never read,
    and sync never commits it)."""

    codes = (
        "git-drivers-missing",
        "git-driver-unisolated",
        "git-attributes-missing",
        "git-attributes-foreign",
        "state-tracked",
    )

    def root(self, st):
        from ..store.git import check

        return check(st.root.path)

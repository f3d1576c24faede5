"""Checks of what is this machine's own: the configuration memcli reads, and the drafts an edit
left in .memcli/edits/."""

from __future__ import annotations

import re

from ..errors import ConfigError
from ..model import Finding
from ..store import layout
from .base import age
from .checks import Check, register

DRAFT_MIN_AGE = 3600.0  # seconds a draft must be untouched before it counts as left behind


@register
class ConfigFiles(Check):
    """A configuration file memcli cannot use: every other command stops on it (exit 3), so the
    audit, which runs with the defaults then, reports it with the rest."""

    codes = ("config-broken",)

    def root(self, st):
        from ..tighten import load_config

        try:
            load_config(st.root.path)
        except ConfigError as e:
            m = re.match(r"(\S+?)(?: line (\d+))?: (.+)", e.message, re.S)
            where, line, what = m.groups() if m else (layout.CONFIG, None, e.message)
            return [
                Finding(
                    "config-broken",
                    "error",
                    where,
                    int(line) if line else None,
                    what,
                    "correct it: until then the other commands stop on it, and heartbeat uses the defaults",
                )
            ]
        return []


@register
class EditDrafts(Check):
    """A draft in .memcli/edits/ that no edit is working on: the text of an edit that was
    interrupted or refused, which the next `memcli edit` of the memory offers to go on with."""

    codes = ("edit-draft-kept",)

    def root(self, st):
        folder = st.root.path / layout.STATE_DIR / layout.EDITS
        out = []
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            idle = st.when.timestamp() - path.stat().st_mtime
            mid = re.sub(r"-\d{8}T\d{6}Z(-\d+)?$", "", path.stem)
            if idle >= DRAFT_MIN_AGE:
                out.append(
                    Finding(
                        "edit-draft-kept",
                        "warning",
                        layout.state_rel(layout.EDITS, path.name),
                        None,
                        f"a draft of {mid} left by an edit that did not finish, {age(idle)} ago",
                        f"`memcli edit {mid}` asks whether to go on with it; delete it if you do not need it",
                    )
                )
        return out

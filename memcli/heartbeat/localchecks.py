"""Checks of what is this machine's own: the configuration memcli reads, the drafts of edits."""

from __future__ import annotations

import re

from ..errors import ConfigError
from ..model import Finding
from ..store import layout
from .base import age
from .checks import Check, register

DRAFT_MIN_AGE = 3600.0  # seconds a draft must be untouched before it counts as left behind


def config_finding(e: ConfigError, fix: str) -> Finding:
    """A configuration memcli cannot use, with its file and line as the error names them."""
    m = re.match(r"(\S+?)(?: line (\d+))?: (.+)", e.message, re.S)
    where, line, what = m.groups() if m else (layout.CONFIG, None, e.message)
    return Finding("config-broken", "error", where, int(line) if line else None, what, fix)


@register
class ConfigFiles(Check):
    """Every other command stops on a broken configuration (exit 3); the audit runs with the
    defaults then, and reports it with the rest."""

    codes = ("config-broken",)

    def root(self, st):
        from ..settings_guard import load_config

        try:
            load_config(st.root.path)
        except ConfigError as e:
            return [config_finding(e, "correct it: until then the other commands stop on it")]
        return []


@register
class EditDrafts(Check):
    """A draft in .memcli/edits/ left by an edit that was interrupted or refused."""

    codes = ("edit-draft-kept",)

    def root(self, st):
        folder = st.root.path / layout.STATE_DIR / layout.EDITS
        out = []
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            idle, mid = st.when.timestamp() - path.stat().st_mtime, re.sub(r"-\d{8}T\d{6}Z(-\d+)?$", "", path.stem)
            said = f"a draft of {mid} left by an edit that did not finish, {age(idle)} ago"
            fix = f"`memcli edit {mid}` asks whether to go on with it; delete it if you do not need it"
            if idle >= DRAFT_MIN_AGE:
                rel = layout.state_rel(layout.EDITS, path.name)
                out.append(Finding("edit-draft-kept", "warning", rel, None, said, fix))
        return out

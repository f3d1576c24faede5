"""The inbox's checks: proposals that cannot be read, and proposals left waiting too long."""

from __future__ import annotations

from ..model import Finding
from ..store import layout
from .base import age
from .checks import Check, register


@register
class ProposalFile(Check):
    """A proposal file (memory/inbox/) whose frontmatter or kind memcli cannot read."""

    codes = ("proposal-broken",)
    kinds = (layout.PROPOSAL,)

    def file(self, f):
        from ..store import inbox
        from ..store.details import FrontmatterError

        pid = f.rel.rsplit("/", 1)[1][:-3]
        try:
            inbox.parse(f.text, pid, f.rel)
        except FrontmatterError as e:
            fix = f"fix it with `memcli inbox edit {pid}`, or move it out of memory/inbox/"
            return [Finding("proposal-broken", "warning", f.rel, e.problem.line, e.problem.message, fix)]
        return []


@register
class InboxWaiting(Check):
    """Pending proposals older than inbox.max_age: nobody reviewed what reflection learnt."""

    codes = ("inbox-waiting",)

    def root(self, st):
        from ..store.inbox import waiting as stale

        waiting = stale(st.root.path, st.root.config.seconds("inbox.max_age"), st.when)
        if not waiting:
            return []
        oldest = max(s for _, s in waiting)
        said = f"{len(waiting)} proposal(s) waiting longer than inbox.max_age ({st.root.config['inbox.max_age']}); "
        said += f"the oldest for {age(oldest)}: " + ", ".join(p.id for p, _ in waiting[:3])
        said += " …" if len(waiting) > 3 else ""
        fix = "review them: `memcli inbox`, then `memcli inbox accept ID` or `reject ID`"
        return [Finding("inbox-waiting", "warning", layout.INBOX, None, said, fix)]

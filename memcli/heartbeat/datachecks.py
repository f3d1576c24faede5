"""Checks on what memories hold: personal data stored in a file (`pii`), and a procedure that
keeps failing (`procedure-failing`)."""

from __future__ import annotations

from ..model import Finding
from ..store import layout
from .checks import TEXT_KINDS, Check, register

FAILING_WINDOW = 5  # the last outcomes looked at
FAILING_MIN = 2  # failures among them before a procedure is reported


@register
class PersonalData(Check):
    """Emails, phone numbers, ID, card and IBAN numbers, street addresses stored in a file. In an
    episode log (text captured on its own, masked by default) it is a warning; in a memory someone
    wrote on purpose (warned about at the time), information."""

    codes = ("pii",)
    kinds = TEXT_KINDS
    sources = ("memcli.safety.pii",)

    def file(self, f):
        from ..safety.pii import find

        severity = "warning" if f.kind in (layout.EPISODE, "index") else "info"
        out = []
        for p in find(f.text):
            fix = f"if it should not be shared, mask it by hand ({p.masked}); git history keeps the old text"
            out.append(Finding("pii", severity, f.rel, p.line, f"{p.kind} at line {p.line}, column {p.column}", fix))
        return out


@register
class ProcedureFailing(Check):
    """A memory that failed at least half of its last FAILING_WINDOW recorded outcomes (and at least
    FAILING_MIN times), with the notes of those failures."""

    codes = ("procedure-failing",)
    kinds = (layout.DETAIL,)
    sources = ("memcli.store.outcomes",)

    def file(self, f):
        if f.detail is None:
            return []
        from ..store.outcomes import recent_failures

        looked, failed, notes = recent_failures(f.detail, FAILING_WINDOW)
        if failed < FAILING_MIN or 2 * failed < looked:
            return []
        line = next((n for n, ln in enumerate(f.text.split("\n"), 1) if ln.strip().lower() == "## outcomes"), None)
        mid = f.detail.id
        said = f"{mid} failed {failed} of its last {looked} uses: " + "; ".join(notes)
        fix = f"fix the steps (`memcli update {mid}`), or lower its importance or retire it "
        fix += f"(`memcli update {mid} --expires 0d`)"
        return [Finding("procedure-failing", "warning", f.rel, line, said, fix)]

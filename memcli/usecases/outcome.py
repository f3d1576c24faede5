"""Record that a memory (a procedure, usually) worked or failed. The counters and dated notes live
in the detail file (`store/outcomes.py`); `updated` is left alone, so an outcome neither reorders
MEMORY.md nor counts as an edit."""

from __future__ import annotations

from ..errors import UsageError
from ..model import Result, one_line
from ..safety.writecheck import WriteCheck, mask
from ..store import details as dfile
from ..store import outcomes
from ..store.fs import atomic_write_many, read_text
from ..paths import check_id
from ..safety.text_limits import check_rendered, check_text_field


def record(root, memory_id: str, result: str, note: str | None, now: str) -> Result:
    """Add one outcome to a memory (in memory/ or memory/archive/); returns its new record."""
    check_id(memory_id)
    if result not in outcomes.RESULTS:
        raise UsageError(f"the outcome must be success or failure, got {result!r}")
    note = one_line(note or "")
    check_text_field(note, "note")
    if len(note) > outcomes.MAX_NOTE:
        raise UsageError(f"the note has {len(note)} characters; the limit is {outcomes.MAX_NOTE}")
    fields, redacted = WriteCheck(root.config["write.secrets"]).secrets({"note": note})
    fields, warnings = mask(root, fields)
    note = fields["note"]
    with root.lock():
        path = root.locate(memory_id)[0]
        rel = root.rel(path)
        raw = read_text(path, rel)
        d = dfile.parse(raw, memory_id, rel)
        new = outcomes.recorded(d, result, note, now)
        text = dfile.render_update(raw, d, new)
        check_rendered(text)
        atomic_write_many([(path, text, dfile.newline_of(raw))])
    uses, successes = outcomes.count(new, outcomes.USES), outcomes.count(new, outcomes.SUCCESSES)
    if redacted:
        warnings.append(f"redacted {len(redacted)} secret(s) in the note")
    if d.type != "procedure":
        warnings.append(f"{memory_id} is a {d.type}, not a procedure: its outcomes are kept all the same")
    return Result(
        {
            "id": memory_id,
            "path": rel,
            "result": result,
            "note": note or None,
            "uses": uses,
            "successes": successes,
            "success_rate": round(outcomes.rate(uses, successes), 4),
            "last_outcome": new.extra[outcomes.LAST],
            "record": outcomes.record_line(new),
        },
        warnings,
    )

"""The one check every write goes through, whichever door it comes by (remember and update from
the command line, the Python API and MCP, edit, import, the git merge driver's result, heartbeat's
carry of a hand-edited index line): sizes, control characters, conflict-marker lines, secrets by
`write.secrets`, and for a whole detail file a frontmatter that reads and holds valid values. What
each refusal is and its exit code: docs/safety.md.
"""

from __future__ import annotations

from ..errors import FileError, SecretError, UsageError
from ..store import markers
from .text_limits import MAX_FILE, check_rendered, check_sizes, check_text_field, controls

MAX_BODY = 1_000_000  # bytes of new body text one write may bring (the command line's input limit)
BODY_FIELDS = ("body", "append")  # text that starts at the beginning of a line of the file
NAME_FIELDS = ("id", "tags")  # no white space or line break at all


class Checked:
    """What passed: the fields or the text (redacted under `write.secrets: redact`), the parsed
    memory of a whole detail file, and what was redacted ({field, kind, line, column} each)."""

    __slots__ = ("fields", "text", "detail", "redacted")

    def __init__(self, fields: dict | None = None, text: str | None = None, detail=None, redacted: list | None = None):
        self.fields = fields if fields is not None else {}
        self.text, self.detail = text, detail
        self.redacted = redacted if redacted is not None else []

    def warning(self, where: str | None = None) -> str | None:
        """What was redacted: in ``where``, or field by field."""
        if not self.redacted:
            return None
        said = f"in {where}" if where else ", ".join(f"{r['kind']} in the {r['field']}" for r in self.redacted)
        return f"redacted {len(self.redacted)} secret(s)" + (" " if where else ": ") + said


class WriteCheck:
    """The checks of one root's write policy; ``of(root, rel)`` for the file about to be written."""

    def __init__(self, secrets: str = "refuse", marker_size: int = markers.SIZE):
        self.policy = secrets
        self.marker_size = marker_size

    @classmethod
    def of(cls, root, rel: str | None = None) -> "WriteCheck":
        """The checks under a store.Root's `write.secrets`, for the file rel of it."""
        from ..paths import detail_rel

        return cls(root.config["write.secrets"], markers.size_for(root.path / (rel or detail_rel("memory"))))

    # ------------------------------------------------------------ fields of a memory

    def fields(self, fields: dict) -> Checked:
        """Fields on their way into a memory: title, summary, source, tags, aliases, id (text or
        lists of text), extra (other frontmatter keys, nested values too), body or append."""
        for name, value in fields.items():
            _controls(name, value, name in NAME_FIELDS)
        sizes(fields)
        for name in BODY_FIELDS:
            if fields.get(name):
                self.markers(str(fields[name]), f"the {name}")
        new, redacted = self.secrets(fields)
        return Checked(fields=new, redacted=redacted)

    def markers(self, text: str, what: str) -> None:
        """Refuse text holding a line git would read as a conflict marker."""
        found = markers.marker_lines(text, self.marker_size)
        if found:
            line, shown = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise UsageError(
                f"{what}: line {line} ({shown[:20]!r}) would be read by git as a "
                f"conflict marker{more}; indent such lines by a space (or write them in an "
                "indented block) to keep them as text",
                data={"markers": [{"line": n, "text": t[:40]} for n, t in found]},
            )

    def secrets(self, fields: dict) -> tuple[dict, list]:
        """The fields by `write.secrets`: unchanged (allow), redacted (redact, with what was
        redacted), or SecretError (refuse). Strings in lists and dicts are scanned, and so are the
        keys of a dict (other frontmatter keys)."""
        if self.policy == "allow":
            return fields, []
        from .scanner import find_secrets, redact_secrets

        redacted: list = []

        def walk(name, value):
            if isinstance(value, (list, tuple)):
                return type(value)(walk(name, v) for v in value)
            if isinstance(value, dict):
                return {
                    walk(f"key {k!r}" if isinstance(k, str) else name, k): walk(str(k), v) for k, v in value.items()
                }
            hits = find_secrets(value) if isinstance(value, str) else None
            if not hits:
                return value
            where = [{"field": name, "kind": x.kind, "line": x.line, "column": x.column} for x in hits]
            if self.policy == "refuse":
                h = hits[0]
                more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
                raise SecretError(
                    f"refused: the {name} holds a secret ({h.kind}) at line {h.line}, column {h.column}{more}; "
                    "remove it, or set write.secrets: redact in memcli.yaml",
                    data={"secrets": where},
                )
            redacted.extend(where)
            return redact_secrets(value)[0]

        return {name: walk(name, value) for name, value in fields.items()}, redacted

    # ------------------------------------------------------------ a whole file

    def file(
        self,
        text: str,
        rel: str,
        memory_id: str | None = None,
        *,
        edited: bool = False,
        what: str = "the text",
        marker_lines: bool = True,
    ) -> Checked:
        """A whole file about to be written: a detail file (memory_id given: it must parse, and,
        edited by a person, hold its frontmatter block and valid values), MEMORY.md or an episode
        log. marker_lines=False leaves out the conflict-marker lines (a merge that wrote real ones)."""
        if len(text.encode("utf-8")) > MAX_FILE:
            raise UsageError(f"{what} is larger than {MAX_FILE // 1_000_000} MB; memcli keeps text memories")
        _raw_controls(text, what)
        if marker_lines:
            self.markers(text, what)
        new, redacted = self.secrets({what.removeprefix("the "): text})
        text = next(iter(new.values()))
        d = None
        if memory_id is not None:
            check_rendered(text)
            d = self._detail(text, rel, memory_id, edited, what)
        return Checked(text=text, detail=d, redacted=redacted)

    def findings(self, text: str) -> list[tuple[int, str]]:
        """What this check refuses in a whole file written by hand, without raising: (line, what)
        for its size, each line holding a control character and each secret (unless secrets are
        allowed). `sync` asks it of every file it is about to commit (conflict-marker lines stop
        sync earlier, on their own)."""
        found: list = []
        if len(text.encode("utf-8")) > MAX_FILE:
            found.append((1, f"larger than {MAX_FILE // 1_000_000} MB"))
        found += [(line, f"control character U+{ord(ch):04X}") for line, _column, ch in controls(text)]
        if self.policy != "allow":
            from .scanner import find_secrets

            found += [(h.line, h.kind) for h in find_secrets(text)]
        return sorted(found)

    def _detail(self, text: str, rel: str, memory_id: str, edited: bool, what: str):
        from ..store import details as dfile

        try:
            d = dfile.parse(text, memory_id, rel)
        except dfile.FrontmatterError as e:
            p = e.problem
            raise FileError(f"{what}: line {p.line or 1}: {p.message}") from None
        for key in ("title", "summary", "source", "type", "tags", "aliases", "extra"):
            _controls(key, getattr(d, key), False)
        if edited:
            if dfile.split(text)[0] is None:
                raise UsageError(
                    f"{what}: the frontmatter block is gone (a memory starts with a line '---', "
                    "its keys, and another '---'); put it back"
                )
            from .frontmatter_values import invalid_values

            bad = invalid_values(text, d)
            if bad:
                x = bad[0]
                raise UsageError(f"{what}: line {x.line or 1}: {x.message}; {x.fix}")
        return d


def sizes(fields: dict) -> None:
    """The size part of the check: new body text over 1 MB, and what the reader would refuse
    (UsageError, exit 2). A proposal's fields (title, summary, tags, aliases, its text as the body)
    pass it before anything is stored (``proposals``)."""
    for name in BODY_FIELDS:
        body = fields.get(name)
        if body is not None and len(str(body).encode("utf-8")) > MAX_BODY:
            raise UsageError(f"the {name} is larger than {MAX_BODY // 1_000_000} MB; memcli keeps text memories")
    sized = {k: v for k, v in fields.items() if k not in BODY_FIELDS}
    sized["body"] = "".join(str(fields.get(k) or "") for k in BODY_FIELDS)
    check_sizes(sized)


def proposals(objects: list) -> None:
    """``sizes`` of each proposal an agent hands over (MCP `propose`, the API), at the door."""
    for obj in objects:
        if isinstance(obj, dict):
            keys = ("title", "summary", "tags", "aliases", "text")
            sizes({"body" if k == "text" else k: obj[k] for k in keys if isinstance(obj.get(k), (str, list))})


def _controls(name: str, value, strict: bool) -> None:
    """UsageError (exit 2) for a control character in a value: strings, lists and dicts (their
    keys are names: no white space control at all)."""
    if value is None:
        return
    if isinstance(value, str):
        check_text_field(
            value, {"tags": "tag", "aliases": "alias", "extra": "frontmatter value"}.get(name, name), name=strict
        )
    elif isinstance(value, (list, tuple)):
        for v in value:
            _controls(name, v, strict)
    elif isinstance(value, dict):
        for k, v in value.items():
            _controls(f"key {k!r}" if name == "extra" else name, str(k), True)
            _controls(name, v, strict)


def _raw_controls(text: str, what: str) -> None:
    first = next(controls(text), None)
    if first is not None:
        line, column, ch = first
        raise UsageError(
            f"{what}: line {line}, column {column} holds a control character (U+{ord(ch):04X}); "
            "control characters are not allowed"
        )


def check_merged(kind: str, text: str, full, rel: str, conflicts: int = 0, policy: str = "refuse") -> str:
    """The git merge driver's result (kind index, detail or episode) through the write check: the
    text to write (redacted under `write.secrets: redact`). full: the file's absolute path (None
    when git gave none); rel: the path as messages say it; policy: `write.secrets` of the root
    that holds the file. A refusal raises MemcliError: the driver fails and git leaves the file
    conflicted, for a person. Conflict-marker lines are checked only when the merge wrote none of
    its own; a detail file must still be readable."""
    from pathlib import Path

    check = WriteCheck(policy, markers.size_for(full) if full is not None else markers.SIZE)
    memory_id = Path(rel).stem if kind == "detail" and not conflicts else None
    checked = check.file(text, rel, memory_id, what=f"the merged {rel}", marker_lines=not conflicts).text
    assert checked is not None  # a file's check gives its text
    return checked


def mask(root, fields: dict, captured: bool = False) -> tuple[dict, list]:
    """Personal data in text on its way into a file of a store.Root, under the policy of the front
    end writing (root.door): `write.pii` for deliberate writes, `write.pii_captured` for text
    captured on its own (session turns, hook prompts). (fields, warnings); PiiError (exit 4) under
    `refuse`."""
    if all(isinstance(v, str) and "@" not in v and not any(c.isdigit() for c in v) for v in fields.values()):
        return fields, []  # every rule needs a digit or an '@': the scan is not even loaded
    from ..config import pii_policy
    from . import pii

    return pii.apply_fields(fields, pii_policy(root.config, root.door, captured))

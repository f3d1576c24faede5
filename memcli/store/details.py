"""Detail files: one YAML frontmatter block (see ``frontmatter``), then a Markdown body. A
memory's values are normalised once, here: unknown keys kept in order, a BOM and CRLF tolerated,
the body's ## History section kept last, never a second frontmatter block."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import FileError
from ..model import DEFAULT_IMPORTANCE, DEFAULT_TYPE, DETAIL_KEYS, Detail, clean_tags, importance_of, one_line
from .frontmatter import MAX_FRONTMATTER, FrontmatterError, dump_key, dump_value, fenced, rewrite, split
from .frontmatter import load as load_frontmatter
from .fs import read_text
from .layout import detail_rel

_MAX_NODES = 10_000
_MAX_DEPTH = 20
_MAX_INT_BITS = 13_000  # about 3,900 decimal digits: Python will not print an int past 4,300


def _flat(data: dict) -> bool:
    """Whether frontmatter is flat and small (what memcli writes): kept without ``_check_shape``'s walk."""
    nodes = len(data)
    for k, v in data.items():
        t = type(v)
        if type(k) is not str:
            return False
        if t is list:
            if not all(type(x) is str for x in v):
                return False
            nodes += len(v)
        elif not (t is str or t is bool or v is None or t is float or (t is int and v.bit_length() <= _MAX_INT_BITS)):
            return False
    return nodes < _MAX_NODES


def _check_shape(value, depth=0, count=None):
    """The value as memcli keeps it (dates as ISO strings); ValueError for what it cannot keep."""
    if count is None and type(value) is dict and _flat(value):
        return value
    count = count if count is not None else [0]
    count[0] += 1
    if count[0] > _MAX_NODES or depth > _MAX_DEPTH:
        raise ValueError("frontmatter is nested too deeply or too large (YAML aliases?)")
    if isinstance(value, dict):
        return {_check_shape(k, depth + 1, count): _check_shape(v, depth + 1, count) for k, v in value.items()}
    if isinstance(value, list):
        return [_check_shape(v, depth + 1, count) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:
            raise ValueError("a number too large to read (more than 4,000 digits)")
        return value
    if hasattr(value, "isoformat"):  # an explicit !!timestamp: kept as the string it was written as
        return value.isoformat()
    kinds: dict[type, str] = {bytes: "binary data (!!binary)", set: "a set (!!set)", tuple: "a pair list"}
    kind = kinds.get(type(value), type(value).__name__)
    raise ValueError(f"a value memcli cannot keep: {kind}")


def _shape_problem(fm: str, data: dict, message: str) -> tuple[int, str]:
    """(line, message) of the key whose value _check_shape refused (line 2 for the whole block)."""
    if message.startswith("frontmatter is nested"):
        return 2, message
    for k, v in data.items():
        try:
            _check_shape({k: v})
        except ValueError:
            m = re.search(rf"^['\"]?{re.escape(str(k))}['\"]?\s*:", fm, re.M)
            line = fm.count("\n", 0, m.start()) + 2 if m else 2
            return line, f"{str(k)[:40]}: {message}"
    return 2, message


def str_list(value) -> tuple[str, ...]:
    """A frontmatter list of words (or one comma-separated string) as one-line strings."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = re.split(r"[,，]", value)
    if not isinstance(value, (list, tuple)):
        value = [value]
    return tuple(one_line(v) for v in value if v is not None and one_line(v))


def stamp_of(value) -> str | None:
    """A frontmatter date as the string it was written as (None for none)."""
    if value is None or value == "":
        return None
    return str(value) if not hasattr(value, "isoformat") else value.isoformat()


def flag(value) -> bool:
    """A frontmatter yes/no (pinned): true, yes, on and 1 are yes."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return bool(value)


def _first_heading(body: str) -> str | None:
    m = re.search(r"^#{1,6}\s+(.+)$", body, re.M)
    return one_line(m.group(1)) if m else None


def parse(text: str, memory_id: str, path: str = "", use_fast: bool = True) -> Detail:
    """A Detail from a file's text; FrontmatterError (with path and line) when broken."""
    shown = path or detail_rel(memory_id)
    try:
        fm, body, _ = split(text)
    except ValueError as e:
        raise FrontmatterError(shown, e.args[0], e.args[1])
    data: dict = {}
    if fm is not None:
        if len(fm) > MAX_FRONTMATTER:
            raise FrontmatterError(shown, 1, f"frontmatter is larger than {MAX_FRONTMATTER // 1000} kB")
        loaded = load_frontmatter(fm, shown, use_fast)
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise FrontmatterError(shown, 2, f"frontmatter is a {type(loaded).__name__}, not a mapping of keys")
        try:
            loaded = _check_shape(loaded)
        except ValueError as e:
            raise FrontmatterError(shown, *_shape_problem(fm, loaded, str(e)))
        data = {str(k): v for k, v in loaded.items()}
    title = one_line(data.get("title") or "") or _first_heading(body) or memory_id
    extra = {k: v for k, v in data.items() if k not in DETAIL_KEYS}
    return Detail(
        id=memory_id,
        title=title,
        summary=one_line(data.get("summary") or ""),
        tags=clean_tags(str_list(data.get("tags"))),
        aliases=str_list(data.get("aliases")),
        type=one_line(data.get("type") or DEFAULT_TYPE),
        importance=importance_of(data.get("importance", DEFAULT_IMPORTANCE)),
        pinned=flag(data.get("pinned", False)),
        created=stamp_of(data.get("created")),
        updated=stamp_of(data.get("updated")),
        expires=stamp_of(data.get("expires")),
        source=None if data.get("source") is None else one_line(data.get("source")),
        extra=extra,
        body=body,
        path=shown,
    )


def render(d: Detail) -> str:
    """The file text: known keys in a stable order, unknown keys after them, then the body."""
    known = {k: getattr(d, k) for k in DETAIL_KEYS} | {"tags": list(d.tags), "aliases": list(d.aliases)}
    lines = [f"{key}: {dump_value(value)}" for key, value in known.items()]
    lines += [dump_key(key, value) for key, value in d.extra.items() if key not in known]
    body = d.body
    return fenced(lines) + body + ("" if body.endswith("\n") or not body else "\n")


def newline_of(raw: str) -> str:
    return "\r\n" if "\r\n" in raw[:4096] else "\n"


def read(path: Path, memory_id: str, rel: str) -> Detail:
    return parse(read_text(path, rel), memory_id, rel)


def history_start(lines: list) -> int | None:
    """Where the body's `## History` section starts, or None."""
    return next((i for i, ln in enumerate(lines) if ln.strip().lower() in ("## history", "## 历史")), None)


def append_body(body: str, text: str) -> str:
    """The body with text added above its `## History` section (which stays last), after a blank line."""
    text = text.strip("\n")
    lines = body.rstrip("\n").split("\n") if body.strip() else []
    start = history_start(lines)
    if start is None:
        return "\n".join(lines + ([""] if lines else []) + [text]) + "\n"
    head = lines[:start]
    while head and not head[-1].strip():
        head.pop()
    return "\n".join(head + ([""] if head else []) + [text, ""] + lines[start:]) + "\n"


def add_history(body: str, day: str, notes: list) -> str:
    """Add dated bullets to the body's `## History` section, creating it at the end if needed."""
    lines = body.rstrip("\n").split("\n") if body.strip() else []
    bullets = [f"- {day}: {n}" for n in notes]
    start = history_start(lines)
    if start is None:
        lines += ([""] if lines else []) + ["## History", ""] + bullets
    else:
        end = next((j for j in range(start + 1, len(lines)) if re.match(r"^#{1,2}\s", lines[j])), len(lines))
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        if end == start + 1:
            bullets = [""] + bullets
        lines[end:end] = bullets
    return "\n".join(lines) + "\n"


def render_update(raw: str, old: Detail, new: Detail) -> str:
    """The file text after an update: only the frontmatter keys that changed are rewritten (a
    person's comments and layout stay), or the whole file when that edit cannot be sure."""
    full = render(new)
    try:
        fm, _, _ = split(raw)
    except ValueError:
        return full
    if fm is None:
        return full
    if any(k not in new.extra for k in old.extra):
        return full
    changes = {
        k: (getattr(old, k), getattr(new, k)) for k in DETAIL_KEYS if k != "id" and getattr(old, k) != getattr(new, k)
    }
    # other keys (outcome counters and the like) with a plain value are rewritten the same way
    changes.update(
        (k, (old.extra.get(k), v))
        for k, v in new.extra.items()
        if k not in DETAIL_KEYS and (k not in old.extra or old.extra[k] != v) and not isinstance(v, (dict, list))
    )
    norms = {"tags": lambda v: clean_tags([v])[0] if clean_tags([v]) else ""}
    body = new.body + ("" if new.body.endswith("\n") or not new.body else "\n")
    for in_place in (True, False):
        edited = rewrite(fm, changes, in_place, norms)
        if edited is None:
            return full
        text = fenced([edited]) + body
        try:
            back = parse(text, new.id, new.path)
        except FileError:
            continue
        if back == new.replace(body=body) and back.extra == new.extra:
            return text
    return full

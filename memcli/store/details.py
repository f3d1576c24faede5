"""Detail files: one YAML frontmatter block, then a Markdown body.

YAML is normalised once, here: dates stay the strings they were written as, only
true/false are booleans (yes/no/on/off stay words), unknown keys are kept in order,
a BOM and CRLF are tolerated, and rendering never creates a second frontmatter block.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import FileError
from ..model import DEFAULT_IMPORTANCE, DEFAULT_TYPE, DETAIL_KEYS, Detail, Problem, clean_tags, one_line

FENCE = "---"
MAX_FRONTMATTER = 64_000
_MAX_NODES = 10_000
_MAX_DEPTH = 20
_MAX_INT_BITS = 13_000  # about 3,900 decimal digits: Python will not print an int past 4,300


class FrontmatterError(FileError):
    def __init__(self, path: str, line: int | None, message: str):
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.problem = Problem(path, line, message)


_yaml_classes: tuple | None = None


def _yaml():
    """yaml plus a loader and dumper that keep dates as strings and yes/no as words."""
    global _yaml_classes
    if _yaml_classes is None:
        import yaml

        base_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        base_dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

        class Loader(base_loader):  # type: ignore[misc, valid-type]
            pass

        Loader.yaml_implicit_resolvers = {
            ch: [(tag, rx) for tag, rx in rs if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")]
            for ch, rs in base_loader.yaml_implicit_resolvers.items()
        }
        Loader.add_implicit_resolver(
            "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
        )

        class Dumper(base_dumper):  # type: ignore[misc, valid-type]
            pass

        Dumper.yaml_implicit_resolvers = {
            ch: [(tag, rx) for tag, rx in rs if tag != "tag:yaml.org,2002:timestamp"]
            for ch, rs in base_dumper.yaml_implicit_resolvers.items()
        }
        _yaml_classes = (yaml, Loader, Dumper)
    return _yaml_classes


def split(text: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, line number where the body starts).

    Raises ValueError(line, message) for an unclosed fence."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip(" \t") != FENCE:
        return None, text, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip(" \t") == FENCE:
            body = "\n".join(lines[i + 1:])
            return "\n".join(lines[1:i]), body, i + 2
    raise ValueError(1, "frontmatter opened with '---' on line 1 is never closed")


def _check_shape(value, depth=0, count=None):
    """The value as memcli keeps it: dates as their ISO strings; ValueError for a shape or a
    value it cannot keep (nested too deeply, binary data, a set, a number too large to print)."""
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
    kind = {bytes: "binary data (!!binary)", set: "a set (!!set)", tuple: "a pair list"}.get(type(value),
                                                                                          type(value).__name__)
    raise ValueError(f"a value memcli cannot keep: {kind}")


def _shape_problem(fm: str, data: dict, message: str) -> tuple[int, str]:
    """(line, message) of the key whose value _check_shape refused (line 2, the frontmatter's
    first, for a block too large or too deep as a whole)."""
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


def _str_list(value) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in re.split(r"[,，]", value)]
    if not isinstance(value, (list, tuple)):
        value = [value]
    return tuple(one_line(v) for v in value if v is not None and one_line(v))


def _stamp(value) -> str | None:
    if value is None or value == "":
        return None
    return str(value) if not hasattr(value, "isoformat") else value.isoformat()


def _importance(value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        return DEFAULT_IMPORTANCE
    return DEFAULT_IMPORTANCE if v != v else min(1.0, max(0.0, v))


def _bool(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return bool(value)


def _first_heading(body: str) -> str | None:
    m = re.search(r"^#{1,6}\s+(.+)$", body, re.M)
    return one_line(m.group(1)) if m else None


def _load_yaml(fm: str, shown: str):
    yaml, Loader, _ = _yaml()
    try:
        return yaml.load(fm, Loader=Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        what = getattr(e, "problem", None) or getattr(e, "reason", None) or str(e)
        raise FrontmatterError(shown, line, f"broken YAML: {one_line(what)}")
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as e:
        # YAML parsed it but a value cannot be built (an integer of thousands of digits, a date
        # that is not one): name the line when it can be found
        why = one_line(str(e)).split(";")[0][:120] or e.__class__.__name__
        m = re.search(r"\d{4000,}", fm) if isinstance(e, ValueError) else None
        line = fm.count("\n", 0, m.start()) + 2 if m else 1
        raise FrontmatterError(shown, line, f"a value cannot be read ({why})")


def parse(text: str, memory_id: str, path: str = "", use_fast: bool = True) -> Detail:
    """A Detail from a file's text; FrontmatterError (with path and line) when broken.

    Flat frontmatter (what memcli writes) is read by flatyaml; anything else by PyYAML."""
    shown = path or f"memory/{memory_id}.md"
    try:
        fm, body, body_line = split(text)
    except ValueError as e:
        raise FrontmatterError(shown, e.args[0], e.args[1])
    data: dict = {}
    if fm is not None:
        if len(fm) > MAX_FRONTMATTER:
            raise FrontmatterError(shown, 1, f"frontmatter is larger than {MAX_FRONTMATTER // 1000} kB")
        from .flatyaml import load as load_flat

        loaded = load_flat(fm) if use_fast else None
        if loaded is None:
            loaded = _load_yaml(fm, shown)
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
        tags=clean_tags(_str_list(data.get("tags"))),
        aliases=_str_list(data.get("aliases")),
        type=one_line(data.get("type") or DEFAULT_TYPE),
        importance=_importance(data.get("importance", DEFAULT_IMPORTANCE)),
        pinned=_bool(data.get("pinned", False)),
        created=_stamp(data.get("created")),
        updated=_stamp(data.get("updated")),
        expires=_stamp(data.get("expires")),
        source=None if data.get("source") is None else one_line(data.get("source")),
        extra=extra,
        body=body,
        path=shown,
    )


_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off"}


def _plain(value) -> str | None:
    """The value written without PyYAML when its plain form reads back the same everywhere
    (flatyaml, memcli's loader, and YAML 1.1 readers); None when PyYAML must write it."""
    from .flatyaml import _FLOAT, _NO, _scalar

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if _FLOAT.match(text) else None
    if isinstance(value, str):
        if not value or value.lower() in _YAML11_WORDS or _scalar(value) is _NO or _scalar(value) != value:
            return None
        return value
    if isinstance(value, (list, tuple)):
        items = []
        for v in value:
            if (not isinstance(v, str) or not v or "," in v or ":" in v or v.lower() in _YAML11_WORDS
                    or _scalar(v, in_list=True) != v):
                return None
            items.append(v)
        return "[" + ", ".join(items) + "]"
    return None


def _dump_value(value) -> str:
    plain = _plain(value)
    if plain is not None:
        return plain
    yaml, _, Dumper = _yaml()
    text = yaml.dump(value, Dumper=Dumper, allow_unicode=True, default_flow_style=True, width=10**9, sort_keys=False)
    text = text.rstrip("\n")
    if text.endswith("\n..."):
        text = text[:-4].rstrip("\n")
    return text


def render(d: Detail) -> str:
    """The file text: known keys in a stable order, unknown keys after them, then the body."""
    known = {
        "id": d.id, "title": d.title, "summary": d.summary, "tags": list(d.tags),
        "aliases": list(d.aliases), "type": d.type, "importance": d.importance, "pinned": d.pinned,
        "created": d.created, "updated": d.updated, "expires": d.expires, "source": d.source,
    }
    lines = [FENCE]
    for key, value in known.items():
        lines.append(f"{key}: {_dump_value(value)}")
    for key, value in d.extra.items():
        if key in known:
            continue
        if isinstance(value, dict) and value:
            yaml, _, Dumper = _yaml()
            lines.append(yaml.dump({key: value}, Dumper=Dumper, allow_unicode=True, default_flow_style=None,
                                   width=10**9, sort_keys=False).rstrip("\n"))
        else:
            lines.append(f"{_dump_value(key)}: {_dump_value(value)}")
    lines.append(FENCE)
    body = d.body
    return "\n".join(lines) + "\n" + body + ("" if body.endswith("\n") or not body else "\n")


def newline_of(raw: str) -> str:
    return "\r\n" if "\r\n" in raw[:4096] else "\n"


def read(path: Path, memory_id: str, rel: str) -> Detail:
    from .fs import read_text

    return parse(read_text(path, rel), memory_id, rel)


def _history_start(lines: list) -> int | None:
    return next((i for i, ln in enumerate(lines) if ln.strip().lower() in ("## history", "## 历史")), None)


def append_body(body: str, text: str) -> str:
    """The body with text added after what it says, above its `## History` section (which stays
    last and one list); a blank line between them."""
    text = text.strip("\n")
    lines = body.rstrip("\n").split("\n") if body.strip() else []
    start = _history_start(lines)
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
    start = _history_start(lines)
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


# ---------- an update that rewrites only the keys it changes ----------

_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)")
_ITEM = re.compile(r"^(?P<indent>[ \t]*)-(?:[ \t]+(?P<rest>.*))?$")


def _key_spans(lines: list[str]) -> dict | None:
    """key -> (first line, end) of each top-level key; None when the layout is not plain keys
    (a duplicate key, a quoted or complex key at the left margin, a directive)."""
    spans: dict = {}
    current = None
    for i, ln in enumerate(lines):
        if not ln.strip() or ln[0] in " \t#":
            continue
        if _ITEM.match(ln):
            if current is None:
                return None
            continue
        m = _TOP_KEY.match(ln)
        if not m or m.group("key") in spans:
            return None
        if current is not None:
            spans[current] = (spans[current][0], i)
        current = m.group("key")
        spans[current] = (i, len(lines))
    for key, (start, end) in spans.items():  # blank and comment lines after a value stay where they are
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
        spans[key] = (start, end)
    return spans


def _split_comment(text: str) -> tuple[str, str]:
    """(value, ' # comment' or '') for a plain scalar followed by a comment; the comment is only
    split off when the value before it is a plain scalar whose meaning is certain."""
    from .flatyaml import _NO, _scalar

    cut = text.find(" #")
    if cut == -1:
        cut = text.find("\t#")
    if cut == -1:
        return text, ""
    value = text[:cut].rstrip(" \t")
    if not value or _scalar(value) is _NO:
        return text, ""
    return value, text[len(value):]


def _scalar_line(key: str, old_line: str, value) -> str:
    rest = old_line.split(":", 1)[1].strip(" \t") if ":" in old_line else ""
    _, comment = _split_comment(rest)
    return f"{key}: {_dump_value(value)}{comment}"


def _edit_block_list(span: list[str], old: tuple, new: tuple, norm) -> list[str] | None:
    """A block list edited in place: kept items keep their lines (and comments), removed ones go,
    new ones follow the last item with the same indent. None when the list is not a plain one."""
    from .flatyaml import _NO, _scalar

    head, rest = span[0], span[1:]
    if head.split(":", 1)[1].split("#", 1)[0].strip(" \t"):
        return None  # a value on the key's own line: not a block list
    items, indent = [], None
    for j, ln in enumerate(rest):
        m = _ITEM.match(ln)
        if m is None:
            if ln.strip() and not ln.lstrip(" \t").startswith("#"):
                return None
            continue
        value, _ = _split_comment(m.group("rest") or "")
        parsed = _scalar(value, in_list=True) if value else _NO
        if parsed is _NO or parsed is None:
            return None
        items.append((j, norm(parsed)))
        indent = m.group("indent") if indent is None else indent
    if [v for _, v in items] != list(old) or not new:
        return None
    keep = set(new)
    out = [head]
    last = 0
    for j, ln in enumerate(rest):
        item = next((v for k, v in items if k == j), None)
        if item is not None and item not in keep:
            continue
        out.append(ln)
        if item is not None:
            last = len(out)
    added = [f"{indent or ''}- {_dump_value(v)}" for v in new if v not in set(old)]
    if not items:
        last = len(out)
    out[last:last] = added
    return out


_GONE = object()


def render_update(raw: str, old: Detail, new: Detail) -> str:
    """The file text after an update: only the frontmatter keys that changed are rewritten, so
    a person's comments, block lists and the text of every other key stay byte for byte. When the
    frontmatter is not one this edit can be sure of, the whole file is rendered instead."""
    full = render(new)
    try:
        fm, _, _ = split(raw)
    except ValueError:
        return full
    if fm is None:
        return full
    lines = fm.split("\n")
    spans = _key_spans(lines)
    if spans is None:
        return full
    changed = [k for k in DETAIL_KEYS if k != "id" and getattr(old, k) != getattr(new, k)]
    # other keys (outcome counters and the like) with a plain value are rewritten the same way
    changed += [k for k in new.extra if k not in DETAIL_KEYS and old.extra.get(k, _GONE) != new.extra[k]
                and not isinstance(new.extra[k], (dict, list))]
    if any(k not in new.extra for k in old.extra):
        return full

    def value_of(key):
        return new.extra[key] if key not in DETAIL_KEYS else getattr(new, key)

    for in_place in (True, False):
        out = list(lines)
        tail: list[str] = []
        for key in sorted(changed, key=lambda k: -spans.get(k, (-1,))[0]):
            value = value_of(key)
            value = list(value) if isinstance(value, tuple) else value
            if key not in spans:
                tail.append(f"{key}: {_dump_value(value)}")
                continue
            start, end = spans[key]
            span = out[start:end]
            repl = None
            if in_place and isinstance(value, list):
                norm = (lambda v: clean_tags([v])[0] if clean_tags([v]) else "") if key == "tags" else one_line
                repl = _edit_block_list(span, tuple(getattr(old, key)), tuple(value), norm)
            if repl is None:
                repl = [_scalar_line(key, span[0], value) if end - start == 1 and not isinstance(value, list)
                        else f"{key}: {_dump_value(value)}"]
            out[start:end] = repl
        while out and not out[-1].strip() and tail:
            out.pop()
        body = new.body + ("" if new.body.endswith("\n") or not new.body else "\n")
        text = "\n".join([FENCE, *out, *tail, FENCE]) + "\n" + body
        try:
            back = parse(text, new.id, new.path)
        except FileError:
            continue
        if back == new.replace(body=body) and back.extra == new.extra:
            return text
    return full

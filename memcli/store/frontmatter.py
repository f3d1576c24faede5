"""A detail file's frontmatter: the YAML block between the `---` fences, read and written as
memcli keeps it (dates stay strings, only true/false are booleans), and rewritten key by key so a
person's layout and comments stay. Flat frontmatter is read by ``flatyaml`` and written without
PyYAML whenever its plain form reads back the same everywhere."""

from __future__ import annotations

import functools
import re

from ..errors import FileError
from ..model import Problem, one_line
from . import flatyaml
from .flatyaml import NO, scalar

FENCE = "---"
MAX_FRONTMATTER = 64_000


class FrontmatterError(FileError):
    def __init__(self, path: str, line: int | None, message: str):
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.problem = Problem(path, line, message)


@functools.cache
def yaml_classes():
    """yaml plus a loader and dumper that keep dates as strings and yes/no as words."""
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
    return yaml, Loader, Dumper


def opens(text: str) -> bool:
    """Whether text starts with the fence (a BOM aside): it brings a frontmatter block, maybe broken."""
    return text.lstrip("\ufeff").startswith(FENCE)


def fenced(lines: list) -> str:
    """A frontmatter block of these lines (each a `key: value` line), with its fences."""
    return "\n".join([FENCE, *lines, FENCE]) + "\n"


def span(text: str) -> tuple[int, int] | None:
    """(start, end) of what lies between the fences in text as it is written, or None when there is
    no closed block (the fences found as ``split`` finds them)."""
    start = 1 if text.startswith("\ufeff") else 0
    pos = text.find("\n", start)
    if pos == -1 or _line(text[start:pos]) != FENCE:
        return None
    begin = pos = pos + 1
    while True:
        nl = text.find("\n", pos)
        if (text[pos:].rstrip(" \t") if nl == -1 else _line(text[pos:nl])) == FENCE:
            end = max(begin, pos - 1)
            return begin, end - 1 if end > begin and text[end - 1] == "\r" else end
        if nl == -1:
            return None
        pos = nl + 1


def _line(line: str) -> str:
    """A line that a line end followed, as the reader compares it: CRLF read as LF, then blanks."""
    return (line[:-1] if line.endswith("\r") else line).rstrip(" \t")


def split(text: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, line number where the body starts); ValueError(line,
    message) for an unclosed fence."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[0].rstrip(" \t") != FENCE:
        return None, text, 1
    for i in range(1, len(lines)):
        if lines[i].rstrip(" \t") == FENCE:
            body = "\n".join(lines[i + 1 :])
            return "\n".join(lines[1:i]), body, i + 2
    raise ValueError(1, "frontmatter opened with '---' on line 1 is never closed")


def load(fm: str, shown: str, fast: bool = True):
    """The frontmatter's value: by flatyaml when it can be sure (what memcli writes), else by PyYAML
    (memcli's loader); FrontmatterError with the line when it cannot be read."""
    loaded = flatyaml.load(fm) if fast else None
    if loaded is not None:
        return loaded
    yaml, Loader, _ = yaml_classes()
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


def data(text: str) -> dict:
    """A file's frontmatter keys as written (not normalised); {} when there is none or it cannot be read."""
    try:
        fm, _, _ = split(text)
    except ValueError:
        return {}
    return (_keys(fm) or {}) if fm else {}


def _keys(fm: str) -> dict | None:
    """The keys of a frontmatter block; None when it is no mapping or cannot be read."""
    try:
        loaded = load(fm, "")
    except FileError:
        return None
    return {str(k): v for k, v in loaded.items()} if isinstance(loaded, dict) else None


def key_line(text: str, key: str) -> int | None:
    """The line (from 1) of a file where a top-level key is written, or None."""
    m = re.search(rf"^{re.escape(key)}\s*:", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def strip(body: str) -> tuple[str, dict]:
    """(the rest, its keys) of a body that brings its own frontmatter, else (the body, {}): a memory
    never gets a second frontmatter block."""
    if not opens(body):
        return body, {}
    try:
        fm, rest, _ = split(body)
    except ValueError:
        return body, {}
    keys = _keys(fm) if fm is not None else None
    return (rest, keys) if keys is not None else (body, {})


# ---------------------------------------------------------------- writing values

_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off"}


def plain(value) -> str | None:
    """The value written without PyYAML when its plain form reads back the same everywhere
    (flatyaml, memcli's loader, and YAML 1.1 readers); None when PyYAML must write it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if flatyaml.FLOAT.match(text) else None
    if isinstance(value, str):
        return value if _plain_word(value) else None
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value) + "]" if all(_plain_word(v, in_list=True) for v in value) else None
    return None


def _plain_word(v, in_list: bool = False) -> bool:
    """Whether a text reads back as itself unquoted (in a flow list: holding no ',' or ':' either)."""
    if not isinstance(v, str) or not v or v.lower() in _YAML11_WORDS or (in_list and ("," in v or ":" in v)):
        return False
    return scalar(v, in_list=in_list) == v


def dump_value(value) -> str:
    """A value as it follows `key: ` on one line (flow style)."""
    text = plain(value)
    if text is not None:
        return text
    text = _dump(value, flow=True)
    return text[:-4].rstrip("\n") if text.endswith("\n...") else text


def dump_key(key, value) -> str:
    """One key of the frontmatter: `key: value`, or a block for a non-empty mapping."""
    if isinstance(value, dict) and value:
        return _dump({key: value}, flow=None)
    return f"{dump_value(key)}: {dump_value(value)}"


def _dump(value, flow: bool | None) -> str:
    yaml, _, Dumper = yaml_classes()
    dumped = yaml.dump(value, Dumper=Dumper, allow_unicode=True, default_flow_style=flow, width=10**9, sort_keys=False)
    return dumped.rstrip("\n")


# ---------------------------------------------------------------- rewriting only the keys that change

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
    cut = text.find(" #")
    if cut == -1:
        cut = text.find("\t#")
    if cut == -1:
        return text, ""
    value = text[:cut].rstrip(" \t")
    if not value or scalar(value) is NO:
        return text, ""
    return value, text[len(value) :]


def _scalar_line(key: str, old_line: str, value) -> str:
    rest = old_line.split(":", 1)[1].strip(" \t") if ":" in old_line else ""
    _, comment = _split_comment(rest)
    return f"{key}: {dump_value(value)}{comment}"


def _edit_block_list(span: list[str], old: tuple, new: tuple, norm) -> list[str] | None:
    """A block list edited in place: kept items keep their lines (and comments), removed ones go,
    new ones follow the last item with the same indent. None when the list is not a plain one."""
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
        parsed = scalar(value, in_list=True) if value else NO
        if parsed is NO or parsed is None:
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
    added = [f"{indent or ''}- {dump_value(v)}" for v in new if v not in set(old)]
    if not items:
        last = len(out)
    out[last:last] = added
    return out


def rewrite(fm: str, changes: dict, in_place: bool = True, norms: dict | None = None) -> str | None:
    """The frontmatter with only the changed keys (key -> (old, new)) rewritten, other text byte for
    byte and new keys last; in_place edits a block list item by item (norms: key -> how its items
    compare). None when the layout is not one this edit can be sure of."""
    lines = fm.split("\n")
    spans = _key_spans(lines)
    if spans is None:
        return None
    norms = norms or {}
    out = list(lines)
    tail: list[str] = []
    for key in sorted(changes, key=lambda k: -spans.get(k, (-1,))[0]):
        old, value = changes[key]
        value = list(value) if isinstance(value, tuple) else value
        if key not in spans:
            tail.append(f"{key}: {dump_value(value)}")
            continue
        start, end = spans[key]
        span = out[start:end]
        repl = None
        if in_place and isinstance(value, list):
            repl = _edit_block_list(span, tuple(old), tuple(value), norms.get(key, one_line))
        if repl is None:
            repl = [
                _scalar_line(key, span[0], value)
                if end - start == 1 and not isinstance(value, list)
                else f"{key}: {dump_value(value)}"
            ]
        out[start:end] = repl
    while out and not out[-1].strip() and tail:
        out.pop()
    return "\n".join([*out, *tail])

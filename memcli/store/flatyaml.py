"""A fast reader for the flat frontmatter memcli writes (`key: scalar`, `key: [a, b]`): it reads
only what it can be sure of, exactly as memcli's YAML loader would, and returns None for anything
else (block lists, nesting, anchors, comments, escapes), which PyYAML then reads."""

from __future__ import annotations

import re

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$")
_INT = re.compile(r"^-?(?:0|[1-9][0-9]*)$")
FLOAT = re.compile(r"^-?(?:0|[1-9][0-9]*)\.[0-9]+$")
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?)?$")
_NULL = {"", "~", "null", "Null", "NULL"}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_PLAIN_BAD_START = set("[]{}&*!|>'\"%@`#,?:")
_NUMBERISH_START = set("-+.0123456789")
_NUMBER_CHARS = set("0123456789abcdefABCDEFxXoObB_.:+-infINFaN")
NO = object()  # "not sure": the caller falls back to PyYAML
_MAX_DIGITS = 4000


def scalar(text: str, in_list: bool = False):
    """One plain value as memcli's YAML loader reads it, or NO when only PyYAML can say."""
    v = text.strip(" ")
    if v and (v[0].isspace() or v[-1].isspace() or not v.isprintable()):
        return NO
    if v in _NULL:
        return None if not in_list else NO
    if v in _BOOL:
        return _BOOL[v]
    if v[0] == "'":
        inner = v[1:-1]
        if len(v) < 2 or v[-1] != "'" or "'" in inner.replace("''", ""):
            return NO
        return inner.replace("''", "'")
    if v[0] == '"':
        inner = v[1:-1]
        if len(v) < 2 or v[-1] != '"' or '"' in inner or "\\" in inner:
            return NO
        return inner
    if _INT.match(v):
        return int(v) if len(v) < _MAX_DIGITS else NO  # a longer one: YAML's reader says why it is refused
    if FLOAT.match(v):
        return float(v)
    if _STAMP.match(v):
        return v
    if v[0] in _NUMBERISH_START and (v.startswith("- ") or not set(v) - _NUMBER_CHARS):
        return NO  # could be one of YAML 1.1's int, float or sexagesimal forms: let YAML decide
    if v[0] in _PLAIN_BAD_START or ": " in v or " #" in v or v.endswith(":") or "\t" in v:
        return NO
    if in_list and ("[" in v or "]" in v or "{" in v or "}" in v):
        return NO
    if v.lower() in (".inf", ".nan", "-.inf", "+.inf", "<<", "="):
        return NO
    return v


def load(text: str):
    """The mapping, or None when the text needs the full YAML parser."""
    out: dict = {}
    for line in text.split("\n"):
        if not line.strip(" ") or line.startswith("#"):
            continue
        m = _KEY.match(line.rstrip(" "))
        if not m or m.group(1) in out:
            return None
        key, raw = m.group(1), (m.group(2) or "")
        raw = raw.strip(" ")
        if raw.startswith("["):
            if not raw.endswith("]") or raw.count("[") != 1 or raw.count("]") != 1:
                return None
            inner = raw[1:-1].strip(" ")
            items = []
            if inner:
                if inner.endswith(","):
                    return None
                for part in inner.split(","):
                    if not part.strip(" "):
                        return None
                    val = scalar(part, in_list=True)
                    if val is NO:
                        return None
                    items.append(val)
            out[key] = items
            continue
        val = scalar(raw) if raw else None
        if val is NO:
            return None
        out[key] = val
    return out

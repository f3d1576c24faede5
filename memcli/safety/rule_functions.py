"""The code the rule files (``safety/rules/*.json``) name: validators (``check``: is this matched
text real?) and finders (``finder``: what a regular expression alone cannot find). A plugin adds
its own through ``scanner.add_rule_set(..., validators=..., finders=...)``.

Placeholders (``AKIAXXXXXXXXXXXXXXXX``, ``sk-...``, ``<your-key>``, ``${VAR}``, ``changeme``) are
not secrets; AWS's documented example key id and secret are: they have the exact format of real
ones, and a real key whose letters spell a word must not slip through.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache

from . import invisible

VALIDATORS: dict[str, Callable[[str], bool]] = {}
FINDERS: dict[str, Callable] = {}

_rx = lru_cache(maxsize=None)(re.compile)  # most checks never run on a given text: compiled on first use


def validator(fn):
    VALIDATORS[fn.__name__] = fn
    return fn


def finder(fn):
    FINDERS[fn.__name__] = fn
    return fn


class Hit:
    """What a finder found, shaped like a match: ``span(group)``, and its kind when the rule's
    own kind does not say it."""

    __slots__ = ("_spans", "kind", "excerpt")

    def __init__(
        self, start: int, end: int, kind: str | None = None, excerpt: str | None = None, groups: dict | None = None
    ):
        self._spans = {0: (start, end), **(groups or {})}
        self.kind, self.excerpt = kind, excerpt

    def span(self, group=0) -> tuple[int, int]:
        return self._spans.get(group, (-1, -1))


# --------------------------------------------------------------------------- shapes of values

WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
WORD_DASH = WORD | {"-"}
WORD_DOT = WORD_DASH | {"."}

_FILLER = r"(?i)x{4}|\*{3}|\.\.\.|…|(.)\1{5}|1234567|abcdefg"
_FILLER_WORDS = r"(?i)example|placeholder|redacted|changeme|your|dummy|sample|insert|replace"
_PLACEHOLDER_WORDS = frozenset(
    """
password passwd pass pwd pw secret token key apikey api_key api-key changeme changeit none null nil undefined
true false yes no on off required optional string str int bool test testing todo tbd fixme default empty hidden
masked secure foo bar foobar baz admin root guest user username sample dummy temp tmp unset env environment vault
1password bitwarden lastpass keepass keepassxc keychain ssm secretsmanager omitted removed random generated auto
same set see n/a na -
""".split()
)
_PLACEHOLDER_PARTS = tuple(
    "xxxx **** ... … ${ {{ }} < > example changeme change_me change-me placeholder redacted insert replace dummy "
    "sample here".split()
)
_CODE_LIKE = (
    r"[()\[\]{}]|^(?:[a-z_$][a-z0-9_$]*)(?:\.[A-Za-z_$][\w$]*)+$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"
    r"|^![A-Za-z]+$|^(?:~|\.{1,2})?/|://|^[\w.+-]+@[\w-]+\.[\w.]+$"
)


def classes(value: str) -> int:
    """How many of lowercase, uppercase and digits the value holds."""
    lower = upper = digit = False
    for ch in value:
        if "a" <= ch <= "z":
            lower = True
        elif "A" <= ch <= "Z":
            upper = True
        elif "0" <= ch <= "9":
            digit = True
    return lower + upper + digit


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def _b64(part: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return None


def is_placeholder(value: str) -> bool:
    low = value.strip().lower()
    if len(low) < 4 or low in _PLACEHOLDER_WORDS or low[0] in "$%<{" or _rx(r"[&*!][a-z_][\w-]*").fullmatch(low):
        return True
    if any(part in low for part in _PLACEHOLDER_PARTS) or low.startswith(("your", "my_", "my-", "the_", "some_")):
        return True
    return len(set(low) - set("x*._-#?0 ")) == 0


def code_like(value: str) -> bool:
    """An expression, identifier, path, URL or address rather than a value."""
    return _rx(_CODE_LIKE).search(value) is not None


# --------------------------------------------------------------------------- validators


@validator
def not_filler(value: str) -> bool:
    """No run of x's, stars, dots or repeats, and at least six different characters."""
    return not _rx(_FILLER).search(value) and len(set(value)) >= 6


@validator
def mixed(value: str) -> bool:
    """Not filler, and at least two of lowercase, uppercase and digits."""
    return not_filler(value) and classes(value) >= 2


@validator
def token_body(value: str) -> bool:
    """The random part of a prefixed token: mixed characters, no filler, no placeholder words."""
    return len(value) <= 1000 and not_filler(value) and not _rx(_FILLER_WORDS).search(value) and classes(value) >= 2


@validator
def looks_random(value: str, min_len: int = 16) -> bool:
    """A token body of some length whose characters are spread out (3 bits each or more)."""
    return (
        len(value) >= min_len
        and classes(value) >= 2
        and len(set(value)) >= 8
        and entropy(value) >= 3.0
        and token_body(value)
    )


@validator
def openai_body(value: str) -> bool:
    """A token body with a stretch of 20 or more mixed characters between its dashes."""
    return token_body(value) and any(len(run) >= 20 and classes(run) >= 2 for run in re.split(r"[-_]", value))


@validator
def discord_user_id(value: str) -> bool:
    """The first part of a Discord bot token: a user id (15 to 21 digits) in base64."""
    raw = _b64(value)
    return raw is not None and raw.isdigit() and 15 <= len(raw) <= 21


@validator
def jwt_header(value: str) -> bool:
    """A JWT's first part: base64 of a JSON object that names its algorithm."""
    raw = _b64(value)
    if raw is None:
        return False
    raw = raw.strip()
    return raw.startswith(b"{") and raw.endswith(b"}") and b'"alg"' in raw


@validator
def basic_auth(value: str) -> bool:
    """base64 of ``user:password`` with a real password."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    user, sep, password = raw.partition(b":")
    return bool(sep and user and password and raw.isascii() and not is_placeholder(password.decode()))


@validator
def bearer(value: str) -> bool:
    return looks_random(value) and not is_placeholder(value)


@validator
def key_body(value: str) -> bool:
    """The body of a key block: 40 or more base64 characters."""
    return len(re.findall(r"[A-Za-z0-9+/]", value)) >= 40


@validator
def url_password(value: str) -> bool:
    """The password of a URL: not a placeholder, not a short number (a port written oddly)."""
    return not is_placeholder(value) and not (value.isdigit() and len(value) <= 5)


@validator
def flag_password(value: str) -> bool:
    """A value given to a password flag or variable: anything password-shaped, words included."""
    return (
        6 <= len(value) <= 200
        and value.isascii()
        and value.isprintable()
        and " " not in value
        and not is_placeholder(value)
        and not code_like(value)
    )


@validator
def credential_like(value: str) -> bool:
    """A password-shaped value: not a placeholder, word, identifier or expression."""
    if not flag_password(value):
        return False
    return not value.isalpha() or (len(value) >= 16 and not _rx(r"[a-z]+(?:[A-Z][a-z]+)+").fullmatch(value))


# --------------------------------------------------------------------------- finders


def _key_type(key: str, o: dict) -> str | None:
    """What the key of an assignment names: a password, a secret, or neither (None)."""
    parts = [p for p in re.split(r"[_.\-]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).upper()) if p]
    if not parts:
        return None
    last, prev = parts[-1], parts[-2] if len(parts) > 1 else ""
    if last.endswith(("PASSWORD", "PASSWD", "PASSPHRASE")) or (last in ("PWD", "PASS") and prev):
        return "password"
    if last in ("SECRET", "CREDENTIALS", "CREDENTIAL") or last.endswith("APIKEY"):
        return "secret"
    if last == "TOKEN" and prev not in o["not_secret_tokens"]:
        return "secret"
    if last == "KEY" and prev in o["key_prefixes"]:
        return "secret"
    if last == "AUTH" and prev in o["auth_prefixes"]:
        return "secret"
    return None


@finder
def assignments(rule, text: str, lower: str) -> Iterator[Hit]:
    """``KEY = value`` where the key names a credential (``DB_PASSWORD``, ``api_key``, 密码)
    and the value has a credential's shape: a password for password keys, a random-looking
    token for the others. Keys named ``*_TOKEN``/``*_SECRET``/``*_API_KEY`` need a random value;
    a bare ``password:`` needs the value alone on its line (not ``password: must be long``), but
    ``password=value`` and a Chinese 密码/口令 (``密码是 S3cret``) hold wherever they stand."""
    o = rule.options
    cjk = o["cjk_keys"]
    # Searching the lowered text case-sensitively is several times faster than IGNORECASE; it
    # is used when lowering kept every offset (the usual case), the slow pattern otherwise.
    rx = rule.pattern.compiled()
    matches = rx.finditer(lower) if len(lower) == len(text) else re.compile(rx.pattern, rx.flags | re.I).finditer(text)
    for m in matches:
        word = text[m.start("w") : m.end("w")]
        i = m.start("w")
        if word in cjk:
            kind, key, dashed = cjk[word], word, False
        else:
            limit = max(0, i - 80)
            while i > limit and text[i - 1] in WORD_DOT:
                i -= 1
            key = text[i : m.end("w")]
            dashed = key.startswith("--")
            key = key.strip("-.")
            kind = _key_type(key, o)
            if kind is None:
                continue
        group = next(g for g in ("dq", "sq", "bq", "raw") if m.group(g) is not None)
        start, end = m.span(group)
        if group == "raw":
            while end > start and text[end - 1] in ",;.)]}>*":
                end -= 1
            if i and text[i - 1] in "?&":
                amp = text.find("&", start, end)
                end = amp if amp != -1 else end
            if word in cjk:  # 密码是 S3cret，… : the value ends where the sentence goes on
                end = next((k for k in range(start, end) if not text[k].isascii()), end)
            elif key.lower() in o["bare_keys"] and not dashed and text[m.end("w") : start] != "=":
                eol = text.find("\n", end, end + 200)
                rest = text[end : eol if eol != -1 else end + 200].strip()
                if rest and not rest.startswith(("#", "//", ",", ";", "}", ")", "]")):
                    continue
        value = text[start:end]
        if not value or is_placeholder(value) or not value.isascii():
            continue
        if kind == "password":
            env_style = (
                _rx(r"[A-Z][A-Z0-9_]*").fullmatch(key) is not None and text[m.end("w") : start].strip("\"'") == "="
            )
            if not (flag_password(value) if env_style else credential_like(value)):
                continue
        elif " " in value or code_like(value) or not looks_random(value):
            continue
        yield Hit(start, end, o["kinds"][kind])


@finder
def html_comments(rule, text: str, lower: str) -> Iterator[Hit]:
    """``<!-- ... -->`` comments, found in one pass; group ``c`` is what the comment holds."""
    pos = text.find("<!--")
    while pos != -1:
        close = text.find("-->", pos + 4)
        if close == -1:
            return
        yield Hit(pos, close + 3, groups={"c": (pos + 4, close)})
        pos = text.find("<!--", close + 3)


@finder
def invisible_unicode(rule, text: str, lower: str) -> Iterator[Hit]:
    """Invisible characters that do no visible job (see ``invisible``)."""
    for start, end, kind, shown in invisible.runs(text):
        yield Hit(start, end, kind, shown)

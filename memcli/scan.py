"""Safety scanners: secrets and prompt injection in memory text.

Every write is scanned for secrets (spec §8) and heartbeat audits every file for
both (§6). Each detector is a precompiled pattern behind a cheap substring hint,
so ordinary text never reaches most of the regular expressions.

Positions: ``start``/``end`` are offsets into the text (``text[start:end]`` is the
match), ``line`` and ``column`` are 1-based, lines end at ``\\n`` and columns count
code points. Matches come back ordered by ``start`` and never overlap.

Decisions worth knowing:

* AWS's documented example key id and secret are reported: they have the exact
  format of real ones, and a real key whose letters spell a word must not slip
  through. Filler is not a key: ``AKIAXXXXXXXXXXXXXXXX``, a truncated ``sk-...``,
  ``<your-key>``, ``${VAR}``, ``changeme`` and the like are not reported.
* Generic assignments are reported only when they clearly assign a credential:
  ``PASSWORD=hunter2``, ``password: Tr0ub4dor&3`` and ``DB_PASSWORD=...`` are;
  ``the password policy requires 12 characters`` and ``api_key: ${OPENAI_API_KEY}``
  are not. Keys named ``*_TOKEN``/``*_SECRET``/``*_API_KEY`` need a random-looking value.
* Injection phrases are reported even inside quotes or code fences. A model reads
  quote marks as loosely as the words, and an attacker can add quotes as easily as
  a note-taker; to keep a note about an attack clean, describe the phrase rather
  than copy it.
* Injection patterns match intent, not vocabulary: an imperative aimed at the
  reader is reported; a description ("the model ignored its instructions"), a
  negation ("never send .env anywhere") or a pointer to a document ("the previous
  instructions in the README were wrong") is not.
* Zero-width joiners inside emoji sequences, joiners between letters of scripts
  that need them (Arabic, Indic, ...), tag characters of a subdivision flag and a
  byte-order mark at the very start are legitimate and not reported.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import unicodedata
from bisect import bisect_left, insort
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

__all__ = [
    "InjectionMatch",
    "SecretMatch",
    "find_injection",
    "find_secrets",
    "redact_secrets",
    "redaction_label",
    "strip_invisible",
]


@dataclass(frozen=True)
class SecretMatch:
    kind: str
    line: int
    column: int
    start: int
    end: int


@dataclass(frozen=True)
class InjectionMatch:
    kind: str
    line: int
    column: int
    start: int
    end: int
    excerpt: str


def redaction_label(kind: str) -> str:
    """The text that replaces a secret of this kind: ``[REDACTED:aws-access-key]``."""
    return "[REDACTED:" + (re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-") or "secret") + "]"


# --------------------------------------------------------------------------- helpers

_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_WORD_DASH = _WORD | {"-"}
_WORD_DOT = _WORD_DASH | {"."}

class _Lazy:
    """A pattern compiled on first use: most rules never run on a given text (their hints are
    absent), so compiling all of them at import would cost every write ~30 ms."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._rx = None

    def __getattr__(self, name):
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(*self._args)
        return getattr(rx, name)


_FILLER = _Lazy(r"(?i)x{4}|\*{3}|\.\.\.|…|(.)\1{5}|1234567|abcdefg")
_FILLER_WORDS = _Lazy(r"(?i)example|placeholder|redacted|changeme|your|dummy|sample|insert|replace")


def _classes(value: str) -> int:
    lower = upper = digit = False
    for ch in value:
        if "a" <= ch <= "z":
            lower = True
        elif "A" <= ch <= "Z":
            upper = True
        elif "0" <= ch <= "9":
            digit = True
    return lower + upper + digit


def _entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def _not_filler(value: str) -> bool:
    return not _FILLER.search(value) and len(set(value)) >= 6


def _token_body(value: str) -> bool:
    """The random part of a prefixed token: mixed characters, no filler."""
    return (len(value) <= 1000 and _not_filler(value) and not _FILLER_WORDS.search(value)
            and _classes(value) >= 2)


def _looks_random(value: str, min_len: int = 16) -> bool:
    return (len(value) >= min_len and _classes(value) >= 2 and len(set(value)) >= 8
            and _entropy(value) >= 3.0 and _token_body(value))


def _present(hints: tuple, haystack: str) -> bool:
    return any(map(haystack.__contains__, hints))


def _b64(part: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return None


# --------------------------------------------------------------------------- secret rules


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern
    hints: tuple = ()  # the rule runs only if one of these substrings occurs
    fold: bool = False  # hints are lowercase and looked up in the lowered text
    group: str | int = 0  # the part of the match that is the secret
    check: Callable[[re.Match], bool] | None = None
    before: frozenset = _WORD  # characters that may not directly precede the match
    rank: int = 0  # 0 exact format, 1 format in context, 2 generic assignment
    anchor: re.Pattern | None = None  # where a match can start, searched in the lowered text


def _body(m: re.Match) -> bool:
    return _token_body(m.group("b"))


def _body_no_classes(m: re.Match) -> bool:
    return _not_filler(m.group("b"))


def _openai_body(m: re.Match) -> bool:
    b = m.group("b")
    if m.string.startswith(("..", "…"), m.end()):
        return False  # a shortened key in prose: sk-abc...xyz
    return _token_body(b) and any(len(run) >= 20 and _classes(run) >= 2 for run in re.split(r"[-_]", b))


def _discord(m: re.Match) -> bool:
    raw = _b64(m.group("id"))
    return raw is not None and raw.isdigit() and 15 <= len(raw) <= 21 and _token_body(m.group("b"))


def _jwt(m: re.Match) -> bool:
    raw = _b64(m.group("h"))
    if raw is None:
        return False
    raw = raw.strip()
    return raw.startswith(b"{") and raw.endswith(b"}") and b'"alg"' in raw


def _basic_auth(m: re.Match) -> bool:
    try:
        raw = base64.b64decode(m.group("b"), validate=True)
    except (binascii.Error, ValueError):
        return False
    user, sep, password = raw.partition(b":")
    return bool(sep and user and password and raw.isascii() and not _is_placeholder(password.decode()))


def _bearer(m: re.Match) -> bool:
    return _looks_random(m.group("b")) and not _is_placeholder(m.group("b"))


def _key_count(m: re.Match) -> bool:
    return len(re.findall(r"[A-Za-z0-9+/]", m.group("b"))) >= 40


def _anchored(pattern: re.Pattern, anchor: re.Pattern | None, text: str, lower: str) -> Iterator[re.Match]:
    """``pattern.finditer(text)``, trying the pattern only where the anchor occurs.

    A case-sensitive search of the lowered text is several times faster than a
    case-insensitive one; offsets agree whenever lowering kept the length."""
    if anchor is None or len(lower) != len(text):
        yield from pattern.finditer(text)
        return
    pos, n = 0, len(text)
    while pos <= n:
        a = anchor.search(lower, pos)
        if a is None:
            return
        m = pattern.match(text, a.start())
        if m is None:
            pos = a.start() + 1
            continue
        yield m
        pos = m.end() if m.end() > a.start() else a.start() + 1


def _a(words: str) -> re.Pattern:
    return _Lazy(words)  # type: ignore[return-value]


def _r(pattern: str, flags: int = 0) -> re.Pattern:
    return _Lazy(pattern, flags)  # type: ignore[return-value]


_END = r"(?![A-Za-z0-9_-])"
_RULES: tuple[_Rule, ...] = (
    _Rule("AWS access key", _r(r"(?:AKIA|ASIA|ABIA|ACCA)(?P<b>[A-Z0-9]{16})(?![A-Za-z0-9])"),
          ("AKIA", "ASIA", "ABIA", "ACCA"), check=_body_no_classes),
    _Rule("AWS secret access key",
          _r(r"(?i:secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key)[\"']?\s{0,5}(?:=>|:|=)\s{0,5}[\"']?"
             r"(?P<b>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
          ("secret",), fold=True, before=frozenset(), rank=1, anchor=_a("secret|aws"),
          group="b", check=lambda m: _not_filler(m.group("b")) and _classes(m.group("b")) >= 2),
    _Rule("Google API key", _r(r"AIza(?P<b>[0-9A-Za-z_-]{35})" + _END), ("AIza",), before=_WORD_DASH, check=_body),
    _Rule("Google OAuth client secret", _r(r"GOCSPX-(?P<b>[A-Za-z0-9_-]{28})" + _END), ("GOCSPX-",),
          before=_WORD_DASH, check=_body),
    _Rule("Google OAuth token", _r(r"ya29\.(?P<b>[0-9A-Za-z_-]{30,})" + _END), ("ya29.",),
          before=_WORD_DOT, check=_body),
    _Rule("Azure storage account key", _r(r"(?i:AccountKey)\s{0,3}=\s{0,3}(?P<b>[A-Za-z0-9+/]{40,100}={0,2})"),
          ("accountkey",), fold=True, rank=1, group="b", check=_body, anchor=_a("accountkey")),
    _Rule("Azure shared access key", _r(r"(?i:SharedAccessKey)\s{0,3}=\s{0,3}(?P<b>[A-Za-z0-9+/]{30,100}={0,2})"),
          ("sharedaccesskey",), fold=True, rank=1, group="b", check=_body, anchor=_a("sharedaccesskey")),
    _Rule("Azure SAS token",
          _r(r"[?&]sv=\d{4}-\d\d-\d\d&[^\s\"'<>]{0,400}?&sig=(?P<b>[A-Za-z0-9%+/]{30,120}(?:%3[Dd]|=){0,2})"),
          ("sig=",), before=frozenset(), rank=1, group="b", check=_body),
    _Rule("GitHub token", _r(r"gh[pousr]_(?P<b>[A-Za-z0-9]{36,})(?![A-Za-z0-9])"),
          ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), check=_body),
    _Rule("GitHub token", _r(r"github_pat_(?P<b>[A-Za-z0-9_]{70,})(?![A-Za-z0-9_])"), ("github_pat_",),
          check=_body),
    _Rule("GitLab token",
          _r(r"gl(?:pat|dt|rt|ptt|ft|oas|cbt|soat|imt|agent)-(?P<b>[A-Za-z0-9_-]{20,})" + _END),
          ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "gloas-", "glcbt-", "glsoat-", "glimt-", "glagent-"),
          before=_WORD_DASH, check=_body),
    _Rule("Slack token", _r(r"(?:xox[abposre]|xapp)-(?P<b>[A-Za-z0-9-]{20,})(?![A-Za-z0-9-])"),
          ("xox", "xapp-"), before=_WORD_DASH, check=_body),
    _Rule("Slack webhook URL", _r(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
                                  r"(?P<b>[A-Za-z0-9_/-]{20,200})"),
          ("hooks.slack.com",), check=_body),
    _Rule("Discord bot token",
          _r(r"(?P<id>[MNO][A-Za-z0-9_-]{23,27})\.[A-Za-z0-9_-]{6,7}\.(?P<b>[A-Za-z0-9_-]{27,40})" + _END),
          before=_WORD_DOT, check=_discord),
    _Rule("Discord webhook URL", _r(r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/"
                                    r"(?P<b>[A-Za-z0-9_-]{60,68})" + _END),
          ("discord",), fold=True, check=_body),
    _Rule("Anthropic API key", _r(r"sk-ant-(?:[a-z]{2,8}\d{0,3}-)?(?P<b>[A-Za-z0-9_-]{32,})" + _END),
          ("sk-ant-",), before=_WORD_DASH, check=_body),
    _Rule("OpenAI API key",
          _r(r"sk-(?!ant-)(?:(?:proj|svcacct|admin|None)-)?(?P<b>[A-Za-z0-9_-]{20,})" + _END),
          ("sk-",), before=_WORD_DASH, check=_openai_body),
    _Rule("Hugging Face token", _r(r"hf_(?P<b>[A-Za-z0-9]{30,40})(?![A-Za-z0-9_])"), ("hf_",),
          check=_body),
    _Rule("Stripe API key", _r(r"(?:sk|rk)_(?:live|test)_(?P<b>[A-Za-z0-9]{16,})(?![A-Za-z0-9])"),
          ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), check=_body),
    _Rule("Stripe webhook secret", _r(r"whsec_(?P<b>[A-Za-z0-9+/=]{24,})(?![A-Za-z0-9+/=])"), ("whsec_",),
          check=_body),
    _Rule("Twilio API key", _r(r"SK(?P<b>[0-9a-fA-F]{32})(?![0-9A-Za-z])"), ("SK",), check=_body),
    _Rule("Twilio auth token",
          _r(r"(?i:twilio)[\w .-]{0,30}?(?i:auth[_ -]?token|secret)[\"']?\s{0,5}(?:=>|:|=)\s{0,5}[\"']?"
             r"(?P<b>[0-9a-f]{32})(?![0-9A-Za-z])"),
          ("twilio",), fold=True, before=frozenset(), rank=1, group="b", check=_body, anchor=_a("twilio")),
    _Rule("SendGrid API key", _r(r"SG\.[A-Za-z0-9_-]{22}\.(?P<b>[A-Za-z0-9_-]{43})" + _END), ("SG.",),
          before=_WORD_DOT, check=_body),
    _Rule("Mailgun API key", _r(r"key-(?P<b>[0-9a-f]{32})(?![0-9A-Za-z])"), ("key-",),
          before=_WORD_DASH, check=_body),
    _Rule("npm token", _r(r"npm_(?P<b>[A-Za-z0-9]{36})(?![A-Za-z0-9])"), ("npm_",), check=_body),
    _Rule("PyPI token", _r(r"pypi-AgE(?P<b>[A-Za-z0-9_-]{50,})" + _END), ("pypi-AgE",),
          before=_WORD_DASH, check=_body),
    _Rule("JWT", _r(r"(?P<h>eyJ[A-Za-z0-9_-]{5,2000})\.[A-Za-z0-9_-]{2,8000}\.[A-Za-z0-9_-]{16,2000}" + _END),
          ("eyJ",), before=_WORD_DOT, check=_jwt),
    _Rule("PuTTY private key", _r(r"Private-Lines: \d{1,3}(?P<b>(?:\r?\n[A-Za-z0-9+/=]{1,200}){1,200})"),
          ("Private-Lines:",), before=frozenset(), group="b", check=_key_count),
    _Rule("Shopify token", _r(r"shp(?:at|ca|pa|ss)_(?P<b>[a-fA-F0-9]{32})(?![A-Za-z0-9])"),
          ("shpat_", "shpca_", "shppa_", "shpss_"), check=_body),
    _Rule("DigitalOcean token", _r(r"do[opr]_v1_(?P<b>[a-f0-9]{64})(?![A-Za-z0-9])"), ("_v1_",),
          check=_body),
    _Rule("Databricks token", _r(r"dapi(?P<b>[a-f0-9]{32})(?:-\d)?(?![A-Za-z0-9])"), ("dapi",),
          check=_body),
    _Rule("Square token", _r(r"sq0(?:atp|csp)-(?P<b>[0-9A-Za-z_-]{22,})" + _END), ("sq0",),
          check=_body),
    _Rule("Linear API key", _r(r"lin_(?:api|oauth)_(?P<b>[A-Za-z0-9]{40})(?![A-Za-z0-9])"),
          ("lin_api_", "lin_oauth_"), check=_body),
    _Rule("Postman API key", _r(r"PMAK-(?P<b>[a-f0-9]{24}-[a-f0-9]{34})(?![A-Za-z0-9])"), ("PMAK-",),
          check=_body),
    _Rule("HashiCorp Vault token", _r(r"hv[sbr]\.(?P<b>[A-Za-z0-9_-]{24,})" + _END), ("hvs.", "hvb.", "hvr."),
          before=_WORD_DOT, check=_body),
    _Rule("Terraform Cloud token", _r(r"[A-Za-z0-9]{14}\.atlasv1\.(?P<b>[A-Za-z0-9_=-]{60,100})"), ("atlasv1",),
          check=_body),
    _Rule("Replicate API token", _r(r"r8_(?P<b>[A-Za-z0-9]{37})(?![A-Za-z0-9])"), ("r8_",),
          check=_body),
    _Rule("Groq API key", _r(r"gsk_(?P<b>[A-Za-z0-9]{48,56})(?![A-Za-z0-9])"), ("gsk_",), check=_body),
    _Rule("xAI API key", _r(r"xai-(?P<b>[A-Za-z0-9]{70,90})(?![A-Za-z0-9])"), ("xai-",),
          before=_WORD_DASH, check=_body),
    _Rule("Perplexity API key", _r(r"pplx-(?P<b>[A-Za-z0-9]{40,56})(?![A-Za-z0-9])"), ("pplx-",),
          before=_WORD_DASH, check=_body),
    _Rule("Doppler token", _r(r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?P<b>[A-Za-z0-9]{40,44})(?![A-Za-z0-9])"),
          ("dp.",), before=_WORD_DOT, check=_body),
    _Rule("Atlassian API token", _r(r"ATATT3(?P<b>[A-Za-z0-9_=-]{100,300})"), ("ATATT3",), check=_body),
    _Rule("Notion token", _r(r"(?:secret_|ntn_)(?P<b>[A-Za-z0-9]{43,46})(?![A-Za-z0-9])"), ("secret_", "ntn_"),
          check=_body),
    _Rule("age secret key", _r(r"AGE-SECRET-KEY-1(?P<b>[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})"),
          ("AGE-SECRET-KEY-1",), before=_WORD_DASH, check=_body_no_classes),
    _Rule("Firebase server key", _r(r"AAAA[A-Za-z0-9_-]{7}:APA91b(?P<b>[A-Za-z0-9_-]{100,160})"), ("APA91b",),
          check=_body),
    _Rule("bearer token",
          _r(r"(?i:authorization)[\"']?\s{0,5}[:=]\s{0,5}[\"']?(?i:bearer|token)\s+"
             r"(?P<b>[A-Za-z0-9._~+/-]{16,2000}=*)"),
          ("authorization",), fold=True, before=frozenset(), rank=1, group="b", check=_bearer,
          anchor=_a("authorization")),
    _Rule("basic auth credentials",
          _r(r"(?i:authorization)[\"']?\s{0,5}[:=]\s{0,5}[\"']?(?i:basic)\s+(?P<b>[A-Za-z0-9+/]{8,500}={0,2})"),
          ("authorization",), fold=True, before=frozenset(), rank=1, group="b", check=_basic_auth,
          anchor=_a("authorization")),
)

# --- Telegram bot tokens: anchored on the colon, the rarer character ----------------

_TELEGRAM = _Lazy(r":(?P<b>[A-Za-z0-9_-]{35})" + _END)
_TELEGRAM_ID = _Lazy(r"(?:(?<![\w:])|(?<=/bot))\d{8,10}$")


def _telegram(text: str, lower: str) -> Iterator[tuple[int, int, int, str]]:
    for m in _TELEGRAM.finditer(text):
        head = _TELEGRAM_ID.search(text, max(0, m.start() - 11), m.start())
        if head and _token_body(m.group("b")):
            yield 0, head.start(), m.end(), "Telegram bot token"


# --- Mailchimp keys: 32 hex digits, then the data centre, anchored on the rarer "-us" ---

_MAILCHIMP = _Lazy(r"-us\d{1,2}(?![0-9A-Za-z])")
_HEX32 = _Lazy(r"[0-9a-f]{32}")


def _mailchimp(text: str, lower: str) -> Iterator[tuple[int, int, int, str]]:
    if "-us" not in text:
        return
    for m in _MAILCHIMP.finditer(text):
        start = m.start() - 32
        if (start >= 0 and _HEX32.fullmatch(text, start, m.start()) and (not start or text[start - 1] not in _WORD)
                and _token_body(text[start:m.start()])):
            yield 0, start, m.end(), "Mailchimp API key"


# --- curl -u user:password ------------------------------------------------------

_CURL_LINE = _Lazy(r"curl\s[^\n]*")
_CURL_USER = _Lazy(r"(?<![\w-])(?:-u|--user)[ =][\"']?(?P<u>[^\s:'\"]{1,100}):(?P<b>[^\s'\"]+)")


def _curl_passwords(text: str, lower: str) -> Iterator[tuple[int, int, int, str]]:
    if "curl" not in text:
        return
    for line in _CURL_LINE.finditer(text):
        if line.start() and text[line.start() - 1] in _WORD_DASH:
            continue
        for m in _CURL_USER.finditer(text, line.start(), line.end()):
            password = m.group("b")
            if password.lower() != m.group("u").lower() and _credential_like(password):
                yield 1, m.start("b"), m.end("b"), "password in command"


# --- private key blocks -----------------------------------------------------------

_PRIVATE_KEY = _Lazy(
    r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----"
    r"(?P<b>(?:(?:\r?\n|\\r\\n|\\n)[ \t]*(?:[A-Za-z][A-Za-z-]{0,30}: [^\n\\\"]{0,200}|[A-Za-z0-9+/=]{1,200})?[ \t]*"
    r"(?=\r?\n|\\[rn]|\"|$)){0,2000})"
    r"(?:(?:\r?\n|\\n)?-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----)?"
)
_GCP_KEY_BEFORE = _Lazy(r"\"private_key\"\s{0,5}:\s{0,5}\"$")


def _private_keys(text: str, lower: str) -> Iterator[tuple[int, int, int, str]]:
    if "PRIVATE KEY" not in text:
        return
    for m in _PRIVATE_KEY.finditer(text):
        if len(re.findall(r"[A-Za-z0-9+/]", m.group("b"))) < 40:
            continue
        gcp = _GCP_KEY_BEFORE.search(text, max(0, m.start() - 40), m.start())
        yield 0, m.start(), m.end(), "GCP service account key" if gcp else "private key block"


# --- passwords in URLs ------------------------------------------------------------

_URL_USERINFO = _Lazy(
    r"://(?P<u>[^\s:@/?#\[\]\"'<>]{0,200}):(?P<b>[^\s@/?#\"'<>]{1,200})@(?=[A-Za-z0-9\[])")


def _url_passwords(text: str, lower: str) -> Iterator[tuple[int, int, int, str]]:
    if "://" not in text or "@" not in text:
        return
    for m in _URL_USERINFO.finditer(text):
        if not m.start() or not text[m.start() - 1].isalnum():
            continue  # no scheme before ://
        password = m.group("b")
        if (_is_placeholder(password) or password.lower() == m.group("u").lower()
                or (password.isdigit() and len(password) <= 5)):
            continue
        yield 1, m.start("b"), m.end("b"), "password in URL"


# --- generic credential assignments -----------------------------------------------

_ASSIGN_SOURCE = (
    r"(?P<w>pass(?:word|wd|phrase)?|pwd|secret|token|key|credentials?|auth|密码|口令|密钥|秘钥|令牌)"
    r"[\"'`*]{0,3}[ \t]{0,10}(?::=|=>|=|:|：|＝)[ \t]{0,10}"
    r"(?:\"(?P<dq>[^\"\n]{1,300})\"|'(?P<sq>[^'\n]{1,300})'|`(?P<bq>[^`\n]{1,300})`|(?P<raw>[^\s\"'`]+))"
)
# Searching the lowered text case-sensitively is several times faster than IGNORECASE; it
# is used when lowering kept every offset (the usual case), the slow pattern otherwise.
_ASSIGN = _Lazy(_ASSIGN_SOURCE)
_ASSIGN_I = _Lazy(_ASSIGN_SOURCE, re.I)
_ASSIGN_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "auth", "密码", "口令", "密钥", "秘钥", "令牌")
_CJK_KEYS = {"密码": "password", "口令": "password", "密钥": "secret", "秘钥": "secret", "令牌": "secret"}
_BARE_KEYS = frozenset({"password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "auth",
                        "credentials", "credential"})
_KEY_PREFIXES = frozenset({"API", "SECRET", "PRIVATE", "ACCESS", "ENCRYPTION", "SIGNING", "MASTER", "CLIENT", "APP",
                           "LICENSE", "ACCOUNT", "SERVICE", "STORAGE", "SHARED", "SESSION", "HMAC", "JWT", "WEBHOOK",
                           "AUTH", "CRYPTO", "DECRYPTION", "SSH", "GPG", "PGP", "ADMIN", "SUBSCRIPTION", "CONSUMER"})
_NOT_SECRET_TOKENS = frozenset({"PAGE", "NEXT", "CONTINUATION", "CURSOR", "SYNC", "CANCELLATION", "RESUME",
                                "CSRF", "XSRF", "MAX", "MIN", "PAGINATION", "START", "END", "STOP", "EOS", "BOS",
                                "PAD", "UNK", "SEP", "CLS", "MASK", "SPECIAL"})
_PLACEHOLDER_WORDS = frozenset("""
password passwd pass pwd pw secret token key apikey api_key api-key changeme changeit none null nil undefined
true false yes no on off required optional string str int bool test testing todo tbd fixme default empty hidden
masked secure foo bar foobar baz admin root guest user username sample dummy temp tmp unset env environment vault
1password bitwarden lastpass keepass keepassxc keychain ssm secretsmanager omitted removed random generated auto
same set see n/a na -
""".split())
_PLACEHOLDER_PARTS = ("xxxx", "****", "...", "…", "${", "{{", "}}", "<", ">", "example", "changeme", "change_me",
                      "change-me", "placeholder", "redacted", "insert", "replace", "dummy", "sample", "here")
_CODE_LIKE = _Lazy(
    r"[()\[\]{}]|^(?:[a-z_$][a-z0-9_$]*)(?:\.[A-Za-z_$][\w$]*)+$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^![A-Za-z]+$"
    r"|^(?:~|\.{1,2})?/|://|^[\w.+-]+@[\w-]+\.[\w.]+$")
_YAML_REF = _Lazy(r"[&*!][a-z_][\w-]*")
_ENV_KEY = _Lazy(r"[A-Z][A-Z0-9_]*")
_CAMEL_IDENT = _Lazy(r"[a-z]+(?:[A-Z][a-z]+)+")


def _is_placeholder(value: str) -> bool:
    low = value.strip().lower()
    if len(low) < 4 or low in _PLACEHOLDER_WORDS or low[0] in "$%<{" or _YAML_REF.fullmatch(low):
        return True
    if any(part in low for part in _PLACEHOLDER_PARTS) or low.startswith(("your", "my_", "my-", "the_", "some_")):
        return True
    return len(set(low) - set("x*._-#?0 ")) == 0


def _credential_like(value: str) -> bool:
    """A password-shaped value: not a placeholder, word, identifier or expression."""
    if not 6 <= len(value) <= 200 or not value.isascii() or not value.isprintable() or " " in value:
        return False
    if _is_placeholder(value) or _CODE_LIKE.search(value):
        return False
    if value.isalpha():
        return len(value) >= 16 and not _CAMEL_IDENT.fullmatch(value)
    return True


def _key_type(key: str) -> str | None:
    parts = [p for p in re.split(r"[_.\-]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).upper()) if p]
    if not parts:
        return None
    last, prev = parts[-1], parts[-2] if len(parts) > 1 else ""
    if last.endswith(("PASSWORD", "PASSWD", "PASSPHRASE")) or (last in ("PWD", "PASS") and prev):
        return "password"
    if last in ("SECRET", "CREDENTIALS", "CREDENTIAL") or last.endswith("APIKEY"):
        return "secret"
    if last == "TOKEN" and prev not in _NOT_SECRET_TOKENS:
        return "secret"
    if last == "KEY" and prev in _KEY_PREFIXES:
        return "secret"
    if last == "AUTH" and prev in ("", "BASIC", "HTTP", "PROXY", "DOCKER", "REGISTRY"):
        return "secret"
    return None


def _assignments(text: str, lower: str) -> Iterator[tuple[int, int, int, str]]:
    if not _present(_ASSIGN_HINTS, lower):
        return
    matches = _ASSIGN.finditer(lower) if len(lower) == len(text) else _ASSIGN_I.finditer(text)
    for m in matches:
        word = text[m.start("w"):m.end("w")]
        i = m.start("w")
        if word in _CJK_KEYS:
            kind, key, dashed = _CJK_KEYS[word], word, False
        else:
            limit = max(0, i - 80)
            while i > limit and text[i - 1] in _WORD_DOT:
                i -= 1
            key = text[i:m.end("w")]
            dashed = key.startswith("--")
            key = key.strip("-.")
            kind = _key_type(key)
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
            bare = (key.lower() in _BARE_KEYS or word in _CJK_KEYS) and not dashed
            if bare:
                eol = text.find("\n", end, end + 200)
                rest = text[end:eol if eol != -1 else end + 200].strip()
                if rest and not rest.startswith(("#", "//", ",", ";", "}", ")", "]")):
                    continue
        value = text[start:end]
        if not value or _is_placeholder(value) or not value.isascii():
            continue
        if kind == "password":
            env_style = (_ENV_KEY.fullmatch(key) is not None
                         and text[m.end("w"):start].strip("\"'") == "=")
            if not (_flag_password(value) if env_style else _credential_like(value)):
                continue
            label = "password in assignment"
        else:
            if " " in value or _CODE_LIKE.search(value) or not _looks_random(value):
                continue
            label = "secret in assignment"
        yield 2, start, end, label


# --- passwords given to database and ssh clients on the command line ---------------------

_MYSQL_LINE = _Lazy(r"(?<![\w./-])(?:mysql(?:dump|admin|import|show|check|sh)?|mariadb(?:-dump|-admin)?)\s[^\n|;&]*")
_MYSQL_P = _Lazy(r"(?<![\w-])-p(?:'(?P<sq>[^'\n]{1,200})'|\"(?P<dq>[^\"\n]{1,200})\"|(?P<raw>[^\s'\"-][^\s'\"]{0,199}))")
_SSHPASS = _Lazy(r"(?<![\w./-])sshpass\s+(?:-[dfe]\S*\s+|-P\s+\S+\s+|-v\s+)*-p\s*"
                 r"(?:'(?P<sq>[^'\n]{1,200})'|\"(?P<dq>[^\"\n]{1,200})\"|(?P<raw>[^\s'\"]{1,200}))")


def _flag_password(value: str) -> bool:
    """A value given to a password flag or variable: anything password-shaped, words included."""
    return (6 <= len(value) <= 200 and value.isascii() and value.isprintable() and " " not in value
            and not _is_placeholder(value) and not _CODE_LIKE.search(value))


def _client_passwords(text: str, lower: str) -> Iterator[tuple[int, int, int, str]]:
    """``mysql -uroot -pSECRET`` (the value attached to -p) and ``sshpass -p SECRET``."""
    if "mysql" in lower or "mariadb" in lower:
        for line in _MYSQL_LINE.finditer(text):
            for m in _MYSQL_P.finditer(text, line.start(), line.end()):
                group = next(g for g in ("sq", "dq", "raw") if m.group(g) is not None)
                if _flag_password(m.group(group)):
                    yield 1, m.start(group), m.end(group), "password in command"
    if "sshpass" in lower:
        for m in _SSHPASS.finditer(text):
            group = next(g for g in ("sq", "dq", "raw") if m.group(g) is not None)
            if _flag_password(m.group(group)):
                yield 1, m.start(group), m.end(group), "password in command"


_EXACT_FINDERS = (_telegram, _mailchimp, _private_keys)
_FINDERS: tuple[Callable[[str, str], Iterable[tuple[int, int, int, str]]], ...] = (
    _telegram, _mailchimp, _private_keys, _url_passwords, _curl_passwords, _client_passwords,
    _assignments)


# --------------------------------------------------------------------------- shared plumbing


def _resolve(candidates: list, taken: Iterable[tuple[int, int, object]] = ()) -> list[tuple[int, int, object]]:
    """Keep the best of overlapping candidates, exact formats first, then the longest, beside the
    spans already taken. A candidate is ``(rank, start, end, order, kind)``; a span ``(start, end, kind)``."""
    candidates.sort(key=lambda c: (c[0], c[1] - c[2], c[1], c[3]))
    starts: list[int] = []
    kept: dict[int, tuple[int, object]] = {}
    for start, end, kind in taken:
        insort(starts, start)
        kept[start] = (end, kind)
    for _rank, start, end, _order, kind in candidates:
        i = bisect_left(starts, start)
        if (i < len(starts) and starts[i] < end) or (i > 0 and kept[starts[i - 1]][0] > start):
            continue
        insort(starts, start)
        kept[start] = (end, kind)
    return [(s, kept[s][0], kept[s][1]) for s in starts]


def _positions(text: str, spans: list) -> Iterator[tuple]:
    line, last, line_start = 1, 0, 0
    for start, end, kind in spans:
        newlines = text.count("\n", last, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", last, start) + 1
        last = start
        yield line, start - line_start + 1, start, end, kind


# --------------------------------------------------------------------------- secrets API


def _hint_index(fold: bool) -> tuple[tuple[str, tuple[int, ...]], ...]:
    index: dict[str, list[int]] = {}
    for order, rule in enumerate(_RULES):
        if rule.fold == fold:
            for hint in rule.hints:
                index.setdefault(hint, []).append(order)
    return tuple((hint, tuple(orders)) for hint, orders in index.items())


_EXACT_HINTS, _FOLDED_HINTS = _hint_index(False), _hint_index(True)
_UNHINTED = tuple(order for order, rule in enumerate(_RULES) if not rule.hints)


def _secret_candidates(text: str, exact: bool = False) -> list[tuple[int, int, int, int, str]]:
    """Every rule's matches; with exact, only the rules of exact formats (rank 0)."""
    lower = text.lower()
    candidates: list[tuple[int, int, int, int, str]] = []
    active = {order for hint, orders in _EXACT_HINTS if hint in text for order in orders}
    active.update(order for hint, orders in _FOLDED_HINTS if hint in lower for order in orders)
    active.update(_UNHINTED)
    for order in sorted(active):
        rule = _RULES[order]
        if exact and rule.rank:
            continue
        for m in _anchored(rule.pattern, rule.anchor, text, lower):
            s = m.start()
            if s and text[s - 1] in rule.before:
                continue
            if rule.check is not None and not rule.check(m):
                continue
            gs, ge = m.span(rule.group)
            candidates.append((rule.rank, gs, ge, order, rule.kind))
    for order, finder in enumerate(_FINDERS, len(_RULES)):
        if exact and finder not in _EXACT_FINDERS:
            continue
        for rank, start, end, kind in finder(text, lower):
            candidates.append((rank, start, end, order, kind))
    return candidates


# Characters that hide where a token is cut: invisible ones anywhere, a shell line continuation,
# and a plain line break inside a long run of token characters (a wrapped line). Only exact
# formats may span a plain line break: prose breaks lines between words all the time.
_CUT_INVISIBLE = _Lazy("[\u200b-\u200d\u2060\ufeff\u00ad]+")
_CUT_CONTINUATION = _Lazy(r"\\\r?\n[ \t]*")


def _cuts(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, wrap) of each stretch that may cut a token in two, in order, never overlapping."""
    cuts = []
    if not text.isascii():
        cuts += [(m.start(), m.end(), False) for m in _CUT_INVISIBLE.finditer(text)]
    if "\\\n" in text or "\\\r\n" in text:
        cuts += [(m.start(), m.end(), False) for m in _CUT_CONTINUATION.finditer(text)]
    newline = text.find("\n")
    while newline != -1:
        cut = newline - 1 if newline and text[newline - 1] == "\r" else newline
        a = cut
        while a > cut - 200 and a and text[a - 1] in _WORD_DASH:
            a -= 1
        b = newline + 1
        while b < newline + 200 and b < len(text) and text[b] in _WORD_DASH:
            b += 1
        if cut - a >= 8 and b > newline + 1 and cut - a + b - newline >= 21 \
                and _classes(text[a:cut] + text[newline + 1:b]) >= 2:
            cuts.append((cut, newline + 1, True))
        newline = text.find("\n", newline + 1)
    cuts.sort()
    kept: list[tuple[int, int, bool]] = []
    for c in cuts:
        if not kept or c[0] >= kept[-1][1]:
            kept.append(c)
    return kept


def _split_candidates(text: str, plain: list) -> list[tuple[int, int, int, int, str]]:
    """Secrets cut in two by an invisible character or a line break: found in the text with the
    cuts taken out, reported at the original offsets (the cut characters included). ``plain``
    holds the candidates of the text as it is; a token they already find is not found again."""
    cuts = _cuts(text)
    if not cuts:
        return []
    found = {(c[1], c[4]) for c in plain}
    out = []
    hard = [c for c in cuts if not c[2]]
    # Invisible characters and continuations: every rule. Wrapped lines as well: exact formats only.
    for chosen, exact_only in ((hard, False), (cuts, True)):
        if not chosen or (exact_only and len(chosen) == len(hard)):
            continue
        for cand in _joined_candidates(text, chosen, exact_only):
            if (exact_only and cand[0]) or (cand[1], cand[4]) in found:
                continue
            out.append(cand)
    return out


_REACH = 2_000


def _joined_candidates(text: str, cuts: list, exact: bool) -> Iterator[tuple[int, int, int, int, str]]:
    pieces, at, shift = [], [], []
    pos = removed = 0
    for start, end, _wrap in cuts:
        pieces.append(text[pos:start])
        at.append(start - removed)  # where the cut sits in the joined text
        removed += end - start
        shift.append(removed)
        pos = end
    pieces.append(text[pos:])

    def original(j: int) -> int:
        i = bisect_left(at, j + 1)  # the cuts at or before j moved this character right
        return j + (shift[i - 1] if i else 0)

    joined = "".join(pieces)
    # Only the text around the cuts is scanned again: a window reaches _REACH characters each way.
    windows: list[list[int]] = []
    for j in at:
        lo, hi = max(0, j - _REACH), min(len(joined), j + _REACH)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = hi
        else:
            windows.append([lo, hi])
    for lo, hi in windows:
        for rank, start, end, order, kind in _secret_candidates(joined[lo:hi], exact):
            start, end = start + lo, end + lo
            if bisect_left(at, start + 1) < bisect_left(at, end):  # it spans a cut
                yield rank, original(start), original(end - 1) + 1, order, kind


def _mask(text: str, spans: list[tuple[int, int, str]]) -> str:
    """The text as redaction will leave it around each span, at the same offsets."""
    parts, pos = [], 0
    for start, end, _kind in spans:
        parts += [text[pos:start], "[" + "R" * (end - start - 2) + "]" if end - start > 1 else "["]
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in the text: API keys, tokens, private keys, passwords in URLs and assignments."""
    if not text:
        return []
    plain = _secret_candidates(text)
    spans = _resolve(plain + _split_candidates(text, plain))
    # A candidate that lost to an overlap, or that a neighbour's characters disqualified,
    # may stand on its own once the neighbour is redacted: look again at the text as
    # redaction leaves it, so that redacting twice changes nothing.
    for _ in range(4):
        if not spans:
            break
        more = _resolve(_secret_candidates(_mask(text, spans)), spans)
        if len(more) == len(spans):
            break
        spans = more
    return [SecretMatch(kind, line, col, s, e) for line, col, s, e, kind in _positions(text, spans)]


def redact_secrets(text: str) -> tuple[str, list[SecretMatch]]:
    """The text with each secret replaced by ``[REDACTED:<kind>]``, and the secrets found."""
    matches = find_secrets(text)
    if not matches:
        return text, matches
    parts, pos = [], 0
    for m in matches:
        parts.append(text[pos:m.start])
        parts.append(redaction_label(m.kind))
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts), matches


# --------------------------------------------------------------------------- injection

_INVISIBLE = _Lazy("[\u200b-\u200d\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff\u180e\u115f\u1160\u3164\uffa0"
                        "\U000e0000-\U000e007f]+")
_FLAG_TAGS = _Lazy("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f")


def _emoji(ch: str) -> bool:
    o = ord(ch) if ch else 0
    return (0x1F000 <= o <= 0x1FAFF or 0x2600 <= o <= 0x27BF or 0x2300 <= o <= 0x23FF or 0x2B00 <= o <= 0x2BFF
            or o in (0xFE0F, 0x20E3, 0xA9, 0xAE, 0x203C, 0x2049, 0x2122))


def _joining_script(ch: str) -> bool:
    o = ord(ch) if ch else 0
    return ((0x0590 <= o <= 0x1CFF or 0xA800 <= o <= 0xABFF or 0xFB1D <= o <= 0xFDFF or 0xFE70 <= o <= 0xFEFC
             or 0x10A00 <= o <= 0x11FFF) and unicodedata.category(ch)[0] in "LM")


def _legit_invisible(text: str, start: int, end: int) -> bool:
    run = text[start:end]
    prev = text[start - 1] if start else ""
    nxt = text[end] if end < len(text) else ""
    if run == "\ufeff":
        return start == 0
    if run == "\u200d" and _emoji(prev) and _emoji(nxt):
        return True
    if run in ("\u200c", "\u200d") and _joining_script(prev) and _joining_script(nxt):
        return True
    return prev == "\U0001f3f4" and _FLAG_TAGS.fullmatch(run) is not None


def _escape_invisible(s: str) -> str:
    return _INVISIBLE.sub(lambda m: "".join(f"<U+{ord(c):04X}>" for c in m.group()[:8])
                          + ("…" if len(m.group()) > 8 else ""), s)


def _excerpt(s: str, limit: int = 120) -> str:
    s = " ".join(_escape_invisible(s).split())
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _invisible(text: str) -> Iterator[tuple[int, int, tuple[str, str]]]:
    for m in _INVISIBLE.finditer(text):
        s, e = m.span()
        if _legit_invisible(text, s, e):
            continue
        hidden = "".join(chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E)
        if len(hidden.strip()) >= 2:
            yield s, e, ("hidden prompt", _excerpt(f'hidden text: "{hidden}"'))
        else:
            yield s, e, ("invisible unicode", _excerpt(text[max(0, s - 12):min(len(text), e + 12)]))


@dataclass(frozen=True)
class _Phrase:
    kind: str
    pattern: re.Pattern
    hints: tuple  # groups of lowercase substrings: each group must have one in the lowered text
    guard: str = "en"  # "en"/"zh": skip negated or descriptive uses; "": never skip
    pointer: bool = False  # skip when the phrase points at a document ("... in the README")
    gate: re.Pattern | None = None  # a cheaper pattern that must match first
    anchor: re.Pattern | None = None  # where a match can start, searched in the lowered text


# Text before a phrase that makes it a negation or a description, not an order.
_GUARD_EN = _Lazy(
    r"(?:\b(?:not|never|no|don't|dont|doesn't|didn't|won't|wouldn't|shouldn't|mustn't|cannot|can't|avoid|without)"
    r"|\b(?:tried|tries|trying|attempted|attempts|attempting|managed|wanted|wants|asked|asks|asking|designed|meant"
    r"|told|tells|telling|instructed|instructs|tricked|tricks|trick|convince|convinced|how|used|uses|using)"
    r"\s+(?:\w+\s+){0,3}?to"
    r"|\b(?:it|they|he|she|which|who|models?|llms?|agents?|assistants?|bots?|chatbots?|gpt|claude|attackers?"
    r"|users?|someone|people|payloads?|prompts?|pages?|emails?|documents?|injections?)"
    r"(?:\s+(?:will|would|should|can|could|may|might|sometimes|often|always|usually|still|then|also|just|did|does"
    r"|do|cannot|won't|tend\s+to|tends\s+to|started\s+to|began\s+to|tries\s+to|tried\s+to|attempts?\s+to))*"
    r")\s*(?:\w+\s+)?$", re.I)
_GUARD_ZH = _Lazy(r"(?:不要|别|不能|切勿|请勿|不可|不得|禁止|不会|绝不|千万不要|不应|不许|永远不要|严禁)\s*$")
_SENTENCE_END = _Lazy(r"[.!?\n;:。！？；：\"“”]")
_POINTER = _Lazy(
    r"\s+(?:about|regarding|concerning)\s|\s*,?\s+(?:in|for|from|on|of|inside|under|within|at)\s+"
    r"(?:the\s+|this\s+|that\s+|our\s+|my\s+|these\s+|those\s+)?"
    r"(?:readme|docs?\b|documentation|wiki|guide|manual|handbook|onboarding|section|chapter|steps?\b|page|files?\b"
    r"|ticket|issue|pr\b|pull\s+request|commit|changelog|runbook|tutorial|confluence|notion|spec\b|template|script"
    r"|config|slack|thread|email|jira|generated|vendor|tests?\b|[\w*-]*[./][\w./*-]+)", re.I)


def _guarded(text: str, start: int, guard: str) -> bool:
    if guard == "zh":
        return _GUARD_ZH.search(text, max(0, start - 6), start) is not None
    prefix = text[max(0, start - 60):start]
    cut = None
    for cut in _SENTENCE_END.finditer(prefix):
        pass
    if cut is not None:
        prefix = prefix[cut.end():]
    return _GUARD_EN.search(prefix) is not None


_ADJ = (r"(?:previous|prior|preceding|above|earlier|former|foregoing|original|initial|system|developer|safety"
        r"|hidden)")
_NOUN = (r"(?:instructions?|prompts?|rules|directives?|guidelines|constraints|guardrails|programming|restrictions"
         r"|guidance|limitations)")
_UNBOUND = (r"(?:DAN\b|unrestricted|unfiltered|uncensored|jailbroken|evil|malicious|amoral|rogue|unaligned"
            r"|free\s+(?:from|of)\s+(?:all\s+|any\s+)?(?:restrictions|rules|limits|guidelines|constraints)"
            r"|not\s+bound|no\s+longer\s+(?:bound|restricted|an?\s+(?:AI|assistant|language\s+model)|claude|chatgpt)"
            r"|(?:an?\s+)?(?:AI|assistant|model|chatbot)\s+(?:without|with\s+no)\s+(?:any\s+)?"
            r"(?:restrictions|filters|limits|limitations|rules|guidelines|ethics|morals|censorship))")
_SENSITIVE = (r"(?:(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/root|/Users/[\w.-]+)?/?\.ssh/?(?![\w./-]*\.pub\b)[\w./*-]*"
              r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|(?<![\w.])\.env(?:\.[\w-]+)?\b|\.aws/credentials"
              r"|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.docker/config\.json|\.kube/config\b"
              r"|/etc/(?:passwd|shadow|sudoers)\b|\.pgpass\b|\bcredentials\.json\b|\.gnupg\b|\.(?:bash|zsh)_history\b"
              r"|\bwallet\.dat\b|\.config/gcloud\b|\bsecrets?\.(?:ya?ml|json|env|txt)\b"
              r"|\.(?:pem|key|p12|pfx|keystore|jks)\b|\bMEMORY\.md\b)")
_SENSITIVE_HINTS = (".ssh", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".env", ".aws", ".netrc", ".npmrc",
                    ".pypirc", "credentials", "/etc/", ".pgpass", ".gnupg", "_history", "wallet", "gcloud", "secret",
                    ".pem", ".key", ".p12", ".pfx", "keystore", ".jks", "memory.md", "docker/config", "kube/config")
_PATH_PREFIX = r"[\w$~{}./-]{0,60}?"
_READ_CMD = r"\$\(\s*(?:cat|base64|tar|gzip|xxd|head|tail)\s+[^)\n]{0,60}?"
_NET_CMD = r"(?:nc|ncat|netcat|socat|telnet|curl|wget|openssl\s+s_client|mail|sendmail|mutt)"
_SECRET_NOUN = (r"(?:\.env(?:\.\w+)?|~/\.ssh[\w./-]*|\.ssh[\w./-]*|ssh\s+(?:private\s+)?keys?|private\s+keys?"
                r"|api\s+keys?|(?:access\s+|auth\s+|bearer\s+|session\s+)?tokens?|credentials|secrets|passwords?"
                r"|environment\s+variables|env\s+vars|(?:aws|gcp|azure|cloud)\s+(?:keys|credentials)"
                r"|\.aws/credentials|id_rsa|(?:session\s+)?cookies|system\s+prompt|conversation\s+history"
                r"|chat\s+history|memory\s+files?|MEMORY\.md)")
_DEST = (r"(?:https?://|ftp://|[A-Za-z0-9_.+-]{1,64}@[A-Za-z0-9-]{1,63}\.[A-Za-z]|\d{1,3}(?:\.\d{1,3}){3}"
         r"|(?:this|the\s+following|that|my|our|an?\s+(?:external|remote)|the\s+attacker'?s?)\s+"
         r"(?:url|endpoint|server|address|webhook|email|site|host|domain|link)\b"
         r"|(?:pastebin|webhook\.site|requestbin|ngrok|transfer\.sh|hastebin)\b"
         r"|[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){0,8}\.(?:com|net|org|io|xyz|ru|cn|top|site|dev|app|me|co|info|biz)\b)")
_UNBOUND_HINTS = ("dan", "restrict", "filter", "censor", "jailbr", "evil", "malicious", "amoral", "rogue",
                  "unaligned", "free", "bound", "longer", "without", "with no", "developer mode", "not a", "no rules",
                  "no guidelines", "no ethics", "no limits")
_ZH_SECRET = r"(?:密钥|秘钥|私钥|密码|口令|令牌|凭证|凭据|token|api\s*key|\.env|环境变量|ssh|系统提示词?)"
_ZH_DEST = (r"\s*(?:https?://|[A-Za-z0-9_.+-]{1,64}@|[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}"
            r"\.(?:com|net|org|io|cn|xyz|ru|top)\b|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}"
            r"|(?:这个|以下|下面的?|指定的?|我的|外部的?|远程的?)(?:地址|网址|链接|服务器|邮箱|url|接口|webhook)"
            r"|(?:邮箱|服务器|网址|webhook))")

# Commands that destroy a machine: a home or root folder removed, a disk overwritten, a fork bomb.
_DESTRUCTIVE = (r"(?:sudo\s+)?(?:rm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+)(?:-[a-zA-Z-]+\s+)*"
                r"(?:--no-preserve-root\s+)?(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?)(?=[\s`\"'.;,)]|$)"
                r"|mkfs(?:\.\w+)?\s+(?:-\S+\s+)*/dev/\w+"
                r"|dd\s+[^\n]{0,60}?\bof=/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)\w*"
                r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
                r"|chmod\s+-R\s+0?777\s+/(?=[\s`\"'.;,)]|$)"
                r"|>\s*/dev/(?:sd|hd|vd|nvme)\w*)")
_DESTRUCTIVE_HINTS = ("rm ", "mkfs", "dd ", ":()", "chmod", "/dev/")

_VERBS_OVERRIDE = "ignore|disregard|forget|neglect"
_OVERRIDE_HINTS = (("ignore", "disregard", "forget", "neglect"),)


def _en(kind: str, pattern: str, hints: tuple, anchor: str, **options) -> _Phrase:
    return _Phrase(kind, _r(pattern, re.I | re.M), hints, anchor=_r(anchor), **options)


def _zh(kind: str, pattern: str, hints: tuple, anchor: str, **options) -> _Phrase:
    return _Phrase(kind, _r(pattern, re.I | re.M), hints, guard=options.pop("guard", "zh"),
                   anchor=_r(anchor), **options)


_PHRASES: tuple[_Phrase, ...] = (
    # instruction override
    _en("instruction override",
        rf"\b(?:{_VERBS_OVERRIDE})\s+(?:(?:all|any|each|every|of|the|your|my|these|those)\s+){{0,4}}"
        rf"(?:{_ADJ}[\s,]+(?:and\s+|or\s+)?){{1,3}}{_NOUN}\b",
        _OVERRIDE_HINTS, _VERBS_OVERRIDE, pointer=True),
    _en("instruction override",
        rf"\b(?:{_VERBS_OVERRIDE})\s+(?:all\s+(?:of\s+)?(?:the\s+|your\s+|my\s+)?|your\s+(?:own\s+)?)"
        r"(?:instructions|rules|guidelines|programming|system\s+prompt|prompts?|directives|constraints|guardrails"
        r"|restrictions|training)\b",
        _OVERRIDE_HINTS, _VERBS_OVERRIDE, pointer=True),
    _en("instruction override",
        rf"\b(?:{_VERBS_OVERRIDE})\s+(?:(?:all|any|of|the|your|these|those)\s+){{0,3}}"
        r"(?:instructions|prompts?|rules|directives|guidelines)\s+(?:above(?!\s+the\s)|before\s+this"
        r"|(?:you\s+(?:were|have\s+been|'ve\s+been)\s+)?(?:given|told|received)\s+(?:above|before|earlier|previously"
        r"|so\s+far))\b",
        _OVERRIDE_HINTS, _VERBS_OVERRIDE),
    _en("instruction override",
        rf"\b(?:{_VERBS_OVERRIDE})\s+(?:everything|anything|all)\s+(?:(?:written|said|stated|mentioned)\s+)?"
        r"(?:above|before(?:\s+this)?|previously|prior\s+to\s+this|so\s+far"
        r"|you\s+(?:were|have\s+been|'ve\s+been)\s+told)\b",
        _OVERRIDE_HINTS, _VERBS_OVERRIDE),
    _en("instruction override",
        r"\b(?:stop|don't|do\s+not|no\s+longer)\s+(?:follow(?:ing)?|obey(?:ing)?|adher(?:e|ing)\s+to"
        rf"|listen(?:ing)?\s+to)\s+(?:(?:any|all|the|your|these|those)\s+){{0,2}}{_ADJ}\s+"
        r"(?:instructions|rules|prompts?|guidelines|directives)\b",
        (("follow", "obey", "adher", "listen"),), r"stop|don't|do\s+not|no\s+longer", guard="", pointer=True),
    _en("instruction override",
        r"\b(?:override|bypass|circumvent)\s+(?:your\s+(?:system\s+prompt|safety|guardrails|programming|instructions"
        r"|guidelines|rules|restrictions)|(?:the\s+|all\s+|any\s+)?(?:safety|ethical|content)\s+(?:filters?"
        r"|guidelines|guardrails|restrictions|measures|polic(?:y|ies)))\b",
        (("override", "bypass", "circumvent"),), "override|bypass|circumvent"),
    _en("instruction override",
        r"\byour\s+(?:new|real|actual|true|updated)\s+(?:instructions|system\s+prompt|persona|directives?)"
        r"\s+(?:is|are)\b|\bnew\s+system\s+prompt\s*:",
        (("your new", "your real", "your actual", "your true", "your updated", "new system prompt"),),
        r"your|new\s+system"),
    _zh("instruction override",
        r"(?:忽略|无视|忘记|忘掉|忘了|不要理会|别理会|不要遵守|不再遵守|不用遵守|跳过|抛开|丢弃|放弃)(?:掉)?(?:你)?"
        r"(?:之前|以上|上面|前面|先前|此前|原来|原有|原先|原始|所有|全部|一切|系统)(?:的)?(?:所有|全部|一切|任何)?(?:的)?"
        r"(?:指令|指示|提示词?|规则|设定|命令|要求|约束|限制|系统提示词?|安全限制)",
        (("忽略", "无视", "忘", "不要理会", "别理会", "遵守", "跳过", "抛开", "丢弃", "放弃"),), "[忽无忘不别跳抛丢放]"),
    # role hijack
    _en("role hijack",
        r"\byou\s+are\s+now\s+(?:(?:an?|the|in|my)\s+)?(?:DAN\b"
        r"|(?:developer|DAN|jailbreak|jailbroken|unrestricted)\s+mode\b"
        rf"|{_UNBOUND}|(?:called|named)\s+[A-Z]\w*|(?:completely\s+)?(?:different|new)\s+(?:AI|assistant|model"
        r"|persona|character|entity)\b|(?:AI\s+)?(?:assistant|chatbot|bot|language\s+model|persona|character|AI)\s+"
        r"(?:that|who|which|named|called|with|without)\b)",
        (("you are now",),), r"you\s+are\s+now"),
    _en("role hijack",
        r"\b(?:act|behave|respond|answer|reply|role-?play|operate)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?"
        rf"(?:an?\s+)?(?:{_UNBOUND}|(?:ChatGPT|GPT|Claude|an?\s+AI)\s+with\s+developer\s+mode"
        r"|not\s+(?:an?\s+)?(?:AI|assistant))"
        r"|\bact\s+as\s+if\s+you\s+(?:have|had)\s+no\s+(?:restrictions|rules|guidelines|filters|limits|ethics)\b",
        (("act", "behave", "respond", "answer", "reply", "role", "operate"), (" as",), _UNBOUND_HINTS),
        "act|behave|respond|answer|reply|role|operate"),
    _en("role hijack",
        rf"\bpretend\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\s+(?:an?\s+)?(?:{_UNBOUND}|not\s+(?:an?\s+)?"
        r"(?:AI|assistant|language\s+model)|no\s+longer)",
        (("pretend",),), "pretend"),
    _en("role hijack",
        r"\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+be|shall\s+be|will\s+act\s+as|must\s+act\s+as"
        r"|will\s+respond\s+as|are\s+going\s+to\s+act\s+as)\s+(?:an?\s+)?"
        rf"(?:{_UNBOUND}|(?:a\s+)?different\s+(?:AI|assistant|model))",
        (("from now on",),), r"from\s+now"),
    _en("role hijack",
        r"\bDo\s+Anything\s+Now\b|\b(?-i:DAN)\s+mode\b"
        r"|\b(?:enable|enter|activate|switch\s+to)\s+(?:DAN|jailbreak|jailbroken)\s+mode\b"
        r"|<\|im_start\|>\s*system\b|<\|system\|>|<\|start_header_id\|>\s*system\b|<<SYS>>",
        (("do anything now", "dan mode", "jailbreak", "<|", "<<sys>>"),),
        r"do\s+anything|dan|enable|enter|activate|switch|<\||<<sys>>", guard=""),
    _zh("role hijack",
        r"(?:你现在是|你现在扮演|你现在作为|你现在充当|从现在(?:开始|起)[，,]?\s*你(?:是|将是|将扮演|要扮演|扮演|就是))"
        r"(?:一个|一名|一位|名为)?[^。\n，,！!？?]{0,20}?(?:AI|人工智能|助手|模型|机器人|角色|DAN|人格|黑客"
        r"|没有(?:任何)?限制|不受(?:任何)?(?:限制|约束)|无限制|无约束|开发者模式|越狱|邪恶)"
        r"|(?:进入|开启|启用|切换到)(?:DAN|越狱)模式|扮演(?:一个)?(?:没有(?:任何)?限制|不受(?:任何)?限制|DAN)",
        (("你现在", "从现在", "模式", "扮演"),), "[你从进开启切扮]"),
    # concealment
    _en("concealment",
        r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|notify|alert|warn|let)\s+(?:the\s+|your\s+)?"
        r"(?:users?|human|operator)\b(?:\s+know)?(?=\s*(?:$|[.,;:!)]|(?:about\s+(?:this|these|that|it|them"
        r"|the\s+(?:above|instructions?|change))|that\s+you|what\s+you|anything|you|this|we)\b))"
        r"|\b(?:keep|hide)\s+(?:this|these(?:\s+instructions)?|it|that|the\s+above)\s+(?:(?:a\s+)?(?:secret|hidden"
        r"|confidential)\s+)?from\s+(?:the\s+|your\s+)?(?:users?|human|operator)\b",
        (("user", "human", "operator"),), r"do\s+not|don't|never|keep|hide", guard=""),
    _zh("concealment",
        r"(?:不要|别|切勿|不许|不准|禁止|不能)(?:告诉|告知|透露给|提醒|通知)用户(?=$|[，。,.!！；;]|这|此|你|我们|任何"
        r"|关于这|有关)|(?:不要|别)让用户(?:知道|发现|察觉)|对用户保密|瞒着用户",
        (("用户",),), "[不别切禁对瞒]", guard=""),
    # prompt leak
    _en("prompt leak",
        r"\b(?:reveal|leak|disclose|divulge|tell\s+me|give\s+me|expose)\s+(?:to\s+me\s+)?"
        r"(?:(?:all|your|the|full|entire|complete|exact|original|hidden|initial|secret|verbatim)\s+){0,4}"
        r"(?:system\s+prompt|system\s+message|initial\s+(?:instructions|prompt)|hidden\s+(?:instructions|prompt)"
        r"|original\s+(?:instructions|prompt)|instructions\s+(?:above|you\s+were\s+given)|prompt\s+above"
        r"|developer\s+(?:message|instructions)|pre-?prompt)"
        r"|\b(?:print|show|output|display|dump|echo|write\s+out|paste|repeat|recite)\s+(?:me\s+)?"
        r"(?:(?:all|the|full|entire|complete|exact|verbatim)\s+){0,3}your\s+(?:(?:full|entire|complete|exact"
        r"|original|hidden|initial|secret)\s+){0,2}(?:system\s+prompt|system\s+message|instructions|prompt|rules"
        r"|guidelines)\b"
        r"|\bwhat\s+(?:is|are|was|were)\s+your\s+(?:(?:exact|full|original|initial|hidden|secret)\s+)?"
        r"(?:system\s+prompt|instructions|initial\s+prompt)\b"
        r"|\brepeat\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:words|text|everything)\s+above\b",
        (("prompt", "instructions", "system message", "developer message", "above", "your rules",
          "your guidelines"),),
        "reveal|leak|disclose|divulge|tell|give|expose|print|show|output|display|dump|echo|write|paste|repeat"
        "|recite|what"),
    _zh("prompt leak",
        r"(?:泄露|透露|告诉我|重复)(?:一下)?(?:你的)?(?:完整的?|全部的?|原始的?)?(?:系统提示词?|系统指令|初始指令"
        r"|原始指令|system\s*prompt|隐藏指令)"
        r"|(?:输出|显示|打印|给我看)(?:一下)?你的(?:完整的?|全部的?|原始的?)?(?:系统提示词?|系统指令|初始指令"
        r"|原始指令|system\s*prompt|隐藏指令)",
        (("提示", "指令", "prompt"),), "[泄透告重输显打给]"),
    # exfiltration: commands that send a secret file somewhere
    _en("exfiltration",
        r"\b(?:curl|wget|http|https|xh)\b[^\n]{0,300}?(?:\s(?:-d|--data(?:-binary|-raw|-urlencode|-ascii)?|-F"
        r"|--form|-T|--upload-file|--post-file|--post-data|--body-file|-InFile)(?:=|\s+)?[\"']?(?:[\w-]+=)?@?"
        rf"(?:{_READ_CMD})?|{_READ_CMD}|\s<\s*){_PATH_PREFIX}{_SENSITIVE}[^\n;&|]{{0,200}}",
        (("curl", "wget", "http", "xh"), _SENSITIVE_HINTS), "curl|wget|http|xh", guard=""),
    _en("exfiltration",
        rf"(?:\b(?:cat|base64|tar|zip|gzip|xxd|od|head|tail|strings|gpg)\b[^|\n]{{0,200}}?{_SENSITIVE}"
        r"[^|\n]{0,100}?|\b(?:env|printenv)\s*)\|\s*(?:[^|\n]{0,100}?\|\s*)?"
        rf"{_NET_CMD}\b[^\n;&|]{{0,200}}",
        (("|",), ("nc", "netcat", "socat", "telnet", "curl", "wget", "openssl", "mail", "mutt")),
        "cat|base64|tar|zip|gzip|xxd|od|head|tail|strings|gpg|env|printenv", guard="",
        gate=_Lazy(rf"\|\s*(?:[^|\n]{{0,100}}?\|\s*)?{_NET_CMD}\b")),
    _en("exfiltration",
        rf"\b(?:cat|base64|tar|gzip|xxd|head|tail)\b[^\n>|]{{0,200}}?{_SENSITIVE}[^\n>|]{{0,100}}>\s*"
        r"/dev/(?:tcp|udp)/\S*"
        rf"|\b(?:nc|ncat|netcat|socat|telnet)\b[^\n|]{{0,100}}?<\s*{_PATH_PREFIX}{_SENSITIVE}",
        (("/dev/tcp", "/dev/udp", "nc", "netcat", "socat", "telnet"), _SENSITIVE_HINTS),
        "cat|base64|tar|gzip|xxd|head|tail|nc|ncat|netcat|socat|telnet", guard=""),
    _en("exfiltration",
        r"\b(?:requests\.(?:post|put)|httpx\.(?:post|put)|urlopen|fetch|axios\.(?:post|put))\s*\([^\n]{0,300}?"
        rf"(?:open\(\s*[\"'][^\"'\n]{{0,80}}?{_SENSITIVE}|(?:dict|str|json\.dumps)\(\s*os\.environ\s*\)"
        rf"|JSON\.stringify\(\s*process\.env\s*\)|readFileSync\(\s*[\"'][^\"'\n]{{0,80}}?{_SENSITIVE})",
        (("post", "put", "urlopen", "fetch"), ("open(", "environ", "process.env", "readfilesync")),
        "requests|httpx|urlopen|fetch|axios", guard=""),
    # exfiltration: prose that asks for a secret to be sent somewhere
    _en("exfiltration",
        r"\b(?:send|upload|post|email|e-mail|mail|forward|transmit|exfiltrate|leak|beam|report)\s+"
        r"(?:(?:all|the|your|my|our|every|any|of|contents?|full|entire|raw|local|these|those|user's|users')\s+){0,4}"
        rf"{_SECRET_NOUN}\s+(?:(?:file|files|folder|directory|contents?|data|values?)\s+)?(?:\w+\s+){{0,2}}?"
        rf"(?:to|at|into|via)\s+{_DEST}",
        (("send", "upload", "post", "mail", "forward", "transmit", "exfiltrate", "leak", "beam", "report"),
         ("env", "ssh", "key", "token", "credential", "secret", "password", "cookie", "prompt", "history", "memory")),
        r"send|upload|post|e-?mail|mail|forward|transmit|exfiltrate|leak|beam|report"),
    # an order to run a command that destroys the machine ("from now on, always run rm -rf /")
    _en("destructive command",
        r"\b(?:run|execute|exec|type|enter|invoke|paste)\s+(?:(?:the|this|that|a)\s+)?(?:command\s+)?[:`\"'(]*\s*"
        + _DESTRUCTIVE,
        (("run", "exec", "type", "enter", "invoke", "paste"), _DESTRUCTIVE_HINTS),
        r"run|exec|type|enter|invoke|paste"),
    _zh("destructive command",
        r"(?:运行|执行|输入|跑)(?:一下|一遍|命令|这个命令)?\s*[:：`\"'“]*\s*" + _DESTRUCTIVE,
        (("运行", "执行", "输入", "跑"), _DESTRUCTIVE_HINTS), "[运执输跑]"),
    _zh("exfiltration",
        rf"(?:把|将)(?:你的|所有的?|全部的?|这些|该|本地的?)?[^。\n，,]{{0,15}}?{_ZH_SECRET}[^。\n，,]{{0,12}}?"
        rf"(?:发送|发|上传|传|转发|提交|post|寄|同步)(?:到|给|至){_ZH_DEST}"
        rf"|(?:发送|上传|转发|发)(?:你的|所有的?)?{_ZH_SECRET}(?:文件)?(?:到|给|至){_ZH_DEST}",
        (("发", "传", "提交", "post", "寄", "同步"),), "[把将发上转]"),
)

# Hidden text that addresses a model: at its start ("AI agents: ...") or anywhere ("if you are an AI ...").
_AI_OPENING = _Lazy(
    r"\s*(?:note\s+(?:to|for)\s+)?(?:the\s+|all\s+|any\s+)?(?:(?:AI|LLM)\s+)?(?:AI|LLM|assistant|agent|model|GPT"
    r"|ChatGPT|Claude|Copilot|Gemini|Cursor|bot)s?\s*[:,]|\s*(?:AI|人工智能|大模型|助手|智能体)\s*[:：]", re.I)
_AI_ADDRESS = _Lazy(
    r"\b(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:AI|LLM|assistant"
    r"|agent|model|bot)s?\b|\bif\s+you(?:'re|\s+are)\s+(?:an?\s+)?(?:AI|LLM|(?:large\s+)?language\s+model"
    r"|assistant|agent|bot|chatbot)\b|\b(?:AI|LLM)s?\s+(?:reading|processing|summari[sz]ing|parsing)\s+this\b"
    r"|如果你是(?:AI|人工智能|大模型|语言模型|助手)", re.I)


def _addresses_model(text: str, start: int, end: int) -> bool:
    return bool(_AI_OPENING.match(text, start, end) or _AI_ADDRESS.search(text, start, end))
_HIDDEN = (
    _Lazy(r"^\[//\]:\s*#\s*[(\"'](?P<c>[^\n]{0,500})[)\"']\s*$", re.M),
    _Lazy(r"<\w{1,20}\s(?P<css>[^<>]{0,400})>(?P<c>[^<]{1,2000})"),
)
_INVISIBLE_CSS = _Lazy(r"\bstyle\s*=\s*[\"'][^\"']*?(?:display\s*:\s*none|visibility\s*:\s*hidden"
                            r"|font-size\s*:\s*0(?:px)?\b|opacity\s*:\s*0(?:\.0+)?\b)", re.I)
_HIDDEN_HINTS = ("<!--", "[//]:", "style")


def _phrase_index() -> tuple[tuple[str, tuple[int, ...]], ...]:
    index: dict[str, list[int]] = {}
    for order, phrase in enumerate(_PHRASES):
        for hint in phrase.hints[0]:
            index.setdefault(hint, []).append(order)
    return tuple((hint, tuple(orders)) for hint, orders in index.items())


_PHRASE_HINTS = _phrase_index()


def _html_comments(text: str) -> Iterator[tuple[int, int]]:
    """Spans of ``<!-- ... -->`` comments, found in one pass."""
    pos = text.find("<!--")
    while pos != -1:
        close = text.find("-->", pos + 4)
        if close == -1:
            return
        yield pos, close + 3
        pos = text.find("<!--", close + 3)


def _match_phrase(text: str, lower: str, order: int, phrase: _Phrase, candidates: list) -> None:
    for m in _anchored(phrase.pattern, phrase.anchor, text, lower):
        s, e = m.span()
        if phrase.guard and _guarded(text, s, phrase.guard):
            continue
        if phrase.pointer and _POINTER.match(text, e):
            continue
        candidates.append((0, s, e, order, (phrase.kind, _excerpt(m.group()))))


def find_injection(text: str) -> list[InjectionMatch]:
    """Text that tries to instruct the agent reading it: overrides, role hijacks, exfiltration, hidden prompts."""
    if not text:
        return []
    lower = text.lower()
    candidates: list[tuple[int, int, int, int, tuple[str, str]]] = []
    present = lower.__contains__
    active = {order for hint, orders in _PHRASE_HINTS if hint in lower for order in orders}
    for order in sorted(active):
        phrase = _PHRASES[order]
        for group in phrase.hints[1:]:
            if not any(map(present, group)):
                break
        else:
            if phrase.gate is None or phrase.gate.search(text) is not None:
                _match_phrase(text, lower, order, phrase, candidates)
    if _present(_HIDDEN_HINTS, lower):
        hidden = [(s, e, s + 4, e - 3) for s, e in _html_comments(text)]
        for pattern in _HIDDEN:
            hidden += [(*m.span(), *m.span("c")) for m in pattern.finditer(text)
                       if "css" not in pattern.groupindex or _INVISIBLE_CSS.search(m.group("css"))]
        for s, e, cs, ce in hidden:
            if _addresses_model(text, cs, ce):
                candidates.append((0, s, e, len(_PHRASES), ("hidden prompt", _excerpt(text[s:e]))))
    if not text.isascii():
        candidates.extend((0, s, e, -1, label) for s, e, label in _invisible(text))
    if not candidates:
        return []
    return [InjectionMatch(kind, line, col, s, e, excerpt)
            for line, col, s, e, (kind, excerpt) in _positions(text, _resolve(candidates))]


def strip_invisible(text: str) -> str:
    """The text without the invisible characters that ``find_injection`` reports."""
    if text.isascii():
        return text
    return _INVISIBLE.sub(lambda m: m.group() if _legit_invisible(text, m.start(), m.end()) else "", text)

"""Personal data in text: find it (``find``), mask it (``redact``) and apply a write policy
(``apply``, ``apply_fields``: `write.pii`, `write.pii_captured`; ``PiiError`` under refuse). What is
found, how it is masked and the policies are described in docs/safety.md; a masked value is never
found again. Plain regular expressions and arithmetic: nothing heavy is imported, so the per-turn
paths (`session add`, the hook) pay only for the scan.
"""

from __future__ import annotations

import re

from ..cjk import HAN_BASIC
from ..config import PII_POLICIES as POLICIES  # the settings' values: write.pii, write.pii_captured
from ..errors import Refused
from ..model import Value
from .normalize import CUTS

_set = object.__setattr__


class PiiError(Refused):
    code = "pii"


class Found(Value):
    """One piece of personal data in a text: its kind, where it is (offsets, line and column from
    1) and how it is shown masked."""

    FIELDS = ("kind", "start", "end", "line", "column", "masked")
    __slots__ = FIELDS
    kind: str
    start: int
    end: int
    line: int
    column: int
    masked: str

    def __init__(self, kind: str, start: int, end: int, line: int, column: int, masked: str):
        for name, value in zip(self.FIELDS, (kind, start, end, line, column, masked)):
            _set(self, name, value)


class Applied(Value):
    """A text as it may be written under a policy, what was found in it and the warning to show."""

    FIELDS = ("text", "found", "warning")
    __slots__ = FIELDS
    text: str
    found: list[Found]
    warning: str | None

    def __init__(self, text: str, found: list | None = None, warning: str | None = None):
        _set(self, "text", text)
        _set(self, "found", [] if found is None else found)
        _set(self, "warning", warning)


# ---------------------------------------------------------------- rules

_EDGE = r"(?<![0-9A-Za-z_+*#./\\-])"  # no digit, letter or joiner right before
_END = r"(?![0-9A-Za-z_*]|[.\-/]\d)"  # nor right after (a sentence's full stop is fine)

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-*/:@=])([A-Za-z0-9][A-Za-z0-9._%+\-]{0,63})@"
    r"((?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})"
    r"(?![A-Za-z0-9\-@_]|\.[A-Za-z0-9]|:[^\s:])"
)
ROLE_ACCOUNTS = frozenset(
    """
abuse accounts admin administrator alert alerts backup billing bot build ci contact deploy deployer dev devops
donotreply feedback finance git github help hello hostmaster hr info it jobs legal mail mailer-daemon marketing
monitoring news newsletter no-reply noreply notifications notify office ops postmaster press privacy root sales
security service support sysadmin system team test webmaster
""".split()
)
_SERVICE_DOMAINS = (".iam.gserviceaccount.com", "users.noreply.github.com")

_SEP = r"(?:[ \-.]| - )"
_CN_MOBILE = re.compile(
    _EDGE
    + r"((?:(?:\+|00)86[ \-]?|\(\+?86\) ?)?1[3-9]\d"
    + _SEP
    + r"?\d{4}"
    + _SEP
    + r"?\d{4})"
    + r"(?![0-9A-Za-z_*]|[\-/]\d|\.\d)"
)
_AREA = r"(?:010|02\d|0[3-9]\d{2})"
_LOCAL = r"[2-9](?:\d{2}[ \-]?\d{4}|\d{3}[ \-]?\d{3,4})"
_EXT = r"(?:(?:-|转|ext\.? ?| x)\d{1,5})?"
_CN_LANDLINE = re.compile(
    _EDGE
    + r"((?:\("
    + _AREA
    + r"\) ?|"
    + _AREA
    + r"[ \-]|(?:\+|00)86[ \-]?\(?(?:10|2\d|[3-9]\d{2})\)?[ \-]?)"
    + _LOCAL
    + _EXT
    + r")"
    + _END
)
_INTL = re.compile(_EDGE + r"((?:\+|(?<!\d )(?<!\d-)00)[1-9]\d{0,2}(?:[ \-.]?\(?\d{1,5}\)?){1,6})" + _END)
_CC2 = frozenset(
    "20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58 60 61 62 63 64 65 66 "
    "81 82 84 86 90 91 92 93 94 95 98".split()
)

_CN_ID = re.compile(
    r"(?<![0-9A-Za-z_*])([1-8]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx])"
    r"(?![0-9A-Za-z_*])"
)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)

_CARD = re.compile(_EDGE + r"(\d(?:[ \-]?\d){12,18})" + _END)

_IBAN = re.compile(r"(?<![A-Za-z0-9*])([A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30})(?![A-Za-z0-9*])")
# the length of an IBAN in each country that issues them
IBAN_LENGTHS = {
    x[:2]: int(x[2:])
    for x in (
        "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BR29 CH21 CR22 CY28 CZ24 DE22 DK18 DO28 EE20 EG29 ES24 "
        "FI18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 "
        "LI21 LT20 LU20 LV21 MC27 MD24 ME22 MK19 MR27 MT31 MU30 NL18 NO15 PK24 PL28 PS29 PT25 QA29 RO24 RS22 "
        "SA24 SE24 SI19 SK24 SM27 TN24 TR26 UA29 VG24 XK20"
    ).split()
}

_ZH_ADDRESS = re.compile(
    f"([{HAN_BASIC}]{{1,24}}?"
    r"(?:路|街|大道|巷|弄)(?:[东西南北中]?[一二三四五六七八九十]{0,3}段)?)"
    r"(\d{1,5})(?=号)"
)
_STREET_WORDS = "Street Avenue Road Boulevard Lane Drive Parkway Terrace Court Place Square".split()
_EN_ADDRESS = re.compile(
    r"(?<![0-9A-Za-z])(\d{1,5}[A-Z]?)( (?:[A-Z][a-z]+\.? ){1,3}(?:" + "|".join(_STREET_WORDS) + r")\b)"
)


_NOT_A_HOUSE = re.compile(
    r"(?i)\b(?:version|v|release|step|chapter|section|part|page|line|item|rule|issue|pr|"
    r"ticket|build|phase|level|round|sprint|stage|test|case|figure|table|option|no|number|"
    r"#)\.?\s*$"
)


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def luhn(number: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(number)):
        n = ord(c) - 48
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _card_issuer(n: str) -> bool:
    """A known issuer prefix and a length it uses (Visa, Mastercard, Amex, UnionPay, JCB,
    Discover, Diners, Mir)."""
    size = len(n)
    if n[0] == "4":
        return size in (13, 16, 19)
    two, four = int(n[:2]), int(n[:4])
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return size == 16
    if two in (34, 37):
        return size == 15
    if two == 62 or 3528 <= four <= 3589 or n.startswith("6011") or two == 65 or 644 <= int(n[:3]) <= 649:
        return 16 <= size <= 19
    if two in (36, 38, 39) or 300 <= int(n[:3]) <= 305:
        return 14 <= size <= 16
    if 2200 <= four <= 2204:
        return 16 <= size <= 19
    return False


def _id_ok(value: str) -> bool:
    body = value[:17]
    check = "10X98765432"[sum((ord(c) - 48) * w for c, w in zip(body, _ID_WEIGHTS)) % 11]
    if value[17].upper() != check:
        return False
    y, m, d = int(value[6:10]), int(value[10:12]), int(value[12:14])
    days = (31, 29 if (y % 4 == 0 and y % 100) or y % 400 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    return 1900 <= y <= 2099 and d <= days[m - 1]


def _iban_ok(compact: str) -> bool:
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _calling_code(digits: str) -> int:
    """The length of the country calling code at the start of digits (0 when none is valid)."""
    if digits[:1] in ("1", "7"):
        return 1
    if digits[:2] in _CC2:
        return 2
    return 3 if len(digits) >= 3 and digits[0] != "0" else 0


# ---------------------------------------------------------------- masking


def _mask_digits(value: str, keep_start: int, keep_end: int = 4, counts=str.isdigit) -> str:
    """Every digit (every character ``counts`` picks: letters too for an IBAN) masked with '*'
    except the first keep_start and the last keep_end; separators stay."""
    total = sum(counts(c) for c in value)
    out, seen = [], 0
    for c in value:
        if counts(c):
            seen += 1
            out.append(c if seen <= keep_start or seen > total - keep_end else "*")
        else:
            out.append(c)
    return "".join(out)


def _prefix_digits(value: str) -> int:
    """How many leading digits of a mainland China number stay: +86 or 0086, then the mobile's
    first three or the area code."""
    d = _digits(value)
    head = value.lstrip("( ")
    cc = 4 if head.startswith("0086") else 2 if head.startswith(("+86", "86")) else 0
    rest = d[cc:]
    if rest.startswith("1") and len(rest) == 11:
        return cc + 3
    if rest.startswith("0"):
        return cc + (3 if rest[1:2] in ("1", "2") else 4)
    return cc + (2 if rest[:1] in ("1", "2") else 3)


# ---------------------------------------------------------------- finding

# what a writer may use instead of an ASCII digit, @, space or dash, to the ASCII one (full-width
# forms, no-break and other spaces, Unicode dashes); zero-width characters and soft hyphens go
_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"


def _ascii(ch: str) -> str | None:
    o = ord(ch)
    if 0xFF10 <= o <= 0xFF19 or 0xFF21 <= o <= 0xFF3A or 0xFF41 <= o <= 0xFF5A or ch in "＠＋－":
        return chr(o - 0xFEE0)  # full-width digits, letters, @, + and -; other punctuation stays
    if ch in _SPACES:
        return " "
    if 0x2010 <= o <= 0x2015 or ch == "\u2212":
        return "-"
    return "" if ch in CUTS else None


def _normal(text: str) -> tuple[str, list[int]] | None:
    """(text with look-alike digits, @, spaces and dashes made ASCII, the original index of each
    character), or None when there is nothing to change."""
    if text.isascii():
        return None
    chars, where, changed = [], [], False
    for i, ch in enumerate(text):
        new = _ascii(ch) if ord(ch) > 127 else None
        if new is None:
            chars.append(ch)
            where.append(i)
        else:
            changed = True
            if new:
                chars.append(new)
                where.append(i)
    return ("".join(chars), where) if changed else None


def find(text: str) -> list[Found]:
    """Every piece of personal data in text, in order, without overlaps: in the text as a reader
    sees it (full-width digits, a full-width @, no-break spaces and Unicode dashes read as
    ASCII), reported where it stands in the original."""
    if not text:
        return []
    other, where = _normal(text) or (text, None)
    out = []
    for start, end, kind, masked in _find(other):
        if where is not None:
            start, end = where[start], where[end - 1] + 1
        out.append(Found(kind, start, end, text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start), masked))
    return out


# Words just before a number that make it a count, a size, a time or an id, not personal data.
_TECHNICAL = re.compile(
    r"(?:(?<![A-Za-z])(?:size|bytes?|count|total|sum|offset|len(?:gth)?|limit|max|min|capacity|used|"
    r"free|heap|mem(?:ory)?|disk|rows?|records?|inode|pid|tid|thread|trace|span|request|req|order|"
    r"seq(?:uence)?|tracking|build|version|uuid|hash|digest|sha\d*|md5|crc\d*|checksum|commit|epoch|"
    r"ts|timestamp|nanos(?:econds)?|micros|millis|port|status|snowflake|tweet|partition|lag|gc|cache|"
    r"buffer|pool|file|dump|parent|child|node|job|task|shard|slot|batch)(?![A-Za-z])|文件|大小|字节|订单号?|编号|流水号?|序号|版本|长度|数量|总计|偏移)"
    r"[\s\W]{0,3}(?:[A-Za-z_][\w.-]{0,23}[\s=:]{1,3})?$",
    re.I,
)
# Words near a bare number that say it is a phone.
_PHONE_WORDS = re.compile(
    r"phone|mobile|cell|\btel\b|telephone|\bcall|\bring\b|\bsms\b|\btext\b|whats ?app|wechat|"
    r"signal|contact|reach|\bdial|number|on-call|\bmob\b|手机|电话|号码|联系|拨|打给|打到|打这个|回拨|"
    r"致电|微信|短信|座机|热线|号",
    re.I,
)


def _in_token(text: str, start: int, end: int) -> bool:
    """The digits are part of a longer token: a hex digest or an identifier (sha256:4…a9f)."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return (before.isascii() and (before.isalnum() or before in ":_")) or (
        after.isascii() and (after.isalpha() or after == "_")
    )


def _technical(text: str, start: int) -> bool:
    """A technical word (a size, a count, an id, a hash ...) ends just before the number at start."""
    before = text[max(0, start - 40) : start]
    return _TECHNICAL.search(before) is not None


def _said_as_phone(text: str, start: int, end: int) -> bool:
    """A phone word within the 40 characters before the number or the 12 after it."""
    near = text[max(0, start - 40) : start] + " " + text[end : end + 12]
    return _PHONE_WORDS.search(near) is not None


def _find(text: str) -> list[tuple[int, int, str, str]]:
    spans: list[tuple[int, int, str, str]] = []
    if "@" in text:
        for m in _EMAIL.finditer(text):
            local, domain = m.group(1), m.group(2)
            low = domain.lower()
            if local.lower() in ROLE_ACCOUNTS or local.lower().split("+")[0] in ROLE_ACCOUNTS:
                continue
            if low.endswith(_SERVICE_DOMAINS) or re.fullmatch(r"[\d.]+", low):
                continue
            spans.append((m.start(), m.end(), "email", f"{local[0]}***@{domain}"))
    digits = sum(c.isdigit() for c in text)  # each rule below needs at least this many digits
    if digits >= 17:
        for m in _CN_ID.finditer(text):
            if _id_ok(m.group(1)) and not _technical(text, m.start(1)) and not _in_token(text, m.start(1), m.end(1)):
                spans.append((m.start(1), m.end(1), "cn-id", m.group(1)[:4] + "*" * 10 + m.group(1)[14:]))
    if digits >= 11:
        for m in _CN_MOBILE.finditer(text):
            v = m.group(1)
            if v.isdigit() and (not _said_as_phone(text, m.start(1), m.end(1)) or _technical(text, m.start(1))):
                continue  # eleven bare digits are a phone only when said to be one (a byte count is not)
            spans.append((m.start(1), m.end(1), "phone", _mask_digits(v, _prefix_digits(v))))
    if digits >= 9:
        for m in _CN_LANDLINE.finditer(text):
            v = m.group(1)
            spans.append((m.start(1), m.end(1), "phone", _mask_digits(v, _prefix_digits(v))))
    if digits >= 7 and ("+" in text or "00" in text):
        for m in _INTL.finditer(text):
            v = m.group(1).rstrip(" -.")
            d = _digits(v)
            lead = 2 if v.startswith("00") else 0
            cc = _calling_code(d[lead:])
            national = len(d) - lead - cc
            if not cc or d[lead : lead + 2] == "86" or not (7 <= len(d) - lead <= 15) or national < 6:
                continue
            spans.append((m.start(1), m.start(1) + len(v), "phone", _mask_digits(v, lead + cc)))
    if digits >= 13:
        for m in _CARD.finditer(text):
            v = m.group(1)
            n = _digits(v)
            seps = set(re.findall(r"[ \-]", v))
            if len(seps) > 1 or not _card_issuer(n) or not luhn(n):
                continue
            if _technical(text, m.start(1)) or _in_token(text, m.start(1), m.end(1)):
                continue  # a Luhn-valid id, span, order or digest is not a card
            spans.append((m.start(1), m.end(1), "card", _mask_digits(v, 0)))
    if digits >= 8:
        for m in _IBAN.finditer(text):
            v = m.group(1)
            compact = v.replace(" ", "").upper()
            while len(compact) > 15 and " " in v and not _iban_ok(compact):  # a word may follow the number
                v = v[: v.rstrip().rfind(" ")].rstrip()
                compact = v.replace(" ", "").upper()
            if _iban_ok(compact):
                spans.append((m.start(1), m.start(1) + len(v), "iban", _mask_digits(v, 4, 4, str.isalnum)))
    if digits and "号" in text:
        for m in _ZH_ADDRESS.finditer(text):  # the street stays, its house number is masked
            spans.append((m.start(1), m.end(2), "address", m.group(1) + "*" * len(m.group(2))))
    if digits and any(w in text for w in _STREET_WORDS):
        for m in _EN_ADDRESS.finditer(text):
            if _NOT_A_HOUSE.search(text[max(0, m.start(1) - 16) : m.start(1)]):
                continue  # "version 2 Release Court", "step 3 Station Road": a count, not a house
            spans.append((m.start(1), m.end(2), "address", "*" * len(m.group(1)) + m.group(2)))
    return _resolve(spans)


_PRIORITY = {"cn-id": 0, "iban": 1, "email": 2, "card": 3, "phone": 4, "address": 5}


def _resolve(spans: list) -> list:
    """Overlapping finds: the longer one, then the more specific kind, wins."""
    chosen: list = []
    for s in sorted(spans, key=lambda s: (-(s[1] - s[0]), _PRIORITY[s[2]], s[0])):
        if all(s[1] <= c[0] or s[0] >= c[1] for c in chosen):
            chosen.append(s)
    return sorted(chosen)


def redact(text: str) -> tuple[str, list[Found]]:
    """The text with every find masked, and the finds (positions in the original text)."""
    found = find(text)
    parts, last = [], 0
    for f in found:
        parts += [text[last : f.start], f.masked]
        last = f.end
    return "".join(parts) + text[last:], found


# ---------------------------------------------------------------- policy


def describe(found: list[Found]) -> str:
    """'email at line 1, column 5; phone at line 2, column 1' (at most three, then a count)."""
    parts = [f"{f.kind} at line {f.line}, column {f.column}" for f in found[:3]]
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return "; ".join(parts) + more


def apply(text: str, policy: str, field: str = "text") -> Applied:
    """The text as it may be written under `policy`, what was found and a warning to show."""
    if policy == "allow" or not text:
        return Applied(text)
    if policy not in POLICIES:
        raise ValueError(f"unknown personal-data policy {policy!r}")
    if policy == "redact":
        new, found = redact(text)
        if not found:
            return Applied(text)
        shown = ", ".join(f"{f.kind} -> {f.masked}" for f in found[:3]) + (" …" if len(found) > 3 else "")
        return Applied(new, found, f"masked personal data in the {field} ({shown}); write.pii policy: redact")
    found = find(text)
    if not found:
        return Applied(text)
    if policy == "refuse":
        raise PiiError(
            f"refused: the {field} holds personal data ({describe(found)}); mask it, "
            "or set write.pii to warn, redact or allow in memcli.yaml",
            data={"pii": [{"field": field, "kind": f.kind, "line": f.line, "column": f.column} for f in found]},
        )
    return Applied(
        text, found, f"personal data in the {field} ({describe(found)}), stored as given; `write.pii: redact` masks it"
    )


def apply_fields(fields: dict, policy: str) -> tuple[dict, list[str]]:
    """apply() over a dict of field -> text (strings in lists and tuples too); (fields, warnings)."""
    if policy == "allow":
        return fields, []
    warnings: list[str] = []

    def one(name, value):
        if isinstance(value, str):
            res = apply(value, policy, name)
            if res.warning:
                warnings.append(res.warning)
            return res.text
        if isinstance(value, (list, tuple)):
            return type(value)(one(name, v) for v in value)
        if isinstance(value, dict):
            return {k: one(str(k), v) for k, v in value.items()}
        return value

    return {k: one(k, v) for k, v in fields.items()}, warnings

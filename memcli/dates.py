"""Dates as memcli reads and writes them (ISO 8601 in UTC, durations like 30d): the one parser of a
date and the one clock, ``utcnow``. A date without a zone is UTC; a date-time that does not parse
as a whole is read by its date alone."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from .errors import ConfigError, UsageError

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_UNIT = {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def stamp(when: datetime) -> str:
    """A moment as memcli writes it: 2026-12-01T10:00:00Z."""
    return when.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def utcnow() -> str:
    return stamp(datetime.now(timezone.utc))


def parse(value) -> datetime | None:
    """An ISO date or date-time as an aware datetime (UTC when no zone is given); None when it is not one."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    text = str(value).strip()
    if not _DATE.match(text):
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        try:
            dt = datetime.fromisoformat(text[:10])
        except ValueError:
            return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def is_date(value) -> bool:
    """An ISO date or date-time (what `created`, `updated` and `expires` hold)."""
    return parse(value) is not None


def now_of(now=None) -> datetime:
    """The moment to judge by: an ISO string or a datetime, else now."""
    if now is None:
        return datetime.now(timezone.utc).replace(microsecond=0)
    return parse(now) or datetime.now(timezone.utc)


def days(value) -> float | None:
    """An ISO date or date-time as days since 1970; None when it is not one."""
    when = parse(value)
    return None if when is None else (when - _EPOCH).total_seconds() / 86400.0


def expired(expires, today: str | None = None) -> bool:
    """An expiry (its date) before today (YYYY-MM-DD, default the UTC date now)."""
    if not expires:
        return False
    return str(expires)[:10] < (today or utcnow()[:10])


def parse_duration(value: object, key: str = "duration") -> float:
    """'10s', '90d', '1.5h', 30 -> seconds; ConfigError naming key otherwise."""
    if isinstance(value, (int, float)):
        if isinstance(value, bool) or not 0 <= value < float("inf"):
            raise ConfigError(f"{key}: expected a duration like 10s, 90d, got {value!r}")
        return float(value)
    m = _DURATION.match(str(value))
    if not m:
        raise ConfigError(f"{key}: expected a duration like 10s, 30m, 24h, 90d, got {value!r}")
    return float(m.group(1)) * _UNIT[m.group(2)]


def expires_at(value: str | None, now: str | None = None) -> str | None:
    """An --expires value: a date, or a duration from now (30d) as a date; None for ''/null/none/never."""
    if value is None or str(value).strip().lower() in ("", "null", "none", "never"):
        return None
    text = str(value).strip()
    if re.fullmatch(r"\d+(?:\.\d+)?\s*[smhdw]", text):
        base = datetime.fromisoformat((now or utcnow()).replace("Z", "+00:00"))
        try:
            return (base + timedelta(seconds=parse_duration(text))).date().isoformat()
        except (OverflowError, ValueError):
            raise UsageError(
                f"--expires: {text[:40]} from now is past the year 9999; give a date or a shorter duration, or 'never'"
            ) from None
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--expires: expected a date like 2027-01-31 or a duration like 30d, got {text!r}")
    return text

"""The session layer: recent turns plus a summary of older ones, in .memcli/sessions/<name>.json;
beyond session.max_rounds user rounds the oldest turns fold into the summary (extractive, or by a
configured command) and go raw to the episode log."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import FileError, UsageError
from .fs import atomic_write, atomic_write_many, dump_state, read_state, set_aside, state_file

ROLES = ("user", "assistant", "system", "tool")
MAX_TURN = 100_000


def session_path(root: Path, name: str) -> Path:
    return state_file(root, "sessions", name)


def empty(name: str) -> dict:
    return {"version": 1, "name": name, "summary": "", "turns": [], "folded": 0}


def load(root: Path, name: str) -> dict:
    data = read_state(session_path(root, name), "session", "`memcli session clear` moves it aside", _check_shape)
    if data is None:
        return empty(name)
    data.setdefault("summary", "")
    data.setdefault("folded", 0)
    data["name"] = name  # the file's name decides where it is saved, not what the file says
    return data


def load_or_skip(root: Path, name: str) -> tuple[dict, str | None]:
    """For readers: (session, None), or (an empty session, a warning) when the file is broken."""
    try:
        return load(root, name), None
    except FileError as e:
        return empty(name), f"{e.message}; skipped"


def load_for_write(root: Path, name: str) -> tuple[dict, str | None]:
    """For writers (holding the root lock): a broken file is moved aside (never deleted) and the
    session starts afresh; the warning says where the file went."""
    try:
        return load(root, name), None
    except FileError as e:
        moved = set_aside(session_path(root, name))
        return empty(name), f"{e.message.split(';')[0]}; moved it to {moved} and started afresh"


def _check_shape(data) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise ValueError("not a session object")
    if not isinstance(data.get("summary", ""), str):
        raise ValueError("the summary is not text")
    if not isinstance(data.get("folded", 0), int):
        raise ValueError("'folded' is not a number")
    for t in data["turns"]:
        if not isinstance(t, dict) or not isinstance(t.get("text"), str) or not isinstance(t.get("role"), str):
            raise ValueError("a turn is not an object with a role and a text")


def save(root: Path, data: dict) -> None:
    atomic_write(session_path(root, data["name"]), dump_state(data))


def _rounds(turns: list) -> list[int]:
    """Index of the first turn of each user round."""
    starts = [i for i, t in enumerate(turns) if t.get("role") == "user"]
    return starts if starts and starts[0] == 0 else [0] + starts


def extractive(previous: str, turns: list, limit: int) -> str:
    """The first sentence of each folded turn, appended to the previous summary, newest kept."""
    lines = [ln for ln in previous.split("\n") if ln.strip()]
    for t in turns:
        text = re.sub(r"\s+", " ", t.get("text", "")).strip()
        m = re.match(r"(.{1,160}?[.!?。！？])(\s|$)", text)
        first = m.group(1) if m else text[:160] + ("…" if len(text) > 160 else "")
        if first:
            lines.append(f"- {t.get('role', '?')}: {first}")
    while lines and len("\n".join(lines)) > limit:
        lines.pop(0)
    return "\n".join(lines)


def summarize(
    command: str | None, timeout: float, previous: str, turns: list, limit: int, cwd=None
) -> tuple[str, str | None]:
    """(summary, warning): by the command, run in ``cwd`` (the root), else extractive (also when it fails)."""
    if not command:
        return extractive(previous, turns, limit), None
    feed = (f"Summary so far:\n{previous}\n\n" if previous else "") + "\n".join(
        f"{t.get('role')}: {t.get('text')}" for t in turns
    )
    import subprocess

    try:
        p = subprocess.run(
            command, shell=True, input=feed.encode("utf-8"), capture_output=True, timeout=timeout, cwd=cwd
        )
        out = p.stdout.decode("utf-8", "replace").strip()
        if p.returncode == 0 and out:
            return out[-limit:], None
        why = f"exit {p.returncode}" if p.returncode else "no output"
    except subprocess.TimeoutExpired:
        why = f"timed out after {timeout:g}s"
    except OSError as e:
        why = str(e)
    return extractive(previous, turns, limit), f"session.summarizer failed ({why}); used the extractive summary"


def check_turn(role: str, text: str) -> None:
    if role not in ROLES:
        raise UsageError(f"ROLE must be one of {', '.join(ROLES)}, got {role!r}")
    if not text.strip():
        raise UsageError("the turn text is empty")
    if len(text) > MAX_TURN:
        raise UsageError(f"the turn has {len(text)} characters; the limit is {MAX_TURN}")


def to_fold(turns: list, max_rounds: int) -> int:
    """How many of the oldest turns fold: all before the last max_rounds user rounds, and at least
    all but the last 2 * max_rounds turns."""
    starts = _rounds(turns)
    user_rounds = [i for i in starts if turns[i].get("role") == "user"]
    cut = user_rounds[len(user_rounds) - max_rounds] if len(user_rounds) > max_rounds else 0
    return max(cut, len(turns) - 2 * max(max_rounds, 1), 0)


def fold(root: Path, name: str, data: dict, n: int, summary: str, now: str) -> tuple[str | None, list]:
    """Fold the first n turns into `summary` and the episode log, both files in one step (under the
    root lock); (the episode's relative path, the folded turns)."""
    from . import episodes  # a turn that folds nothing reads no episode grammar

    folded, data["turns"] = data["turns"][:n], data["turns"][n:]
    files, episode = [], None
    if folded:
        n = len(folded)
        log = episodes.appended(
            root,
            now,
            f"session {name}: {n} turn{'' if n == 1 else 's'} folded into the summary",
            [episodes.turn_block(t) for t in folded],
        )
        episode = episodes.rel(log[0])
        files.append(log)
        data["summary"] = summary
        data["folded"] = int(data.get("folded", 0)) + len(folded)
    # The folded turns reach the episode log in the same step as the shorter session: both or neither.
    atomic_write_many(files + [(session_path(root, name), dump_state(data))])
    return episode, folded


def add(
    root: Path,
    name: str,
    role: str,
    text: str,
    now: str,
    *,
    max_rounds: int,
    summarizer: str | None,
    timeout: float,
    limit: int,
) -> dict:
    """Add a turn, all in one step (the caller holds the root lock). Returns what happened."""
    check_turn(role, text)
    data, warning = load_for_write(root, name)
    data["turns"].append({"role": role, "text": text, "time": now})
    data["updated"] = now
    n = to_fold(data["turns"], max_rounds)
    summary, why = (
        summarize(summarizer, timeout, data.get("summary", ""), data["turns"][:n], limit, root) if n else ("", None)
    )
    episode, folded = fold(root, name, data, n, summary, now)
    return result(name, data, folded, episode, warning, why)


def result(name: str, data: dict, folded: list, episode: str | None, *warnings) -> dict:
    return {
        "session": name,
        "turns": len(data["turns"]),
        "folded": len(folded),
        "episode": episode,
        "summary": data["summary"],
        "warning": "; ".join(w for w in warnings if w) or None,
    }


def drop(root: Path, name: str) -> None:
    """Delete a session's state file, turns and all (memcli doctor's sample session only)."""
    session_path(root, name).unlink(missing_ok=True)


def clear(root: Path, name: str, now: str) -> dict:
    """Drop the session, its turns and summary going to the episode log first (a broken file is moved aside)."""
    from . import episodes

    data, warning = load_for_write(root, name)
    path = session_path(root, name)
    episode = None
    if data["turns"] or data.get("summary"):
        blocks = ([f"Summary:\n{data['summary']}"] if data.get("summary") else []) + [
            episodes.turn_block(t) for t in data["turns"]
        ]
        episode = episodes.append(root, now, f"session {name} cleared", blocks)
    if path.exists():
        path.unlink()
    return {"session": name, "turns": len(data["turns"]), "episode": episode, "warning": warning}

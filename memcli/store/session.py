"""The session layer: recent turns plus a summary of older ones, in .memcli/sessions/<name>.json.

Beyond session.max_rounds user rounds, the oldest turns are folded into the summary
(extractive, or by a configured shell command) and appended raw to the episode log.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import UsageError
from . import episodes
from .fs import atomic_write, atomic_write_many, dump_state, read_state, state_file

ROLES = ("user", "assistant", "system", "tool")
MAX_TURN = 100_000


def session_path(root: Path, name: str) -> Path:
    return state_file(root, "sessions", name)


def load(root: Path, name: str) -> dict:
    data = read_state(session_path(root, name), "session", "move it away or run `memcli session clear`",
                      _check_shape)
    if data is None:
        return {"version": 1, "name": name, "summary": "", "turns": [], "folded": 0}
    data.setdefault("summary", "")
    data.setdefault("folded", 0)
    data["name"] = name  # the file's name decides where it is saved, not what the file says
    return data


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


def summarize(command: str | None, timeout: float, previous: str, turns: list, limit: int) -> tuple[str, str | None]:
    """(summary, warning). A failing summarizer falls back to the extractive summary."""
    if not command:
        return extractive(previous, turns, limit), None
    feed = (f"Summary so far:\n{previous}\n\n" if previous else "") + "\n".join(
        f"{t.get('role')}: {t.get('text')}" for t in turns)
    import subprocess

    try:
        p = subprocess.run(command, shell=True, input=feed.encode("utf-8"), capture_output=True, timeout=timeout)
        out = p.stdout.decode("utf-8", "replace").strip()
        if p.returncode == 0 and out:
            return out[-limit:], None
        why = f"exit {p.returncode}" if p.returncode else "no output"
    except subprocess.TimeoutExpired:
        why = f"timed out after {timeout:g}s"
    except OSError as e:
        why = str(e)
    return extractive(previous, turns, limit), f"session.summarizer failed ({why}); used the extractive summary"


def add(root: Path, name: str, role: str, text: str, now: str, *, max_rounds: int, summarizer: str | None,
        timeout: float, limit: int) -> dict:
    """Add a turn (the caller holds the root lock). Returns what happened."""
    if role not in ROLES:
        raise UsageError(f"ROLE must be one of {', '.join(ROLES)}, got {role!r}")
    if not text.strip():
        raise UsageError("the turn text is empty")
    if len(text) > MAX_TURN:
        raise UsageError(f"the turn has {len(text)} characters; the limit is {MAX_TURN}")
    data = load(root, name)
    data["turns"].append({"role": role, "text": text, "time": now})
    data["updated"] = now
    starts = _rounds(data["turns"])
    folded, warning, episode, log = [], None, None, None
    user_rounds = [i for i in starts if data["turns"][i].get("role") == "user"]
    if len(user_rounds) > max_rounds:
        cut = user_rounds[len(user_rounds) - max_rounds]
        folded, data["turns"] = data["turns"][:cut], data["turns"][cut:]
        log = episodes.appended(root, now, f"session {name}: {len(folded)} turns folded into the summary",
                                [episodes.turn_block(t) for t in folded])
        episode = episodes.rel(log[0])
        data["summary"], warning = summarize(summarizer, timeout, data.get("summary", ""), folded, limit)
        data["folded"] = int(data.get("folded", 0)) + len(folded)
    # The folded turns reach the episode log in the same step as the shorter session: both or neither.
    atomic_write_many(([log] if log else []) + [(session_path(root, name), dump_state(data))])
    return {"session": name, "turns": len(data["turns"]), "folded": len(folded), "episode": episode,
            "summary": data["summary"], "warning": warning}


def clear(root: Path, name: str, now: str) -> dict:
    """Drop the session; its turns and summary go to the episode log first."""
    data = load(root, name)
    path = session_path(root, name)
    episode = None
    if data["turns"] or data.get("summary"):
        blocks = ([f"Summary:\n{data['summary']}"] if data.get("summary") else []) + \
                 [episodes.turn_block(t) for t in data["turns"]]
        episode = episodes.append(root, now, f"session {name} cleared", blocks)
    if path.exists():
        path.unlink()
    return {"session": name, "turns": len(data["turns"]), "episode": episode}

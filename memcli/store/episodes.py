"""The lossless episodic log: memory/episodes/YYYY-MM-DD.md, appended to, never rewritten in place.
Its grammar, for its writer, its readers and the git merge: a title line, then dated sections
(``SECTION``: ``## <UTC time> <heading>``) of blocks, a turn being ``**role** (time): text``
(``TURN``); a line git would read as a conflict marker is indented by one space."""

from __future__ import annotations

import re

import json
from pathlib import Path

from . import markers
from .fs import MAX_FILE_BYTES, atomic_write, read_text, safe_join
from .layout import EPISODES, episode_rel

MAX_LOG_BYTES = 5 * MAX_FILE_BYTES  # a day's log past this goes on in YYYY-MM-DD-2.md, -3, ...


def episode_path(root: Path, day: str) -> Path:
    return safe_join(root, *EPISODES.split("/"), f"{day}.md")


def append(root: Path, now: str, heading: str, blocks: list[str]) -> str:
    """Append one dated section; the caller holds the root lock. Returns the file's relative path."""
    path, text = appended(root, now, heading, blocks)
    atomic_write(path, text)
    return rel(path)


def appended(root: Path, now: str, heading: str, blocks: list[str]) -> tuple[Path, str]:
    """The episode file and its text with one more section (for atomic_write_many)."""
    day = now[:10]
    section = f"\n## {now} {heading}\n\n" + "\n\n".join(b.rstrip("\n") for b in blocks if b.strip()) + "\n"
    path = episode_path(root, day)
    n = 1
    # A day's log that is full (or too big to read) is left as it is: the day goes on in the next part.
    while path.exists() and path.stat().st_size + len(section.encode("utf-8")) > MAX_LOG_BYTES:
        n += 1
        path = episode_path(root, f"{day}-{n}")
    old = (
        read_text(path, rel(path)) if path.exists() else f"# Episodes {day}" + (f" (part {n})" if n > 1 else "") + "\n"
    )
    # a turn that quotes a git conflict must not make the log one: such lines are indented
    return path, old.rstrip("\n") + "\n" + markers.escape(section, markers.size_for(path))


def rel(path: Path) -> str:
    return episode_rel(path.stem)


# ---------------------------------------------------------------- the grammar

SECTION = r"^## (\d{4}-\d{2}-\d{2}T\S+) ?(.*)$"  # a section's heading: its time (UTC), then its heading
TURN = r"^\*\*(user|assistant|system|tool)\*\* \(([^()]*)\): ?(.*)$"  # a turn: role, time, its text
_SECTION, _TURN = re.compile(SECTION), re.compile(TURN)
_BLOCK = re.compile(r"(?m)^(?=## |\*\*\w+\*\* \()")  # where a section or a turn starts
_USER = re.compile(r"\*\*user\*\* \([^)]*\): ")


def turn_block(turn: dict) -> str:
    return f"**{turn.get('role', '?')}** ({turn.get('time', '')}): {turn.get('text', '')}"


def scope_text(data: dict) -> str:
    """A scope as the log keeps it: its task, keys, writers and collisions (later lines indented)."""

    def said(value) -> str:
        return (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)).replace("\n", "\n  ")

    lines = [f"Task: {said(data.get('task') or '-')} (started {data.get('started')})"]
    for key, v in data.get("keys", {}).items():
        lines.append(f"- {key}: {said(v.get('value'))} ({', '.join(v.get('writers') or [v.get('agent')])})")
    for c in data.get("collisions", []):
        forced = " (forced)" if c["forced"] else ""
        lines.append(f"- collision on {c['key']}: {c['agent']} wrote over {c['owner']}{forced}")
    return "\n".join(lines)


# ---------------------------------------------------------------- reading the log back


def sections(text: str) -> list[dict]:
    """The dated sections of an episode file, each {"time", "heading", "text", "turns"}, a turn
    being {"role", "time", "text"} (its text verbatim, every line of it)."""
    out: list[dict] = []
    for sec in split(text)[1]:
        head, _, body = sec.partition("\n")
        m = _SECTION.match(head)
        assert m is not None  # split starts each section at its heading
        turns: list[dict] = []
        blank = True
        for ln in body.split("\n"):
            said = _TURN.match(ln) if blank else None
            if said:
                turns.append({"role": said.group(1), "time": said.group(2), "lines": [said.group(3)]})
            elif turns:
                turns[-1]["lines"].append(ln)
            blank = not ln.strip()
        for t in turns:
            t["text"] = "\n".join(t.pop("lines")).strip("\n")
        out.append({"time": m.group(1), "heading": m.group(2), "text": body.strip("\n"), "turns": turns})
    return out


def split(text: str) -> tuple[str, list]:
    """(the text before the first section, each section's text from its heading), as LF, stripped."""
    pre: list = []
    secs: list = []
    for ln in text.replace("\r\n", "\n").split("\n"):
        if _SECTION.match(ln):
            secs.append([ln])
        elif secs:
            secs[-1].append(ln)
        else:
            pre.append(ln)
    return "\n".join(pre).strip("\n"), ["\n".join(s).strip("\n") for s in secs]


def blocks(text: str) -> list[str]:
    """An episode file cut where each section or turn starts (joined, they are the text)."""
    return _BLOCK.split(text)


def without_user_turns(text: str, drop) -> str:
    """An episode file without the user turns whose text ``drop(text)`` picks."""
    return "".join(p for p in blocks(text) if not ((m := _USER.match(p)) and drop(p[m.end() :])))

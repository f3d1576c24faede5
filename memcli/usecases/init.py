"""Creating a memory root: `memcli init`, `Memory.init` and the templates it writes."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import UnsafePathError, UsageError
from ..model import Result
from ..store import layout
from ..store.fs import atomic_write, inside, state_dir
from ..paths import IGNORED
from ..store.templates import example_files, template_text


def _enclosing_root(path: Path) -> Path | None:
    """The root whose memory/ folder holds path (or is path), if any."""
    p = path.resolve()
    for folder in (p, *p.parents):
        if folder.name == layout.MEMORY and layout.is_root(folder.parent):
            return folder.parent
    return None


def init_root(
    path: str | os.PathLike,
    example: bool = False,
    *,
    git: bool = False,
    command: str | None = None,
    now: str | None = None,
) -> Result:
    """Create a memory root; never overwrites. With example, the example memories (live on the day
    ``now``); with git, git-ready too (`memcli init --git`)."""
    root = Path(path).expanduser()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder")
    blocked = next((p for p in root.absolute().parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise UsageError(f"cannot create {root}: {blocked} is a file, not a folder")
    outer = _enclosing_root(root)
    if outer is not None:
        raise UsageError(
            f"{root} is inside the memory folder of the root {outer}; a root there would be "
            "read as memories of that root. Choose a folder outside it"
        )
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create {root}: {e.strerror or e}") from None
    root = root.resolve()
    created, kept = [], []

    def put(rel: str, text: str):
        p = root / rel
        if p.exists() or p.is_symlink():
            kept.append(rel)
            return
        atomic_write(p, text)
        created.append(rel)

    mem = root / layout.MEMORY
    if mem.is_symlink() and not inside(root, mem):
        raise UnsafePathError("memory/ leads outside the root (a symlink?); refusing to use it")
    for d in (layout.MEMORY, layout.EPISODES, layout.ARCHIVE):
        if not (root / d).exists():
            (root / d).mkdir(parents=True)
            created.append(d + "/")
    put(layout.CONFIG, template_text("memcli.yaml"))
    gi = root / layout.GITIGNORE
    if gi.exists():
        text = gi.read_text(encoding="utf-8", errors="replace")
        missing = [line for line, pattern in IGNORED if not re.search(pattern, text, re.M)]
        if missing:
            atomic_write(gi, text + ("" if text.endswith("\n") or not text else "\n") + "\n".join(missing) + "\n")
            created.append(f"{layout.GITIGNORE} (+ {', '.join(missing)})")
        else:
            kept.append(layout.GITIGNORE)
    else:
        put(layout.GITIGNORE, "".join(line + "\n" for line, _ in IGNORED))
    state_dir(root)
    added = []
    if example:
        for name, text in example_files(now):
            rel = f"{layout.MEMORY}/{name}"
            if not (root / rel).exists():
                put(rel, text)
                added.append(name[:-3])
    put(layout.INDEX, template_text("MEMORY.md"))
    if added:
        from ..settings_guard import load_config
        from ..store.root import Root, root_path
        from .maintain import rebuild_index

        path = root_path(root)
        rebuild_index(Root(path, load_config(path)))
    res = Result({"root": str(root), "created": created, "kept": kept, "examples": added, "git": None})
    if git:
        from ..store.git import setup

        res["git"] = setup(root, command, init=True)
    return res

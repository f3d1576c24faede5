"""Creating a memory root: `memcli init`, `Memory.init` and the templates it writes."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import UnsafePathError, UsageError
from .store import layout
from .store.fs import atomic_write, inside, state_dir


# what a root's .gitignore holds: the local state folder and temp files left by a crashed writer
IGNORED = ((".memcli/", r"^/?\.memcli/?\s*$"), (".memcli-tmp-*", r"^/?(\*\*/)?\.memcli-tmp-\*\s*$"))


def _templates():
    """The templates: package data when installed; the checkout's templates/ when run from source."""
    from importlib.resources import files

    try:
        return files("memcli.templates")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "templates"


def template_text(name: str) -> str:
    return (_templates() / name).read_text(encoding="utf-8")


def example_files() -> list[tuple[str, str]]:
    folder = _templates() / "example"
    return sorted((p.name, p.read_text(encoding="utf-8")) for p in folder.iterdir() if p.name.endswith(".md"))


def _enclosing_root(path: Path) -> Path | None:
    """The root whose memory/ folder holds path (or is path), if any."""
    p = path.resolve()
    for folder in (p, *p.parents):
        if folder.name == layout.MEMORY and layout.is_root(folder.parent):
            return folder.parent
    return None


def init_root(path: str | os.PathLike, example: bool = False) -> dict:
    """Create a memory root; never overwrites. With example, add the example memories."""
    root = Path(path).expanduser()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder")
    blocked = next((p for p in root.absolute().parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise UsageError(f"cannot create {root}: {blocked} is a file, not a folder")
    outer = _enclosing_root(root)
    if outer is not None:
        raise UsageError(f"{root} is inside the memory folder of the root {outer}; a root there would be "
                         "read as memories of that root. Choose a folder outside it")
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
    gi = root / ".gitignore"
    if gi.exists():
        text = gi.read_text(encoding="utf-8", errors="replace")
        missing = [line for line, pattern in IGNORED if not re.search(pattern, text, re.M)]
        if missing:
            atomic_write(gi, text + ("" if text.endswith("\n") or not text else "\n") + "\n".join(missing) + "\n")
            created.append(f".gitignore (+ {', '.join(missing)})")
        else:
            kept.append(".gitignore")
    else:
        put(".gitignore", "".join(line + "\n" for line, _ in IGNORED))
    state_dir(root)
    added = []
    if example:
        for name, text in example_files():
            rel = f"{layout.MEMORY}/{name}"
            if not (root / rel).exists():
                put(rel, text)
                added.append(name[:-3])
    put(layout.INDEX, template_text("MEMORY.md"))
    if added:
        from .core import Memory

        Memory(root).rebuild_index()
    return {"root": str(root), "created": created, "kept": kept, "examples": added}

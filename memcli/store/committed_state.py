"""What git brought into ``.memcli/``: local state that came with the repository is someone
else's, and is never read (a session that answers recall, a trace that ranks MEMORY.md, a scope,
a reflection watermark, a rename journal, the root's own configuration).

Asking git on every turn would cost a process each time, so the answer is kept in the
repository's git folder (``.git/memcli/``, which git never tracks or clones), keyed by the
index file's identity: git rewrites the index whenever what it tracks changes. A root outside a
work tree costs a few ``stat`` calls; inside one, a ``stat`` of the index and a small read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import hashlib
from .layout import STATE_DIR

_memo: dict = {}  # root -> (index identity, frozenset of tracked paths)


def work_tree(path: Path) -> tuple[Path, Path] | None:
    """(the work tree's top, its git folder: a `.git` folder, or the one a `.git` file names) of
    the repository holding path, or None outside one."""
    for d in (path, *path.parents):
        dot = d / ".git"
        if dot.is_dir():
            return d, dot
        if dot.is_file():
            try:
                line = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            return (d, d / line[7:].strip()) if line.startswith("gitdir:") else None
    return None


def _identity(index: Path) -> list | None:
    try:
        st = os.stat(index)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]


def _ask_git(root: Path) -> frozenset | None:
    import subprocess

    try:
        p = subprocess.run(
            ["git", "ls-files", "-z", "--", STATE_DIR],
            cwd=root,
            capture_output=True,
            timeout=30,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except FileNotFoundError:  # no git here: nothing can have come through it
        return frozenset()
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode != 0:
        return None
    return frozenset(x for x in p.stdout.decode("utf-8", "surrogateescape").split("\0") if x)


def state_tracked(root: Path) -> frozenset | None:
    """The paths under root's ``.memcli/`` (relative to root) that git tracks: empty outside a work
    tree; None when git could not say (then every state file counts as tracked)."""
    real = os.path.realpath(root)
    tree = work_tree(Path(real))
    if tree is None:
        return frozenset()
    git_dir = tree[1]
    key = _identity(git_dir / "index")
    if key is None:
        return frozenset()  # nothing tracked yet
    memo = _memo.get(root)
    if memo is not None and memo[0] == key:
        return memo[1]
    key_of_root = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    cache = git_dir / "memcli" / f"state-tracked-{key_of_root}.json"
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("index") == key and data.get("root") == real and isinstance(data.get("paths"), list):
            listed = frozenset(x for x in data["paths"] if isinstance(x, str))
            _memo[root] = (key, listed)
            return listed
    except (OSError, ValueError, AttributeError):
        pass
    found = _ask_git(root)
    if found is None:
        return None
    if _identity(git_dir / "index") == key:  # not changed while git was asked
        _memo[root] = (key, found)
        try:  # a unique temp name in the same folder, then renamed over (git's folder: no lock needed)
            cache.parent.mkdir(exist_ok=True)
            temp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            temp.write_text(json.dumps({"index": key, "root": real, "paths": sorted(found)}) + "\n", encoding="utf-8")
            os.replace(temp, cache)
        except OSError:  # a cache that cannot be kept is asked again next time
            pass
    return found


def came_with_git(root: Path, path: Path | str) -> bool:
    """Whether git tracks this file under root's ``.memcli/`` (so it is not read). Asks only when
    the file exists."""
    p = Path(path)
    if not p.exists():
        return False
    tracked = state_tracked(Path(root))
    if tracked is None:
        return True
    try:
        rel = p.relative_to(root).as_posix()
    except ValueError:
        return False
    return rel in tracked

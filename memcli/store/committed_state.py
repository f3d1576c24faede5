"""What git brought into ``.memcli/``: local state that came with the repository is someone
else's, and is never read. The answer is kept in ``.git/memcli/``, keyed by the fingerprint of
git's index (rewritten whenever what git tracks changes): a turn costs a stat, not a git process."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .layout import STATE_DIR, file_fingerprint, work_tree

_memo: dict = {}  # root -> (index fingerprint, frozenset of tracked paths)


def _ask_git(root: Path) -> frozenset | None:
    import subprocess

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        p = subprocess.run(
            ["git", "ls-files", "-z", "--", STATE_DIR], cwd=root, capture_output=True, timeout=30, env=env
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
    key = file_fingerprint(git_dir / "index")
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
    if file_fingerprint(git_dir / "index") == key:  # not changed while git was asked
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
    """Whether git tracks this file (that exists) under root's ``.memcli/``, or a folder on its way
    there (a committed symlink, such as ``.memcli`` itself), so it is not read."""
    p = Path(path)
    if not p.exists():
        return False
    tracked = state_tracked(Path(root))
    if tracked is None:
        return True
    try:
        parts = p.relative_to(root).parts
    except ValueError:
        return False
    return any("/".join(parts[:n]) in tracked for n in range(1, len(parts) + 1))

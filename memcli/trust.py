"""What the user decided, kept outside every root: which memcli.yaml may run the commands it
names (`memcli trust`), and which roots the agent hook may use (`memcli hook allow`).

Nothing that arrives with a root — a clone, a folder an event names, an imported file — can
write here: the records live in the user's state folder, `$XDG_STATE_HOME/memcli/` (else
`~/.local/state/memcli/`), keyed by the root's real path. The same rule as git's own: a
repository's `.git/config` is never cloned, so a repository cannot configure itself.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

TRUST_DIR = "trust"
HOOK_ROOTS = "hook-roots.json"


def state_home() -> Path:
    """The user's memcli state folder: $XDG_STATE_HOME/memcli, else ~/.local/state/memcli."""
    from .xdg import home

    return Path(home("state"))


def real(root: str | os.PathLike) -> str:
    """The root's real path: the key of every record here."""
    return os.path.realpath(os.fspath(root))


def digest(path: Path) -> str | None:
    """The SHA-256 of a file's bytes, or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _write_json(path: Path, data: dict) -> None:
    from .store.fs import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ---------------------------------------------------------------- trust of a root's memcli.yaml


def _trust_file(root: str | os.PathLike) -> Path:
    return state_home() / TRUST_DIR / (hashlib.sha256(os.fsencode(real(root))).hexdigest()[:32] + ".json")


def _record(root: str | os.PathLike) -> dict:
    data = _read_json(_trust_file(root))
    return data if data.get("root") == real(root) else {}


def trusted_digest(root: str | os.PathLike) -> str | None:
    """The SHA-256 of the memcli.yaml the user trusted for this root, or None."""
    value = _record(root).get("sha256")
    return value if isinstance(value, str) else None


def record_trust(root: str | os.PathLike, sha256: str, now: str, files: dict | None = None) -> Path:
    """Remember that this root's memcli.yaml with this digest may run its commands, and the digest
    of each file in the root those commands name (None: it did not exist)."""
    path = _trust_file(root)
    _write_json(
        path, {"root": real(root), "file": "memcli.yaml", "sha256": sha256, "trusted": now, "files": files or {}}
    )
    return path


def check(root: str | os.PathLike) -> tuple[bool, dict]:
    """(memcli.yaml is the file the user trusted, {file a trusted command names: True when it
    changed since}): a command whose named file changed is not run."""
    record = _record(root)
    ok = isinstance(record.get("sha256"), str) and record["sha256"] == digest(Path(root) / "memcli.yaml")
    files = record.get("files") if ok and isinstance(record.get("files"), dict) else None
    changed = {
        rel: True for rel, d in (files or {}).items() if isinstance(rel, str) and digest(Path(real(root)) / rel) != d
    }
    return ok, changed


def named_files(root: str | os.PathLike, commands: list) -> dict:
    """{path relative to the root: SHA-256, or None when missing} of each word of the commands
    that names a file in the root (`sh tools/x.sh`, `./x.py`, `python3 tools/x.py --flag`):
    trust covers them, so a file a later pull changes does not run under the old trust.
    Commands run in the root, so a relative name is the root's file."""
    import shlex

    base = Path(real(root))
    out: dict = {}
    for command in commands:
        try:
            words = shlex.split(command or "")
        except ValueError:
            words = (command or "").split()
        for word in words:
            for part in word.split("="):  # --script=tools/x.sh
                if not part or part.startswith("-") or ("/" not in part and not (base / part).is_file()):
                    continue
                p = Path(os.path.expanduser(part))
                p = p if p.is_absolute() else base / p
                try:
                    rel = Path(os.path.realpath(p)).relative_to(base).as_posix()
                except ValueError:
                    continue  # outside the root: the user's own file, not the repository's
                if rel.startswith(".git/") or rel == ".":
                    continue
                out[rel] = digest(base / rel) if (base / rel).is_file() else None
    return out


# ---------------------------------------------------------------- roots the agent hook may use


def _hook_file() -> Path:
    return state_home() / HOOK_ROOTS


def hook_roots() -> list[str]:
    """The real paths of the roots the user allowed the hook to use, in the order allowed."""
    roots = _read_json(_hook_file()).get("roots")
    return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []


def allow_hook_root(root: str | os.PathLike) -> bool:
    """Let the hook use this root; False when it already could."""
    roots = hook_roots()
    key = real(root)
    if key in roots:
        return False
    _write_json(_hook_file(), {"version": 1, "roots": roots + [key]})
    return True


def deny_hook_root(root: str | os.PathLike) -> bool:
    """Stop the hook from using this root; False when it was not allowed."""
    roots = hook_roots()
    key = real(root)
    if key not in roots:
        return False
    _write_json(_hook_file(), {"version": 1, "roots": [r for r in roots if r != key]})
    return True


# ---------------------------------------------------------------- what git brought


def in_work_tree(root: Path) -> bool:
    """Whether a `.git` sits in root or above it (no subprocess)."""
    p = Path(real(root))
    return any((d / ".git").exists() for d in (p, *p.parents))


def tracked(root: Path, rel: str) -> bool:
    """Whether git tracks root/rel: a file that came with the repository is someone else's. Asks
    git only inside a work tree; when git cannot answer, the file counts as tracked."""
    if not in_work_tree(root):
        return False
    import subprocess

    try:
        p = subprocess.run(
            ["git", "ls-files", "--error-unmatch", "--", rel],
            cwd=real(root),
            capture_output=True,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return True
    if p.returncode == 0:
        return True
    return b"did not match" not in p.stderr and b"not a git repository" not in p.stderr

"""What the user decided, kept in the user's state folder by the root's real path (nothing that
arrives with a root can write it): which memcli.yaml may run its commands, which roots the hook uses."""

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
    """The SHA-256 of a file (through symlinks), None when unreadable, "folder" for a folder; a
    `__pycache__` file Python checks against its source counts as absent."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        return "folder"
    except OSError:
        return None
    if path.parent.name == "__pycache__" and data[4:8] != b"\x01\0\0\0":
        return None
    return hashlib.sha256(data).hexdigest()


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


def _trust_file(root: str | os.PathLike) -> Path:
    return state_home() / TRUST_DIR / (hashlib.sha256(os.fsencode(real(root))).hexdigest()[:32] + ".json")


def _record(root: str | os.PathLike) -> dict:
    data = _read_json(_trust_file(root))
    return data if data.get("root") == real(root) else {}


def record_trust(root: str | os.PathLike, sha256: str, now: str, files: dict | None = None) -> Path:
    """Record memcli.yaml's digest for this root, and that of each file its commands name (None: absent)."""
    path = _trust_file(root)
    _write_json(
        path, {"root": real(root), "file": "memcli.yaml", "sha256": sha256, "trusted": now, "files": files or {}}
    )
    return path


def check(root: str | os.PathLike) -> tuple[bool, dict]:
    """(memcli.yaml is the file the user trusted, {word of its commands: what `named_files` recorded})."""
    record = _record(root)
    ok = isinstance(record.get("sha256"), str) and record["sha256"] == digest(Path(root) / "memcli.yaml")
    files = record.get("files")
    return ok, files if ok and isinstance(files, dict) else {}


# Commands that run code given as text (with one of these options; "": always), or that change the
# folder the next words are read in: a line holding one cannot be analysed.
INLINE = {"sh": "c", "bash": "c", "dash": "c", "zsh": "c", "ksh": "c", "fish": "c", "python": "c", "pypy": "c"}
INLINE.update(perl="eE", ruby="e", node="ep", php="r", lua="e", env="S", eval="", awk="", gawk="", sed="")
INLINE.update(cd="", pushd="")
TEXT_OPTIONS = ("--eval", "--print", "--command", "--split-string")  # long options that give code as text
SEPARATORS = {"|", "||", "&&", ";", "&", "|&"}  # between commands; the rest redirect: a file name follows
OPERATORS = SEPARATORS | {">", ">>", "<", ">&", "<&", "&>", "&>>", ">|", "<>"}


def words(command: str) -> list:
    """The words of a shell command line that may name a file the root holds, tokenised as the
    shell does (`x.sh|cat` is two commands), with a `-m` module's files (``module_files``) and, as a
    Path, each folder Python may put first on its path (the script's; the root for `-m`: ``shadowing``).
    ValueError saying why a line cannot be analysed: an expansion or a pattern (`$`, a backtick,
    `*?[{`), a subshell or text fed as input, an environment setting, code given as text."""
    import re
    import shlex

    bad = next((c for c in "$`*?[{" if c in command), None)
    if bad:
        raise ValueError(f"'{bad}' (what it expands to is decided when it runs)")
    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split, lex.commenters = True, ""
    try:
        tokens = list(lex)
    except ValueError:
        raise ValueError("an unclosed quote") from None
    out: list = []
    interpreter, module, script = "", False, False
    for t in tokens:
        if t in OPERATORS or (t and not t.strip("();<>|&")):
            if t not in OPERATORS:
                raise ValueError(f"'{t}' (a subshell, or text fed to a command as input)")
            interpreter, script = ("", False) if t in SEPARATORS else (interpreter, script)
            continue
        if module:
            out += module_files(t)
            module = False
            continue
        name = re.sub(r"[\d.]*$", "", os.path.basename(t))
        if name in INLINE:
            if not INLINE[name]:
                raise ValueError(f"'{t}'")
            interpreter, script = name, name in ("python", "pypy")
        elif interpreter and t[:1] == "-":
            flags = "" if t[1:2] == "-" else t[1:]  # short options; a long one's value is a word below
            if set(flags) & set(INLINE[interpreter]) or t.split("=")[0] in TEXT_OPTIONS:
                raise ValueError(f"'{interpreter} {t.split('=')[0]}' (code given as text)")
            if interpreter in ("python", "pypy") and "m" in flags:
                rest = flags[flags.index("m") + 1 :]
                out += [Path("."), *(module_files(rest) if rest else [])]
                module, script = not rest, False
            if flags:
                continue
        if re.match(r"[A-Za-z_]\w*=", t):
            raise ValueError(f"'{t}' (an environment setting changes what runs)")
        if script and name not in INLINE:  # a script, or its argument: its folder, to be safe
            out.append(Path(os.path.dirname(t) or "."))
        out += [part for part in t.split("=") if part and not part.startswith("-")]  # --script=tools/x.sh
    return out


def module_files(name: str) -> list:
    """The files in the root `python -m NAME` may run: its packages' `__init__`, the module, `__main__`."""
    from importlib.machinery import all_suffixes
    from importlib.util import cache_from_source

    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        raise ValueError(f"'-m {name}' (not a module name)")
    stems = ["/".join(parts[:i]) + "/__init__" for i in range(1, len(parts) + 1)]
    stems += ["/".join(parts), "/".join(parts) + "/__main__"]
    return [s + x for s in stems for x in all_suffixes()] + [cache_from_source(s + ".py") for s in stems]


def named_files(root: str | os.PathLike, commands: list) -> dict:
    """{word of the commands: ``digest`` of the file it names in the root}; ValueError when a command
    cannot be analysed (``words``) or names a folder."""
    base = Path(real(root))
    out: dict = {}
    for command in commands:
        for word in words(command or ""):
            if isinstance(word, Path):
                out.update((w, digest(base / w)) for w in shadowing(base, word))
                continue
            out[word] = digest(base / os.path.expanduser(word))
            if out[word] == "folder":
                raise ValueError(f"'{word}' (a folder: what runs from it cannot be recorded)")
    return out


def shadowing(base: Path, folder: Path) -> list:
    """The files in a folder Python imports from first that would run instead of a standard module
    (`json.py` beside the script): one added later changes what the command runs."""
    import sys
    from importlib.machinery import all_suffixes

    try:
        names = sorted(os.listdir(base / folder))
    except OSError:
        return []
    out = []
    for n in names:
        stem, dot, ext = n.partition(".")
        if stem in sys.stdlib_module_names and (dot + ext in all_suffixes() or not dot):
            out.append((folder / n).as_posix() + ("" if dot else "/__init__.py"))
    return out


def _hook_file() -> Path:
    return state_home() / HOOK_ROOTS


def hook_roots() -> list[str]:
    """The real paths of the roots the user allowed the hook to use, in the order allowed."""
    roots = _read_json(_hook_file()).get("roots")
    return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []


def allow_hook_root(root: str | os.PathLike) -> bool:
    """Let the hook use this root; False when it already could."""
    return _hook_root(root, allow=True)


def deny_hook_root(root: str | os.PathLike) -> bool:
    """Stop the hook from using this root; False when it was not allowed."""
    return _hook_root(root, allow=False)


def _hook_root(root: str | os.PathLike, allow: bool) -> bool:
    roots, key = hook_roots(), real(root)
    if (key in roots) == allow:
        return False
    _write_json(_hook_file(), {"version": 1, "roots": roots + [key] if allow else [r for r in roots if r != key]})
    return True

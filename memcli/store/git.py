"""The git repository a root lives in: running git, making the root git-ready (`setup`: the
.gitignore and .gitattributes lines, the merge drivers in the clone's config), checking it
(`check`, for the heartbeat), and what `sync` reads of it (``Repo``, ``status``)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from ..errors import MemcliError, UsageError
from . import layout

DRIVERS = {
    "memcli-index": ("memcli: MEMORY.md, rebuilt from both sides", "index %O %A %B %P"),
    "memcli-detail": ("memcli: a memory, merged key by key", "detail %O %A %B %L %P"),
    "memcli-episode": ("memcli: an episode log, both sides in time order", "episode %O %A %B %P"),
}
ATTRIBUTES = (
    f"{layout.INDEX} merge=memcli-index",
    f"{layout.MEMORY}/*.md merge=memcli-detail",
    f"{layout.ARCHIVE}/*.md merge=memcli-detail",
    f"{layout.EPISODES}/*.md merge=memcli-episode",
    f"{layout.INBOX}/*.md merge=memcli-detail",
    f"{layout.INBOX_ARCHIVE}/*.md merge=memcli-detail",
)
# a driver an older version registered: `python -m memcli…` without -I (git runs it in the work tree)
UNISOLATED = re.compile(r"^(?!.*\s-\w*I\w*\s).*(?:^|\s)-m\s+memcli\b")
# memcli's own files in a root: all that sync scans, stages and commits. Never .memcli/ (local
# state, and a trust step's place once), never memcli's temp files, never anything else in the
# repository (unrelated work, staged or not, stays as it is).
OWN = layout.OWN
# (an exclude pathspec that names an ignored folder itself makes `git add` fail: match its files)
_EXCLUDE = (f":(exclude,glob)**/{layout.STATE_DIR}/**/*", f":(exclude,glob)**/{layout.TMP_PREFIX}*")
PUSH_TRIES = 6


class GitError(MemcliError):
    """git is missing, failed, or the root is not in a repository (exit 3)."""

    exit_code = 3
    code = "git"


def git(
    cwd: Path,
    *args: str,
    check: bool = True,
    config: dict | None = None,
    env: dict | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess:
    """git ARGS run in cwd (with `-c KEY=VALUE` for each of config, and env added), never prompting."""
    cmd = ["git"]
    for k, v in (config or {}).items():
        cmd += ["-c", f"{k}={v}"]
    cmd += args
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, encoding="utf-8", errors="replace", input=input, env=env)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)")
    if check and p.returncode != 0:
        raise GitError(f"git {args[0]} failed: {last_line(p.stderr or p.stdout)}")
    return p


def last_line(text: str) -> str:
    """The last two lines git said, for a one-line error."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return "; ".join(lines[-2:]) if lines else "no output"


def toplevel(root: Path) -> Path | None:
    """The repository's work tree holding root, or None (no subprocess when no .git is above root)."""
    p = root.resolve()
    for d in (p, *p.parents):
        if (d / ".git").exists():
            break
    else:
        return None
    r = git(p, "rev-parse", "--show-toplevel", check=False)
    return Path(r.stdout.strip()).resolve() if r.returncode == 0 and r.stdout.strip() else None


def driver_command(command: str | None = None) -> str:
    """How git starts a driver: this interpreter by its absolute path, isolated (`-I`: git runs it
    in the work tree, where a `memcli/` or `json.py` of the repository must not be imported), or
    `COMMAND merge` (`--command memcli`: the console script, by its absolute path when PATH finds it)."""
    if not command:
        from ..procs import driver_python

        return driver_python("memcli.gitmerge")
    import shutil

    words = shlex.split(command)
    found = shutil.which(words[0]) if words and os.sep not in words[0] else None
    if found:
        command = " ".join([shlex.quote(os.path.abspath(found)), *(shlex.quote(w) for w in words[1:])])
    return f"{command} merge"


def driver_config(command: str | None = None) -> dict:
    cmd = driver_command(command)
    out = {}
    for name, (label, args) in DRIVERS.items():
        out[f"merge.{name}.name"] = label
        out[f"merge.{name}.driver"] = f"{cmd} {args}"
    return out


def _add_lines(path: Path, wanted, header: str) -> list:
    from .fs import atomic_write

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    have = {ln.strip() for ln in text.splitlines()}
    missing = [w for w in wanted if w not in have and "/" + w not in have]
    if missing:
        sep = "" if not text or text.endswith("\n") else "\n"
        block = (f"{header}\n" if header not in have else "") + "\n".join(missing) + "\n"
        atomic_write(path, text + sep + block)
    return missing


def setup(root: Path, command: str | None = None, init: bool = False) -> dict:
    """Make root git-ready: .gitignore, .gitattributes, drivers in the repository's config."""
    root = Path(root).resolve()
    top = toplevel(root)
    created_repo = False
    if top is None:
        if not init:
            raise UsageError(
                f"{root} is not in a git repository: run `git init` there "
                "(or `memcli init --git`), or clone the shared memory first"
            )
        git(root, "init", "-q")
        created_repo, top = True, root
    ignores = [line for line, _ in layout.IGNORED]
    ignored = _add_lines(root / layout.GITIGNORE, ignores, "# memcli: local state and temp files")
    attributes = _add_lines(root / layout.GITATTRIBUTES, ATTRIBUTES, "# memcli merge drivers (memcli git setup)")
    config = driver_config(command)
    for k, v in config.items():
        git(top, "config", "--local", k, v)
    return {
        "root": str(root),
        "repository": str(top),
        "created_repository": created_repo,
        "gitignore_added": ignored,
        "gitattributes_added": attributes,
        "drivers": {k: v for k, v in config.items() if k.endswith(".driver")},
    }


def check(root: Path) -> list:
    """Findings for a root in a git repository: merge drivers not registered or not named, .memcli/ tracked."""
    from ..model import Finding

    root = Path(root).resolve()
    top = toplevel(root)
    if top is None:
        return []
    out: list = []

    def fault(code: str, severity: str, file: str, message: str, fix: str) -> None:
        out.append(Finding(code, severity, file, None, message, fix))

    setup = f"run `memcli --root {shlex.quote(str(root))} git setup`"
    state = tracked_state(root)
    if state:
        message = (
            f"git tracks {len(state)} file(s) under .memcli/ ({', '.join(state[:3])}), local state that must "
            "never travel: nothing tracked there is read (a session, the trace, a scope, the configuration), "
            "and sync never commits anything there"
        )
        fix = "`git rm -r --cached .memcli`, then commit (the files stay on disk)"
        fault("state-tracked", "warning", ".memcli/", message, fix)
    try:
        text = (root / layout.GITATTRIBUTES).read_text(encoding="utf-8")
    except OSError:
        text = ""
    have_attr = {ln.strip() for ln in text.splitlines()}
    lost = [a for a in ATTRIBUTES if a not in have_attr]
    # A root whose .gitattributes names none of the drivers has not opted into sharing through
    # git (it may only sit inside a larger repository): that is said as info, never a failure.
    severity = "warning" if len(lost) < len(ATTRIBUTES) else "info"
    r = git(top, "config", "--get-regexp", r"^merge\.memcli-", check=False)
    registered = dict((ln.split(" ", 1) + [""])[:2] for ln in r.stdout.splitlines())
    missing = [n for n in DRIVERS if f"merge.{n}.driver" not in registered]
    open_path = [n for n in DRIVERS if UNISOLATED.search(registered.get(f"merge.{n}.driver", ""))]
    if open_path:
        message = (
            f"memcli's merge drivers ({', '.join(open_path)}) start Python without -I: git runs them in the "
            "work tree, so a memcli/ package or a json.py the repository carries would run"
        )
        fault("git-driver-unisolated", "warning", ".git/config", message, f"{setup} to register them isolated")
    if missing:
        message = (
            f"memcli's merge drivers are not registered in this clone ({', '.join(missing)}); "
            "git would merge MEMORY.md and memories line by line and leave conflicts"
        )
        fix = f"{setup} (git does not copy config into clones)"
        fault("git-drivers-missing", severity, ".git/config", message, fix)
    out += foreign_attributes(root, top)
    if lost:
        message = f".gitattributes does not name memcli's merge drivers for {', '.join(a.split()[0] for a in lost)}"
        fix = "run `memcli git setup`, then commit .gitattributes"
        fault("git-attributes-missing", severity, ".gitattributes", message, fix)
    return out


def foreign_attributes(root: Path, top: Path) -> list:
    """Findings for each line of the root's and the repository's .gitattributes that sends a file
    memcli does not keep to its merge drivers (`app.py merge=memcli-index`)."""
    from ..model import Finding

    own = {tuple(a.split()) for a in ATTRIBUTES}
    out = []
    for folder in dict.fromkeys((root, top)):
        prefix = "" if folder == root else root.relative_to(top).as_posix() + "/"
        where = os.path.relpath(folder / layout.GITATTRIBUTES, root)
        try:
            lines = (folder / layout.GITATTRIBUTES).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for n, line in enumerate(lines, 1):
            words = line.split()
            pattern = words[0].lstrip("/").removeprefix(prefix) if words else ""
            drivers = [w for w in words[1:] if w.startswith("merge=memcli-")]
            if drivers and not pattern.startswith("#") and any((pattern, d) not in own for d in drivers):
                message = (
                    f"`{line.strip()}` sends files memcli does not keep to its merge driver (it merges only "
                    "MEMORY.md, memory/**/*.md and the episode logs, and leaves any other file to git as a conflict)"
                )
                fix = "remove the line and commit .gitattributes (`memcli git setup` writes memcli's own lines)"
                out.append(Finding("git-attributes-foreign", "warning", where, n, message, fix))
    return out


# ---------------------------------------------------------------- sync


class Repo:
    """The git repository holding a root, as sync sees it: its work tree, settings and state."""

    def __init__(self, root: Path, command: str | None):
        self.root = root
        r = git(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False)
        lines = r.stdout.splitlines()
        if r.returncode != 0 or len(lines) < 2:
            raise GitError(
                f"{root} is not in a git repository (run `memcli git setup` after `git init`, "
                "or clone the shared memory)"
            )
        self.top, self.git_dir = Path(lines[0]).resolve(), Path(lines[1])
        self.settings = {}
        for item in git(root, "config", "--list", "-z", check=False).stdout.split("\0"):
            key, _, value = item.partition("\n")
            self.settings[key] = value  # git lists system, global, then local: the last one wins
        self.config = driver_config(command)
        if not self.settings.get("user.email"):
            import socket

            self.config["user.name"] = "memcli"
            self.config["user.email"] = f"memcli@{socket.gethostname() or 'localhost'}"

    def run(self, *args, check=True):
        return git(self.root, *args, check=check, config=self.config)

    def run_paths(self, *args, paths: list, check=True):
        """git ARGS with these paths (relative to the work tree's top, taken literally) as its pathspec."""
        return git(
            self.top,
            *args,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            check=check,
            config=self.config,
            env={"GIT_LITERAL_PATHSPECS": "1"},
            input="\0".join(paths),
        )

    def stages(self) -> dict:
        """path (relative to the root) -> {stage: object id} of every unmerged path."""
        out: dict = {}
        for item in git(self.top, "ls-files", "-u", "-z").stdout.split("\0"):
            meta, _, path = item.partition("\t")
            if not path:
                continue
            _, oid, stage = meta.split(" ")
            rel = os.path.relpath(self.top / path, self.root).replace(os.sep, "/")
            out.setdefault(rel, {})[int(stage)] = oid
        return out

    def staged_elsewhere(self) -> list:
        """Paths staged in the index that differ from HEAD (work that is not sync's)."""
        if not self.has_head():
            return []
        out = git(self.top, "diff", "--cached", "--name-only", "-z").stdout
        return [p for p in out.split("\0") if p]

    def branch(self) -> str:
        r = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        if r.returncode != 0:
            raise GitError("HEAD is detached: check out a branch before syncing")
        return r.stdout.strip()

    def remote(self, branch: str) -> tuple[str | None, str]:
        name = self.settings.get(f"branch.{branch}.remote", "")
        m = self.settings.get(f"branch.{branch}.merge", "")
        upstream = m.removeprefix("refs/heads/") if m else branch
        if not name:
            remotes = sorted(k[7:-4] for k in self.settings if k.startswith("remote.") and k.endswith(".url"))
            name = "origin" if "origin" in remotes else (remotes[0] if len(remotes) == 1 else "")
        return (name or None), upstream

    def contains(self, commit: str) -> bool:
        """HEAD already holds commit (equal to it, or a descendant)."""
        head = self.ref("HEAD")
        if head is None:
            return False
        return head == commit or self.run("merge-base", "--is-ancestor", commit, head, check=False).returncode == 0

    def has_head(self) -> bool:
        return self.run("rev-parse", "--verify", "--quiet", "HEAD", check=False).returncode == 0

    def ref(self, ref: str) -> str | None:
        r = self.run("rev-parse", "--verify", "--quiet", ref, check=False)
        return r.stdout.strip() or None if r.returncode == 0 else None

    def merging(self) -> bool:
        return (self.git_dir / "MERGE_HEAD").exists()

    def unmerged(self) -> list:
        out = git(self.top, "diff", "--name-only", "--diff-filter=U", "-z").stdout
        return sorted({os.path.relpath(self.top / p, self.root).replace(os.sep, "/") for p in out.split("\0") if p})


def status(repo: "Repo", *pathspec: str) -> list:
    """(status, path from the work tree's top, path from the root) of each changed or new file."""
    out = repo.run(
        "status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", *pathspec, *_EXCLUDE
    ).stdout
    found = []
    for item in out.split("\0"):
        if len(item) < 4:
            continue
        path = item[3:]
        found.append((item[:2], path, os.path.relpath(repo.top / path, repo.root).replace(os.sep, "/")))
    return found


def committed_bytes(path: Path) -> bytes:
    """What git would commit for path: a symlink's target name (never what it leads to), else its bytes."""
    if path.is_symlink():
        return os.fsencode(os.readlink(path))
    return path.read_bytes()


def tracked_state(root: Path) -> list:
    """Files under the root's .memcli/ that git tracks (someone force-added them), sorted."""
    from .committed_state import state_tracked

    return sorted(state_tracked(root) or ())

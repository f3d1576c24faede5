"""Sharing a root through git: make it git-ready (`setup`), check it (`check`), and `sync` it
(commit the root's changes, merge the remote's with memcli's drivers, push)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from .errors import MemcliError, UsageError
from .initroot import IGNORED

DRIVERS = {
    "memcli-index": ("memcli: MEMORY.md, rebuilt from both sides", "index %O %A %B %P"),
    "memcli-detail": ("memcli: a memory, merged key by key", "detail %O %A %B %L %P"),
    "memcli-episode": ("memcli: an episode log, both sides in time order", "episode %O %A %B %P"),
}
ATTRIBUTES = (
    "MEMORY.md merge=memcli-index",
    "memory/*.md merge=memcli-detail",
    "memory/archive/*.md merge=memcli-detail",
    "memory/episodes/*.md merge=memcli-episode",
    "memory/inbox/*.md merge=memcli-detail",
    "memory/inbox/archive/*.md merge=memcli-detail",
)
IGNORES = tuple(line for line, _ in IGNORED)  # what `init` writes into .gitignore
# memcli's own files in a root: all that sync scans, stages and commits. Never .memcli/ (local
# state, and a trust step's place once), never memcli's temp files, never anything else in the
# repository (unrelated work, staged or not, stays as it is).
OWN = ("MEMORY.md", "memory", "memcli.yaml", ".gitignore", ".gitattributes")
# (an exclude pathspec that names an ignored folder itself makes `git add` fail: match its files)
_EXCLUDE = (":(exclude,glob)**/.memcli/**/*", ":(exclude,glob)**/.memcli-tmp-*")
PUSH_TRIES = 6


class GitError(MemcliError):
    """git is missing, failed, or the root is not in a repository (exit 3)."""

    exit_code = 3
    code = "git"


def git(cwd: Path, *args: str, check: bool = True, config: dict | None = None, env: dict | None = None,
        input: str | None = None) -> subprocess.CompletedProcess:
    cmd = ["git"]
    for k, v in (config or {}).items():
        cmd += ["-c", f"{k}={v}"]
    cmd += list(args)
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="replace",
                           input=input,
                           env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})})
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)")
    if check and p.returncode != 0:
        raise GitError(f"git {args[0]} failed: {_last(p.stderr or p.stdout)}")
    return p


def _last(text: str) -> str:
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
    """How git starts a driver: this interpreter's absolute path (a venv need not be on PATH, and
    `-m memcli.gitmerge` starts without the command line's framework), or `COMMAND merge`
    (e.g. `--command memcli` for the console script on PATH)."""
    return f"{command} merge" if command else f"{shlex.quote(sys.executable)} -m memcli.gitmerge"


def driver_config(command: str | None = None) -> dict:
    cmd = driver_command(command)
    out = {}
    for name, (label, args) in DRIVERS.items():
        out[f"merge.{name}.name"] = label
        out[f"merge.{name}.driver"] = f"{cmd} {args}"
    return out


def _add_lines(path: Path, wanted, header: str) -> list:
    from .store.fs import atomic_write

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    have = {ln.strip() for ln in text.splitlines()}
    missing = [w for w in wanted if w not in have and "/" + w not in have]
    if missing:
        sep = "" if not text or text.endswith("\n") else "\n"
        block = (f"{header}\n" if header not in have else "") + "\n".join(missing) + "\n"
        atomic_write(path, text + sep + block)
    return missing


def ensure_gitignore(root: Path) -> list:
    """Add the state folder and memcli's temp files to root/.gitignore; the lines added."""
    return _add_lines(root / ".gitignore", IGNORES, "# memcli: local state and temp files")


def setup(root: Path, command: str | None = None, init: bool = False) -> dict:
    """Make root git-ready: .gitignore, .gitattributes, drivers in the repository's config."""
    root = Path(root).resolve()
    top = toplevel(root)
    created_repo = False
    if top is None:
        if not init:
            raise UsageError(f"{root} is not in a git repository: run `git init` there "
                             "(or `memcli init --git`), or clone the shared memory first")
        git(root, "init", "-q")
        created_repo, top = True, root
    ignored = ensure_gitignore(root)
    attributes = _add_lines(root / ".gitattributes", ATTRIBUTES, "# memcli merge drivers (memcli git setup)")
    config = driver_config(command)
    for k, v in config.items():
        git(top, "config", "--local", k, v)
    return {"root": str(root), "repository": str(top), "created_repository": created_repo,
            "gitignore_added": ignored, "gitattributes_added": attributes,
            "drivers": {k: v for k, v in config.items() if k.endswith(".driver")}}


def check(root: Path) -> list:
    """Findings for a root in a git repository whose merge drivers are not registered or not
    named in .gitattributes, or whose .memcli/ git tracks; [] elsewhere."""
    from .model import Finding

    root = Path(root).resolve()
    top = toplevel(root)
    if top is None:
        return []
    out = []
    state = tracked_state(root)
    if state:
        out.append(Finding("state-tracked", "warning", ".memcli/", None,
                           f"git tracks {len(state)} file(s) under .memcli/ ({', '.join(state[:3])}), local state "
                           "that must never travel: a tracked .memcli/config.yaml is not read, and sync never "
                           "commits anything there",
                           "`git rm -r --cached .memcli`, then commit (the files stay on disk)"))
    try:
        text = (root / ".gitattributes").read_text(encoding="utf-8")
    except OSError:
        text = ""
    have_attr = {ln.strip() for ln in text.splitlines()}
    lost = [a for a in ATTRIBUTES if a not in have_attr]
    # A root whose .gitattributes names none of the drivers has not opted into sharing through
    # git (it may only sit inside a larger repository): that is said as info, never a failure.
    opted_in = len(lost) < len(ATTRIBUTES)
    severity = "warning" if opted_in else "info"
    r = git(top, "config", "--get-regexp", r"^merge\.memcli-", check=False)
    have = {ln.split(" ", 1)[0] for ln in r.stdout.splitlines()}
    missing = [n for n in DRIVERS if f"merge.{n}.driver" not in have]
    if missing:
        out.append(Finding("git-drivers-missing", severity, ".git/config", None,
                    f"memcli's merge drivers are not registered in this clone ({', '.join(missing)}); "
                    "git would merge MEMORY.md and memories line by line and leave conflicts",
                    f"run `memcli --root {shlex.quote(str(root))} git setup` (git does not copy config into clones)"))
    if lost:
        out.append(Finding("git-attributes-missing", severity, ".gitattributes", None,
                    f".gitattributes does not name memcli's merge drivers for {', '.join(a.split()[0] for a in lost)}",
                    "run `memcli git setup`, then commit .gitattributes"))
    return out


# ---------------------------------------------------------------- sync


class _Repo:
    def __init__(self, root: Path, command: str | None):
        self.root = root
        r = git(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False)
        lines = r.stdout.splitlines()
        if r.returncode != 0 or len(lines) < 2:
            raise GitError(f"{root} is not in a git repository (run `memcli git setup` after `git init`, "
                           "or clone the shared memory)")
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
        return git(self.top, *args, "--pathspec-from-file=-", "--pathspec-file-nul", check=check,
                   config=self.config, env={"GIT_LITERAL_PATHSPECS": "1"}, input="\0".join(paths))

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


def _message(changes: list) -> str:
    """What the commit holds, in the domain's words."""
    import socket

    groups: dict = {"remembered": [], "updated": [], "forgot": [], "episodes": [], "archive": [], "inbox": [],
                    "other": []}
    for status, _, path in changes:
        if path.startswith("memory/episodes/"):
            groups["episodes"].append(Path(path).stem)
        elif path.startswith("memory/inbox/"):
            groups["inbox"].append(Path(path).stem)
        elif path.startswith("memory/archive/"):
            groups["archive"].append(Path(path).stem)
        elif path.startswith("memory/") and path.endswith(".md"):
            key = {"?": "remembered", "A": "remembered", "D": "forgot"}.get(status.strip()[:1], "updated")
            groups[key].append(Path(path).stem)
        elif path != "MEMORY.md":
            groups["other"].append(path)
    parts = []
    for key, words in groups.items():
        if words:
            shown = ", ".join(words[:4]) + (f" and {len(words) - 4} more" if len(words) > 4 else "")
            label = {"episodes": "episodes", "archive": "archived", "inbox": "proposals", "other": "files"}.get(key, key)
            parts.append(f"{label} {shown}")
    host = socket.gethostname() or "this machine"
    return f"memcli sync from {host}: " + ("; ".join(parts) if parts else "index")


def _status(repo: _Repo, *pathspec: str) -> list:
    """(status, path from the work tree's top, path from the root) of each changed or new file."""
    out = repo.run("status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", *pathspec,
                   *_EXCLUDE).stdout
    found = []
    for item in out.split("\0"):
        if len(item) < 4:
            continue
        path = item[3:]
        found.append((item[:2], path, os.path.relpath(repo.top / path, repo.root).replace(os.sep, "/")))
    return found


def _own(rel: str) -> bool:
    """Whether a path (from the root) is one of memcli's own files."""
    return rel in OWN or rel.startswith("memory/")


def _changes(repo: _Repo) -> tuple[list, list, list]:
    """(memcli's own changed files under the root, (path, line) of the changed or new Markdown
    files among them that hold conflict markers, the other changed files under the root)."""
    from .store import markers

    changed = _status(repo, ".")
    changes = [c for c in changed if _own(c[2])]
    found = []
    for status, path, rel in changes:
        if not path.endswith(".md") or "D" in status:
            continue
        try:
            text = _committed_bytes(repo.top / path).decode("utf-8", "replace")
        except OSError:
            continue
        line = markers.text_conflict(text, repo.top / path)
        if line is not None:
            found.append((rel, line))
    return changes, found, [rel for _, _, rel in changed if not _own(rel)]


def _committed_bytes(path: Path) -> bytes:
    """What git would commit for path: a symlink's target name (never the file it leads to,
    which may be anywhere), else the file's bytes."""
    if path.is_symlink():
        return os.fsencode(os.readlink(path))
    return path.read_bytes()


def secrets_in(repo: _Repo, changes: list, config) -> list:
    """Secrets in the files about to be committed: (path, line, kind) each; [] under the user's
    own `write.secrets: allow` (a committed one counts only once trusted). The one place sync
    asks the secret scanner."""
    if not changes or config["write.secrets"] == "allow":
        return []
    from .safety.scanner import find_secrets

    found = []
    for status, path, rel in changes:
        if "D" in status:
            continue
        try:
            data = _committed_bytes(repo.top / path)
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue  # not text
        for m in find_secrets(data.decode("utf-8", "replace")):
            found.append((rel, m.line, m.kind))
    return found


def tracked_state(root: Path) -> list:
    """Files under the root's .memcli/ that git tracks (someone force-added them): sync never
    commits them, a tracked .memcli/config.yaml is not read; `git rm -r --cached .memcli` stops
    tracking them."""
    r = git(root, "ls-files", "-z", "--", ".memcli", check=False)
    return [p for p in r.stdout.split("\0") if p] if r.returncode == 0 else []


def _commit_local(repo: _Repo, changes: list, message: str | None) -> str | None:
    """Commit exactly these files (memcli's own, just scanned); whatever else is staged in the
    repository stays staged and out of the commit."""
    if not changes:
        return None
    paths = [path for _, path, _ in changes]
    repo.run_paths("add", "-A", paths=paths)
    msg = message or _message(changes)
    r = repo.run_paths("commit", "-q", "--no-verify", "--only", "-m", msg, paths=paths, check=False)
    if r.returncode != 0:
        said = r.stdout + r.stderr
        if "nothing to commit" in said or "no changes added" in said:
            return None
        raise GitError(f"git commit failed: {_last(r.stderr or r.stdout)}")
    return msg


def _driver_failed(repo: _Repo, full: Path, stages: dict, fresh: bool) -> bool:
    """A conflicted file without markers whose two sides both exist: memcli's driver failed or did
    not run, and the file holds our side alone. In a merge this sync started, that is always so;
    in one found in progress, only while the file is still byte for byte our side."""
    if 2 not in stages or 3 not in stages:
        return False
    if fresh:
        return True
    if stages[2] == stages[3]:
        return False
    r = git(repo.top, "hash-object", "--", str(full), check=False)
    return r.returncode == 0 and r.stdout.strip() == stages[2]


def _utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return True


def _settle_merge(repo: _Repo, mem, warnings: list, fresh: bool) -> tuple[list, list, list]:
    """After a merge stopped with conflicts: take what memcli can settle. Returns (the paths left
    for a person, the paths a merge driver failed on, the memories kept though one side forgot
    them). When a driver failed, nothing is settled: none of its files is ever added as merged."""
    from .store import markers

    stages = repo.stages()
    texts: dict = {}
    failed = []
    for path, st in stages.items():
        full = repo.root / path
        mine = not path.startswith("../") and (path == "MEMORY.md" or (path.startswith("memory/")
                                                                        and path.endswith(".md")))
        if not mine or not full.is_file():
            continue
        texts[path] = full.read_bytes().decode("utf-8", "replace")
        if markers.text_conflict(texts[path], full) is None and _driver_failed(repo, full, st, fresh):
            failed.append(path)
    if failed:
        return [], sorted(failed), []
    left, revived = [], []
    for path in sorted(stages):
        st = stages[path]
        full = repo.root / path
        in_root = not path.startswith("../")
        if in_root and path == "MEMORY.md" and _utf8(full):
            mem.reconcile_index()
            repo.run("add", "--", path)
            continue
        if in_root and path.startswith("memory/") and path.endswith(".md"):
            if not full.exists():
                repo.run("rm", "-q", "--cached", "--ignore-unmatch", "--", path)
                continue
            if markers.text_conflict(texts.get(path, ""), full) is None:
                if 2 not in st or 3 not in st:
                    warnings.append(f"{path} was deleted on one side and changed on the other: kept the changed "
                                    "version (forget it again if it should go)")
                    if path.count("/") == 1:
                        revived.append(Path(path).stem)
                repo.run("add", "--", path)
                continue
        left.append(path)
    return left, [], revived


def _merge(repo: _Repo, mem, target: str, warnings: list) -> dict:
    """Merge target into HEAD with memcli's drivers; reconcile MEMORY.md; commit if clean."""
    staged = repo.staged_elsewhere()
    if staged:
        shown = ", ".join(staged[:3]) + (f" and {len(staged) - 3} more" if len(staged) > 3 else "")
        raise GitError(f"changes staged outside memcli's files ({shown}) keep git from merging {target}: commit "
                       "or unstage them, then run `memcli sync` again (nothing was pushed)")
    r = repo.run("merge", "--no-commit", "--no-edit", "-q", "--allow-unrelated-histories", target, check=False)
    if not repo.merging():
        if r.returncode != 0:
            raise GitError(f"git merge failed: {_last(r.stderr or r.stdout)}")
        return {"merged": False, "conflicts": [], "failed": []}
    done = _finish_merge(repo, mem, warnings, fresh=True)
    if done["failed"]:
        said = [ln.strip() for ln in (r.stderr or "").splitlines() if ln.strip() and not ln.startswith(
            ("CONFLICT", "Auto-merging", "Automatic merge failed"))]
        warnings += [f"merge driver: {ln}" for ln in said[-3:]]
    return done


def _finish_merge(repo: _Repo, mem, warnings: list, fresh: bool = False) -> dict:
    left, failed, revived = _settle_merge(repo, mem, warnings, fresh)
    if failed:
        if fresh:  # back to before the merge: this side stays committed, theirs stays on the remote
            repo.run("merge", "--abort", check=False)
        return {"merged": False, "conflicts": [], "failed": failed}
    if left:
        return {"merged": False, "conflicts": left, "failed": []}
    mem.reconcile_index()
    if revived:
        from .conflicts import index_revived

        index_revived(mem, revived)
    if mem.index_path.exists():
        repo.run("add", "--", "MEMORY.md")
    if repo.unmerged():
        return {"merged": False, "conflicts": repo.unmerged(), "failed": []}
    # --cleanup=strip: git's "# Conflicts:" lines in MERGE_MSG are notes for an editor, not the message
    repo.run("commit", "-q", "--no-verify", "--no-edit", "--cleanup=strip")
    return {"merged": True, "conflicts": [], "failed": []}


def sync(mem, message: str | None = None, push: bool = True, command: str | None = None) -> dict:
    """Commit memcli's own changed files in the root, merge the remote's, push. Returns what
    happened; result["code"] is 0 (synced, or committed only when the remote cannot be reached)
    or 1 (nothing pushed: a person must settle the files in result["conflicts"], a merge driver
    failed on result["driver_failed"], or result["secrets"] would have been committed)."""
    repo = _Repo(mem.root, command)
    branch = repo.branch()
    remote, upstream = repo.remote(branch)
    result: dict = {"root": str(mem.root), "branch": branch, "remote": remote, "committed": None,
                    "merged": 0, "pushed": False, "conflicts": [], "driver_failed": [], "secrets": [],
                    "left_alone": [], "offline": False, "warnings": [], "code": 0}
    warnings = result["warnings"]
    state = tracked_state(mem.root)
    if state:
        warnings.append(f".memcli/ is tracked by git ({', '.join(state[:2])}{' …' if len(state) > 2 else ''}): "
                        "sync never commits it and a tracked .memcli/config.yaml is not read; stop tracking it: "
                        "`git rm -r --cached .memcli`, then commit")
    for attempt in range(PUSH_TRIES):
        fetched = False
        if remote:
            f = repo.run("fetch", "-q", remote, check=False)
            fetched = f.returncode == 0
            if not fetched:
                result["offline"] = True
                if attempt == 0:
                    warnings.append(f"could not reach {remote} ({_last(f.stderr)}): committed here only")
        with mem.lock():
            if repo.merging():
                done = _finish_merge(repo, mem, warnings)
                if done["conflicts"] or done["failed"]:
                    return _stop(result, repo, done["conflicts"], failed=done["failed"])
                result["merged"] += 1
            changes, marked, strays = _changes(repo)
            if not attempt:
                result["left_alone"] = strays
            if marked:
                return _stop(result, repo, [p for p, _ in marked], marked)
            secrets = secrets_in(repo, changes, mem.config)
            if secrets:
                result["secrets"] = [{"path": p, "line": n, "kind": k} for p, n, k in secrets]
                return _stop(result, repo, [])
            msg = _commit_local(repo, changes, message)
            if msg and not result["committed"]:
                result["committed"] = msg
            target = f"refs/remotes/{remote}/{upstream}" if remote else None
            theirs = repo.ref(target) if fetched and target else None
            if theirs and not repo.contains(theirs):
                if repo.has_head():
                    done = _merge(repo, mem, target, warnings)
                    if done["conflicts"] or done["failed"]:
                        return _stop(result, repo, done["conflicts"], failed=done["failed"])
                    result["merged"] += int(done["merged"])
                else:
                    repo.run("merge", "-q", "--ff-only", target)
        if not (push and fetched and remote and repo.has_head()):
            return result
        head, theirs = repo.ref("HEAD"), repo.ref(target) if target else None
        if head == theirs:
            return result
        p = repo.run("push", "-q", remote, f"HEAD:refs/heads/{upstream}", check=False)
        if p.returncode == 0:
            result["pushed"] = True
            if not repo.settings.get(f"branch.{branch}.remote"):
                repo.run("branch", "-q", f"--set-upstream-to={remote}/{upstream}", check=False)
            return result
        text = (p.stderr or "").lower()
        if not any(w in text for w in ("rejected", "fetch first", "non-fast-forward", "cannot lock ref",
                                       "failed to update ref")):
            raise GitError(f"git push to {remote} failed: {_last(p.stderr)}")
    raise GitError(f"gave up pushing to {remote} after {PUSH_TRIES} tries: others keep pushing; run sync again")


def _stop(result: dict, repo: _Repo, paths: list, marked: list | None = None, failed: list | None = None) -> dict:
    result["conflicts"] = paths
    result["driver_failed"] = failed or []
    result["code"] = 1
    result["merging"] = repo.merging()
    result["marked"] = [{"path": p, "line": n} for p, n in (marked or [])]
    return result

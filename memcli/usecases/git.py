"""Sharing a root through git (docs/guide/git.md): `sync`, and settling what a merge leaves: MEMORY.md
reconciled with the detail files, a memory's conflict markers resolved to one side (the other kept
in History). Making a root git-ready and running git are the store's (``store.git``)."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from ..dates import expired, utcnow
from ..errors import MemcliError, UsageError
from ..model import Result
from ..safety.writecheck import WriteCheck
from ..store import details as dfile
from ..store import git as store_git
from ..store import indexrules, layout, markers
from ..store.details import add_history
from ..store.fs import atomic_write, read_text
from ..store.git import PUSH_TRIES, GitError, Repo, committed_bytes, git, last_line, status, tracked_state
from ..store.index import IndexDoc

_UPDATED = re.compile(r"\s*updated:\s*['\"]?\d{4}-\d\d-\d\d[T ]?[\d:.]*Z?['\"]?\s*$")  # a frontmatter time line


def setup(root, command: str | None = None, check: bool = False) -> Result:
    """Make the root git-ready (`store.git.setup`); with check, only the findings of what is missing."""
    if not check:
        return Result(store_git.setup(root.path, command))
    if store_git.toplevel(root.path) is None:
        raise UsageError(f"{root.path} is not in a git repository (run `memcli git setup` after `git init`)")
    keys = ("code", "severity", "path", "message", "fix")
    return Result({"findings": [{k: getattr(f, k) for k in keys} for f in store_git.check(root.path)]})


def reconcile_index(root, dropped: list | None = None) -> bool:
    """Bring MEMORY.md in line with the detail files, as after a git merge (docs/guide/git.md), the
    ids of lines to missing files added to ``dropped``. Deterministic. Returns whether it changed."""
    with root.lock():
        try:
            text = root.index_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return False
        size = markers.size_for(root.index_path)
        doc = IndexDoc.parse(markers.union(text, size) if markers.first_conflict(text, size) else text)
        memories, present = {}, []
        for e in doc.entries:
            if e.id and indexrules.is_safe_id(e.id) and e.id not in memories:
                memories[e.id] = indexrules.UNREADABLE
                if root.exists(e.id):
                    present.append(e)
                else:
                    memories[e.id] = indexrules.MISSING
                    if dropped is not None:
                        dropped.append(e.id)
        memories.update((e.id, d) for e, d in root.indexed(present) if d is not None)
        # the trace is local to each clone: a merged index is planned without it (index.rank: activity),
        # and fitted: both sides' entries may meet over the limit
        new = root.plan_index(doc, memories=memories, tidy=True, fit=True, trace=False).doc.render()
        if new == text:
            return False
        with markers.overwriting():
            root.write_index_text(new)
    return True


def index_revived(root, ids) -> list:
    """List again in MEMORY.md, as `remember` lists a memory, the memories a merge kept although one
    side forgot them (the other changed them). Returns the ids listed."""
    listed = []
    with root.lock():
        for memory_id in ids:
            try:
                d = root.load(root.detail_path(memory_id))
                doc = root.read_index()
            except MemcliError:
                continue  # a broken file stays out; heartbeat reports it
            if any(e.id == memory_id for e in doc.entries):
                continue
            plan = root.plan_index(doc, add=d)
            if plan.refused or memory_id not in plan.ids:
                continue
            root.write(plan)
            listed.append(memory_id)
    return listed


def resolve(root, memory_id: str, side: str, now: str) -> Result:
    """Settle a memory left with git conflict markers: side is ours, theirs or both. A side not
    kept goes into the dated ## History section; the index line is refreshed."""
    if side not in ("ours", "theirs", "both"):
        raise UsageError(f"side must be ours, theirs or both, got {side!r}")
    with root.lock():
        path = root.locate(memory_id)[0]
        rel = root.rel(path)
        text = read_text(path, rel)
        size = markers.size_for(path)
        if markers.first_conflict(text, size) is None:
            raise UsageError(f"{rel} has no conflict markers; nothing to resolve")
        settled, dropped = markers.settle(text, side, size)
        d = dfile.parse(settled, memory_id, rel)
        other = "theirs" if side == "ours" else "ours"
        # what the other side said, without its `updated:` time (not a thing a person needs kept)
        said = [[ln.strip() for ln in t.split("\n") if ln.strip() and not _UPDATED.match(ln)] for t in dropped]
        said = [lines for lines in said if lines]
        if said:
            notes = [f"conflict settled with {side}; {other} had: " + " / ".join(lines) for lines in said]
            d = d.replace(body=add_history(d.body, now[:10], notes))
        # both sides came by a merge (plain git runs no check): the settled file passes the one write check
        checked = WriteCheck.of(root, rel).file(dfile.render(d), rel, memory_id, what=f"the settled {rel}")
        with markers.overwriting():
            atomic_write(path, checked.text or "")
        if rel == layout.detail_rel(memory_id) and markers.file_conflict(root.index_path) is None:
            root.write(root.plan_index(root.read_index()))
    res = {"id": memory_id, "path": rel, "side": side, "kept_in_history": len(said)}
    return Result(res, [checked.warning(rel)])


def _message(changes: list) -> str:
    """What the commit holds, in the domain's words."""
    groups: dict = {k: [] for k in ("remembered", "updated", "forgot", "episodes", "archived", "proposals", "files")}
    moved = {Path(path).stem for change, _, path in changes if path.startswith(layout.ARCHIVE + "/")}
    for change, _, path in changes:
        if path.startswith(layout.MEMORY + "/") and path.count("/") == 1 and "D" in change and Path(path).stem in moved:
            continue  # moved to memory/archive/ (forget, or an expiry): said once, as archived
        if path.startswith(layout.EPISODES + "/"):
            groups["episodes"].append(Path(path).stem)
        elif path.startswith(layout.INBOX + "/"):
            groups["proposals"].append(Path(path).stem)
        elif path.startswith(layout.ARCHIVE + "/"):
            groups["archived"].append(Path(path).stem)
        elif path.startswith(layout.MEMORY + "/") and path.endswith(".md"):
            key = {"?": "remembered", "A": "remembered", "D": "forgot"}.get(change.strip()[:1], "updated")
            groups[key].append(Path(path).stem)
        elif path != layout.INDEX:
            groups["files"].append(path)
    parts = [f"{key} {_few(words, 4)}" for key, words in groups.items() if words]
    host = socket.gethostname() or "this machine"
    return f"memcli sync from {host}: " + ("; ".join(parts) if parts else "index")


def _few(items: list, n: int = 3) -> str:
    """The first n items, and how many more."""
    return ", ".join(items[:n]) + (f" and {len(items) - n:,} more" if len(items) > n else "")


def _own(rel: str) -> bool:
    """Whether a path (from the root) is one of memcli's own files."""
    return rel in layout.OWN or rel.startswith(layout.MEMORY + "/")


def _changes(repo: Repo) -> tuple[list, list, list]:
    """(memcli's own changed files under the root, (path, line) of the changed or new Markdown
    files among them that hold conflict markers, the other changed files under the root)."""
    changed = status(repo, ".")
    changes = [c for c in changed if _own(c[2])]
    found = []
    for change, path, rel in changes:
        if not path.endswith(".md") or "D" in change:
            continue
        try:
            text = committed_bytes(repo.top / path).decode("utf-8", "replace")
        except OSError:
            continue
        line = markers.text_conflict(text, repo.top / path)
        if line is not None:
            found.append((rel, line))
    return changes, found, [rel for _, _, rel in changed if not _own(rel)]


_NOT_SECRETS = ("control character", "larger than")  # refused_in's other findings
# what git says when another clone pushed first: fetch, merge and push again
_PUSHED_FIRST = ("rejected", "fetch first", "non-fast-forward", "cannot lock ref", "failed to update ref")


def refused_in(repo: Repo, changes: list, root) -> list:
    """(path, line, what) of all the one write check refuses in the files about to be committed. Under
    `write.secrets: redact` too a secret already in a file stops the commit: sync does not rewrite a
    person's file."""
    if not changes:
        return []
    check = WriteCheck("allow" if root.config["write.secrets"] == "allow" else "refuse")
    found = []
    for change, path, rel in changes:
        if "D" in change:
            continue
        try:
            data = committed_bytes(repo.top / path)
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue  # not text
        found += [(rel, line, what) for line, what in check.findings(data.decode("utf-8", "replace"))]
    return found


def _commit_local(repo: Repo, changes: list, message: str | None) -> str | None:
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
        raise GitError(f"git commit failed: {last_line(r.stderr or r.stdout)}")
    return msg


def _driver_failed(repo: Repo, full: Path, stages: dict, fresh: bool) -> bool:
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


def _settled_kind(path: str) -> str | None:
    """ "index" or "memory" for a conflicted file (from the root) memcli settles, else None."""
    if path == layout.INDEX:
        return "index"
    return "memory" if path.startswith(layout.MEMORY + "/") and path.endswith(".md") else None


def _settle_merge(repo: Repo, root, warnings: list, fresh: bool) -> tuple[list, list, list]:
    """After a merge stopped with conflicts: take what memcli can settle. Returns (the paths left
    for a person, the paths a merge driver failed on, the memories kept though one side forgot
    them). When a driver failed, nothing is settled: none of its files is ever added as merged."""

    stages = repo.stages()
    texts: dict = {}
    failed = []
    for path, st in stages.items():
        full = repo.root / path
        if not _settled_kind(path) or not full.is_file():
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
        kind = _settled_kind(path)
        if kind == "index" and _utf8(full):
            _reconcile(root, warnings)
            repo.run("add", "--", path)
            continue
        if kind == "memory":
            if not full.exists():
                repo.run("rm", "-q", "--cached", "--ignore-unmatch", "--", path)
                continue
            if markers.text_conflict(texts.get(path, ""), full) is None:
                if 2 not in st or 3 not in st:
                    warnings.append(
                        f"{path} was deleted on one side and changed on the other: kept the changed "
                        "version (forget it again if it should go)"
                    )
                    if path.count("/") == 1:
                        revived.append(Path(path).stem)
                repo.run("add", "--", path)
                continue
        left.append(path)
    return left, [], revived


def _merge(repo: Repo, root, target: str, warnings: list) -> dict:
    """Merge target into HEAD with memcli's drivers; reconcile MEMORY.md; commit if clean."""
    staged = repo.staged_elsewhere()
    if staged:
        raise GitError(
            f"changes staged outside memcli's files ({_few(staged)}) keep git from merging {target}: commit "
            "or unstage them, then run `memcli sync` again (nothing was pushed)"
        )
    r = repo.run("merge", "--no-commit", "--no-edit", "-q", "--allow-unrelated-histories", target, check=False)
    if not repo.merging():
        if r.returncode != 0:
            raise GitError(f"git merge failed: {last_line(r.stderr or r.stdout)}")
        return {"merged": False, "conflicts": [], "failed": []}
    done = _finish_merge(repo, root, warnings, fresh=True)
    if done["failed"]:
        said = [
            ln.strip()
            for ln in (r.stderr or "").splitlines()
            if ln.strip() and not ln.startswith(("CONFLICT", "Auto-merging", "Automatic merge failed"))
        ]
        warnings += [f"merge driver: {ln}" for ln in said[-3:]]
    return done


def _finish_merge(repo: Repo, root, warnings: list, fresh: bool = False) -> dict:
    sides = _sides(repo)
    left, failed, revived = _settle_merge(repo, root, warnings, fresh)
    if failed:
        if fresh:  # back to before the merge: this side stays committed, theirs stays on the remote
            repo.run("merge", "--abort", check=False)
        return {"merged": False, "conflicts": [], "failed": failed}
    warnings += _remembered_twice(repo, root, sides["both_added"])
    if left:
        return {"merged": False, "conflicts": left, "failed": []}
    revived += _unarchive(repo, root, sides["archived_changed"], warnings)
    _reconcile(root, warnings)
    if revived:
        index_revived(root, revived)
    if root.index_path.exists():
        repo.run("add", "--", layout.INDEX)
    if repo.unmerged():
        return {"merged": False, "conflicts": repo.unmerged(), "failed": []}
    # --cleanup=strip: git's "# Conflicts:" lines in MERGE_MSG are notes for an editor, not the message
    repo.run("commit", "-q", "--no-verify", "--no-edit", "--cleanup=strip")
    return {"merged": True, "conflicts": [], "failed": []}


def _reconcile(root, warnings: list) -> None:
    """``reconcile_index`` after a merge, saying in one line what it dropped and why."""
    gone: list = []
    reconcile_index(root, gone)
    if gone:
        warnings.append(
            f"dropped {len(gone):,} line(s) of the merged MEMORY.md that point at memory files neither side "
            f"has ({_few(gone)}): an index lists only memories that exist"
        )


def _tree_changes(repo: Repo, base: str, ref: str) -> dict:
    """path (from the root) -> git's status letter (A, M, D) of every memory file ref changed since base."""
    out = repo.run(
        "diff", "--name-status", "--no-renames", "--relative", "-z", base, ref, "--", layout.MEMORY, check=False
    ).stdout.split("\0")
    return {out[i + 1]: out[i][:1] for i in range(0, len(out) - 1, 2) if out[i]}


def _sides(repo: Repo) -> dict:
    """The memories both sides of the merge in progress remembered (added under one id), and the
    ones one side forgot (moved to memory/archive/) while the other changed them."""
    found: dict = {"both_added": [], "archived_changed": []}
    base = repo.run("merge-base", "HEAD", "MERGE_HEAD", check=False).stdout.strip()
    if not base:  # unrelated histories: every memory both hold counts as added by both
        names = [
            set(
                repo.run(
                    "ls-tree", "-r", "--name-only", ref, "--", layout.MEMORY + "/", check=False
                ).stdout.splitlines()
            )
            for ref in ("HEAD", "MERGE_HEAD")
        ]
        found["both_added"] = sorted(p for p in names[0] & names[1] if layout.id_of(p, archived=False))
        return found
    ours, theirs = _tree_changes(repo, base, "HEAD"), _tree_changes(repo, base, "MERGE_HEAD")
    found["both_added"] = sorted(
        p for p, c in ours.items() if c == "A" and theirs.get(p) == "A" and layout.id_of(p, archived=False)
    )
    for one, other in ((ours, theirs), (theirs, ours)):
        for path, change in one.items():
            mid = layout.id_of(path, archived=False)
            if mid and change == "D" and one.get(layout.detail_rel(mid, True)) == "A" and other.get(path) == "M":
                found["archived_changed"].append(mid)
    return found


def _remembered_twice(repo: Repo, root, paths: list) -> list:
    """One warning for each memory both sides remembered under the same id (the same title), naming both."""
    out = []
    for path in paths:
        said = []
        for ref in ("HEAD", "MERGE_HEAD"):
            text = repo.run("show", f"{ref}:./{path}", check=False).stdout
            try:
                d = dfile.parse(text, Path(path).stem, path)
                said.append(f"“{d.title}”: {d.summary or '(no summary)'} ({d.created or 'no date'})")
            except MemcliError:
                said.append("(its frontmatter cannot be read)")
        mid, full = Path(path).stem, root.path / path
        if full.is_file() and markers.file_conflict(full) is not None:
            how = f"The two conflict: settle it with `memcli resolve {mid} --ours|--theirs|--both`"
        else:
            how = "Merged into one memory (the summary not kept is under its ## History): check it with "
            how += f"`memcli show {mid}`"
        out.append(f"{path} was remembered on both sides: here {said[0]}; on the other side {said[1]}. {how}")
    return out


def _unarchive(repo: Repo, root, ids: list, warnings: list) -> list:
    """Memories one side forgot while the other changed them (the change followed the file into the
    archive) back to memory/, as a memory deleted on one side and changed on the other comes back."""
    back = []
    for mid in ids:
        src, dst = root.detail_path(mid, archived=True), root.detail_path(mid)
        if not src.is_file() or dst.exists():
            continue
        try:
            if expired(root.load(src).expires, utcnow()[:10]):
                continue
        except MemcliError:
            continue
        os.rename(src, dst)
        repo.run("add", "-A", "--", root.rel(src), root.rel(dst))
        warnings.append(
            f"{root.rel(dst)} was forgotten on one side and changed on the other: kept the changed "
            f"version in memory/ (forget it again if it should go)"
        )
        back.append(mid)
    return back


def sync(root, message: str | None = None, push: bool = True, command: str | None = None) -> Result:
    """Commit memcli's own changed files in the root, merge the remote's, push (docs/guide/git.md).
    result["code"] is 0, or 1 when nothing was pushed: see "conflicts", "driver_failed" and
    "refused". Its warnings are also in its data (sync's --json has always carried them there)."""
    repo = Repo(root.path, command)
    branch = repo.branch()
    remote, upstream = repo.remote(branch)
    result = Result({"root": str(root.path), "branch": branch, "remote": remote, "committed": None, "merged": 0})
    result.update(pushed=False, **{k: [] for k in ("conflicts", "driver_failed", "secrets", "refused", "left_alone")})
    result.update(offline=False, warnings=[], code=0)
    warnings = result.warnings = result["warnings"]
    state = tracked_state(root.path)
    if state:
        warnings.append(
            f".memcli/ is tracked by git ({', '.join(state[:2])}{' …' if len(state) > 2 else ''}): "
            "sync never commits it and a tracked .memcli/config.yaml is not read; stop tracking it: "
            "`git rm -r --cached .memcli`, then commit"
        )
    for attempt in range(PUSH_TRIES):
        fetched = False
        if remote:
            f = repo.run("fetch", "-q", remote, check=False)
            fetched = f.returncode == 0
            if not fetched:
                result["offline"] = True
                if attempt == 0:
                    warnings.append(f"could not reach {remote} ({last_line(f.stderr)}): committed here only")
        with root.lock():
            if repo.merging():
                done = _finish_merge(repo, root, warnings)
                if done["conflicts"] or done["failed"]:
                    return _stop(result, repo, done["conflicts"], failed=done["failed"])
                result["merged"] += 1
            changes, marked, strays = _changes(repo)
            if not attempt:
                result["left_alone"] = strays
            if marked:
                return _stop(result, repo, [p for p, _ in marked], marked)
            refused = refused_in(repo, changes, root)
            if refused:
                result["refused"] = [{"path": p, "line": n, "kind": k} for p, n, k in refused]
                result["secrets"] = [x for x in result["refused"] if not x["kind"].startswith(_NOT_SECRETS)]
                return _stop(result, repo, [])
            msg = _commit_local(repo, changes, message)
            if msg and not result["committed"]:
                result["committed"] = msg
            target = f"refs/remotes/{remote}/{upstream}" if remote else None
            theirs = repo.ref(target) if fetched and target else None
            if theirs and target and not repo.contains(theirs):
                if repo.has_head():
                    done = _merge(repo, root, target, warnings)
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
        if not any(w in (p.stderr or "").lower() for w in _PUSHED_FIRST):
            raise GitError(f"git push to {remote} failed: {last_line(p.stderr)}")
    raise GitError(f"gave up pushing to {remote} after {PUSH_TRIES} tries: others keep pushing; run sync again")


def _stop(result: Result, repo: Repo, paths: list, marked: list | None = None, failed: list | None = None) -> Result:
    marks = [{"path": p, "line": n} for p, n in (marked or [])]
    result.update(conflicts=paths, driver_failed=failed or [], code=1, merging=repo.merging(), marked=marks)
    return result

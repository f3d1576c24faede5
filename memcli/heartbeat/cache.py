"""The heartbeat's per-file records and their disk cache, read by worker processes when there are many."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from .. import progress
from ..errors import MemcliError
from ..store import indexrules, layout, markers
from ..store.fs import inside
from ..paths import STATE_DIR
from . import checks
from ..store.frontmatter import key_line
from ..near_duplicates import compared
from .base import read_file

# What one file says, independent of the time and of the other files, is kept per file in
# .memcli/heartbeat-cache.json under the file's fingerprint (store/layout.py): the next
# audit reads only the files that changed. The cache is disposable and is ignored when
# any registered check changes (its signature hashes the source of every check's module).
CACHE_NAME = layout.HEARTBEAT_CACHE
CACHE_FORMAT = "1"
PARALLEL_MIN = 2000  # files to read from which worker processes share the work
_CHUNK = 250
_UNREADABLE_FIX = indexrules.FIX_UNREADABLE_FILE
# a record: [detail fields or None, body hash or None, line of `expires:`, findings as lists]
_LITE = ("title", "summary", "tags", "importance", "pinned", "created", "updated", "expires")


def _body_hash(body: str) -> str | None:
    body = compared(body)
    return hashlib.blake2b(body.encode("utf-8"), digest_size=12).hexdigest() if len(body) >= 40 else None


def _unreadable(message: str, fix: str = _UNREADABLE_FIX) -> list:
    return [None, None, None, [["file-unreadable", "error", None, message, fix]]]


def check_file(job: tuple) -> list:
    """The record of one file: job is (relative path, absolute path, kind[, conflict-marker-size])."""
    rel, path, kind = job[:3]
    size = job[3] if len(job) > 3 else 7
    try:
        text = read_file(Path(path), rel)
    except (MemcliError, OSError) as e:
        msg = getattr(e, "message", None) or f"cannot read it ({getattr(e, 'strerror', None) or e})"
        return _unreadable(msg.removeprefix(rel + ": "))
    f = checks.facts(rel, kind, text, size)
    found, d = checks.file_findings(f), f.detail
    lite = None if d is None else [list(v) if k == "tags" else v for k, v in ((k, getattr(d, k)) for k in _LITE)]
    return [
        lite,
        None if d is None else _body_hash(d.body),
        None if d is None else key_line(text, "expires"),
        [[f.code, f.severity, f.line, f.message, f.fix] for f in found],
    ]


def _inspect_many(jobs: Iterable) -> list:
    return [check_file(j) for j in jobs]


def _workers(n: int) -> int:
    if n < PARALLEL_MIN:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8, n // (PARALLEL_MIN // 2)))


def _inspect_all(jobs: list) -> list:
    """Records for the jobs, in order; in worker processes when there are many."""
    workers = _workers(len(jobs))
    if workers > 1:
        import multiprocessing
        import threading
        from concurrent.futures import ProcessPoolExecutor

        from ..procs import isolated, pool_context

        # fork is cheap, but only safe while this process has a single thread (watch has two);
        # spawned workers start isolated (they would start in the root's folder)
        method = (
            "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() else "spawn"
        )
        chunks = [jobs[i : i + _CHUNK] for i in range(0, len(jobs), _CHUNK)]
        try:
            with isolated():
                pool = ProcessPoolExecutor(workers, mp_context=pool_context(method))
            with pool:
                out: list = []
                progress.report(CHECKING, 0, len(jobs))
                for part in pool.map(_inspect_many, chunks):
                    out += part
                    progress.report(CHECKING, len(out), len(jobs))
                return out
        except (OSError, RuntimeError, ImportError):
            pass  # no processes to be had (a sandbox, a broken pool): read them here
    return _inspect_many(progress.each(jobs, CHECKING, len(jobs)))


CHECKING = "checking memory files"
# what every record also depends on, besides the checks' own modules (and the scanner's rule sets)
_FIXED = (
    "memcli.heartbeat.cache",
    "memcli.heartbeat.base",
    "memcli.heartbeat.checks",
    "memcli.store.details",
    "memcli.store.layout",
    "memcli.paths",
    "memcli.safety.scanner",
    "memcli.safety.ruleset",
    "memcli.safety.rule_functions",
    "memcli.safety.invisible",
    "memcli.safety.normalize",
    "memcli.model",
    "memcli.store.frontmatter",
    "memcli.store.flatyaml",
    "memcli.dates",
    "memcli.near_duplicates",
)


def signature() -> str:
    """A hash of the source of every registered check's module and of what the records depend on:
    a check added or changed anywhere makes the next audit read every file again."""
    import importlib.util

    from ..safety.scanner import fingerprint

    h = hashlib.blake2b(CACHE_FORMAT.encode(), digest_size=12)
    h.update(fingerprint().encode())  # a rule added or changed, built in or by a plugin
    for name in sorted(set(_FIXED) | set(checks.modules())):
        h.update(name.encode())
        try:
            spec = importlib.util.find_spec(name)
            h.update(Path(spec.origin).read_bytes())  # type: ignore[union-attr, arg-type]  # caught below
        except (OSError, ImportError, AttributeError, TypeError, ValueError):
            pass
    return h.hexdigest()


def _load_cache(root: Path, signature: str) -> dict:
    try:
        with open(root / STATE_DIR / CACHE_NAME, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("signature") == signature and isinstance(data.get("files"), dict):
            return {k: v for k, v in data["files"].items() if _valid(v)}
    except (OSError, ValueError, AttributeError, RecursionError):
        pass
    return {}


def _valid(entry) -> bool:
    """A cache entry of the expected shape: [fingerprint, record] (anything else is re-read)."""
    try:
        fp, (lite, body_hash, line, found) = entry
        return (
            isinstance(fp, str)
            and (lite is None or (isinstance(lite, list) and len(lite) == len(_LITE)))
            and all(isinstance(f, list) and len(f) == 5 for f in found)
        )
    except (TypeError, ValueError):
        return False


def _save_cache(root: Path, signature: str, files: dict) -> None:
    from ..store.fs import atomic_write, state_dir

    try:
        atomic_write(
            state_dir(root) / CACHE_NAME,
            json.dumps({"signature": signature, "files": files}, ensure_ascii=False, separators=(",", ":")),
        )
    except (MemcliError, OSError):
        pass  # a cache that cannot be written costs time on the next run, nothing else


def read_files(store, write_cache: bool) -> tuple[list, dict]:
    """[(relative path, kind, fingerprint, record)] for every file of memory/, archive/ and episodes/
    of a store.Root."""
    root = store.path
    store.memory_dir()  # refuses a memory/ that leads outside the root
    jobs: list = []
    fps: dict = {}
    out: list = []
    for rel, kind, de in layout.memory_files(root):
        try:
            if de.is_symlink() and not inside(root, Path(de.path)):
                said = "leads outside the memory root (a symlink?); not read"
                out.append((rel, kind, None, _unreadable(said, "replace the link with the file itself")))
                continue
            if not de.is_file():
                continue
            st = de.stat()
        except OSError:
            continue
        fps[rel] = layout.fingerprint(st)
        jobs.append((rel, de.path, kind, markers.size_for(de.path)))
    # a record holds for a fingerprint and the conflict-marker-size .gitattributes sets for the file
    keys = {rel: fps[rel] if size == markers.SIZE else f"{fps[rel]}|{size}" for rel, _, _, size in jobs}
    sig = signature()
    cache = _load_cache(root, sig)
    todo = [j for j in jobs if (cache.get(j[0]) or [None])[0] != keys[j[0]]]
    fresh = dict(zip((j[0] for j in todo), _inspect_all(todo)))
    files = {}
    for rel, _, kind, _ in jobs:
        record = fresh.get(rel) or cache[rel][1]
        out.append((rel, kind, fps[rel], record))
        if not any(f[0] == "file-unreadable" for f in record[3]):
            files[rel] = [keys[rel], record]
    if write_cache and (todo or len(files) != len(cache)):
        _save_cache(root, sig, files)
    return out, fps

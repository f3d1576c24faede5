"""`Memory`: the library's one front door, a thin facade over the use cases. Every method makes one
use-case call and returns its typed result (with ``to_dict()``, what `--json` prints, and
``warnings``); ``recall``, ``remember`` and ``update`` take their request's fields as keywords."""

from __future__ import annotations

import builtins
import os
from contextlib import contextmanager
from collections.abc import Mapping
from pathlib import Path

from .config import Config
from .model import Detail, Listing, Result, WriteResult


class Memory:
    """A memory root: `Memory(path)`; see the methods for each operation."""

    def __init__(self, root: str | os.PathLike, config: Config | None = None, *, door: str = "api"):
        from .store.root import Root, root_path

        path = root_path(root)
        if config is None:
            from .settings_guard import load_config

            config = load_config(path)
        # door: the front end writing through this instance (cli, api, mcp or hook), for write.pii
        self.store = Root(path, config, door=door)
        self.root: Path = self.store.path

    @contextmanager
    def reporting(self, callback):
        """While the block runs, long work (index rebuild, heartbeat, the first details search, stats,
        import, export, rename) reports callback(what, done, total) as it goes; None: to no one."""
        from .progress import using

        with using(callback):
            yield

    @property
    def config(self) -> Config:
        """The root's settings, from memcli.yaml and the user's own configuration: ``config["recall.limit"]``."""
        return self.store.config

    # ---------- opening and creating roots ----------
    @classmethod
    def init(cls, path: str | os.PathLike, example: bool = False) -> "Memory":
        """Create a memory root (never overwriting a file) and open it."""
        return cls(cls.create(path, example)["root"])

    @staticmethod
    def create(
        path: str | os.PathLike, example: bool = False, *, git: bool = False, command: str | None = None
    ) -> Result:
        """`memcli init`: the root's folders and files, what was created and what kept; git makes
        it git-ready too (a repository when there is none, the merge drivers)."""
        from .usecases.init import init_root

        return init_root(path, example, git=git, command=command)

    @classmethod
    def with_defaults(cls, root: str | os.PathLike | None = None, *, door: str = "api") -> "Memory":
        """The root (found as `find` finds it) with the default settings, whatever its configuration
        says: what `heartbeat` audits when a configuration file cannot be used, and reports it."""
        from .config import find_root

        return cls(find_root(root), Config(), door=door)

    @classmethod
    def find(
        cls,
        root: str | os.PathLike | None = None,
        *,
        root_commands: bool = True,
        door: str = "api",
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> "Memory":
        """The root named, else MEMCLI_ROOT, else the nearest folder with MEMORY.md or memcli.yaml at or
        above cwd (env, cwd: the process's own by default); root_commands=False: none from its files."""
        from .config import find_root
        from .settings_guard import load_config

        path = find_root(root, env, cwd)
        return cls(path, None if root_commands else load_config(path, root_commands=False), door=door)

    @classmethod
    def for_hook(
        cls, explicit: str | None, cwd, *, env: Mapping[str, str] | None = None, here: str | None = None
    ) -> tuple["Memory | None", str | None]:
        """(the root an agent hook may use, a note): --root or MEMCLI_ROOT, else the nearest root above
        the prompt's folder (else ``here``) that `memcli hook allow` registered; a command named by
        the root's own files never runs from the hook."""
        from .settings_guard import load_config
        from .usecases.hooks import hook_root

        path, note = hook_root(explicit, cwd, env, here)  # a root's real path, already found
        return (None if path is None else cls(path, load_config(path, root_commands=False), door="hook")), note

    # ---------- reading ----------
    def get(self, memory_id: str) -> Detail:
        """One memory by exact id (archived ones too); NotFoundError suggests close ids."""
        return self.store.get(self.store.memory_id(memory_id))

    def raw(self, memory_id: str) -> str:
        """A memory's file as it is written."""
        return self.store.raw(self.store.memory_id(memory_id))

    def index_text(self) -> str:
        """MEMORY.md as it is ("" when there is none)."""
        return self.store.index_text()

    def locate(self, memory_id: str) -> Result:
        """Where a memory is, without reading more than its frontmatter: {"id", "path", "archived",
        "title"} (title None when its frontmatter is broken); NotFoundError suggests close ids."""
        from .errors import MemcliError

        memory_id = self.store.memory_id(memory_id)
        path, archived = self.store.locate(memory_id)
        try:
            title = self.store.load(path).title
        except MemcliError:
            title = None
        return Result({"id": memory_id, "path": self.store.rel(path), "archived": archived, "title": title})

    def list(self, tag: str | None = None, type: str | None = None, all: bool = False) -> Listing:
        """Memories in index order (memory/archive/ too with all), by tag and type."""
        from .usecases.maintain import listing

        return listing(self.store, tag=tag, type=type, all=all)

    def ids(self, prefix: str = "") -> builtins.list[str]:
        """The ids of the memories starting with prefix (archived ones after the others): for completion."""
        from .usecases.lookup import ids

        return ids(self.store, prefix)

    def tags(self, prefix: str = "") -> builtins.list[str]:
        """The tags of the indexed memories starting with prefix: for completion."""
        from .usecases.lookup import tags

        return tags(self.store, prefix)

    # ---------- writing ----------
    def remember(self, title: str, summary: str = "", **options) -> WriteResult:
        """Write a new detail file and its index line (demoting the lowest entry when full). A body
        that starts with its own frontmatter gives its keys; arguments given here win."""
        from .requests import RememberRequest
        from .usecases.write import remember_request

        return remember_request(self.store, RememberRequest(title, summary, **options))

    def update(self, memory_id: str, **changes) -> WriteResult:
        """Change a memory; a replaced title or summary is kept under a dated ## History section. Only
        the keys that change are rewritten; nothing to change gives the action "unchanged"."""
        from .requests import UpdateRequest
        from .usecases.write import update_request

        return update_request(self.store, UpdateRequest(self.store.memory_id(memory_id), **changes))

    def forget(self, memory_id: str, *, purge: bool = False) -> WriteResult:
        """Take a memory out of use (exact id, or its path): its index line goes and its file moves
        to memory/archive/, where `restore` finds it. purge=True deletes the file instead."""
        from .usecases.write import forget

        return forget(self.store, self.store.memory_id(memory_id), purge=purge)

    def restore(self, memory_id: str, now: str | None = None) -> WriteResult:
        """Bring an archived memory back to memory/ (a passed expiry is cleared) and into the index."""
        from .dates import utcnow
        from .paths import check_id
        from .usecases.write import restore

        return restore(self.store, check_id(self.store.memory_id(memory_id)), now or utcnow())

    def edit_begin(self, memory_id: str, reuse_draft: bool | None = True):
        """Start a hand edit: an EditSession whose `draft` (a copy under .memcli/edits/) the editor opens,
        no lock held; an earlier draft is reopened (reuse_draft True), left aside (False) or named (None)."""
        from .usecases.edit import begin

        return begin(self.store, self.store.memory_id(memory_id), reuse_draft)

    def edit_finish(self, session, text: str | None = None) -> WriteResult:
        """End a hand edit (the draft's text, or `text`): under the lock, the file is re-read; a change
        made meanwhile is merged line by line, or the draft is kept and Refused names it."""
        from .usecases.edit import finish

        return finish(self.store, session, text)

    def edit_abandon(self, session) -> str | None:
        """The editor failed: an untouched draft is removed; a changed one is kept and named."""
        from .usecases.edit import abandon

        return abandon(self.store, session)

    def outcome(self, memory_id: str, result: str, note: str | None = None, now: str | None = None) -> Result:
        """Record that a procedure worked (`success`) or failed (`failure`), with an optional note: its
        counters (uses, successes, last_outcome) and its ## Outcomes section; the new record."""
        from .dates import utcnow
        from .usecases.outcome import record

        return record(self.store, self.store.memory_id(memory_id), result, note, now or utcnow())

    def rename(self, old: str, new: str) -> Result:
        """A new id for a memory: its file, frontmatter, index link and references, under the lock."""
        from .usecases.rename import rename

        return rename(self.store, self.store.memory_id(old), new)

    def gate(self, front_end: str):
        """remember/update as `front_end` (cli, mcp, hook) writes them under write.gate."""
        from .usecases.inbox import Gate

        return Gate(self.store, front_end)

    # ---------- the cascade ----------
    def recall(self, query: str, **options):
        """Session, then scope, then the index, then the details: a Recall with hits and a trace.
        ``also``: other phrasings, fused by rank; ``inbox``: proposals too, listed last; ``type``,
        ``min_success``: only memories of that type whose smoothed success rate reaches it; when
        nothing answers, the candidates that relate come back weak, unless ``strict``."""
        from .requests import RecallRequest

        return self.recall_request(RecallRequest(query, **options))

    def recall_request(self, req):
        """``recall`` of a ``requests.RecallRequest``, as a front end hands it on."""
        from .usecases.recall import recall_request

        return recall_request(self.store, req)

    def should_recall(self, text: str) -> Result:
        """explicit / implicit / none for a message, from the configured signals and the index's names."""
        from .usecases.recall import should_recall

        return should_recall(self.store, text)

    def prepare_recall(self) -> None:
        """Do now what the next recall would do first (bring the details layer's search cache up to
        date with what changed): a long-lived process runs it between turns."""
        from .usecases.recall import prepare

        prepare(self.store)

    def context(
        self,
        query: str | None = None,
        *,
        budget: int | None = None,
        session: str = "default",
        scope: str = "default",
        now: str | None = None,
    ) -> Result:
        """One Markdown block for a prompt, trimmed to a token budget (CONTEXT_BUDGET by default)."""
        from .usecases.context import build

        return build(self.store, query, budget, session, scope, now)

    def session(self, name: str = "default"):
        """The session `name`: add, show, clear."""
        from .usecases.session_scope import Session

        return Session(self.store, name)

    def hook_event(self, event: str, data: dict, *, session: str, scope: str, budget: int | None = None) -> Result:
        """An agent's SessionStart, Stop (AfterAgent) or SessionEnd event: {"stdout": what the client reads}."""
        from .usecases.events import answer

        return answer(self.store, event, data, session, scope, budget)

    @staticmethod
    def agents(project: str | os.PathLike | None = None):
        """The agents memcli wires (claude-code, codex, gemini), for the user or a project folder:
        add, remove, listing, doctor."""
        from .usecases.agents import Agents

        return Agents(project)

    @staticmethod
    def doctor(project: str | os.PathLike | None = None) -> Result:
        """Every wired agent's hooks run with a sample event and its MCP server asked for its tools,
        each in its own process; the health of the roots they name."""
        from .usecases.agents import Agents
        from .usecases.doctor import doctor

        return doctor(Agents(project))

    def scope(self, name: str = "default"):
        """The scope `name`: start, set, get, read, show, check, end."""
        from .usecases.session_scope import Scope

        return Scope(self.store, name)

    # ---------- learning from sessions ----------
    def reflect(
        self,
        *,
        engine: str | None = None,
        all: bool = False,
        dry_run: bool = False,
        budget: int | None = None,
        now: str | None = None,
        background: bool = False,
        origin: str | None = None,
    ) -> Result:
        """Proposals in memory/inbox/ from the episode sections and session summaries not reflected
        on yet (all=True: everything), by the offline engine or the trusted reflect.extractor.
        background: what `reflect --background` does (skip when another reflection runs)."""
        from .usecases import reflect

        if background:
            return reflect.background(self.store, origin=origin)
        res = reflect.reflect(self.store, engine=engine, everything=all, dry_run=dry_run, budget=budget, now=now)
        res.warnings[:0] = self.config.warnings
        return res

    def reflect_material(self) -> Result:
        """The material for an agent's own model: items, instructions and the mark for `propose`."""
        from .usecases.reflect import offer

        return offer(self.store)

    def propose(self, proposals: builtins.list, mark: str | None = None, now: str | None = None) -> Result:
        """Proposals in the engines' JSON format (see memcli.usecases.reflect) into the inbox."""
        from .usecases.reflect import propose

        return propose(self.store, proposals, mark, now)

    @property
    def inbox(self):
        """The proposals waiting for review: list, get, raw, accept, reject, edit."""
        from .usecases.inbox import Inbox

        return Inbox(self.store)

    # ---------- keeping it healthy ----------
    def audit(self, now=None, *, write_cache: bool = True):
        """Every heartbeat check over every file: a Report of findings."""
        from .usecases.maintain import audit

        return audit(self.store, now, write_cache=write_cache)

    def repair(self, dry_run: bool = False, now=None, *, write_cache: bool | None = None):
        """Audit, plan the safe repairs and (unless dry_run) make them under the root lock: a Repair."""
        from .usecases.maintain import repair

        return repair(self.store, dry_run, now, write_cache=write_cache)

    def rebuild_index(self) -> Result:
        """Regenerate MEMORY.md from the detail files: same files, same bytes; other lines kept."""
        from .usecases.maintain import rebuild_index

        return rebuild_index(self.store)

    def check_index(self) -> builtins.list:
        """What is wrong with MEMORY.md and the detail files (Problems): empty when all is well."""
        from .usecases.maintain import check_index

        return check_index(self.store)

    def watch(self, emit, stop, **options) -> Result:
        """Validate and re-index edits as they happen, each observation to emit(event) as a dict, until
        `stop` (a threading.Event) is set. Options: debounce, heartbeat_every (seconds), fix, reflect."""
        from .usecases.watch import watch

        return Result(watch(self.store, emit, stop, **options))

    def stats(self) -> Result:
        """Memories by type, how full the index is, expired / stale / archived counts, state sizes."""
        from .usecases.lookup import stats

        return stats(self.store)

    def search(
        self, pattern: str, regex: bool = False, ignore_case: bool | None = None, archived: bool = True
    ) -> Result:
        """Every line of every memory file matching pattern (literal, or a regex), smart case by default."""
        from .usecases.lookup import search

        return search(self.store, pattern, regex=regex, ignore_case=ignore_case, archived=archived)

    # ---------- moving memories in and out ----------
    def export(self, archived: bool = True) -> Result:
        """Every memory as a record (what `import_` reads back) and the files that could not be read."""
        from .usecases.transfer import export

        return export(self.store, archived)

    def import_(self, source: str | os.PathLike, stdin_text: str | None = None) -> Result:
        """Add the memories of an export, a Markdown folder or file, or an agent's MEMORY.md of bullet
        lines ('-': stdin_text). Existing ids are skipped; secrets follow write.secrets."""
        from .usecases.transfer import import_

        return import_(self.store, source, stdin_text)

    # ---------- sharing through git ----------
    def git_setup(self, command: str | None = None, check: bool = False) -> Result:
        """`memcli git setup`: .gitignore, .gitattributes and the merge drivers for this clone; with
        check, only the findings of what is missing ({"findings": [...]})."""
        from .usecases.git import setup

        return setup(self.store, command, check=check)

    def sync(self, message: str | None = None, push: bool = True, command: str | None = None) -> Result:
        """Commit memcli's own files, merge the remote's with the drivers, push (see usecases.git.sync)."""
        from .usecases.git import sync

        return sync(self.store, message, push=push, command=command)

    @staticmethod
    def merge_file(kind: str, base: str, ours: str, theirs: str, marker: int = 7, path: str = "") -> int:
        """git's merge driver for one file (kind index, detail or episode; the paths git gives): the
        result replaces ours, through the write check. 0 merged, 1 conflicts left, 2 not UTF-8 and
        git could not merge it; a refusal raises MemcliError."""
        from .usecases.merge import merge_file

        return merge_file(kind, base, ours, theirs, marker, path)

    def reconcile_index(self) -> bool:
        """Bring MEMORY.md in line with the detail files, as after a git merge (markers settled as
        both sides, each memory once, lines to missing files dropped); whether the file changed."""
        from .usecases.git import reconcile_index

        return reconcile_index(self.store)

    def resolve(self, memory_id: str, side: str, now: str | None = None) -> Result:
        """Settle a memory left with git conflict markers: side is ours, theirs or both. A side not
        kept goes into the dated ## History section; the index line is refreshed."""
        from .dates import utcnow
        from .usecases.git import resolve

        return resolve(self.store, self.store.memory_id(memory_id), side, now or utcnow())

    # ---------- what the user decides, kept outside the root ----------
    def trust(self) -> Result:
        """Let this root's memcli.yaml, as it is now, run the commands it names (recorded in the
        user's state folder, keyed by the root's real path and the file's SHA-256)."""
        from .settings_guard import trust

        return Result(trust(self.root))

    def semantic_server(self):
        """The resident semantic step for this root (search.remote.Server: bind, then serve)."""
        from .search.server import Server

        return Server(self.store)


def _keywords(method, request, *first: str) -> None:
    """Give a method taking a request's fields as keywords the signature they make: its own
    parameters (self and ``first``), then each field offered to the Python API, with its default."""
    import inspect

    from .requests import REQUIRED

    own = list(inspect.signature(method).parameters.values())[: 1 + len(first)]
    made = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=d.default, annotation=kind)
        for name, (kind, d) in request.DOORS.items()
        if name not in first and "api" in d.at and d.default is not REQUIRED
    ]
    method.__signature__ = inspect.Signature(
        [*own, *made], return_annotation=inspect.signature(method).return_annotation
    )


def _signatures() -> None:
    from .requests import RecallRequest, RememberRequest, UpdateRequest

    _keywords(Memory.recall, RecallRequest, "query")
    _keywords(Memory.remember, RememberRequest, "title", "summary")
    _keywords(Memory.update, UpdateRequest, "memory_id")


_signatures()

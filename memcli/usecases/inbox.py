"""The inbox: proposals waiting for a person. Accepting applies one through the ordinary write path,
then archives it with its status and the memory's id: the record that makes a second decision (on
another clone, after a sync) a no-op that says so. `Gate` is `write.gate` for one front end."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from ..dates import utcnow
from ..errors import FileError, NotFoundError, SecretError, UsageError
from ..model import DEFAULT_IMPORTANCE, DEFAULT_TYPE, TYPES, Result, WriteResult, importance_of, one_line
from ..requests import RememberRequest, UpdateRequest
from ..safety.writecheck import WriteCheck, mask
from ..store import inbox as store
from ..store.fs import read_text
from ..paths import check_id, memory_ref, slugify
from . import write

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store.root import Root


def captured(root, p: store.Proposal) -> tuple[store.Proposal, list]:
    """The one filter every proposal's captured text passes on its way into a committed file: secrets
    by `write.secrets`, personal data by `write.pii_captured`. (The proposal, what was redacted.)"""
    texts = {"title": p.title, "summary": p.summary, "text": p.text, "tags": p.tags, "aliases": p.aliases}
    quoted = tuple(q.text for q in p.evidence)
    fields, redacted = WriteCheck(root.config["write.secrets"]).secrets({**texts, "quotes": quoted})
    fields, _ = mask(root, fields, captured=True)
    quotes = tuple(store.Quote(q.role, q.time, q.episode, t) for q, t in zip(p.evidence, fields["quotes"]))
    return p.replace(**{k: fields[k] for k in texts}, evidence=quotes), redacted


def check(p: store.Proposal) -> None:
    """A proposal memcli can apply: a known kind and type, a title, a target for an update."""
    from ..safety.text_limits import check_sizes, check_text_field

    if p.kind not in store.KINDS:
        raise UsageError(f"a proposal's kind must be new or update, got {p.kind!r}")
    if p.type not in TYPES:
        raise UsageError(f"a proposal's type must be one of {', '.join(TYPES)}, got {p.type!r}")
    if p.kind == "update" and not p.target:
        raise UsageError("an update proposal needs the target memory's id")
    if not p.title:
        raise UsageError("a proposal needs a title")
    if p.target:
        check_id(p.target)
    for name, value in (("title", p.title), ("summary", p.summary), ("text", p.text)):
        check_text_field(value, f"proposal {name}")
    for q in p.evidence:
        check_text_field(q.text, "evidence turn")
    body = p.text + "".join(q.text for q in p.evidence)
    check_sizes({"title": p.title, "summary": p.summary, "tags": p.tags, "aliases": p.aliases, "body": body})


def store_proposals(root, proposals: list, now: str | None = None) -> Result:
    """Write proposals into memory/inbox/ (what is pending or decided left out), then apply
    `inbox.auto_accept`: {"proposed", "skipped", "accepted"} and the warnings."""
    now = now or utcnow()
    written, skipped, warnings, redactions = [], [], [], 0
    with root.lock():
        known = store.known_ids(root.path)
        for p in proposals:
            if p.id in known:
                skipped.append({"id": p.id, "why": "already proposed or decided"})
                continue
            try:
                check(p)
                p, redacted = captured(root, p)
            except (UsageError, SecretError) as e:
                skipped.append({"id": p.id, "why": e.message})
                continue
            redactions += len(redacted)
            store.write(root.path, p.replace(created=p.created or now))
            known.add(p.id)
            written.append(p)
    if redactions:
        warnings.append(f"redacted {redactions} secret(s) in proposals")
    auto, floor = set(root.config["inbox.auto_accept"]), float(root.config["inbox.auto_accept_confidence"])
    accepted = [accept(root, p.id, now=now) for p in written if p.type in auto and p.confidence >= floor]
    warnings += [w for a in accepted for w in a.warnings]
    return Result({"proposed": [p.id for p in written], "skipped": skipped, "accepted": accepted}, warnings)


def _not_found(root, pid: str) -> NotFoundError:
    ids = [p.id for p in store.pending(root.path)[0]]
    close = [i for i in ids if pid in i][:3]
    hint = f"; did you mean {', '.join(close)}?" if close else "; `memcli inbox` lists the proposals"
    return NotFoundError(f"no proposal {pid!r} in memory/inbox/{hint}", data={"candidates": close})


def _source(p: store.Proposal) -> str:
    refs = sorted({q.episode for q in p.evidence if q.episode})
    return one_line(f"inbox {p.id}" + (f" ({', '.join(refs)})" if refs else ""))[:500]


def _already(root, pid: str) -> Result:
    """What deciding on a proposal decided before says (NotFoundError when there is none)."""
    done = store.decided(root.path, pid)
    if done is None:
        raise _not_found(root, pid)
    what = f"{done.status} on {(done.decided or '?')[:10]}" + (f" as {done.memory}" if done.memory else "")
    said = {"memory": done.memory, "status": done.status, "message": f"{pid} was already {what}; nothing to do"}
    return Result({"id": pid, "action": "already", **said})


def accept(root, pid: str, now: str | None = None, *, id: str | None = None, title: str | None = None) -> Result:
    """Apply one proposal ({"id", "action": accepted|already, "memory", "message", ...}); `id` and
    `title` rename the memory it becomes and fix its title first."""
    now = now or utcnow()
    with root.lock():
        if not store.path(root.path, pid).is_file():
            return _already(root, pid)
        p = _read_pending(root, pid)
        if id is not None or title is not None:
            p, _ = captured(root, renamed(p, id, title))
        check(p)
        result = _apply(root, p, now)
        store.archive(root.path, p.replace(status="accepted", decided=now, memory=result.id))
    said = {"memory": result.id, "write": result.action, "path": result.path}
    message = f"{pid} → {result.action} {result.id}"
    return Result({"id": pid, "action": "accepted", **said, "message": message}, result.warnings)


def renamed(p: store.Proposal, id: str | None = None, title: str | None = None) -> store.Proposal:
    """The proposal with the memory id it becomes and its title as a reviewer fixed them."""
    if id is not None:
        if p.kind == "update":
            raise UsageError(f"{p.id} updates {p.target}; a new id is for a proposal of a new memory")
        p = p.replace(target=check_id(id))
    if title is not None:
        if not one_line(title):
            raise UsageError("the title must not be blank")
        p = p.replace(title=one_line(title))
    return p


def _read_pending(root, pid: str) -> store.Proposal:
    """A pending proposal to decide on; one left with git conflict markers must be settled first."""
    from ..store import markers

    text = read_text(store.path(root.path, pid), store.rel(pid))
    line = markers.first_conflict(text)
    if line is not None:
        raise FileError(
            f"{store.rel(pid)}:{line}: unresolved git conflict markers; edit the file (keep one "
            f"side, delete the marker lines), then decide on it"
        )
    return store.parse(text, pid, store.rel(pid))


def _apply(root, p: store.Proposal, now: str):
    """The write a proposal stands for, through write.remember_request / write.update_request."""
    target = p.target if p.kind == "update" else (p.target or slugify(p.title))
    exists = target and (root.detail_path(target).is_file() or root.detail_path(target, archived=True).is_file())
    if p.kind == "new" and not exists:
        req = RememberRequest(p.title, p.summary, p.tags, p.aliases, p.text, p.type, p.importance, p.pinned or None)
        source = f"{p.source} ({_source(p)})" if p.source else _source(p)
        return write.remember_request(root, req.replace(expires=p.expires, id=target, source=source, now=now))
    if not exists or not target:
        raise NotFoundError(
            f"{p.id} updates {target!r}, which is not a memory (any more); reject it, or edit "
            f"its target with `memcli inbox edit {p.id}`"
        )
    current = root.get(target)
    if _source(p) in (current.source or "") or (p.text and p.text in current.body):
        return WriteResult("unchanged", target, current.path, True)  # applied before (a crash, a merge)
    summary = p.summary if p.summary and p.summary != current.summary else None
    text = p.text if p.kind == "update" or p.text else ""
    if p.kind == "new" and not text and summary is None:
        text = p.title
    append = f"{text}\n\n(from {_source(p)}, {now[:10]})" if text else None
    changes = dict(p.changes) if p.kind == "update" else {}
    return write.update_request(
        root, UpdateRequest(target, summary=summary, append=append, tags=p.tags, aliases=p.aliases, now=now, **changes)
    )


def reject(root, pid: str, now: str | None = None) -> Result:
    now = now or utcnow()
    with root.lock():
        if not store.path(root.path, pid).is_file():
            return _already(root, pid)
        p = _read_pending(root, pid)
        store.archive(root.path, p.replace(status="rejected", decided=now))
    kept = store.rel(pid, archived=True)
    return Result({"id": pid, "action": "rejected", "path": kept, "message": f"{pid} rejected (kept in {kept})"})


def select(root, ids=(), all: bool = False, type: str | None = None) -> list:
    """The ids to act on: the given ones, or every pending one (of a type)."""
    if ids and all:
        raise UsageError("give proposal ids or --all, not both")
    if not ids and not all:
        raise UsageError("which proposals? give their ids, or --all")
    if type is not None and type not in TYPES:
        raise UsageError(f"--type must be one of {', '.join(TYPES)}, got {type!r}")
    if ids:
        ids = list(dict.fromkeys(memory_ref(i) for i in ids))  # memory/inbox/<id>.md names the id too
        for pid in ids:  # every id checked before anything is written
            if not (store.path(root.path, pid).is_file() or store.path(root.path, pid, archived=True).is_file()):
                raise _not_found(root, pid)
        return ids
    return [p.id for p in store.pending(root.path)[0] if type is None or p.type == type]


@dataclass
class Gate:
    """remember and update for one front end under write.gate: direct, or proposals in the inbox."""

    root: Root
    front_end: str

    @property
    def mode(self) -> str:
        from ..config import write_gate

        return write_gate(self.root.config, self.front_end)

    def remember(self, req: RememberRequest):
        """The request written, or kept whole in a proposal (every option: accepting it later
        writes what was asked)."""
        if self.mode == "direct":
            return write.remember_request(self.root, req)
        from ..dates import expires_at
        from ..store import frontmatter

        req, extra = write.with_frontmatter(req)
        created = req.now or utcnow()
        expires = expires_at(req.expires, created)
        if not one_line(req.title or ""):
            raise UsageError("a title is required and must not be blank")
        own = frontmatter.fenced([frontmatter.dump_key(k, v) for k, v in extra.items()]) if extra else ""  # kept too
        return self._proposed(
            "new",
            req.title or "",
            req,
            created,
            type=req.type or DEFAULT_TYPE,
            text=own + req.body,
            importance=DEFAULT_IMPORTANCE if req.importance is None else req.importance,
            pinned=bool(req.pinned),
            expires=expires,
            source=req.source,
        )

    def update(self, req: UpdateRequest):
        """The request written, or kept whole in a proposal: its summary, tags, aliases and appended
        text as a proposal shows them, the rest (a new title or type, tags to remove, importance,
        pinning, expiry) in its ``changes``; accepting it makes every change asked."""
        req = req.replace(id=self.root.memory_id(req.id))  # as every command takes it: an id, a path, a file
        if self.mode == "direct":
            return write.update_request(self.root, req)
        from ..dates import expires_at

        current = self.root.get(req.id)
        created = req.now or utcnow()
        changes = {k: getattr(req, k) for k in store.CHANGES}
        if req.importance is not None:
            changes["importance"] = importance_of(req.importance, strict=True)
        if req.expires is not None and req.expires != "never":
            changes["expires"] = expires_at(req.expires, created)  # the date it means today, not on accepting
        title, kind = req.title or current.title, req.type or current.type
        return self._proposed("update", title, req, created, type=kind, text=req.append or "", changes=changes)

    def _proposed(self, kind: str, title: str, req, created: str, **fields) -> WriteResult:
        """The request as a proposal in the inbox (or, auto-accepted, written), within the inbox's
        caps as a proposal `propose` hands over is (``caps``)."""
        from . import caps

        shown = {"title": title, "summary": req.summary or "", "tags": list(req.tags or ()), "text": fields["text"]}
        caps.within(self.root, [shown], created)
        p = store.make(
            kind,
            title,
            summary=req.summary or "",
            target=req.id,
            engine=self.front_end,
            confidence=1.0,
            created=created,
            tags=req.tags,
            aliases=req.aliases,
            **fields,
        )
        res = store_proposals(self.root, [p])
        caps.count(self.root, len(res["proposed"]), created)
        if not res["proposed"]:
            raise UsageError(f"not proposed: {res['skipped'][0]['why']}" if res["skipped"] else "not proposed")
        out = WriteResult("proposed", p.id, store.rel(p.id), False, warnings=list(res.warnings))
        if res["accepted"]:
            a = res["accepted"][0]
            out = WriteResult("accepted", a["memory"], a["path"], False, warnings=out.warnings + a.warnings)
        return out


class Inbox:
    """`Memory.inbox`: list, get, accept, reject, edit, stale; ids exact (fuzzy only in hints)."""

    def __init__(self, root):
        self.root = root

    def list(self) -> tuple[list, list]:
        """(pending proposals, oldest first; files that could not be read)."""
        return store.pending(self.root.path)

    def get(self, pid: str) -> store.Proposal:
        """A pending proposal, else a decided one; NotFoundError naming the pending ids."""
        pid = memory_ref(pid)
        for archived in (False, True):
            if store.path(self.root.path, pid, archived).is_file():
                return store.read(self.root.path, pid, archived)
        raise _not_found(self.root, pid)

    def raw(self, p: store.Proposal) -> str:
        """A proposal's file as it is written (pending or decided)."""
        return self.root.read(p.path)

    def accept(
        self,
        ids=(),
        *,
        all: bool = False,
        type: str | None = None,
        now: str | None = None,
        id: str | None = None,
        title: str | None = None,
    ) -> builtins.list:
        """Apply proposals through the ordinary write path; one result each (see `accept`). `id` and
        `title` (one proposal only) rename the memory it becomes and fix its title."""
        if (id is not None or title is not None) and (all or len(list(ids or ())) != 1):
            raise UsageError("a new id or title is for one proposal: give exactly one proposal id")
        return [accept(self.root, pid, now, id=id, title=title) for pid in select(self.root, ids, all, type)]

    def reject(self, ids=(), *, all: bool = False, type: str | None = None, now: str | None = None) -> builtins.list:
        return [reject(self.root, pid, now) for pid in select(self.root, ids, all, type)]

    def propose(self, proposals: builtins.list, now: str | None = None) -> dict:
        """Write Proposals (memcli.store.inbox.make) into the inbox; auto-accept applies."""
        return store_proposals(self.root, proposals, now)

    def edit_text(self, pid: str) -> str:
        """A pending proposal's file, for an editor."""
        pid = memory_ref(pid)
        if not store.path(self.root.path, pid).is_file():
            raise _not_found(self.root, pid)
        return read_text(store.path(self.root.path, pid), store.rel(pid))

    def edit_begin(self, pid: str) -> tuple:
        """(a draft copy under .memcli/edits/ for an editor, the text it was copied from)."""
        before = self.edit_text(pid)
        return store.draft(self.root.path, pid, before), before

    def edit_finish(self, pid: str, before: str, after: str) -> dict:
        """Write an edited proposal: it must still parse and be applicable; a file changed
        meanwhile is not overwritten (UsageError names the way out)."""
        pid = memory_ref(pid)
        if after == before:
            return Result({"id": pid, "action": "unchanged", "path": store.rel(pid)})
        p = store.parse(after, pid, store.rel(pid))
        check(p)
        p, _ = captured(self.root, p)
        with self.root.lock():
            path = store.path(self.root.path, pid)
            if not path.is_file() or read_text(path, store.rel(pid)) != before:
                raise UsageError(f"{store.rel(pid)} changed or was decided while you edited it; nothing was written")
            store.write(self.root.path, p)
        return Result({"id": pid, "action": "edited", "path": store.rel(pid)})

    def stale(self, now=None) -> builtins.list:
        return store.waiting(self.root.path, self.root.config.seconds("inbox.max_age"), now)

    def search(self, query: str, limit: int | None = None) -> builtins.list:
        """Hits among the pending proposals (layer "inbox"), for `recall --inbox`."""
        return search(self.root, query, limit)


def search(root, query: str, limit: int | None = None) -> list:
    """Hits (layer "inbox") among the pending proposals: title, summary, tags, text and quotes."""
    from ..dates import now_of
    from ..model import Hit
    from ..search.ranker import MemoryIndex, SearchDoc
    from ..search.snippet import snippet

    items = store.pending(root.path)[0]
    if not items or not query.strip():
        return []
    docs = [
        SearchDoc(
            key=p.id,
            title=p.title,
            summary=p.summary,
            tags=p.tags,
            aliases=p.aliases,
            body="\n\n".join([p.text, *(q.text for q in p.evidence)]),
            importance=p.importance,
            updated=p.created,
        )
        for p in items
    ]
    by_id = {p.id: p for p in items}
    k = int(limit or root.config["recall.limit"])
    found = MemoryIndex(docs).search(query, limit=k, now=now_of())
    out = []
    for s in found:
        p = by_id[s.key]
        out.append(
            Hit(
                "inbox",
                p.id,
                p.title,
                store.rel(p.id),
                s.score,
                snippet(p.text or (p.evidence[0].text if p.evidence else ""), query),
                p.summary,
                p.tags,
                tuple(getattr(s, "matched", ()) or ()),
            )
        )
    return out

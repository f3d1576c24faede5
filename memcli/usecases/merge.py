"""memcli's git merge drivers: the three versions git gives of a file memcli keeps (%O the ancestor,
%A ours, where the result goes, %B theirs) merged as docs/guide/git.md says. Every driver is
symmetric: merging B into A gives the same bytes as A into B, so two machines that merged the same
histories hold the same files. git runs them through ``memcli.gitmerge``, which calls ``merge_file``."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..merge3 import merge3 as _merge3
from ..merge3 import merged_lines, union_lines


def merge3(base: list, a: list, b: list) -> list:
    """memcli's one three-way merge keeping both sides' additions at one place: then the result does
    not depend on which side is ours."""
    return _merge3(base, a, b, keep_both=True)


def _lines(text: str) -> list:
    return text.split("\n")


def merge_index(base: str, ours: str, theirs: str) -> str:
    """The merged MEMORY.md (symmetric in ours and theirs; never conflicts)."""
    from ..model import Entry
    from ..store.index import IndexDoc, render_line

    docs = [IndexDoc.parse(t) for t in (base, ours, theirs)]
    slot = "\x00memcli-entry\x00"
    skel = [[slot if isinstance(x, Entry) else x for x in d.lines] for d in docs]
    sO, sA, sB = skel
    if sA == sB or sB == sO:
        lines = sA
    elif sA == sO:
        lines = sB
    else:
        lines = union_lines(merge3(sO, sA, sB))

    # id -> (position, entry) of its first line
    o, a, b = ({e.id: (pos, e) for pos, e in reversed(list(enumerate(d.entries))) if e.id} for d in docs)
    removed = {i for i in o if i not in a or i not in b}
    chosen: dict = {}
    for i in (set(a) | set(b)) - removed:
        ea, eb, eo = a.get(i, (None, None))[1], b.get(i, (None, None))[1], o.get(i, (None, None))[1]
        if ea is None or eb is None:
            chosen[i] = ea or eb
            continue
        la, lb = render_line(ea), render_line(eb)
        if la == lb:
            chosen[i] = ea if (ea.raw or la) >= (eb.raw or lb) else eb
        elif eo is not None and render_line(eo) == la:
            chosen[i] = eb
        elif eo is not None and render_line(eo) == lb:
            chosen[i] = ea
        else:
            chosen[i] = ea if la > lb else eb
    inf = float("inf")
    order = sorted(chosen, key=lambda i: (min(a.get(i, (inf,))[0], b.get(i, (inf,))[0]), render_line(chosen[i]), i))
    entries = [chosen[i] for i in order]
    plain = [Entry("slot") if x == slot else x for x in lines]
    newline = docs[1].newline if docs[1].newline == docs[2].newline else docs[0].newline
    final = docs[1].final_newline and docs[2].final_newline
    return IndexDoc(plain, newline, final).with_entries(entries).render()


_MISSING = object()
_LISTS = ("tags", "aliases")
_FIELDS = ("title", "summary", "tags", "aliases", "type", "importance", "pinned", "expires", "source")


def _pick(o, a, b, a_wins: bool):
    if a == b:
        return a
    if o is not _MISSING and a == o:
        return b
    if o is not _MISSING and b == o:
        return a
    return a if a_wins else b


def _pick_list(o, a, b, a_wins: bool):
    if a == b or (o is not _MISSING and b == o):
        return a
    if o is not _MISSING and a == o:
        return b
    gone = set() if o is _MISSING else (set(o) - set(a)) | (set(o) - set(b))
    first, second = (a, b) if a_wins else (b, a)
    return tuple(dict.fromkeys(x for x in (*first, *second) if x not in gone))


def merge_detail(base: str, ours: str, theirs: str, memory_id: str, marker: int = 7) -> tuple[str, int]:
    """(merged text, number of body conflicts). Symmetric when there is no conflict."""
    from ..store import details as dfile

    try:
        o = dfile.parse(base, memory_id) if base.strip() else None
        a = dfile.parse(ours, memory_id)
        b = dfile.parse(theirs, memory_id)
    except dfile.FrontmatterError:
        lines, n = merged_lines(merge3(_lines(base), _lines(ours), _lines(theirs)), marker)
        return "\n".join(lines), n
    ra, rb = dfile.render(a), dfile.render(b)
    a_wins = ((a.updated or a.created or ""), ra) >= ((b.updated or b.created or ""), rb)
    win, lose = (a, b) if a_wins else (b, a)
    new = {}
    for key in _FIELDS:
        vo = getattr(o, key) if o is not None else _MISSING
        pick = _pick_list if key in _LISTS else _pick
        new[key] = pick(vo, getattr(a, key), getattr(b, key), a_wins)
    new["created"] = min(filter(None, (a.created, b.created)), default=None)
    new["updated"] = max(filter(None, (a.updated, b.updated)), default=None)
    extra = {}
    for key in dict.fromkeys([*win.extra, *lose.extra]):
        vo = o.extra.get(key, _MISSING) if o is not None else _MISSING
        va, vb = a.extra.get(key, _MISSING), b.extra.get(key, _MISSING)
        v = _pick(vo, va, vb, a_wins)
        if v is not _MISSING:
            extra[key] = v
    history = []
    if new["title"] != lose.title and lose.title not in (getattr(o, "title", None), None):
        history.append(f"title was: {lose.title}")
        new["aliases"] = tuple(dict.fromkeys((*new["aliases"], lose.title)))
    if new["summary"] != lose.summary and lose.summary and lose.summary != getattr(o, "summary", None):
        history.append(f"summary was: {lose.summary}")
    # Outcome counters add up (base + both sides' increments) and the ## Outcomes notes merge as a set.
    from ..store.outcomes import merge as merge_outcomes

    o, a, b, outcomes_done = merge_outcomes(o, a, b)
    regions = merge3(_lines(o.body if o is not None else ""), _lines(a.body), _lines(b.body))
    lines, n = merged_lines(regions, marker)
    body = "\n".join(lines)
    fresh = [h for h in history if f": {h}" not in body]
    if fresh:
        body = dfile.add_history(body, (lose.updated or lose.created or new["updated"] or "")[:10], fresh)
    merged = outcomes_done(a.replace(body=body, extra=extra, **new))
    return dfile.render(merged), n


def merge_episode(base: str, ours: str, theirs: str) -> str:
    """Both sides' sections in time order; a section one side edited or removed follows that side."""
    from ..store.episodes import split

    (po, so), (pa, sa), (pb, sb) = (split(t) for t in (base, ours, theirs))
    pre = _pick(po, pa, pb, pa >= pb)
    set_o, set_a, set_b = set(so), set(sa), set(sb)
    keep = {s for s in set_a | set_b if not (s in set_o and (s not in set_a or s not in set_b))}
    ordered = sorted(keep, key=lambda s: (s.split("\n", 1)[0][3:23], s))
    return (pre + "\n" if pre else "") + "".join("\n" + s + "\n" for s in ordered)


def merge_bytes(base_path: str, ours_path: str, theirs_path: str, marker: int = 7) -> int:
    """`git merge-file` for a file that is not UTF-8, into ours_path: 0 merged, 1 conflicts left, 2 failed."""
    import subprocess

    labels = ["-L", "ours", "-L", "base", "-L", "theirs"]
    cmd = ["git", "merge-file", f"--marker-size={marker}", *labels, ours_path, base_path, theirs_path]
    try:
        code = subprocess.run(cmd, capture_output=True).returncode
    except OSError:
        return 2
    return 0 if code == 0 else 1 if 0 < code < 128 else 2


# what each driver merges: the kinds of file (``paths.kind_of``) memcli keeps
OWNED = {"index": ("index",), "detail": ("detail", "archive", "proposal", "other"), "episode": ("episode",)}
OWNED_NAMES = "MEMORY.md, memory/**/*.md, memory/episodes/*.md"


def merge_file(kind: str, base_path: str, ours_path: str, theirs_path: str, marker: int = 7, path: str = "") -> int:
    """Merge the three files git gives (kind index, detail or episode; path as git gives it, %P)
    through the write check into ours_path: 0 merged, 1 conflicts left (2: git's own merge failed).
    A refusal, or a path this driver does not keep, raises MemcliError: git leaves the file conflicted."""
    from ..paths import kind_of

    root, rel = _holder(path)
    if kind_of(rel) not in OWNED.get(kind, ()):
        raise UsageError(
            f"{rel or 'a file without a path'} is not a file memcli's {kind} driver merges ({OWNED_NAMES}): "
            "left to git as a conflict; a .gitattributes line sends it here: remove it (`memcli heartbeat` names it)"
        )
    try:
        base, ours, theirs = (
            Path(p).read_bytes().decode("utf-8").lstrip("\ufeff") for p in (base_path, ours_path, theirs_path)
        )
    except UnicodeDecodeError:  # not memcli's text: git's merge, byte for byte
        return merge_bytes(base_path, ours_path, theirs_path, marker)
    conflicts = 0
    if kind == "index":
        text = merge_index(base, ours, theirs)
    elif kind == "episode":
        text = merge_episode(base, ours, theirs)
    else:
        text, conflicts = merge_detail(base, ours, theirs, Path(rel).stem, marker)
    text = checked(kind, text, path, conflicts, root, rel)
    Path(ours_path).write_bytes(text.encode("utf-8"))
    return 1 if conflicts else 0


def _holder(path: str) -> tuple:
    """(the root that holds the file git names, or None; the path from that root, else as given)."""
    from ..store.layout import is_root

    full = Path(path).absolute() if path else None
    root = next((d for d in full.parents if is_root(d)), None) if full is not None else None
    return root, full.relative_to(root).as_posix() if root is not None and full is not None else str(path)


def checked(kind: str, text: str, path: str, conflicts: int = 0, root=None, rel: str = "") -> str:
    """A merge's result through the one write check under the `write.secrets` of the root holding
    the file (the default policy when there is none or its settings cannot be read)."""
    from ..errors import MemcliError
    from ..safety.writecheck import check_merged

    policy = "refuse"
    if root is not None:
        from ..settings_guard import load_config

        try:
            policy = load_config(root)["write.secrets"]
        except MemcliError:
            pass  # an unreadable memcli.yaml: the default policy
    return check_merged(kind, text, Path(path).absolute() if path else None, rel or str(path), conflicts, policy)

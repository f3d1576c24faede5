"""One request per operation whose options cross several layers: what a door (the argv table and
Typer, MCP, the Python API, an agent hook) hands on, unchanged, through the facade and the write
gate to the use case that acts on it: `remember` and `update` (door, gate, proposal, use case) and
`recall` (door, the command's action, facade, use case).

Adding an option is a field here, its declaration at each door that offers it (a Typer option, a
row of ``cli/argv.py`` for a command the fast path answers, an MCP parameter, a keyword of
``Memory``), and the use case that acts on it; nothing between them changes. A door builds its
request with ``of(values)``: its parameters by name, the door's own spellings (``type_``, ``tag``,
``pin``) read through ``NAMES``, so a door passes what it parsed without naming each option again.

Slotted value classes (``model.Value``): a dataclass costs every turn its import.
"""

from __future__ import annotations

from .model import Value

# Parameter names of the doors that stand for a field (Python keywords and Typer's singular
# repeatable options), for every request.
NAMES = {
    "type_": "type",
    "id_": "id",
    "tag": "tags",
    "alias": "aliases",
    "untag": "untags",
    "pin": "pinned",
    "queries": "also",
}
LISTS = ("tags", "aliases", "untags", "also")  # repeatable: any iterable, kept as a tuple


class Request(Value):
    """A request's fields (``FIELDS``, in the constructor's order) and ``of``."""

    __slots__ = ()
    DEFAULTS: dict = {}  # a field's value when it is not given (None)
    FLAGS: tuple = ()  # fields a door gives as a flag: off means "not given" (None), not "no"

    def __init__(self, *args, **kw):
        if len(args) > len(self.FIELDS):
            raise TypeError(f"{type(self).__name__} takes at most {len(self.FIELDS)} fields")
        unknown = set(kw) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        given = dict(zip(self.FIELDS, args), **kw)
        for name in self.FIELDS:
            value = given.get(name)
            if value is None:
                value = self.DEFAULTS.get(name)
            if name in LISTS:
                value = tuple(value or ())
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, values: dict, **given) -> "Request":
        """The request a door parsed: ``values`` by parameter name (``NAMES`` maps a door's own
        spelling; ``None`` is "not given"), then ``given`` (what the door read itself, such as a
        text from stdin). A name that is no field is an error, never dropped."""
        fields: dict = {}
        for name, value in values.items():
            field = NAMES.get(name, name)
            if field not in cls.FIELDS:
                raise TypeError(f"{cls.__name__} has no field {field} (from the option {name!r})")
            if value is None or (field in cls.FLAGS and value is False):
                continue
            fields[field] = value
        fields.update(given)
        return cls(**fields)


class RememberRequest(Request):
    """One `remember`. Unset options are None (the body's frontmatter, then the defaults, fill
    them); the write gate keeps the whole request in a proposal."""

    FIELDS = (
        "title",
        "summary",
        "tags",
        "aliases",
        "body",
        "type",
        "importance",
        "pinned",
        "expires",
        "id",
        "source",
        "now",
    )
    DEFAULTS = {"summary": "", "body": ""}
    FLAGS = ("pinned",)
    __slots__ = FIELDS
    title: str
    summary: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    body: str
    type: str | None
    importance: float | None
    pinned: bool | None
    expires: str | None
    id: str | None
    source: str | None
    now: str | None


class UpdateRequest(Request):
    """One `update` of the memory ``id``: what to change (None and empty: leave it), ``append`` to
    add to the body, ``untags`` to remove."""

    FIELDS = (
        "id",
        "title",
        "summary",
        "append",
        "tags",
        "untags",
        "aliases",
        "type",
        "importance",
        "pinned",
        "expires",
        "now",
    )
    __slots__ = FIELDS
    id: str
    title: str | None
    summary: str | None
    append: str | None
    tags: tuple[str, ...]
    untags: tuple[str, ...]
    aliases: tuple[str, ...]
    type: str | None
    importance: float | None
    pinned: bool | None
    expires: str | None
    now: str | None


class RecallRequest(Request):
    """One `recall`: the question and how to look. ``also``: other phrasings of it (a translation,
    a paraphrase), fused by rank; ``strict``: only hits to act on (memory put into a prompt
    unasked); ``inbox``: proposals waiting for review too; ``type`` and ``min_success``: only
    memories of that type whose smoothed success rate reaches it."""

    FIELDS = (
        "query",
        "limit",
        "deep",
        "layer",
        "session",
        "scope",
        "threshold",
        "now",
        "type",
        "min_success",
        "inbox",
        "also",
        "strict",
    )
    DEFAULTS = {"deep": False, "session": "default", "scope": "default", "inbox": False, "strict": False}
    __slots__ = FIELDS
    query: str
    limit: int | None
    deep: bool
    layer: str | None
    session: str
    scope: str
    threshold: float | None
    now: str | None
    type: str | None
    min_success: float | None
    inbox: bool
    also: tuple[str, ...]
    strict: bool

"""One request per operation whose options cross several layers (`remember`, `update`, `recall`),
each field declared once with how it is offered (``Door``): the command line, the MCP tool and
``Memory``'s keywords are made from it (docs/architecture.md)."""

from typing import Any

from .model import DEFAULT_IMPORTANCE, DEFAULT_TYPE, Value

EVERY_DOOR = ("cli", "tool", "api")
REQUIRED: Any = object()  # the default of a field every door must give


class Door:
    """How a field is offered. ``flags``: its command-line option names (none: an argument);
    ``tool``: the MCP description when it differs from ``help``, ``name`` the parameter's name
    there; ``at``: the doors offering it (cli, tool, api); ``ge``/``le``/``most``: bounds a tool
    states; ``choices``: "layers" or "types"; ``complete``: what the shell completes (tags, ids,
    layers); ``stdin``: '-' reads standard input on the command line."""

    __slots__ = (
        *("default", "help", "flags", "metavar", "tool", "name", "at"),
        *("ge", "le", "most", "choices", "complete", "stdin"),
    )

    def __init__(self, default: Any, help: str, flags: tuple[str, ...] = (), **door: Any):
        self.default, self.help, self.flags = default, help, flags
        self.at: tuple[str, ...] = door.pop("at", EVERY_DOOR)
        self.stdin: bool = door.pop("stdin", False)
        self.metavar = self.tool = self.name = self.choices = self.complete = None
        self.ge = self.le = self.most = None
        for key, value in door.items():
            setattr(self, key, value)  # an unknown key is an AttributeError: the slots are the keys


def option(default: Any, help: str, *flags: str, **door: Any) -> Any:
    """A field with a default, offered as ``Door`` says."""
    return Door(default, help, flags, **door)


def argument(help: str, **door: Any) -> Any:
    """A field every door must give."""
    return Door(REQUIRED, help, **door)


class Request(Value):
    """A request: its fields are the annotated class attributes holding a ``Door`` (``DOORS``: name
    -> (type, door)); None given for a field is its default; a repeatable field takes any iterable."""

    DOORS: dict[str, tuple[Any, Door]] = {}
    FLAGS: tuple[str, ...] = ()  # given as a flag at a door: off means "not given" (None)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        own = cls.__dict__.get("__annotations__", {})
        cls.DOORS = {
            **cls.DOORS,
            **{n: (t, cls.__dict__[n]) for n, t in own.items() if isinstance(cls.__dict__.get(n), Door)},
        }
        cls.FIELDS = tuple(cls.DOORS)

    def __init__(self, *args: Any, **kw: Any):
        if len(args) > len(self.FIELDS):
            raise TypeError(f"{type(self).__name__} takes at most {len(self.FIELDS)} fields")
        unknown = set(kw) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        given = dict(zip(self.FIELDS, args), **kw)
        for name, (_, door) in self.DOORS.items():
            value = given.get(name)
            if value is None:
                if door.default is REQUIRED:
                    raise TypeError(f"{type(self).__name__} needs {name}")
                value = door.default
            if isinstance(door.default, tuple):
                value = tuple(value or ())
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, values: dict, **given: Any):
        """The request a door parsed: ``values`` by field (or door) name, None for "not given", then
        ``given`` (what the door read itself, such as stdin). A name that is no field is an error."""
        names = {door.name or n: n for n, (_, door) in cls.DOORS.items()} | {n: n for n in cls.DOORS}
        chosen: dict = {}
        for name, value in values.items():
            if name not in names:
                raise TypeError(f"{cls.__name__} has no field {name} (from the option {name!r})")
            if value is None or (names[name] in cls.FLAGS and value is False):
                continue
            chosen[names[name]] = value
        return cls(**{**chosen, **given})


LAYERS_HELP = "Search only this layer"
SESSION = (
    "Session name (default: the agent's own session, CLAUDE_CODE_SESSION_ID, which the Claude Code hook records "
    "turns under; else MEMCLI_SESSION; else 'default')."
)
KINDS = "fact | preference | lesson | procedure | event | note"
EXPIRES = "A date (2027-01-31) or a duration from now (30d); 'never' clears it."


class RecallRequest(Request):
    """One `recall`: the question and how to look (``Memory.recall`` says what each option does)."""

    query: str = argument(
        "What to look for ('-' reads stdin).",
        tool="What to look for, in the user's words (Chinese or English).",
        stdin=True,
    )
    limit: int | None = option(
        None, "At most this many hits.", "--limit", "-k", metavar="N", ge=1, le=100,
        tool="At most this many hits (default: recall.limit).",
    )  # fmt: skip
    deep: bool = option(
        False, "Search every layer and merge (not with --layer).", "--deep",
        tool="Search every layer and merge the hits instead of stopping at the first that answers.",
    )  # fmt: skip
    layer: str | None = option(
        None, LAYERS_HELP, "--layer", "-l", choices="layers", complete="layers",
        tool="Search only this layer. Leave empty for the cascade (cheapest layer first).",
    )  # fmt: skip
    threshold: float | None = option(
        None,
        "The confidence a hit needs to count as an answer and to be injected (default recall.threshold, fitted); "
        "0 counts every hit.",
        "--threshold", metavar="FLOAT", at=("cli", "api"),
    )  # fmt: skip
    inbox: bool = option(
        False, "Also search the proposals waiting in memory/inbox/.", "--inbox",
        tool="Also search proposals waiting for review in memory/inbox/ (layer 'inbox'; not yet accepted by a person).",
    )  # fmt: skip
    type: str | None = option(
        None,
        "Only memories of this type (e.g. procedure).",
        "--type",
        choices="types",
        tool="What kind of memory it is.",
    )
    min_success: float | None = option(
        None, "Only memories whose smoothed success rate (memcli outcome) reaches RATE, 0..1.", "--min-success",
        metavar="RATE", ge=0, le=1,
        tool="Only memories whose smoothed success rate (report_outcome) reaches this, e.g. 0.7 with type procedure.",
    )  # fmt: skip
    also: tuple[str, ...] = option(
        (),
        "Another phrasing of the same question (repeatable): a translation into the other language, a paraphrase. "
        "The results are fused by rank.",
        "--also", metavar="TEXT", name="queries", most=8,
        tool="Other phrasings of the same question, fused with it by rank: when the memory holds both Chinese and "
        "English, the question translated into the other language; a paraphrase with other words. Recall matches "
        "words, so a translation finds memories written in the other language.",
    )  # fmt: skip
    strict: bool = option(
        False, "Only hits reaching the threshold, never weak candidates: for memory put into a prompt.", "--strict",
        at=("cli", "api"),
    )  # fmt: skip
    session: str = option("default", SESSION, at=("tool", "api"))
    scope: str = option("default", "Scope (task) name (default: MEMCLI_SCOPE or 'default').", at=("tool", "api"))
    now: str | None = option(None, "The time it is (an ISO stamp; default: now).", at=("api",))


class RememberRequest(Request):
    """One `remember`. Unset options are None (the body's frontmatter, then the defaults, fill
    them); the write gate keeps the whole request in a proposal."""

    FLAGS = ("pinned",)
    title: str = argument(
        "One line naming the memory ('-' reads stdin).", tool="One line naming the memory (under 200 characters).",
        stdin=True,
    )  # fmt: skip
    summary: str = option(
        "", "The conclusion, in one line ('-' reads stdin).", tool="The conclusion in one line: what to do or know.",
        stdin=True,
    )  # fmt: skip
    tags: tuple[str, ...] = option(
        (), "A tag (repeatable).", "--tag", "-t", complete="tags", tool="Short topic tags, e.g. ['mysql', 'encoding']."
    )
    aliases: tuple[str, ...] = option(
        (), "Another name it is known by (repeatable).", "--alias", "-a",
        tool="Other names the memory may be asked by. Include the title translated into the other language (Chinese "
        "for an English title, English for a Chinese one): recall matches words, so an alias is what lets a question "
        "in one language find a memory written in the other.",
    )  # fmt: skip
    body: str = option(
        "", "The full text ('-' reads stdin).", "--body", "-b", metavar="TEXT", stdin=True,
        tool="The full text in Markdown: context, steps, why.",
    )  # fmt: skip
    type: str | None = option(
        None, f"{KINDS} (default {DEFAULT_TYPE})", "--type", choices="types", tool="What kind of memory it is."
    )
    importance: float | None = option(
        None, f"0..1 (default {DEFAULT_IMPORTANCE})", "--importance", "-i", metavar="0..1", ge=0, le=1,
        tool="0..1; higher ranks first.",
    )  # fmt: skip
    pinned: bool | None = option(None, "Always keep it in MEMORY.md.", "--pin")
    expires: str | None = option(
        None, "A date (2027-01-31) or a duration (30d).", "--expires", metavar="DATE|30d", tool=EXPIRES
    )
    id: str | None = option(None, "Use this id instead of one made from the title.", "--id")
    source: str | None = option(None, "Where it came from.", "--source")
    now: str | None = option(None, "The time it is (an ISO stamp; default: now).", at=("api",))


class UpdateRequest(Request):
    """One `update` of the memory ``id``: what to change (None and empty: leave it), ``append`` to
    add to the body, ``untags`` to remove."""

    id: str = argument(
        "The exact id or its file (memory/ID.md).", metavar="ID", complete="ids",
        tool="The memory's exact id, as returned by remember, recall or list (the file memory/<id>.md).",
    )  # fmt: skip
    title: str | None = option(None, "New title (the old one becomes an alias).", "--title", metavar="TEXT")
    summary: str | None = option(
        None, "New summary ('-' reads stdin).", "--summary", "-s", metavar="TEXT", stdin=True,
        tool="New summary; the old one goes to ## History.",
    )  # fmt: skip
    append: str | None = option(
        None, "Text to add to the body ('-' reads stdin).", "--append", metavar="TEXT", stdin=True,
        tool="Text to add at the end of the body.",
    )  # fmt: skip
    tags: tuple[str, ...] = option((), "Add a tag.", "--tag", "-t", complete="tags", tool="Tags to add.")
    untags: tuple[str, ...] = option((), "Remove a tag.", "--untag", metavar="TAG", complete="tags")
    aliases: tuple[str, ...] = option(
        (), "Add an alias.", "--alias", "-a", tool="Aliases to add (other language welcome)."
    )
    type: str | None = option(None, KINDS, "--type", choices="types", tool="What kind of memory it is.")
    importance: float | None = option(
        None, "0..1", "--importance", "-i", metavar="0..1", ge=0, le=1, tool="0..1; higher ranks first in MEMORY.md."
    )
    pinned: bool | None = option(
        None, "Keep it in MEMORY.md always, or not.", "--pin/--unpin", tool="Pin (true) or unpin (false)."
    )
    expires: str | None = option(
        None, "A date, a duration (30d) or 'never'.", "--expires", metavar="DATE|30d|never", tool=EXPIRES
    )
    now: str | None = option(None, "The time it is (an ISO stamp; default: now).", at=("api",))

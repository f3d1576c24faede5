"""The parts of docs/ made from the code, so they cannot drift from it: the commands by task and
every command's `--help` (from the Typer app, run in a clean child process as README's blocks
are: tests/readme_blocks.py), the Python API (from the facade's signatures and docstrings), the
configuration keys (from memcli/config.py's SCHEMA and memcli/settings_guard.py's GUARDS), the error
codes (from the MemcliError classes), the test extra (from pyproject.toml) and transcripts of
real runs.

The pages hold them between cog markers; `python -m cogapp -r README.md CONTRIBUTING.md
docs/*.md docs/*/*.md` rewrites them, and tests/test_readme_blocks.py fails when a page and the
code disagree. What cannot be made from the code (what a key is for, why a key may or may not be
loosened, which task a command serves) is written here, keyed by name: a key, guard or command
added without its words here makes the generation fail, so the page can never silently omit it."""

from __future__ import annotations

import inspect
import re
import shlex

from tests.readme_blocks import REPO, commands, command_table, helps, session

# ---------------------------------------------------------------- commands by task

TASKS = (
    ("Write and change memories", ("init", "remember", "update", "edit", "rename", "forget", "restore", "outcome")),
    ("Read and find", ("show", "list", "search", "stats")),
    ("Recall for an agent", ("recall", "should-recall", "context")),
    (
        "Sessions and shared scopes",
        (
            "session add",
            "session show",
            "session clear",
            "scope start",
            "scope set",
            "scope get",
            "scope read",
            "scope show",
            "scope check",
            "scope end",
        ),
    ),
    ("Keep it healthy", ("heartbeat", "watch", "index rebuild", "index check")),
    ("Learn from sessions", ("reflect", "inbox", "inbox show", "inbox accept", "inbox reject", "inbox edit")),
    ("Share through git", ("git setup", "sync", "resolve", "merge index", "merge detail", "merge episode")),
    (
        "Agents",
        (
            "agents add",
            "agents list",
            "agents remove",
            "doctor",
            "mcp",
            "hook claude-code",
            "hook allow",
            "hook deny",
            "hook list",
            "serve",
        ),
    ),
    ("Move memories in and out", ("export", "import")),
    ("Trust and plugins", ("trust", "plugins")),
)


def _anchor(name: str) -> str:
    """The id MkDocs gives the CLI reference's heading `memcli NAME`."""
    return "memcli-" + name.replace(" ", "-")


def commands_by_task(cli: str = "../cli.md") -> str:
    """One table per task (every command in exactly one), each command linked to its `--help` in
    the page `cli`."""
    names = [" ".join(path) for path, _ in commands()]
    listed = [n for _, group in TASKS for n in group]
    missing, extra = set(names) - set(listed), set(listed) - set(names)
    if missing or extra or len(listed) != len(set(listed)):
        raise ValueError(
            f"TASKS in tests/docs_blocks.py: commands without a task {sorted(missing)}, "
            f"names that are no command {sorted(extra)}, or a command listed twice"
        )
    out = []
    for title, group in TASKS:
        table = command_table(group)
        for name in group:  # the command's cell links to its --help in the CLI reference
            table = re.sub(
                rf"^\| `{re.escape(name)}( [^`]*)?`",
                lambda m: f"| [`{m.group(0)[3:-1]}`]({cli}#{_anchor(name)})",
                table,
                count=1,
                flags=re.M,
            )
        # Python-Markdown, unlike GitHub, reads a `|` inside a code span as text, and keeps a `\|` there
        table = re.sub(r"`[^`]*`", lambda m: m.group(0).replace("\\|", "|"), table)
        out.append(f"## {title}\n\n{table}")
    return "\n".join(out)


def cli_reference() -> str:
    """`memcli --help` and every command's, as a terminal 88 columns wide shows them."""
    out = []
    for path, res in helps().items():
        name = " ".join(("memcli", *path))
        text = "\n".join(line.rstrip() for line in res["stdout"].strip("\n").split("\n"))
        out.append(f"## {name}\n\n```text\n$ {name} --help\n{text}\n```\n")
    return "\n".join(out)


# ---------------------------------------------------------------- configuration

# What each key is for (the schema gives its default and what it accepts).
DESCRIPTIONS = {
    "index.max_lines": "MEMORY.md stays under this many lines",
    "index.on_full": "when the index is full: `demote` moves the lowest-ranked unpinned entry out (its "
    "detail file stays); `refuse` refuses the write (exit 4)",
    "index.rank": "who keeps a line in a full index: `importance`, or `activity`, which follows recalls "
    "(see [An index that follows use](guide/ranked-index.md))",
    "session.max_rounds": "rounds kept raw (a user turn and its replies); older turns fold into the summary "
    "and the episode log",
    "session.summarizer": "a shell command: turns on stdin, the summary on stdout; without it the summary is "
    "extractive",
    "session.summarizer_timeout": "how long the summarizer may run",
    "session.max_summary_chars": "the session summary's length at most",
    "recall.threshold": "the confidence (0..1, the probability that a hit answers) a hit needs to count as an "
    "answer and to be injected by the hook, `context` and `--strict`; unset, the threshold fitted for "
    "precision on the dev sets (`memcli/recall/gate.json`)",
    "recall.limit": "hits at most when `-k` is not given",
    "recall.half_life": "freshness halves every half-life (recall's tie-breaker, and the recency of "
    "`index.rank: activity`)",
    "recall.freshness_weight": "the share of the score given to importance × freshness; raise it to make "
    "freshness more than a tie-breaker",
    "recall.signals.explicit": "words that say a message asks for memory (`should-recall`: explicit)",
    "recall.signals.implicit": "words that point back at something said before (`should-recall`: implicit)",
    "heartbeat.stale_after": "neither updated nor recalled for this long: reported as `stale`",
    "heartbeat.scope_max_age": "a scope open longer than this is reported",
    "heartbeat.session_max_turns": "a session holding more raw turns is reported",
    "write.secrets": "a secret in a write: refused (exit 4), redacted, or allowed",
    "write.pii": "personal data in what a person or agent writes on purpose (`remember`, `update`, `edit`, "
    "`import`, `outcome` notes, MCP `remember`)",
    "write.pii_captured": "the same for text captured on its own: session turns (CLI, API, MCP `session_add`), "
    "the hook's prompts, scope state, and so the episode log they fold into",
    "embed.provider": "the semantic extra's embedding provider: `use` (bundled), `openai`, "
    "`sentence-transformers` or a plugin's (see [Semantic recall](guide/semantic.md))",
    "embed.url": "`openai`: the endpoint",
    "embed.model": "`openai` and `sentence-transformers`: the model's name (or path)",
    "embed.key_env": "`openai`: the environment variable that holds the API key",
    "embed.query_prefix": "text put before a question (E5 models: `query: `)",
    "embed.passage_prefix": "text put before a memory (E5 models: `passage: `)",
    "lock_timeout": "how long a write waits for another memcli process's lock (then exit 3)",
    "reflect.engine": "`auto` runs the extractor when one is set, else the offline engine",
    "reflect.extractor": "a shell command: the material as JSON on stdin, proposals as JSON lines on stdout",
    "reflect.extractor_timeout": "how long the extractor may run",
    "reflect.budget": "the offline engine proposes at most this many per 100 turns",
    "reflect.on_fold": "reflect in the background when session turns fold or a scope ends",
    "inbox.max_age": "heartbeat reports proposals waiting longer than this",
    "inbox.auto_accept": "memory types accepted without review, e.g. `[preference]`",
    "inbox.auto_accept_confidence": "... when the proposal's confidence is at least this",
    "write.gate": "where `remember` and `update` land: `direct`, or `inbox` (proposals for review)",
    "write.gate.cli": "`write.gate` for the command line alone",
    "write.gate.mcp": "`write.gate` for MCP alone",
    "write.gate.hook": "`write.gate` for the agent hook alone",
    "inbox.propose_per_call": "MCP `propose`: proposals one call may add",
    "inbox.propose_per_hour": (
        "proposals all calls of an hour may add (MCP `propose`, and a write `write.gate: inbox` proposes)"
    ),
    "inbox.max_pending": (
        "`propose` and a write `write.gate: inbox` proposes are refused while this many proposals wait in "
        "`memory/inbox/`"
    ),
    "inbox.max_bytes": "... or while they hold this many bytes",
}

# Why a committed memcli.yaml may or may not set each key (the rule itself comes from the guard).
WHY = {
    "session.summarizer": "runs code",
    "reflect.extractor": "runs code",
    "write.secrets": "`allow` stores a token",
    "write.pii": "unmasked phones and emails would be committed and pushed by `sync`",
    "write.pii_captured": "unmasked phones and emails would be committed and pushed by `sync`",
    "write.gate": "the gate is your review of what an agent writes",
    "inbox.auto_accept": "an auto-accepted proposal skips your gate",
    "inbox.auto_accept_confidence": "an auto-accepted proposal skips your gate",
    "inbox.propose_per_call": "caps on what an agent may pile into the inbox",
    "inbox.propose_per_hour": "caps on what an agent may pile into the inbox",
    "inbox.max_pending": "caps on what an agent may pile into the inbox",
    "inbox.max_bytes": "caps on what an agent may pile into the inbox",
    "reflect.on_fold": "starts a process on each fold, and turns your session turns into proposals that `sync` shares",
    "embed.provider": "sends memory text, and a key from your environment, off this machine",
    "embed.url": "sends memory text, and a key from your environment, off this machine",
    "embed.key_env": "sends memory text, and a key from your environment, off this machine",
    "embed.model": "names the weights a local provider loads (a path in the repository could carry code) "
    "or what your endpoint is asked",
    "embed.query_prefix": "what your endpoint is asked",
    "embed.passage_prefix": "what your endpoint is asked",
}
# Keys a committed memcli.yaml sets freely, by the part of the program they steer.
WHY_FREE = (
    (
        "index.",
        "what MEMORY.md lists: the memories are the repository's anyway; `activity` counts only this "
        "machine's own recalls (a tracked trace is never read)",
    ),
    ("recall.", "ranking of the repository's own memories"),
    ("session.", "how much is kept; a command still needs trust"),
    ("reflect.", "how much is proposed; a command still needs trust"),
    ("heartbeat.", "when a finding is reported"),
    ("inbox.", "when a finding is reported"),
    ("lock_timeout", "how long a write waits"),
)


def _schema():
    from memcli import config

    return config.SCHEMA


def _value(value) -> str:
    """A default as memcli.yaml would spell it."""
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        if len(value) > 6:
            return f"{', '.join(value[:5])} … ({len(value)} phrases)"
        return f"`[{', '.join(map(str, value))}]`"
    if value == "":
        return '`""`'
    return f"`{value}`"


def _accepts(key: str, kind: str) -> str:
    from memcli import config, model, settings_guard

    if kind.startswith("choice:"):
        return " or ".join(f"`{c}`" for c in kind[7:].split("|"))
    gates = " or ".join(f"`{g}`" for g in config.GATES)
    doors = ", ".join(config.FRONT_ENDS)
    kinds = {
        "int": "a whole number ≥ 1",
        "float": "a number from 0 to 1",
        "duration": "a duration: `30s`, `15m`, `2h`, `7d`",
        "list": "a list of words or phrases",
        "cmd": "a shell command, or `null`",
        "bool": "`true` or `false`",
        "types": "a list of memory types: " + ", ".join(model.TYPES),
        "gate": f"{gates}, or a mapping of {doors} (and `default`) to one",
        "gate?": gates,
        "text": "one line of text, or `null`",
        "prefix": "a string (may be empty)",
        "pii": (
            ", ".join(f"`{p}`" for p in settings_guard.PII) + ", or a mapping of front end (cli, api, mcp, hook) to one"
        ),
    }
    if kind not in kinds:
        raise ValueError(f"{key}: the config kind {kind!r} is new; say in tests/docs_blocks.py what it accepts")
    return kinds[kind]


def config_table() -> str:
    """Every key of memcli.yaml: its default, what it accepts, what it is for."""
    schema = _schema()
    missing, extra = set(schema) - set(DESCRIPTIONS), set(DESCRIPTIONS) - set(schema)
    if missing or extra:
        raise ValueError(
            f"DESCRIPTIONS in tests/docs_blocks.py: keys without words {sorted(missing)}, "
            f"words for no key {sorted(extra)}"
        )
    rows = ["| key | default | accepts | what it is for |", "|---|---|---|---|"]
    for key in sorted(schema, key=_config_order):
        default, kind = schema[key]
        rows.append(f"| `{key}` | {_value(default)} | {_accepts(key, kind)} | {DESCRIPTIONS[key]} |")
    return "\n".join(rows) + "\n"


def _config_order(key: str):
    """Keys grouped by section, in the order the sections first appear in SCHEMA."""
    keys = list(_schema())
    sections = list(dict.fromkeys(k.split(".")[0] for k in keys))
    return sections.index(key.split(".")[0]), keys.index(key)


def _guard_of(key: str):
    """(the guard, whether it is per front end) of a key; (None, False) when it is set freely."""
    from memcli import config, settings_guard

    if key in config.GATE_KEYS:
        return settings_guard.GUARDS["write.gate"], True
    guard = settings_guard.GUARDS.get(key)
    return guard, guard is settings_guard.PII


def _rule(key: str) -> str:
    """What a committed memcli.yaml may do with a key, from its guard in memcli/settings_guard.py."""
    from memcli import settings_guard

    guard, per_door = _guard_of(key)
    if guard is None:
        return "freely"
    if guard == settings_guard.COMMAND:
        return "a command: only after trust (and the files it names unchanged); yours wins"
    if guard == settings_guard.OUTBOUND:
        return "only after trust; yours wins"
    if isinstance(guard, dict):
        order = sorted(guard, key=lambda v: guard[v])
        text = f"`{_spell(order[0])}`"
        for before, value in zip(order, order[1:]):
            text += (" = " if guard[value] == guard[before] else " < ") + f"`{_spell(value)}`"
        rule = f"as strict as yours or the default ({text}); looser only after trust"
        return ("per front end: " + rule) if per_door else rule
    words = {
        "subset": "fewer types than yours freely; more only after trust",
        "higher": "higher freely; lower only after trust",
        "lower": "lower freely; higher only after trust",
    }
    if guard not in words:
        raise ValueError(f"{key}: the guard {guard!r} is new; say in tests/docs_blocks.py what it allows")
    return words[guard]


def _spell(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _why(key: str) -> str:
    from memcli import config

    if key in config.GATE_KEYS:
        key = "write.gate"
    if key in WHY:
        return WHY[key]
    for prefix, why in WHY_FREE:
        if key.startswith(prefix):
            return why
    raise ValueError(f"{key}: say in tests/docs_blocks.py (WHY or WHY_FREE) why memcli.yaml may set it")


def tighten_table() -> str:
    """Every key: what a committed memcli.yaml may do with it and why; keys that share both on one row."""
    from memcli import settings_guard

    stale = set(settings_guard.GUARDS) - set(_schema())
    if stale or set(WHY) - set(settings_guard.GUARDS):
        raise ValueError(f"tests/docs_blocks.py WHY and memcli/settings_guard.py GUARDS disagree: {sorted(stale)}")
    rows, order = {}, []
    for key in sorted(_schema(), key=_config_order):
        row = (_rule(key), _why(key))
        if row not in rows:
            rows[row] = []
            order.append(row)
        rows[row].append(key)
    lines = ["| key | from memcli.yaml | why |", "|---|---|---|"]
    for row in order:
        lines.append(f"| {', '.join(f'`{k}`' for k in rows[row])} | {row[0]} | {row[1]} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- error codes

# What an error whose class has no docstring means.
ERROR_WORDS = {
    "config": "A bad `memcli.yaml` (or user configuration): broken YAML, an unknown or ill-typed key.",
    "lock_timeout": "The root's lock was not obtained within `lock_timeout`.",
    "not_a_root": "The folder is not a memory root (no `MEMORY.md` or `memcli.yaml` there or above).",
    "collision": "A scope key another agent owns (`scope set` without `--force`).",
    "exists": "The id is taken (or archived: `restore` or `forget --purge` it first).",
    "index_full": "The index is full and `index.on_full` is `refuse`.",
    "pii": "Personal data in a write under `write.pii: refuse` (or `write.pii_captured`).",
    "secret": "A secret in a write under `write.secrets: refuse`.",
}


def error_codes() -> str:
    """Every error's code (the `--json` envelope's error.code, MCP's `code`) and exit code."""
    import importlib
    import pkgutil

    import memcli
    from memcli.errors import MemcliError

    for info in pkgutil.walk_packages(memcli.__path__, "memcli."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # a module of an extra that is not installed
            continue
    seen, rows = set(), []

    def walk(cls):
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("memcli.") and sub.code not in seen:
                seen.add(sub.code)
                rows.append(sub)
            walk(sub)

    rows.append(MemcliError)
    seen.add(MemcliError.code)
    walk(MemcliError)
    out = ["| code | exit | raised as | when |", "|---|---:|---|---|"]
    for cls in sorted(rows, key=lambda c: (c.exit_code, c.code)):
        doc = _paragraphs(cls.__doc__ or "")[:1] or [ERROR_WORDS.get(cls.code)]
        if not doc[0]:
            raise ValueError(
                f"{cls.__name__} has no docstring: say in ERROR_WORDS (tests/docs_blocks.py) "
                f"when the error {cls.code!r} is raised"
            )
        out.append(f"| `{cls.code}` | {cls.exit_code} | `{cls.__module__}.{cls.__name__}` | {doc[0]} |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the Python API


def _paragraphs(doc: str) -> list[str]:
    """A docstring's paragraphs, each on one line, reST's ``code`` as Markdown's `code`; an indented
    block (an example) is kept as a fenced block."""
    doc = inspect.cleandoc(doc or "")
    out = []
    for part in re.split(r"\n\s*\n", doc):
        if not part.strip():
            continue
        lines = part.split("\n")
        if all(line.startswith("    ") for line in lines):
            out.append("```python\n" + "\n".join(line[4:] for line in lines) + "\n```")
        else:
            out.append(re.sub(r"``([^`]+)``", r"`\1`", " ".join(line.strip() for line in lines)))
    return out


def _signature(func, name: str) -> str:
    sig = inspect.signature(func)
    parts, star = [], False
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            star = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += (" = " if p.annotation is not p.empty else "=") + repr(p.default)
        parts.append(text)
    ret = sig.return_annotation
    ret = "" if ret is sig.empty else f" -> {_annotation(ret)}"
    return f"{name}({', '.join(parts)}){ret}"


def _annotation(ann) -> str:
    """An annotation as written in the source (`from __future__ import annotations` keeps it a
    string), without the quotes of a forward reference, and `list` for `builtins.list` (what a class
    with a method named list writes, so that a type checker reads the type)."""
    text = ann if isinstance(ann, str) else inspect.formatannotation(ann)
    return text.replace('"', "").replace("'", "").replace("builtins.", "")


def _members(cls):
    """(name, object, whether it is called on the class) of the public methods and properties a
    class defines itself, in source order."""
    for name, obj in vars(cls).items():
        if name.startswith("_") or name in ("FIELDS", "COMPARE"):
            continue
        on_class = isinstance(obj, (staticmethod, classmethod))
        if on_class:
            obj = obj.__func__
        if isinstance(obj, property) or inspect.isfunction(obj):
            yield name, obj, on_class


def _fields(cls) -> tuple:
    import dataclasses

    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls) if f.repr)
    return tuple(getattr(cls, "FIELDS", ()) or getattr(cls, "__slots__", ()))


def api_class(cls, prefix: str, heading: str = "###") -> str:
    """A class's docstring, its fields, then each public method: its signature and docstring."""
    out = [f"{heading} {cls.__name__}\n", *[p + "\n" for p in _paragraphs(cls.__doc__)]]
    fields = _fields(cls)
    if fields:
        out.append("Fields: " + ", ".join(f"`{f}`" for f in fields) + ".\n")
    for name, obj, on_class in _members(cls):
        where = f"{cls.__name__}." if on_class else prefix
        if isinstance(obj, property):
            sig, doc = f"{where}{name}", obj.fget.__doc__
        else:
            sig, doc = _signature(obj, where + name), obj.__doc__
        out.append(f"`{sig}`\n")
        out.extend(f": {p}\n" if i == 0 else f"    {p}\n" for i, p in enumerate(_paragraphs(doc)))
    return "\n".join(out)


def api_reference() -> str:
    """The library: `Memory`, the values its methods return and the objects they hand out."""
    from memcli.core import Memory
    from memcli.heartbeat.base import Report
    from memcli.model import Detail, Finding, Hit, Listing, Problem, Result, WriteResult
    from memcli.recall.cascade import Recall
    from memcli.usecases.edit import EditSession
    from memcli.usecases.inbox import Gate, Inbox
    from memcli.usecases.maintain import Repair
    from memcli.usecases.session_scope import Scope, Session

    parts = ["## Memory\n", api_class(Memory, "m.", heading="###").split("\n", 1)[1]]
    parts.append("## What the methods return\n")
    parts += [
        api_class(c, "") for c in (Detail, WriteResult, Listing, Result, Recall, Hit, Report, Repair, Finding, Problem)
    ]
    parts.append("## What the methods hand out\n")
    parts += [
        api_class(Session, "m.session(name)."),
        api_class(Scope, "m.scope(name)."),
        api_class(Inbox, "m.inbox."),
        api_class(Gate, "m.gate(front_end)."),
        api_class(EditSession, ""),
    ]
    return "\n".join(parts)


# ---------------------------------------------------------------- the project


def extra(name: str) -> list[str]:
    """The requirements of one extra of pyproject.toml, as written there (no TOML parser: 3.10 has none)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    part = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    m = re.search(rf"^{re.escape(name)}\s*=\s*\[(.*?)\]", part, re.S | re.M)
    if not m:
        raise KeyError(name)
    return re.findall(r'"([^"]+)"', re.sub(r"#.*", "", m.group(1)))


def extra_names(name: str) -> str:
    """`pytest`, `hypothesis`, ... and `uv`: the packages of an extra, as a sentence's list."""
    names = ["`" + re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0] + "`" for r in extra(name)]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


# ---------------------------------------------------------------- transcripts of real runs


def transcript(commands, init, env=None, shown=None, fence: str = "text") -> str:
    """A fenced block of the runs of `session()`: each command as typed (its variables before it, as
    a shell takes them) and what it printed; shown: the indices of the commands to show (all by
    default: the others still run)."""
    runs = session(commands, init, env)
    parts = []
    for n, (cmd, r) in enumerate(zip(commands, runs)):
        if r["code"] not in (0, 1):
            raise RuntimeError(f"{cmd} exited {r['code']}: {r['stderr']}")
        if shown is not None and n not in shown:
            continue
        words, own = (cmd[0], cmd[1]) if isinstance(cmd, tuple) else (cmd, {})
        prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in own.items())
        parts.append(f"$ {prefix}memcli " + " ".join(shlex.quote(a) for a in words))
        printed = "\n".join(line.rstrip() for line in (r["stdout"] + r["stderr"]).strip("\n").split("\n"))
        if printed.strip():
            parts.append(printed)
    return f"```{fence}\n" + "\n".join(parts) + "\n```\n"


# The walk-through of "Learning from sessions": a session that teaches a lesson, reflection, the
# inbox, and the lesson recalled in a new session in either language.
WALKTHROUGH_ENV = {"MEMCLI_ROOT": "notes", "MEMCLI_SESSION": "import-fix"}
WALKTHROUGH = (
    ["session", "add", "user", "每晚的导入任务又挂了，报错 MySQL server has gone away。"],
    [
        "session",
        "add",
        "assistant",
        "I checked the server log: the root cause is max_allowed_packet. The import "
        "sends 40 MB batches and the server limit is 16 MB.",
    ],
    [
        "session",
        "add",
        "user",
        "把 max_allowed_packet 调到 64M 之后导入成功了。记住：大批量导入之前要先把 max_allowed_packet 调到 64M。",
    ],
    ["session", "add", "assistant", "Noted: large MySQL imports need max_allowed_packet of at least 64M."],
    ["session", "clear"],
    ["reflect"],
    ["inbox"],
    ["inbox", "accept", "--all"],
    (["recall", "what setting do large MySQL imports need?"], {"MEMCLI_SESSION": "next"}),
    (["recall", "大批量导入之前要调什么参数？"], {"MEMCLI_SESSION": "next"}),
)


def walkthrough_commands() -> str:
    """The walk-through as a person types it."""
    lines = ["memcli init notes && export " + " ".join(f"{k}={v}" for k, v in WALKTHROUGH_ENV.items())]
    for cmd in WALKTHROUGH:
        words, own = (cmd[0], cmd[1]) if isinstance(cmd, tuple) else (cmd, {})
        lines.append("".join(f"{k}={v} " for k, v in own.items()) + "memcli " + " ".join(map(shlex.quote, words)))
    return "```sh\n" + "\n".join(lines) + "\n```\n"


def walkthrough_output(shown=range(5, 10)) -> str:
    """What the walk-through's commands print (by default the last five), from a real run."""
    return transcript(WALKTHROUGH, ("init", "notes"), WALKTHROUGH_ENV, shown=set(shown))


def walkthrough_proposal() -> str:
    """The walk-through's proposal as an editor shows it in memory/inbox/, from a real run."""
    first = session(WALKTHROUGH[:6], ("init", "notes"), WALKTHROUGH_ENV)[-1]["stdout"]
    pid = first.split("\t", 1)[0]
    shown = session([*WALKTHROUGH[:6], ["inbox", "show", pid]], ("init", "notes"), WALKTHROUGH_ENV)[-1]
    assert shown["code"] == 0, shown
    return "```markdown\n" + shown["stdout"].strip("\n") + "\n```\n"


def api_names() -> str:
    """The names memcli.api offers a plugin, as a sentence's list."""
    import memcli.api

    names = [f"`{n}`" for n in memcli.api.__all__]
    return ", ".join(names[:-1]) + " and " + names[-1]

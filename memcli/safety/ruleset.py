"""Rule sets: the secret and injection rules the scanner runs, kept as data (the format:
``safety/rules/README.md``). The registry holds every set in the order it was added, the built-ins
first; ``add_rule_set`` is how both the built-ins and a plugin register. Nothing is read before the
first scan, and a pattern is compiled only when a text holds one of its rule's hints. JSON because
its parser is in the standard library of every Python memcli runs on (3.10 has no ``tomllib``,
which also reads the same data tens of times slower: ``benchmarks/scan_speed.py``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

from . import rule_functions as _code

FORMAT = 1
LISTS = ("secrets", "injection")
_BEFORE = {"any": frozenset(), "word": _code.WORD, "word-dash": _code.WORD_DASH, "word-dot": _code.WORD_DOT}
_FLAGS = {"i": re.I, "m": re.M, "s": re.S, "x": re.X}
# the keys of a rule (rules/README.md); every one but `about` and `flags` is kept on the Rule
_RULE_KEYS = frozenset(
    "about kind pattern finder flags hints fold anchor within lead before rank group check require differs gate "
    "unless options".split()
)
_SET_KEYS = frozenset({"format", "about", "define", "words", "guards", "defaults", *LISTS})
_BUILTIN = os.path.join(os.path.dirname(__file__), "rules")


class RuleSetError(ValueError):
    """A rule set that cannot be used: the message names the set, the rule and the problem."""


def _text(value, where: str) -> str:
    """A pattern: one string, or a list of strings joined (to keep long patterns readable)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(x, str) for x in value):
        return "".join(value)
    raise RuleSetError(f"{where}: a pattern is a string or a list of strings")


class Defines:
    """A set's named pattern pieces, written ``{{name}}`` in its patterns (pieces may use others)."""

    def __init__(self, raw: dict, where: str):
        self.raw = {k: _text(v, f"{where}: define {k!r}") for k, v in raw.items()}
        self.where = where
        self._done: dict = {}

    def expand(self, source: str, seen: tuple = ()) -> str:
        if "{{" not in source:
            return source

        def one(m):
            name = m.group(1)
            if name in seen:
                raise RuleSetError(f"{self.where}: define {name!r} refers to itself")
            if name not in self.raw:
                raise RuleSetError(f"{self.where}: unknown define {{{{{name}}}}}")
            if name not in self._done:
                self._done[name] = self.expand(self.raw[name], (*seen, name))
            return self._done[name]

        return re.sub(r"\{\{([A-Za-z_][\w-]*)\}\}", one, source)


class Pattern:
    """A regular expression of a rule set, compiled on first use."""

    __slots__ = ("source", "flags", "defines", "where", "_rx")
    _rx: re.Pattern[str] | None

    def __init__(self, source: str, flags: int, defines: Defines, where: str):
        self.source, self.flags, self.defines, self.where, self._rx = source, flags, defines, where, None

    def compiled(self) -> re.Pattern:
        if self._rx is None:
            try:
                self._rx = re.compile(self.defines.expand(self.source), self.flags)
            except re.error as e:
                raise RuleSetError(f"{self.where}: {e}") from None
        return self._rx


def _pattern(raw: dict, key: str, flags: int, defines: Defines, where: str) -> Pattern | None:
    return Pattern(_text(raw[key], where), flags, defines, where) if key in raw else None


class Guard:
    """Text around a match that makes it a description rather than an order: ``before`` is
    searched in the ``window`` characters before the match (from the last ``from`` match on, a
    sentence end for instance); ``after`` is matched where the match ends."""

    __slots__ = ("before", "after", "since", "window")

    def __init__(self, raw: dict, defines: Defines, where: str):
        unknown = set(raw) - {"before", "after", "from", "window", "flags", "about"}
        if unknown or ("before" in raw) == ("after" in raw):
            raise RuleSetError(f"{where}: a guard has either before (with window, from) or after, and flags")
        flags = _flags(raw.get("flags", ""), where)
        self.before = _pattern(raw, "before", flags, defines, where)
        self.after = _pattern(raw, "after", flags, defines, where)
        self.since = _pattern(raw, "from", flags, defines, where)
        self.window = raw.get("window", 60)
        if not isinstance(self.window, int) or self.window < 1:
            raise RuleSetError(f"{where}: window is a positive number of characters")

    def holds(self, text: str, start: int, end: int) -> bool:
        if self.after is not None:
            return self.after.compiled().match(text, end) is not None
        prefix = text[max(0, start - self.window) : start]
        if self.since is not None:
            cut = None
            for m in self.since.compiled().finditer(prefix):  # the last one
                cut = m
            if cut is not None:
                prefix = prefix[cut.end() :]
        return self.before is not None and self.before.compiled().search(prefix) is not None


def _flags(letters, where: str) -> int:
    if not isinstance(letters, str) or set(letters) - set(_FLAGS):
        raise RuleSetError(f"{where}: flags are letters of 'imsx'")
    return sum(_FLAGS[c] for c in set(letters))


class Rule:
    """One rule of a set, as the scanner runs it (see the format in ``rules/README.md``)."""

    __slots__ = ("where", "window", *sorted(_RULE_KEYS - {"about", "flags"}))
    lead: Pattern | None

    def __init__(self, raw: dict, defaults: dict, ctx: "_Context", where: str):
        if not isinstance(raw, dict):
            raise RuleSetError(f"{where}: a rule is an object")
        unknown = set(raw) - _RULE_KEYS
        if unknown:
            raise RuleSetError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        raw = {**defaults, **raw}
        self.kind = raw.get("kind")
        self.where = where = f"{where} ({self.kind})" if self.kind else where
        defs = ctx.defines
        flags = _flags(raw.get("flags", ""), where)
        if "pattern" not in raw and "finder" not in raw:
            raise RuleSetError(f"{where}: a rule has a pattern or a finder")
        if "finder" in raw:
            self.finder = ctx.finders.get(raw["finder"])
            if self.finder is None:
                raise RuleSetError(f"{where}: unknown finder {raw['finder']!r}")
        else:
            self.finder = None
            if not isinstance(self.kind, str) or not self.kind:
                raise RuleSetError(f"{where}: a pattern rule names its kind")
        self.pattern = _pattern(raw, "pattern", flags, defs, where)
        # flags are the pattern's; the others use inline flags if any
        self.anchor = _pattern(raw, "anchor", 0, defs, f"{where}: anchor")
        self.within = _pattern(raw, "within", 0, defs, f"{where}: within")
        self.gate = _pattern(raw, "gate", 0, defs, f"{where}: gate")
        lead = raw.get("lead")
        if lead is not None:
            if not isinstance(lead, dict) or set(lead) - {"pattern", "window"} or "pattern" not in lead:
                raise RuleSetError(f"{where}: lead is {{pattern, window}}")
            self.lead = Pattern(_text(lead["pattern"], where), 0, defs, f"{where}: lead")
            self.window = lead.get("window", 40)
        else:
            self.lead, self.window = None, 0
        self.hints = ctx.hints(raw.get("hints", []), where)
        self.fold = bool(raw.get("fold", False))
        if raw.get("before", "any") not in _BEFORE:
            raise RuleSetError(f"{where}: before is one of {', '.join(_BEFORE)}")
        self.before = _BEFORE[raw.get("before", "any")]
        self.rank = raw.get("rank", 0)
        if not isinstance(self.rank, int) or self.rank < 0:
            raise RuleSetError(f"{where}: rank is 0 (exact format), 1 (format in context) or 2 (generic)")
        group = raw.get("group", 0)
        self.group = tuple(group) if isinstance(group, list) else (group,)
        self.check = []
        for g, names in raw.get("check", {}).items():
            for name in [names] if isinstance(names, str) else names:
                if name not in ctx.validators:
                    raise RuleSetError(f"{where}: unknown validator {name!r}")
                self.check.append((g, ctx.validators[name]))
        self.require = [
            (g, Pattern(_text(p, where), 0, defs, f"{where}: require {g}")) for g, p in raw.get("require", {}).items()
        ]
        differs = raw.get("differs")
        if differs is not None and (not isinstance(differs, list) or len(differs) != 2):
            raise RuleSetError(f"{where}: differs names two groups")
        self.differs = tuple(differs) if differs else None
        self.unless = []
        for name in raw.get("unless", []):
            if name not in ctx.guards:
                raise RuleSetError(f"{where}: unknown guard {name!r}")
            self.unless.append(ctx.guards[name])
        self.options = {k: frozenset(v) if isinstance(v, list) else v for k, v in raw.get("options", {}).items()}


class _Context:
    """What the rules of one set may refer to."""

    def __init__(self, raw: dict, name: str, validators: dict, finders: dict, guards: dict):
        self.defines = Defines(raw.get("define", {}), f"rule set {name}")
        self.words = raw.get("words", {})
        self.validators, self.finders = validators, finders
        self.guards = dict(guards)
        for g, spec in raw.get("guards", {}).items():
            self.guards[g] = Guard(spec, self.defines, f"rule set {name}: guard {g!r}")

    def hints(self, raw, where: str) -> tuple:
        """Groups of hints: the rule runs only if each group has one in the text."""
        if not isinstance(raw, list):
            raise RuleSetError(f"{where}: hints are a list")
        if all(isinstance(h, str) and not h.startswith("@") for h in raw):
            return (tuple(raw),) if raw else ()
        groups = []
        for h in raw:
            if isinstance(h, str) and h.startswith("@"):
                if h[1:] not in self.words:
                    raise RuleSetError(f"{where}: unknown words {h!r}")
                h = self.words[h[1:]]
            if not isinstance(h, list) or not h or not all(isinstance(x, str) and x for x in h):
                raise RuleSetError(f"{where}: a hint group is a list of strings or @words")
            groups.append(tuple(h))
        return tuple(groups)


class Rules:
    """Every registered set's rules of one list (secrets or injection), in order, with the index
    of their first hint group: ``active(text, lower)`` gives the rules worth running."""

    def __init__(self, rules: list):
        self.rules = rules
        exact: dict = {}
        folded: dict = {}
        for order, rule in enumerate(rules):
            if rule.hints:
                index = folded if rule.fold else exact
                for hint in rule.hints[0]:
                    index.setdefault(hint, []).append(order)
        self.exact = tuple((h, tuple(o)) for h, o in exact.items())
        self.folded = tuple((h, tuple(o)) for h, o in folded.items())
        self.always = tuple(order for order, rule in enumerate(rules) if not rule.hints)

    def active(self, text: str, lower: str) -> list[int]:
        on = {order for hint, orders in self.exact if hint in text for order in orders}
        on.update(order for hint, orders in self.folded if hint in lower for order in orders)
        on.update(self.always)
        out = []
        for order in sorted(on):
            rule = self.rules[order]
            where = lower if rule.fold else text
            if all(any(map(where.__contains__, group)) for group in rule.hints[1:]):
                out.append(order)
        return out


# --------------------------------------------------------------------------- the registry

_sets: list = []  # (name, source, validators, finders): source a path or a parsed mapping
_compiled: dict | None = None
_builtins_added = False


def add_rule_set(name: str, source, *, validators: dict | None = None, finders: dict | None = None) -> None:
    """Add (or, under a name already added, replace) a rule set: a path to a JSON file or the
    parsed mapping. ``validators`` and ``finders`` are the named functions its rules refer to
    beyond the built-in ones (``safety.rule_functions``). Read and checked at the next scan."""
    _ensure_builtins()
    global _compiled
    entry = (name, source, dict(validators or {}), dict(finders or {}))
    for i, (other, *_) in enumerate(_sets):
        if other == name:
            _sets[i] = entry
            break
    else:
        _sets.append(entry)
    _compiled = None


def register_rule_sets(add) -> None:
    """The built-in rule sets, registered as a plugin's are (its ``register_rule_sets`` hook)."""
    for name in ("secrets", "injection"):
        add(f"memcli.{name}", os.path.join(_BUILTIN, f"{name}.json"))


def _ensure_builtins() -> None:
    global _builtins_added
    if not _builtins_added:
        _builtins_added = True
        from .. import plugins

        register_rule_sets(add_rule_set)
        plugins.call("register_rule_sets", add_rule_set)


def rule_sets() -> list[str]:
    """The names of the registered rule sets, in the order their rules run."""
    _ensure_builtins()
    return [name for name, *_ in _sets]


def _read(name: str, source) -> tuple[dict, bytes | None]:
    if isinstance(source, dict):
        return source, None
    try:
        with open(source, "rb") as f:
            data = f.read()
        return json.loads(data), data
    except (OSError, ValueError) as e:
        raise RuleSetError(f"rule set {name}: cannot read {source}: {e}") from None


def compiled() -> dict:
    """{"secrets": Rules, "injection": Rules, "texts": [(name, bytes)]} of every registered set."""
    global _compiled
    if _compiled is not None:
        return _compiled
    _ensure_builtins()
    lists: dict = {key: [] for key in LISTS}
    validators: dict = dict(_code.VALIDATORS)
    finders: dict[str, Callable] = dict(_code.FINDERS)
    guards: dict = {}
    texts = []
    for name, source, more_validators, more_finders in _sets:
        raw, data = _read(name, source)
        texts.append((name, data if data is not None else json.dumps(raw, sort_keys=True).encode()))
        where = f"rule set {name}"
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise RuleSetError(f"{where}: not a rule set of format {FORMAT}")
        unknown = set(raw) - _SET_KEYS
        if unknown:
            raise RuleSetError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        validators.update(more_validators)
        finders.update(more_finders)
        ctx = _Context(raw, name, validators, finders, guards)
        guards.update({k: v for k, v in ctx.guards.items() if k not in guards})
        defaults = raw.get("defaults", {})
        if not isinstance(defaults, dict) or set(defaults) - _RULE_KEYS:
            raise RuleSetError(f"{where}: defaults hold rule keys only")
        for key in LISTS:
            for n, rule in enumerate(raw.get(key, [])):
                lists[key].append(Rule(rule, defaults, ctx, f"{where}: {key}[{n}]"))
    _compiled = {key: Rules(rules) for key, rules in lists.items()}
    _compiled["texts"] = texts
    return _compiled


def fingerprint() -> str:
    """A hash of every registered rule set's text: what scanned a file depends on besides code."""
    import hashlib

    digest = hashlib.blake2b(str(FORMAT).encode(), digest_size=12)
    for name, data in compiled()["texts"]:
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()

"""A committed memcli.yaml only tightens: the settings that protect the user, and how strict each
value of them is.

memcli.yaml travels with the repository, so anyone who can push to it writes it. For each
setting below, a value from it is honoured only when it is at least as strict as what the user's
own files give (``~/.config/memcli/config.yaml``, the root's untracked ``.memcli/config.yaml``, a
``MEMCLI_*`` override), or the default when they give nothing; a looser value counts only after
``memcli trust`` (recorded outside the root), and otherwise the user's value or the default
applies, with one warning. Where both set a value, the stricter one holds; of two equally strict
values, the user's. A command (``session.summarizer``, ``reflect.extractor``) and a setting that
sends memory text off this machine or chooses what is loaded to embed it are never "at least as
strict" than nothing: from memcli.yaml they always need trust, and the user's own value wins.

Settings that are not listed choose how memories are ranked and shown (``recall.*``,
``index.*``, ``heartbeat.*``, ``session.max_rounds``, ...): the memories themselves come from
the same repository, so the repository may choose those too. README "Safety" has the table.
"""

from __future__ import annotations

# kind of guard per setting; an ordered kind ranks its values (higher is stricter; equal ranks
# protect alike: a redacted secret and a refused one both stay out of the file)
COMMAND = "command"  # a shell command: memcli.yaml needs trust, the user's own wins
OUTBOUND = "outbound"  # sends memory text off this machine, or names what is loaded to embed it
PII = {"allow": 0, "warn": 1, "redact": 2, "refuse": 2}
GUARDS: dict[str, object] = {
    "session.summarizer": COMMAND,
    "reflect.extractor": COMMAND,
    "embed.provider": OUTBOUND,
    "embed.url": OUTBOUND,
    "embed.key_env": OUTBOUND,
    "embed.model": OUTBOUND,
    "embed.query_prefix": OUTBOUND,
    "embed.passage_prefix": OUTBOUND,
    "write.secrets": {"allow": 0, "redact": 1, "refuse": 1},
    "write.pii": PII,  # per front end
    "write.pii_captured": PII,  # per front end
    "write.gate": {"direct": 0, "inbox": 1},  # per front end, with write.gate.cli|mcp|hook
    "inbox.auto_accept": "subset",  # fewer types auto-accepted is stricter
    "inbox.auto_accept_confidence": "higher",
    "inbox.propose_per_call": "lower",
    "inbox.propose_per_hour": "lower",
    "inbox.max_pending": "lower",
    "inbox.max_bytes": "lower",
    "reflect.on_fold": {True: 0, False: 1},  # on: session turns become proposals that sync shares
}
# What each guard does when memcli.yaml loosens it without trust (for the warning).
WHAT = {COMMAND: ("a command", "not run"),
        OUTBOUND: ("which would send memory text off this machine or choose what is loaded to embed it", "ignored")}


def rank(guard, value) -> float:
    """How strict a value is under its guard (higher is stricter)."""
    if isinstance(guard, dict):
        return float(guard.get(value, -1))
    if guard == "higher":
        return float(value)
    if guard == "lower":
        return -float(value)
    raise ValueError(guard)


def stricter(guard, a, b) -> bool:
    """Whether value a is strictly stricter than b."""
    if guard in (COMMAND, OUTBOUND):
        return False
    if guard == "subset":
        return set(a) < set(b)
    return rank(guard, a) > rank(guard, b)


def looser(guard, a, b) -> bool:
    """Whether value a is looser than b (where a needs trust over b)."""
    if guard == COMMAND:
        return bool(a)
    if guard == OUTBOUND:
        return a is not None and a != b
    if guard == "subset":
        return not set(a) <= set(b)
    return rank(guard, a) < rank(guard, b)


def resolve(guard, own, committed, default, trusted):
    """(the value that holds, whether memcli.yaml's loosening was set aside): the user's own
    value (``own``, None when unset), memcli.yaml's (``committed``), the default. ``trusted``:
    whether `memcli trust` recorded memcli.yaml as it is (a bool, or a function asked only when
    it matters)."""
    if committed is None:
        return (default if own is None else own), False
    if own is not None:
        return (committed if stricter(guard, committed, own) else own), False
    if not looser(guard, committed, default) or (trusted() if callable(trusted) else trusted):
        return committed, False
    return default, True


# ---------------------------------------------------------------- settings per front end

def per_door(value, door: str, default):
    """What a write.pii value (a policy, or {front end: policy}) says for one front end; None
    when a mapping does not name it."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(door)
    return value


def gate_of(values: dict, front_end: str):
    """What one source's write.gate settings say for a front end (the dotted key first, then the
    mapping's entry or its default, then the single value); None when they say nothing."""
    own = values.get(f"write.gate.{front_end}")
    if own:
        return own
    gate = values.get("write.gate")
    if isinstance(gate, dict):
        return gate.get(front_end) or gate.get("default")
    return gate

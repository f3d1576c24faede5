"""The one error boundary, shared by the Typer commands and the start-up fast path.

It runs a command's action, maps MemcliError to its exit code, and prints: the JSON
envelope with --json, else warnings and errors on stderr and the human rendering.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

from .. import render as r
from ..errors import MemcliError


@dataclass
class Out:
    """What a command hands the boundary: data for --json, a human renderer, an exit code."""

    data: object = None
    human: Optional[Callable[[], None]] = None
    code: int = 0
    warnings: list = field(default_factory=list)


def execute(command: str, as_json: bool, action: Callable[[], Out]) -> int:
    try:
        res = action()
    except MemcliError as e:
        if as_json:
            r.out(r.envelope(command, False, e.data, [], {"code": e.code, "message": e.message}))
        else:
            r.error(e.message, e.hint)
        return e.exit_code
    except KeyboardInterrupt:
        r.talk("memcli: interrupted")
        return 130
    if as_json:
        r.out(r.envelope(command, True, res.data, res.warnings))
    else:
        for w in res.warnings:
            r.warn(w)
        if res.human is not None:
            res.human()
    return res.code


def stdin_bytes() -> bytes:
    return sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()


def open_memory(root: Optional[str]):
    from ..config import find_root
    from ..core import Memory

    return Memory(find_root(root))


def names(session: Optional[str], scope: Optional[str]) -> tuple[str, str]:
    from ..config import env

    return session or env("MEMCLI_SESSION") or "default", scope or env("MEMCLI_SCOPE") or "default"


def text_arg(value: str, what: str) -> str:
    from ..core import read_input

    return read_input(value, None, stdin_bytes, what)


# ---- the hot commands' actions: called by the Typer commands and by the fast path alike ----

def recall_action(root, session, scope, query, limit, deep, layer) -> Out:
    from ..recall import recall

    sess, sc = names(session, scope)
    res = recall(open_memory(root), text_arg(query, "query"), session=sess, scope=sc, limit=limit, deep=deep,
                 layer=layer)
    data = res.to_dict()
    return Out(data, lambda: r.recall(data), code=0 if res.hits else 1, warnings=res.warnings)


def should_recall_action(root, text) -> Out:
    from ..recall import known_names, should_recall

    m = open_memory(root)
    res = should_recall(text_arg(text, "text"), m.config["recall.signals.explicit"],
                        m.config["recall.signals.implicit"], known_names(m))
    return Out(res, lambda: r.out(res["kind"]), code=0 if res["kind"] != "none" else 1)


def remember_action(root, title, summary=None, tags=(), aliases=(), body=None, body_file=None, type_="note",
                    importance=0.5, pin=False, expires=None, id_=None, source=None) -> Out:
    from ..core import read_input
    from ..errors import UsageError

    if [title, summary, body].count("-") + (body_file == "-") > 1:
        raise UsageError("only one argument can read standard input ('-')")
    m = open_memory(root)
    t = read_input(title, None, stdin_bytes, "title")
    s = read_input(summary, None, stdin_bytes, "summary")
    b = read_input(body, body_file, stdin_bytes, "body")
    res = m.remember(t, s, tags=tags or (), aliases=aliases or (), body=b, type=type_, importance=importance,
                     pinned=pin, expires=expires, id=id_, source=source)
    data = res.to_dict()
    return Out(data, lambda: r.write_result(data), warnings=res.warnings)


def scope_set_action(root, scope, key, value, agent, force=False) -> Out:
    from ..core import utcnow
    from ..errors import UsageError
    from ..store import scope as scopes

    if not agent or not agent.strip():
        raise UsageError("scope set needs --agent NAME")
    m = open_memory(root)
    _, sc = names(None, scope)
    v = text_arg(value, "value")
    with m.lock():
        res = scopes.set_key(m.root, sc, key, v, agent, utcnow(), force)
    warn = [res.pop("warning")] if res.get("warning") else []
    return Out(res, lambda: r.talk(f"{key} set by {agent}"), warnings=warn)


def session_add_action(root, session, role, text) -> Out:
    from ..core import utcnow
    from ..store import session as sessions

    m = open_memory(root)
    sess, _ = names(session, None)
    body = text_arg(text, "text")
    with m.lock():
        res = sessions.add(m.root, sess, role, body, utcnow(), max_rounds=int(m.config["session.max_rounds"]),
                           summarizer=m.config["session.summarizer"],
                           timeout=m.config.seconds("session.summarizer_timeout"),
                           limit=int(m.config["session.max_summary_chars"]))
    warn = list(m.config.warnings) + ([res.pop("warning")] if res.get("warning") else [])

    def human():
        r.talk(f"session {res['session']}: {res['turns']} turns"
               + (f"; folded {res['folded']} into the summary ({res['episode']})" if res["folded"] else ""))
    return Out(res, human, warnings=warn)

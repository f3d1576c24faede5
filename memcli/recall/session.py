"""The session layer: recent turns and the summary of older ones.

The turn that holds the question being asked (in an agent loop, the user turn just added)
is never a candidate, nor a summary line that quotes it. Any other user turn may be returned, rated as the user's
own turn (``confidence.KINDS``: it restates a problem more often than it holds its cause); what was
said in reply (an assistant, tool or system turn) is rated as the session's, and is found by the
words of the user's turn it answers too (as its body: the output holding a cause seldom repeats
the complaint); the summary is rated as the episode log it stands for.
"""

from __future__ import annotations

from ..model import Hit
from .layer import Ask, Candidate, Layer, echo, holds_query, rank, snip


class SessionLayer(Layer):
    name = "session"
    help = "recent turns of the session and the summary of older ones"

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        from ..search.ranker import SearchDoc
        from ..store import session

        data, warning = session.load_or_skip(ask.root.path, ask.session)  # a session never started is empty
        if warning:
            ask.warnings.append(warning)  # a broken session file never blocks the other layers
        if not data["turns"] and not data.get("summary"):
            return [], 0
        docs, texts = [], {}
        summary = "\n".join(
            ln
            for ln in data.get("summary", "").split("\n")
            if not (ln.startswith("- user:") and holds_query(ln[len("- user:") :], ask.query))
        )
        if summary.strip():
            docs.append(SearchDoc(key="summary", summary=summary, updated=data.get("updated")))
            texts["summary"] = ("Session summary", summary, "summary")
        asked = ""  # the user's turn a reply answers: a reply is found by what it answers too
        for i, t in enumerate(data["turns"]):
            if t.get("role") == "user":
                asked = t.get("text", "")
                # the question being asked, or an echo of it, is never evidence (measured on the dev
                # sessions, leaving it out answers better than rating it); any other user turn is
                # rated: an earlier question ranks low by itself (``ranker.ASKING_PENALTY``)
                if holds_query(asked, ask.query):
                    continue
            key = f"turn-{i + 1}"
            context = asked if t.get("role") != "user" else ""
            docs.append(SearchDoc(key=key, summary=t.get("text", ""), body=context, updated=t.get("time")))
            texts[key] = (f"{t.get('role')} turn {i + 1}", t.get("text", ""), t.get("role"))
        path = f".memcli/sessions/{ask.session}.json"
        out = []
        for s in rank(docs, ask) if docs else ():
            title, text, role = texts[s.key]
            hit = Hit(self.name, s.key, title, path, s.score, snip(text, ask.text), matched=s.matched)
            if role == "user":
                out.append(Candidate.of(hit, s, "user", echo(text, ask.text)))
            else:  # the summary holds the turns folded into the episode log
                out.append(Candidate.of(hit, s, "episode" if role == "summary" else ""))
        return out, len(docs)

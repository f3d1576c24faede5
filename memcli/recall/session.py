"""The session layer: recent turns and the summary of older ones.

The turn that holds the question being asked (in an agent loop, the user turn just added)
is never a candidate, nor is any user turn that only asks (an earlier question, answered or
not), nor a summary line that quotes one. A user's statement may be returned, but
only what was said in reply (an assistant, tool or system turn) or the summary ends the cascade,
and only when it covers the query (``layer.DECISIVE``): a user's turn is a question more often
than an answer, and a reply that mentions one word of the question is not its answer. A user's
statement that covers the query (``Ask.stated``) still comes first when no memory answers: before
the candidates that merely relate and before a match by meaning alone.
"""

from __future__ import annotations

from ..model import Hit
from .layer import Ask, Candidate, Layer, decisive, holds_query, rank, snip


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
            if not (ln.startswith("- user:") and _question(ln[len("- user:") :], ask.query))
        )
        if summary.strip():
            docs.append(SearchDoc(key="summary", summary=summary, updated=data.get("updated")))
            texts["summary"] = ("Session summary", summary, "summary")
        for i, t in enumerate(data["turns"]):
            if t.get("role") == "user" and _question(t.get("text", ""), ask.query):
                continue  # a user's question, this one or an earlier one, is never evidence
            key = f"turn-{i + 1}"
            docs.append(SearchDoc(key=key, summary=t.get("text", ""), updated=t.get("time")))
            texts[key] = (f"{t.get('role')} turn {i + 1}", t.get("text", ""), t.get("role"))
        path = f".memcli/sessions/{ask.session}.json"
        out = []
        for s in rank(docs, ask) if docs else ():
            title, text, role = texts[s.key]
            out.append(
                Candidate(
                    Hit(self.name, s.key, title, path, s.score, snip(text, ask.text), matched=s.matched),
                    s.relevance,
                    answer=role != "user" and decisive(s.relevance),
                )
            )
            ask.stated = ask.stated or (role == "user" and decisive(s.relevance))
        return out, len(docs)


def _question(text: str, query: str) -> bool:
    """A user's turn that is no evidence: the question being asked (or an echo of it), or any
    turn that only asks. A user's statement ("we moved the cron to 01:00 UTC") still is."""
    from ..search.evidence import only_asks

    return holds_query(text, query) or only_asks(text)

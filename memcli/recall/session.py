"""The session layer: recent turns and the summary of older ones."""

from __future__ import annotations

from ..model import Hit
from .layer import Ask, Candidate, Layer, rank, snip


class SessionLayer(Layer):
    name = "session"
    help = "recent turns of the session and the summary of older ones"

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        from ..search.ranker import SearchDoc
        from ..store import session

        data = session.load(ask.mem.root, ask.session)  # a session never started is empty
        if not data["turns"] and not data.get("summary"):
            return [], 0
        docs, texts = [], {}
        if data.get("summary"):
            docs.append(SearchDoc(key="summary", title="session summary", body=data["summary"],
                                  updated=data.get("updated")))
            texts["summary"] = ("Session summary", data["summary"], "summary")
        for i, t in enumerate(data["turns"]):
            key = f"turn-{i + 1}"
            docs.append(SearchDoc(key=key, body=t.get("text", ""), updated=t.get("time")))
            texts[key] = (f"{t.get('role')} turn {i + 1}", t.get("text", ""), t.get("role"))
        path = f".memcli/sessions/{ask.session}.json"
        out = []
        for s in rank(docs, ask):
            title, text, _role = texts[s.key]
            out.append(Candidate(Hit(self.name, s.key, title, path, s.score, snip(text, ask.query), matched=s.matched),
                                 s.relevance))
        return out, len(docs)

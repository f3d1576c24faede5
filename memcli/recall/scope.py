"""The scope layer: the keys agents wrote for the task at hand."""

from __future__ import annotations

from ..model import Hit
from .layer import Ask, Candidate, Layer, rank, snip


class ScopeLayer(Layer):
    name = "scope"
    help = "keys the agents of the current task wrote"

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        from ..search.ranker import SearchDoc
        from ..store import scope

        data, warning = scope.load_or_skip(ask.root.path, ask.scope)
        if warning:
            ask.warnings.append(warning)  # a broken scope file never blocks the other layers
        if not data or not data["keys"]:
            return [], 0
        keys = data["keys"]
        docs = [SearchDoc(key=k, title=k, summary=str(v["value"]), updated=v.get("time")) for k, v in keys.items()]
        path = f".memcli/scopes/{ask.scope}.json"
        out = [
            Candidate.of(
                Hit(
                    self.name,
                    s.key,
                    s.key,
                    path,
                    s.score,
                    snip(str(keys[s.key]["value"]), ask.text),
                    summary=f"written by {keys[s.key]['agent']}",
                    matched=s.matched,
                ),
                s,
            )
            for s in rank(docs, ask)
        ]
        return out, len(docs)

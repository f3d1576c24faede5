"""The index layer: the entries of MEMORY.md (title, summary, tags; aliases from their files).

MEMORY.md lists a few dozen of the memories, every one of them a detail file the details layer
ranks among all the others: a sure hit here answers without reading the details (the cheap path of
a turn), an unsure one gives way to that layer's ranking (``Layer.within``)."""

from __future__ import annotations

from ..model import Hit
from ..paths import detail_rel
from .layer import Ask, Candidate, Layer, conflicted, rank, snip


class IndexLayer(Layer):
    name = "index"
    help = "the entries of MEMORY.md"
    memories = True
    within = "details"

    def search(self, ask: Ask) -> tuple[list[Candidate], int]:
        from ..search.ranker import SearchDoc

        if conflicted(ask, "MEMORY.md", path=ask.root.index_path):
            return [], 0
        # a memory with markers in its body, or unreadable because of markers in its frontmatter
        pairs = [
            (e, d)
            for e, d in ask.root.indexed()
            if not (
                conflicted(ask, detail_rel(e.id), d.body, ask.root.path / detail_rel(e.id))
                if d is not None
                else conflicted(ask, detail_rel(e.id), path=ask.root.path / detail_rel(e.id))
            )
        ]
        docs = []
        for e, d in pairs:
            if d is None:
                docs.append(SearchDoc(key=e.id, title=e.title, summary=e.summary, tags=e.tags))
            else:
                docs.append(
                    SearchDoc(
                        key=e.id,
                        title=e.title,
                        summary=e.summary,
                        tags=e.tags,
                        aliases=d.aliases,
                        importance=d.importance,
                        updated=d.updated or d.created,
                    )
                )
        if not docs:
            return [], 0
        by_id = {e.id: (e, d) for e, d in pairs}
        ask.details.update((e.path, d) for e, d in pairs if d is not None)  # read once: procedures weigh them
        found = rank(docs, ask)
        out = []
        for s in found:
            e, d = by_id[s.key]
            body = d.body if d is not None else ""
            hit = Hit(
                self.name,
                e.id,
                e.title,
                e.path,
                s.score,
                snip(body, ask.text) if body.strip() else "",
                d.summary if d is not None else e.summary,
                e.tags,
                s.matched,
            )
            out.append(Candidate.of(hit, s))
        return out, len(docs)

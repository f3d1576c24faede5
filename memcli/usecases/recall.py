"""Recall as a use case: the cascade (``recall.cascade``, its layers in ``recall/``) over a root,
logged in the read log; whether a turn calls for it at all (``should_recall``); and the proposals
waiting in the inbox, recalled only when asked."""

from __future__ import annotations

from ..model import Result


def recall_request(root, req):
    """Session, then scope, then the index, then the details: a Recall with hits and a trace.
    type and min_success: only memories of that type whose smoothed success rate reaches it;
    inbox: the proposals waiting for review are searched too (after the cascade's hits);
    also: other phrasings of the question, fused by rank; strict: the gate of memory injected
    unasked (only hits to act on) instead of a question's (the candidates that relate)."""
    from ..recall.cascade import recall as cascade
    from ..recall.layer import CANDIDATES, STRICT

    res = cascade(
        root,
        req.query,
        session=req.session,
        scope=req.scope,
        limit=req.limit,
        deep=req.deep,
        layer=req.layer,
        threshold=req.threshold,
        now=req.now,
        type=req.type,
        min_success=req.min_success,
        also=req.also,
        policy=STRICT if req.strict else CANDIDATES,
    )
    if req.inbox:
        from .inbox import search

        res.appended = search(root, req.query, limit=req.limit)
    return res


def should_recall(root, text: str) -> Result:
    """explicit / implicit / none for a message, from the configured signals and the index's names."""
    from ..recall.signals import known_names, should_recall as decide

    return Result(
        decide(text, root.config["recall.signals.explicit"], root.config["recall.signals.implicit"], known_names(root))
    )


def prepare(root) -> None:
    """What the next recall would do first, done now (the details layer's search cache synced)."""
    from ..recall.details import prepare as details

    details(root)

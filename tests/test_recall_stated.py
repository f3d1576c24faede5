"""The user's own statement in the session that covers the question (``Ask.stated``) is no answer
that ends the cascade (the memories are asked too), but when no memory answers it comes first:
before the candidates that merely relate and before a match by meaning alone (the semantic layer,
here a fake step, so that the words alone and the extra give the same order)."""

import pytest

from memcli import Memory

NOW = "2026-12-01T00:00:00Z"


@pytest.fixture
def mem(root, monkeypatch):
    from memcli.search import embed

    monkeypatch.setattr(embed, "available", lambda: False)
    m = Memory(root)
    m.remember("Deploy order", "database first, then the api, then the workers", tags=["deploy"])
    return m


def ids(res):
    return [h.id for h in res.hits]


def test_the_users_statement_comes_before_a_match_by_meaning(mem, monkeypatch):
    from memcli.search import embed, semantic

    mem.session("default").add("user", "the deploy password rule is: never paste it into chat", now=NOW)
    monkeypatch.setattr(embed, "available", lambda: True)
    # the embedding stands out for the only memory, which shares one word with the question
    monkeypatch.setattr(semantic, "search", lambda *a, **kw: [("memory/deploy-order.md", 0.9, ("embedding",))])
    res = mem.recall("deploy password rule", now=NOW)
    assert res.hits and res.hits[0].layer == "session", [(h.layer, h.id) for h in res.hits]
    assert [t.layer for t in res.trace][-1] == "semantic"  # the memories were asked too
    # without the statement the meaning match is what there is
    mem.session("default").clear(now=NOW)
    assert ids(mem.recall("deploy password rule", now=NOW)) == ["deploy-order"]


def test_the_users_statement_comes_before_what_merely_relates(mem):
    mem.remember(
        "Keeping images small",
        "multi-stage build, a distroless base and a .dockerignore that leaves out node_modules",
        tags=["build"],
    )
    question = "what do slim Podman images need for a multi-stage build"  # Podman: a name no memory holds
    related = mem.recall(question, now=NOW)
    assert [(h.id, h.sure) for h in related.hits] == [("keeping-images-small", "weak")]  # it relates, no answer
    mem.session("default").add("user", "slim Podman images need the multi-stage build we use for Docker", now=NOW)
    res = mem.recall(question, now=NOW)
    assert res.hits[0].layer == "session", [(h.layer, h.id, h.sure) for h in res.hits]
    # a memory that answers still answers first: the statement is no answer that ends the cascade
    mem.remember("Slim Podman images", "a multi-stage build and the distroless base, as for Docker", tags=["podman"])
    assert ids(mem.recall(question, now=NOW))[:1] == ["slim-podman-images"]

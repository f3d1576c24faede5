"""`update` rewrites only the frontmatter keys it changes: a person's comments, block lists and
the text of every other key stay byte for byte (property-tested over many layouts)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.model import TYPES
from memcli.store import details as dfile
from tests.conftest import examples

WORD = st.sampled_from(["ops", "db", "alpha-1", "数据库", "迁移", "cache", "Deploy", "x2"])
PHRASE = st.lists(WORD, min_size=1, max_size=5).map(" ".join)
COMMENT = st.sampled_from(["", "  # keep", "   # owner: alice", " # 保留"])
INDENT = st.sampled_from(["", "  ", "    "])
SCALARS = ("title", "summary", "type", "importance", "pinned", "expires", "source", "owner")


@st.composite
def frontmatters(draw):
    """(text of a hand-written file, {key: its lines}) with comments, flow and block lists."""
    keys = draw(st.permutations(list(SCALARS) + ["tags", "aliases"]))
    keys = [k for k in keys if k == "title" or draw(st.booleans())]
    spans: dict = {}
    lines: list = []
    for key in keys:
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["# owner: alice (ask before changing)", "", "# 注释", "#"])))
        if key in ("tags", "aliases"):
            items = draw(st.lists(WORD, min_size=1, max_size=4, unique_by=lambda w: w.lower()))
            if draw(st.booleans()):
                span = [f"{key}: [{', '.join(items)}]{draw(COMMENT)}"]
            else:
                indent = draw(INDENT)
                span = [f"{key}:{draw(COMMENT)}"] + [f"{indent}- {w}{draw(COMMENT)}" for w in items]
        else:
            value = {
                "title": draw(PHRASE),
                "summary": draw(PHRASE),
                "type": draw(st.sampled_from(TYPES)),
                "importance": draw(st.sampled_from(["0.5", "0.25", "1.0"])),
                "pinned": draw(st.sampled_from(["true", "false"])),
                "expires": draw(st.sampled_from(["2027-01-31", "null"])),
                "source": draw(PHRASE),
                "owner": draw(PHRASE),
            }[key]
            span = [f"{key}: {value}{draw(COMMENT)}"]
        spans[key] = span
        lines += span
    body = draw(st.sampled_from(["Body.\n", "", "# Heading\n\ntext\n"]))
    return "---\n" + "\n".join(lines) + "\n---\n" + body, spans


@st.composite
def changes(draw, old):
    new = {"updated": "2026-12-01T04:00:00Z"}
    if draw(st.booleans()):
        new["title"] = draw(PHRASE) + " new"
    if draw(st.booleans()):
        new["summary"] = draw(PHRASE) + " | changed"
    if draw(st.booleans()):
        added = draw(st.lists(st.sampled_from(["new", "extra", "新"]), max_size=2, unique=True))
        drop = set(draw(st.lists(st.sampled_from(list(old.tags) or ["none"]), max_size=2)))
        new["tags"] = tuple(t for t in dict.fromkeys((*old.tags, *added)) if t not in drop)
    if draw(st.booleans()):
        new["aliases"] = tuple(dict.fromkeys((*old.aliases, old.title)))
    if draw(st.booleans()):
        new["importance"] = draw(st.sampled_from([0.9, 0.1]))
    if draw(st.booleans()):
        new["pinned"] = not old.pinned
    if draw(st.booleans()):
        new["expires"] = draw(st.sampled_from([None, "2030-05-05"]))
    return new


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_update_rewrites_only_the_changed_keys(data):
    raw, spans = data.draw(frontmatters())
    old = dfile.parse(raw, "x")
    kw = data.draw(changes(old))
    new = old.replace(body=old.body + "more\n", **kw)
    text = dfile.render_update(raw, old, new)
    assert dfile.parse(text, "x") == new.replace(body=new.body)
    assert dfile.parse(text, "x").extra == old.extra
    changed = {k for k in kw if getattr(old, k) != getattr(new, k)}
    for key, span in spans.items():
        if key not in changed:
            assert "\n" + "\n".join(span) + "\n" in text, (key, raw, text)
    for ln in raw.split("---\n")[1].split("\n"):
        if ln.startswith("#"):
            assert ln in text.split("\n"), (ln, text)


def test_a_block_list_keeps_the_comments_of_the_items_it_keeps():
    raw = (
        "---\ntitle: T\ntags:   # the teams\n  - ops   # keep\n  - db\n  - web  # gone soon\n"
        "importance: 0.5  # a guess\n---\nB\n"
    )
    old = dfile.parse(raw, "x")
    new = old.replace(tags=("ops", "db", "new"), importance=0.9)
    text = dfile.render_update(raw, old, new)
    assert text == (
        "---\ntitle: T\ntags:   # the teams\n  - ops   # keep\n  - db\n  - new\nimportance: 0.9  # a guess\n---\nB\n"
    )
    new = old.replace(tags=("db",))
    assert "tags:   # the teams\n  - db\n" in dfile.render_update(raw, old, new)


def test_a_layout_it_cannot_be_sure_of_is_rendered_whole():
    raw = "---\ntitle: T\n? complex\n: key\n---\nB\n"
    try:
        old = dfile.parse(raw, "x")
    except dfile.FrontmatterError:
        return
    new = old.replace(importance=0.9)
    assert dfile.render_update(raw, old, new) == dfile.render(new)

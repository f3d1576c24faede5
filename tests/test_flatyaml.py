"""The fast frontmatter reader agrees with the YAML loader wherever it answers."""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memcli.store import details as dfile
from memcli.store import flatyaml
from memcli.store import frontmatter as fm_module
from tests.conftest import examples


def full(text):
    yaml, Loader, _ = fm_module.yaml_classes()
    return yaml.load(text, Loader=Loader)


scalar = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=20),
    st.sampled_from(
        [
            "yes",
            "no",
            "on",
            "off",
            "true",
            "False",
            "null",
            "~",
            "0.8",
            "1",
            "-3",
            "007",
            "1e3",
            "2026-11-29",
            "2026-11-29T10:00:00Z",
            "2026-01-02 03:04:05+08:00",
            ".inf",
            "0x1F",
            "1_000",
            "'quoted'",
            "'it''s'",
            '"dq"',
            "a: b",
            "a #c",
            "[x]",
            "- item",
            "&anchor",
            "*alias",
            ":x",
            "190:20:30",
            "10:00",
            "中文",
            "#notcomment",
            "x,y",
        ]
    ),
)
key = st.from_regex(r"[a-z_][a-z0-9_-]{0,8}", fullmatch=True)


@st.composite
def frontmatter(draw):
    lines = []
    for k in draw(st.lists(key, max_size=8, unique=True)):
        if draw(st.booleans()):
            lines.append(f"{k}: [{', '.join(draw(st.lists(scalar, max_size=4)))}]")
        else:
            lines.append(f"{k}: {draw(scalar)}")
    return "\n".join(lines)


@settings(max_examples=examples(2000), deadline=None)
@given(frontmatter())
def test_agrees_with_yaml_whenever_it_answers(text):
    fast = flatyaml.load(text)
    if fast is None:
        return
    try:
        expected = full(text)
    except Exception:  # noqa: BLE001
        raise AssertionError(f"fast reader accepted text YAML rejects: {text!r}")
    assert fast == (expected or {}), text
    assert [type(v) for v in fast.values()] == [type(v) for v in (expected or {}).values()]


@settings(max_examples=examples(300), deadline=None)
@given(frontmatter())
def test_whole_files_parse_the_same_either_way(text):
    body = "---\n" + text + "\n---\nbody\n"
    try:
        slow = dfile.parse(body, "x", use_fast=False)
    except dfile.FrontmatterError:
        return
    assert dfile.parse(body, "x") == slow


def test_memcli_written_files_take_the_fast_path(example_root):
    for p in (example_root / "memory").glob("*.md"):
        fm, _, _ = dfile.split(p.read_text(encoding="utf-8"))
        assert flatyaml.load(fm) == full(fm), p.name


plain_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    scalar,
    st.lists(scalar, max_size=4),
)


@settings(max_examples=examples(2000), deadline=None)
@given(plain_values)
@example(["0:?"])  # a colon inside a flow list: PyYAML reads `[0:?]` as a broken mapping
def test_values_written_without_yaml_read_back_the_same_everywhere(value):
    plain = fm_module.plain(value)
    if plain is None:
        return
    text = f"k: {plain}"
    expected = list(value) if isinstance(value, tuple) else value
    assert full(text) == {"k": expected}
    assert flatyaml.load(text) == {"k": expected}
    assert [type(v) for v in full(text).values()] == [type(expected)]

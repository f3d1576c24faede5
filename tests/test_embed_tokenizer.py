"""The ids the semantic model embeds: the sentencepiece package's for the model's own sp.model,
pinned (tests/data/usem3_tokenizer_ids.json), so a release that segments otherwise is caught."""

import json
from pathlib import Path

import pytest

from memcli.search import embed

needs_model = pytest.mark.skipif(not embed.available(), reason="the semantic extra is not installed")
REFERENCE = json.loads((Path(__file__).parent / "data" / "usem3_tokenizer_ids.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ids(tmp_path_factory):
    """The ids the model embeds for a text (with the start and end ids)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "model-cache"))
    embed._loaded = None
    tokenizer = embed.load().tokenizer
    yield lambda text: tokenizer.encode(text, add_bos=True, add_eos=True)
    embed._loaded = None
    mp.undo()


@needs_model
def test_ids_are_the_pinned_ones(ids):
    cases = REFERENCE["cases"]
    assert len(cases) > 100
    wrong = [(text, ids(text), pinned) for text, pinned in cases if ids(text) != pinned]
    assert not wrong, wrong[:3]


@needs_model
def test_a_run_of_unknown_characters_is_one_unk_and_an_empty_text_none(ids):
    got = ids("🙂🙂🙂 three in a row")
    assert got[:3] == [1, 6, 0] and got.count(0) == 1  # "▁", then one <unk> for the three
    assert ids("") == ids("   ") == [1, 2]


@needs_model
def test_path_scores_are_summed_in_single_precision(ids):
    # "é" then "éé" and "éé" then "é" have the same score in double precision; SentencePiece's
    # single-precision sums prefer the second
    assert ids(":ééé") == [1, 136, 63834, 515, 2]

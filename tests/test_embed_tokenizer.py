"""The semantic model's tokenizer gives SentencePiece's ids: pinned to ids the sentencepiece
package gave for the model's own sp.model (tests/data/usem3_tokenizer_ids.json), and checked
against the package itself where it is installed. (Why memcli does not load the model with it:
``memcli.search.embed.Tokenizer``'s docstring and README's semantic section.)"""

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memcli.search import embed
from tests.conftest import examples

needs_model = pytest.mark.skipif(not embed.available(), reason="the semantic extra is not installed")
REFERENCE = json.loads((Path(__file__).parent / "data" / "usem3_tokenizer_ids.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "model-cache"))
    embed._loaded = None
    yield embed.load().tokenizer
    embed._loaded = None
    mp.undo()


@needs_model
def test_ids_are_sentencepieces(tokenizer):
    cases = REFERENCE["cases"]
    assert len(cases) > 100
    wrong = [(text, tokenizer.encode(text), ids) for text, ids in cases if tokenizer.encode(text) != ids]
    assert not wrong, wrong[:3]


@needs_model
def test_a_run_of_unknown_characters_is_one_unk_and_an_empty_text_none(tokenizer):
    ids = tokenizer.encode("🙂🙂🙂 three in a row")
    assert ids[:3] == [1, 6, 0] and ids.count(0) == 1  # "▁", then one <unk> for the three
    assert tokenizer.encode("") == tokenizer.encode("   ") == [1, 2]


@needs_model
def test_path_scores_are_summed_in_single_precision_as_sentencepiece_sums_them(tokenizer):
    # "é" then "éé" and "éé" then "é" have the same score in double precision; SentencePiece's
    # single-precision sums prefer the second (ids the sentencepiece package gave)
    assert tokenizer.encode(":ééé") == [1, 136, 63834, 515, 2]


text = st.lists(
    st.sampled_from(
        [
            *"abc xyz-_.:",
            "数据库",
            "乱码",
            "ＡＢ",
            "ﬁ",
            "①",
            "\u200b",
            "🙂",
            "👩\u200d💻",
            "é",
            "e\u0301",
            "한",
            "ア",
            "\u0627",
            "\u202e",
            "  ",
        ]
    ),
    max_size=40,
).map("".join)


@needs_model
@settings(max_examples=examples(200), deadline=None)
@given(text)
@example(":ééé")  # sums that tie in double precision and not in SentencePiece's single precision
def test_ids_match_the_sentencepiece_package(tokenizer, s):
    sentencepiece = pytest.importorskip("sentencepiece")
    sp = _processor(sentencepiece)
    assert tokenizer.encode(s) == sp.encode(s, add_bos=True, add_eos=True)


_sp = []


def _processor(sentencepiece):
    if not _sp:
        _sp.append(sentencepiece.SentencePieceProcessor(model_file=str(embed._resources() / "sp.model")))
    return _sp[0]

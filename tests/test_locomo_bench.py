"""benchmarks/locomo.py on a tiny conversation written here in the LoCoMo format (the real data
set stays outside the repository): roots, scoring and the report."""

import json
import sys

from tests.conftest import ROOT_DIR

sys.path.insert(0, str(ROOT_DIR / "benchmarks"))

import locomo  # noqa: E402

CONVERSATION = {
    "sample_id": "synthetic-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "9:15 am on 3 March, 2024",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I finally repaired the old sailboat this weekend."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice! I started learning the cello last month."},
        ],
        "session_2_date_time": "6:40 pm on 20 April, 2024",
        "session_2": [
            {
                "speaker": "Ana",
                "dia_id": "D2:1",
                "text": "We sailed to the lighthouse island yesterday.",
                "blip_caption": "a small white boat near a lighthouse",
            },
            {"speaker": "Ben", "dia_id": "D2:2", "text": "My cello teacher says my bowing improved."},
        ],
    },
    "qa": [
        {"question": "What did Ana repair?", "answer": "a sailboat", "evidence": ["D1:1"], "category": 4},
        {"question": "Which instrument is Ben learning?", "answer": "cello", "evidence": ["D1:2"], "category": 4},
        {
            "question": "When did Ana sail to the lighthouse island?",
            "answer": "19 April 2024",
            "evidence": ["D2:1"],
            "category": 2,
        },
        {"question": "Is this adversarial?", "answer": "n/a", "evidence": [], "category": 5},
    ],
}


def test_turns_become_detail_files_of_a_real_root(tmp_path):
    mem, last = locomo.write_root(CONVERSATION, tmp_path / "root")
    files = sorted(p.name for p in (tmp_path / "root" / "memory").glob("*.md"))
    assert files == ["d1-1.md", "d1-2.md", "d2-1.md", "d2-2.md"]
    d = mem.get("d2-1")
    assert d.tags == ("ana",) and d.created.startswith("2024-04-20") and "lighthouse" in d.body
    assert "20 April 2024" in d.body and last.date().isoformat() == "2024-04-20"
    assert "→ memory/d1-1.md" in (tmp_path / "root" / "MEMORY.md").read_text(encoding="utf-8")


def test_the_report_scores_both_engines(tmp_path, capsys):
    data = tmp_path / "conv.json"
    data.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    assert locomo.main([str(data), "--json"]) == 0
    out = capsys.readouterr().out
    rows = json.loads(out.strip().splitlines()[-1])
    overall = {r["engine"]: r for r in rows if r["category"] == "all"}
    assert overall["memcli"]["n"] == 3  # category 5 is skipped
    assert overall["memcli"]["any@1"] == 1.0 and overall["bm25"]["any@5"] == 1.0


def test_missing_data_is_a_clear_error(tmp_path, capsys):
    assert locomo.main([str(tmp_path / "nope.json")]) == 2
    assert "locomo data not found" in capsys.readouterr().err

"""`unrecall bench locomo`: evidence cleaning, the baselines, scoring, CLI.

No LoCoMo text is used here (its licence is CC BY-NC): the conversation
below is invented, in the same schema.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from unrecall.bench.locomo import (
    BM25Retriever,
    Conversation,
    DenseRetriever,
    Turn,
    clean_evidence,
    load_locomo,
    parse_session_time,
    run_system,
    score_qa,
)
from unrecall.interfaces.cli import main

QUESTIONS = [
    "What did Marta repair?",
    "Which instrument is Jonas learning?",
    "When is the recital?",
    "Where does Marta ride now?",
    "What did Jonas repair?",
    "Who owns a boat?",
]


def tiny_conversation() -> dict[str, Any]:
    """Two sessions, eight turns, six questions: a split and a colon-broken
    evidence string, an id naming no turn, a question with no valid
    evidence left and one adversarial (category 5) question."""
    s1 = [
        ("Marta", "I finally repaired the old bicycle my grandfather left me."),
        ("Jonas", "Nice! Where are you going to ride it?"),
        ("Marta", "Along the river path to the bakery every Sunday."),
        ("Jonas", "I started learning the cello last month."),
    ]
    s2 = [
        ("Marta", "The bakery closed, so now I ride to the lighthouse instead."),
        ("Jonas", "My cello teacher says I practise too fast."),
        ("Marta", "Slow down and record yourself, it helps."),
        ("Jonas", "I will play at my recital in June."),
    ]

    def session(n: int, turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = [
            {"speaker": who, "dia_id": f"D{n}:{i}", "text": text}
            for i, (who, text) in enumerate(turns, 1)
        ]
        # image fields are ignored, as the protocol says
        rows[0] |= {"img_url": ["x"], "blip_caption": "a picture"}
        return rows

    evidence: list[tuple[list[str], int]] = [
        (["D1:1"], 4),
        (["D1:4; D2:2"], 1),
        (["D:2:4"], 2),
        (["D2:1", "D7:3"], 3),
        (["D1:1"], 5),
        (["D", "D9:9"], 4),
    ]
    return {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Marta",
            "speaker_b": "Jonas",
            "session_1_date_time": "9:15 am on 3 March, 2021",
            "session_1": session(1, s1),
            "session_2_date_time": "4:40 pm on 17 April, 2021",
            "session_2": session(2, s2),
            "session_3_date_time": "1:00 pm on 1 May, 2021",  # a date with no session
        },
        "qa": [
            {"question": q, "answer": "-", "evidence": ev, "category": cat}
            for q, (ev, cat) in zip(QUESTIONS, evidence, strict=True)
        ],
    }


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([tiny_conversation()]), encoding="utf-8")
    return path


def test_clean_evidence_repairs_the_malformed_forms() -> None:
    assert clean_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert clean_evidence(["D:11:26"]) == ["D11:26"]
    assert clean_evidence([" D3:4 ", "D 5:6", "D1:2,D1:3"]) == ["D3:4", "D5:6", "D1:2", "D1:3"]
    # an id given twice counts once; a bare "D" is left for the existence check
    assert clean_evidence(["D1:1", "D1:1;", "D"]) == ["D1:1", "D"]
    assert clean_evidence([]) == []


def test_session_time_is_parsed_as_utc() -> None:
    expected = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
    assert parse_session_time("1:56 pm on 8 May, 2023") == expected


def test_loading_cleans_counts_and_leaves_out_category_5(tiny_file: Path) -> None:
    [conv], cleaning = load_locomo(tiny_file)
    assert [t.dia_id for t in conv.turns] == [f"D{s}:{i}" for s in (1, 2) for i in range(1, 5)]
    assert conv.turns[0].doc == "Marta: I finally repaired the old bicycle my grandfather left me."
    assert conv.turns[4].timestamp == datetime(2021, 4, 17, 16, 40, tzinfo=UTC).timestamp()
    assert [(q.index, q.category, q.evidence) for q in conv.qas] == [
        (0, 4, ("D1:1",)),
        (1, 1, ("D1:4", "D2:2")),
        (2, 2, ("D2:4",)),
        (3, 3, ("D2:1",)),
    ]
    assert vars(cleaning) == {
        "evidence_strings": 7,
        "repaired": 2,
        "unknown_ids_dropped": 3,  # D7:3, D, D9:9
        "qa_no_evidence_skipped": 1,
        "qa_category5_left_out": 1,
        "qa_other_category_left_out": 0,
        "qa_scored": 4,
    }
    [conv], cleaning = load_locomo(tiny_file, limit_qa=2)
    assert len(conv.qas) == 2 and cleaning.qa_scored == 2


def test_scoring_counts_a_turn_once_and_does_not_refill() -> None:
    table = {"a": ["D1:1"], "b": ["D1:1"], "c": ["D1:2"], "d": ["D1:3"]}
    # a and b are one turn; "zz" is unknown (a result that is no evidence)
    keys = ["a", "b", "zz", "x", "y", "c", "d"]
    got = score_qa(keys, table, ["D1:2", "D1:3"])
    assert got == {"recall@5": 0.0, "recall@10": 1.0, "hit@10": 1.0}
    assert score_qa(["a"], table, ["D1:1", "D1:3"])["recall@5"] == 0.5
    assert score_qa([], table, ["D1:1"]) == {"recall@5": 0.0, "recall@10": 0.0, "hit@10": 0.0}


def _retrieval_order(retriever: Any, conv: Conversation, question: str) -> list[str]:
    retriever.reset()
    for turn in conv.turns:
        retriever.add(turn)
    retriever.finish_ingest()
    return retriever.search(question, 3)


def test_bm25_ranks_the_matching_turn_first(tiny_file: Path) -> None:
    pytest.importorskip("rank_bm25")
    [conv], _ = load_locomo(tiny_file)
    assert _retrieval_order(BM25Retriever(), conv, "bicycle grandfather")[0] == "D1:1"
    assert _retrieval_order(BM25Retriever(), conv, "LIGHTHOUSE?")[0] == "D2:1"


def test_dense_ranks_a_paraphrase_first(tiny_file: Path) -> None:
    [conv], _ = load_locomo(tiny_file)
    order = _retrieval_order(DenseRetriever(), conv, "Jonas has a recital in June")
    assert order[0] == "D2:4"


def test_bm25_without_rank_bm25_is_reported_not_installed(
    tiny_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rank_bm25", None)  # makes the import fail
    convs, _ = load_locomo(tiny_file)
    run = run_system("bm25", convs)
    assert run.status.startswith("not installed") and run.rows == []


def test_a_system_that_breaks_mid_run_fails_alone(tiny_file: Path) -> None:
    class Broken:
        def reset(self) -> None: ...
        def add(self, turn: Turn) -> list[str]:
            return [turn.dia_id]

        def finish_ingest(self) -> None: ...
        def search(self, question: str, k: int) -> list[str]:
            raise RuntimeError("index lost")

        def close(self) -> None: ...

    convs, _ = load_locomo(tiny_file)
    run = run_system("broken", convs, factory=lambda name: Broken())
    assert run.status == "failed: RuntimeError: index lost" and run.rows == []


def _run_cli(tiny_file: Path, out: Path, systems: str) -> dict[str, Any]:
    code = main(["bench", "locomo", "--data", str(tiny_file), "--systems", systems,
                 "--out", str(out), "--quiet"])  # fmt: skip
    assert code == 0
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def _check_outputs(summary: dict[str, Any], out: Path, systems: list[str]) -> None:
    assert summary["questions"] == {
        "multi-hop": 1,
        "temporal": 1,
        "open-domain": 1,
        "single-hop": 1,
        "overall": 4,
    }
    assert summary["evidence_cleaning"]["repaired"] == 2
    assert summary["network_attempts"] == 0
    for name in systems:
        block = summary["systems"][name]
        assert block["status"] == "ok", (name, block["status"])
        overall = block["metrics"]["overall"]
        assert overall["n"] == 4
        assert 0.0 <= overall["recall@5"] <= overall["recall@10"] <= 1.0
        assert block["ingest_ms_per_turn"]["n"] == 8
        assert block["search_ms_per_query"]["n"] == 4
        assert block["search_ms_per_query"]["p50"] > 0
    # per_qa.json: numbers and ids only, category 5 left out
    rows = json.loads((out / "per_qa.json").read_text(encoding="utf-8"))
    assert [(r["qa"], r["category"]) for r in rows] == [(0, 4), (1, 1), (2, 2), (3, 3)]
    assert set(rows[0]["recall@10"]) == set(systems)
    dumped = (out / "per_qa.json").read_text() + (out / "summary.json").read_text()
    dumped += (out / "summary.md").read_text()
    for text in [*QUESTIONS, "bicycle", "Marta"]:
        assert text not in dumped
    md = (out / "summary.md").read_text()
    assert "### recall@5" in md and "### hit@10" in md
    assert all(f"| {name} |" in md for name in systems)


def test_cli_end_to_end_on_dense_and_unrecall(tiny_file: Path, tmp_path: Path) -> None:
    summary = _run_cli(tiny_file, tmp_path / "out", "dense,unrecall")
    _check_outputs(summary, tmp_path / "out", ["dense", "unrecall"])
    # eight turns and a top 10: every evidence turn is found
    dense = summary["systems"]["dense"]["metrics"]
    assert dense["overall"]["recall@10"] == 1.0 and dense["overall"]["hit@10"] == 1.0
    assert summary["systems"]["unrecall"]["metrics"]["overall"]["hit@10"] > 0


def test_cli_end_to_end_with_bm25_and_rrf(tiny_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("rank_bm25")
    systems = ["bm25", "dense", "rrf", "unrecall"]
    summary = _run_cli(tiny_file, tmp_path / "out", ",".join(systems))
    _check_outputs(summary, tmp_path / "out", systems)
    for name in ("bm25", "rrf"):
        metrics = summary["systems"][name]["metrics"]
        assert metrics["overall"]["recall@10"] == 1.0
        assert all(metrics[c]["n"] == 1 for c in ("multi-hop", "temporal", "single-hop"))


def test_bad_input_exits_2(tiny_file: Path, tmp_path: Path) -> None:
    base = ["bench", "locomo", "--data", str(tiny_file), "--out", str(tmp_path), "--quiet"]
    assert main([*base, "--systems", "bm25,nope"]) == 2
    assert main([*base, "--systems", "dense", "--conversations", "0"]) == 2
    missing = ["bench", "locomo", "--data", str(tmp_path / "none.json"), "--quiet"]
    assert main([*missing, "--systems", "dense"]) == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert main(["bench", "locomo", "--data", str(broken), "--systems", "dense"]) == 2
    assert not (tmp_path / "summary.json").exists()

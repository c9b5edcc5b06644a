"""The Memora harness: evidence → probes, matching, FAMA, runs and outputs.

Everything runs on a tiny synthetic persona written to ``tmp_path`` in
Memora's layout and on a fake dialogue system, so no embedder is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from unrecall.bench import memora
from unrecall.bench.memora import (
    ABSENCE,
    PRESENCE,
    Probe,
    Question,
    absence_probes,
    aggregate,
    build_question,
    default_data_dir,
    fama,
    found,
    join_texts,
    load_dataset,
    presence_probes,
    render_markdown,
    residual_values,
    run_benchmark,
    score_question,
    write_outputs,
)
from unrecall.bench.peers import PeerUnavailable
from unrecall.interfaces.cli import main as cli_main


def main(argv: list[str]) -> int:
    """``unrecall bench memora`` with these arguments."""
    return cli_main(["bench", "memora", *argv])


# -- a synthetic persona in Memora's format ----------------------------------------
def _turn(i: int, speaker: str, message: str) -> dict[str, Any]:
    return {"turn": i, "speaker": speaker, "message": message, "share_memory": True}


SESSIONS: list[tuple[str, str | None, list[tuple[str, str]]]] = [
    ("2025-06-01", "add", [("user_agent", "Add 'Buy oat milk' to my todo list."),
                           ("ai_agent", "Added 'Buy oat milk'.")]),
    ("2025-06-01", "add", [("user_agent", "Add 'Call the plumber' to my todo list."),
                           ("ai_agent", "Done.")]),
    ("2025-06-01", "add", [("user_agent", "The grant budget is $1,200,000 for now."),
                           ("ai_agent", "Noted the budget.")]),
    ("2025-06-02", "delete", [("user_agent", "Please forget 'Call the plumber', I did it."),
                              ("ai_agent", "Okay.")]),
    ("2025-06-02", "update", [("user_agent", "Change the grant budget to $1,000,000."),
                              ("ai_agent", "Budget updated.")]),
    ("2025-06-02", "add", [("user_agent", "I spent $4.50 on coffee and $12 on lunch."),
                           ("ai_agent", "Logged both.")]),
    ("2025-06-03", "update", [("user_agent", "I used to love opera but now I like jazz."),
                              ("ai_agent", "Jazz it is."),
                              ("user_agent", "The team offsite is tomorrow.")]),
]  # fmt: skip


def _rubric(presence: int, absence: int, absence_texts: list[str] | None = None) -> dict[str, Any]:
    qs = [{"evaluation_question": f"p{i}?", "expected_answer": "yes",
           "evaluation_type": PRESENCE} for i in range(presence)]  # fmt: skip
    texts = absence_texts or [f"f{i}?" for i in range(absence)]
    qs += [{"evaluation_question": t, "expected_answer": "no", "evaluation_type": ABSENCE}
           for t in texts]  # fmt: skip
    return {
        "evaluation_questions": qs,
        "total_evaluation_questions": presence + absence,
        "memory_presence_questions": presence,
        "forgetting_absence_questions": absence,
    }


QUESTIONS: dict[str, list[dict[str, Any]]] = {
    "remembering": [
        {
            "question_id": "todos_1",
            "question": "What tasks remain on my todo list?",
            "memory_evidence": {
                "remaining_tasks": [{"value": "Buy oat milk", "session_id": 1}],
                "task_count": 1,
            },
            "forgetting_evidence": {
                "forgotten_items": [
                    {"value": "Call the plumber", "session_id": 4},
                    {"value": "Call the plumber", "session_id": 4},
                ],
                "total_forgotten_items": 2,
            },
            "evaluation": _rubric(1, 2),
        },
        {
            "question_id": "proposal_1",
            "question": "Write the grant proposal.",
            "memory_evidence": {
                "content_data": {"budget": 1000000, "stakeholders": ["Alice", "Bob"]},
                "session_history": [3, 5],
            },
            "forgetting_evidence": {
                "forgotten_items": [{"field": "budget", "value": 1200000, "session_id": 5}],
                "total_forgotten_items": 1,
            },
            "evaluation": _rubric(2, 1),
        },
        {
            "question_id": "calendar_1",
            "question": "What upcoming events do I have?",
            "memory_evidence": {"event_count": 0, "calendar_events": []},
            "forgetting_evidence": {
                "forgotten_items": [{"session_id": 7}],
                "total_forgotten_items": 1,
            },
            "evaluation": {
                **_rubric(0, 1, ["Does the response mention the past event: Team offsite?"]),
            },
        },
    ],
    "reasoning": [
        {
            "question_id": "food_total_1",
            "question": "What is my total food spending?",
            "memory_evidence": {
                "expense_count": 2,
                "total_amount": 16.5,
                "food_expenses": [
                    {"expense_type": "coffee", "amount": 4.5, "session_id": 6},
                    {"expense_type": "lunch", "amount": 12, "session_id": 6},
                ],
            },
            "evaluation": _rubric(1, 0),
        }
    ],
    "recommending": [
        {
            "question_id": "music_1",
            "question": "Suggest me some music.",
            "memory_evidence": {
                "item_count": 1,
                "memory_items": {
                    "genres": {"likes": [{"item": "jazz", "session_id": 7}], "dislikes": []}
                },
            },
            "forgetting_evidence": {
                "forgotten_items": [{"value": "opera", "session_id": 7}],
                "total_forgotten_items": 1,
            },
            "evaluation": _rubric(1, 1),
        }
    ],
}


def write_persona(root: Path, name: str = "tester") -> Path:
    """A one-persona Memora folder (``root/weekly/<name>``)."""
    folder = root / "weekly" / name
    conv = folder / "conversations"
    conv.mkdir(parents=True)
    for i, (date, op, turns) in enumerate(SESSIONS, 1):
        raw = {
            "session_id": i,
            "session_type": "activity",
            "operation": op,
            "operation_details": {},
            "date": date,
            "persona": name,
            "conversation": [_turn(j, s, m) for j, (s, m) in enumerate(turns, 1)],
        }
        (conv / f"session_{i:04d}.json").write_text(json.dumps(raw), encoding="utf-8")
    evals = {"persona": name, "date_range": {}, "questions": QUESTIONS}
    (folder / f"evaluation_questions_{name}.json").write_text(json.dumps(evals), encoding="utf-8")
    return root


class FakeDialogue:
    """Keeps every turn; with ``forgetful`` it drops earlier turns quoting
    what a "forget"/"change" turn quotes or names (a crude request executor).
    Recall returns the last ``k`` texts sharing a word with the query."""

    def __init__(self, name: str = "fake", *, forgetful: bool = False) -> None:
        self.name = name
        self.forgetful = forgetful
        self.texts: list[str] = []
        self.calls: list[tuple[str, str, str, float]] = []
        self.closed = False

    def reset(self) -> None:
        self.texts = []

    def add_turn(self, role: str, text: str, *, session_id: str, timestamp: float) -> None:
        self.calls.append((role, text, session_id, timestamp))
        if self.forgetful and role == "user":
            low = text.casefold()
            if "forget" in low:
                target = text.split("'")[1].casefold()
                self.texts = [t for t in self.texts if target not in t.casefold()]
                return  # the request itself is not kept
            if "change the grant budget" in low or "used to love opera" in low:
                gone = "1,200,000" if "budget" in low else "opera"
                self.texts = [t for t in self.texts if gone not in t]
                text = text.replace("I used to love opera but now", "Now")
        self.texts.append(text)

    def recall_texts(self, q: str, k: int) -> list[str]:
        words = {w.strip("?.,").casefold() for w in q.split() if len(w) > 3}
        hits = [t for t in self.texts if words & {w.strip("?.,'$").casefold() for w in t.split()}]
        return (hits or self.texts)[-k:]

    def stored_texts(self) -> list[str]:
        return list(self.texts)

    def close(self) -> None:
        self.closed = True


def _factory(made: dict[str, FakeDialogue] | None = None) -> Any:
    def make(name: str) -> FakeDialogue:
        if name == "mem0":
            raise PeerUnavailable("not installed (pip install mem0ai)")
        if name == "chroma":
            raise RuntimeError("boom")
        system = FakeDialogue(name, forgetful=name == "unrecall")
        if made is not None:
            made[name] = system
        return system

    return make


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_persona(tmp_path / "memora")


# -- matching ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "text", "hit"),
    [
        (1200000, "the budget is $1,200,000 now", True),
        (1200000, "budget 1200000", True),
        (1200000, "budget $11,200,000", False),
        (70, "a goal of $70.00", True),
        (70, "music of the 1970s", False),
        (70, "spent 7.70 on it", False),
        (4.5, "coffee was $4.50", True),
        (309.6900000000001, "total $309.69.", True),
        (12, "12 dollars", True),
        (12, "1.12 dollars", False),
        ("opera", "weekly operations review", False),
        ("opera", "I love Opera!", True),
        ("spiritual", "I used to like spirituals", True),
        ("savanna", "savannas are vast", True),
        ("Chopin's Nocturnes", "chopin’s   nocturnes", True),
        ("Final report to the Agency.", "remove 'Final report to the Agency' please", True),
        ("Plan field work schedule", "I need to plan the field work schedule", False),
        ("1980s", "music from the 1980s", True),
    ],
)
def test_value_matching(value: Any, text: str, hit: bool) -> None:
    assert found(value, join_texts([text])) is hit


def test_values_never_match_across_two_texts() -> None:
    assert not found("oat milk", join_texts(["buy oat", "milk"]))


# -- evidence → probes ---------------------------------------------------------------
def test_presence_probes_per_shape() -> None:
    todo = presence_probes(QUESTIONS["remembering"][0]["memory_evidence"])
    assert todo == [Probe(PRESENCE, "remaining_tasks", ("Buy oat milk",))]  # no task_count
    doc = presence_probes(QUESTIONS["remembering"][1]["memory_evidence"])
    # One probe per field; a list field needs all its elements; session_history skipped.
    assert doc == [Probe(PRESENCE, "budget", (1000000,)),
                   Probe(PRESENCE, "stakeholders", ("Alice", "Bob"))]  # fmt: skip
    total = presence_probes(QUESTIONS["reasoning"][0]["memory_evidence"])
    assert total == [Probe(PRESENCE, "food_expenses", (4.5, 12))]  # not the computed total
    goal = presence_probes({
        "goal_value": 70, "actual_value": 80.88, "goal_status": {"is_goal_met": False},
        "goal_data": {"value": 70}, "goal_session": {"session_id": 1},
        "activity_sessions": [{"session_id": 2, "amount": 40.44},
                              {"session_id": 3, "amount": 40.44}],
    })  # fmt: skip
    assert [p.values for p in goal] == [(70,), (40.44, 40.44), (70, 40.44, 40.44)]
    pref = presence_probes({
        "subcategory_data": {"likes": [{"item": "tragedy"}], "dislikes": [{"item": "memoir"}]},
        "likes_count": 1, "specific_items": [{"item": "tragedy"}],
    })  # fmt: skip
    assert [p.values for p in pref] == [("tragedy",), ("memoir",)]


def test_absence_probes_keep_repeats_and_take_rubric_values() -> None:
    todo = QUESTIONS["remembering"][0]
    probes = absence_probes(todo["forgetting_evidence"], todo["evaluation"]["evaluation_questions"])
    assert [p.values for p in probes] == [("Call the plumber",), ("Call the plumber",)]
    cal = QUESTIONS["remembering"][2]
    probes = absence_probes(cal["forgetting_evidence"], cal["evaluation"]["evaluation_questions"])
    assert probes == [Probe(ABSENCE, "item", ("Team offsite",))]
    assert absence_probes(None, []) == []


def test_build_question_drops_readded_values_and_checks_rubric_counts() -> None:
    q = build_question("p", "recommending", {
        "question_id": "x", "question": "?",
        "memory_evidence": {"memory_items": {"genres": {"likes": [{"item": "Jazz"}],
                                                        "dislikes": []}}},
        "forgetting_evidence": {"forgotten_items": [{"value": "jazz"}, {"value": "opera"}]},
        "evaluation": _rubric(1, 3),
    })  # fmt: skip
    assert [p.values for p in q.absence] == [("opera",)]
    assert any("dropped" in n for n in q.notes)
    assert any("absence probes for 3 rubric items" in n for n in q.notes)


# -- scoring -------------------------------------------------------------------------
def test_fama_formula() -> None:
    assert fama(1.0, 1.0, 3, 2) == 1.0
    assert fama(1.0, 0.5, 2, 2) == pytest.approx(0.75)  # λ = 0.5
    assert fama(0.5, 0.0, 1, 3) == 0.0  # clamped at zero
    assert fama(0.4, 0.0, 2, 0) == pytest.approx(0.4)  # λ = 0 without forget items
    assert fama(1.0, 1.0, 0, 0) == 1.0


def _q(presence: list[tuple[Any, ...]], absence: list[Any]) -> Question:
    return Question(
        "p", "remembering", "q",
        "?",
        [Probe(PRESENCE, f"f{i}", v) for i, v in enumerate(presence)],
        [Probe(ABSENCE, "item", (v,)) for v in absence],
    )  # fmt: skip


def test_score_question_rules() -> None:
    q = _q([("Buy oat milk",), ("Alice", "Bob")], ["Call the plumber", "opera"])
    ok = score_question(q, ["buy oat milk", "Alice and Bob"])
    assert ok.passed and ok.mpa == 1.0 and ok.faa == 1.0 and ok.fama == 1.0
    partial = score_question(q, ["buy oat milk", "Alice", "call the plumber today"])
    assert not partial.passed
    assert partial.presence_ok == 1 and partial.values_found == 2 and partial.values == 3
    assert partial.missing == ["f1: Bob"] and partial.leaked == ["item: Call the plumber"]
    # MPA 0.5, FAA 0.5, λ = 2/4 → 0.5 − 0.25
    assert partial.fama == pytest.approx(0.25)
    long = score_question(q, ["x" * 500])
    assert len(long.topk[0]) == memora.TOPK_CHARS


def test_aggregate_pools_probes_and_averages_fama() -> None:
    a = score_question(_q([("a",)], ["z"]), ["a"])  # pass
    b = score_question(_q([("a",), ("b",), ("c",)], []), ["b"])  # 1/3, no forget items
    agg = aggregate([a, b])
    assert agg["n"] == 2 and agg["passed"] == 1 and agg["pass_rate"] == 50.0
    assert agg["mpa"] == 50.0  # 2 of 4 presence probes
    assert agg["faa"] == 100.0  # the only absence probe held
    assert agg["fama"] == pytest.approx(100 * (1 + 1 / 3) / 2, abs=0.01)
    assert aggregate([])["n"] == 0


# -- loading and running -------------------------------------------------------------
def test_load_dataset_orders_sessions_and_maps_roles(dataset: Path) -> None:
    (persona,) = load_dataset(dataset)
    assert persona.name == "tester" and len(persona.sessions) == len(SESSIONS)
    stamps = [s.timestamp for s in persona.sessions]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert stamps[3] - stamps[0] == 86400.0  # the date is kept: next day at midnight
    assert [t.role for t in persona.sessions[0].turns] == ["user", "assistant"]
    assert sum(len(q.notes) for q in persona.questions) == 0
    assert len(load_dataset(dataset, limit_sessions=2)[0].sessions) == 2
    assert residual_values(persona) == ["Call the plumber", 1200000, "Team offsite", "opera"]
    with pytest.raises(memora.MemoraFormatError):
        load_dataset(dataset, ["nobody"])


def test_run_benchmark_scores_reports_na_and_residuals(dataset: Path) -> None:
    personas = load_dataset(dataset)
    made: dict[str, FakeDialogue] = {}
    report = run_benchmark(
        personas, ["unrecall", "baseline", "mem0", "chroma"], factory=_factory(made), guard=False
    )
    fake = made["baseline"]
    assert fake.closed
    # Both speakers, in order, with session ids and the session date as time.
    assert [c[0] for c in fake.calls[:2]] == ["user", "assistant"]
    assert fake.calls[0][2] == "tester-0001" and fake.calls[-1][2] == "tester-0007"
    assert [c[1] for c in fake.calls] == [m for _, _, ts in SESSIONS for _, m in ts]
    s = report.summary()
    assert s["systems"]["mem0"]["status"].startswith("not installed")
    assert s["systems"]["chroma"]["status"].startswith("failed to start: RuntimeError")
    keep, forget = s["systems"]["baseline"], s["systems"]["unrecall"]
    assert keep["residual"]["still_stored"] == 4  # keep-everything holds every forgotten value
    assert forget["residual"]["personas"]["tester"]["values"] == ["Team offsite"]
    assert forget["overall"]["faa"] > keep["overall"]["faa"]
    assert keep["timing_ms"]["ingest"]["n"] == 15 and keep["timing_ms"]["query"]["n"] == 5
    assert set(keep["tasks"]) == {"remembering", "reasoning", "recommending"}
    assert "revision" in forget  # which source tree the unrecall numbers come from
    md = render_markdown(report)
    assert "| mem0 | " in md and "not installed" in md and "failed to start" in md
    assert "| unrecall |" in md and "remembering (n=3)" in md


def test_write_outputs_and_cli(dataset: Path, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(memora, "make_dialogue_system", _factory())
    out = tmp_path / "out"
    rc = main(["--data", str(dataset), "--systems", "baseline,mem0", "--out", str(out),
               "--quiet", "-k", "3"])  # fmt: skip
    assert rc == 0
    rows = json.loads((out / "questions.json").read_text(encoding="utf-8"))
    assert len(rows) == 5 and {r["system"] for r in rows} == {"baseline"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["k"] == 3 and summary["network_attempts"] == 0
    assert summary["systems"]["mem0"]["status"].startswith("not installed")
    assert (out / "summary.md").read_text(encoding="utf-8").startswith("## Memora")
    pytest.importorskip("matplotlib")
    assert (out / "memora.png").stat().st_size > 1000
    # --merge keeps baseline while only unrecall is re-run.
    rc = main(["--data", str(dataset), "--systems", "unrecall", "--out", str(out),
               "--quiet", "-k", "3", "--merge"])  # fmt: skip
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["systems"]) == ["unrecall", "mem0", "baseline"]
    assert summary["systems"]["baseline"]["timing_ms"]["ingest"]["n"] == 15
    rows = json.loads((out / "questions.json").read_text(encoding="utf-8"))
    assert len(rows) == 10


def test_cli_rejects_bad_input(dataset: Path, tmp_path: Path, capsys: Any) -> None:
    assert main(["--data", str(dataset), "--systems", "nope", "--quiet"]) == 2
    assert main(["--data", str(tmp_path / "missing"), "--quiet"]) == 2
    assert main(["--data", str(dataset), "--limit-sessions", "0", "--quiet"]) == 2
    assert "error" in capsys.readouterr().err


def test_write_outputs_without_results(tmp_path: Path, dataset: Path) -> None:
    report = run_benchmark(load_dataset(dataset), ["mem0"], factory=_factory(), guard=False)
    paths = write_outputs(report, tmp_path / "o")
    assert "chart" not in paths and paths["summary_md"].exists()


def test_development_personas_match_their_rubrics() -> None:
    data = default_data_dir()
    if not (data / "weekly").is_dir():
        pytest.skip("Memora dataset not present")
    personas = load_dataset(data)
    assert sum(len(p.questions) for p in personas) == 15 * len(personas)
    assert all(not q.notes for p in personas for q in p.questions)

"""The ForgetEval harness: scoring rules, case files, template suite, CLI."""

from __future__ import annotations

import importlib.util
import json
import random
import socket
from collections import Counter
from pathlib import Path

import pytest

from unrecall.bench.cases import (
    FAMILIES,
    Case,
    CaseFileError,
    dump_cases,
    load_cases,
    parse_cases,
)
from unrecall.bench.forgeteval_harness import (
    NA,
    PASS,
    limit_cases,
    network_guard,
    render_markdown,
    run_benchmark,
    score_case,
    tally,
    wilson,
)
from unrecall.bench.peers import Adapter, BaselineAdapter, PeerUnavailable, make_adapter
from unrecall.bench.templates import (
    SUBTEMPLATES,
    Draft,
    admission_problems,
    generate_template_suite,
)
from unrecall.interfaces.cli import main

MINI = Path(__file__).parent / "data" / "forgeteval_mini.json"


class FakeAdapter:
    """A list-backed adapter whose control plane deletes literal matches;
    ``hide_from_final`` keeps a text alive but out of the final query's top-k,
    ``broken`` makes a primitive raise."""

    name = "fake"

    def __init__(
        self,
        *,
        hide_from_final: str | None = None,
        broken: str | None = None,
        error: type[Exception] = NotImplementedError,
    ) -> None:
        self.hide = hide_from_final
        self.broken = broken
        self.error = error
        self.facts: list[str] = []
        self.final_query: str | None = None

    def _check(self, op: str) -> None:
        if op == self.broken:
            raise self.error(op)

    def reset(self) -> None:
        self.facts = []

    def inscribe(self, text: str) -> int:
        self._check("inscribe")
        self.facts.append(text)
        return len(self.facts)

    def recall_texts(self, q: str, k: int) -> list[str]:
        self._check("recall_texts")
        out = list(self.facts)
        if self.hide and q == self.final_query:
            out = [f for f in out if self.hide not in f]
        return out[:k]

    def _drop(self, q: str) -> int:
        before = len(self.facts)
        self.facts = [f for f in self.facts if q.casefold() not in f.casefold()]
        return before - len(self.facts)

    def supersede(self, old_q: str, new: str) -> None:
        self._check("supersede")
        self._drop(old_q)
        self.facts.append(new)

    def release(self, q: str) -> int:
        self._check("release")
        return self._drop(q)

    def purge(self, q: str) -> int:
        self._check("purge")
        return self._drop(q)


def _case(**over: object) -> Case:
    base = {
        "id": "c1",
        "category": "prefix_collision",
        "family": "purge",
        "setup_facts": ["Ana's email is ana@x.io", "Ana Li's email is ana.li@x.io", "Sky is blue"],
        "mutations": [["purge", "ana@x.io"]],
        "final_query": "Ana's email",
        "must_contain": ["ana.li@x.io"],
        "must_not_contain": ["ana@x.io"],
    }
    base.update(over)
    return Case(**base)  # type: ignore[arg-type]


# -- scoring -------------------------------------------------------------------
def test_pass_when_expected_recalled_and_forbidden_gone() -> None:
    r = score_case(FakeAdapter(), _case())
    assert r.result == PASS and not r.missing and not r.leaked and r.ms >= 0


def test_fail_when_expected_missing() -> None:
    r = score_case(FakeAdapter(), _case(must_contain=["bob@x.io"]))
    assert r.result == "fail" and r.missing == ["bob@x.io"]


def test_fail_when_forbidden_in_final_top_k() -> None:
    case = _case(mutations=[["purge", "Sky"]])  # purges the wrong fact
    r = score_case(FakeAdapter(), case)
    assert r.result == "fail" and r.leaked == ["ana@x.io"]


def test_forbidden_string_probe_catches_a_fact_hidden_from_the_final_query() -> None:
    case = _case(mutations=[["purge", "Sky"]])
    fake = FakeAdapter(hide_from_final="ana@x.io")
    fake.final_query = case.final_query
    r = score_case(fake, case)
    assert r.result == "fail" and r.leaked == [] and r.probe_leaked == ["ana@x.io"]


def test_match_is_casefold_substring_of_joined_top_k() -> None:
    case = _case(must_contain=["ANA.LI@X.IO"], must_not_contain=["ANA@X.IO"])
    assert score_case(FakeAdapter(), case).result == PASS
    # Only the top k count: the expected fact pushed out of the top-2 fails.
    case = _case(setup_facts=["Sky is blue", "Grass is green", "Ana Li's email is ana.li@x.io"])
    assert score_case(FakeAdapter(), case, k=2).missing == ["ana.li@x.io"]


@pytest.mark.parametrize("op", ["purge", "supersede", "release", "inscribe", "recall_texts"])
def test_not_implemented_primitive_is_na(op: str) -> None:
    case = _case(
        mutations=[["supersede", "Sky", "Sky is grey"], ["release", "Sky"], ["purge", "ana@x.io"]]
    )
    r = score_case(FakeAdapter(broken=op), case)
    assert r.result == NA and r.error is None


def test_other_exception_fails_the_case_and_is_recorded() -> None:
    r = score_case(FakeAdapter(broken="purge", error=RuntimeError), _case())
    assert r.result == "fail" and r.error == "RuntimeError: purge"


def test_tally_strict_and_evaluable() -> None:
    cases = [_case(id="a"), _case(id="b", must_contain=["zzz"]), _case(id="c")]
    results = [score_case(FakeAdapter(), c) for c in cases[:2]]
    results.append(score_case(FakeAdapter(broken="purge"), cases[2]))
    t = tally(results)
    assert (t["n"], t["pass"], t["fail"], t["na"]) == (3, 1, 1, 1)
    assert t["strict"] == pytest.approx(33.33) and t["evaluable"] == 50.0
    assert t["evaluable_n"] == 2 and t["median_ms"] is not None
    assert tally([score_case(FakeAdapter(broken="purge"), cases[0])])["evaluable"] is None


def test_wilson_interval() -> None:
    assert wilson(0, 0) == (0.0, 0.0)
    lo, hi = wilson(993, 1000)
    assert 98.5 < lo < 98.7 and 99.6 < hi < 99.7  # the paper's Lethe row: [98.56, 99.66]


def test_baseline_is_na_on_every_mutation_case() -> None:
    with_mutation = score_case(BaselineAdapter(), _case())
    assert with_mutation.result == NA


# -- case files ----------------------------------------------------------------
def _dict(**over: object) -> dict[str, object]:
    d = _case().to_dict()
    d.update(over)
    return d


def _problems(data: object) -> str:
    with pytest.raises(CaseFileError) as exc:
        parse_cases(data, "f.json")
    return str(exc.value)


def test_mini_file_loads_both_top_level_forms(tmp_path: Path) -> None:
    cases = load_cases(MINI)
    assert len(cases) == 11 and cases[1].id == "mini-prefix-1"
    assert cases[-1].mutations == [["release", "one-time code"]]
    path = tmp_path / "list.json"
    dump_cases(cases, path)
    assert load_cases(path) == cases


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"mutations": [["delete", "x"]]}, "op 'delete' is not one of supersede, release, purge"),
        ({"mutations": [["supersede", "x"]]}, "supersede needs a non-empty new_text"),
        ({"mutations": [["purge", "x", "new"]]}, "purge takes no new_text"),
        ({"mutations": [["purge"]]}, "mutations[0] must be a list [op, query]"),
        ({"mutations": "purge x"}, "mutations must be a list"),
        ({"family": "erasure"}, "family 'erasure' is not one of"),
        ({"setup_facts": []}, "setup_facts must not be empty"),
        ({"setup_facts": ["ok", ""]}, "setup_facts[1] must be a non-empty string"),
        ({"final_query": 3}, "final_query must be a non-empty string"),
        ({"must_contain": [], "must_not_contain": []}, "both empty"),
        ({"must_not": ["x"]}, "unknown field(s): must_not"),
    ],
)
def test_invalid_case_is_reported_with_index_id_and_field(
    bad: dict[str, object], message: str
) -> None:
    text = _problems([_dict(id="ok"), _dict(id="bad-one", **bad)])
    assert "case #1 (id 'bad-one')" in text and message in text


def test_missing_fields_and_duplicates_and_shapes() -> None:
    d = _dict()
    del d["final_query"]
    assert "missing field(s): final_query" in _problems([d])
    assert "duplicate id (first used by case #0)" in _problems([_dict(), _dict()])
    assert "expected a list of cases" in _problems({"items": []})
    assert "holds no cases" in _problems([])
    assert "must be a JSON object" in _problems([1])
    assert parse_cases([_dict(_comment="kept out")])[0].id == "c1"


def test_every_problem_is_listed_at_once() -> None:
    text = _problems([_dict(id=f"x{i}", family="nope") for i in range(30)])
    assert "30 problem(s)" in text and "and 5 more" in text


def test_unreadable_and_invalid_json_files(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="cannot read"):
        load_cases(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "x",]', encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"not valid JSON \(line 1"):
        load_cases(bad)


# -- template suite --------------------------------------------------------------
@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return generate_template_suite(42, 1000)


def test_template_suite_size_balance_and_ids(suite: list[Case]) -> None:
    assert len(suite) == 1000
    assert Counter(c.family for c in suite) == dict.fromkeys(FAMILIES, 200)
    assert set(Counter(c.category for c in suite).values()) == {50}
    assert all(len(SUBTEMPLATES[f]) >= 4 for f in FAMILIES)
    assert len({c.id for c in suite}) == 1000
    # Every template case is a valid case-file case.
    assert parse_cases([c.to_dict() for c in suite]) == suite


def test_template_suite_is_deterministic(suite: list[Case]) -> None:
    assert generate_template_suite(42, 1000) == suite
    assert generate_template_suite(42, 40) == suite[:40]
    assert generate_template_suite(7, 40) != suite[:40]
    random.seed(0)  # the generator must not depend on the global random state
    assert generate_template_suite(42, 20) == suite[:20]


def test_template_cases_have_distractors_and_drift_chains(suite: list[Case]) -> None:
    for c in suite:
        fillers = [f for f in c.setup_facts if not any(p in f for p in c.must_contain)]
        assert len(c.setup_facts) >= 5 and len(fillers) >= 4
        if c.family == "drift":
            assert 3 <= len(c.mutations) <= 5 and len(c.must_not_contain) == len(c.mutations)
        else:
            assert len(c.mutations) == 1


def test_admission_refuses_self_substring_traps() -> None:
    draft = Draft(["a"], [], "q", ["Grace"], ["Frank"], ["Grace lives here"], [])
    assert admission_problems(draft, ["Frankie likes tea"]) == [
        "forbidden 'Frank' is in a fact that should stay"
    ]
    assert admission_problems(draft, ["Grace likes tea"]) == ["expected 'Grace' is in a distractor"]
    assert admission_problems(draft, ["Ola likes tea"]) == []


def test_limit_is_stratified_by_category(suite: list[Case]) -> None:
    picked = limit_cases(suite, 20)
    assert len({c.category for c in picked}) == 20
    assert [c.id for c in picked] == sorted(c.id for c in picked)
    mini = limit_cases(load_cases(MINI), 3)
    assert len({c.category for c in mini}) == 3
    assert limit_cases(suite, None) == suite


# -- systems -----------------------------------------------------------------------
def test_unrecall_adapter_on_twenty_template_cases(suite: list[Case]) -> None:
    adapter = make_adapter("unrecall")
    try:
        results = [score_case(adapter, c) for c in limit_cases(suite, 20)]
    finally:
        adapter.close()  # type: ignore[attr-defined]
    assert not [r.error for r in results if r.error]
    assert not [r for r in results if r.result == NA]
    # unrecall implements every primitive; purge precision is still being tuned,
    # so this guards against regressions without pinning every case.
    assert sum(r.result == PASS for r in results) >= 16


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize(
    ("system", "module"),
    [("langgraph", "langgraph"), ("chroma", "chromadb"), ("mem0", "mem0")],
)
def test_peer_adapter_smoke(system: str, module: str, suite: list[Case]) -> None:
    if not _has(module):
        pytest.skip(f"{module} not installed")
    with network_guard() as attempts:
        adapter = make_adapter(system)
        try:
            results = [score_case(adapter, c) for c in limit_cases(suite, 5)]
        finally:
            adapter.close()  # type: ignore[attr-defined]
    assert attempts == []
    assert not [r.error for r in results if r.error]
    assert all(r.result != NA for r in results)


def test_missing_peer_is_reported_not_fatal() -> None:
    def factory(name: str) -> Adapter:
        if name == "ghost":
            raise PeerUnavailable("not installed (pip install ghost)")
        return FakeAdapter()

    report = run_benchmark({"adversarial": [_case()]}, ["ghost", "fake"], factory=factory)
    assert [r.status for r in report.systems] == ["not installed (pip install ghost)", "ok"]
    md = render_markdown(report)
    assert "| ghost | – | not installed (pip install ghost) |" in md
    assert "| prefix_collision (n=1) | 1/1 (100.0%) |" in md


def test_network_guard_refuses_and_records() -> None:
    with network_guard() as attempts:
        with pytest.raises(OSError):
            socket.create_connection(("192.0.2.1", 80), timeout=0.1)
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", 9)) == 111
    assert attempts[0].startswith("resolve 192.0.2.1") and attempts[-1] == "connect 127.0.0.1:9"
    assert socket.getaddrinfo("127.0.0.1", 80)  # restored afterwards


def test_make_adapter_rejects_unknown_names() -> None:
    with pytest.raises(KeyError, match="unknown system"):
        make_adapter("nope")


# -- command line ------------------------------------------------------------------
def test_cli_runs_a_case_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    args = ["--cases", str(MINI), "--systems", "baseline,unrecall", "--limit", "4"]
    code = main(["bench", "forgeteval", *args, "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "### Adversarial suite (4 cases)" in printed and "| baseline |" in printed
    assert (out / "summary.md").read_text(encoding="utf-8") in printed
    rows = json.loads((out / "cases.json").read_text(encoding="utf-8"))
    assert len(rows) == 8 and {r["system"] for r in rows} == {"baseline", "unrecall"}
    assert all(r["result"] == NA for r in rows if r["system"] == "baseline")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["network_attempts"] == 0
    if _has("matplotlib"):
        assert (out / "forgeteval.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "forgeteval", "--systems", "unrecall,nope"]) == 2
    assert "unknown system(s) nope" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([_dict(family="nope")]), encoding="utf-8")
    assert main(["bench", "forgeteval", "--cases", str(bad), "--out", str(tmp_path)]) == 2
    assert "family 'nope' is not one of" in capsys.readouterr().err
    assert main(["bench", "forgeteval", "--cases", str(tmp_path / "none.json")]) == 2
    assert "no such case file" in capsys.readouterr().err


def test_cli_merge_keeps_other_systems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    base = ["bench", "forgeteval", "--cases", str(MINI), "--limit", "3", "--out", out, "--quiet"]
    assert main([*base, "--systems", "baseline"]) == 0
    assert main([*base, "--systems", "unrecall", "--merge"]) == 0
    printed = capsys.readouterr().out.split("## ForgetEval")[-1]
    assert "| baseline |" in printed and "| unrecall |" in printed
    rows = json.loads((Path(out) / "cases.json").read_text(encoding="utf-8"))
    assert [r["system"] for r in rows] == ["unrecall"] * 3 + ["baseline"] * 3
    # Other cases: the earlier results no longer apply and are dropped.
    assert (
        main(
            [
                *base[:-3],
                "--limit",
                "2",
                "--out",
                out,
                "--quiet",
                "--systems",
                "unrecall",
                "--merge",
            ]
        )
        == 0
    )
    rows = json.loads((Path(out) / "cases.json").read_text(encoding="utf-8"))
    assert {r["system"] for r in rows} == {"unrecall"}


def test_published_cases_load_unchanged_overlap_and_provenance_included() -> None:
    """A must_contain inside a must_not_contain is a legal published case:
    another memory can hold the shorter string. Its ``provenance`` is read
    and ignored. Both were refused before, 14 of the 385 published cases."""
    (case,) = parse_cases(
        [
            _dict(
                must_contain=["married to Jamie"],
                must_not_contain=["married to Jamie and works at Google"],
                provenance="hand-crafted",
            )
        ]
    )
    assert case.must_contain == ["married to Jamie"]


def test_overlapping_case_passes_when_another_memory_holds_the_shorter_string() -> None:
    case = Case(
        id="overlap",
        category="compound_fact",
        family="supersession",
        setup_facts=["Avery is married to Jo", "Avery is married to Jo and rents in Leeds"],
        mutations=[["purge", "Avery is married to Jo and rents in Leeds"]],
        final_query="who is Avery married to?",
        must_contain=["married to Jo"],
        must_not_contain=["married to Jo and rents in Leeds"],
    )

    class Store:
        name = "fake"

        def reset(self) -> None:
            self.texts: list[str] = []

        def inscribe(self, text: str) -> str:
            self.texts.append(text)
            return str(len(self.texts))

        def recall_texts(self, q: str, k: int) -> list[str]:
            return self.texts[:k]

        def purge(self, q: str) -> int:
            self.texts = [t for t in self.texts if t != q]
            return 1

    assert score_case(Store(), case).result == "pass"  # type: ignore[arg-type]

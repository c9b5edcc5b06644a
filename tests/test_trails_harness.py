"""The trails harness (``unrecall bench trails``): generator, annotations,
metrics and deleters, on small episodes with the hashing embedder."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from unrecall.bench import trails
from unrecall.bench.trails import (
    SYSTEMS,
    UNAVAILABLE,
    BuiltEpisode,
    evaluate,
    fresh_store,
    ingest,
    off_target,
    render_markdown,
    run_benchmark,
    run_cli,
    score_deletion,
    structurally_forgotten,
    write_outputs,
)
from unrecall.bench.trails_episodes import (
    TYPES,
    AnnotationError,
    Episode,
    Fact,
    Session,
    digest,
    enumerate_sets,
    episode_from_json,
    episodes_json,
    generate,
    has_value,
    load_episodes,
    minimal_cut,
    validate_episode,
)
from unrecall.errors import NotFound
from unrecall.interfaces.cli import build_parser
from unrecall.memory import Memory
from unrecall.recall.embedder import HashingEmbedder, make_embedder


# -- generator -----------------------------------------------------------------
def test_generator_is_deterministic() -> None:
    a, b = generate(3, seed=5), generate(3, seed=5)
    assert a == b
    assert digest(a) == digest(b)
    assert digest(generate(3, seed=6)) != digest(a)


def test_every_episode_holds_one_fact_per_type() -> None:
    episodes = generate(4, seed=1)
    for ep in episodes:
        assert sorted(f.type for f in ep.facts) == sorted(TYPES)
        assert len(ep.sessions) == 12
        roles = [t.role for t in ep.turns()]
        assert roles == ["user", "assistant"] * (len(roles) // 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_annotations_are_valid(seed: int) -> None:
    for ep in generate(8, seed=seed):
        assert validate_episode(ep) == []
        by_key = {t.key: t for t in ep.turns()}
        for fact in ep.facts:
            evidence = set(fact.evidence)
            assert 4 <= len(evidence) <= 10
            for s in fact.sufficient_sets:
                assert set(s) <= evidence
                assert 2 <= len(s) <= 5
            assert 2 <= fact.minimal_cut <= 5
            assert len(fact.distractors) >= 6
            assert all(by_key[k].label == "evidence" for k in evidence)
            # the trail precedes the disclosure
            disclosure = by_key[fact.disclosure[0]]
            assert all(by_key[k].session < disclosure.session for k in evidence)
            assert len({by_key[k].session for k in evidence}) >= 3
            # no evidence turn states the fact with all its entities
            for k in evidence:
                text = by_key[k].text.casefold()
                assert not (
                    has_value(text, fact.value) and all(e.casefold() in text for e in fact.entities)
                )


def test_facts_vary_in_wording_and_entities() -> None:
    facts = [f for ep in generate(12, seed=0) for f in ep.facts]
    # a few requests name nothing but a role ("forget my mum's medication
    # details") and recur across episodes; each fact runs on its own store
    assert len({f.request for f in facts}) >= 0.8 * len(facts)
    assert len({f.value for f in facts}) >= 0.9 * len(facts)
    assert len({f.frame for f in facts}) >= 12


def test_minimal_cut_of_the_papers_example() -> None:
    # E1..E7 as in MemCut's Arden example: hiring {E1, E2}, ownership
    # {E3, E4}, relationship {E5, E6}, identity {E2, E7}.
    links = [[1, 2], [3, 4], [5, 6], [2, 7]]
    sets = enumerate_sets(links, [[0, 1, 2, 3]])
    assert (2, 3, 5) in sets  # E2 serves two links: a set of three
    assert not any(set(s) > {2, 3, 5} for s in sets)  # supersets dropped
    assert all(2 <= len(s) <= 4 for s in sets)
    size, cut = minimal_cut([[f"E{i}" for i in s] for s in sets])
    assert size == 2
    assert cut == ("E1", "E2")


def test_minimal_cut_by_enumeration_on_routes() -> None:
    # Two routes sharing link 0 ({a, b, c}); route 2 also needs d and e.
    sets = [("a", "x"), ("b", "x"), ("c", "x"), ("a", "y"), ("b", "y"), ("c", "y")]
    assert minimal_cut(sets) == (2, ("x", "y"))
    assert minimal_cut([("a", "b"), ("c", "d"), ("a", "c")])[0] == 2
    assert minimal_cut([("a", "b"), ("c", "d"), ("e", "f")])[0] == 3
    assert minimal_cut([]) == (0, ())


def test_validation_reports_broken_annotations() -> None:
    ep = generate(1, seed=3)[0]
    fact = ep.facts[0]
    outside = dataclasses.replace(
        fact, sufficient_sets=((*fact.sufficient_sets[0], fact.distractors[0]),)
    )
    broken = dataclasses.replace(ep, facts=(outside, *ep.facts[1:]))
    problems = validate_episode(broken)
    assert any("leaves the evidence" in p for p in problems)
    single = dataclasses.replace(fact, sufficient_sets=((fact.evidence[0],),))
    problems = validate_episode(dataclasses.replace(ep, facts=(single, *ep.facts[1:])))
    assert any("a sufficient set of 1 turns" in p for p in problems)


def test_value_matching_respects_word_edges() -> None:
    assert has_value("Hearing on 3 March.", "3 March")
    assert not has_value("Hearing on 13 March.", "3 March")
    assert has_value("We owe NINA SHAH money", "Nina Shah")
    assert not has_value("paid 12,400 euros", "2,400")


# -- metrics on hand-made cases ----------------------------------------------------
def _fact() -> Fact:
    return Fact(
        id="f",
        type="chain",
        frame="hand",
        episode="ep",
        value="v",
        question="q?",
        request="forget q",
        entities=("v",),
        mentions=("v",),
        disclosure=("d",),
        evidence=("e1", "e2", "e3", "e4"),
        sufficient_sets=(("e1", "e3"), ("e1", "e4"), ("e2", "e3"), ("e2", "e4")),
        distractors=("x1", "x2"),
    )


def test_deleting_everything_forgets_and_is_mostly_off_target() -> None:
    fact = _fact()
    everything = {"d", "e1", "e2", "e3", "e4", "x1", "x2", "f1", "f2", "f3"}
    s = score_deletion(fact, everything)
    assert s.forgotten and structurally_forgotten(fact, everything)
    assert s.chosen_cut == 4
    assert s.beyond_disclosure == 9
    assert s.off_target == 5 and s.distractors_deleted == 2
    assert s.off_target_fraction == pytest.approx(5 / 9)


def test_deleting_nothing_forgets_nothing() -> None:
    s = score_deletion(_fact(), set())
    assert not s.forgotten
    assert s.sets_hit == 0 and s.chosen_cut == 0 and s.deleted == 0
    assert s.off_target_fraction is None


def test_forgetting_needs_the_disclosure_and_a_cut() -> None:
    fact = _fact()
    assert not structurally_forgotten(fact, {"e1", "e2"})  # cut, disclosure kept
    assert not structurally_forgotten(fact, {"d", "e1", "e3"})  # set (e2, e4) survives
    assert structurally_forgotten(fact, {"d", "e1", "e2"})  # minimal cut
    assert structurally_forgotten(fact, {"d", "e3", "e4", "x1"})
    assert score_deletion(fact, {"d", "e1", "e2"}).off_target_fraction == 0.0


def test_off_target_pooled_and_mean() -> None:
    fact = _fact()
    # fact 1: 1 of 2 beyond the disclosure is off target; fact 2: 3 of 4;
    # fact 3 (S0 only) deletes nothing beyond the disclosure.
    pooled, mean = off_target(
        [(fact, {"d", "e1", "x1"}), (fact, {"d", "e2", "x1", "x2", "f9"}), (fact, {"d"})]
    )
    assert pooled == pytest.approx(4 / 6)
    assert mean == pytest.approx((1 / 2 + 3 / 4) / 2)
    assert off_target([(fact, {"d"})]) == (None, None)


def test_target_needs_both_rates() -> None:
    agg = {"forgotten": {"rate": 95.0}, "off_target_pooled": 10.0}
    assert trails.target_met(agg)
    assert not trails.target_met({**agg, "off_target_pooled": 25.0})
    assert not trails.target_met({**agg, "forgotten": {"rate": 80.0}})


# -- deleters on a tiny episode --------------------------------------------------------
@pytest.fixture(scope="module")
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, embedder: HashingEmbedder) -> BuiltEpisode:
    episode = generate(1, seed=0, filler=6)[0]
    return ingest(episode, tmp_path_factory.mktemp("trails"), embedder)


def test_ingest_maps_every_turn(tiny: BuiltEpisode) -> None:
    assert set(tiny.uid) == {t.key for t in tiny.episode.turns()}
    assert len(set(tiny.uid.values())) == len(tiny.uid)


def test_s0_deletes_exactly_the_disclosure_and_what_derives_from_it(
    tiny: BuiltEpisode, embedder: HashingEmbedder
) -> None:
    for fact in tiny.episode.facts:
        disclosure = {tiny.uid[k] for k in fact.disclosure}
        with fresh_store(tiny, embedder) as mem:
            derived = [
                m.id for m in mem.get_all(user_id=trails.USER) if disclosure & set(m.sources)
            ]
            assert derived
            trails.delete_s0(trails.Case(mem, fact, tiny, trails.turn_texts(mem), 20, 10, None))
            for mid in derived:
                with pytest.raises(NotFound):
                    mem.get(mid, user_id=trails.USER)
        result = evaluate("s0", fact, tiny, embedder)
        assert set(result.deleted) == set(fact.disclosure)
        assert result.score.disclosure_deleted and not result.score.forgotten
        assert result.score.off_target_fraction is None


def test_each_fact_runs_on_a_fresh_copy(tiny: BuiltEpisode, embedder: HashingEmbedder) -> None:
    fact = tiny.episode.facts[0]
    evaluate("s1", fact, tiny, embedder)
    with Memory(tiny.template, embedder=embedder) as mem:
        assert len(mem.export(user_id=trails.USER)["turns"]) == len(tiny.uid)


def test_s1_and_s2_delete_the_budget_from_one_pool(
    tiny: BuiltEpisode, embedder: HashingEmbedder
) -> None:
    fact = tiny.episode.facts[1]
    s1 = evaluate("s1", fact, tiny, embedder, pool_size=8, budget=4)
    s2 = evaluate("s2", fact, tiny, embedder, pool_size=8, budget=4)
    assert s1.pool == s2.pool
    assert len(s1.pool) == 8 and not set(fact.disclosure) & set(s1.pool)
    assert set(s1.deleted) == set(fact.disclosure) | set(s1.pool[:4])
    assert set(s2.deleted) - set(fact.disclosure) <= set(s2.pool)
    assert s1.score.deleted == s2.score.deleted == 5
    assert s1.pool_evidence == len(set(s1.pool) & set(fact.evidence))


def test_s2_takes_a_reranker_hook(tiny: BuiltEpisode, embedder: HashingEmbedder) -> None:
    fact = tiny.episode.facts[2]
    seen: list[tuple[str, int, int]] = []

    def last_first(request: str, disclosures: list[str], texts: list[str]) -> list[int]:
        seen.append((request, len(disclosures), len(texts)))
        return list(reversed(range(len(texts))))

    r = evaluate("s2", fact, tiny, embedder, pool_size=6, budget=2, reranker=last_first)
    assert seen == [(fact.request, 1, 6)]
    assert set(r.deleted) == set(fact.disclosure) | set(r.pool[-2:])


def test_native_recovery_before_deletion(tiny: BuiltEpisode, embedder: HashingEmbedder) -> None:
    results = [evaluate(trails.BEFORE, f, tiny, embedder) for f in tiny.episode.facts]
    assert all(r.deleted == [] for r in results)
    assert all(r.native for r in results)


def test_ingest_records_a_turn_read_as_a_request(tmp_path: Path, embedder: HashingEmbedder) -> None:
    # executed, as it would be for a user, and counted: a false alarm of the reader
    ep = generate(1, seed=0, filler=2)[0]
    first = ep.sessions[0]
    turn = dataclasses.replace(first.turns[0], text="Please forget my PIN 4471.")
    session = Session(first.index, first.id, first.start, (turn, *first.turns[1:]))
    broken = Episode(ep.id, (session, *ep.sessions[1:]), ep.facts)
    built = ingest(broken, tmp_path, embedder)
    assert built.false_alarms == [turn.key]
    assert set(built.uid) == {t.key for t in broken.turns()}


def test_episode_files_round_trip_and_are_validated(tmp_path: Path) -> None:
    episodes = generate(1, seed=2, filler=3)
    path = tmp_path / "eps.json"
    path.write_text(json.dumps(episodes_json(episodes)), encoding="utf-8")
    assert episodes_json(load_episodes(path)) == episodes_json(episodes)
    raw = episodes_json(episodes)
    raw[0]["facts"][0]["distractors"] = raw[0]["facts"][0]["distractors"][:2]
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(AnnotationError, match="distractors"):
        load_episodes(path)
    raw[0]["facts"][0].pop("value")
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(AnnotationError, match="missing or bad field"):
        load_episodes(path)


def test_iso_dates_are_accepted_for_a_session_start() -> None:
    raw = episodes_json(generate(1, seed=2, filler=3))[0]
    raw["sessions"][0]["start"] = "2026-02-03T09:15:00"
    ep = episode_from_json(raw)
    assert ep.sessions[0].start == 1770110100.0


def test_the_chat_deleter_says_the_request_as_a_user_turn(
    tiny: BuiltEpisode, embedder: HashingEmbedder
) -> None:
    fact = tiny.episode.facts[0]
    result = evaluate("unrecall-chat", fact, tiny, embedder, pool_size=6, budget=3, k=5)
    assert "requests" in result.report


@pytest.fixture
def no_forget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delattr(Memory, "forget", raising=False)
    yield


def test_missing_forget_is_reported_not_skipped(no_forget: None) -> None:
    assert not trails.unrecall_available()
    episodes = generate(1, seed=0, filler=2)
    report = run_benchmark(episodes, ["s0", "unrecall"], embedder="hashing", guard=False)
    status = {r.name: r.status for r in report.runs}
    assert status == {"s0": "ok", "unrecall": UNAVAILABLE}
    md = render_markdown(report)
    assert "| unrecall | not available at this revision" in md
    assert report.summary()["systems"]["unrecall"]["status"] == UNAVAILABLE


def test_benchmark_writes_every_output(tmp_path: Path) -> None:
    episodes = generate(1, seed=4, filler=4)
    report = run_benchmark(episodes, ["s0", "s1"], embedder="hashing", pool=6, budget=3)
    paths = write_outputs(report, tmp_path)
    summary = json.loads(paths["summary_json"].read_text())
    assert summary["network_attempts"] == 0
    assert set(summary["systems"]) == {"s0", "s1"}
    assert set(summary["systems"]["s1"]["types"]) == set(TYPES)
    assert summary["systems"]["s0"]["total"]["forgotten"]["pass"] == 0
    rows = json.loads(paths["facts"].read_text())
    assert len(rows) == 3 * 4  # the no-deletion pass, s0 and s1, per fact
    assert {r["system"] for r in rows} == {trails.BEFORE, "s0", "s1"}
    assert "episodes" not in paths
    report.write_episodes = True
    paths = write_outputs(report, tmp_path)
    assert json.loads(paths["episodes"].read_text())[0]["id"] == "ep01"
    md = paths["summary_md"].read_text()
    assert md.startswith("## Trails (issue #5)")
    assert "| relation chain (n=1) | s1 |" in md


# -- command line ---------------------------------------------------------------------
def _args(**kw: object) -> argparse.Namespace:
    base = {
        "facts_per_type": 1,
        "seed": 0,
        "systems": "s0",
        "out": "unused",
        "pool": 20,
        "budget": 10,
        "k": 10,
        "filler": 2,
        "embedder": "hashing",
        "quiet": True,
        "episodes": False,
    }
    return argparse.Namespace(**{**base, **kw})


def test_cli_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(_args(systems="nope")) == 2
    assert run_cli(_args(systems="")) == 2
    assert run_cli(_args(facts_per_type=0)) == 2
    assert run_cli(_args(pool=5, budget=6)) == 2
    assert run_cli(_args(budget=0)) == 2
    assert run_cli(_args(k=0)) == 2
    assert run_cli(_args(filler=-1)) == 2
    assert "error" in capsys.readouterr().err


def test_cli_parses_the_trails_subcommand() -> None:
    args = build_parser().parse_args(
        ["bench", "trails", "--facts-per-type", "3", "--seed", "7", "--systems", "s0,s2"]
    )
    assert (args.facts_per_type, args.seed, args.systems) == (3, 7, "s0,s2")
    assert (args.pool, args.budget, args.k) == (20, 10, 10)
    assert args.out == str(trails.DEFAULT_OUT)
    assert set(SYSTEMS) == {"s0", "s1", "s2", "unrecall", "unrecall-chat"}


def test_cli_runs_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(_args(systems="s0,s2", out=str(tmp_path), pool=6, budget=2)) == 0
    out = capsys.readouterr().out
    assert "## Trails (issue #5)" in out
    assert (tmp_path / "summary.json").exists() and (tmp_path / "facts.json").exists()


def test_make_embedder_accepts_the_cli_names() -> None:
    assert make_embedder("hashing").name == "hashing-v1"

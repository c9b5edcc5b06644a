"""Trail-aware forgetting: the disclosure, the evidence trail, the residual."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from conftest import BACKENDS, new_postgres_url
from helpers import verified_clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unrecall import Memory
from unrecall.control.trails import EVIDENCE_FEATURES, EVIDENCE_MIN, _amounts, _is_total
from unrecall.errors import InvalidInput, NotFound

U = "u"
T0 = 1.7e9
DAY = 86400.0
REQUEST = "Forget that the firm we hired belongs to our CFO's wife"
DISCLOSURE = "Turns out Arden Advisory is owned by Nina Shah, Ravi's wife!"
EVIDENCE = [
    "Ravi Shah, our CFO, asked me to set up the Q3 budget review.",
    "The Q3 contract with Arden Advisory came through today, 40k for the audit prep.",
    "Ravi signed off on hiring Arden Advisory himself.",
    "Arden Advisory's filing at Companies House lists Nina Shah as sole owner.",
    "Ravi and his wife Nina are hosting the offsite dinner on Friday.",
    "Nina Shah emailed her engagement letter, signed as owner of Arden Advisory.",
    "Got a table at Rules for Ravi and Nina's wedding anniversary.",
    "The staff page lists Ravi Shah as Chief Financial Officer.",
]
DISTRACTORS = [
    "Booked a room at the Arden Hotel for the Leeds trip.",
    "Nina Patel from HR sent the holiday rota.",
    "Our old vendor list still has the advisory budget line from 2023.",
    "My sister is visiting in March.",
]


def episode(mem: Memory) -> dict[str, str]:
    """The Arden example of MemCut, one turn a day; text -> turn uid."""
    uids = {}
    texts = EVIDENCE[:4] + DISTRACTORS[:2] + EVIDENCE[4:] + DISTRACTORS[2:] + [DISCLOSURE]
    for i, text in enumerate(texts):
        r = mem.add([{"role": "user", "content": text}], user_id=U, session_id=f"s{i // 3}",
                    timestamp=T0 + i * DAY)  # fmt: skip
        uids[text] = r.detail["turns"][0]
    return uids


def surviving(mem: Memory) -> set[str]:
    return {t["text"] for t in mem.export(user_id=U)["turns"]}


def test_the_disclosure_and_its_trail_go_and_look_alikes_stay(mem: Memory) -> None:
    episode(mem)
    report = mem.forget(REQUEST, user_id=U)
    left = surviving(mem)
    assert DISCLOSURE not in left
    # every link of the chain (hiring, ownership, marriage, identity) is cut
    assert not left & set(EVIDENCE[2:7])
    assert set(DISTRACTORS) <= left  # another Arden, another Nina, "advisory"
    assert report.kind == "trail" and report.turns_removed >= 6
    assert verified_clean(mem, [DISCLOSURE, "engagement letter", "wedding anniversary"])


def test_the_report_and_the_audit_trail_hold_no_content(mem: Memory) -> None:
    episode(mem)
    report = mem.forget(REQUEST, user_id=U)
    blob = json.dumps(report.to_dict()) + json.dumps(
        [e.to_dict() for e in mem.history(report.removed[0], user_id=U)]
    )
    for word in ("Arden", "Nina", "Ravi", "wife", "CFO"):
        assert word not in blob
    assert mem.verify_audit().ok


def test_residual_lists_what_still_connects_the_entities(mem: Memory) -> None:
    episode(mem)
    before = {m.text for m in mem.residual(REQUEST, user_id=U)}
    assert DISCLOSURE in before and EVIDENCE[4] in before  # Ravi and his wife Nina
    report = mem.forget(REQUEST, user_id=U, budget=1)  # a budget too small to cut it
    after = mem.residual(REQUEST, user_id=U)
    assert after and report.residual == [m.id for m in after]
    assert DISCLOSURE not in {m.text for m in after}


def test_budget_bounds_the_evidence_turns(mem: Memory) -> None:
    episode(mem)
    report = mem.forget(REQUEST, user_id=U, budget=0)
    left = surviving(mem)
    assert DISCLOSURE not in left
    assert set(EVIDENCE) - {EVIDENCE[3]} <= left  # the filing also states it: a disclosure
    assert report.turns_removed <= 2


def test_a_rerank_hook_replaces_closeness(mem: Memory) -> None:
    episode(mem)
    seen: list[int] = []

    def nothing_is_close(request: str, disclosures: list[str], texts: list[str]) -> list[float]:
        seen.append(len(texts))
        return [0.0] * len(texts)

    mem.trails.rerank = nothing_is_close
    mem.forget(REQUEST, user_id=U)
    assert seen and seen[0] > 0
    # nothing is close, so no evidence qualifies: only the disclosure goes
    assert set(EVIDENCE[4:]) <= surviving(mem)


def test_a_failure_midway_deletes_nothing(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    episode(mem)
    before = surviving(mem)

    def broken(turn_ids: list[int]) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(mem.storage, "delete_turns", broken)
    with pytest.raises(RuntimeError):
        mem.forget(REQUEST, user_id=U)
    monkeypatch.undo()
    assert surviving(mem) == before
    assert len(mem.get_all(user_id=U)) >= len(before)


def test_an_unknown_fact_removes_nothing(mem: Memory) -> None:
    episode(mem)
    before = surviving(mem)
    report = mem.forget("Forget that my cat is allergic to salmon", user_id=U)
    assert report.removed == [] and surviving(mem) == before
    assert report.match == "none"


@pytest.mark.parametrize("budget", [-1, 2.5, True, "3"])
def test_bad_budgets_are_refused(mem: Memory, budget: object) -> None:
    episode(mem)
    with pytest.raises(InvalidInput):
        mem.forget(REQUEST, user_id=U, budget=budget)  # type: ignore[arg-type]
    assert DISCLOSURE in surviving(mem)


def test_bad_requests_and_tenants(mem: Memory) -> None:
    episode(mem)
    with pytest.raises(InvalidInput):
        mem.forget("   ", user_id=U)
    with pytest.raises(NotFound):
        mem.forget(REQUEST, user_id="nobody")
    assert mem.residual(REQUEST, user_id="nobody") == []


def test_another_tenants_trail_is_untouched(mem: Memory) -> None:
    episode(mem)
    mem.add([{"role": "user", "content": DISCLOSURE}], user_id="other", timestamp=T0)
    mem.forget(REQUEST, user_id=U)
    assert [m.text for m in mem.get_all(user_id="other")] == [DISCLOSURE]


def test_collateral_counts_other_clauses_of_a_cut_turn(mem: Memory) -> None:
    episode(mem)
    mem.add(
        [{"role": "user", "content": "Nina Shah owns Arden Advisory and my sister lands Sunday."}],
        user_id=U,
        timestamp=T0 + 30 * DAY,
    )
    report = mem.forget(REQUEST, user_id=U)
    assert report.collateral >= 1
    assert "lands Sunday" not in " ".join(surviving(mem))


def test_entities_lists_the_graph_and_forgets_with_it(mem: Memory) -> None:
    episode(mem)
    by_name = {e.name: e for e in mem.entities(user_id=U)}
    nina = by_name["Nina Shah"]
    assert "Ravi Shah's wife" in nina.aliases
    assert {"Arden Advisory", "Ravi Shah"} <= set(nina.related)
    assert len(nina.memories) >= 4 and all(m.startswith("m_") for m in nina.memories)
    assert "cfo" in by_name["Ravi Shah"].aliases  # "Ravi Shah, our CFO"
    assert "Arden Hotel" in by_name and "Nina Patel" in by_name
    mem.forget(REQUEST, user_id=U)
    names = {e.name for e in mem.entities(user_id=U)}
    assert "Nina Shah" not in names and "Nina Patel" in names
    assert mem.entities(user_id="nobody") == []


def test_an_identifier_said_beside_a_person_joins_the_fact(mem: Memory) -> None:
    # the handle is the bridge: "Mateo Mendes posts as @mmendes_works" makes
    # code signed "@mmendes_works" part of what says who was hired
    for i, text in enumerate(
        [
            "Found Mateo Mendes' blog, he posts as @mmendes_works.",
            "The head of design finalist signs every code sample as @mmendes_works.",
            "Bought a new kettle, the old one leaked.",
            "Confidential: Mateo Mendes has agreed to join as head of design.",
        ]
    ):
        mem.add(text, user_id=U, timestamp=T0 + i * DAY)
    plan = mem.trails.plan(mem._existing(U, None, None), "forget who our next head of design is")
    assert any(k.startswith("id:") for k in plan.entities)
    left = {m.text for m in mem.get_all(user_id=U)}
    assert "Bought a new kettle, the old one leaked." in left
    mem.forget("forget who our next head of design is", user_id=U)
    assert {m.text for m in mem.get_all(user_id=U)} == {"Bought a new kettle, the old one leaked."}


def test_turns_removed_counts_a_repeating_reply_left_empty(mem: Memory) -> None:
    # the reply repeats the other clause of a cut turn; that clause goes by
    # closure, the reply has nothing left and goes too: it is counted
    episode(mem)
    mem.add(
        [
            {
                "role": "user",
                "content": "Nina Shah owns Arden Advisory and my sister lands Sunday.",
            },
            {"role": "assistant", "content": "Noted, your sister lands Sunday."},
        ],
        user_id=U,
        session_id="s9",
        timestamp=T0 + 40 * DAY,
    )
    before = {t["text"] for t in mem.export(user_id=U)["turns"]}
    report = mem.forget(REQUEST, user_id=U)
    after = {t["text"] for t in mem.export(user_id=U)["turns"]}
    assert "Noted, your sister lands Sunday." in before - after
    assert len(before) - len(after) == report.turns_removed


def test_an_aside_in_the_request_is_not_the_fact(mem: Memory) -> None:
    # "Ines would hate that it's stored" says why, not what: the costs go,
    # what is said of Ines stays
    for i, text in enumerate(
        [
            "Ines Duarte loves hiking in the Alps.",
            "Paid 3,400 euros to Kingsley Fertility Clinic for the first consultation.",
            "Total at Kingsley Fertility Clinic so far: 11,700 euros, and no baby yet.",
        ]
    ):
        mem.add(text, user_id=U, timestamp=T0 + i * DAY)
    mem.forget("Forget the clinic costs, Ines would hate that it's stored.", user_id=U)
    assert {m.text for m in mem.get_all(user_id=U)} == {"Ines Duarte loves hiking in the Alps."}


def add_all(mem: Memory, texts: list[str]) -> None:
    for i, text in enumerate(texts):
        mem.add(text, user_id=U, timestamp=T0 + i * DAY)


def features(mem: Memory, request: str) -> dict[str, dict[str, float]]:
    """Each candidate's text -> its named evidence features (first hop)."""
    plan = mem.trails.plan(mem._existing(U, None, None), request)
    text = {r.id: r.text for r in mem.storage.memories_by_id([c.id for c in plan.candidates])}
    return {
        text[c.id]: dict(zip(EVIDENCE_FEATURES, c.features, strict=True))
        for c in plan.candidates
        if c.hop == 1
    }


def test_a_masked_name_is_not_one_of_the_facts_words(mem: Memory) -> None:
    # masking names leaves "someone" in the request and in every memory
    # about the person; it had counted as a rare word they all shared
    add_all(mem, [
        "My brother-in-law Femi has epilepsy, it's been a hard year.",
        "Femi got a promotion, finally.",
        "Femi found a great deal on flights to Lisbon.",
    ])  # fmt: skip
    got = features(mem, "Please forget Femi's medical condition.")
    assert got["Femi got a promotion, finally."]["words_unnamed"] == 0


def test_a_number_the_disclosure_holds_ties_a_memory_to_it(mem: Memory) -> None:
    add_all(mem, [
        "My niece Amara moved house, she lives at 12 Kingfisher Way.",
        "Amara painted a big 12 on her new front door.",
        "Amara painted a big mural in her classroom.",
        "Bought 3 new plants for the balcony.",
    ])  # fmt: skip
    got = features(mem, "Forget where my niece lives now.")
    assert got["Amara painted a big 12 on her new front door."]["same_value"] == 1
    assert got["Amara painted a big mural in her classroom."]["same_value"] == 0
    assert got["Bought 3 new plants for the balcony."]["same_value"] == 0


def test_an_unnamed_relative_is_found_by_what_their_memories_share(mem: Memory) -> None:
    # the dialogue never says "my cousin Hannah"; the house number ties them
    add_all(mem, [
        "My cousin's new house number is 9, easy to remember.",
        "Hannah painted a big 9 on her new front door.",
        "Watched the match at the pub with Hannah.",
        "My cousin asked for my lasagne recipe.",
        "Hannah's new address is 9 Bridge End; please never share it.",
    ])  # fmt: skip
    plan = mem.trails.plan(mem._existing(U, None, None), "Forget my cousin's new address.")
    assert "hanah" in plan.entities
    assert [d.text for d in plan.disclosure] == [
        "Hannah's new address is 9 Bridge End; please never share it."
    ]
    mem.forget("Forget my cousin's new address.", user_id=U)
    left = {t["text"] for t in mem.export(user_id=U)["turns"]}
    assert not any(" 9" in t for t in left)
    assert "Watched the match at the pub with Hannah." in left


def test_amounts_and_totals() -> None:
    assert _amounts("cost 10,100 dollars, 1.5 times, on 19.05. and 3 more") == [10100, 3]
    assert _is_total(10100, {4800, 900, 500, 3900})
    assert not _is_total(4800, {4800, 3900, 900})  # another memory says 4,800 too
    assert not _is_total(1000, {500})  # one part is a restatement, not a sum


def test_a_total_that_names_no_one_is_a_disclosure(mem: Memory) -> None:
    # the total names neither the clinic nor anyone: it adds up what was paid there
    add_all(mem, [
        "Paid 4,800 dollars to Dunmore Fertility Clinic for the first consultation.",
        "Paid 900 dollars to Dunmore Fertility Clinic for the hormone injections.",
        "Dunmore Fertility Clinic billed 3,900 dollars for the embryo transfer.",
        "Our fertility treatment has cost 9,600 dollars so far.",
        "Dunmore Fertility Clinic changed its logo, it looks worse.",
        "Our boiler repair has cost 300 dollars so far.",
    ])  # fmt: skip
    plan = mem.trails.plan(mem._existing(U, None, None), "Forget what we've spent at Dunmore.")
    assert "Our fertility treatment has cost 9,600 dollars so far." in {
        r.text for r in plan.disclosure
    }
    assert "Our boiler repair has cost 300 dollars so far." not in {
        r.text for r in plan.disclosure + plan.evidence
    }


def test_a_diagnosis_is_stated_by_a_condition_not_by_the_closest_news(mem: Memory) -> None:
    # the neurologist's order (corroborated by the other visits) and a
    # promotion are as close to "Femi's medical condition" as the diagnosis,
    # for MiniLM; the request asks for a condition, and one memory states one
    add_all(mem, [
        "My brother-in-law Femi has epilepsy, it's been a hard year.",
        "Drove Femi to the hospital for an EEG.",
        "Femi got a promotion, finally.",
        "Femi found a great deal on flights to Lisbon.",
        "Femi's neurologist, Dr Ueda, ordered an EEG.",
        "Dr Ueda wants Femi to come back every quarter.",
    ])  # fmt: skip
    plan = mem.trails.plan(mem._existing(U, None, None), "Please forget Femi's medical condition.")
    assert [d.text for d in plan.disclosure] == [
        "My brother-in-law Femi has epilepsy, it's been a hard year."
    ]


@pytest.fixture(scope="module", params=BACKENDS)
def arden(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Memory]:
    """The Arden episode in a store the planning properties only read, on
    each backend (one per module: conftest's stores are one per test)."""
    if request.param != "postgres":
        with Memory(tmp_path_factory.mktemp("arden") / "store.db") as m:
            episode(m)
            yield m
        return
    with Memory(new_postgres_url(request.getfixturevalue("postgres_server"), request)) as m:
        episode(m)
        yield m


REQUESTS = [
    REQUEST,
    "Forget who owns Arden Advisory",
    "Please forget that Ravi's wife owns the advisory firm.",
    "Forget Nina Shah",
    "forget the Q3 budget review",
    "Forget my sister's visit",
]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(request=st.sampled_from(REQUESTS), budget=st.integers(min_value=0, max_value=12))
def test_plans_keep_their_budget_and_threshold(arden: Memory, request: str, budget: int) -> None:
    tenant = arden._existing(U, None, None)
    plan = arden.trails.plan(tenant, request, budget)
    said = {
        t.id for ts in arden.storage.sources([d.id for d in plan.disclosure]).values() for t in ts
    }
    assert len({t.id for t in plan.turns} - said) <= budget
    score = {c.id: c.score for c in plan.candidates}
    assert all(0.0 <= s <= 1.0 for s in score.values())
    assert all(len(c.features) == len(EVIDENCE_FEATURES) for c in plan.candidates)
    assert all(score[r.id] >= EVIDENCE_MIN for r in plan.evidence)
    # deterministic: the same request plans the same cut
    assert [t.id for t in arden.trails.plan(tenant, request, budget).turns] == [
        t.id for t in plan.turns
    ]


def test_planning_does_not_hold_other_writers_up(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A plan reads and embeds for seconds on a large store: it is made
    # outside the write lock, so another thread's write lands meanwhile.
    import threading

    from unrecall.control.trails import TrailForgetter

    episode(mem)
    real = TrailForgetter.plan
    landed: list[bool] = []

    def planning(self: TrailForgetter, *args: object, **kwargs: object) -> object:
        if not landed:
            writer = threading.Thread(
                target=mem.add, args=("an unrelated note",), kwargs={"user_id": "other"}
            )
            writer.start()
            writer.join(timeout=10)
            landed.append(not writer.is_alive())
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(TrailForgetter, "plan", planning)
    mem.forget(REQUEST, user_id=U)
    assert landed == [True]
    assert DISCLOSURE not in surviving(mem)


def test_a_write_landing_during_the_plan_makes_it_again(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing the plan read may change before it is applied: a restatement
    # of the fact written while the first plan was made goes too.
    from unrecall.control.trails import TrailForgetter

    episode(mem)
    restated = "Reminder: Nina Shah, Ravi's wife, owns Arden Advisory."
    real = TrailForgetter.plan
    calls: list[int] = []

    def planning(self: TrailForgetter, *args: object, **kwargs: object) -> object:
        plan = real(self, *args, **kwargs)  # type: ignore[arg-type]
        if not calls:
            mem.add([{"role": "user", "content": restated}], user_id=U)
        calls.append(1)
        return plan

    monkeypatch.setattr(TrailForgetter, "plan", planning)
    mem.forget(REQUEST, user_id=U)
    assert len(calls) == 2
    left = surviving(mem)
    assert DISCLOSURE not in left and restated not in left

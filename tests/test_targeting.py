"""The targeting rule: id, then exact phrase, then (reversible ops only) meaning."""

from __future__ import annotations

import pytest
from helpers import ALL_STATES, active_texts, snapshot

from unrecall import InvalidInput, Memory
from unrecall.control.targeting import entity_query


def test_phrase_match_takes_only_memories_with_the_whole_run(fast_mem: Memory) -> None:
    fast_mem.add("I visited Lisbon in May", user_id="u")
    fast_mem.add("Lisbonense pastries are great", user_id="u")
    fast_mem.add("New York in May is nice", user_id="u")
    report = fast_mem.release("lisbon", user_id="u")
    assert report.match == "phrase" and report.count == 1
    assert active_texts(fast_mem) == ["Lisbonense pastries are great", "New York in May is nice"]
    # a multi-word target must appear contiguously, in order, to match as a
    # phrase; out of order it matches as "terms" (every content word, in
    # any inflection, three of them or two with a name), never by meaning
    report = fast_mem.release("york in may", user_id="u")
    assert report.match == "phrase" and report.count == 1
    fast_mem.restore(report.ids[0], user_id="u")
    assert fast_mem.purge("may new", user_id="u").match == "none"
    report = fast_mem.purge("nice york new", user_id="u")
    assert report.match == "terms" and report.count == 1
    assert active_texts(fast_mem) == ["Lisbonense pastries are great"]


@pytest.mark.parametrize(
    ("target", "purged", "kept"),
    [
        ("alice@acme.io", "mail alice@acme.io now", "mail alice.smith@acme.io now"),
        ("alice.smith@acme.io", "mail alice.smith@acme.io now", "mail alice@acme.io now"),
        ("12345", "order 12345 shipped", "order 123456 shipped"),
        ("123456", "order 123456 shipped", "order 12345 shipped"),
        ("TKT-100", "see TKT-100 today", "see TKT-1000 today"),
        ("/etc/app/conf", "edit /etc/app/conf first", "edit /etc/app/conf.d first"),
    ],
)
def test_identifiers_are_exact(fast_mem: Memory, target: str, purged: str, kept: str) -> None:
    fast_mem.add(purged, user_id="u")
    keep_id = fast_mem.add(kept, user_id="u").ids[0]
    report = fast_mem.purge(target, user_id="u")
    assert report.count == 1 and report.match == "identifier"
    assert active_texts(fast_mem) == [kept]
    assert keep_id in [h.id for h in fast_mem.search(kept, user_id="u", mode="lexical")]


def test_identifiers_match_canonically(fast_mem: Memory) -> None:
    fast_mem.add("my email is Alice@ACME.io", user_id="u")
    fast_mem.add("contact: josé.núñez@example.org", user_id="u")
    fast_mem.add("unrelated memory", user_id="u")
    assert fast_mem.purge("alice@acme.io", user_id="u").count == 1
    assert fast_mem.purge("JOSE.NUNEZ@EXAMPLE.ORG", user_id="u").count == 1
    assert active_texts(fast_mem) == ["unrelated memory"]


def test_semantic_fallback_for_release_and_supersede(mem: Memory) -> None:
    allergy = mem.add("I am allergic to peanuts", user_id="u").ids[0]
    mem.add("My car is a red Toyota Corolla", user_id="u")
    report = mem.release("peanut allergy", user_id="u")
    assert report.match == "semantic" and report.ids == [allergy]
    assert report.detail["similarity"] >= 0.5
    assert mem.get(allergy, user_id="u").state == "released"

    drink = mem.add("My favourite drink is green tea", user_id="u").ids[0]
    report = mem.supersede("preferred beverage", "My favourite drink is black coffee", user_id="u")
    assert report.match == "semantic" and report.ids == [drink]
    assert active_texts(mem) == [
        "My car is a red Toyota Corolla",
        "My favourite drink is black coffee",
    ]


def test_semantic_fallback_needs_enough_similarity(mem: Memory) -> None:
    mem.add("My car is a red Toyota Corolla", user_id="u")
    before = snapshot(mem, "u")
    report = mem.release("quantum chromodynamics lecture notes", user_id="u")
    assert report.match == "none" and report.ids == []
    after = snapshot(mem, "u")
    assert after["memories"] == before["memories"]


def test_purge_never_targets_by_meaning(mem: Memory) -> None:
    mem.add("I am allergic to peanuts", user_id="u")
    mem.add("My favourite drink is green tea", user_id="u")
    before = snapshot(mem, "u")
    report = mem.purge("peanut allergy", user_id="u")
    assert report.match == "none" and report.ids == [] and report.turns_removed == 0
    after = snapshot(mem, "u")
    assert after["memories"] == before["memories"] and after["turns"] == before["turns"]
    # ...while the same paraphrase is close enough for a reversible release
    assert mem.release("peanut allergy", user_id="u").match == "semantic"


def test_id_targets(fast_mem: Memory) -> None:
    mine = fast_mem.add("my seat is 14C", user_id="u").ids[0]
    theirs = fast_mem.add("their seat is 2A", user_id="v").ids[0]
    assert fast_mem.release(mine, user_id="u").match == "id"
    # an id of another tenant resolves to nothing and changes nothing
    before = snapshot(fast_mem, "v")
    for op in (fast_mem.release, fast_mem.purge):
        report = op(theirs, user_id="u")
        assert report.match == "none" and report.ids == []
    report = fast_mem.supersede(theirs, "my seat is 15D", user_id="u")
    assert report.match == "none" and report.ids == []
    after = snapshot(fast_mem, "v")
    assert after["memories"] == before["memories"] and after["turns"] == before["turns"]


@pytest.mark.parametrize("target", ["the", "my", "it is the", "I", "you and your", "User"])
def test_stopword_only_targets_are_refused(fast_mem: Memory, target: str) -> None:
    fast_mem.add("the user said it is the best", user_id="u")
    before = snapshot(fast_mem, "u")
    for op in (fast_mem.release, fast_mem.purge):
        with pytest.raises(InvalidInput, match="common words"):
            op(target, user_id="u")
    with pytest.raises(InvalidInput, match="common words"):
        fast_mem.supersede(target, "something new", user_id="u")
    assert snapshot(fast_mem, "u") == before


@pytest.mark.parametrize("target", ["!!!", "  ", "", "-- ..."])
def test_wordless_targets_are_refused(fast_mem: Memory, target: str) -> None:
    fast_mem.add("some memory", user_id="u")
    with pytest.raises(InvalidInput):
        fast_mem.purge(target, user_id="u")
    assert [i.text for i in fast_mem.get_all(user_id="u", states=ALL_STATES)] == ["some memory"]


def test_codes_are_not_entity_names() -> None:
    # "AA-10-2" is capitalised, but as a name it would reach "AA-10", "AA-100"...
    for code in ("AA-10-2", "Zed9", "TKT-100", "B2B"):
        assert entity_query(code) is None, code
    assert entity_query("Frank") and entity_query("everything about Grace Hopper")

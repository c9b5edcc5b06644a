"""The recall plane through the public API: add, search, get, get_all."""

from __future__ import annotations

import time

import pytest
from helpers import ALL_STATES, no_raw_hits, token

from unrecall import InvalidInput, Memory, MemoryItem, NotFound, SearchHit

FACTS = [
    "I am allergic to peanuts",
    "My favourite colour is teal",
    "I live in Lisbon, Portugal",
    "My daughter plays the violin",
    "I work as a marine biologist",
]


def ids(hits: list[SearchHit]) -> list[str]:
    return [h.id for h in hits]


def test_add_text_creates_one_memory_with_its_source_turn(mem: Memory) -> None:
    report = mem.add("I am allergic to peanuts", user_id="alice", metadata={"topic": "health"})
    assert report.op == "add"
    assert report.count == 1 and report.ids == report.created
    turns = report.detail["turns"]
    assert len(turns) == 1 and turns[0].startswith("t_")

    item = mem.get(report.ids[0], user_id="alice")
    assert isinstance(item, MemoryItem)
    assert item.text == "I am allergic to peanuts"
    assert item.kind == "note"
    assert item.state == "active"
    assert item.user_id == "alice"
    assert item.sources == turns
    assert item.metadata == {"topic": "health", "role": "user"}
    assert item.superseded_by is None and item.expires_at is None


def test_add_messages_skips_system_and_keeps_roles(mem: Memory) -> None:
    secret = token()
    report = mem.add(
        [
            {"role": "system", "content": f"You are a helpful bot {secret}"},
            {"role": "user", "content": "I moved to Berlin last spring"},
            {"role": "assistant", "content": "Noted, you now live in Berlin"},
        ],
        user_id="bob",
        session_id="s1",
    )
    assert report.count == 1 and len(report.detail["turns"]) == 2
    (item,) = mem.get_all(user_id="bob")
    assert item.text == "I moved to Berlin last spring"
    assert item.metadata["role"] == "user" and item.kind == "message"
    # the assistant's repetition is a second source of the user's fact
    assert item.sources == report.detail["turns"]
    exported = mem.export(user_id="bob")
    assert [t["role"] for t in exported["turns"]] == ["user", "assistant"]
    assert all(t["session_id"] == "s1" for t in exported["turns"])
    # the system instruction was never stored anywhere, not even in raw bytes
    assert secret not in str(exported)
    assert no_raw_hits(mem, secret)


def test_messages_stored_as_given_without_dialogue_handling(mem: Memory) -> None:
    report = mem.add(
        [
            {"role": "user", "content": "I moved to Berlin last spring"},
            {"role": "assistant", "content": "Noted, you now live in Berlin"},
        ],
        user_id="bob",
        honor_requests=False,
    )
    items = mem.get_all(user_id="bob")
    assert [i.metadata["role"] for i in items] == ["user", "assistant"]
    assert [i.sources for i in items] == [[t] for t in report.detail["turns"]]


def test_hybrid_search_ranks_the_relevant_memory_first(mem: Memory) -> None:
    for fact in FACTS:
        mem.add(fact, user_id="alice")
    hits = mem.search("does she have any nut allergy?", user_id="alice", k=3)
    assert hits and hits[0].text == "I am allergic to peanuts"
    assert hits[0].vector_rank == 1
    hits = mem.search("which city does she live in", user_id="alice", k=2)
    assert hits[0].text == "I live in Lisbon, Portugal"
    assert all(isinstance(h.score, float) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_lexical_mode_uses_words_only(mem: Memory) -> None:
    for fact in FACTS:
        mem.add(fact, user_id="alice")
    hits = mem.search("Lisbon", user_id="alice", mode="lexical")
    assert [h.text for h in hits] == ["I live in Lisbon, Portugal"]
    assert hits[0].lexical_rank == 1 and hits[0].vector_rank is None
    # a query sharing no word with any memory finds nothing lexically...
    assert mem.search("nut intolerance", user_id="alice", mode="lexical") == []
    # ...but the hybrid mode recalls it by meaning
    hybrid = mem.search("nut intolerance", user_id="alice", mode="hybrid")
    assert hybrid[0].text == "I am allergic to peanuts"


def test_search_is_case_and_accent_insensitive(mem: Memory) -> None:
    mem.add("Meeting with José at the Café Müller", user_id="u")
    for query in ("jose", "JOSÉ", "cafe", "muller"):
        assert len(mem.search(query, user_id="u", mode="lexical")) == 1, query


@pytest.mark.parametrize("k", [1, 3, 7])
def test_search_returns_at_most_k(fast_mem: Memory, k: int) -> None:
    for i in range(10):
        fast_mem.add(f"project note number {i} about gardening", user_id="u")
    hits = fast_mem.search("gardening project note", user_id="u", k=k)
    assert len(hits) == k
    assert len(set(ids(hits))) == k


def test_search_filters_on_metadata(fast_mem: Memory) -> None:
    fast_mem.add("standup at nine", user_id="u", metadata={"team": "core", "prio": 1})
    fast_mem.add("standup at ten", user_id="u", metadata={"team": "web", "prio": 1})
    fast_mem.add("standup at eleven", user_id="u", metadata={"team": "core", "prio": 2})
    texts = {h.text for h in fast_mem.search("standup", user_id="u", filters={"team": "core"})}
    assert texts == {"standup at nine", "standup at eleven"}
    hits = fast_mem.search("standup", user_id="u", filters={"team": "core", "prio": 2})
    assert [h.text for h in hits] == ["standup at eleven"]
    assert hits[0].metadata == {"team": "core", "prio": 2, "role": "user"}
    assert fast_mem.search("standup", user_id="u", filters={"team": "ops"}) == []
    by_role = fast_mem.search("standup", user_id="u", filters={"role": "assistant"})
    assert by_role == []


def test_agent_and_run_narrow_the_scope(fast_mem: Memory) -> None:
    fast_mem.add("alpha likes hiking", user_id="u", agent_id="a1", run_id="r1")
    fast_mem.add("alpha likes sailing", user_id="u", agent_id="a1", run_id="r2")
    fast_mem.add("alpha likes chess", user_id="u", agent_id="a2")
    fast_mem.add("alpha likes opera", user_id="u")

    def texts(**scope: str) -> set[str]:
        return {h.text for h in fast_mem.search("alpha likes", user_id="u", k=10, **scope)}

    assert len(texts()) == 4
    assert texts(agent_id="a1") == {"alpha likes hiking", "alpha likes sailing"}
    assert texts(agent_id="a1", run_id="r2") == {"alpha likes sailing"}
    assert texts(run_id="r1") == {"alpha likes hiking"}
    assert texts(agent_id="a2") == {"alpha likes chess"}
    assert texts(agent_id="zz") == set()
    got = fast_mem.get_all(user_id="u", agent_id="a1")
    assert {g.text for g in got} == {"alpha likes hiking", "alpha likes sailing"}
    assert all(g.agent_id == "a1" for g in got)
    assert [g.run_id for g in fast_mem.get_all(user_id="u", run_id="r2")] == ["r2"]


def test_agent_level_memory_is_its_own_tenant(fast_mem: Memory) -> None:
    fast_mem.add("the bot prefers short answers", agent_id="helper")
    fast_mem.add("the user prefers short answers", user_id="helper")
    agent_hits = fast_mem.search("short answers", agent_id="helper")
    assert [h.text for h in agent_hits] == ["the bot prefers short answers"]
    items = fast_mem.get_all(agent_id="helper")
    assert [(i.user_id, i.agent_id) for i in items] == [(None, "helper")]
    user_hits = fast_mem.search("short answers", user_id="helper")
    assert [h.text for h in user_hits] == ["the user prefers short answers"]


def test_search_never_returns_inactive_expired_or_foreign(mem: Memory) -> None:
    keep = mem.add("the garage code is kept safe", user_id="u").ids[0]
    mem.add("the garage code was 1111", user_id="u")
    mem.release("1111", user_id="u")
    mem.add("the garage code was 2222", user_id="u")
    mem.supersede("2222", "the garage code is now 3333", user_id="u")
    mem.add("the garage code was 4444", user_id="u", expires_at=time.time() - 5)
    mem.add("the garage code was 5555", user_id="intruder")
    mem.add("the garage code was 6666", user_id="u")
    mem.purge("6666", user_id="u")

    for mode in ("hybrid", "lexical"):
        for query in ("garage code", "1111", "2222", "4444", "5555", "6666"):
            texts = [h.text for h in mem.search(query, user_id="u", k=20, mode=mode)]
            for gone in ("1111", "2222", "4444", "5555", "6666"):
                assert not any(gone in t for t in texts), (mode, query, gone)
        found = ids(mem.search("garage code", user_id="u", k=20, mode=mode))
        assert keep in found
        assert len(found) == 2  # kept + 3333
    # the hidden ones are still there in their states
    states = {i.text[-4:]: i.state for i in mem.get_all(user_id="u", states=ALL_STATES)}
    assert states == {
        "safe": "active",
        "1111": "released",
        "2222": "superseded",
        "3333": "active",
        "4444": "active",
    }


FTS_LOOKING = [
    '"',
    '""',
    "NEAR(",
    "NEAR(a b, 2)",
    "*",
    "foo*",
    "AND",
    "OR",
    "NOT",
    "-",
    "-foo",
    "foo OR",
    "foo AND",
    "col:x",
    "terms:x",
    "tenant : t1",
    "^",
    "^foo",
    "(",
    ")",
    "{a b}",
    "+",
    "a:b:c",
    "'",
    "'; DROP TABLE memories; --",
    "%_",
    "\\",
    "🙂",
]


@pytest.mark.parametrize("query", FTS_LOOKING)
@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_fts_looking_queries_never_raise(fast_mem: Memory, query: str, mode: str) -> None:
    fast_mem.add("foo bar notes for t1 and NEAR the col x", user_id="u")
    fast_mem.add("unrelated memory", user_id="other")
    hits = fast_mem.search(query, user_id="u", mode=mode, k=5)
    assert isinstance(hits, list)
    assert all(h.text == "foo bar notes for t1 and NEAR the col x" for h in hits)


def test_fts_operator_words_are_plain_words(fast_mem: Memory) -> None:
    fast_mem.add("NEAR the AND gate OR NOT", user_id="u")
    fast_mem.add("a totally different memory", user_id="u")
    for query in ("NEAR", "AND gate", "OR", "NOT"):
        hits = fast_mem.search(query, user_id="u", mode="lexical")
        assert [h.text for h in hits] == ["NEAR the AND gate OR NOT"], query


def test_search_of_unknown_tenant_is_empty_and_creates_nothing(fast_mem: Memory) -> None:
    assert fast_mem.search("anything", user_id="nobody") == []
    assert fast_mem.get_all(user_id="nobody") == []
    assert fast_mem.storage.tenant("user:nobody", False) is None


def test_get_returns_any_state_and_not_found_otherwise(fast_mem: Memory) -> None:
    mid = fast_mem.add("the locker number is 42", user_id="u").ids[0]
    fast_mem.release(mid, user_id="u")
    assert fast_mem.get(mid, user_id="u").state == "released"
    fast_mem.add("something else", user_id="v")
    with pytest.raises(NotFound):
        fast_mem.get(mid, user_id="v")
    with pytest.raises(NotFound):
        fast_mem.get("m_" + "0" * 20, user_id="u")
    fast_mem.purge(mid, user_id="u")
    with pytest.raises(NotFound):
        fast_mem.get(mid, user_id="u")


def test_get_all_filters_by_state(fast_mem: Memory) -> None:
    a = fast_mem.add("first fact kiwi", user_id="u").ids[0]
    b = fast_mem.add("second fact mango", user_id="u").ids[0]
    c = fast_mem.add("third fact papaya", user_id="u").ids[0]
    fast_mem.release(b, user_id="u")
    new = fast_mem.supersede(c, "third fact guava", user_id="u").created[0]

    def got(*states: str) -> list[str]:
        return [i.id for i in fast_mem.get_all(user_id="u", states=states)]

    assert [i.id for i in fast_mem.get_all(user_id="u")] == [a, new]
    assert got("released") == [b]
    assert got("superseded") == [c]
    assert got("active", "released", "superseded") == [a, b, c, new]  # oldest first
    assert got() == []
    with pytest.raises(InvalidInput):
        fast_mem.get_all(user_id="u", states=("deleted",))


def test_fusion_keeps_how_far_ahead_a_hit_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scores, not ranks, are fused: a hit far ahead on the words keeps that
    lead over one barely ahead on the vectors, and of two equal scores the
    one both lists found goes first."""
    from unrecall.recall import search
    from unrecall.recall.search import _fuse

    lexical = [(1, 9.0), (2, 1.0)]
    vector = [(2, 0.61), (1, 0.60), (3, 0.20)]
    assert [m for m, _ in _fuse(lexical, vector)] == [1, 2, 3]
    lone = _fuse([], [(5, 0.4)])[0][1][0]
    assert lone == pytest.approx(1 - search.LEXICAL_WEIGHT)  # a lone vector hit: full weight
    # With equal weights, 1 (words 0.5, vectors 0: the pool's last) ties
    # 2 (vectors 0.5 only).
    monkeypatch.setattr(search, "LEXICAL_WEIGHT", 0.5)
    tie = _fuse([(1, 4.0)], [(2, 0.7), (1, 0.3)])
    assert tie[0][1][0] == tie[1][1][0]
    assert [m for m, _ in tie] == [1, 2]


def test_statements_name_each_memorys_first_turn_and_its_siblings(fast_mem: Memory) -> None:
    # The storage lookup behind statement recall, on two tenants whose turns
    # interleave: each memory's group is its first source turn and every
    # memory with an edge to that turn (in id order), never another tenant's.
    storage, at = fast_mem.storage, time.time()
    tenants = [storage.tenant(f"statements-{i}", True) for i in range(2)]
    edges: dict[int, list[int]] = {}  # memory -> its source turns
    firsts: list[tuple[int, int]] = []  # (first clause, turn) of each turn
    with storage.transaction():
        for round_ in range(3):
            for tenant_id in tenants:
                turn = storage.add_turn(tenant_id, "user", f"turn {round_}", None, at, {})
                clauses = [
                    storage.add_memory(
                        tenant_id,
                        text=f"clause {round_}.{c}",
                        kind="note",
                        agent_id=None,
                        run_id=None,
                        at=at,
                        expires_at=None,
                        metadata={},
                        sources=[turn.id],
                    ).id
                    for c in range(round_ + 1)
                ]
                edges.update({m: [turn.id] for m in clauses})
                firsts.append((clauses[0], turn.id))
        # a repetition in the tenant's next turn: the memory's statement stays
        # its first turn, and it joins the next turn's group
        for (mid, _), (_, turn_id) in zip(firsts, firsts[2:], strict=False):
            storage.link([mid], turn_id)
            edges[mid].append(turn_id)
    expected = {
        m: (min(turns), sorted(o for o, ts in edges.items() if min(turns) in ts))
        for m, turns in edges.items()
    }
    assert storage.statements(list(edges)) == expected
    assert storage.statements([]) == {}

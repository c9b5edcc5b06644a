"""``UnrecallStore``: the LangGraph store over unrecall.

A contract test replays one sequence of calls on LangGraph's ``InMemoryStore``
and on ``UnrecallStore`` and compares what they return; the rest checks what
unrecall adds (tenancy, erasure, TTL through expiry, refusing bad input), a
real ``StateGraph`` using the store, ``abatch`` and semantic search.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from helpers import ALL_STATES, token
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, GetOp, PutOp
from langgraph.store.memory import InMemoryStore

from unrecall import InvalidInput, Memory
from unrecall.integrations.langgraph import UnrecallStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[UnrecallStore]:
    """A store over a fresh hashing-embedder file."""
    with UnrecallStore(tmp_path / "lg.db", embedder="hashing") as s:
        yield s


def _shape(result: Any) -> Any:
    """What both stores must agree on: namespace, key, value (and score)."""
    if result is None:
        return None
    if isinstance(result, list):
        return [_shape(r) for r in result]
    if isinstance(result, tuple):
        return result
    return (result.namespace, result.key, result.value, getattr(result, "score", None))


def _contract(s: BaseStore) -> list[Any]:
    """One sequence of store calls; every result is recorded."""
    out: list[Any] = []
    s.put(("u1", "docs"), "a", {"text": "The launch moved to March.", "kind": "note", "n": 1})
    s.put(("u1", "docs"), "b", {"text": "Buy a new kettle.", "kind": "todo", "n": 2})
    s.put(("u1", "docs", "sub"), "c", {"text": "Call the bank.", "kind": "todo", "n": 3})
    s.put(("u1", "prefs"), "d", {"theme": "dark", "tags": ["x", "y"]})
    s.put(("u2", "docs"), "e", {"text": "Other user's note.", "kind": "note", "n": 5})
    out.append(s.get(("u1", "docs"), "a"))
    out.append(s.get(("u1", "docs"), "zzz"))
    s.put(("u1", "docs"), "a", {"text": "The launch moved to April.", "kind": "note", "n": 4})
    out.append(s.get(("u1", "docs"), "a"))
    s.put(("u1", "docs"), "x", {"text": "Short lived.", "kind": "note"})
    s.delete(("u1", "docs"), "x")
    out.append(s.get(("u1", "docs"), "x"))
    out.append(s.search(("u1",)))
    out.append(s.search(("u1", "docs")))
    out.append(s.search(("u1",), filter={"kind": "todo"}))
    out.append(s.search(("u1", "docs"), filter={"n": {"$gt": 2}}))
    out.append(s.search(("u1", "docs"), filter={"n": {"$lte": 3}, "kind": {"$ne": "note"}}))
    out.append(s.search(("u1",), filter={"tags": ["x", "y"]}))
    out.append(s.search(("u1",), limit=2))
    out.append(s.search(("u1",), limit=2, offset=2))
    out.append(s.search(("u1",), offset=10))
    out.append(s.search(()))  # every user: needs cross_tenant on UnrecallStore
    out.append(s.list_namespaces())
    out.append(s.list_namespaces(prefix=("u1",)))
    out.append(s.list_namespaces(prefix=("u1", "docs")))
    out.append(s.list_namespaces(suffix=("docs",)))
    out.append(s.list_namespaces(prefix=("*", "docs")))
    out.append(s.list_namespaces(max_depth=1))
    out.append(s.list_namespaces(prefix=("u1",), max_depth=2))
    out.append(s.list_namespaces(limit=2, offset=1))
    got = s.batch([GetOp(("u1", "prefs"), "d"), PutOp(("u1", "prefs"), "d", {"theme": "light"})])
    out.append(got)
    out.append(s.get(("u1", "prefs"), "d"))
    return [_shape(r) for r in out]


def test_contract_matches_in_memory_store(tmp_path: Path) -> None:
    with UnrecallStore(tmp_path / "c.db", embedder="hashing", cross_tenant=True) as ours:
        theirs = _contract(InMemoryStore())
        mine = _contract(ours)
    assert mine == theirs
    # the sequence exercised what it claims to
    assert theirs[2][2]["text"] == "The launch moved to April."
    assert len(theirs[4]) == 4 and theirs[3] is None and theirs[1] is None


def test_items_carry_timestamps_and_keep_created_at(store: UnrecallStore) -> None:
    store.put(("u", "m"), "k", {"text": "First version of the fact."})
    first = store.get(("u", "m"), "k")
    store.put(("u", "m"), "k", {"text": "Second version of the fact."})
    second = store.get(("u", "m"), "k")
    assert first is not None and second is not None
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert second.created_at.tzinfo is not None


def test_overwrite_leaves_nothing_of_the_old_value(store: UnrecallStore) -> None:
    old, hidden = token(), token()
    store.put(("u", "m"), "k", {"text": f"My locker code is {old}.", "extra": hidden})
    store.put(("u", "m"), "k", {"text": "My locker code changed."})
    found = store.search(("u",), query=f"locker code {old}")
    assert [i.value for i in found] == [{"text": "My locker code changed."}]
    assert all(old not in h.text for h in store.memory.search(old, user_id="u", threshold=None))
    assert store.memory.verify_erased([old, hidden]).clean


def test_delete_is_a_verified_erasure(store: UnrecallStore) -> None:
    secret, unindexed = token(), token()
    store.put(("u", "m"), "k", {"text": f"The safe combination is {secret}.", "note": unindexed})
    store.put(("u", "m"), "plain", {"code": token()}, index=False)
    assert store.memory.verify_erased([secret, unindexed]).clean is False
    store.delete(("u", "m"), "k")
    assert store.get(("u", "m"), "k") is None
    assert store.search(("u",), query="safe combination") == []
    assert store.memory.verify_erased([secret, unindexed]).clean
    assert store.get(("u", "m"), "plain") is not None  # its neighbour stays


def test_forgetting_through_memory_reaches_the_item(store: UnrecallStore) -> None:
    """The value is itself a memory, so unrecall's forgetting reaches it."""
    city, number = "Lisbon", "555-0199"
    store.put(("u", "m"), "home", {"text": f"I live in {city}. My dog is Rex.", "n": 1})
    store.put(("u", "m"), "phone", {"text": f"My phone number is {number}."})
    store.memory.purge(city, user_id="u")
    assert store.get(("u", "m"), "home") is None
    store.memory.add([{"role": "user", "content": "please forget my phone number"}], user_id="u")
    left = store.get(("u", "m"), "phone")
    assert left is None or number not in str(left.value)
    assert number not in str([i.value for i in store.search(("u",))])
    assert store.memory.verify_erased([city, number]).clean


def test_unindexed_items_are_kept_but_never_recalled(store: UnrecallStore) -> None:
    store.put(("u", "m"), "off", {"text": "Penguins waddle on the ice."}, index=False)
    store.put(("u", "m"), "q", {"text": "Do penguins waddle?"})  # a question derives nothing
    store.put(("u", "m"), "on", {"text": "Penguins waddle to the sea."}, index=["text"])
    keys = [i.key for i in store.search(("u",), query="penguins waddle")]
    assert keys == ["on"]
    assert {i.key for i in store.search(("u",))} == {"off", "q", "on"}
    assert store.get(("u", "m"), "q").value == {"text": "Do penguins waddle?"}


def test_index_fields_choose_the_searched_text(tmp_path: Path) -> None:
    options: dict[str, Any] = {"embedder": "hashing", "threshold": 0.1}
    with UnrecallStore(tmp_path / "f.db", index={"fields": ["title"]}, **options) as s:
        s.put(("u", "m"), "k", {"title": "Gardening schedule", "body": "Prune the walnut tree."})
        assert [i.key for i in s.search(("u",), query="gardening schedule")] == ["k"]
        assert s.search(("u",), query="prune walnut tree") == []
        s.put(("u", "m"), "j", {"title": "x", "body": "Prune the walnut tree."}, index=["body"])
        assert [i.key for i in s.search(("u",), query="prune walnut tree")] == ["j"]
    with pytest.raises(InvalidInput):
        UnrecallStore(tmp_path / "g.db", embedder="hashing", index={"embed": lambda t: t})


def test_a_user_never_sees_another_users_items(store: UnrecallStore) -> None:
    store.put(("alice", "m"), "k", {"text": "Alice keeps bees in the garden."})
    store.put(("bob", "m"), "k", {"text": "Bob keeps bees on the roof."})
    assert [i.value["text"] for i in store.search(("alice",), query="bees")] == [
        "Alice keeps bees in the garden."
    ]
    assert store.list_namespaces(prefix=("bob",)) == [("bob", "m")]
    store.delete(("bob", "m"), "k")
    assert store.get(("alice", "m"), "k") is not None
    # a search or listing that names no user is refused, not run across users
    with pytest.raises(InvalidInput):
        store.search(())
    with pytest.raises(InvalidInput):
        store.list_namespaces(suffix=("m",))


def test_user_index_picks_the_tenant(store_location: str) -> None:
    with Memory(store_location, embedder="hashing") as mem:
        s = UnrecallStore(mem, user_index=1)
        s.put(("memories", "carol"), "k", {"text": "Carol plays the cello."})
        assert [m.metadata["langgraph_namespace"] for m in mem.get_all(user_id="carol")] == [
            ["memories"]
        ]
        assert mem.get_all(user_id="memories") == []
        assert s.get(("memories", "carol"), "k").namespace == ("memories", "carol")
        with pytest.raises(InvalidInput):
            s.put(("memories",), "k", {"text": "no user label"})
        s.close()  # a shared Memory stays open
        assert mem.get_all(user_id="carol")


def test_bad_input_is_refused_and_loses_nothing(store: UnrecallStore) -> None:
    store.put(("u", "m"), "k", {"text": "The original value."})
    bad: list[Any] = [
        {"text": float("nan")},
        {"text": object()},
        {1: "not a string key"},
        {"text": "x" * 40_000},
    ]
    for value in bad:
        with pytest.raises(InvalidInput):
            store.put(("u", "m"), "k", value)
    with pytest.raises(InvalidInput):
        store.put(("u", "m"), "k", {"text": "fine"}, ttl=-1)
    with pytest.raises(InvalidInput):
        store.search(("u",), filter={"n": {"$regex": "x"}})
    with pytest.raises(InvalidInput):
        store.search(("u",), limit=-1)
    with pytest.raises(InvalidInput):
        UnrecallStore(store.memory, threshold=5)
    with pytest.raises(InvalidInput):
        UnrecallStore(store.memory, user_index=-1)
    # one bad op refuses the whole batch before anything is written
    with pytest.raises(InvalidInput):
        store.batch([PutOp(("u", "m"), "k2", {"text": "new"}), PutOp(("u", "m"), "k", [1])])
    assert store.get(("u", "m"), "k").value == {"text": "The original value."}
    assert store.get(("u", "m"), "k2") is None


def test_ttl_is_unrecall_expiry(store: UnrecallStore) -> None:
    secret = token()
    store.put(("u", "m"), "k", {"text": f"The visitor code is {secret}."}, ttl=30)
    rows = store.memory.get_all(user_id="u", states=ALL_STATES)
    assert len(rows) == 2 and all(abs(r.expires_at - (time.time() + 1800)) < 120 for r in rows)
    # a read refreshes the expiry; then make it lapse
    for r in rows:
        store.memory.set_expiry(r.id, time.time() + 60, user_id="u")
    assert store.get(("u", "m"), "k") is not None
    after = store.memory.get_all(user_id="u", states=ALL_STATES)
    assert all(r.expires_at > time.time() + 1000 for r in after)
    assert store.get(("u", "m"), "k", refresh_ttl=False) is not None
    for r in rows:
        store.memory.set_expiry(r.id, time.time() - 1, user_id="u")
    assert store.get(("u", "m"), "k") is None
    assert store.search(("u",)) == [] and store.list_namespaces(prefix=("u",)) == []
    assert store.sweep_ttl() >= 1
    assert store.memory.verify_erased([secret]).clean


def test_default_ttl_from_ttl_config(tmp_path: Path) -> None:
    with UnrecallStore(tmp_path / "d.db", embedder="hashing", ttl={"default_ttl": 5}) as s:
        s.put(("u", "m"), "k", {"text": "Expires by default."})
        s.put(("u", "m"), "n", {"text": "Never expires."}, ttl=None)
        rows = s.memory.get_all(user_id="u", states=ALL_STATES)
    assert {r.metadata["langgraph_key"] for r in rows if r.expires_at is None} == {"n"}
    assert {r.metadata["langgraph_key"] for r in rows if r.expires_at is not None} == {"k"}


class _State(TypedDict):
    fact: str
    recalled: list[str]


def _remember(state: _State, config: RunnableConfig, *, store: BaseStore) -> dict[str, Any]:
    """A node that writes a memory for the user, then reads memories back."""
    user = config["configurable"]["user_id"]
    store.put((user, "memories"), "fact", {"text": state["fact"]})
    found = store.search((user, "memories"), query="which pet")
    return {"recalled": [i.value["text"] for i in found]}


def test_a_langgraph_graph_uses_the_store(store: UnrecallStore) -> None:
    graph = StateGraph(_State)
    graph.add_node("remember", _remember)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    app = graph.compile(store=store)
    out = app.invoke(
        {"fact": "My pet is a tortoise named Flash.", "recalled": []},
        {"configurable": {"user_id": "dana"}},
    )
    assert out["recalled"] == ["My pet is a tortoise named Flash."]
    assert store.get(("dana", "memories"), "fact").value["text"].startswith("My pet")
    assert store.memory.get_all(user_id="dana")  # dana is the tenant


def test_async_batch(store: UnrecallStore) -> None:
    async def scenario() -> tuple[Any, ...]:
        await store.aput(("u", "m"), "k", {"text": "The train leaves from platform nine."})
        await store.aput(("u", "m"), "j", {"text": "Lunch is at noon."}, ttl=10)
        hits = await store.asearch(("u",), query="train platform")
        got = await store.aget(("u", "m"), "j")
        names = await store.alist_namespaces(prefix=("u",))
        await store.adelete(("u", "m"), "k")
        return hits, got, names, await store.aget(("u", "m"), "k")

    hits, got, names, gone = asyncio.run(scenario())
    assert [h.key for h in hits][:1] == ["k"] and isinstance(hits[0].score, float)
    assert got.value == {"text": "Lunch is at noon."}
    assert names == [("u", "m")] and gone is None
    assert store.memory.verify_erased(["platform nine"]).clean


def test_semantic_search_with_the_default_embedder(tmp_path: Path) -> None:
    with UnrecallStore(tmp_path / "s.db") as s:  # MiniLM
        s.put(("u", "m"), "pet", {"text": "I adopted a golden retriever puppy last spring."})
        s.put(("u", "m"), "job", {"text": "I work as an accountant at a shipping firm."})
        s.put(("u", "m"), "food", {"text": "My favourite dish is mushroom risotto."})
        hits = s.search(("u",), query="what kind of dog do I have")
        assert hits and hits[0].key == "pet"
        assert all(h.score is not None and -1 <= h.score <= 1 for h in hits)
        # the embedder's calibrated threshold drops what is about nothing stored
        assert s.search(("u",), query="quantum chromodynamics lecture notes") == []
        assert s.search(("u",), query="what kind of dog do I have", limit=1, offset=1) == hits[1:2]

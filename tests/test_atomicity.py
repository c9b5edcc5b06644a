"""Atomicity: an operation that fails midway leaves nothing of itself behind,
in the file or in the centroids a search keeps, and the store keeps working."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers import ALL_STATES, is_postgres, no_raw_hits, raw_hits, snapshot, token, verified_clean

from unrecall import Memory


class Boom(RuntimeError):
    """The injected failure."""


@pytest.fixture
def store(store_location: str) -> Iterator[Memory]:
    with Memory(store_location, embedder="hashing") as mem:
        mem.add("alpha enjoys mountain hiking", user_id="u")
        mem.add("alpha drinks oolong tea", user_id="u")
        mid = mem.add("alpha parks in bay 12", user_id="u").ids[0]
        mem.release(mid, user_id="u")
        mem.add("beta enjoys sailing", user_id="v")
        yield mem


def location(mem: Memory) -> str:
    """Where ``mem`` lives, to open it again: its file, or its database URL."""
    return mem.storage._url if is_postgres(mem) else str(mem.storage.path)  # type: ignore[attr-defined]


def fail_on_call(n: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """A wrapper that lets ``n - 1`` calls through and raises on the n-th."""
    calls = {"n": 0}

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == n:
            raise Boom("injected failure")
        return real(*args, **kwargs)

    return wrapper


def observed(mem: Memory) -> dict[str, Any]:
    """Snapshots of both tenants plus what hybrid search answers."""
    hits = {
        user: [(h.id, h.score, h.vector_rank) for h in mem.search("alpha enjoys", user_id=user)]
        for user in ("u", "v")
    }
    return {"u": snapshot(mem, "u"), "v": snapshot(mem, "v"), "hits": hits}


def assert_consistent_with_disk(mem: Memory) -> None:
    """The live store (with its cached centroids) answers exactly like a
    freshly opened one, which reads them from disk."""
    queries = ["alpha enjoys", "tea", "mountain hiking", "bay", "sailing", "gamma"]
    live = {(u, q): mem.search(q, user_id=u, k=10) for u in ("u", "v") for q in queries}
    with Memory(location(mem), embedder="hashing") as fresh:
        for (u, q), hits in live.items():
            assert hits == fresh.search(q, user_id=u, k=10), (u, q)
    active = {i.id for u in ("u", "v") for i in mem.get_all(user_id=u)}
    for hits in live.values():
        assert {h.id for h in hits} <= active


def test_embed_failure_during_add_of_messages_stores_nothing(
    store: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = observed(store)
    secret = token()
    monkeypatch.setattr(store.embedder, "embed", fail_on_call(1, store.embedder.embed))
    with pytest.raises(Boom):
        store.add(
            [
                {"role": "user", "content": f"alpha enjoys {secret} climbing"},
                {"role": "assistant", "content": "alpha enjoys climbing, noted"},
            ],
            user_id="u",
        )
    monkeypatch.undo()
    assert observed(store) == before
    assert store.verify_audit().ok
    assert no_raw_hits(store, secret)
    assert_consistent_with_disk(store)
    # the store still works, and the new memory is recalled
    mid = store.add(f"alpha enjoys {secret} climbing", user_id="u").ids[0]
    assert mid in [h.id for h in store.search(secret, user_id="u")]


def test_failed_first_add_leaves_no_tenant(store: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def always_fail(*_args: object) -> None:
        raise Boom("injected failure")

    monkeypatch.setattr(store.embedder, "embed", always_fail)
    newcomer = f"{token()}@example.com"
    with pytest.raises(Boom):
        store.add("hello there", user_id=newcomer)
    with pytest.raises(Boom):
        store.supersede("old value", "hello there", user_id=newcomer)
    monkeypatch.undo()
    assert store.storage.tenant(f"user:{newcomer}", False) is None
    assert no_raw_hits(store, newcomer)


def test_index_failing_on_second_row_rolls_back_and_cache_stays_true(
    store: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cache the tenant's centroids, so a rollback must leave them true
    assert store.search("alpha enjoys", user_id="u")
    before = observed(store)
    first = token()
    monkeypatch.setattr(store.storage, "index", fail_on_call(2, store.storage.index))
    with pytest.raises(Boom):
        store.add(
            [
                {"role": "user", "content": f"alpha enjoys {first} rowing"},
                {"role": "user", "content": "alpha enjoys gamma rays"},
                {"role": "user", "content": "alpha enjoys delta rivers"},
            ],
            user_id="u",
        )
    monkeypatch.undo()
    assert observed(store) == before
    # the first row was written to both indexes before the
    # failure; none of it may come back
    for mode in ("hybrid", "lexical"):
        texts = [h.text for h in store.search(f"{first} rowing", user_id="u", k=10, mode=mode)]
        assert not any(first in t for t in texts)
    assert_consistent_with_disk(store)
    mid = store.add("alpha enjoys gamma rays", user_id="u").ids[0]
    hits = store.search("gamma rays", user_id="u")
    assert hits[0].id == mid and hits[0].vector_rank == 1
    assert_consistent_with_disk(store)


def test_rollback_drops_vectors_seen_inside_the_transaction(store: Memory) -> None:
    # the search inside the transaction reads lists that hold the
    # uncommitted memory; none of it may outlive the rollback
    with pytest.raises(Boom), store.storage.transaction():
        store.add("alpha enjoys gamma rays", user_id="u")
        hits = store.search("gamma rays", user_id="u")
        assert hits[0].text == "alpha enjoys gamma rays"
        raise Boom("injected failure")
    assert store.search("gamma rays", user_id="u", mode="lexical") == []
    assert "alpha enjoys gamma rays" not in [h.text for h in store.search("gamma", user_id="u")]
    assert_consistent_with_disk(store)


def test_failed_purge_keeps_everything(store: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = token()
    mid = store.add(f"alpha's locker code is {secret}", user_id="u").ids[0]
    store.search("locker code", user_id="u")
    before = observed(store)
    monkeypatch.setattr(store.storage, "delete_turns", fail_on_call(1, store.storage.delete_turns))
    with pytest.raises(Boom):
        store.purge(secret, user_id="u")
    monkeypatch.undo()
    assert observed(store) == before
    assert mid in [h.id for h in store.search("locker code", user_id="u")]
    assert raw_hits(store, secret) > 0  # nothing half-erased either
    assert_consistent_with_disk(store)
    store.purge(secret, user_id="u")  # and it works once the fault is gone
    assert no_raw_hits(store, secret)
    assert store.verify_audit().ok


@pytest.mark.parametrize("op", ["release", "supersede", "update", "edit", "delete", "delete_all"])
def test_failure_at_the_audit_write_rolls_back(
    store: Memory, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    target = store.get_all(user_id="u")[0].id  # "alpha enjoys mountain hiking"
    store.search("alpha enjoys", user_id="u")  # warm the cache
    before = observed(store)
    monkeypatch.setattr(store.audit, "record", fail_on_call(1, store.audit.record))
    calls: dict[str, Callable[[], object]] = {
        "release": lambda: store.release(target, user_id="u"),
        "supersede": lambda: store.supersede(target, "alpha enjoys gamma", user_id="u"),
        "update": lambda: store.update(target, "alpha enjoys gamma", user_id="u"),
        "edit": lambda: store.edit(target, "alpha enjoys gamma", user_id="u"),
        "delete": lambda: store.delete(target, user_id="u"),
        "delete_all": lambda: store.delete_all(user_id="u"),
    }
    with pytest.raises(Boom):
        calls[op]()
    monkeypatch.undo()
    assert observed(store) == before
    assert store.get(target, user_id="u").text == "alpha enjoys mountain hiking"
    assert target in [h.id for h in store.search("mountain hiking", user_id="u")]
    assert store.search("gamma", user_id="u", mode="lexical") == []
    assert_consistent_with_disk(store)
    assert store.verify_audit().ok


def test_failed_expire_purges_nothing(store: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    store.add("alpha temporary note one", user_id="u", ttl=1)
    store.add("beta temporary note two", user_id="v", ttl=1)
    before = {u: store.get_all(user_id=u, states=ALL_STATES) for u in ("u", "v")}
    # the second tenant's group fails after the first one was purged
    monkeypatch.setattr(store.audit, "record", fail_on_call(2, store.audit.record))
    with pytest.raises(Boom):
        store.expire(now=10**10, purge=True)
    monkeypatch.undo()
    assert {u: store.get_all(user_id=u, states=ALL_STATES) for u in ("u", "v")} == before
    assert len(store.expire(now=10**10, purge=True).ids) == 2


CRASH = textwrap.dedent(
    """
    import os, sys
    from unrecall import Memory
    mem = Memory(sys.argv[1], embedder="hashing")
    real = mem.storage.delete_turns
    def crash(ids):
        real(ids)
        os._exit(3)  # the process dies inside the purge's transaction
    mem.storage.delete_turns = crash
    mem.purge(sys.argv[2], user_id="u")
    """
)


def test_crash_inside_a_purge_leaves_all_of_it(store_location: str) -> None:
    # on PostgreSQL the dead process's connection drops and the server rolls
    # its open transaction back: the same promise, kept by another mechanism
    path = store_location
    secret = token()
    with Memory(path, embedder="hashing") as mem:
        mid = mem.add(f"the vault code is {secret}", user_id="u").ids[0]
        mem.add("an unrelated memory", user_id="u")
        before = snapshot(mem, "u")
    proc = subprocess.run(
        [sys.executable, "-c", CRASH, path, secret], capture_output=True, timeout=120
    )
    assert proc.returncode == 3, proc.stderr.decode()
    with Memory(path, embedder="hashing") as mem:
        if not is_postgres(mem):  # the file itself is sound (a server keeps its own)
            assert mem.storage._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert snapshot(mem, "u") == before
        assert mem.get(mid, user_id="u").text == f"the vault code is {secret}"
        assert [h.id for h in mem.search(secret, user_id="u", mode="lexical")] == [mid]
        report = mem.purge(secret, user_id="u")
        assert report.ids == [mid]
        assert verified_clean(mem, [secret])

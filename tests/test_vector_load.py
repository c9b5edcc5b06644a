"""A tenant's stored vectors after open: exactly the rows of its active
memories, and another connection's commits reach the next search."""

from __future__ import annotations

from pathlib import Path

import pytest

from unrecall import Memory
from unrecall.storage.sqlite import SQLiteStorage


def stored_rows(st: SQLiteStorage, tid: int) -> dict[int, bytes]:
    rows = st._db.execute("SELECT id, embedding FROM memory_vectors WHERE tenant_id = ?", (tid,))
    return {r[0]: bytes(r[1]) for r in rows}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two interleaved tenants, with released, purged, restored and
    superseded memories."""
    path = tmp_path_factory.mktemp("vecload") / "store.db"
    with Memory(path, embedder="hashing") as mem:
        for i in range(0, 1300, 100):
            facts = [f"alpha fact {j} about item{j}" for j in range(i, i + 100)]
            mem.add([{"role": "user", "content": f} for f in facts], user_id="a")
            mem.add(f"beta note {i} number{i}", user_id="b")
        ids = [m.id for m in mem.get_all(user_id="a")]
        for mid in ids[::7]:
            mem.release(mid, user_id="a")
        for mid in ids[3::11]:
            mem.purge(mid, user_id="a")
        mem.restore(ids[7], user_id="a")
        mem.supersede(ids[5], "alpha fact replaced", user_id="a")
    return path


def test_the_stored_vectors_are_exactly_the_active_memories(store: Path) -> None:
    with Memory(store, embedder="hashing") as mem:
        st = mem.storage
        for user in ("a", "b"):
            tid = st.tenant(f"user:{user}", False)
            assert tid is not None
            active = {r.id for r in st.memories(tid, ["active"])}
            want = stored_rows(st, tid)
            assert set(want) == active
            got = st.embeddings(tid, sorted(active))
            assert {m: v.tobytes() for m, v in got.items()} == want


def test_a_commit_by_another_connection_reaches_the_next_search(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with Memory(path, embedder="hashing") as first, Memory(path, embedder="hashing") as second:
        kept = first.add("the lighthouse keeper logs the fog", user_id="u").ids[0]
        assert [h.id for h in first.search("lighthouse fog", user_id="u")] == [kept]
        # the other connection adds one memory and purges the first
        new = second.add("the lighthouse lamp was replaced", user_id="u").ids[0]
        second.purge(kept, user_id="u")
        hits = first.search("lighthouse", user_id="u", k=5)
        assert [h.id for h in hits] == [new]
        assert all(h.vector_rank is None or h.id == new for h in hits)

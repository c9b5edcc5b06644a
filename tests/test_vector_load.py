"""Loading a tenant's vectors after open: the fast read of vec0's chunk
tables gives exactly what the virtual table gives, and falls back to it
whenever the two could disagree."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from unrecall import Memory
from unrecall.storage.sqlite import SQLiteStorage


def slow_rows(st: SQLiteStorage, tid: int) -> dict[int, bytes]:
    rows = st._db.execute("SELECT rowid, embedding FROM memory_vec WHERE tenant_id = ?", (tid,))
    return {r[0]: bytes(r[1]) for r in rows}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two interleaved tenants over several 1024-row chunks, with holes."""
    path = tmp_path_factory.mktemp("vecload") / "store.db"
    with Memory(path, embedder="hashing") as mem:
        for i in range(0, 2600, 100):
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


def test_chunk_read_equals_the_virtual_table(store: Path) -> None:
    with Memory(store, embedder="hashing") as mem:
        st = mem.storage
        for user in ("a", "b"):
            tid = st.tenant(f"user:{user}", False)
            assert tid is not None
            loaded = st._vec0_chunks(tid)
            assert loaded is not None
            ids, mat = loaded
            want = slow_rows(st, tid)
            assert sorted(ids.tolist()) == sorted(want)
            assert all(mat[i].tobytes() == want[int(m)] for i, m in enumerate(ids))


def test_search_after_open_matches_the_slow_load(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = ["alpha fact 1234", "item77", "replaced", "beta note"]
    with Memory(store, embedder="hashing") as mem:
        fast = [[h.id for h in mem.search(q, user_id="a", k=10)] for q in queries]
    monkeypatch.setattr(SQLiteStorage, "_vec0_chunks", lambda self, tid: None)
    with Memory(store, embedder="hashing") as mem:
        slow = [[h.id for h in mem.search(q, user_id="a", k=10)] for q in queries]
    assert fast == slow and all(fast)


def test_a_disagreeing_chunk_read_falls_back(store: Path) -> None:
    with Memory(store, embedder="hashing") as mem:
        st = mem.storage
        tid = st.tenant("user:a", False)
        assert tid is not None
        # an active memory without a vector row: counts disagree
        row = st.memories(tid, ["active"])[0]
        with st.transaction():
            st._db.execute("DELETE FROM memory_vec WHERE rowid = ?", (row.id,))
        assert st._vec0_chunks(tid) is None
        with st.transaction():  # put the vector back
            vec = mem.embedder.embed([row.text])[0]
            st._db.execute(
                "INSERT INTO memory_vec(rowid, tenant_id, embedding) VALUES (?, ?, ?)",
                (row.id, tid, np.asarray(vec, dtype=np.float32).tobytes()),
            )
        assert st._vec0_chunks(tid) is not None


def test_an_unknown_vec0_version_is_read_the_slow_way(store: Path) -> None:
    with Memory(store, embedder="hashing") as mem:
        st = mem.storage
        tid = st.tenant("user:b", False)
        with st.transaction():
            st._db.execute(
                "UPDATE memory_vec_info SET value = 'v9.0.0' WHERE key = 'CREATE_VERSION'"
            )
        try:
            assert st._vec0_chunks(tid) is None
            assert mem.search("beta note", user_id="b", k=3)
        finally:
            with st.transaction():
                st._db.execute(
                    "UPDATE memory_vec_info SET value = 'v0.1.9' WHERE key = 'CREATE_VERSION'"
                )


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


def test_a_synced_scan_of_a_cached_tenant_does_not_use_the_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(tmp_path / "s.db", embedder="hashing") as mem:
        mid = mem.add("a quiet harbour at dawn", user_id="u").ids[0]
        mem.search("harbour", user_id="u")  # builds the tenant's matrix
        st = mem.storage
        tid = st.tenant("user:u", False)
        assert tid is not None
        st.sync()

        def no_db(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("the scan touched the connection")

        monkeypatch.setattr(st, "_scalar", no_db)
        vec = mem.embedder.embed(["harbour at dawn"])[0]
        assert [m for m, _ in st.vector(tid, vec, 5, synced=True)] == [
            st.memory(tid, mid).id  # type: ignore[union-attr]
        ]

"""A tenant past SQLite's 32,766 bound variables (issue #12, defect 5):
``get_all``, ``export``, a broad ``purge`` and ``delete_all`` work on it, and
erase it. (Timings at 100k memories are ``bench/large_tenant.py``'s.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from unrecall import Memory

N = 33_000  # one past what a list of bound variables could hold


def big_store(path: Path) -> Memory:
    """N one-clause memories in one tenant, written through the storage
    layer in one transaction (the API path at this size takes minutes)."""
    mem = Memory(path, embedder="hashing")
    texts = [
        f"note {i} on the garden{' about alpha' if i % 2 else ''}, ref zq{i:06d}" for i in range(N)
    ]
    vectors = mem.embedder.embed(texts)
    st, hasher = mem.storage, mem.recall.hasher
    with st.transaction():
        tid = st.tenant("user:big", True)
        assert tid is not None
        now = time.time()
        for text, vec in zip(texts, vectors, strict=True):
            turn = st.add_turn(tid, "user", text, None, now, {})
            doc = hasher.document(text)
            st.index_turn(turn, doc)
            row = st.add_memory(
                tid, text=text, kind="note", agent_id=None, run_id=None, at=now,
                expires_at=None, metadata={}, sources=[turn.id],
            )  # fmt: skip
            st.index(row, doc, vec)
    return mem


@pytest.mark.sqlite_only(
    "SQLite's 32,766 bound variables: PostgreSQL binds an id list as one array, so it has"
    " no such limit to pass (and 66k index writes there take minutes)"
)
def test_a_tenant_past_the_variable_limit_is_read_purged_and_erased(store_location: str) -> None:
    with big_store(Path(store_location)) as mem:
        assert len(mem.get_all(user_id="big")) == N
        dump = mem.export(user_id="big")
        assert len(dump["memories"]) == N and len(dump["turns"]) == N
        purged = mem.purge("alpha", user_id="big")
        assert len(purged.ids) == N // 2 and purged.turns_removed == N // 2
        assert mem.search("alpha", user_id="big", k=3, mode="lexical") == []
        gone = mem.delete_all(user_id="big")
        assert len(gone.ids) == N - N // 2
        assert mem.get_all(user_id="big") == []
        assert mem.verify_erased([f"zq{i:06d}" for i in range(0, N, 997)]).clean
        assert mem.storage._scalar("SELECT count(*) FROM lexicon") == 0

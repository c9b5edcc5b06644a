"""Schema migrations: a store written by an older unrecall opens, keeps
everything, and ends on the current layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from unrecall import Memory
from unrecall.storage import sqlite as sqlite_storage
from unrecall.storage.schema import SCHEMA_VERSION, VEC_CHUNK_ROWS


def _chunk_sizes(mem: Memory) -> set[int]:
    return {r[0] for r in mem.storage._db.execute("SELECT size FROM memory_vec_chunks")}


def test_a_v1_store_moves_its_vectors_to_small_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    monkeypatch.setattr(sqlite_storage, "SCHEMA_VERSION", 1)
    with Memory(path, embedder="hashing") as old:
        ids = [
            old.add(f"fact {i} about the garden shed", user_id=f"u{i % 3}").ids[0] for i in range(9)
        ]
        old.purge(ids[0], user_id="u0")
        before = {
            r[0]: bytes(r[1])
            for r in old.storage._db.execute("SELECT rowid, embedding FROM memory_vec")
        }
        assert _chunk_sizes(old) == {1024}
    monkeypatch.setattr(sqlite_storage, "SCHEMA_VERSION", SCHEMA_VERSION)
    with Memory(path, embedder="hashing") as new:
        assert new.storage._scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert _chunk_sizes(new) == {VEC_CHUNK_ROWS}
        after = {
            r[0]: bytes(r[1])
            for r in new.storage._db.execute("SELECT rowid, embedding FROM memory_vec")
        }
        assert after == before
        hits = new.search("fact 4 about the garden shed", user_id="u1", k=1)
        assert hits[0].id == ids[4] and hits[0].vector_rank == 1
        assert not new.storage._db.execute(
            "SELECT name FROM sqlite_master WHERE name = 'memory_vec_move'"
        ).fetchall()


def test_a_small_tenant_does_not_cost_a_large_vector_chunk(tmp_path: Path) -> None:
    # Each vec0 partition allocates whole chunks; with sqlite-vec's default
    # (1024 rows) every tenant cost 1.5 MB of zeroes.
    path = tmp_path / "many.db"
    with Memory(path, embedder="hashing") as mem:
        for u in range(40):
            mem.add("one small fact", user_id=f"user-{u}")
    assert path.stat().st_size / 40 < 100_000

"""The per-tenant vector matrix: exact top-k through the int8 first pass,
and add/remove keeping both copies in step without leftovers."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unrecall.storage import vector_cache
from unrecall.storage.vector_cache import INT8_MIN_ROWS, TenantVectors

DIM = 384


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors in tight clusters: many near-ties, the hard case for a bound."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((40, DIM))
    return unit(centers[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, DIM)))


def brute(mat: np.ndarray, ids: list[int], q: np.ndarray, k: int) -> list[int]:
    sims = mat @ q
    return [ids[i] for i in np.argsort(-sims, kind="stable")[:k]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_int8_scan_returns_the_exact_top_k(seed: int) -> None:
    assert vector_cache._int8_scan() is not None
    n = INT8_MIN_ROWS * 2
    mat = clustered(n, seed)
    ids = [1000 + 7 * i for i in range(n)]
    tv = TenantVectors(DIM, zip(ids, mat, strict=True))
    rng = np.random.default_rng(seed + 10)
    queries = unit(mat[rng.integers(0, n, 20)] + 0.2 * rng.standard_normal((20, DIM)))
    for q in queries:
        for k in (1, 5, 20, 80):
            got = tv.search(q, k)
            sims = mat @ q
            want = brute(mat, ids, q, k)
            # same ids, or (on an exact float tie) the same similarities
            got_ids = [mid for mid, _ in got]
            assert got_ids == want or np.allclose(
                [s for _, s in got], np.sort(sims)[::-1][:k], atol=1e-6
            )
            np.testing.assert_allclose(
                [s for _, s in got], [sims[ids.index(m)] for m in got_ids], atol=1e-6
            )


def test_candidates_are_few_and_contain_the_true_top() -> None:
    n = INT8_MIN_ROWS * 4
    mat = clustered(n, 5)
    tv = TenantVectors(DIM, enumerate(mat))
    scan = vector_cache._int8_scan()
    assert scan is not None
    q = mat[17]
    rows = scan.candidates(tv._q[:n], tv._qmeta[:, :n], q, 20)
    true_top = set(np.argsort(-(mat @ q))[:20])
    assert true_top <= set(rows.tolist())
    assert len(rows) < n // 10  # the float32 rescoring stays small


def test_add_replace_and_remove_keep_the_int8_copy_in_step() -> None:
    n = INT8_MIN_ROWS + 500
    mat = clustered(n, 9)
    tv = TenantVectors(DIM)
    for i in range(n):  # one by one, as commits do
        tv.add(i, mat[i])
    bulk = TenantVectors(DIM, enumerate(mat))
    np.testing.assert_array_equal(tv._q[:n], bulk._q[:n])
    np.testing.assert_array_equal(tv._qmeta[:, :n], bulk._qmeta[:, :n])
    # replace one vector, remove a few (swap-remove moves the last row)
    tv.add(3, mat[4])
    for mid in (0, 10, n - 1, 250):
        tv.remove(mid)
    alive = [i for i in range(n) if i not in (0, 10, n - 1, 250)]
    ref = mat.copy()
    ref[3] = mat[4]
    q = ref[123]
    assert [m for m, _ in tv.search(q, 10)] == brute(ref[alive], alive, q, 10)
    # no removed row leaves a copy behind past the live rows, in either form
    m = len(tv)
    assert not tv._mat[m:].any() and not tv._q[m:].any() and not tv._qmeta[:, m:].any()
    for mid in alive:
        tv.remove(mid)
    assert len(tv) == 0 and not tv._mat.any() and not tv._q.any() and tv.search(q, 5) == []


def test_small_tenants_and_big_limits_use_floats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_scan() -> None:
        raise AssertionError("the int8 pass should not run here")

    monkeypatch.setattr(vector_cache, "_int8_scan", no_scan)
    mat = clustered(300, 4)
    tv = TenantVectors(DIM, enumerate(mat))
    assert [m for m, _ in tv.search(mat[0], 5)] == brute(mat, list(range(300)), mat[0], 5)
    assert len(tv.search(mat[0], 1000)) == 300


def test_zero_vector_rows_do_not_break_the_bound() -> None:
    n = INT8_MIN_ROWS
    mat = clustered(n, 11)
    mat[::7] = 0.0  # a degenerate row quantises with scale 1 and no error
    tv = TenantVectors(DIM, enumerate(mat))
    q = mat[1]
    assert [m for m, _ in tv.search(q, 10)] == brute(mat, list(range(n)), q, 10)


def test_recall_vectors_reuse_stored_embeddings_and_compute_the_rest(fast_mem) -> None:  # type: ignore[no-untyped-def]
    # Targeting compares a request with candidate memories; their stored
    # vectors must be exactly what embedding their texts would give, and a
    # memory outside the index (released) is embedded afresh.
    ids = fast_mem.add("I live in Porto. My dentist is Dr. Moss.", user_id="u").ids
    fast_mem.release(ids[1], user_id="u")
    tenant = fast_mem.storage.tenant("user:u", False)
    rows = fast_mem.storage.memories(tenant)
    assert {r.state for r in rows} == {"active", "released"}
    got = fast_mem.recall.vectors(["where do I live"], rows)
    want = fast_mem.embedder.embed(["where do I live"] + [r.text for r in rows])
    assert np.array_equal(got, want)


def test_stored_embeddings_follow_changes_inside_a_transaction(fast_mem) -> None:  # type: ignore[no-untyped-def]
    (uid,) = fast_mem.add("I live in Porto.", user_id="u").ids
    tenant = fast_mem.storage.tenant("user:u", False)
    (row,) = fast_mem.storage.memories(tenant)
    with fast_mem.storage.transaction():
        fast_mem.storage.unindex([row])
        assert fast_mem.storage.embeddings(tenant, [row.id]) == {}
        fast_mem.storage.set_text(row.id, "I live in Lyon.", 0.0)
        (new,) = fast_mem.storage.memories_by_id([row.id])
        fast_mem.recall.index_memories([new])
        stored = fast_mem.storage.embeddings(tenant, [row.id])[row.id]
        assert np.array_equal(stored, fast_mem.embedder.embed(["I live in Lyon."])[0])
    assert fast_mem.get(uid, user_id="u").text == "I live in Lyon."


def test_a_text_is_embedded_once_until_a_hard_deletion(fast_mem) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    real = fast_mem.embedder.embed

    def counting(texts):  # type: ignore[no-untyped-def]
        calls.extend(texts)
        return real(texts)

    fast_mem.embedder.embed = counting
    first = fast_mem.recall.embed(["a", "b", "a"])
    again = fast_mem.recall.embed(["b", "c"])
    assert calls == ["a", "b", "c"]
    assert np.array_equal(first[1], again[0]) and np.array_equal(first[0], first[2])
    assert np.array_equal(first[0], real(["a"])[0])  # the same vector as computed
    # keyed digests, never the texts, are the keys
    assert all(isinstance(k, bytes) and len(k) == 16 for k in fast_mem.recall._cache)
    fast_mem.add("my locker code is 4471", user_id="u")
    calls.clear()
    fast_mem.purge("4471", user_id="u")  # a hard deletion empties the cache
    assert not fast_mem.recall._cache
    fast_mem.recall.embed(["a"])
    assert calls == ["a"]


def _matrix(mem, tenant: int) -> dict[int, bytes]:  # type: ignore[no-untyped-def]
    """The cached vectors of a tenant, by memory id, as bytes."""
    cache = mem.storage._tenant_vectors(tenant)
    return {mid: vec.tobytes() for mid, vec in cache.get(list(cache._pos)).items()}


def _table(mem, tenant: int) -> dict[int, bytes]:  # type: ignore[no-untyped-def]
    rows = mem.storage._db.execute(
        "SELECT id, embedding FROM memory_vectors WHERE tenant_id = ?", (tenant,)
    ).fetchall()
    return {mid: bytes(blob) for mid, blob in rows}


@pytest.mark.parametrize("keep", [20_000, 3])
def test_another_connections_commits_update_the_caches_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: int
) -> None:
    # Two server workers share one file. A commit of one used to throw the
    # other's matrices away (a reload of every vector per search under load);
    # now the other reads the changed ids from vector_log and patches its
    # matrix, which must then hold exactly the table's rows. With a log
    # pruned past what a reader saw (keep=3) it reloads instead.
    from unrecall import Memory
    from unrecall.storage import sqlite

    monkeypatch.setattr(sqlite, "VECTOR_LOG_KEEP", keep)
    path = tmp_path / "two.db"
    with Memory(path, embedder="hashing") as a, Memory(path, embedder="hashing") as b:
        a.add("I live in Porto. My dentist is Dr. Moss. I keep bees.", user_id="u")
        a.add("My cat is called Miso.", user_id="v")
        tu = a.storage.tenant("user:u", False)
        tv = a.storage.tenant("user:v", False)
        a.search("where do I live", user_id="u")
        a.search("cat", user_id="v")
        before = a.storage._vectors[tu]

        added = b.add("I moved to Lyon. My bank is Fennick Savings.", user_id="u").ids
        b.purge("Dr. Moss", user_id="u")
        b.supersede(added[0], "I moved to Nice.", user_id="u")
        b.delete_all(user_id="v")

        a.storage.sync()
        assert (a.storage._vectors.get(tu) is before) == (keep > 3)
        assert tv not in a.storage._vectors  # the erased tenant's matrix is gone
        assert _matrix(a, tu) == _table(a, tu)
        texts = {h.text for h in a.search("where do I live", user_id="u", k=10)}
        assert not any("Moss" in t for t in texts)
        assert any("Nice" in t for t in texts)
        assert a.search("cat", user_id="v") == []


@pytest.mark.sqlite_only("about SQLite's vector_log (PostgreSQL keeps no vector cache)")
def test_an_erased_tenant_leaves_no_rows_in_the_vector_log(fast_mem) -> None:  # type: ignore[no-untyped-def]
    fast_mem.add("I live in Porto. My dentist is Dr. Moss.", user_id="u")
    tenant = fast_mem.storage.tenant("user:u", False)
    seen = fast_mem.storage._scalar("SELECT max(seq) FROM vector_log")
    fast_mem.delete_all(user_id="u")
    rows = fast_mem.storage._db.execute("SELECT * FROM vector_log").fetchall()
    # the one row that tells other processes to drop it, under a seq none of
    # them has seen (a reused seq would be taken for a row already read)
    assert [(t, m) for _, t, m in rows] == [(tenant, 0)] and rows[0][0] > seen


OPS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(["add", "purge", "erase", "search"]),
        st.sampled_from(["u", "v"]),
        st.integers(0, 5),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None)
@given(ops=OPS)
def test_two_connections_keep_their_matrices_equal_to_the_table(ops: list) -> None:  # type: ignore[type-arg]
    # Whatever two connections do in turn, each one's cached matrices, once
    # it has looked, hold exactly the vectors the table holds: no purged
    # vector lingers in a cache, none added is missing.
    from unrecall import Memory

    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(Path(tmp) / "two.db", embedder="hashing") as a,
        Memory(Path(tmp) / "two.db", embedder="hashing") as b,
    ):
        mems = {"a": a, "b": b}
        for who, op, user, n in ops:
            mem = mems[who]
            if op == "add":
                mem.add(f"Fact {n} for {user}: the blue kettle {n}. The lamp {n}.", user_id=user)
            elif op == "purge":
                held = mem.get_all(user_id=user)
                if held:
                    mem.purge(held[n % len(held)].id, user_id=user)
            elif op == "erase":
                mem.delete_all(user_id=user)
            else:
                mem.search(f"kettle {n}", user_id=user)
            for m in mems.values():
                m.storage.sync()
                for u in ("u", "v"):
                    m.search("kettle", user_id=u)  # loads a matrix not held yet
                for tenant in list(m.storage._vectors):
                    assert _matrix(m, tenant) == _table(m, tenant)

"""The embedded store's vector lists: the int8 pass ranks exactly, small
tenants are searched exactly, large ones through their nearest lists, and
whatever connections do, the lists hold exactly the stored vectors, with
centroids derived from current members only."""

from __future__ import annotations

import contextlib
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest
from helpers import check_centroids, check_held, check_lists
from hypothesis import example, given, settings
from hypothesis import strategies as st

from unrecall import Memory
from unrecall.storage import sqlite_lists, vector_lists
from unrecall.storage.vector_lists import Centroids, Rows, halves, int8_scan, products

DIM = 384
pytestmark = pytest.mark.sqlite_only("about the SQLite store's vector lists")


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered(n: int, seed: int, dim: int = DIM) -> np.ndarray:
    """Unit vectors in tight clusters: many near-ties, the hard case for a bound."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((40, dim))
    return unit(centers[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, dim)))


def exact_top(mat: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(mat @ q), kind="stable")[:k]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_int8_pass_keeps_the_exact_top_k(seed: int) -> None:
    mat = clustered(8192, seed)
    mat[::97] = 0.0  # a degenerate row quantises with scale 1 and no error
    rows = Rows.of(np.arange(len(mat)), mat)
    rng = np.random.default_rng(seed + 10)
    for q in unit(mat[rng.integers(1, len(mat), 20)] + 0.2 * rng.standard_normal((20, DIM))):
        for k in (1, 5, 20, 80):
            cand, bound = int8_scan().candidates(rows, q, k)
            assert set(exact_top(mat, q, k).tolist()) <= set(cand.tolist())
            # each bound holds, and the rescore reads them highest first
            assert (mat[cand] @ q <= bound).all()
            assert (np.diff(bound) <= 0).all()
            if k <= 20:  # the float32 rescore stays small
                assert len(cand) < len(mat) // 5


def test_products_are_numpys_on_one_thread() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((300, DIM)), rng.standard_normal((DIM, 3))
    assert np.allclose(products(a, b), a @ b, atol=1e-4)
    assert np.allclose(products(a, b[:, 0]), a @ b[:, 0], atol=1e-4)
    assert products(a[:0], b).shape == (0, 3)


def test_a_vector_joins_the_list_of_the_highest_product() -> None:
    rng = np.random.default_rng(8)
    units = unit(rng.standard_normal((50, DIM))).astype(np.float32)
    cents = Centroids(3, np.arange(100, 150), units, np.full(50, 10**6, dtype=np.int64))
    vecs = unit(rng.standard_normal((7, DIM)))
    first, _ = cents.place(vecs)
    assert first.tolist() == (100 + np.argmax(vecs @ units.T, axis=1)).tolist()
    assert cents.place(vecs[:1])[0].tolist() == [100 + int(np.argmax(units @ vecs[0]))]


def test_the_second_list_is_soars_choice_and_never_the_first() -> None:
    # SOAR: minimise |x - c|^2 + lambda <r, x - c>^2, r the unit residual of
    # the first list, over every other list; a tenant read whole has none.
    rng = np.random.default_rng(9)
    units = unit(rng.standard_normal((40, DIM)))
    cents = Centroids(1, np.arange(40) * 3, units, np.full(40, 10**6, dtype=np.int64))
    vecs = unit(units[rng.integers(0, 40, 2000)] + 0.8 * rng.standard_normal((2000, DIM)) / 20)
    first, second = cents.place(vecs)
    assert second is not None and not np.any(first == second)
    for x, a, b in zip(vecs[:50], first[:50], second[:50], strict=True):
        r = x - units[a // 3]
        r /= np.linalg.norm(r)
        loss = np.sum((x - units) ** 2, axis=1) + vector_lists.SPILL_WEIGHT * ((x - units) @ r) ** 2
        loss[a // 3] = np.inf
        assert b == 3 * int(np.argmin(loss))
    # the second list leaves a residual less like the first's than the
    # second-nearest centroid would: that is the point of it
    near2 = np.argsort(-(vecs @ units.T), axis=1)[:, 1]
    cos = [
        float(_cos(x - units[a // 3], x - units[c]))
        for x, a, c in zip(vecs, first, second // 3, strict=True)
    ]
    cos2 = [
        float(_cos(x - units[a // 3], x - units[c]))
        for x, a, c in zip(vecs, first, near2, strict=True)
    ]
    assert np.mean(cos) < np.mean(cos2)
    small = Centroids(1, np.arange(40), units, np.full(40, 10, dtype=np.int64))
    assert small.whole and small.place(vecs)[1] is None


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_rescore_stops_at_the_first_bound_below_its_kth_product(tmp_path: Path) -> None:
    with Memory(tmp_path / "r.db", embedder="hashing") as mem:
        _fill(mem, "u", _facts(300, "r"))
        st_ = mem.storage
        table = st_._rows("SELECT id, embedding FROM memory_vectors", ())
        ids = np.array([r[0] for r in table])
        mat = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in table])
        q = mem.embedder.embed(["heron kettle 7"])[0]
        sims = mat @ q
        order = np.argsort(-sims, kind="stable")
        for slack, reads_all in ((0.01, False), (10.0, True)):
            # valid bounds, highest first: each true product plus a slack
            got_ids, got_sims = st_._lists._rescore(st_._db, ids[order], sims[order] + slack, q, 5)
            assert (len(got_ids) == len(ids)) is reads_all
            top = np.lexsort((got_ids, -got_sims))[:5]
            assert got_ids[top].tolist() == ids[np.lexsort((ids, -sims))[:5]].tolist()


def test_halves_cut_a_list_of_alike_members_too() -> None:
    mat = clustered(300, 4)
    side = halves(Rows.of(np.arange(300), mat))
    assert 0 < side.sum() < 300
    same = halves(Rows.of(np.arange(100), np.repeat(mat[:1], 100, axis=0)))
    assert same.sum() == 50  # all alike: cut by position


def _fill(mem: Memory, user: str, texts: list[str]) -> None:
    for at in range(0, len(texts), 50):
        mem.add([{"role": "user", "content": t} for t in texts[at : at + 50]], user_id=user)


def _facts(n: int, tag: str) -> list[str]:
    animals = ["heron", "otter", "badger", "lynx", "wren", "stoat", "vole", "crane"]
    things = ["kettle", "lantern", "ledger", "compass", "teapot", "anchor", "quilt"]
    return [
        f"the {animals[i % 8]} {tag}{i} keeps a {things[(i * 3) % 7]} number {i % 13}"
        for i in range(n)
    ]


def test_a_small_tenant_is_searched_exactly_and_a_large_one_by_its_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_lists, "EXACT_UP_TO", 150)
    monkeypatch.setattr(vector_lists, "PROBE", 3)
    monkeypatch.setattr(sqlite_lists, "SPLIT_AT", 16)
    with Memory(tmp_path / "l.db", embedder="hashing") as mem:
        _fill(mem, "small", _facts(120, "s"))
        _fill(mem, "large", _facts(400, "l"))
        st_ = mem.storage
        check_lists(st_, split_at=16)
        for user, exact in (("small", True), ("large", False)):
            tid = st_.tenant(f"user:{user}", False)
            assert tid is not None
            table = st_._rows(
                "SELECT id, embedding FROM memory_vectors WHERE tenant_id = ?", (tid,)
            )
            ids = np.array([r[0] for r in table])
            mat = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in table])
            lists = st_._lists.centroids(st_._db, tid)
            assert len(lists.lists) > 3  # split many times
            hits = 0
            for q in mem.embedder.embed(["heron kettle", "lynx teapot 7", "quilt number 3"]):
                got = st_.vector(tid, q, 10)
                want = ids[exact_top(mat, q, 10)].tolist()
                sims = mat @ q
                if exact:  # the same ids, or the same similarities on a tie
                    assert [m for m, _ in got] == want or np.allclose(
                        [s for _, s in got], np.sort(sims)[::-1][:10], atol=1e-6
                    )
                hits += len({m for m, _ in got} & set(want))
                # each similarity returned is the exact one
                by_id = dict(zip(ids.tolist(), sims.tolist(), strict=True))
                assert np.allclose([s for _, s in got], [by_id[m] for m, _ in got], atol=1e-6)
            if not exact:
                assert len(st_._lists.centroids(st_._db, tid).probe(q)) == 3
                assert hits > 0
                spilled = st_._scalar(
                    "SELECT count(*) FROM memory_vectors WHERE tenant_id = ? AND spill IS NOT NULL",
                    (tid,),
                )
                assert spilled >= 200  # those added after the tenant passed 150
        # Read whole again (as a tenant that shrank would be), the large
        # tenant's spilled vectors are read twice: the search is exact all
        # the same, each vector counted once by the int8 pass's bound.
        monkeypatch.setattr(vector_lists, "PROBE", 10**6)
        tid = st_.tenant("user:large", False)
        table = st_._rows("SELECT id, embedding FROM memory_vectors WHERE tenant_id = ?", (tid,))
        ids = np.array([r[0] for r in table])
        mat = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in table])
        for q in mem.embedder.embed(["heron kettle", "lynx teapot 7", "quilt number 3"]):
            got = st_.vector(tid, q, 5)
            assert np.allclose([s for _, s in got], np.sort(mat @ q)[::-1][:5], atol=1e-6)


def test_a_purge_rewrites_its_chunks_and_centroids_from_the_members_that_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_lists, "SPLIT_AT", 16)
    monkeypatch.setattr(sqlite_lists, "CHUNK", 4)
    # a tenant that is probed, so the secret is in a second list as well
    monkeypatch.setattr(vector_lists, "EXACT_UP_TO", 20)
    monkeypatch.setattr(vector_lists, "PROBE", 2)
    with Memory(tmp_path / "p.db", embedder="hashing") as mem:
        _fill(mem, "u", _facts(60, "p"))
        secret = mem.add("my locker code is zqlocker4471", user_id="u").ids[0]
        st_ = mem.storage
        tid = st_.tenant("user:u", False)
        row = st_.memory(tid, secret)
        assert row is not None
        (vec,) = st_.embeddings(tid, [row.id]).values()
        codes = Rows.of(np.array([row.id]), vec[None, :]).codes.tobytes()
        ((list_id, spill),) = st_._rows(
            "SELECT list, spill FROM memory_vectors WHERE id = ?", (row.id,)
        )
        assert spill is not None and spill != list_id
        float_bytes = vec.tobytes()
        st_.erase()  # (a checkpoint) the scan below can see both forms while they live
        raw = b"".join(p.read_bytes() for p in st_.files())
        assert float_bytes in raw and codes in raw
        chunks_of = "SELECT rowid, ids FROM vector_chunks WHERE tenant_id = ? AND list IN (?, ?)"
        untouched = {
            rowid
            for rowid, ids in st_._rows(chunks_of, (tid, list_id, spill))
            if row.id not in np.frombuffer(ids, dtype=np.int64)
        }
        assert untouched
        mem.purge(secret, user_id="u")
        check_lists(st_, split_at=16)
        # only the two chunks that held it were written again
        after = {r for r, _ in st_._rows(chunks_of, (tid, list_id, spill))}
        assert untouched <= after and len(after - untouched) <= 2
        # the forensic look: neither form of the vector is left in any file
        st_.erase()
        raw = b"".join(p.read_bytes() for p in st_.files())
        assert float_bytes not in raw and codes not in raw
        chunks = st_._rows("SELECT ids, codes FROM vector_chunks")
        assert all(codes not in bytes(c) for _, c in chunks)
        assert all(row.id not in np.frombuffer(i, dtype=np.int64) for i, _ in chunks)
        # each centroid is the mean of those that stay, not the old mean
        # minus the secret (whose rounding would keep a trace of it)
        for held in (list_id, spill):
            left = st_._lists._members(st_._db, tid, held)
            if len(left):
                got = st_._scalar(
                    "SELECT centroid FROM vector_lists WHERE tenant_id = ? AND list = ?",
                    (tid, held),
                )
                assert bytes(got) == vector_lists.mean(left).tobytes()


def test_a_vector_is_found_by_the_search_of_its_own_transaction(tmp_path: Path) -> None:
    with Memory(tmp_path / "t.db", embedder="hashing") as mem:
        mem.add("an older note about the pier", user_id="u")
        tid = mem.storage.tenant("user:u", False)
        with mem.storage.transaction():
            mem.add("the pier lamp zqinside is blue", user_id="u")
            q = mem.embedder.embed(["the pier lamp zqinside is blue"])[0]
            (_, sim), *_ = mem.storage.vector(tid, q, 5)
            assert sim == pytest.approx(1.0, abs=1e-5)
        check_lists(mem.storage)


def test_an_erased_tenant_leaves_no_list_chunk_or_vector(tmp_path: Path) -> None:
    with Memory(tmp_path / "e.db", embedder="hashing") as mem:
        _fill(mem, "u", _facts(30, "e"))
        mem.add("a fact of another user", user_id="v")
        tid = mem.storage.tenant("user:u", False)
        mem.delete_all(user_id="u")
        for table in ("vector_lists", "vector_chunks", "memory_vectors"):
            assert (
                mem.storage._scalar(f"SELECT count(*) FROM {table} WHERE tenant_id = ?", (tid,))
                == 0
            )
        check_lists(mem.storage)


def test_centroids_probe_every_list_of_a_small_tenant() -> None:
    rows = [(i, 10, unit(np.ones((1, 8)))[0].tobytes()) for i in range(100)]
    small = Centroids.of(1, 8, rows)
    assert len(small.probe(np.ones(8, np.float32))) == 100  # 1,000 vectors: exact


OPS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(["add", "purge", "supersede", "erase", "search"]),
        st.sampled_from(["u", "v"]),
        st.integers(0, 40),
    ),
    min_size=1,
    max_size=14,
)


@settings(max_examples=25, deadline=None)
@given(ops=OPS)
# a purge that brings a probed tenant back under EXACT_UP_TO: the cached
# sizes must say so, or the search probes where it should read every list
@example(
    ops=[
        ("a", "add", "v", 30),
        ("a", "add", "v", 31),
        ("a", "add", "v", 39),
        ("a", "purge", "v", 0),
    ]
)
def test_two_connections_keep_the_lists_equal_to_the_table(ops: list) -> None:  # type: ignore[type-arg]
    # Whatever two connections do in turn, the lists hold exactly the stored
    # vectors, each list's centroid is its members' mean, and no list
    # outgrows the split size; a search sees the other's last commit, and
    # what either holds of the lists in memory is the lists as stored.
    with (
        tempfile.TemporaryDirectory() as tmp,
        pytest.MonkeyPatch.context() as mp,
    ):
        mp.setattr(sqlite_lists, "SPLIT_AT", 6)
        mp.setattr(sqlite_lists, "CHUNK", 4)
        # a tenant past 12 vectors is probed, two lists of it, and its
        # vectors are spilled to second lists
        mp.setattr(vector_lists, "EXACT_UP_TO", 12)
        mp.setattr(vector_lists, "PROBE", 2)
        with (
            Memory(Path(tmp) / "two.db", embedder="hashing") as a,
            Memory(Path(tmp) / "two.db", embedder="hashing") as b,
        ):
            mems = {"a": a, "b": b}
            for who, op, user, n in ops:
                mem = mems[who]
                held = mem.get_all(user_id=user)
                if op == "add":
                    _fill(mem, user, _facts(1 + n % 9, f"{user}{n}x"))
                elif op == "purge" and held:
                    mem.purge(held[n % len(held)].id, user_id=user)
                elif op == "supersede" and held:
                    mem.supersede(held[n % len(held)].id, f"replaced {n} lamp", user_id=user)
                elif op == "erase":
                    mem.delete_all(user_id=user)
                else:
                    mem.search(f"kettle {n}", user_id=user)
                check_lists(mem.storage, split_at=6, chunk=4)
                for m in mems.values():
                    tid = m.storage.tenant(f"user:{user}", False)
                    if tid is None:
                        continue
                    active = {r.id for r in m.storage.memories(tid, ["active"])}
                    q = m.embedder.embed(["kettle lamp"])[0]
                    found = [mid for mid, _ in m.storage.vector(tid, q, 1000)]
                    check_held(m.storage)
                    check_centroids(m.storage)
                    assert len(found) == len(set(found))  # a spilled vector comes once
                    if m.storage._lists.centroids(m.storage._db, tid).whole:
                        assert set(found) == active
                    else:
                        assert set(found) <= active


def test_a_search_reuses_the_centroids_until_the_lists_change(tmp_path: Path) -> None:
    # Reading every centroid of a tenant of a million memories takes ~40 ms:
    # a search keeps them per tenant version, an add that only appends to
    # lists carries them to the new version with its means, a purge recentres the list it
    # rewrote (no cached mean keeps the purged vector), and another
    # connection's commit makes the next search read them.
    path = tmp_path / "c.db"
    with Memory(path, embedder="hashing") as mem, Memory(path, embedder="hashing") as other:
        mem.add("the harbour crane is red", user_id="u")
        tid = mem.storage.tenant("user:u", False)
        cache = mem.storage._lists._cache
        mem.search("crane", user_id="u")
        first = cache[tid]
        assert first.version == mem.storage.tenant_version(tid)
        mem.search("harbour", user_id="u")
        assert cache[tid] is first
        gone = mem.add("the harbour crane is blue", user_id="u").ids[0]
        carried = cache[tid]  # not read again: carried to the new version...
        assert carried.version == mem.storage.tenant_version(tid)
        # ...with the sizes and means as they are now: whether a tenant is
        # read whole, and where the next vector goes, hang on them
        fresh = mem.storage._lists.centroids(mem.storage._db, tid)
        assert np.array_equal(carried.sizes, fresh.sizes) and fresh.sizes.sum() == 2
        np.testing.assert_allclose(carried.units, fresh.units, atol=1e-6)
        assert carried.units is not first.units  # a search may be reading the old array
        mem.purge(gone, user_id="u")
        second = cache[tid]
        assert second.version == mem.storage.tenant_version(tid)
        (centroid,) = mem.storage._rows("SELECT centroid FROM vector_lists")
        want = np.frombuffer(centroid[0], dtype=np.float32)
        np.testing.assert_allclose(second.units[0], want / np.linalg.norm(want), atol=1e-6)
        other.add("the harbour crane is green", user_id="u")
        assert [h.text for h in mem.search("green crane", user_id="u", k=1)] == [
            "the harbour crane is green"
        ]
        assert cache[tid] is not second
        assert cache[tid].version == mem.storage.tenant_version(tid)
        check_lists(mem.storage)


def test_a_split_adds_its_new_list_to_the_cached_centroids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bulk load at 1.5M memories spent 11 % of its time reading all ~8,000
    # centroids again after every commit that split a list. The commit now
    # adds the new lists to the cached ones, with the means as stored.
    monkeypatch.setattr(sqlite_lists, "SPLIT_AT", 8)
    with Memory(tmp_path / "s.db", embedder="hashing") as mem:
        _fill(mem, "u", _facts(6, "s"))
        tid = mem.storage.tenant("user:u", False)
        lists = mem.storage._lists
        mem.search("kettle", user_id="u")
        before = len(lists._cache[tid].lists)
        loads: list[int] = []
        real = sqlite_lists.Centroids.of
        monkeypatch.setattr(sqlite_lists.Centroids, "of", lambda *a: loads.append(1) or real(*a))
        for n in range(6):
            _fill(mem, "u", _facts(4, f"t{n}"))
        cached = lists._cache[tid]
        assert len(cached.lists) > before  # lists were split off...
        assert loads == []  # ...and none read again
        assert cached.version == mem.storage.tenant_version(tid)
        check_centroids(mem.storage)  # the lists, sizes and means as stored
        check_lists(mem.storage, split_at=8)


@pytest.mark.parametrize("split_at", [8, 10_000])
def test_a_rolled_back_savepoint_leaves_no_list_in_the_cached_centroids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split_at: int
) -> None:
    # Lists written inside a savepoint that rolls back (split, or only
    # appended to) are as they were, whatever the outer commit then says:
    # the cached centroids must not keep a list, mean or size of it. (The
    # appends' sizes used to stay, and decide whether a search read the
    # tenant whole.)
    monkeypatch.setattr(sqlite_lists, "SPLIT_AT", 8)
    with Memory(tmp_path / "r.db", embedder="hashing") as mem:
        _fill(mem, "u", _facts(40, "r"))  # lists to append to
        monkeypatch.setattr(sqlite_lists, "SPLIT_AT", split_at)
        mem.search("kettle", user_id="u")
        with mem.storage.transaction():
            with contextlib.suppress(RuntimeError), mem.storage.transaction():
                _fill(mem, "u", _facts(12, "gone"))
                with mem.storage.transaction():  # a savepoint flushes what came before
                    pass
                raise RuntimeError("rolled back")
            _fill(mem, "u", _facts(2, "kept"))
        mem.search("kettle", user_id="u")
        check_centroids(mem.storage)
        check_lists(mem.storage, split_at=split_at)


def test_a_first_load_of_many_lists_is_warmed_by_ranges_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cold first search at 1M spent 514-693 ms reading the tenant's
    # centroid rows a page at a time; they are now read first by ranges, on
    # connections of their own at once. What the load returns is unchanged.
    monkeypatch.setattr(sqlite_lists, "SPLIT_AT", 16)
    db = tmp_path / "w.db"
    with Memory(db, embedder="hashing") as mem:
        _fill(mem, "u", _facts(300, "w"))
        tid = mem.storage.tenant("user:u", False)
        assert tid is not None
        unwarmed = mem.storage._lists.centroids(mem.storage._db, tid)
    assert len(unwarmed.lists) > 8
    monkeypatch.setattr(sqlite_lists, "WARM_LISTS", 8)
    ranges: list[tuple[int, int]] = []
    original = sqlite_lists.apsw.Connection.execute

    class Spy(sqlite_lists.apsw.Connection):  # type: ignore[misc]
        def execute(self, sql: str, args: object = None) -> object:  # type: ignore[override]
            if "sum(length(centroid))" in sql:
                ranges.append((args[1], args[2]))  # type: ignore[index]
            return original(self, sql, args)

    monkeypatch.setattr(sqlite_lists.apsw, "Connection", Spy)
    with Memory(db, embedder="hashing") as mem:
        st_ = mem.storage
        for _ in range(2):
            warmed = st_._lists.centroids(st_._db, tid, cached=True)
            st_._lists.forget_cache(tid)  # a reload: not a first load
        # one range a connection, together every list, each read once
        assert len(ranges) == sqlite_lists.WARM_READERS
        spans = sorted(ranges)
        assert spans[0][0] == int(unwarmed.lists.min()) and spans[-1][1] >= unwarmed.lists.max()
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(spans))
        assert warmed.lists.tolist() == unwarmed.lists.tolist()
        assert np.array_equal(warmed.units, unwarmed.units)

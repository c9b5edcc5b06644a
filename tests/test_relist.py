"""An upgrade that makes the vector lists again (schema v8) lists the stored
vectors a batch a transaction (``SQLiteStorage.relist``). Until it is done
the store serves: a search reads the vectors not yet listed exactly, a
purge takes out what it must without trusting the old list names, other
processes write between batches, and one cut off goes on where it stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import numpy as np
import pytest
from helpers import check_lists, load_bench, store_files

from unrecall import Memory
from unrecall.storage import sqlite as sqlite_store
from unrecall.storage.schema import OLD_LISTS, RELIST
from unrecall.storage.sqlite import SQLiteStorage
from unrecall.storage.sqlite_lists import ListIndex

WORDS = "heron copper kettle lantern willow marble harbour violet cedar ember".split()


def text(i: int) -> str:
    return f"the {WORDS[i % 10]} {i} sits by the {WORDS[(i * 7) % 10]} near {WORDS[(i * 3) % 10]}"


def pending_store(path: Path, n: int) -> int:
    """A store of ``n`` memories of user ``u`` as the v8 upgrade leaves it:
    no lists, every vector pending, each row still naming the lists (and
    second lists) it was in before; how many named a second list."""
    with Memory(path, embedder="hashing") as mem:
        for at in range(0, n, 10):
            mem.add([{"role": "user", "content": text(i)} for i in range(at, at + 10)], user_id="u")
        spilled = mem.storage._scalar("SELECT count(*) FROM memory_vectors WHERE spill >= 0")
        with mem.storage.transaction():
            for stmt in RELIST:
                mem.storage._write(stmt)
    return spilled


def assert_exact(storage: SQLiteStorage, tenant_id: int, query: np.ndarray, k: int) -> None:
    """The search's top ``k`` is an exact top ``k`` (up to ties: the hashing
    embedder's similarities tie often, and a product's last bit depends on
    the batch it is computed in)."""
    rows = storage._rows(
        "SELECT id, embedding FROM memory_vectors WHERE tenant_id = ?", (tenant_id,)
    )
    sims = {mid: float(np.frombuffer(blob, dtype=np.float32) @ query) for mid, blob in rows}
    found = storage.vector(tenant_id, query, k)
    best = sorted(sims.values(), reverse=True)[:k]
    np.testing.assert_allclose([s for _, s in found], best, atol=1e-6)
    np.testing.assert_allclose([s for _, s in found], [sims[m] for m, _ in found], atol=1e-6)


def no_leftovers(storage: SQLiteStorage, gone: set[int]) -> None:
    """No purged vector's row, chunk entry or code is left in the lists."""
    check_lists(storage)
    listed: set[int] = set()
    for (ids,) in storage._rows("SELECT ids FROM vector_chunks"):
        listed |= set(np.frombuffer(ids, dtype=np.int64).tolist())
    assert not listed & gone
    assert storage._scalar("SELECT value FROM meta WHERE key = 'relist'") is None


def test_a_search_mid_upgrade_is_exact_and_purges_and_adds_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.db"
    pending_store(path, 60)
    relist = SQLiteStorage.relist
    monkeypatch.setattr(SQLiteStorage, "relist", lambda self, batch=None: None)
    with Memory(path, embedder="hashing") as mem:
        st = mem.storage
        tenant = st._scalar("SELECT tenant_id FROM memory_vectors LIMIT 1")
        queries = [mem.embedder.embed([text(i)])[0] for i in (3, 17, 41)]
        gone: set[int] = set()
        step = 0
        while True:
            for q in queries:  # a small tenant is searched exactly: listed or not
                assert_exact(st, tenant, q, 5)
            after, upto = ListIndex.pending(st._db) or (None, None)
            if after is None:
                break
            if step % 2 == 0:  # a vector not listed yet, then one listed already
                ids = [r[0] for r in st._rows("SELECT id FROM memory_vectors ORDER BY id")]
                victim = next(m for m in ids if (after < m <= upto) == (step % 4 == 0))
                uid = st._scalar("SELECT uid FROM memories WHERE id = ?", (victim,))
                mem.purge(uid, user_id="u")
                gone.add(victim)
            mem.add(f"a new note {step} about the {WORDS[step % 10]}", user_id="u")
            st._relist_batch(7)
            step += 1
        assert step >= 8
        no_leftovers(st, gone)
        monkeypatch.setattr(SQLiteStorage, "relist", relist)


def test_old_list_names_do_not_misdirect_a_purge_in_a_probed_tenant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the upgrade the rows named lists and second lists that the
    # upgrade deleted; list ids start again from 0, so an old name can be a
    # new list's. A purge of a row not listed yet must touch no list.
    # The store spilled from its tenth vector on; listed again, the tenant
    # is read whole up to its fortieth, so those keep no second list.
    monkeypatch.setattr("unrecall.storage.sqlite_lists.SPLIT_AT", 16)
    monkeypatch.setattr("unrecall.storage.vector_lists.EXACT_UP_TO", 10)
    monkeypatch.setattr("unrecall.storage.vector_lists.PROBE", 1)
    path = tmp_path / "s.db"
    assert pending_store(path, 150) > 120
    monkeypatch.setattr("unrecall.storage.vector_lists.EXACT_UP_TO", 40)
    monkeypatch.setattr("unrecall.storage.vector_lists.PROBE", 2)
    relist = SQLiteStorage.relist
    monkeypatch.setattr(SQLiteStorage, "relist", lambda self, batch=None: None)
    with Memory(path, embedder="hashing") as mem:
        st = mem.storage
        for _ in range(10):
            st._relist_batch(9)
        after, _ = ListIndex.pending(st._db)
        rows = st._rows("SELECT id, uid FROM memories WHERE id > ? ORDER BY id", (after,))
        lists = st._rows("SELECT * FROM vector_lists ORDER BY list")
        chunks = st._rows("SELECT * FROM vector_chunks ORDER BY list, chunk")
        for _, uid in rows[::5]:
            mem.purge(uid, user_id="u")
        assert st._rows("SELECT * FROM vector_lists ORDER BY list") == lists
        assert st._rows("SELECT * FROM vector_chunks ORDER BY list, chunk") == chunks
        relist(st, 9)
        no_leftovers(st, {mid for mid, _ in rows[::5]})
        assert st._scalar("SELECT count(*) FROM memory_vectors WHERE spill >= 0") > 50


def old_rows(storage: SQLiteStorage) -> int:
    """Rows left in the tables of lists the upgrade set aside."""
    tables = ListIndex.old_tables(storage._db)
    return sum(storage._scalar(f"SELECT count(*) FROM {t}") for t in tables)


def test_the_old_lists_are_deleted_a_step_at_a_time_before_any_vector_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The upgrade deleted 1.3 GB of old chunks at 1M in one transaction,
    # holding the write lock 12.2 s; it now sets their tables aside and
    # deletes them in steps, each a transaction of its own.
    monkeypatch.setattr(sqlite_store, "DROP_BATCH", 2)
    path = tmp_path / "s.db"
    pending_store(path, 200)
    steps: list[tuple[int, int, bool, bool]] = []  # rows before, after; listed; old tables
    batch = SQLiteStorage._relist_batch

    def spy(self: SQLiteStorage, size: int) -> bool:
        old, cursor = old_rows(self), ListIndex.pending(self._db)
        more = batch(self, size)
        listed = ListIndex.pending(self._db) != cursor
        steps.append((old, old_rows(self), listed, bool(ListIndex.old_tables(self._db))))
        return more

    monkeypatch.setattr(SQLiteStorage, "_relist_batch", spy)
    with apsw.Connection(str(path)) as db:
        total = sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in OLD_LISTS)
    assert total > 4
    with Memory(path, embedder="hashing") as mem:
        assert ListIndex.old_tables(mem.storage._db) == []
        no_leftovers(mem.storage, set())
    dropping = [s for s in steps if s[0] or s[3]]
    assert all(before - after <= 2 for before, after, _, _ in dropping)
    assert not any(listed for _, _, listed, _ in dropping)  # nothing listed meanwhile
    assert len(dropping) >= total // 2
    assert any(listed for _, _, listed, _ in steps)


def test_a_purge_while_the_old_lists_are_deleted_takes_its_codes_out_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Until they are deleted the old chunks hold an int8 code of every
    # vector and the old centroids a mean of them: a purge, or the deletion
    # of a tenant, takes out the old lists its vectors were in, and no
    # purged code is left anywhere in the file.
    monkeypatch.setattr("unrecall.storage.sqlite_lists.SPLIT_AT", 16)  # lists of u's, several
    path = tmp_path / "s.db"
    with Memory(path, embedder="hashing") as mem:
        for user in ("u", "w"):
            notes = [{"role": "user", "content": f"{user} {text(i)}"} for i in range(60)]
            mem.add(notes, user_id=user)
        with mem.storage.transaction():
            for stmt in RELIST:
                mem.storage._write(stmt)
    monkeypatch.setattr(SQLiteStorage, "relist", lambda self, batch=None: None)
    with Memory(path, embedder="hashing") as mem:
        st = mem.storage
        u, w = (st.tenant(f"user:{user}", False) for user in ("u", "w"))
        victim, uid, held = st._rows(
            "SELECT v.id, m.uid, v.list FROM memory_vectors v JOIN memories m ON m.id = v.id"
            " WHERE v.tenant_id = ? ORDER BY v.id LIMIT 1 OFFSET 7",
            (u,),
        )[0]
        codes = {}
        for ids, code in st._rows("SELECT ids, codes FROM old_vector_chunks"):
            members = np.frombuffer(ids, dtype=np.int64).tolist()
            if victim in members:
                at = members.index(victim) * st.dim
                codes[victim] = code[at : at + st.dim]
        assert victim in codes and st._scalar(
            "SELECT count(*) FROM old_vector_lists WHERE tenant_id = ? AND list = ?", (u, held)
        )
        mem.purge(uid, user_id="u")
        mem.delete_all(user_id="w")
        for table in OLD_LISTS:
            assert not st._scalar(
                f"SELECT count(*) FROM {table} WHERE tenant_id = ? AND list = ?", (u, held)
            )
            assert not st._scalar(f"SELECT count(*) FROM {table} WHERE tenant_id = ?", (w,))
        assert st._scalar("SELECT count(*) FROM old_vector_chunks") > 0  # the rest are still there
        st.erase()
        assert not any(codes[victim] in f.read_bytes() for f in store_files(mem))


CHILD = """
import sys
import unrecall.storage.sqlite as s
s.RELIST_BATCH = 2
from unrecall import Memory
path, adds, user = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with Memory(path, embedder="hashing") as mem:
    for i in range(adds):
        mem.add(f"{user} keeps note {i} on the willow", user_id=user)
"""


def child(path: Path, adds: int, user: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(adds), user])


def cursor(path: Path) -> int | None:
    db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'relist'").fetchone()
    finally:
        db.close()
    return None if row is None else int(row[0].split()[0])


def test_processes_share_an_upgrade_and_one_killed_midway_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    pending_store(path, 400)
    start = cursor(path)
    assert start is not None
    # the first opener is killed once it has listed some batches
    first = child(path, 0, "u")
    deadline = time.monotonic() + 120
    while (cursor(path) or start) == start and first.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert cursor(path) is not None, "the upgrade ended before the kill; make the store larger"
    # two more open it at once, adding as soon as their open returns
    others = [child(path, 20, "u"), child(path, 20, "w")]
    assert [p.wait(timeout=300) for p in others] == [0, 0]
    with Memory(path, embedder="hashing") as mem:
        no_leftovers(mem.storage, set())
        assert mem.storage._scalar("SELECT count(*) FROM memory_vectors") == 440
        assert len(mem.get_all(user_id="w")) == 20


def old_left(path: Path) -> int | None:
    """Rows left in the old lists' tables, read from outside; None once
    both are dropped."""
    db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = ListIndex.old_tables(db)
        if not tables:
            return None
        return sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables)
    finally:
        db.close()


def test_a_process_that_held_the_lists_writes_to_the_new_ones(tmp_path: Path) -> None:
    # The lists set aside while this process had their centroids cached: an
    # add then appended to an old list that the new table does not have
    # (found by bench/attack.py --mid-upgrade).
    with Memory(tmp_path / "s.db", embedder="hashing") as mem:
        mem.add([{"role": "user", "content": text(i)} for i in range(40)], user_id="u")
        mem.search("heron", user_id="u")  # centroids and lists cached
        with mem.storage.transaction():
            for stmt in RELIST:
                mem.storage._write(stmt)
        added = mem.add("a willow note after the upgrade began", user_id="u").ids
        assert mem.search("willow note after the upgrade", user_id="u")[0].id == added[0]
        mem.storage.relist()
        no_leftovers(mem.storage, set())


def test_a_process_killed_while_deleting_the_old_lists_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    pending_store(path, 300)
    start = old_left(path)
    assert start is not None and start > 4
    # one row a step, each step slowed, so that the kill lands midway
    slow = (
        "s.DROP_BATCH = 1\n"
        "drop = s.SQLiteStorage._drop_old_lists\n"
        "def slowly(self, n):\n"
        "    import time; time.sleep(0.02); return drop(self, n)\n"
        "s.SQLiteStorage._drop_old_lists = slowly"
    )
    code = CHILD.replace("s.RELIST_BATCH = 2", f"s.RELIST_BATCH = 2\n{slow}")
    first = subprocess.Popen([sys.executable, "-c", code, str(path), "0", "u"])
    deadline = time.monotonic() + 120
    while old_left(path) == start and first.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    left = old_left(path)
    assert left is not None and 0 < left < start, "the deletion was not cut off midway"
    assert cursor(path) is not None
    with Memory(path, embedder="hashing") as mem:
        assert ListIndex.old_tables(mem.storage._db) == []
        no_leftovers(mem.storage, set())
        assert mem.storage._scalar("SELECT count(*) FROM memory_vectors") == 300


def test_the_bench_stops_relisting_after_the_batches_it_was_given(tmp_path: Path) -> None:
    # bench/vector_lists.py --relist-batches times the first batches of a
    # relisting at 1M; it must stop there and say how many it listed.
    path = tmp_path / "s.db"
    with Memory(path, embedder="minilm") as mem:
        mem.add([{"role": "user", "content": text(i)} for i in range(40)], user_id="u")
    bench = load_bench("vector_lists")
    part = bench.relist(path, 8, batches=2)
    assert (part["transactions"], part["listed"]) == (2, 16)
    with Memory(path, embedder="minilm") as mem:  # the open lists the rest
        vectors = mem.storage._scalar("SELECT count(*) FROM memory_vectors")
        assert mem.storage._lists.pending(mem.storage._db) is None
    whole = bench.relist(path, 8)
    assert whole["listed"] == whole["vectors"] == vectors

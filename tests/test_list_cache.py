"""The vector lists' rows held in memory between searches
(``storage.list_cache``): under a byte budget, least recently read first
out, and never a list other than the one stored, whoever wrote it."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import check_held

from unrecall import InvalidInput, Memory
from unrecall.storage import sqlite_lists
from unrecall.storage.list_cache import ListCache
from unrecall.storage.vector_lists import Rows

pytestmark = pytest.mark.sqlite_only("about the SQLite store's vector lists")


def _fill(mem: Memory, texts: list[str]) -> list[str]:
    return mem.add([{"role": "user", "content": t} for t in texts], user_id="u").ids


def _rows(n: int, first: int = 0) -> Rows:
    rng = np.random.default_rng(first)
    return Rows.of(np.arange(first, first + n), rng.standard_normal((n, 8)).astype(np.float32))


def _size(rows: Rows) -> int:
    return rows.ids.nbytes + rows.codes.nbytes + rows.meta.nbytes


def test_the_least_recently_read_list_goes_first_past_the_budget() -> None:
    one = _size(_rows(10))
    cache = ListCache(3 * one)
    cache.put(1, 5, {0: _rows(10, 0), 1: _rows(10, 10), 2: _rows(10, 20)})
    assert cache.held_bytes == 3 * one
    assert list(cache.get(1, 5, [0])) == [0]  # 0 is now the most recent
    cache.put(1, 5, {3: _rows(10, 30)})
    assert set(cache.get(1, 5, [0, 1, 2, 3])) == {0, 2, 3}
    assert cache.held_bytes == 3 * one
    nothing = ListCache(0)
    nothing.put(1, 5, {0: _rows(10)})
    assert nothing.held_bytes == 0 and nothing.get(1, 5, [0]) == {}


def test_lists_are_served_only_at_the_version_they_were_read_at() -> None:
    cache = ListCache(1 << 20)
    cache.put(1, 5, {0: _rows(4), 1: _rows(4, 4)})
    cache.put(2, 9, {0: _rows(4, 8)})
    assert cache.get(1, 4, [0]) == {}  # an older snapshot: not served, not dropped
    cache.put(1, 4, {2: _rows(4, 12)})  # what it read is older than what is held
    assert set(cache.get(1, 5, [0, 1, 2])) == {0, 1}
    # a newer version seen: another process wrote the tenant, all of it goes
    assert cache.get(1, 6, [0, 1]) == {}
    assert cache.get(1, 5, [0, 1]) == {}
    assert list(cache.get(2, 9, [0])) == [0]  # other tenants stay
    assert cache.held_bytes == _size(_rows(4, 8))


def test_a_commit_of_this_process_drops_only_the_lists_it_wrote() -> None:
    cache = ListCache(1 << 20)
    cache.put(1, 5, {0: _rows(4), 1: _rows(4, 4)})
    cache.committed(1, 6, {1})
    assert list(cache.get(1, 6, [0, 1])) == [0]
    cache.committed(1, 8, set())  # a commit in between that this process did not see
    assert cache.get(1, 8, [0]) == {} and cache.held_bytes == 0


def test_a_search_reads_from_the_file_only_the_lists_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_lists, "SPLIT_AT", 8)
    read: list[list[int]] = []
    original = sqlite_lists.ListIndex._read

    def spy(self: Any, db: Any, tenant_id: int, lists: list[int]) -> Any:
        read.append(sorted(lists))
        return original(self, db, tenant_id, lists)

    monkeypatch.setattr(sqlite_lists.ListIndex, "_read", spy)
    with Memory(tmp_path / "m.db", embedder="hashing") as mem:
        _fill(mem, [f"harbour crane number {i} is painted" for i in range(40)])
        lists = mem.storage._lists
        tid = mem.storage.tenant("user:u", False)
        everything = sorted(lists.centroids(mem.storage._db, tid).lists.tolist())
        assert len(everything) > 3
        mem.search("crane", user_id="u")
        assert read == [everything]  # a small tenant is read whole
        mem.search("harbour", user_id="u")
        assert read == [everything]  # the second search reads none
        before = dict(lists.held._lists[tid])
        new = mem.add("the harbour crane 99 is blue", user_id="u").ids[0]
        mem.search("blue crane", user_id="u")
        # only the lists the add wrote are read again; the others are carried
        assert len(read) == 2 and 0 < len(read[1]) < len(everything)
        after = lists.held._lists[tid]
        assert all(after[k] is before[k] for k in set(before) - set(read[1]))
        assert _internal(mem, new) in _held_ids(mem)
        check_held(mem.storage)


def test_a_forget_takes_its_codes_out_of_memory_at_its_commit(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder="hashing") as mem:
        ids = _fill(mem, [f"locker {i} code is {1000 + i}" for i in range(30)])
        mem.search("locker code", user_id="u")
        gone = _internal(mem, ids[7])
        assert gone in _held_ids(mem)
        mem.purge(ids[7], user_id="u")
        assert gone not in _held_ids(mem)
        mem.search("locker code", user_id="u")
        assert gone not in _held_ids(mem)
        check_held(mem.storage)
        held = mem.storage._lists.held
    assert held.held_bytes == 0 and held._lists == {}  # closed: nothing held


def _internal(mem: Memory, uid: str) -> int:
    ((found,),) = mem.storage._rows("SELECT id FROM memories WHERE uid = ?", (uid,))
    return int(found)


def _held_ids(mem: Memory) -> set[int]:
    held = mem.storage._lists.held
    return {int(i) for t in held._lists.values() for rows in t.values() for i in rows.ids}


def _other_process(path: str, ready: Any, go: Any, done: Any) -> None:
    with Memory(path, embedder="hashing") as mem:
        ready.set()
        go.wait(60)
        (locker,) = [m for m in mem.get_all(user_id="u") if "locker 3 " in m.text]
        mem.purge(locker.id, user_id="u")
        mem.add("the boathouse key hangs by the door", user_id="u")
    done.set()


def test_another_process_writing_the_tenant_is_seen_and_its_forget_leaves(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    ctx = multiprocessing.get_context("spawn")
    ready, go, done = ctx.Event(), ctx.Event(), ctx.Event()
    with Memory(path, embedder="hashing") as mem:
        _fill(mem, [f"locker {i} code is {1000 + i}" for i in range(30)])
        child = ctx.Process(target=_other_process, args=(str(path), ready, go, done))
        child.start()
        assert ready.wait(60)
        mem.search("locker code", user_id="u")
        before = _held_ids(mem)
        go.set()
        assert done.wait(60)
        child.join(30)
        assert child.exitcode == 0
        hits = mem.search("boathouse key", user_id="u", k=3)
        assert hits and hits[0].text == "the boathouse key hangs by the door"
        assert len(_held_ids(mem)) == len(before)  # one out, one in
        vectors = {r[0] for r in mem.storage._rows("SELECT id FROM memory_vectors")}
        assert _held_ids(mem) == vectors
        check_held(mem.storage)


def test_bad_cache_sizes_are_refused(tmp_path: Path) -> None:
    for bad in (-1, 1.5, True, "64"):
        with pytest.raises(InvalidInput, match="vector_cache_mb"):
            Memory(tmp_path / "m.db", embedder="hashing", vector_cache_mb=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="SQLite"):
        Memory("postgresql://nobody@127.0.0.1:1/none", embedder="hashing", vector_cache_mb=64)
    assert not (tmp_path / "m.db").exists()
    with Memory(tmp_path / "m.db", embedder="hashing", vector_cache_mb=0) as mem:
        mem.add("the harbour crane is red", user_id="u")
        assert mem.search("crane", user_id="u")[0].text == "the harbour crane is red"
        assert mem.storage._lists.held.held_bytes == 0


def test_the_servers_take_the_cache_size(tmp_path: Path) -> None:
    from unrecall.interfaces.cli import build_parser, main
    from unrecall.interfaces.http import Config

    db = str(tmp_path / "m.db")
    for command in (["serve"], ["mcp", "--user", "u"]):
        args = build_parser().parse_args([*command, "--db", db, "--vector-cache-mb", "0"])
        assert args.vector_cache_mb == 0
    assert Config({"UNRECALL_DB": db, "UNRECALL_VECTOR_CACHE_MB": "0"}).vector_cache_mb == 0
    assert Config({"UNRECALL_DB": db}).vector_cache_mb is None
    assert main(["serve", "--db", db, "--vector-cache-mb", "-1"]) == 2  # refused before serving
    mcp = ["mcp", "--user", "u", "--db", db, "--embedder", "hashing", "--vector-cache-mb", "-1"]
    assert main(mcp) == 2
    assert not Path(db).exists()


ENV = "UNRECALL_VECTOR_CACHE_MB"


def test_server_workers_share_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each process holds its own lists: four workers each given the whole
    # budget would hold four times what the operator set.
    import uvicorn

    from unrecall.interfaces.cli import main

    seen: list[str] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: seen.append(os.environ[ENV]))
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k != ENV})
    db = str(tmp_path / "m.db")
    for flags, share in (
        ([], "1024"),
        (["--workers", "4"], "256"),
        (["--workers", "3", "--vector-cache-mb", "100"], "33"),
        (["--workers", "8", "--vector-cache-mb", "4"], "1"),
        (["--workers", "2", "--vector-cache-mb", "0"], "0"),
    ):
        assert main(["serve", "--db", db, "--embedder", "hashing", *flags]) == 0
        assert seen.pop() == share


def test_a_commit_that_wrote_every_list_held_drops_them_all() -> None:
    # dropping the last list of a tenant forgot the tenant, and the next
    # list written then raised KeyError (found by the two-connection test)
    cache = ListCache(1 << 20)
    cache.put(1, 5, {0: _rows(4), 1: _rows(4, 4)})
    cache.committed(1, 6, {0, 1, 2})
    assert cache.held_bytes == 0 and cache.get(1, 6, [0, 1]) == {}


def test_threads_searching_while_one_writes_hold_only_stored_lists(tmp_path: Path) -> None:
    # Searches on their own threads put lists read in their snapshots while
    # the writer commits adds and purges: what is held at the end is the
    # lists as stored, and no purged memory's codes are among them.
    import threading

    with Memory(tmp_path / "m.db", embedder="hashing") as mem:
        _fill(mem, [f"locker {i} code is {1000 + i}" for i in range(60)])
        stop = threading.Event()
        errors: list[BaseException] = []

        def search() -> None:
            try:
                while not stop.is_set():
                    mem.search("locker code", user_id="u", k=5)
            except BaseException as exc:  # reported below
                errors.append(exc)

        readers = [threading.Thread(target=search) for _ in range(3)]
        for reader in readers:
            reader.start()
        for i in range(40):
            new = _fill(mem, [f"shed {i} code is {5000 + i}"])[0]
            if i % 2:
                mem.purge(new, user_id="u")
        stop.set()
        for reader in readers:
            reader.join(60)
        assert errors == []
        mem.search("shed code", user_id="u")
        vectors = {r[0] for r in mem.storage._rows("SELECT id FROM memory_vectors")}
        assert _held_ids(mem) == vectors
        check_held(mem.storage)

"""Compaction of the SQLite store: in short steps that writers get in
between, never one rewrite holding the write lock for the whole file
(issue #17: a VACUUM of a million memories held it for minutes)."""

from __future__ import annotations

import multiprocessing as mp
import threading
from pathlib import Path
from typing import Any

import apsw
import pytest

from unrecall import Memory
from unrecall.storage import sqlite as sqlite_storage

FILLER = "the archive note {i} says " + "lorem ipsum dolor sit amet " * 40


def _fill(mem: Memory, user: str, n: int) -> None:
    for start in range(0, n, 50):
        texts = [FILLER.format(i=i) for i in range(start, start + 50)]
        mem.add([{"role": "user", "content": t} for t in texts], user_id=user)


def _pragma(path: Path, name: str) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute(f"PRAGMA {name}").fetchone()[0])
    finally:
        conn.close()


def test_a_new_store_compacts_in_steps_and_shrinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.db"
    monkeypatch.setattr(sqlite_storage, "COMPACT_STEP", 64)
    ticks: list[int] = []
    with Memory(path, embedder="hashing") as mem:
        assert mem.storage._scalar("PRAGMA auto_vacuum") == 2  # INCREMENTAL
        _fill(mem, "gone", 400)
        _fill(mem, "kept", 20)
        mem.delete_all(user_id="gone")
        before = mem.storage.size()
        assert mem.storage._scalar("PRAGMA freelist_count") > 3 * 64
        mem.storage.compact(lambda: ticks.append(1))
        after = mem.storage.size()
        assert mem.storage._scalar("PRAGMA freelist_count") == 0
        wal = Path(f"{path}-wal")
        # checkpointed, the file shrank; the WAL holds the restart's one page
        assert wal.stat().st_size <= 32 + 24 + mem.storage._scalar("PRAGMA page_size")
        assert len(mem.search("archive note 7", user_id="kept", mode="lexical")) > 0
    assert len(ticks) >= 3  # more than one step: each a transaction of its own
    assert after < before / 3


def test_an_older_store_is_rewritten_once_and_then_compacts_in_steps(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Memory(path, embedder="hashing") as mem:
        _fill(mem, "u", 50)
    # a store made before incremental compaction: auto_vacuum NONE
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA auto_vacuum=NONE").fetchall()
    conn.execute("VACUUM").fetchall()
    conn.close()
    assert _pragma(path, "auto_vacuum") == 0
    with Memory(path, embedder="hashing") as mem:
        assert mem.storage._scalar("PRAGMA auto_vacuum") == 0  # opening changes nothing
        mem.compact()
        assert mem.storage._scalar("PRAGMA auto_vacuum") == 2
        assert len(mem.search("archive note 3", user_id="u", mode="lexical")) > 0


def _writer(path: str, ready: Any, go: Any, done: Any) -> None:
    with Memory(path, embedder="hashing") as mem:
        ready.set()
        go.wait(60)
        mem.add("written while the store was being compacted", user_id="other")
        done.set()


def test_another_process_writes_between_two_compaction_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first step's tick waits until another process has committed a
    # write. A compaction that held the write lock throughout (VACUUM, whose
    # tick ran inside it) would keep that write out until the wait gave up.
    path = tmp_path / "store.db"
    monkeypatch.setattr(sqlite_storage, "COMPACT_STEP", 16)
    ctx = mp.get_context("spawn")
    ready, go, done = ctx.Event(), ctx.Event(), ctx.Event()
    with Memory(path, embedder="hashing") as mem:
        _fill(mem, "gone", 200)
        mem.delete_all(user_id="gone")
        child = ctx.Process(target=_writer, args=(str(path), ready, go, done))
        child.start()
        try:
            assert ready.wait(60)
            written_mid_compaction: list[bool] = []

            def tick() -> None:
                if not written_mid_compaction:
                    go.set()
                    written_mid_compaction.append(done.wait(30))

            worker = threading.Thread(target=mem.storage.compact, args=(tick,))
            worker.start()
            worker.join(120)
            assert not worker.is_alive()
        finally:
            go.set()
            child.join(60)
        assert written_mid_compaction == [True]
        assert child.exitcode == 0
        hits = mem.search("written while compacted", user_id="other", mode="lexical")
        assert hits and hits[0].text.startswith("written while")


def test_a_writer_thread_gets_in_between_compaction_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python's lock is not fair: a compaction that took it straight back
    # after each step kept a writer thread of the same process waiting for
    # many steps, up to 5.5 s at 446k memories (bench/compaction.py).
    monkeypatch.setattr(sqlite_storage, "COMPACT_STEP", 32)
    ticks = 0
    spans: list[int] = []  # steps each add waited through
    stop = threading.Event()
    with Memory(tmp_path / "store.db", embedder="hashing") as mem:
        _fill(mem, "gone", 600)
        mem.delete_all(user_id="gone")
        assert mem.storage._scalar("PRAGMA freelist_count") > 20 * 32

        def writer() -> None:
            while not stop.is_set():
                begun = ticks
                mem.add("a note written while the store is compacted", user_id="other")
                spans.append(ticks - begun)

        thread = threading.Thread(target=writer)

        def tick() -> None:
            nonlocal ticks
            ticks += 1
            if ticks == 1:
                thread.start()

        mem.storage.compact(tick)
        stop.set()
        thread.join(60)
    # An add's own work off the lock lets a step or two by on a busy
    # machine; the unfair lock made one add wait 29 of 30 steps.
    assert ticks > 20 and len(spans) > 5
    assert max(spans) <= 6, spans

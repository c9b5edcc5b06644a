"""One store shared by threads and by processes (DESIGN.md, invariant 7):
no dirty read, no lost acknowledged write, no raw locking error.

Real threads and real processes, sized to run in CI in well under a minute.
A writer keeps a transaction open with rows it then rolls back, while
readers look for those rows; every acknowledged write must be there at the
end; every exception must be an ``UnrecallError``.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
from helpers import check_lists, verified_clean

from unrecall import Memory, UnrecallError
from unrecall.storage import sqlite_lists

THREADS = 8
PROCESSES = 8
ROUNDS = 25


class Boom(RuntimeError):
    """Makes the phantom writer roll back."""


def _phantom_writer(mem: Memory, stop: threading.Event, errors: list[str]) -> None:
    """Adds rows that never commit: each transaction holds them a moment,
    then rolls back."""
    n = 0
    while not stop.is_set():
        n += 1
        try:
            with mem.storage.transaction():
                mem.add(f"phantom zqphantom{n} never committed", user_id="shared")
                time.sleep(0.002)
                raise Boom
        except Boom:
            pass
        except Exception:
            errors.append(traceback.format_exc())


def _worker(
    mem: Memory, w: int, acked: list[tuple[str, str]], seen: list[str], errors: list[str]
) -> None:
    for i in range(ROUNDS):
        try:
            text = f"worker {w} fact {i} zqw{w}r{i}"
            report = mem.add(text, user_id="shared")
            acked.extend((mid, text) for mid in report.ids)
            # reads of every kind, looking for uncommitted rows
            seen.extend(
                h.text for h in mem.search("phantom never committed", user_id="shared", k=5)
            )
            seen.extend(
                h.text for h in mem.search("phantom", user_id="shared", k=5, mode="lexical")
            )
            if i % 5 == 0:
                seen.extend(m.text for m in mem.get_all(user_id="shared"))
                seen.extend(t["text"] for t in mem.export(user_id="shared")["turns"])
            if i % 7 == 3:  # a forget in the mix, of this worker's own fact
                gone = mem.add(f"worker {w} temp zqtemp{w}x{i}", user_id="shared").ids[0]
                mem.purge(gone, user_id="shared")
        except UnrecallError:
            pass  # a clear refusal is allowed; a raw error is not
        except Exception:
            errors.append(traceback.format_exc())


def test_threads_sharing_one_memory(tmp_path: Path) -> None:
    acked: list[tuple[str, str]] = []
    seen: list[str] = []
    errors: list[str] = []
    with Memory(tmp_path / "threads.db", embedder="hashing") as mem:
        stop = threading.Event()
        phantom = threading.Thread(target=_phantom_writer, args=(mem, stop, errors))
        phantom.start()
        workers = [
            threading.Thread(target=_worker, args=(mem, w, acked, seen, errors))
            for w in range(THREADS)
        ]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        stop.set()
        phantom.join()
        assert errors == []
        assert not [s for s in seen if "zqphantom" in s], "a dirty read"
        held = {m.id: m.text for m in mem.get_all(user_id="shared")}
        lost = [(mid, text) for mid, text in acked if held.get(mid) != text]
        assert lost == [] and len(acked) == THREADS * ROUNDS
        assert mem.verify_audit().ok
        assert mem.storage._scalar("PRAGMA integrity_check") == "ok"
        assert not mem.storage._db.in_transaction


def _process(path: str, w: int, start: Any, out: Any) -> None:
    """One writer process: opens the store (maybe creating it at the same
    instant as the others), adds, reads and purges, reports what it was
    acknowledged and every raw error."""
    acked: list[tuple[str, str]] = []
    errors: list[str] = []
    start.wait()
    try:
        with Memory(path, embedder="hashing") as mem:
            for i in range(ROUNDS):
                try:
                    text = f"process {w} fact {i} zqp{w}r{i}"
                    acked.extend((m, text) for m in mem.add(text, user_id="shared").ids)
                    mem.search(f"process {w} fact", user_id="shared", k=3)
                    if i % 6 == 2:
                        gone = mem.add(f"process {w} temp zqgone{w}x{i}", user_id="shared").ids[0]
                        mem.purge(gone, user_id="shared")
                except UnrecallError as exc:
                    errors.append(f"refused: {type(exc).__name__}: {exc}")
    except Exception:
        errors.append(traceback.format_exc())
    out.put((w, acked, errors))


def test_processes_writing_one_store(store_location: str) -> None:
    # The store does not exist yet: all eight create it at once.
    path = store_location
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_process, args=(path, w, start, out)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    time.sleep(1.0)  # let every child import and reach the start line
    start.set()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    errors = [e for _, _, errs in results for e in errs]
    assert errors == []  # not even a clear refusal: every writer got in
    acked = [a for _, acks, _ in results for a in acks]
    assert len(acked) == PROCESSES * ROUNDS
    with Memory(path, embedder="hashing") as mem:
        held = {m.id: m.text for m in mem.get_all(user_id="shared")}
        assert [a for a in acked if held.get(a[0]) != a[1]] == []
        assert len(held) == len(acked)  # and the purged temporaries are gone
        assert mem.verify_audit().ok
        assert verified_clean(mem, [f"zqgone{w}x2" for w in range(PROCESSES)])


def test_bm25_survives_statistics_behind_its_document_frequencies(tmp_path: Path) -> None:
    # Read in two snapshots, another process's deletes could pair a term's
    # document frequency with a smaller document count (a raw math domain
    # error in the 8-process test). The reads now share one snapshot, and the
    # weight is computed from frequencies clamped to the count.
    with Memory(tmp_path / "stats.db", embedder="hashing") as mem:
        for i in range(4):
            mem.add(f"the harbour crane number {i}", user_id="u")
        with mem.storage.transaction():
            mem.storage._db.execute("UPDATE term_stats SET docs = 1")
        hits = mem.search("harbour crane", user_id="u", k=4, mode="lexical")
        assert len(hits) == 4


def test_a_search_does_not_wait_for_another_threads_transaction(tmp_path: Path) -> None:
    # A server runs searches beside writes. A search that queued behind
    # another thread's open transaction (or an erasure checkpoint) waited for
    # all of it; it now reads on a pooled read connection, and sees what was
    # committed, not the open transaction's rows.
    with Memory(tmp_path / "busy.db", embedder="hashing") as mem:
        mem.add("the harbour crane is painted red", user_id="u")
        inside, release = threading.Event(), threading.Event()

        def hold() -> None:
            with mem.storage.transaction():
                mem.add("the harbour crane zquncommitted", user_id="u")
                inside.set()
                release.wait(60)

        holder = threading.Thread(target=hold)
        holder.start()
        assert inside.wait(30)
        found: list[list[str]] = []
        searcher = threading.Thread(
            target=lambda: found.append(
                [h.text for h in mem.search("harbour crane", user_id="u", k=5, threshold=None)]
            )
        )
        searcher.start()
        searcher.join(30)
        done = not searcher.is_alive()
        release.set()
        holder.join()
        searcher.join()
        assert done, "the search waited for the other thread's transaction"
        assert found == [["the harbour crane is painted red"]]
        assert mem.storage._readers  # it ran on a read connection


def test_readers_and_writers_keep_the_vector_lists_true(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Threads search on read connections while other threads, and a second
    # connection standing in for another process, add and purge. No search
    # ever returned a memory purged before it began, and at the end the
    # lists hold exactly the stored vectors (lists split often here).
    monkeypatch.setattr(sqlite_lists, "SPLIT_AT", 8)
    monkeypatch.setattr(sqlite_lists, "CHUNK", 4)
    path = tmp_path / "caches.db"
    errors: list[str] = []
    purged_at: dict[str, float] = {}
    returned: list[tuple[float, list[str]]] = []
    stop = threading.Event()
    with Memory(path, embedder="hashing") as mem, Memory(path, embedder="hashing") as other:
        for i in range(30):
            mem.add(f"seed fact {i} about the kettle {i}", user_id=f"u{i % 2}")

        def writer(m: Memory, w: int) -> None:
            for i in range(ROUNDS):
                try:
                    user = f"u{i % 2}"
                    ids = m.add(f"writer {w} kettle {i} zqk{w}x{i}", user_id=user).ids
                    if i % 3 == 1:
                        m.purge(ids[0], user_id=user)
                        purged_at[ids[0]] = time.monotonic()
                except Exception:
                    errors.append(traceback.format_exc())

        def searcher() -> None:
            while not stop.is_set():
                try:
                    for user in ("u0", "u1"):
                        began = time.monotonic()
                        hits = mem.search("kettle", user_id=user, k=10, threshold=None)
                        returned.append((began, [h.id for h in hits]))
                except Exception:
                    errors.append(traceback.format_exc())

        writers = [threading.Thread(target=writer, args=(mem, w)) for w in range(3)]
        writers.append(threading.Thread(target=writer, args=(other, 3)))
        searchers = [threading.Thread(target=searcher) for _ in range(3)]
        for t in writers + searchers:
            t.start()
        for t in writers:
            t.join()
        stop.set()
        for t in searchers:
            t.join()
        assert errors == []
        stale = [mid for began, ids in returned for mid in ids if purged_at.get(mid, began) < began]
        assert stale == []
        check_lists(mem.storage, split_at=8, chunk=4)
        assert mem.storage._readers  # the read connections were used


def _add_and_close(path: str) -> None:
    with Memory(path, embedder="hashing") as mem:
        mem.add("another process was here zqother", user_id="u")


def _count(path: str, out: Any) -> None:
    with Memory(path, embedder="hashing") as mem:
        out.put(sorted(m.text for m in mem.get_all(user_id="u")))


def test_a_raw_scan_keeps_this_processs_locks_on_the_store(tmp_path: Path) -> None:
    # Closing any descriptor of a file drops every POSIX lock the process
    # holds on it, SQLite's included (sqlite.org/howtocorrupt.html, 2.2).
    # verify_erased read the store's files in-process: another process then
    # took the store for unused when it closed, checkpointed it and deleted
    # the WAL under this one, whose later commits no other process saw. The
    # scan now reads in a child process.
    path = str(tmp_path / "locks.db")
    ctx = multiprocessing.get_context("spawn")
    with Memory(path, embedder="hashing") as mem:
        mem.add("the first fact zqfirst", user_id="u")
        assert mem.verify_erased(["zqnever"]).clean
        other = ctx.Process(target=_add_and_close, args=(path,))
        other.start()
        other.join(60)
        assert other.exitcode == 0
        mem.add("the fact after the scan zqafter", user_id="u")
        out = ctx.Queue()
        reader = ctx.Process(target=_count, args=(path, out))
        reader.start()
        seen = out.get(timeout=60)
        reader.join(60)
    assert seen == [
        "another process was here zqother",
        "the fact after the scan zqafter",
        "the first fact zqfirst",
    ]

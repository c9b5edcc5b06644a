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

from unrecall import Memory, UnrecallError

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


def test_processes_writing_one_store(tmp_path: Path) -> None:
    # The store does not exist yet: all eight create it at once.
    path = str(tmp_path / "procs.db")
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
        assert mem.verify_erased([f"zqgone{w}x2" for w in range(PROCESSES)]).clean


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

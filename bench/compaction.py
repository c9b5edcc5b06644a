"""How long a compaction keeps writers out, on a copy of a built store.

Usage: ``python bench/compaction.py --store STORE --forget 5000 --out OUT.json``

On a copy of ``STORE`` (a ``perf.py`` build, say), this:

1. compacts once if the store predates incremental compaction: that is
   a whole-file VACUUM, the way every compaction ran before, holding the
   write lock throughout;
2. deletes ``--forget`` random memories of the largest tenant, or with
   ``--drop-largest`` that whole tenant (``delete_all``), leaving their
   pages free (a delete's own rewrites reuse most of what single deletes
   free, so it is tenants leaving that give a compaction its work);
3. compacts again, in steps, while a writer thread adds one memory after
   another, and reports each step's duration (the write lock is held for
   one step at a time, and as long again is left to others), the writer's
   add latencies before and meanwhile, and the file's size before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import perf

from unrecall import Memory
from unrecall.storage import sqlite as sqlite_storage

ALONE_S = 5.0  # seconds of the writer's adds measured before the compaction


def _ms(seconds: list[float]) -> dict[str, float]:
    if not seconds:
        return {"n": 0}
    ordered = sorted(seconds)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered) * 1000, 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
        "max": round(ordered[-1] * 1000, 2),
    }


def largest_tenant(mem: Memory) -> tuple[str, list[str]]:
    """The largest tenant's user id and its memories' public ids."""
    rows = mem.storage._rows(
        "SELECT t.key, count(*) AS n FROM memories m JOIN tenants t ON t.id = m.tenant_id"
        " GROUP BY t.id ORDER BY n DESC LIMIT 1"
    )
    key = str(rows[0][0])
    uids = [
        str(r[0])
        for r in mem.storage._rows(
            "SELECT m.uid FROM memories m JOIN tenants t ON t.id = m.tenant_id WHERE t.key = ?",
            (key,),
        )
    ]
    return key.removeprefix("user:"), uids


class _Enough(Exception):
    """Raised from the progress tick to end a compaction after ``--max-seconds``."""


def compact_with_writer(mem: Memory, max_seconds: float) -> dict[str, Any]:
    """Compact in steps while a thread adds memories, for at most
    ``max_seconds`` (every step before is committed); the steps' and the
    adds' durations."""
    steps: list[float] = []
    adds: list[float] = []
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            start = time.perf_counter()
            mem.add(f"a note written during compaction, number {i}", user_id="writer")
            adds.append(time.perf_counter() - start)
            i += 1

    last = time.perf_counter()

    def tick() -> None:
        nonlocal last
        now = time.perf_counter()
        steps.append(now - last)
        last = now
        if now - start > max_seconds:
            raise _Enough

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(ALONE_S)  # the writer's adds with nothing else going on
    alone, adds[:] = list(adds), []
    start = last = time.perf_counter()
    finished = True
    try:
        mem.storage.compact(tick)
    except _Enough:
        finished = False
    finally:
        stop.set()
        thread.join()
    return {
        "finished": finished,
        "seconds": round(time.perf_counter() - start, 2),
        "steps": len(steps),
        "step_and_pause_ms": _ms(steps),
        "adds_alone_ms": _ms(alone),
        "adds_during_ms": _ms(adds),
    }


def main() -> None:
    """Run the three stages on a copy of ``--store`` and write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--work", type=Path, default=None, help="where the copy goes")
    p.add_argument("--forget", type=int, default=5_000)
    p.add_argument("--drop-largest", action="store_true", help="delete the largest tenant")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--max-seconds", type=float, default=float("inf"), help="stop the compaction after this"
    )
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    work = args.work or args.store.with_name(f"compaction-{os.getpid()}.db")
    report: dict[str, Any] = {
        "command": "python bench/compaction.py "
        + f"--store STORE --forget {args.forget} --seed {args.seed}"
        + (" --drop-largest" if args.drop_largest else "")
        + (f" --max-seconds {args.max_seconds:g}" if args.max_seconds < float("inf") else ""),
        "step_pages": sqlite_storage.COMPACT_STEP,
    }
    perf.copy_store(args.store, work)
    try:
        with Memory(work) as mem:
            report["bytes_at_start"] = mem.storage.size()
            if mem.storage._scalar("PRAGMA auto_vacuum") != 2:
                start = time.perf_counter()
                mem.storage.compact()
                report["whole_file_rewrite_s"] = round(time.perf_counter() - start, 2)
                report["bytes_after_rewrite"] = mem.storage.size()
            user, uids = largest_tenant(mem)
            gone = random.Random(args.seed).sample(uids, min(args.forget, len(uids)))
            start = time.perf_counter()
            for uid in gone:
                mem.delete(uid, user_id=user)
            report["deleted"] = len(gone)
            report["delete_s"] = round(time.perf_counter() - start, 2)
            if args.drop_largest:
                start = time.perf_counter()
                mem.delete_all(user_id=user)
                report["dropped_memories"] = len(uids) - len(gone)
                report["delete_all_s"] = round(time.perf_counter() - start, 2)
            report["free_pages"] = mem.storage._scalar("PRAGMA freelist_count")
            report["bytes_before_compaction"] = mem.storage.size()
            report["compaction"] = compact_with_writer(mem, args.max_seconds)
            report["bytes_after_compaction"] = mem.storage.size()
    finally:
        perf.remove_store(work)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

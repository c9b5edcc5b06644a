"""The SQLite store's vector lists on a kept store (issue #17): recall@10
against an exact scan and latency, for each number of lists probed, and
the cost of reading rows, which sets where a tenant stops being read whole.

For the store's largest tenant, 200 perf queries embedded by MiniLM are
searched through ``storage.vector`` (80 rows, what ``search(k=5)`` asks)
with ``PROBE`` set to each value of ``--probes``. Recall@10 counts a hit
when it reaches the exact 10th's similarity (templated corpora tie); the
exact top 10 comes from one streamed pass over the stored float vectors::

    python bench/vector_lists.py --store STORE.db --out FILE.json

With ``--relist BATCH`` the store's lists are first made again as ``add``
makes them: every stored vector in id order, ``BATCH`` at a time, each
batch its own transaction (``SQLiteStorage.relist``, as an upgrade lists
them, ``RELIST_BATCH`` at a time). At the batch of ``add`` (``--batch`` 32
in ``bench/perf.py``) these are the lists of a store built by ``add``,
without the hours of embedding and indexing text. It writes the store in
place: give it a copy. ``--relist-batches N`` stops after N batches and
measures nothing else: how long each step of deleting the old lists (done
whole first) and each batch hold the write lock
at that size, without the half hour a full relisting takes at 1M.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import perf

from unrecall import Memory
from unrecall.recall.embedder import make_embedder
from unrecall.storage import vector_lists
from unrecall.storage.schema import RELIST


def main() -> None:
    """Measure and write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--probes", default="8,16,32,64,128,256")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--relist", type=int, default=0, metavar="BATCH")
    p.add_argument("--relist-batches", type=int, default=0, metavar="N")
    args = p.parse_args()
    if args.relist_batches and not args.relist:
        p.error("--relist-batches needs --relist")
    relisted = relist(args.store, args.relist, args.relist_batches) if args.relist else None
    report: dict[str, Any] = {
        "command": "python bench/vector_lists.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": perf.machine(),
        "relisted": relisted,
    }
    if args.relist_batches:
        write(args.out, report)
        return
    queries = np.asarray(
        make_embedder("minilm").embed(perf.make_queries(200, 20_240_601 + 10)), dtype=np.float32
    )
    with Memory(args.store, embedder="minilm") as mem:
        # a list entry per vector, and one more per vector spilled to a second list
        (tenant, entries) = mem.storage._db.execute(
            "SELECT tenant_id, sum(size) FROM vector_lists GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
        ).fetchone()
        size = mem.storage._scalar(
            "SELECT count(*) FROM memory_vectors WHERE tenant_id = ?", (tenant,)
        )
        lists = mem.storage._lists.centroids(mem.storage._db, tenant)
        size_of = dict(zip(lists.lists.tolist(), lists.sizes.tolist(), strict=True))
        started = time.perf_counter()
        floors = perf.exact_floors(mem, tenant, queries)
        exact_s = time.perf_counter() - started
        mem.storage.vector(tenant, queries[0], perf.POOL)  # warm the centroid cache
        by_probe: dict[str, Any] = {}
        saved = vector_lists.PROBE, vector_lists.EXACT_UP_TO
        vector_lists.EXACT_UP_TO = 0
        try:
            for probe in [int(x) for x in args.probes.split(",")]:
                vector_lists.PROBE = probe
                # rows each query reads
                rows = [sum(size_of[x] for x in lists.probe(q).tolist()) for q in queries]
                result = perf.vector_recall(mem, tenant, queries, floors)
                result["rows_read_p50"] = int(np.median(rows))
                by_probe[str(probe)] = result
                print(probe, json.dumps(result), flush=True)
        finally:
            vector_lists.PROBE, vector_lists.EXACT_UP_TO = saved
    report |= {
        "tenant_vectors": int(size),
        "tenant_list_entries": int(entries),
        "lists": len(lists.lists),
        "exact_pass_s": round(exact_s, 1),
        "by_probe": by_probe,
    }
    write(args.out, report)


def write(out: Path, report: dict[str, Any]) -> None:
    """The report as JSON at ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")


def relist(path: Path, batch: int, batches: int = 0) -> dict[str, Any]:
    """Make the store's lists again as ``add`` would, ``batch`` vectors a
    transaction, the way an upgrade does (see the module's docstring), or
    only the first ``batches`` of them; their count and the times."""
    started = time.perf_counter()
    with Memory(path, embedder="minilm") as mem:
        st = mem.storage
        at = time.perf_counter()
        with st.transaction():  # what the upgrade's migration step does
            for stmt in RELIST:
                st._write(stmt)
        renamed = time.perf_counter() - at
        # the old lists' rows deleted, a step a transaction (before any listing)
        dropping = []
        while st._lists.old_tables(st._db):
            at = time.perf_counter()
            st._relist_batch(batch)
            dropping.append(time.perf_counter() - at)
        held = []  # each batch's transaction: how long it holds the write lock
        while True:
            at = time.perf_counter()
            more = st._relist_batch(batch)
            held.append(time.perf_counter() - at)
            if len(held) % 100 == 0:
                print(f"relisted {len(held) * batch:,} vectors", flush=True)
            if not more or len(held) == batches:
                break
        lists = st._scalar("SELECT count(*) FROM vector_lists")
        done = st._scalar("SELECT count(*) FROM memory_vectors")
    seconds = time.perf_counter() - started
    ms = np.array(held) * 1000
    return {
        "batch": batch,
        "vectors": done,
        "listed": min(done, len(held) * batch),
        "lists": lists,
        "seconds": round(seconds, 1),
        "set_aside_ms": round(renamed * 1000, 1),
        "drop_steps": len(dropping),
        "drop_lock_held_ms": _spread(np.array(dropping) * 1000),
        "transactions": len(held),
        "lock_held_ms": _spread(ms),
    }


def _spread(ms: np.ndarray) -> dict[str, float]:
    """p50, p99 and max of lock holds in ms."""
    return {
        "p50": round(float(np.percentile(ms, 50)), 1),
        "p99": round(float(np.percentile(ms, 99)), 1),
        "max": round(float(ms.max()), 1),
    }


if __name__ == "__main__":
    main()

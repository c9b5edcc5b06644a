"""CPU and wall time of one add, search and purge, in-process, on the store
``bench/serve_load.py`` seeds (10k facts a tenant), with varied queries, and
what BM25 saves by leaving out words at the idf floor.

    python bench/op_costs.py [--memories 10000] [--embedder minilm]

The BM25 part runs the store's query both ways on 50 queries, straight in
SQL, and says how often the top 80 come back in the same order.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from serve_load import fact, query, seed

from unrecall import Memory
from unrecall.storage import postings
from unrecall.storage.sqlite import _ids

POOL = 80  # what Memory.search asks BM25 for at k=5


def timed(name: str, n: int, op: Callable[[int], Any]) -> list[Any]:
    """Run ``op(i)`` n times; print the mean wall and CPU milliseconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = [op(i) for i in range(n)]
    wall_ms = (time.perf_counter() - wall) / n * 1000
    cpu_ms = (time.process_time() - cpu) / n * 1000
    print(f"{name}: wall {wall_ms:.2f} ms, cpu {cpu_ms:.2f} ms (threads add up)")
    return out


def bm25_both_ways(mem: Memory, queries: Sequence[str]) -> None:
    """Time BM25 with and without the floor words, and compare the rankings."""
    db, tenant = mem.storage._db, mem.storage.tenant("user:tenant-0", False)
    n, total = db.execute(
        "SELECT docs, length FROM term_stats WHERE tenant_id = ? AND kind = 'm'", (tenant,)
    ).fetchone()

    def bm25(weights: list[tuple[int, float]]) -> list[int]:
        rows = db.execute(
            "SELECT term, docs, tfs, lens FROM memory_postings"
            " WHERE term IN (SELECT value FROM json_each(?))",
            (_ids([t for t, _ in weights]),),
        ).fetchall()
        return [d for d, _ in postings.top_k(rows, weights, total / n, POOL)]

    every, informative = [], []
    for q in queries:
        found = db.execute(
            "SELECT id, mdf FROM lexicon WHERE tenant_id = ? AND digest IN"
            " (SELECT unhex(value) FROM json_each(?)) AND mdf > 0",
            (tenant, _ids(mem.recall.query_terms(q))),
        ).fetchall()
        every.append(postings.weights(found, n, drop_floor=False))
        informative.append(postings.weights(found, n, drop_floor=True))
    ranked = {}
    for name, weights in (("every word", every), ("floor words left out", informative)):
        began = time.perf_counter()
        ranked[name] = [bm25(w) for w in weights]
        print(f"BM25, {name}: {(time.perf_counter() - began) / len(weights) * 1000:.2f} ms")
    same = sum(a == b for a, b in zip(*ranked.values(), strict=True))
    print(f"same top {POOL} in the same order: {same} of {len(queries)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Seed a store, then time each operation and the BM25 comparison."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    p.add_argument("-n", type=int, default=150, help="operations of each kind")
    args = p.parse_args(argv)
    rng = random.Random(3)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "costs.db"
        seed(path, 2, args.memories, args.embedder)
        with Memory(path, embedder=args.embedder) as mem:
            mem.search("warm up", user_id="tenant-0")  # load the tenant's vectors
            user = {"user_id": "tenant-0"}
            added = timed("add", args.n, lambda i: mem.add(fact(rng, f"o{i}"), **user).ids)
            timed("search", args.n, lambda i: mem.search(query(rng), k=5, **user))
            timed("purge", args.n, lambda i: mem.purge(added[i][0], **user))
            bm25_both_ways(mem, [query(rng) for _ in range(50)])
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The vector part on a PostgreSQL store that ``bench/perf.py --pg-dir``
built and kept: pgvector's HNSW index against an exact scan, per query.

For each of ``--queries`` perf queries, on the tenant ``perf.py`` searches
for it, three timings (each statement run once to warm the pages, then
timed) and what the index found:

- ``storage.vector``, the backend as shipped (exact or HNSW by tenant size);
- the HNSW statement (relaxed iterative scan, ``hnsw.ef_search`` as given),
  with sorting disabled so that the planner takes the index;
- the exact statement (inner product, which the cosine index cannot serve);
- recall@10 of the HNSW top 10 against the exact top 10, by similarity (a
  hit counts when it reaches the exact 10th's, since templated corpora tie).

Then the exact scan's cost by size: the top ``--limit`` of ``N`` consecutive rows of the
largest tenant, for the size up to which an exact scan is cheaper than the
index (``EXACT_UP_TO`` in ``storage/postgres.py``)::

    python bench/pg_vectors.py --pg-dir DIR [--tenants 1000] --out FILE.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HNSW = (
    "SELECT id, -(embedding <#> %s) FROM memory_vectors WHERE tenant_id = %s"
    " ORDER BY embedding <=> %s LIMIT %s"
)
EXACT = (
    "SELECT id, -(embedding <#> %s) AS s FROM memory_vectors WHERE tenant_id = %s"
    " ORDER BY s DESC, id LIMIT %s"
)
SLICE = (
    "SELECT id, -(embedding <#> %s) AS s FROM memory_vectors WHERE tenant_id = %s"
    " AND id >= %s AND id < %s ORDER BY s DESC, id LIMIT %s"
)


def twice(fn: Any) -> tuple[float, Any]:
    """Run ``fn`` to warm its pages, then again timed: (ms, result)."""
    fn()
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def p50(values: list[float]) -> float:
    """The median, rounded for the report."""
    return round(statistics.median(values), 2)


def main() -> None:
    """Measure and write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--pg-dir", type=Path, required=True, help="perf.py --pg-dir of the build")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tenants", type=int, default=1, help="perf.py --tenants of the build")
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--ef-search", type=int, default=40)
    p.add_argument("--limit", type=int, default=80, help="rows asked: search(k=5) asks 80")
    p.add_argument("--sizes", type=int, nargs="*", default=[1_000, 5_000, 10_000, 20_000, 40_000])
    p.add_argument("--seed", type=int, default=20_240_601)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    import perf
    import psycopg
    from pgvector.psycopg import register_vector

    from unrecall import Memory
    from unrecall.storage import postgres

    perf.TENANTS = args.tenants
    server = perf.Postgres(args.pg_dir, keep=True)
    try:
        name = sorted(args.pg_dir.glob("build_*.json"))[0].stem
        url = server.url(name)
        queries = perf.make_queries(args.queries, args.seed + 10)
        rows: list[dict[str, Any]] = []
        with Memory(url) as mem, psycopg.connect(url, autocommit=True) as conn:
            register_vector(conn)
            conn.execute("SET hnsw.iterative_scan = relaxed_order")
            conn.execute(f"SET hnsw.ef_search = {int(args.ef_search)}")
            for j, q in enumerate(queries):
                tid = mem.storage.tenant(f"user:{perf.big_user(j)}", False)
                vec = np.asarray(mem.embedder.embed([q])[0], dtype=np.float32)
                shipped, _ = twice(lambda v=vec, t=tid: mem.storage.vector(t, v, args.limit))
                # with sorting off the planner takes the index whatever its cost guess
                conn.execute("SET enable_sort = off")
                hnsw_ms, ann = twice(
                    lambda v=vec, t=tid: conn.execute(HNSW, (v, t, v, args.limit)).fetchall()
                )
                conn.execute("RESET enable_sort")
                exact_ms, exact = twice(
                    lambda v=vec, t=tid: conn.execute(EXACT, (v, t, args.limit)).fetchall()
                )
                floor = exact[min(9, len(exact) - 1)][1] - 1e-6 if exact else 0.0
                found = sorted((s for _, s in ann), reverse=True)[:10]
                want = min(10, len(exact))
                rows.append(
                    {
                        "tenant_memories": conn.execute(
                            "SELECT count(*) FROM memory_vectors WHERE tenant_id = %s", (tid,)
                        ).fetchone()[0],
                        "shipped_ms": shipped,
                        "hnsw_ms": hnsw_ms,
                        "exact_ms": exact_ms,
                        "recall_at_10": sum(s >= floor for s in found) / want if want else 1.0,
                    }
                )
            big, lo, hi = conn.execute(
                "SELECT tenant_id, min(id), max(id) FROM memory_vectors GROUP BY 1"
                " ORDER BY count(*) DESC LIMIT 1"
            ).fetchone()
            vecs = [np.asarray(v, dtype=np.float32) for v in mem.embedder.embed(queries[:30])]
            by_size = {}
            for n in args.sizes:
                times = []
                for i, v in enumerate(vecs):
                    a = lo + (i * 245_789) % max(1, hi - lo - n)
                    times.append(
                        twice(
                            lambda v=v, a=a, n=n: conn.execute(
                                SLICE, (v, big, a, a + n, args.limit)
                            ).fetchall()
                        )[0]
                    )
                by_size[str(n)] = p50(times)
        recall = [r["recall_at_10"] for r in rows]
        report = {
            "command": "python bench/pg_vectors.py " + " ".join(sys.argv[1:]),
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "revision": perf.source_revision(),
            "exact_up_to": getattr(postgres, "EXACT_UP_TO", None),  # None: before it existed
            "ef_search": args.ef_search,
            "limit": args.limit,
            "queries": len(rows),
            "tenant_memories_p50": p50([r["tenant_memories"] for r in rows]),
            "p50_ms": {k: p50([r[k] for r in rows]) for k in ("shipped_ms", "hnsw_ms", "exact_ms")},
            "hnsw_recall_at_10": {
                "mean": round(sum(recall) / len(recall), 3),
                "min": min(recall),
                "lists_all_found": sum(r == 1.0 for r in recall),
            },
            "exact_ms_by_rows": by_size,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps({k: v for k, v in report.items() if k != "command"}, indent=1))
    finally:
        server.stop()


if __name__ == "__main__":
    main()

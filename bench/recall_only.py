"""Recall latency alone, on a PostgreSQL store that ``bench/perf.py --pg-dir``
built and kept, with whichever unrecall is first on the path.

``perf.py`` measures a build end to end (a copy of the store, recall,
purges, single adds). On a store of a million memories in one tenant each
purge rewrites that tenant's part (tens of minutes), and an earlier
library cannot skip them. This script measures what ``perf.py`` measures of
recall (hybrid and lexical, their parts, the small tenant, the first query)
on the kept store itself, read only, so the same store can be measured by
the code before a change (its first look) and after::

    PYTHONPATH=/path/to/old/checkout/src python bench/recall_only.py \\
        --bench /path/to/old/checkout/bench --pg-dir /tmp/pg1m --out first-look.json

``--bench`` is the folder whose ``perf.py`` (corpus, queries, timing) is used:
the old checkout's for the old library.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path


def main() -> None:
    """Measure and write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--bench", type=Path, default=Path(__file__).parent)
    p.add_argument("--pg-dir", type=Path, required=True, help="perf.py --pg-dir of the build")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tenants", type=int, default=1, help="perf.py --tenants of the build")
    p.add_argument("--seed", type=int, default=20_240_601)
    args = p.parse_args()
    sys.path.insert(0, str(args.bench))
    import perf

    import unrecall
    from unrecall import Memory

    perf.TENANTS = args.tenants
    server = perf.Postgres(args.pg_dir, keep=True)
    try:
        metas = sorted(args.pg_dir.glob("build_*.json"))
        if len(metas) != 1:
            raise SystemExit(f"expected one kept build in {args.pg_dir}, found {len(metas)}")
        name, info = metas[0].stem, json.loads(metas[0].read_text())
        queries = perf.make_queries(200, args.seed + 10)
        start = time.perf_counter()
        with Memory(server.url(name)) as mem:
            opened = time.perf_counter() - start
            recall = perf.measure_recall(mem, queries, queries[: max(20, len(queries) // 4)], 30)
        report = {
            "library": str(Path(unrecall.__file__).parent),
            "build": {k: v for k, v in info.items() if k not in ("big_uids", "big_owners")},
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "open_s": round(opened, 2),
            "memories": info["big"] + info["small"],
            "store_bytes": perf.store_bytes(server.url(name)),
            "recall": recall,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        for mode in ("hybrid", "lexical", "hybrid_k1"):
            d = recall[mode]
            print(f"{mode}: p50 {d['p50']:.2f} p95 {d['p95']:.2f} ms")
        print({k: round(v["p50"], 2) for k, v in recall["parts"].items()})
    finally:
        server.stop()


if __name__ == "__main__":
    main()

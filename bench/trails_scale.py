"""How long a trail-aware forget takes as a tenant's store grows.

``Memory.forget`` reads the tenant's memories into an entity graph and
compares each with the request (stored vectors, no re-embedding), so its
cost grows with the store. This script ingests the perf corpus (as
``bench/perf.py`` makes it) plus one small trail, then times ``forget``
plans and one full forget at each size.

    python bench/trails_scale.py --sizes 1000 10000 [--embedder minilm]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from unrecall import Memory

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf import make_corpus  # the sibling script's statements

TRAIL = [
    "Ravi Shah, our CFO, asked me to set up the Q3 budget review.",
    "Ravi signed off on hiring Arden Advisory himself.",
    "Arden Advisory's filing lists Nina Shah as sole owner.",
    "Ravi and his wife Nina are hosting the offsite dinner on Friday.",
    "Turns out Arden Advisory is owned by Nina Shah, Ravi's wife!",
]
REQUESTS = [
    "Forget that the firm we hired belongs to our CFO's wife",
    "Forget who owns Arden Advisory",
    "Forget that Ravi's wife owns the advisory firm",
]


def run(size: int, embedder: str, batch: int = 64) -> dict[str, float]:
    """Ingest ``size`` statements and the trail; time plans and one forget."""
    texts, _ = make_corpus(size, 20_240_601)
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "s.db", embedder=embedder) as mem,
    ):
        for i in range(0, len(texts), batch):
            mem.add(
                [{"role": "user", "content": t} for t in texts[i : i + batch]],
                user_id="u",
                timestamp=1.7e9 + i,
            )
        for i, t in enumerate(TRAIL):
            mem.add(t, user_id="u", timestamp=1.8e9 + i)
        tenant = mem._existing("u", None, None)
        plans = []
        for req in REQUESTS * 3:
            t0 = time.perf_counter()
            mem.trails.plan(tenant, req)
            plans.append((time.perf_counter() - t0) * 1000)
        # How long the forget holds the write lock (every other writer of
        # the store waits that long): its outermost transactions, timed.
        held: list[float] = []
        transaction = mem.storage.transaction

        @contextmanager
        def timed() -> Iterator[None]:
            outer = not mem.storage.held()
            t = time.perf_counter()
            with transaction():
                yield
            if outer:
                held.append((time.perf_counter() - t) * 1000)

        mem.storage.transaction = timed  # type: ignore[method-assign]
        t0 = time.perf_counter()
        report = mem.forget(REQUESTS[0], user_id="u")
        forget_ms = (time.perf_counter() - t0) * 1000
        mem.storage.transaction = transaction  # type: ignore[method-assign]
        return {
            "memories": len(mem.get_all(user_id="u")) + len(report.removed),
            "plan_p50_ms": statistics.median(plans),
            "forget_ms": forget_ms,
            "locked_ms": sum(held),
            "turns_removed": report.turns_removed,
        }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--embedder", default="minilm")
    args = p.parse_args(argv)
    print(
        "| statements | memories | plan p50 (ms) | forget (ms) | write lock held (ms)"
        " | turns removed |"
    )
    print("|---|---|---|---|---|---|")
    for size in args.sizes:
        r = run(size, args.embedder)
        print(
            f"| {size} | {r['memories']:.0f} | {r['plan_p50_ms']:.0f} | {r['forget_ms']:.0f} "
            f"| {r['locked_ms']:.0f} | {r['turns_removed']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

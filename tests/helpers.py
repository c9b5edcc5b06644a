"""Helpers shared by the test modules (imported as ``helpers``)."""

from __future__ import annotations

import importlib.util
import json
import secrets
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from unrecall import Memory
from unrecall.records import STATES
from unrecall.storage import postings

ALL_STATES = STATES
ROOT = Path(__file__).resolve().parents[1]


def load_bench(name: str) -> ModuleType:
    """The script ``bench/{name}.py`` as a module (``bench`` is no package),
    registered as ``{name}_bench`` so its dataclasses resolve."""
    spec = importlib.util.spec_from_file_location(f"{name}_bench", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"{name}_bench"] = module
    spec.loader.exec_module(module)
    return module


def on_tmpfs(path: Path) -> bool:
    """Whether ``path`` is on tmpfs, whose pages cannot leave the page cache
    (from /proc/mounts)."""
    best, kind = "", ""
    for line in Path("/proc/mounts").read_text().splitlines():
        point, fs = line.split()[1:3]
        if str(path).startswith(point) and len(point) > len(best):
            best, kind = point, fs
    return kind == "tmpfs"


def token() -> str:
    """A unique probe word: ``zq`` + 12 random hex digits."""
    return "zq" + secrets.token_hex(6)


@contextmanager
def fresh_store(embedder: str = "hashing") -> Iterator[Memory]:
    """A brand-new store in its own temporary folder (for hypothesis examples,
    where function-scoped fixtures are not reset between examples)."""
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "store.db", embedder=embedder) as mem,
    ):
        yield mem


def erases(mem: Memory) -> bool:
    """Whether the store's backend claims physical erasure: SQLite always;
    PostgreSQL when its server keeps no WAL that ``erase()`` cannot remove
    (the test server is set up so). Tests assert physical erasure where it
    is claimed and the honest ``erased=False`` elsewhere."""
    return not is_postgres(mem) or not mem.storage.erasure_gaps()


def is_postgres(mem: Memory) -> bool:
    """Whether the store is on the PostgreSQL backend."""
    return type(mem.storage).__name__ == "PostgresStorage"


def no_raw_hits(mem: Memory, probe: str) -> bool:
    """``raw_hits(mem, probe) == 0`` on a backend that erases; on one that
    does not, that its ``erase()`` says so."""
    return raw_hits(mem, probe) == 0 if erases(mem) else mem.storage.erase() is False


def verified_clean(mem: Memory, probes: list[str]) -> bool:
    """``verify_erased(probes).clean`` on a backend that erases; on one that
    does not, that its ``erase()`` says so."""
    return mem.verify_erased(probes).clean if erases(mem) else mem.storage.erase() is False


def raw_sql(mem: Memory, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the store's database behind its back (a
    tamperer's edit, a raw look), with SQLite's ``?`` placeholders."""
    if not is_postgres(mem):
        return list(mem.storage._db.execute(sql, args))  # type: ignore[attr-defined]
    import psycopg

    with psycopg.connect(mem.storage._url, autocommit=True) as conn:  # type: ignore[attr-defined]
        cur = conn.execute(sql.replace("?", "%s"), args)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description is not None else []


def store_files(mem: Memory) -> list[Path]:
    """Every file next to the store that belongs to it (found independently
    of ``Storage.files``: the .db and any sidecar); on PostgreSQL, every
    file of the server's data directory, as ``Storage.files`` lists them."""
    if is_postgres(mem):
        return mem.storage.files()
    path = Path(mem.storage.path)
    return sorted(p for p in path.parent.iterdir() if p.name.startswith(path.name))


def raw_hits(mem: Memory, probe: str) -> int:
    """Occurrences of ``probe`` in the raw bytes of the store's files, in
    UTF-8 and UTF-16, as typed and casefolded. Checkpoints first so the scan
    sees a settled file set (the WAL is scanned too if it is still there)."""
    mem.storage.erase()
    forms = {probe, probe.casefold(), probe.upper()}
    encoded = {f.encode(enc) for f in forms for enc in ("utf-8", "utf-16-le", "utf-16-be")}
    total = 0
    for path in store_files(mem):
        try:
            blob = path.read_bytes()
        except FileNotFoundError:  # a server's temporary file, gone since it was listed
            continue
        total += sum(blob.count(e) for e in encoded)
    return total


def snapshot(mem: Memory, user_id: str) -> dict[str, Any]:
    """Everything observable about a tenant, comparable with ``==``."""
    items = [m.to_dict() for m in mem.get_all(user_id=user_id, states=ALL_STATES)]
    exported = mem.export(user_id=user_id)
    return {
        "memories": items,
        "turns": exported["turns"],
        "events": len(exported["events"]),
        "audit": mem.verify_audit().events,
    }


def dumps(value: Any) -> str:
    """Strict JSON (no NaN), to prove something is JSON-serialisable."""
    return json.dumps(value, allow_nan=False, ensure_ascii=False)


def audit_text(mem: Memory) -> str:
    """Every audit row of the store, as one string."""
    rows = [r.__dict__ for r in mem.storage.audit_rows()]
    return dumps(rows)


def active_texts(mem: Memory, user_id: str = "u") -> list[str]:
    """The texts of a user's active memories, oldest first."""
    return [i.text for i in mem.get_all(user_id=user_id)]


def posting_rows(blocks: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows of schema v5, a row per posting: ``(*key, doc, tf, length)``
    from v6 block rows ``(*key, first, docs, tfs, lens)`` (to make a v5
    store from a current one)."""
    return [
        (*key, int(doc), int(tf), int(length))
        for *key, first, docs, tfs, lens in blocks
        for doc, tf, length in zip(
            *postings.Block.decode(first, bytes(docs), bytes(tfs), bytes(lens)).arrays(),
            strict=True,
        )
    ]


def check_lists(storage: Any, split_at: int | None = None, chunk: int | None = None) -> None:
    """The SQLite store's vector lists hold exactly its stored vectors: every
    row of ``memory_vectors`` is in the chunks of the list it names, once,
    and of its second list (``spill``) if it names one, once, with the
    codes its vector quantises to; each list's size counts its members and
    its centroid is their mean; no list or chunk is empty or over size."""
    from unrecall.storage import sqlite_lists, vector_lists

    split_at = sqlite_lists.SPLIT_AT if split_at is None else split_at
    chunk = sqlite_lists.CHUNK if chunk is None else chunk
    dim = storage.dim
    table = {
        mid: (tid, lst, spill, np.frombuffer(blob, dtype=np.float32))
        for mid, tid, lst, spill, blob in storage._rows(
            "SELECT id, tenant_id, list, spill, embedding FROM memory_vectors"
        )
    }
    members: dict[tuple[int, int], list[vector_lists.Rows]] = {}
    for tid, lst, ids, codes, meta in storage._rows(
        "SELECT tenant_id, list, ids, codes, meta FROM vector_chunks ORDER BY chunk"
    ):
        rows = vector_lists.Rows.stored(dim, [(bytes(ids), bytes(codes), bytes(meta))])
        assert 0 < len(rows) <= chunk
        members.setdefault((tid, lst), []).append(rows)
    seen: set[tuple[int, int]] = set()  # (memory, list)
    lists = storage._rows("SELECT tenant_id, list, size, centroid FROM vector_lists")
    assert {(t, lst) for t, lst, _, _ in lists} == set(members)
    for tid, lst, size, centroid in lists:
        rows = vector_lists.Rows.concat(dim, members[(tid, lst)])
        assert size == len(rows) <= split_at
        for mid in rows.ids.tolist():
            assert (mid, lst) not in seen and table[mid][0] == tid and lst in table[mid][1:3]
            seen.add((mid, lst))
        want = vector_lists.Rows.of(rows.ids, np.stack([table[m][3] for m in rows.ids.tolist()]))
        assert np.array_equal(rows.codes, want.codes)
        np.testing.assert_allclose(
            np.frombuffer(centroid, dtype=np.float32), vector_lists.mean(rows), atol=1e-5
        )
    want_seen = {(mid, lst) for mid, (_, lst, _, _) in table.items()}
    want_seen |= {(mid, sp) for mid, (_, _, sp, _) in table.items() if sp is not None}
    assert all(sp != lst for _, lst, sp, _ in table.values())
    assert seen == want_seen


def check_centroids(storage: Any) -> None:
    """The centroids the SQLite store keeps for a tenant's current version
    are the lists as stored, in order, with their sizes and means as stored."""
    lists = storage._lists
    for tid, hit in dict(lists._cache).items():
        if hit.version != storage.tenant_version(tid):
            continue  # stale: the next read of the tenant replaces it
        fresh = lists.centroids(storage._db, tid)
        assert np.array_equal(hit.lists, fresh.lists)
        assert np.array_equal(hit.sizes, fresh.sizes)
        np.testing.assert_allclose(hit.units, fresh.units, atol=1e-6)


def check_held(storage: Any) -> None:
    """Every list the SQLite store holds in memory under its tenant's
    current version (``storage.list_cache``) is the list as stored: the same
    ids, codes and scales, in chunk order."""
    held = storage._lists.held
    for tid, lists in held._lists.items():
        if held._version[tid] != storage.tenant_version(tid):
            continue  # stale: the next search of the tenant drops it
        stored = storage._lists._read(storage._db, tid, list(lists))
        assert set(stored) == set(lists)
        for list_id, rows in lists.items():
            want = stored[list_id]
            assert np.array_equal(rows.ids, want.ids)
            assert np.array_equal(rows.codes, want.codes)
            assert np.array_equal(rows.meta, want.meta)
    assert held.held_bytes == sum(
        r.ids.nbytes + r.codes.nbytes + r.meta.nbytes
        for t in held._lists.values()
        for r in t.values()
    )

"""The embedded default: one SQLite file via apsw, FTS5 and sqlite-vec.

Erasure relies on three settings checked by the forensic tests:
``PRAGMA secure_delete=ON`` (freed cells and pages are zeroed), FTS5's
``secure-delete`` option (deleted postings leave the index instead of
being shadowed by tombstones) and ``wal_checkpoint(TRUNCATE)`` after each
forgetting operation (old page images leave the WAL).
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

from unrecall.errors import StoreError
from unrecall.storage.base import AuditRow, MemoryRow, TurnRow
from unrecall.storage.schema import SCHEMA_VERSION, migrations
from unrecall.storage.vector_cache import TenantVectors

_MEMORY_COLS = (
    "m.id, m.uid, m.tenant_id, m.agent_id, m.run_id, m.text, m.kind, m.state, m.created_at,"
    " m.updated_at, m.expires_at, m.metadata, (SELECT s.uid FROM memories s"
    " WHERE s.id = m.superseded_by)"
)
_TURN_COLS = "id, uid, tenant_id, role, text, session_id, at, metadata"


def _memory(row: tuple[Any, ...]) -> MemoryRow:
    return MemoryRow(*row[:11], json.loads(row[11]), row[12])


def _turn(row: tuple[Any, ...]) -> TurnRow:
    return TurnRow(*row[:7], json.loads(row[7]))


def _tenant_terms(tenant_id: int, terms: Sequence[str]) -> str:
    """Term digests tagged with their tenant: the tenant filter is in the
    term itself, so FTS5 never reads another tenant's postings (9 -> 2.5 ms
    BM25 at 100k memories, docs/benchmarks.md)."""
    return " ".join(f"t{tenant_id}x{t}" for t in terms)


# Tables every unrecall store has had since schema v1.
_OWN_TABLES = {"meta", "secrets", "tenants", "turns", "memories", "audit"}


def _reason(exc: BaseException) -> str:
    """Why opening failed, without the path: the OS's words or apsw's."""
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return str(exc) or type(exc).__name__


def _marks(n: int) -> str:
    return ",".join("?" * n)


class _RandomPool:
    """``os.urandom`` read 4 KiB at a time: one system call per ~400 ids
    instead of one per id (it cost ~0.3 ms a call on a loaded VM)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buf = b""
        self._at = 0
        self._pid = 0

    def take(self, n: int) -> bytes:
        with self._lock:
            if self._at + n > len(self._buf) or self._pid != os.getpid():
                # a forked child must never reuse the parent's bytes
                self._buf, self._at, self._pid = os.urandom(4096), 0, os.getpid()
            out = self._buf[self._at : self._at + n]
            self._at += n
            return out


_RANDOM = _RandomPool()


def new_uid(prefix: str) -> str:
    """A random public id such as ``m_3f2a…`` (80 bits, never reused)."""
    return f"{prefix}_{_RANDOM.take(10).hex()}"


class SQLiteStorage:
    """``Storage`` over a single SQLite file (``:memory:`` is refused: erasure
    must be provable on disk)."""

    def __init__(self, path: str | os.PathLike[str], dim: int, embedder_name: str) -> None:
        self.path = Path(path)
        self.dim = dim
        # Errors name no path (it may name a person) and wrap apsw's and the OS's.
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = apsw.Connection(str(self.path))
        except (OSError, apsw.Error) as exc:
            raise StoreError(f"cannot open the store file: {_reason(exc)}") from exc
        try:
            self._refuse_foreign()  # reads only: a file that is not a store stays untouched
            self._db.enable_load_extension(True)
            self._db.load_extension(sqlite_vec.loadable_path())
            self._db.enable_load_extension(False)
            self._db.set_busy_timeout(5000)
            # apsw runs a multi-statement string lazily, so pragmas go one by one.
            for pragma in (
                "journal_mode=WAL",
                "secure_delete=ON",
                "foreign_keys=ON",
                "synchronous=NORMAL",
                "temp_store=MEMORY",
            ):
                self._db.execute(f"PRAGMA {pragma}").fetchall()
        except apsw.Error as exc:
            self._db.close()
            raise StoreError(f"cannot open the store file: {_reason(exc)}") from exc
        except BaseException:
            self._db.close()
            raise
        self._lock = threading.RLock()
        self._depth = 0
        self._pending: list[tuple[str, int, int, np.ndarray | None]] = []
        self._vectors: dict[int, TenantVectors] = {}
        self._data_version = self._scalar("PRAGMA data_version")
        try:
            self._migrate(embedder_name)
        except apsw.Error as exc:  # a locked or unwritable file, say
            self._db.close()
            raise StoreError(f"cannot open the store file: {_reason(exc)}") from exc
        except BaseException:  # wrong embedder or newer schema: do not leak the handle
            self._db.close()
            raise

    # -- lifecycle -------------------------------------------------------
    def _refuse_foreign(self) -> None:
        """Refuse, before writing anything, a file unrecall cannot own: one
        that is not a database (apsw's NotADBError), a database of someone
        else's (tables of its own, no unrecall tables) or a read-only file."""
        version = self._scalar("PRAGMA user_version")
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        foreign = bool(tables) if version == 0 else not tables >= _OWN_TABLES
        if foreign:
            raise StoreError(
                "the file is a SQLite database unrecall did not make; it was left untouched"
                " (give a new path or an unrecall store)"
            )
        if self._db.readonly("main"):
            raise StoreError("the store file is read-only; unrecall needs to write it")

    def _scalar(self, sql: str, args: Sequence[Any] = ()) -> Any:
        row = self._db.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def _migrate(self, embedder_name: str) -> None:
        version = self._scalar("PRAGMA user_version")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"store schema v{version} is newer than this unrecall (v{SCHEMA_VERSION})"
            )
        steps = migrations(self.dim)
        with self.transaction():
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for stmt in steps[v]:
                    self._db.execute(stmt).fetchall()
                self._db.execute(f"PRAGMA user_version={v}").fetchall()
            if version == 0:
                self._db.execute(
                    "INSERT INTO meta VALUES ('embedder', ?), ('dim', ?), ('created_at', ?)",
                    (embedder_name, str(self.dim), str(time.time())),
                )
                self._db.execute(
                    "INSERT INTO secrets VALUES ('store_key', ?)", (secrets.token_bytes(32),)
                )
        stored = self._scalar("SELECT value FROM meta WHERE key = 'embedder'")
        if stored != embedder_name:
            raise StoreError(
                f"store was built with embedder {stored!r}, not {embedder_name!r};"
                " open it with the same embedder"
            )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Outermost level is a real transaction, inner levels savepoints."""
        with self._lock:
            self._depth += 1
            try:
                with self._db:
                    yield
            except BaseException:
                if self._depth == 1:
                    self._pending.clear()
                    self._vectors.clear()  # rebuild from vec0, the truth
                raise
            finally:
                self._depth -= 1
            if self._depth == 0:
                self._apply_pending()
                self._data_version = self._scalar("PRAGMA data_version")

    def secret_key(self) -> bytes:
        """The per-store random key (made once at creation)."""
        return self._scalar("SELECT value FROM secrets WHERE name = 'store_key'")

    def erase(self) -> bool:
        """Checkpoint and truncate the WAL; False if a reader kept it busy."""
        with self._lock:
            busy, _, _ = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return busy == 0

    def compact(self) -> None:
        """Rewrite the FTS index and the file: drops the rare digest a
        secure-delete leaves as a page separator, and frees space."""
        with self._lock:
            for table in ("memory_fts", "turn_fts"):
                self._db.execute(f"INSERT INTO {table}({table}) VALUES('optimize')").fetchall()
            self._db.execute("VACUUM").fetchall()
        self.erase()

    def files(self) -> list[Path]:
        """The database file and every sidecar that exists now."""
        names = [self.path] + [Path(f"{self.path}{s}") for s in ("-wal", "-shm", "-journal")]
        return [p for p in names if p.exists()]

    def close(self) -> None:
        """Checkpoint and close."""
        with self._lock:
            self.erase()
            self._db.close()

    # -- tenants and turns ----------------------------------------------
    def tenant(self, key: str, create: bool) -> int | None:
        """Look up (and optionally create) a tenant row."""
        tid = self._scalar("SELECT id FROM tenants WHERE key = ?", (key,))
        if tid is None and create:
            with self.transaction():
                self._db.execute("INSERT INTO tenants(key) VALUES (?)", (key,))
                tid = self._db.last_insert_rowid()
        return tid

    def tenant_key(self, tenant_id: int) -> str | None:
        """The key of a tenant id."""
        return self._scalar("SELECT key FROM tenants WHERE id = ?", (tenant_id,))

    def delete_tenant(self, tenant_id: int) -> None:
        """Delete the tenant row (its key may itself be personal data)."""
        self._db.execute("DELETE FROM tenants WHERE id = ?", (tenant_id,))
        self._vectors.pop(tenant_id, None)

    def add_turn(
        self,
        tenant_id: int,
        role: str,
        text: str,
        session_id: str | None,
        at: float,
        metadata: dict[str, Any],
    ) -> TurnRow:
        """Insert a source turn."""
        uid = new_uid("t")
        self._db.execute(
            "INSERT INTO turns(uid, tenant_id, role, text, session_id, at, metadata)"
            " VALUES (?,?,?,?,?,?,?)",
            (uid, tenant_id, role, text, session_id, at, json.dumps(metadata)),
        )
        return TurnRow(
            self._db.last_insert_rowid(), uid, tenant_id, role, text, session_id, at, metadata
        )

    def turn(self, tenant_id: int, uid: str) -> TurnRow | None:
        """A turn by public id within a tenant."""
        row = self._db.execute(
            f"SELECT {_TURN_COLS} FROM turns WHERE uid = ? AND tenant_id = ?", (uid, tenant_id)
        ).fetchone()
        return None if row is None else _turn(row)

    def turns(self, tenant_id: int) -> list[TurnRow]:
        """All turns of a tenant, oldest first."""
        rows = self._db.execute(
            f"SELECT {_TURN_COLS} FROM turns WHERE tenant_id = ? ORDER BY at, id", (tenant_id,)
        )
        return [_turn(r) for r in rows]

    def index_turn(self, turn: TurnRow, terms: str) -> None:
        """Insert a turn's full-text row."""
        self._db.execute(
            "INSERT INTO turn_fts(rowid, terms) VALUES (?, ?)",
            (turn.id, _tenant_terms(turn.tenant_id, terms.split())),
        )

    def set_turn_text(self, turn: TurnRow, text: str, terms: str) -> None:
        """Overwrite a turn's text and its full-text row."""
        self._db.execute("UPDATE turns SET text = ? WHERE id = ?", (text, turn.id))
        self._db.execute("DELETE FROM turn_fts WHERE rowid = ?", (turn.id,))
        self.index_turn(turn, terms)

    def delete_turns(self, turn_ids: Sequence[int]) -> None:
        """Delete turns and their full-text rows (provenance edges cascade)."""
        for tid in turn_ids:
            self._db.execute("DELETE FROM turn_fts WHERE rowid = ?", (tid,))
            self._db.execute("DELETE FROM turns WHERE id = ?", (tid,))

    def turns_by_id(self, ids: Sequence[int]) -> list[TurnRow]:
        """Turns by internal id, in the given order."""
        if not ids:
            return []
        rows = self._db.execute(
            f"SELECT {_TURN_COLS} FROM turns WHERE id IN ({_marks(len(ids))})", list(ids)
        )
        by_id = {r[0]: _turn(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    # -- memories and provenance ----------------------------------------
    def add_memory(
        self,
        tenant_id: int,
        *,
        text: str,
        kind: str,
        agent_id: str | None,
        run_id: str | None,
        at: float,
        expires_at: float | None,
        metadata: dict[str, Any],
        sources: Sequence[int],
    ) -> MemoryRow:
        """Insert an active memory and its provenance edges."""
        uid = new_uid("m")
        self._db.execute(
            "INSERT INTO memories(uid, tenant_id, agent_id, run_id, text, kind, state,"
            " created_at, updated_at, expires_at, metadata)"
            " VALUES (?,?,?,?,?,?,'active',?,?,?,?)",
            (
                uid,
                tenant_id,
                agent_id,
                run_id,
                text,
                kind,
                at,
                at,
                expires_at,
                json.dumps(metadata),
            ),
        )
        mid = self._db.last_insert_rowid()
        self._db.executemany(
            "INSERT OR IGNORE INTO provenance(memory_id, turn_id) VALUES (?, ?)",
            [(mid, t) for t in sources],
        )
        return MemoryRow(
            mid,
            uid,
            tenant_id,
            agent_id,
            run_id,
            text,
            kind,
            "active",
            at,
            at,
            expires_at,
            metadata,
            None,
        )

    def link(self, memory_ids: Sequence[int], turn_id: int) -> None:
        """Add ``turn_id`` as one more source of each memory (a repetition)."""
        self._db.executemany(
            "INSERT OR IGNORE INTO provenance(memory_id, turn_id) VALUES (?, ?)",
            [(m, turn_id) for m in memory_ids],
        )

    def memory(self, tenant_id: int, uid: str) -> MemoryRow | None:
        """A memory by public id within a tenant."""
        row = self._db.execute(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.uid = ? AND m.tenant_id = ?",
            (uid, tenant_id),
        ).fetchone()
        return None if row is None else _memory(row)

    def memories(self, tenant_id: int, states: Sequence[str] | None = None) -> list[MemoryRow]:
        """A tenant's memories, oldest first."""
        sql = f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.tenant_id = ?"
        args: list[Any] = [tenant_id]
        if states is not None:
            sql += f" AND m.state IN ({_marks(len(states))})"
            args += list(states)
        return [_memory(r) for r in self._db.execute(sql + " ORDER BY m.id", args)]

    def count_memories(self, tenant_id: int) -> int:
        """How many memories a tenant holds, in any state."""
        return int(self._scalar("SELECT count(*) FROM memories WHERE tenant_id = ?", (tenant_id,)))

    def memories_by_id(self, ids: Sequence[int]) -> list[MemoryRow]:
        """Memories by internal id, in the given order."""
        if not ids:
            return []
        rows = self._db.execute(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.id IN ({_marks(len(ids))})",
            list(ids),
        )
        by_id = {r[0]: _memory(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def sources(self, memory_ids: Sequence[int]) -> dict[int, list[TurnRow]]:
        """Source turns per memory id."""
        out: dict[int, list[TurnRow]] = {m: [] for m in memory_ids}
        if not memory_ids:
            return out
        rows = self._db.execute(
            f"SELECT p.memory_id, {', '.join('t.' + c.strip() for c in _TURN_COLS.split(','))}"
            f" FROM provenance p JOIN turns t ON t.id = p.turn_id"
            f" WHERE p.memory_id IN ({_marks(len(memory_ids))}) ORDER BY t.at, t.id",
            list(memory_ids),
        )
        for r in rows:
            out[r[0]].append(_turn(r[1:]))
        return out

    def derived(self, turn_ids: Sequence[int]) -> list[int]:
        """Memory ids derived from any of the turns."""
        if not turn_ids:
            return []
        rows = self._db.execute(
            f"SELECT DISTINCT memory_id FROM provenance WHERE turn_id IN ({_marks(len(turn_ids))})",
            list(turn_ids),
        )
        return [r[0] for r in rows]

    def set_state(self, ids: Sequence[int], state: str, at: float) -> None:
        """Change state and touch ``updated_at``."""
        self._db.executemany(
            "UPDATE memories SET state = ?, updated_at = ? WHERE id = ?",
            [(state, at, i) for i in ids],
        )

    def set_superseded_by(self, ids: Sequence[int], successor: int) -> None:
        """Record the successor of superseded memories."""
        self._db.executemany(
            "UPDATE memories SET superseded_by = ? WHERE id = ?", [(successor, i) for i in ids]
        )

    def set_text(self, memory_id: int, text: str, at: float) -> None:
        """Overwrite a memory's text."""
        self._db.execute(
            "UPDATE memories SET text = ?, updated_at = ? WHERE id = ?", (text, at, memory_id)
        )

    def set_expiry(self, memory_id: int, expires_at: float | None) -> None:
        """Set a memory's expiry."""
        self._db.execute("UPDATE memories SET expires_at = ? WHERE id = ?", (expires_at, memory_id))

    def delete_memories(self, ids: Sequence[int]) -> None:
        """Delete memories and their recall rows (provenance cascades)."""
        rows = self.memories_by_id(ids)
        self.unindex([r for r in rows if r.state == "active"])
        self._db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in ids])

    def expired(self, now: float, states: Sequence[str]) -> list[MemoryRow]:
        """Memories whose ``expires_at`` has passed."""
        rows = self._db.execute(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.expires_at IS NOT NULL"
            f" AND m.expires_at <= ? AND m.state IN ({_marks(len(states))}) ORDER BY m.id",
            [now, *states],
        )
        return [_memory(r) for r in rows]

    # -- recall indexes -------------------------------------------------
    def index(self, row: MemoryRow, terms: str, embedding: np.ndarray) -> None:
        """Insert FTS and vector rows for one memory."""
        vec = np.ascontiguousarray(embedding, dtype=np.float32)
        self._db.execute(
            "INSERT INTO memory_fts(rowid, terms) VALUES (?, ?)",
            (row.id, _tenant_terms(row.tenant_id, terms.split())),
        )
        self._db.execute(
            "INSERT INTO memory_vec(rowid, tenant_id, embedding) VALUES (?, ?, ?)",
            (row.id, row.tenant_id, vec.tobytes()),
        )
        self._pending.append(("add", row.tenant_id, row.id, vec))

    def unindex(self, rows: Sequence[MemoryRow]) -> None:
        """Delete FTS and vector rows."""
        for row in rows:
            self._db.execute("DELETE FROM memory_fts WHERE rowid = ?", (row.id,))
            self._db.execute("DELETE FROM memory_vec WHERE rowid = ?", (row.id,))
            self._pending.append(("remove", row.tenant_id, row.id, None))

    def lexical(
        self,
        tenant_id: int,
        terms: Sequence[str],
        limit: int,
        require_all: bool = False,
        turns: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 over the tenant's own terms (see ``_tenant_terms``)."""
        if not terms:
            return []
        table = "turn_fts" if turns else "memory_fts"
        joiner = " AND " if require_all else " OR "
        match = joiner.join(_tenant_terms(tenant_id, terms).split())
        rows = self._db.execute(
            f"SELECT rowid, bm25({table}) AS s FROM {table}"
            f" WHERE {table} MATCH ? ORDER BY s LIMIT ?",
            (match, limit),
        )
        return [(r[0], -r[1]) for r in rows]

    def sync(self) -> None:
        """Drop the vector caches if another connection committed."""
        with self._lock:
            version = self._scalar("PRAGMA data_version")
            if version != self._data_version:
                self._vectors.clear()
                self._data_version = version

    def vector(
        self, tenant_id: int, query: np.ndarray, limit: int, *, synced: bool = False
    ) -> list[tuple[int, float]]:
        """Exact cosine top-k through the tenant's cached matrix. With
        ``synced`` (``sync()`` was just called) a cached matrix is scanned
        without touching the connection, so a BM25 query running on it in
        another thread does not hold the scan up."""
        with self._lock:
            if not synced:
                self.sync()
            return self._tenant_vectors(tenant_id).search(
                np.asarray(query, dtype=np.float32), limit
            )

    def embeddings(self, tenant_id: int, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Stored vectors of the indexed memories among ``ids``: the
        tenant's cached matrix, with this transaction's (not yet applied)
        index changes on top."""
        with self._lock:
            self.sync()
            found = self._tenant_vectors(tenant_id).get(ids)
            wanted = set(ids)
            for op, tid, mid, vec in self._pending:
                if tid == tenant_id and mid in wanted:
                    if op == "add" and vec is not None:
                        found[mid] = np.array(vec, dtype=np.float32)
                    else:
                        found.pop(mid, None)
            return found

    def _tenant_vectors(self, tenant_id: int) -> TenantVectors:
        """The tenant's vector matrix, loaded on first use (lock held)."""
        cache = self._vectors.get(tenant_id)
        if cache is None:
            loaded = self._vec0_chunks(tenant_id)
            if loaded is not None:
                cache = TenantVectors.from_arrays(self.dim, *loaded)
            else:
                rows = self._db.execute(
                    "SELECT rowid, embedding FROM memory_vec WHERE tenant_id = ?",
                    (tenant_id,),
                )
                cache = TenantVectors(
                    self.dim, ((r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows)
                )
            self._vectors[tenant_id] = cache
        return cache

    def _vec0_chunks(self, tenant_id: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A tenant's vectors read straight from vec0's chunk tables.

        Reading 100k rows through the virtual table takes ~4 s; its storage
        is fixed-size chunks (a validity bitmap, the rowids, the vectors), and
        reading those takes a fraction of that. The layout is sqlite-vec's
        own (v0.1), so it is used only when the store says it was made by
        v0.1, and only if the result agrees with the public table: the row
        count matches the tenant's indexed (active) memories and sampled
        rows hold the same bytes. Otherwise None (read the slow way).
        """
        try:
            version = self._scalar("SELECT value FROM memory_vec_info WHERE key = 'CREATE_VERSION'")
            if not (isinstance(version, str) and version.startswith("v0.1.")):
                return None
            rows = self._db.execute(
                "SELECT c.size, c.validity, c.rowids, v.vectors FROM memory_vec_chunks c"
                " JOIN memory_vec_vector_chunks00 v ON v.rowid = c.chunk_id"
                " WHERE c.partition00 = ? ORDER BY c.chunk_id",
                (tenant_id,),
            ).fetchall()
        except apsw.SQLError:  # another layout
            return None
        ids_parts, vec_parts = [], []
        for size, validity, rowids, vectors in rows:
            valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            valid = valid[:size].astype(bool)
            ids = np.frombuffer(rowids, dtype=np.int64)[:size]
            vecs = np.frombuffer(vectors, dtype=np.float32).reshape(-1, self.dim)[:size]
            if len(valid) != size or len(ids) != size or len(vecs) != size:
                return None
            ids_parts.append(ids[valid])
            vec_parts.append(vecs[valid])
        ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, dtype=np.int64)
        mat = np.concatenate(vec_parts) if vec_parts else np.zeros((0, self.dim), np.float32)
        active = self._scalar(
            "SELECT count(*) FROM memories WHERE tenant_id = ? AND state = 'active'", (tenant_id,)
        )
        if len(ids) != active or len(np.unique(ids)) != len(ids):
            return None
        for i in np.linspace(0, len(ids) - 1, num=min(8, len(ids)), dtype=np.int64):
            blob = self._scalar(
                "SELECT embedding FROM memory_vec WHERE rowid = ? AND tenant_id = ?",
                (int(ids[i]), tenant_id),
            )
            if blob != mat[i].tobytes():
                return None
        return ids, mat

    def _apply_pending(self) -> None:
        for op, tenant_id, mid, vec in self._pending:
            cache = self._vectors.get(tenant_id)
            if cache is None:
                continue  # built lazily from vec0 on next search
            if op == "add" and vec is not None:
                cache.add(mid, vec)
            else:
                cache.remove(mid)
        self._pending.clear()

    # -- audit ----------------------------------------------------------
    def audit_append(
        self,
        at: float,
        tenant: str,
        op: str,
        detail: dict[str, Any],
        refs: Sequence[str],
        prev: str,
        digest: str,
    ) -> int:
        """Append an audit row and its ref index entries."""
        self._db.execute(
            "INSERT INTO audit(at, tenant, op, detail, refs, prev, hash) VALUES (?,?,?,?,?,?,?)",
            (
                at,
                tenant,
                op,
                json.dumps(detail, sort_keys=True),
                json.dumps(list(refs)),
                prev,
                digest,
            ),
        )
        seq = self._db.last_insert_rowid()
        self._db.executemany(
            "INSERT OR IGNORE INTO audit_refs(ref, seq) VALUES (?, ?)", [(r, seq) for r in refs]
        )
        return seq

    def audit_last_hash(self) -> str | None:
        """Hash of the newest row."""
        return self._scalar("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1")

    def audit_rows(self, ref: str | None = None) -> Iterator[AuditRow]:
        """Rows in sequence order."""
        cols = "a.seq, a.at, a.tenant, a.op, a.detail, a.refs, a.prev, a.hash"
        if ref is None:
            cur = self._db.execute(f"SELECT {cols} FROM audit a ORDER BY a.seq")
        else:
            cur = self._db.execute(
                f"SELECT {cols} FROM audit_refs r JOIN audit a ON a.seq = r.seq"
                " WHERE r.ref = ? ORDER BY a.seq",
                (ref,),
            )
        for r in cur.fetchall():
            yield AuditRow(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]), r[6], r[7])

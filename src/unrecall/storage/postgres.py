"""PostgreSQL + pgvector: ``Storage`` on a database server (psycopg 3).

Semantics follow ``SQLiteStorage`` method by method; only the engine
differs. Full text is SQLite's design exactly (keyed term digests mapped to
per-tenant lexicon ids, postings rows with tf and document length, BM25
statistics per tenant and kind, the same arithmetic), so both backends rank
alike; vectors live in a ``vector(dim)`` column under an HNSW index, which
only tenants of more than ``EXACT_UP_TO`` memories search (a smaller one's
rows are scanned exactly).

Distribution: every table that holds rows of a tenant carries ``tenant_id``
and has it first in its primary key (and in every unique key and foreign
key between such tables: ``provenance`` references ``(tenant_id, id)`` of
``memories`` and ``turns``). A Citus-style deployment can therefore
distribute each of them by ``tenant_id`` in one co-location group: all rows
of a tenant land on one node, every per-tenant query (recall, BM25 joins,
provenance, erasure) runs there, and the keys stay enforceable per shard.
Ids come from identity columns and stay globally unique, so calls that take
bare ids (``memories_by_id``) still work, through a plain index on ``id``.
The small global tables (``meta``, ``secrets``, ``tenants``, ``audit``,
``audit_refs``, ``api_keys``, ``erasure_queue``) would be reference tables.
On one server the same tables are hash-partitioned by ``tenant_id`` into
``PARTITIONS`` parts, so a tenant's rows, and its search, are in one part
of each.

Writes: every write transaction takes one advisory lock of the database
first, so writers of every process queue like SQLite's ``BEGIN IMMEDIATE``
and never meet a serialization failure; a wait past ``busy_timeout`` raises
``StoreBusy``.

Erasure: a DELETE leaves the row's bytes in its heap and index pages
(a plain VACUUM frees them but does not zero them; pgvector's HNSW only
marks an element deleted), and the WAL holds every inserted row and
full-page image until its segments are removed. So after a forget,
``erase()`` rewrites the parts of the tenant tables that forgets left dead
rows in, as queued in ``erasure_queue`` by the forget's own commit (VACUUM
FULL: new files holding the live rows only; the old ones are unlinked), so
its cost is the purged tenant's part, not the store; then it switches and checkpoints
the WAL twice, so the segments that held the deleted rows are removed.
It returns True only when the server keeps no copy elsewhere
(``server_erasure_gaps``: WAL removed rather than recycled, no archiving,
no kept segments, no replication slot) and no other session's snapshot
could have kept a deleted row alive through the rewrite. Columns that hold
content are never sampled into ``pg_statistic`` (statistics target 0).
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector import Vector
from pgvector.psycopg import register_vector
from psycopg import errors as pgerrors
from psycopg_pool import ConnectionPool

from unrecall.errors import StoreBusy, StoreError
from unrecall.storage import postings
from unrecall.storage.base import ApiKeyRow, AuditRow, MemoryRow, StoreInfo, TurnRow
from unrecall.storage.schema import SCHEMA_VERSION
from unrecall.storage.sqlite import (
    BUSY_TIMEOUT_S,
    NotAStore,
    new_uid,
)

# The advisory lock every write transaction of a store takes ("unrecall" as
# a big-endian int64); advisory locks are per database, so one per store.
LOCK_KEY = int.from_bytes(b"unrecall", "big")
POOL_MIN = 1
POOL_MAX = 4

_MEMORY_COLS = (
    "m.id, m.uid, m.tenant_id, m.agent_id, m.run_id, m.text, m.kind, m.state, m.created_at,"
    " m.updated_at, m.expires_at, m.metadata, (SELECT s.uid FROM memories s"
    " WHERE s.tenant_id = m.tenant_id AND s.id = m.superseded_by)"
)
_TURN_COLS = "id, uid, tenant_id, role, text, session_id, at, metadata"
_KIND = {"m": "memory", "t": "turn"}  # a postings kind's table prefix
_DF = {"m": "mdf", "t": "tdf"}
# Documents indexed in a transaction wait in pending_docs and go into their
# terms' blocks together (``_flush``): at commit, before a read of the
# blocks, and every this many documents (an import stays bounded).
FLUSH_EVERY = 2_000
# Tables that hold rows of one tenant: hash-partitioned by tenant_id into
# PARTITIONS parts, "<table>_p<r>", a tenant's rows in part r of each. A
# forget is erased by rewriting its tenant's parts only (O(store / PARTITIONS),
# not O(store)), and a large tenant's search reads one part's HNSW index.
_TENANT_TABLES = (
    "turns",
    "memories",
    "provenance",
    "lexicon",
    "memory_postings",
    "turn_postings",
    "memory_docs",
    "turn_docs",
    "term_stats",
    "memory_vectors",
)
PARTITIONS = 16
# The small tables a forget can change beside them, rewritten by every
# erase(). (The audit log and meta only grow, and hold no content.)
_SHARED_CONTENT_TABLES = ("tenants",)
# Server settings that decide whether a purged row's text outlives erase():
# in WAL kept, recycled or copied, or in a server log of statement values.
_ERASURE_SETTINGS = (
    "wal_recycle",
    "archive_mode",
    "wal_keep_size",
    "log_statement",
    "log_min_duration_statement",
    "log_min_duration_sample",
    "log_statement_sample_rate",
    "log_transaction_sample_rate",
    "log_parameter_max_length",
    "log_parameter_max_length_on_error",
)
# Columns whose values are (or are derived from) what a user said, or name
# the user: never sampled by ANALYZE, whose most-common values and histograms
# in pg_statistic would outlive a forget.
_NO_STATISTICS = {
    "tenants": ("key", "handle"),
    "turns": ("text", "session_id", "metadata"),
    "memories": ("text", "agent_id", "run_id", "metadata"),
    "lexicon": ("digest",),
    "memory_vectors": ("embedding",),
}


def _partitioned(statements: list[str]) -> list[str]:
    """``statements`` with each tenant table made hash-partitioned by
    tenant_id, followed by its ``PARTITIONS`` parts."""
    out = []
    for stmt in statements:
        table = stmt.split("(", 1)[0].split()[-1] if stmt.startswith("CREATE TABLE") else None
        if table not in _TENANT_TABLES:
            out.append(stmt)
            continue
        out.append(f"{stmt} PARTITION BY HASH (tenant_id)")
        out += [
            f"CREATE TABLE {table}_p{r} PARTITION OF {table}"
            f" FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {r})"
            for r in range(PARTITIONS)
        ]
    return out


def _blocks() -> list[str]:
    """The postings tables (``storage.postings``): a term's postings in
    blocks of packed arrays under the block's first document, and per
    document its length and its terms' ids."""
    out = []
    for prefix in _KIND.values():
        out += [
            f"""CREATE TABLE {prefix}_postings(
                tenant_id bigint NOT NULL,
                term bigint NOT NULL,
                first bigint NOT NULL,
                docs bytea NOT NULL,
                tfs bytea NOT NULL,
                lens bytea NOT NULL,
                PRIMARY KEY (tenant_id, term, first))""",
            f"""CREATE TABLE {prefix}_docs(
                tenant_id bigint NOT NULL,
                doc bigint NOT NULL,
                len integer NOT NULL,
                terms bigint[] NOT NULL,
                PRIMARY KEY (tenant_id, doc))""",
        ]
    return out


def _schema(dim: int) -> list[str]:
    """Statements that make a new store (schema ``SCHEMA_VERSION``)."""
    postings = _blocks()
    return _partitioned(
        [
            "CREATE TABLE meta(key text PRIMARY KEY, value text NOT NULL)",
            "CREATE TABLE secrets(name text PRIMARY KEY, value bytea NOT NULL)",
            """CREATE TABLE tenants(
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            key text NOT NULL UNIQUE,
            handle text,
            version bigint NOT NULL DEFAULT 0)""",
            """CREATE TABLE turns(
            tenant_id bigint NOT NULL REFERENCES tenants(id),
            id bigint GENERATED ALWAYS AS IDENTITY,
            uid text NOT NULL,
            role text NOT NULL,
            text text NOT NULL,
            session_id text,
            at double precision NOT NULL,
            metadata text NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, uid))""",
            "CREATE INDEX turns_id ON turns(id)",
            "CREATE INDEX turns_tenant ON turns(tenant_id, at)",
            """CREATE TABLE memories(
            tenant_id bigint NOT NULL REFERENCES tenants(id),
            id bigint GENERATED ALWAYS AS IDENTITY,
            uid text NOT NULL,
            agent_id text,
            run_id text,
            text text NOT NULL,
            kind text NOT NULL,
            state text NOT NULL CHECK (state IN ('active', 'released', 'superseded')),
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            expires_at double precision,
            metadata text NOT NULL DEFAULT '{}',
            superseded_by bigint,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, uid),
            FOREIGN KEY (tenant_id, superseded_by) REFERENCES memories(tenant_id, id)
                ON DELETE SET NULL (superseded_by))""",
            "CREATE INDEX memories_id ON memories(id)",
            "CREATE INDEX memories_tenant_state ON memories(tenant_id, state)",
            "CREATE INDEX memories_expiry ON memories(expires_at) WHERE expires_at IS NOT NULL",
            "CREATE INDEX memories_successor ON memories(tenant_id, superseded_by)"
            " WHERE superseded_by IS NOT NULL",
            """CREATE TABLE provenance(
            tenant_id bigint NOT NULL,
            memory_id bigint NOT NULL,
            turn_id bigint NOT NULL,
            PRIMARY KEY (tenant_id, memory_id, turn_id),
            FOREIGN KEY (tenant_id, memory_id) REFERENCES memories(tenant_id, id)
                ON DELETE CASCADE,
            FOREIGN KEY (tenant_id, turn_id) REFERENCES turns(tenant_id, id)
                ON DELETE CASCADE)""",
            "CREATE INDEX provenance_memory ON provenance(memory_id)",
            "CREATE INDEX provenance_turn ON provenance(turn_id, memory_id)",
            "CREATE INDEX provenance_tenant_turn ON provenance(tenant_id, turn_id)",
            """CREATE TABLE audit(
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at double precision NOT NULL,
            tenant text NOT NULL,
            op text NOT NULL,
            detail text NOT NULL,
            refs text NOT NULL,
            prev text NOT NULL,
            hash text NOT NULL)""",
            """CREATE TABLE audit_refs(
            ref text NOT NULL,
            seq bigint NOT NULL REFERENCES audit(seq),
            PRIMARY KEY (ref, seq))""",
            """CREATE TABLE lexicon(
            tenant_id bigint NOT NULL,
            id bigint GENERATED ALWAYS AS IDENTITY,
            digest bytea NOT NULL,
            mdf integer NOT NULL DEFAULT 0,
            tdf integer NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, digest))""",
            *postings,
            """CREATE TABLE term_stats(
            tenant_id bigint NOT NULL,
            kind text NOT NULL,
            docs bigint NOT NULL,
            length bigint NOT NULL,
            PRIMARY KEY (tenant_id, kind))""",
            f"""CREATE TABLE memory_vectors(
            tenant_id bigint NOT NULL,
            id bigint NOT NULL,
            embedding vector({int(dim)}) NOT NULL,
            PRIMARY KEY (tenant_id, id))""",
            "CREATE INDEX memory_vectors_hnsw ON memory_vectors"
            " USING hnsw (embedding vector_cosine_ops)",
            # The parts a forget left dead rows in, until erase() rewrites them
            # (committed with the forget, so no process's erase() misses one).
            "CREATE TABLE erasure_queue(seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            " part integer NOT NULL)",
            *(
                f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS 0"
                for table, columns in _NO_STATISTICS.items()
                for column in columns
            ),
        ]
    )


# Layouts a store can be upgraded from: version -> what it lacks.
_MIGRATIONS = {5}


_PACK_BATCH = 50_000  # old posting rows read at a time by _upgrade

# A tenant of up to this many memories is searched by an exact scan of its
# rows, a larger one in the HNSW index (``vector``). Measured at a million
# memories (``bench/pg_vectors.py``): the exact top 80 costs ~0.6 us a row
# (6 ms at 10,000); HNSW takes ~1 ms for a tenant alone in its part but
# ~30 ms for a small tenant in a shared one, and is approximate.
EXACT_UP_TO = 10_000


def _upgrade(conn: psycopg.Connection[Any]) -> None:
    """Bring a store of schema v5 to ``SCHEMA_VERSION`` (inside the opening
    transaction, under the write lock): its row-per-posting tables packed
    into blocks (``storage.postings``), read once each in key order through
    a server-side cursor, and their documents' rows written; the lexicon
    and statistics stay as they were."""
    for stmt in _partitioned(_blocks()):
        conn.execute(stmt)
    for old, prefix in (("memory_terms", "memory"), ("turn_terms", "turn")):

        def put(rows: list[tuple[int, ...]], prefix: str = prefix) -> None:
            blocks = [
                (tenant_id, term, b.first, *b.encode())
                for tenant_id, group in itertools.groupby(rows, key=lambda r: r[0])
                for term, b in postings.blocks_of_rows(r[1:] for r in group)
            ]
            if blocks:
                conn.execute(
                    f"INSERT INTO {prefix}_postings SELECT * FROM unnest(%s::bigint[],"
                    " %s::bigint[], %s::bigint[], %s::bytea[], %s::bytea[], %s::bytea[])",
                    [[b[i] for b in blocks] for i in range(6)],
                )

        with conn.cursor(name=f"pack_{prefix}") as cursor:
            cursor.execute(
                f"SELECT tenant_id, term, doc, tf, len FROM {old} ORDER BY tenant_id, term, doc"
            )
            carry: list[tuple[int, ...]] = []
            while batch := cursor.fetchmany(_PACK_BATCH):
                rows = carry + [tuple(r) for r in batch]
                # the last term may go on in the next batch: it waits for it
                cut = len(rows)
                while cut and rows[cut - 1][:2] == rows[-1][:2]:
                    cut -= 1
                put(rows[:cut])
                carry = rows[cut:]
            put(carry)
        conn.execute(
            f"INSERT INTO {prefix}_docs SELECT tenant_id, doc, min(len),"
            f" array_agg(term ORDER BY term) FROM {old} GROUP BY tenant_id, doc"
        )
        conn.execute(f"DROP TABLE {old}")
    conn.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


# What a store holds from birth (api_keys comes with the first server).
_OWN_TABLES = frozenset(
    {"meta", "secrets", "tenants", "audit", "audit_refs", "erasure_queue", *_TENANT_TABLES}
)

_FOREIGN = "a PostgreSQL database with tables unrecall did not make"


# Schema v5 kept a row per posting (upgraded on open, ``_migrations``).
_V5_TABLES = (_OWN_TABLES - {f"{p}_{t}" for p in _KIND.values() for t in ("postings", "docs")}) | {
    "memory_terms",
    "turn_terms",
}


def _check_tables(tables: set[str]) -> None:
    """Refuse a database that is not a store of this layout or of one it
    upgrades from."""
    if tables and not (tables >= _OWN_TABLES or tables >= _V5_TABLES):
        if _OWN_TABLES - tables == {"erasure_queue"}:
            raise StoreError(
                "this PostgreSQL store has a development layout from before tenant partitions;"
                " it cannot be opened: export its users and add them to a new database"
            )
        raise NotAStore(_FOREIGN)


_API_KEYS = (
    "CREATE TABLE IF NOT EXISTS api_keys(id text PRIMARY KEY, digest bytea NOT NULL UNIQUE,"
    " tenant text NOT NULL, created_at double precision NOT NULL)",
    "ALTER TABLE api_keys ALTER COLUMN tenant SET STATISTICS 0",
)


def _memory(row: Sequence[Any]) -> MemoryRow:
    return MemoryRow(*row[:11], json.loads(row[11]), row[12])


def _turn(row: Sequence[Any]) -> TurnRow:
    return TurnRow(*row[:7], json.loads(row[7]))


def _array(value: Any) -> np.ndarray:
    """A pgvector column value as float32 (binary results load as ``Vector``)."""
    if isinstance(value, Vector):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def _wrap(exc: psycopg.Error) -> StoreError:
    """A driver error as ``StoreError``: the class and SQLSTATE only, since
    the server's message and detail may quote parameters (personal data)."""
    if isinstance(exc, pgerrors.LockNotAvailable):
        return StoreBusy("the store is busy: another process held a lock past the busy timeout")
    state = getattr(exc, "sqlstate", None) or "no sqlstate"
    return StoreError(f"the database failed a statement ({type(exc).__name__}, {state})")


# Documents indexed in the open transaction, waiting to go into their
# terms' blocks and to be counted in the lexicon's document frequencies and
# term_stats (``_flush``): once per transaction (or per FLUSH_EVERY
# documents) instead of one rewrite of the same blocks and counters per
# document, which within one transaction leaves a chain of row versions that
# every later update walks (quadratic in a big import). A temporary table, so
# a savepoint's rollback takes its rows with it; it holds term ids, tfs and
# lengths, no content.
_PENDING = (
    "CREATE TEMPORARY TABLE IF NOT EXISTS pending_docs(tenant_id bigint NOT NULL,"
    " kind text NOT NULL, doc bigint NOT NULL, terms bigint[] NOT NULL, tfs int[] NOT NULL,"
    " len int NOT NULL) ON COMMIT DELETE ROWS"
)


def _configure(conn: psycopg.Connection[Any]) -> None:
    """A new pooled connection: pgvector's types, and the session's own
    ``pending_docs``."""
    register_vector(conn)
    conn.execute(_PENDING)


class _Local(threading.local):
    """The calling thread's transaction: depth, connection and its caches."""

    def __init__(self) -> None:
        self.depth = 0
        self.conn: psycopg.Connection[Any] | None = None
        # tenants whose rows the open transaction changed (their version moves)
        self.touched: set[int] = set()
        # (tenant id, hex digest) -> lexicon id, for the open transaction
        self.terms: dict[tuple[int, str], int] = {}
        self.pipeline: psycopg.Pipeline | None = None  # the transaction's pipeline
        self.iterative = False  # hnsw.iterative_scan set in this transaction
        # documents put in pending_docs since the last _flush (after a
        # savepoint's rollback: maybe some)
        self.pending = 0
        # a DELETE or UPDATE ran: the touched tenants' parts hold dead rows
        self.removed = False
        self.dropped: set[int] = set()  # tenants erased whole (not in touched)


class PostgresStorage:
    """``Storage`` over a PostgreSQL database with pgvector. One object may
    be shared by threads (each thread's transaction is its own), and any
    number of processes may open the same database."""

    def __init__(
        self,
        url: str,
        dim: int,
        embedder_name: str,
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
        deferred: bool = False,
    ) -> None:
        self.dim = dim
        self.deferred = deferred  # erase() rewrites only when asked to now
        self._url = url
        self._lock_ms = max(1, int(busy_timeout * 1000))
        self._local = _Local()
        self._erase_hooks: list[Callable[[], None]] = []
        self._closed = False
        # The schema (and the vector type) exist before the pool opens:
        # register_vector needs the type on every pooled connection.
        self._migrate(embedder_name)
        try:
            self._pool: ConnectionPool[Any] = ConnectionPool(
                url,
                min_size=POOL_MIN,
                max_size=POOL_MAX,
                kwargs={"autocommit": True},
                configure=_configure,
                open=True,
            )
            self._pool.wait(timeout=max(busy_timeout, 5.0))
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to the database ({type(exc).__name__})") from None
        except Exception as exc:  # psycopg_pool.PoolTimeout and friends
            raise StoreError(f"cannot connect to the database ({type(exc).__name__})") from None

    # -- lifecycle -------------------------------------------------------
    def _migrate(self, embedder_name: str) -> None:
        """Create the schema if absent, as one migration under the write
        lock (several processes opening a new database queue here), and
        check the version and the embedder of an existing store."""
        try:
            conn = psycopg.connect(self._url, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to the database ({type(exc).__name__})") from None
        try:
            with conn.transaction():
                self._lock(conn)
                tables = {
                    r[0]
                    for r in conn.execute(
                        "SELECT table_name FROM information_schema.tables"
                        " WHERE table_schema = current_schema()"
                    )
                }
                _check_tables(tables)
                if not tables:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    for stmt in _schema(self.dim):
                        conn.execute(stmt)
                    conn.execute(
                        "INSERT INTO meta VALUES ('schema_version', %s), ('embedder', %s),"
                        " ('dim', %s), ('created_at', %s), ('partitions', %s)",
                        (
                            str(SCHEMA_VERSION),
                            embedder_name,
                            str(self.dim),
                            str(time.time()),
                            str(PARTITIONS),
                        ),
                    )
                    conn.execute(
                        "INSERT INTO secrets VALUES ('store_key', %s)", (secrets.token_bytes(32),)
                    )
                meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
                version = int(meta.get("schema_version", "0"))
                if tables and version in _MIGRATIONS and version < SCHEMA_VERSION:
                    _upgrade(conn)
                    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except psycopg.Error as exc:
            conn.close()
            raise _wrap(exc) from None
        except StoreError:
            conn.close()
            raise
        conn.close()
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"store schema v{version} is newer than this unrecall (v{SCHEMA_VERSION})"
            )
        if version < SCHEMA_VERSION:
            raise StoreError(f"store schema v{version} is not a known PostgreSQL layout")
        self._partitions = int(meta["partitions"])
        stored = meta.get("embedder")
        if stored != embedder_name:
            raise StoreError(
                f"store was built with embedder {stored!r}, not {embedder_name!r};"
                " open it with the same embedder"
            )

    def _lock(self, conn: psycopg.Connection[Any]) -> None:
        """Take the store's write lock inside ``conn``'s transaction, waiting
        at most the busy timeout (which then holds for the transaction's
        other lock waits too)."""
        conn.execute(f"SET LOCAL lock_timeout = {self._lock_ms}")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))

    @contextmanager
    def _reading(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection to read on: this thread's transaction's, else a
        pooled one in autocommit."""
        local = self._local
        if local.conn is not None:
            yield local.conn
            return
        if self._closed:
            raise StoreError("the store is closed")
        with self._pool.connection() as conn:
            yield conn

    def _rows(
        self, sql: str, args: Sequence[Any] = (), binary: bool = False
    ) -> list[tuple[Any, ...]]:
        try:
            with self._reading() as conn:
                return conn.execute(sql, args, binary=binary).fetchall()  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise _wrap(exc) from None

    def _scalar(self, sql: str, args: Sequence[Any] = ()) -> Any:
        rows = self._rows(sql, args)
        return rows[0][0] if rows else None

    def _write(self, sql: str, args: Sequence[Any] = (), *, upkeep: bool = False) -> None:
        """Send a statement of the open transaction without waiting for it:
        the transaction runs in pipeline mode, so statements whose result
        nobody reads cost no round trip each (an error surfaces at the next
        read, savepoint end or commit, and rolls back as before). A DELETE or
        UPDATE marks the transaction's parts for erasure unless ``upkeep``:
        index upkeep of what stays (a block gaining a document, a count
        moving) leaves old row versions that hold nothing being forgotten;
        the next forget's rewrite of the part takes them too."""
        self._send(sql, args, upkeep)

    def _returning(
        self, sql: str, args: Sequence[Any] = (), *, upkeep: bool = False
    ) -> list[tuple[Any, ...]]:
        """Run a statement of the open transaction and return its rows."""
        try:
            return self._send(sql, args, upkeep).fetchall()
        except psycopg.Error as exc:
            raise _wrap(exc) from None

    def _send(self, sql: str, args: Sequence[Any], upkeep: bool) -> psycopg.Cursor[Any]:
        conn = self._local.conn
        if conn is None:
            raise StoreError("a write outside a transaction")
        if not upkeep and sql.startswith(("DELETE", "UPDATE")):
            self._local.removed = True  # the old row versions stay until erase()
        try:
            return conn.execute(sql, args)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise _wrap(exc) from None

    def upgrades(self) -> list[str]:
        """Migration steps that need the planes (``reindex``)."""
        value = self._scalar("SELECT value FROM meta WHERE key = 'upgrade'")
        return value.split() if value else []

    def upgraded(self, step: str) -> None:
        """Mark an upgrade step done (call inside the step's transaction)."""
        rest = [s for s in self.upgrades() if s != step]
        if rest:
            self._write("UPDATE meta SET value = %s WHERE key = 'upgrade'", (" ".join(rest),))
        else:
            self._write("DELETE FROM meta WHERE key = 'upgrade'")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The outermost level takes a pooled connection, begins and takes
        the store's advisory write lock; inner levels are savepoints. An
        exception rolls back its level and is re-raised. Bound to the
        calling thread."""
        local = self._local
        if local.depth:
            yield from self._savepoint(local)
            return
        if self._closed:
            raise StoreError("the store is closed")
        try:
            conn = self._pool.getconn()
        except Exception as exc:
            raise StoreError(f"cannot get a database connection ({type(exc).__name__})") from None
        try:
            try:
                conn.execute("BEGIN")
                self._lock(conn)
            except psycopg.Error as exc:
                self._abort(conn)
                raise _wrap(exc) from None
            local.conn, local.depth = conn, 1
            local.touched.clear()
            local.terms.clear()
            local.iterative = False
            local.pending = 0
            local.removed = False
            local.dropped.clear()
            try:
                # Pipeline mode: writes whose result is not read go out
                # without a round trip each (ingest was round-trip bound).
                with conn.pipeline() as pipe:
                    local.pipeline = pipe
                    try:
                        yield
                        self._commit(conn, local)
                    except BaseException:
                        # take a failed write's error here: on leaving the
                        # pipeline psycopg would log its message, which may
                        # quote a value
                        with suppress(psycopg.Error):
                            pipe.sync()
                        raise
            except BaseException:
                self._abort(conn)
                raise
        finally:
            local.conn, local.depth, local.pipeline = None, 0, None
            local.touched.clear()
            local.terms.clear()
            self._pool.putconn(conn)

    def _savepoint(self, local: _Local) -> Iterator[None]:
        conn, pipe = local.conn, local.pipeline
        assert conn is not None and pipe is not None
        name = f"sp{local.depth}"
        conn.execute(f"SAVEPOINT {name}")
        local.depth += 1
        try:
            yield
            try:  # a write of this level that failed fails this level
                pipe.sync()
            except psycopg.Error as exc:
                raise _wrap(exc) from None
        except BaseException:
            local.depth -= 1
            local.terms.clear()  # lexicon rows made inside are rolled back
            local.pending = 1  # pending_docs rows flushed inside come back
            with suppress(psycopg.Error):  # a broken connection: the outer level rolls back
                pipe.sync()
                conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                conn.execute(f"RELEASE SAVEPOINT {name}")
                pipe.sync()
            raise
        local.depth -= 1
        conn.execute(f"RELEASE SAVEPOINT {name}")

    def _commit(self, conn: psycopg.Connection[Any], local: _Local) -> None:
        touched = sorted(local.touched)
        try:
            self._flush()
            if local.removed and (local.touched or local.dropped):
                conn.execute(
                    "INSERT INTO erasure_queue(part) SELECT DISTINCT r"
                    " FROM unnest(%s::bigint[]) AS t, generate_series(0, %s - 1) AS r"
                    " WHERE satisfies_hash_partition('memories'::regclass, %s, r, t)",
                    (sorted(local.touched | local.dropped), self._partitions, self._partitions),
                )
            if touched:
                conn.execute(
                    "UPDATE tenants SET version = version + 1 WHERE id = ANY(%s)", (touched,)
                )
            conn.execute("COMMIT")
            assert local.pipeline is not None
            local.pipeline.sync()  # the errors of writes sent and not read come here
        except psycopg.Error as exc:
            if isinstance(exc, pgerrors.LockNotAvailable):
                raise _wrap(exc) from None
            raise StoreError(
                f"the commit failed ({type(exc).__name__}); nothing was written"
            ) from None

    @staticmethod
    def _abort(conn: psycopg.Connection[Any]) -> None:
        with suppress(psycopg.Error):  # a broken connection: the pool discards it
            conn.execute("ROLLBACK")

    def held(self) -> bool:
        """True when the calling thread is inside a transaction."""
        return self._local.depth > 0

    def secret_key(self) -> bytes:
        """The per-store random key (made once at creation)."""
        return bytes(self._scalar("SELECT value FROM secrets WHERE name = 'store_key'"))

    def erase(self, now: bool = False) -> bool:
        """Run the ``on_erase`` hooks, then push committed deletions out of
        the server's files (``_rewrite``): True when nothing of them is left
        in the data directory or the WAL, nor anywhere the server copies WAL
        to. Inside a transaction, or when the rewrite cannot get a table's
        lock within the busy timeout, nothing is rewritten or claimed
        (False); the next ``erase()`` or ``compact()`` finishes the job.
        With deferred erasure nothing is rewritten unless ``now``: the
        queued parts wait for one rewrite that covers every forget since."""
        for hook in self._erase_hooks:
            hook()
        if self.held() or self._closed or (self.deferred and not now):
            return False
        try:
            with self._pool.connection() as conn:
                return self._rewrite(conn)
        except pgerrors.LockNotAvailable:
            return False  # readers or writers of other processes held on
        except psycopg.Error as exc:
            raise _wrap(exc) from None

    def _rewrite(
        self,
        conn: psycopg.Connection[Any],
        tick: Callable[[], None] | None = None,
        everything: bool = False,
    ) -> bool:
        """VACUUM FULL the tenant-table parts that committed forgets left
        dead rows in (``erasure_queue``; every part with ``everything``) and
        the shared content tables: new files with the live rows only (a plain
        VACUUM frees dead rows' space without zeroing it). Then switch to a
        new WAL segment and checkpoint, twice, so the segments that held the
        deleted rows and their page images are removed. True when that left
        no copy: no ``erasure_gaps`` on the server, and no other session of
        this database holding a snapshot that may still see the deleted rows
        (VACUUM FULL keeps those). That is checked after the queue is read
        and before the rewrite, waiting up to the busy timeout for such a
        snapshot to end: a snapshot taken later cannot see rows whose delete
        committed. The queue entries read go only when the rewrite was clean."""
        with conn.transaction():  # under the write lock no forget is mid-commit
            self._lock(conn)
            queued = conn.execute("SELECT part, seq FROM erasure_queue").fetchall()
        clean = self._no_older_snapshots(conn)
        if everything:
            # every part that has pages; rewriting the never-written ones
            # would only grow the catalogue (a new file per table each time)
            tables = [
                name
                for (name,) in conn.execute(
                    "SELECT relname::text FROM pg_class WHERE relname = ANY(%s)"
                    " AND relnamespace = current_schema()::regnamespace"
                    " AND pg_relation_size(oid) > 0 ORDER BY relname",
                    ([f"{t}_p{p}" for p in range(self._partitions) for t in _TENANT_TABLES],),
                )
            ]
        else:
            parts = sorted({p for p, _ in queued})
            tables = [f"{t}_p{p}" for p in parts for t in _TENANT_TABLES]
        tables += _SHARED_CONTENT_TABLES
        if conn.execute("SELECT to_regclass('api_keys')").fetchone()[0] is not None:  # type: ignore[index]
            tables.append("api_keys")
        conn.execute(f"SET lock_timeout = {self._lock_ms}")
        try:  # a lock wait past the busy timeout raises LockNotAvailable
            for table in tables:
                conn.execute(f"VACUUM FULL {table}")
                if tick is not None:
                    tick()
        finally:
            conn.execute("RESET lock_timeout")
        if clean and queued:
            conn.execute(
                "DELETE FROM erasure_queue WHERE seq <= %s", (max(seq for _, seq in queued),)
            )
        try:
            for _ in range(2):
                conn.execute("SELECT pg_switch_wal()")
                conn.execute("CHECKPOINT")
        except pgerrors.InsufficientPrivilege:
            return False  # the segments stay until the server's own checkpoints
        return clean and not self.erasure_gaps()

    def _no_older_snapshots(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether, within the busy timeout, no other session of this
        database holds a snapshot (or a transaction) older than now: one that
        may still see rows whose delete committed before this call."""
        now = conn.execute(
            "SELECT (pg_snapshot_xmax(pg_current_snapshot())::text::bigint % 4294967296)::text"
        ).fetchone()[0]  # type: ignore[index]
        deadline = time.monotonic() + self._lock_ms / 1000
        while True:
            older = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND (age(backend_xmin) > age(%s::xid)"
                " OR age(backend_xid) > age(%s::xid))",
                (now, now),
            ).fetchone()[0]  # type: ignore[index]
            if not older:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)

    def erasure_gaps(self) -> list[str]:
        """What about the server keeps copies that ``erase()`` cannot
        remove: WAL, or a server log of statements with their values. Each
        entry names a setting or a consumer, and what to change. Empty when a
        forget can be erased for good (the server must remove WAL segments
        rather than recycle them, copy them nowhere, and log no parameters)."""
        settings = dict(
            self._rows(
                "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)",
                (list(_ERASURE_SETTINGS),),
            )
        )
        gaps = []
        if settings.get("log_parameter_max_length") != "0":
            # a statement that is logged is logged with its values: the text
            logged = {
                "log_statement is mod or all": settings.get("log_statement") in ("mod", "all"),
                "log_min_duration_statement is set": settings.get("log_min_duration_statement")
                != "-1",
                "log_min_duration_sample is set": settings.get("log_min_duration_sample") != "-1"
                and settings.get("log_statement_sample_rate") != "0",
                "log_transaction_sample_rate is set": settings.get("log_transaction_sample_rate")
                != "0",
            }
            gaps += [
                f"{why}: the server log keeps statements' values (set log_parameter_max_length = 0)"
                for why, on in logged.items()
                if on
            ]
        if settings.get("log_parameter_max_length_on_error") != "0":
            gaps.append(
                "log_parameter_max_length_on_error is not 0: the server log keeps failed"
                " statements' values"
            )
        if settings.get("wal_recycle") != "off":
            gaps.append("wal_recycle is on: recycled WAL segments keep old rows (set it off)")
        if settings.get("archive_mode") != "off":
            gaps.append("archive_mode is on: archived WAL keeps old rows")
        if settings.get("wal_keep_size") != "0":
            gaps.append("wal_keep_size is not 0: kept WAL segments hold old rows")
        if self._scalar("SELECT count(*) FROM pg_replication_slots"):
            gaps.append("a replication slot holds WAL back")
        if self._scalar("SELECT count(*) FROM pg_stat_replication"):
            gaps.append("a standby receives the WAL (its copy is not erased here)")
        return gaps

    def on_erase(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` on every ``erase``."""
        self._erase_hooks.append(hook)

    def size(self) -> int:
        """The bytes of this database (``pg_database_size``), not of the
        server's other databases or its WAL."""
        return int(self._scalar("SELECT pg_database_size(current_database())"))

    def files(self) -> list[Path]:
        """Every regular file of the server's data directory (base/ and
        pg_wal/ included), when it is readable on this machine."""
        try:
            where = self._scalar("SHOW data_directory")
        except StoreError:
            where = None  # not allowed to see it: treat as remote
        root = Path(where) if where else None
        if root is None or not root.is_dir() or not os.access(root, os.R_OK | os.X_OK):
            raise StoreError(
                "the database's files are on another machine: erasure cannot be verified from here"
            )
        out = []
        for dirpath, _dirs, names in os.walk(root):
            for name in names:
                path = Path(dirpath) / name
                if path.is_file() and not path.is_symlink():
                    out.append(path)
        return sorted(out)

    def compact(self, tick: Callable[[], None] | None = None) -> None:
        """The rewrite ``erase()`` runs (``_rewrite``), of every part of every
        content table rather than the queued ones: VACUUM FULL, giving their
        space back to the file system, and the WAL pass; ``tick`` is called
        between tables."""
        if self.held():
            raise StoreError("compact cannot run inside a transaction")
        try:
            with self._pool.connection() as conn:
                self._rewrite(conn, tick, everything=True)
        except psycopg.Error as exc:
            raise _wrap(exc) from None

    def searched(self) -> None:
        """Nothing: PostgreSQL keeps its own buffers."""

    def close(self) -> None:
        """Close the connection pool (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._pool.close()

    # -- tenants and turns ----------------------------------------------
    def tenant(self, key: str, create: bool) -> int | None:
        """Look up (and optionally create) a tenant row; a new tenant gets a
        random audit handle (``tenant_handle``)."""
        tid = self._scalar("SELECT id FROM tenants WHERE key = %s", (key,))
        if tid is None and create:
            with self.transaction():
                # again under the write lock: another process may have made it
                tid = self._scalar("SELECT id FROM tenants WHERE key = %s", (key,))
                if tid is None:
                    tid = self._returning(
                        "INSERT INTO tenants(key, handle) VALUES (%s, %s) RETURNING id",
                        (key, secrets.token_hex(16)),
                    )[0][0]
        return tid

    def tenant_handle(self, tenant_id: int) -> str | None:
        """The random audit handle of a tenant id (gone with the tenant)."""
        return self._scalar("SELECT handle FROM tenants WHERE id = %s", (tenant_id,))

    def tenant_version(self, tenant_id: int) -> int:
        """A number that moves with every transaction that changed the
        tenant's memories, turns or provenance, or -1 when the tenant is gone."""
        version = self._scalar("SELECT version FROM tenants WHERE id = %s", (tenant_id,))
        return -1 if version is None else int(version)

    def erase_tenant(self, tenant_id: int) -> tuple[int, int]:
        """Delete everything of a tenant (index rows, lexicon, vectors,
        memories, turns, API keys, the tenant row) with set statements, so a
        tenant of any size goes. Returns (memories, turns) deleted."""
        with self.transaction():
            t = (tenant_id,)
            self._flush()
            turns = self._scalar("SELECT count(*) FROM turns WHERE tenant_id = %s", t)
            memories = self._scalar("SELECT count(*) FROM memories WHERE tenant_id = %s", t)
            for table in (
                "memory_postings",
                "turn_postings",
                "memory_docs",
                "turn_docs",
                "lexicon",
                "term_stats",
                "memory_vectors",
                "provenance",
            ):
                self._write(f"DELETE FROM {table} WHERE tenant_id = %s", t)
            self._write(
                "UPDATE memories SET superseded_by = NULL WHERE tenant_id = %s"
                " AND superseded_by IS NOT NULL",
                t,
            )
            self._write("DELETE FROM memories WHERE tenant_id = %s", t)
            self._write("DELETE FROM turns WHERE tenant_id = %s", t)
            if self._scalar("SELECT to_regclass('api_keys')") is not None:
                # a served store: the tenant's API keys name it, and go too
                self._write(
                    "DELETE FROM api_keys WHERE tenant = (SELECT key FROM tenants WHERE id = %s)", t
                )
            self._write("DELETE FROM tenants WHERE id = %s", t)
            self._local.touched.discard(tenant_id)
            self._local.dropped.add(tenant_id)
            self._local.terms.clear()
        return int(memories), int(turns)

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
        turn = TurnRow(0, new_uid("t"), tenant_id, role, text, session_id, at, metadata)
        return self.put_turn(tenant_id, turn)

    def turn(self, tenant_id: int, uid: str) -> TurnRow | None:
        """A turn by public id within a tenant."""
        rows = self._rows(
            f"SELECT {_TURN_COLS} FROM turns WHERE tenant_id = %s AND uid = %s", (tenant_id, uid)
        )
        return _turn(rows[0]) if rows else None

    def turns(self, tenant_id: int) -> list[TurnRow]:
        """All turns of a tenant, oldest first."""
        rows = self._rows(
            f"SELECT {_TURN_COLS} FROM turns WHERE tenant_id = %s ORDER BY at, id", (tenant_id,)
        )
        return [_turn(r) for r in rows]

    def turns_by_id(self, ids: Sequence[int]) -> list[TurnRow]:
        """Turns by internal id, in the given order, missing ones skipped."""
        if not ids:
            return []
        rows = self._rows(f"SELECT {_TURN_COLS} FROM turns WHERE id = ANY(%s)", (list(ids),))
        by_id = {r[0]: _turn(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def index_turn(self, turn: TurnRow, terms: str) -> None:
        """Insert a turn's full-text postings."""
        self._post("t", turn.tenant_id, turn.id, terms)

    def set_turn_text(self, turn: TurnRow, text: str, terms: str) -> None:
        """Overwrite a turn's text and its full-text postings."""
        self._write(
            "UPDATE turns SET text = %s WHERE tenant_id = %s AND id = %s",
            (text, turn.tenant_id, turn.id),
        )
        self._local.touched.add(turn.tenant_id)
        self._unpost("t", turn.tenant_id, [turn.id])
        self._post("t", turn.tenant_id, turn.id, terms)

    def delete_turns(self, turn_ids: Sequence[int]) -> None:
        """Delete turns and their full-text postings (provenance edges cascade)."""
        if self._local.conn is None:
            raise StoreError("a write outside a transaction")
        by_tenant: dict[int, list[int]] = {}
        for turn in self.turns_by_id(turn_ids):
            by_tenant.setdefault(turn.tenant_id, []).append(turn.id)
        for tenant_id, ids in by_tenant.items():
            self._local.touched.add(tenant_id)
            self._unpost("t", tenant_id, ids)
            self._write("DELETE FROM turns WHERE tenant_id = %s AND id = ANY(%s)", (tenant_id, ids))

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
        row = MemoryRow(
            0, new_uid("m"), tenant_id, agent_id, run_id, text, kind, "active", at, at,
            expires_at, metadata, None,
        )  # fmt: skip
        return self.put_memory(tenant_id, row, sources)

    def _touch(self, memory_ids: Sequence[int]) -> None:
        """Note the tenants of memories this transaction changes."""
        if memory_ids:
            self._local.touched.update(
                r[0]
                for r in self._rows(
                    "SELECT DISTINCT tenant_id FROM memories WHERE id = ANY(%s)",
                    (list(memory_ids),),
                )
            )

    def link(self, memory_ids: Sequence[int], turn_id: int) -> None:
        """Add ``turn_id`` as one more source of each memory (a repetition)."""
        if self._local.conn is None:
            raise StoreError("a write outside a transaction")
        self._touch(memory_ids)
        if memory_ids:
            self._write(
                "INSERT INTO provenance(tenant_id, memory_id, turn_id)"
                " SELECT m.tenant_id, m.id, %s FROM memories m WHERE m.id = ANY(%s)"
                " ON CONFLICT DO NOTHING",
                (turn_id, list(memory_ids)),
            )

    def memory(self, tenant_id: int, uid: str) -> MemoryRow | None:
        """A memory by public id within a tenant."""
        rows = self._rows(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.tenant_id = %s AND m.uid = %s",
            (tenant_id, uid),
        )
        return _memory(rows[0]) if rows else None

    def memories(self, tenant_id: int, states: Sequence[str] | None = None) -> list[MemoryRow]:
        """A tenant's memories, oldest first, optionally only those in ``states``."""
        sql = f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.tenant_id = %s"
        args: list[Any] = [tenant_id]
        if states is not None:
            sql += " AND m.state = ANY(%s)"
            args.append(list(states))
        return [_memory(r) for r in self._rows(sql + " ORDER BY m.id", args)]

    def count_memories(self, tenant_id: int) -> int:
        """How many memories a tenant holds, in any state."""
        return int(self._scalar("SELECT count(*) FROM memories WHERE tenant_id = %s", (tenant_id,)))

    def memories_by_id(self, ids: Sequence[int]) -> list[MemoryRow]:
        """Memories by internal id, in the given order, missing ones skipped."""
        if not ids:
            return []
        rows = self._rows(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.id = ANY(%s)", (list(ids),)
        )
        by_id = {r[0]: _memory(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def sources(self, memory_ids: Sequence[int]) -> dict[int, list[TurnRow]]:
        """Source turns per memory id, oldest first."""
        out: dict[int, list[TurnRow]] = {m: [] for m in memory_ids}
        if not memory_ids:
            return out
        edges = self._rows(
            "SELECT memory_id, turn_id FROM provenance WHERE memory_id = ANY(%s)",
            (list(memory_ids),),
        )
        # each turn read once, however many of the memories it sources
        turns = {t.id: t for t in self.turns_by_id(list(dict.fromkeys(e[1] for e in edges)))}
        for mid, tid in edges:
            if tid in turns:
                out[mid].append(turns[tid])
        for found in out.values():
            found.sort(key=lambda t: (t.at, t.id))
        return out

    def statements(self, memory_ids: Sequence[int]) -> dict[int, tuple[int, list[int]]]:
        """Per memory id: the statement (first source turn) it came from and
        every memory derived from that turn, in id order."""
        if not memory_ids:
            return {}
        firsts = self._rows(
            "SELECT tenant_id, memory_id, min(turn_id) FROM provenance"
            " WHERE memory_id = ANY(%s) GROUP BY tenant_id, memory_id ORDER BY memory_id",
            (list(memory_ids),),
        )
        # The siblings by tenant, so each read touches one part through its
        # (tenant_id, turn_id) index: joined to the first query, the planner
        # costed a probe of all 16 parts per row and sorted the whole
        # provenance table instead, O(store).
        siblings: dict[tuple[int, int], list[int]] = {}
        for tenant_id in sorted({f[0] for f in firsts}):
            turn_ids = sorted({f[2] for f in firsts if f[0] == tenant_id})
            for tid, sibling in self._rows(
                "SELECT turn_id, memory_id FROM provenance WHERE tenant_id = %s"
                " AND turn_id = ANY(%s) ORDER BY memory_id",
                (tenant_id, turn_ids),
            ):
                siblings.setdefault((tenant_id, tid), []).append(sibling)
        out: dict[int, tuple[int, list[int]]] = {}
        for tenant_id, mid, tid in firsts:
            out[mid] = (tid, siblings.get((tenant_id, tid), []))
        return out

    def derived(self, turn_ids: Sequence[int]) -> list[int]:
        """Ids of every memory with a provenance edge to one of the turns."""
        if not turn_ids:
            return []
        rows = self._rows(
            "SELECT DISTINCT memory_id FROM provenance WHERE turn_id = ANY(%s)", (list(turn_ids),)
        )
        return [r[0] for r in rows]

    def set_state(self, ids: Sequence[int], state: str, at: float) -> None:
        """Move memories to a state and touch ``updated_at``."""
        self._require_tx()
        self._touch(ids)
        if ids:
            self._write(
                "UPDATE memories SET state = %s, updated_at = %s WHERE id = ANY(%s)",
                (state, at, list(ids)),
            )

    def set_superseded_by(self, ids: Sequence[int], successor: int) -> None:
        """Record the successor of superseded memories."""
        self._require_tx()
        self._touch(ids)
        if ids:
            self._write(
                "UPDATE memories SET superseded_by = %s WHERE id = ANY(%s)", (successor, list(ids))
            )

    def set_text(self, memory_id: int, text: str, at: float) -> None:
        """Overwrite a memory's text in place."""
        self._require_tx()
        self._touch([memory_id])
        self._write(
            "UPDATE memories SET text = %s, updated_at = %s WHERE id = %s", (text, at, memory_id)
        )

    def set_expiry(self, memory_id: int, expires_at: float | None) -> None:
        """Set or clear a memory's expiry time."""
        self._require_tx()
        self._touch([memory_id])
        self._write("UPDATE memories SET expires_at = %s WHERE id = %s", (expires_at, memory_id))

    def delete_memories(self, ids: Sequence[int]) -> None:
        """Hard-delete memories and their recall rows (provenance cascades,
        a successor link to them is cleared)."""
        self._require_tx()
        rows = self.memories_by_id(ids)
        self._local.touched.update(r.tenant_id for r in rows)
        self.unindex([r for r in rows if r.state == "active"])
        if ids:
            self._write("DELETE FROM memories WHERE id = ANY(%s)", (list(ids),))

    def expired(self, now: float, states: Sequence[str]) -> list[MemoryRow]:
        """Memories of any tenant whose ``expires_at`` is at or before ``now``."""
        rows = self._rows(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.expires_at IS NOT NULL"
            " AND m.expires_at <= %s AND m.state = ANY(%s) ORDER BY m.id",
            (now, list(states)),
        )
        return [_memory(r) for r in rows]

    def _require_tx(self) -> None:
        if self._local.conn is None:
            raise StoreError("a write outside a transaction")

    # -- full-text postings ---------------------------------------------
    def _term_ids(self, tenant_id: int, digests: Sequence[str]) -> dict[str, int]:
        """The tenant's lexicon ids of term digests, made on first use
        (inside a transaction; ids seen in it are cached)."""
        cache = self._local.terms
        missing = [d for d in digests if (tenant_id, d) not in cache]
        if missing:
            blobs = [bytes.fromhex(d) for d in missing]
            for digest, term in self._returning(
                "SELECT digest, id FROM lexicon WHERE tenant_id = %s AND digest = ANY(%s)",
                (tenant_id, blobs),
            ):
                cache[(tenant_id, bytes(digest).hex())] = term
            new = [b for d, b in zip(missing, blobs, strict=True) if (tenant_id, d) not in cache]
            if new:
                for digest, term in self._returning(
                    "INSERT INTO lexicon(tenant_id, digest) SELECT %s, unnest(%s::bytea[])"
                    " RETURNING digest, id",
                    (tenant_id, new),
                ):
                    cache[(tenant_id, bytes(digest).hex())] = term
        return {d: cache[(tenant_id, d)] for d in digests}

    def _post(self, kind: str, tenant_id: int, doc: int, terms: str) -> None:
        """Index one document (``kind``: m for a memory, t for a turn): its
        row of terms and its postings are written at the next ``_flush``."""
        self._require_tx()
        digests = [d.lower() for d in terms.split()]
        if not digests:
            return
        counts = Counter(digests)
        ids = self._term_ids(tenant_id, list(counts))
        term_ids = [ids[d] for d in counts]
        self._write(
            "INSERT INTO pending_docs VALUES (%s, %s, %s, %s, %s, %s)",
            (tenant_id, kind, doc, term_ids, list(counts.values()), len(digests)),
        )
        self._local.pending += 1
        if self._local.pending >= FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        """Put the open transaction's pending documents into their terms'
        blocks and count them in the lexicon's document frequencies and
        term_stats: before anything reads the blocks or the counts, and at
        commit. One read of what is pending and of the blocks it lands in,
        then one write of each kind, whatever the number of documents."""
        if not self._local.pending:
            return
        self._local.pending = 0
        rows = self._returning(
            "WITH done AS (DELETE FROM pending_docs RETURNING *),"
            + ",".join(
                f" {prefix} AS (INSERT INTO {prefix}_docs SELECT tenant_id, doc, len,"
                f" ARRAY(SELECT unnest(terms) ORDER BY 1) FROM done WHERE kind = '{kind}')"
                for kind, prefix in _KIND.items()
            )
            + " SELECT tenant_id, kind, doc, terms, tfs, len FROM done",
            upkeep=True,
        )
        if not rows:
            return
        uses: Counter[tuple[int, int, str]] = Counter()
        stats: dict[tuple[int, str], list[int]] = {}
        added: dict[tuple[str, int], dict[int, list[tuple[int, int, int]]]] = {}
        for tenant_id, kind, doc, terms, tfs, length in rows:
            stat = stats.setdefault((tenant_id, kind), [0, 0])
            stat[0] += 1
            stat[1] += length
            for term, tf in zip(terms, tfs, strict=True):
                uses[(tenant_id, term, kind)] += 1
                added.setdefault((kind, tenant_id), {}).setdefault(term, []).append(
                    (doc, tf, length)
                )
        keys = sorted({(t, term) for t, term, _ in uses})
        self._write(
            "UPDATE lexicon l SET mdf = l.mdf + u.m, tdf = l.tdf + u.t FROM unnest("
            "%s::bigint[], %s::bigint[], %s::int[], %s::int[]) AS u(tenant, term, m, t)"
            " WHERE l.tenant_id = u.tenant AND l.id = u.term",
            (
                [t for t, _ in keys],
                [term for _, term in keys],
                [uses[(t, term, "m")] for t, term in keys],
                [uses[(t, term, "t")] for t, term in keys],
            ),
            upkeep=True,
        )
        pairs = sorted(stats)
        self._write(
            "INSERT INTO term_stats AS s SELECT * FROM unnest("
            "%s::bigint[], %s::text[], %s::bigint[], %s::bigint[])"
            " ON CONFLICT (tenant_id, kind)"
            " DO UPDATE SET docs = s.docs + excluded.docs, length = s.length + excluded.length",
            (
                [t for t, _ in pairs],
                [k for _, k in pairs],
                [stats[p][0] for p in pairs],
                [stats[p][1] for p in pairs],
            ),
        )
        for (kind, tenant_id), by_term in sorted(added.items()):
            docs = {term: [d for d, _, _ in new] for term, new in by_term.items()}
            held = self._blocks_of(kind, tenant_id, docs)
            old = [(term, b.first) for term, blocks in held.items() for b in blocks]
            self._replace_blocks(kind, tenant_id, old, postings.place(by_term, held))

    def _blocks_of(
        self, kind: str, tenant_id: int, docs: dict[int, list[int]]
    ) -> dict[int, list[postings.Block]]:
        """Per term, the blocks the given documents fall in (the last block
        starting at or before each, else the term's first), by first doc.
        Each round looks up, for every term still open, the block of its
        largest document not yet placed; every document at or after that
        block's start falls in it (no block starts between), so appends
        take one round."""
        table = f"{_KIND[kind]}_postings"
        left = {t: sorted(set(ds), reverse=True) for t, ds in docs.items()}
        found: dict[int, dict[int, postings.Block]] = {}
        while left:
            terms = sorted(left)
            rows = self._returning(
                "SELECT b.term, b.first, b.docs, b.tfs, b.lens"
                " FROM unnest(%(terms)s::bigint[], %(docs)s::bigint[]) AS x(term, doc)"
                " CROSS JOIN LATERAL (SELECT * FROM ("
                f" (SELECT 0 AS o, p.* FROM {table} p WHERE p.tenant_id = %(tenant)s"
                " AND p.term = x.term AND p.first <= x.doc ORDER BY p.first DESC LIMIT 1)"
                " UNION ALL"
                f" (SELECT 1, p.* FROM {table} p WHERE p.tenant_id = %(tenant)s"
                " AND p.term = x.term ORDER BY p.first LIMIT 1)) AS c ORDER BY c.o LIMIT 1) AS b",
                {"terms": terms, "docs": [left[t][0] for t in terms], "tenant": tenant_id},
            )
            got = {int(r[0]): postings.Block.decode(r[1], *map(bytes, r[2:])) for r in rows}
            for term in terms:
                block = got.get(term)
                if block is None:  # the term has no block yet
                    del left[term]
                    continue
                found.setdefault(term, {})[block.first] = block
                rest = [d for d in left[term] if d < block.first]
                # below the term's first block: they all fall in it
                if rest and block.first > left[term][0]:
                    rest = []
                if rest:
                    left[term] = rest
                else:
                    del left[term]
        return {t: [b[f] for f in sorted(b)] for t, b in found.items()}

    def _replace_blocks(
        self,
        kind: str,
        tenant_id: int,
        old: Sequence[tuple[int, int]],
        new: Sequence[tuple[int, postings.Block]],
    ) -> None:
        """Delete the blocks keyed ``old`` (term, first) and write ``new``."""
        table = f"{_KIND[kind]}_postings"
        if old:
            self._write(
                f"DELETE FROM {table} WHERE tenant_id = %s AND (term, first) IN"
                " (SELECT * FROM unnest(%s::bigint[], %s::bigint[]))",
                (tenant_id, [t for t, _ in old], [f for _, f in old]),
                upkeep=True,  # a forget's own delete of its documents' rows marks it
            )
        if new:
            packed = [b.encode() for _, b in new]
            self._write(
                f"INSERT INTO {table} SELECT %s, * FROM unnest("
                "%s::bigint[], %s::bigint[], %s::bytea[], %s::bytea[], %s::bytea[])",
                (
                    tenant_id,
                    [t for t, _ in new],
                    [b.first for _, b in new],
                    *([p[i] for p in packed] for i in range(3)),
                ),
            )

    def _unpost(self, kind: str, tenant_id: int, docs: Sequence[int]) -> None:
        """Take documents out of their terms' blocks; a term no document
        uses any more leaves the lexicon, its digest with it."""
        if not docs:
            return
        prefix, df = _KIND[kind], _DF[kind]
        self._flush()
        found = self._returning(
            f"DELETE FROM {prefix}_docs WHERE tenant_id = %s AND doc = ANY(%s)"
            " RETURNING doc, len, terms",
            (tenant_id, list(docs)),
        )
        if not found:
            return
        gone: dict[int, list[int]] = {}
        for doc, _, terms in found:
            for term in terms:
                gone.setdefault(term, []).append(doc)
        blocks = self._blocks_of(kind, tenant_id, gone)
        kept = [
            (term, left)
            for term, held in blocks.items()
            for left in (postings.without(b, gone[term]) for b in held)
            if left is not None
        ]
        old = [(term, b.first) for term, held in blocks.items() for b in held]
        self._replace_blocks(kind, tenant_id, old, kept)
        uses = {term: len(ds) for term, ds in gone.items()}
        terms = list(uses)
        self._write(
            f"UPDATE lexicon l SET {df} = l.{df} - u.n FROM unnest(%s::bigint[], %s::int[])"
            " AS u(t, n) WHERE l.tenant_id = %s AND l.id = u.t",
            (terms, [uses[t] for t in terms], tenant_id),
        )
        self._write(
            "DELETE FROM lexicon WHERE tenant_id = %s AND id = ANY(%s) AND mdf <= 0 AND tdf <= 0",
            (tenant_id, terms),
        )
        self._write(
            "UPDATE term_stats SET docs = docs - %s, length = length - %s"
            " WHERE tenant_id = %s AND kind = %s",
            (len(found), sum(n for _, n, _ in found), tenant_id, kind),
        )
        self._local.terms.clear()  # lexicon rows may be gone

    def _bm25(
        self,
        conn: psycopg.Connection[Any],
        kind: str,
        tenant_id: int,
        terms: Sequence[str],
        limit: int,
        require_all: bool,
    ) -> list[tuple[int, float]]:
        """Okapi BM25 exactly as ``SQLiteStorage._bm25_read``: k1 1.2, b
        0.75, FTS5's idf floor, over the tenant's own documents, best first,
        ties by document id."""
        df = _DF[kind]
        wanted = list(dict.fromkeys(t.lower() for t in terms))
        found = conn.execute(
            f"SELECT id, {df} FROM lexicon WHERE tenant_id = %s AND digest = ANY(%s) AND {df} > 0",
            (tenant_id, [bytes.fromhex(t) for t in wanted]),
        ).fetchall()
        if not found or (require_all and len(found) < len(wanted)):
            return []  # a digest no document of the tenant holds
        stats = conn.execute(
            "SELECT docs, length FROM term_stats WHERE tenant_id = %s AND kind = %s",
            (tenant_id, kind),
        ).fetchone()
        n, total = (int(stats[0]), int(stats[1])) if stats else (0, 0)
        weighted = postings.weights(found, n, drop_floor=not require_all)
        rows = conn.execute(
            f"SELECT term, docs, tfs, lens FROM {_KIND[kind]}_postings"
            " WHERE tenant_id = %s AND term = ANY(%s) ORDER BY term, first",
            (tenant_id, [t for t, _ in weighted]),
            binary=True,
        ).fetchall()
        return postings.top_k(rows, weighted, total / n if n else 1.0, limit, require_all)

    def lexical(
        self,
        tenant_id: int,
        terms: Sequence[str],
        limit: int,
        require_all: bool = False,
        turns: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 hits ``(id, score)``, best first, over the tenant's memories
        or, with ``turns``, its source turns. Outside a transaction the reads
        share one snapshot (REPEATABLE READ), as SQLite's do."""
        if not terms:
            return []
        kind = "t" if turns else "m"
        try:
            with self._reading() as conn:
                if self._local.conn is conn:
                    self._flush()
                    return self._bm25(conn, kind, tenant_id, terms, limit, require_all)
                with conn.transaction():
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    return self._bm25(conn, kind, tenant_id, terms, limit, require_all)
        except psycopg.Error as exc:
            raise _wrap(exc) from None

    # -- recall indexes -------------------------------------------------
    def index_terms(self, row: MemoryRow, terms: str) -> None:
        """Insert only a memory's full-text postings."""
        self._post("m", row.tenant_id, row.id, terms)

    def index(self, row: MemoryRow, terms: str, embedding: np.ndarray) -> None:
        """Make a memory recallable: full-text postings and its vector row."""
        self._require_tx()
        vec = np.ascontiguousarray(embedding, dtype=np.float32)
        self.index_terms(row, terms)
        self._write(
            "INSERT INTO memory_vectors(tenant_id, id, embedding) VALUES (%s, %s, %s)",
            (row.tenant_id, row.id, vec),
        )

    def unindex(self, rows: Sequence[MemoryRow]) -> None:
        """Remove memories from both recall indexes."""
        self._require_tx()
        for tenant_id in {r.tenant_id for r in rows}:
            ids = [r.id for r in rows if r.tenant_id == tenant_id]
            self._unpost("m", tenant_id, ids)
            self._write(
                "DELETE FROM memory_vectors WHERE tenant_id = %s AND id = ANY(%s)",
                (tenant_id, ids),
            )

    def vector(self, tenant_id: int, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """Cosine-similarity hits ``(memory id, similarity)`` of the tenant,
        best first (ties by id). A tenant of up to ``EXACT_UP_TO`` memories
        is scanned exactly; a larger one is searched in the HNSW index, with
        relaxed iterative scans so that the tenant filter still fills
        ``limit`` rows."""
        if limit <= 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32)
        # The similarity is the dot product (SQLite's: vectors are unit
        # length), so a zero vector scores 0 rather than NaN.
        try:
            with self._reading() as conn:
                if self._local.conn is conn:
                    rows = self._nearest(conn, tenant_id, q, limit)
                else:
                    with conn.transaction():
                        rows = self._nearest(conn, tenant_id, q, limit)
        except psycopg.Error as exc:
            raise _wrap(exc) from None
        # relaxed_order may return rows slightly out of order
        hits = [(int(r[0]), float(r[1])) for r in rows]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits

    def _nearest(
        self, conn: psycopg.Connection[Any], tenant_id: int, q: np.ndarray, limit: int
    ) -> list[tuple[Any, ...]]:
        """``vector``'s rows, read in the caller's transaction."""
        stats = conn.execute(
            "SELECT docs FROM term_stats WHERE tenant_id = %s AND kind = 'm'", (tenant_id,)
        ).fetchone()
        if stats is None or stats[0] <= EXACT_UP_TO:
            # Ordered by inner product, which the cosine index cannot serve:
            # the planner reads the tenant's rows by key and sorts them.
            # (The HNSW index of a part that other tenants share walks their
            # neighbours too and filters them out: slower there, and not
            # exact; docs/benchmarks.md, issue #16 fifth round.)
            return conn.execute(
                "SELECT id, -(embedding <#> %s) AS s FROM memory_vectors WHERE tenant_id = %s"
                " ORDER BY s DESC, id LIMIT %s",
                (q, tenant_id, limit),
            ).fetchall()
        own = self._local.conn is conn  # this thread's transaction: set once in it
        if not (own and self._local.iterative):
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            self._local.iterative = own
        return conn.execute(
            "SELECT id, -(embedding <#> %s) FROM memory_vectors WHERE tenant_id = %s"
            " ORDER BY embedding <=> %s LIMIT %s",
            (q, tenant_id, q, limit),
        ).fetchall()

    def embeddings(self, tenant_id: int, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of those of ``ids`` that are indexed (active
        memories of the tenant), by id, as float32; this thread's
        transaction's own rows included."""
        if not ids:
            return {}
        rows = self._rows(
            "SELECT id, embedding FROM memory_vectors WHERE tenant_id = %s AND id = ANY(%s)",
            (tenant_id, list(ids)),
            binary=True,  # vectors as float4 bytes: parsing their text was 85 us each
        )
        return {int(r[0]): _array(r[1]) for r in rows}

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
        """Append an audit row and index it under each ref; its seq."""
        seq = self._returning(
            "INSERT INTO audit(at, tenant, op, detail, refs, prev, hash)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING seq",
            (
                at,
                tenant,
                op,
                json.dumps(detail, sort_keys=True),
                json.dumps(list(refs)),
                prev,
                digest,
            ),
        )[0][0]
        if refs:
            self._write(
                "INSERT INTO audit_refs(ref, seq) SELECT unnest(%s::text[]), %s"
                " ON CONFLICT DO NOTHING",
                (list(dict.fromkeys(refs)), seq),
            )
        return int(seq)

    def audit_last_hash(self) -> str | None:
        """The hash of the newest audit row, or None for an empty log."""
        return self._scalar("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1")

    def audit_rows(self, ref: str | None = None) -> Iterator[AuditRow]:
        """Audit rows in sequence order, all or those indexed under ``ref``."""
        cols = "a.seq, a.at, a.tenant, a.op, a.detail, a.refs, a.prev, a.hash"
        if ref is None:
            rows = self._rows(f"SELECT {cols} FROM audit a ORDER BY a.seq")
        else:
            rows = self._rows(
                f"SELECT {cols} FROM audit_refs r JOIN audit a ON a.seq = r.seq"
                " WHERE r.ref = %s ORDER BY a.seq",
                (ref,),
            )
        for r in rows:
            yield AuditRow(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]), r[6], r[7])

    def rewrite_audit(self, rows: Sequence[AuditRow]) -> None:
        """Replace the tenant, prev and hash of audit rows (an upgrade
        re-chaining the log; inside its transaction)."""
        self._require_tx()
        for r in rows:
            self._write(
                "UPDATE audit SET tenant = %s, prev = %s, hash = %s WHERE seq = %s",
                (r.tenant, r.prev, r.hash, r.seq),
            )

    def set_tenant_handles(self, handles: dict[int, str]) -> None:
        """Give tenants their audit handles (an upgrade; inside its transaction)."""
        self._require_tx()
        for tid, handle in handles.items():
            self._write("UPDATE tenants SET handle = %s WHERE id = %s", (handle, tid))

    def tenant_keys(self) -> dict[int, str]:
        """Every tenant id with its key (for upgrades)."""
        return {r[0]: r[1] for r in self._rows("SELECT id, key FROM tenants")}

    # -- API keys (the REST service) -------------------------------------
    # As in SQLite: made by the first server that opens the store; a key is
    # kept only as its SHA-256 digest, and a revoked key's row is deleted.
    def api_keys_init(self) -> None:
        """Create the API key table if the store has none yet."""
        if self._scalar("SELECT to_regclass('api_keys')") is not None:
            return
        with self.transaction():
            for stmt in _API_KEYS:
                self._write(stmt)

    def api_key_add(self, key_id: str, digest: bytes, tenant: str, at: float) -> None:
        """Store a key's digest for a tenant key (``user:…`` or ``agent:…``)."""
        with self.transaction():
            self._write(
                "INSERT INTO api_keys VALUES (%s, %s, %s, %s)", (key_id, digest, tenant, at)
            )

    def api_key_tenant(self, digest: bytes) -> str | None:
        """The tenant key a key digest belongs to, or None."""
        return self._scalar("SELECT tenant FROM api_keys WHERE digest = %s", (digest,))

    def api_key_list(self) -> list[tuple[str, str, float]]:
        """Every key's (id, tenant key, created_at), oldest first; never a digest."""
        return [
            (r[0], r[1], r[2])
            for r in self._rows("SELECT id, tenant, created_at FROM api_keys ORDER BY created_at")
        ]

    def api_key_revoke(self, key_id: str) -> bool:
        """Delete a key; False when no key has that id."""
        with self.transaction():
            found = self._returning("DELETE FROM api_keys WHERE id = %s RETURNING 1", (key_id,))
        return bool(found)

    # -- migration (``storage.migrate``) ----------------------------------
    def set_secret_key(self, key: bytes) -> None:
        """Replace the term-digest key (inside a transaction)."""
        self._require_tx()
        self._write("UPDATE secrets SET value = %s WHERE name = 'store_key'", (key,))

    def put_turn(self, tenant_id: int, turn: TurnRow) -> TurnRow:
        """Insert a turn as given (uid, time, metadata); a new id."""
        tid = self._returning(
            "INSERT INTO turns(tenant_id, uid, role, text, session_id, at, metadata)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                tenant_id,
                turn.uid,
                turn.role,
                turn.text,
                turn.session_id,
                turn.at,
                json.dumps(turn.metadata),
            ),
        )[0][0]
        self._local.touched.add(tenant_id)
        return replace(turn, id=tid, tenant_id=tenant_id)

    def put_memory(self, tenant_id: int, row: MemoryRow, sources: Sequence[int]) -> MemoryRow:
        """Insert a memory as given (uid, state, times) with its provenance
        edges; a new id, no successor link yet, not indexed."""
        mid = self._returning(
            "INSERT INTO memories(tenant_id, uid, agent_id, run_id, text, kind, state,"
            " created_at, updated_at, expires_at, metadata)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                tenant_id,
                row.uid,
                row.agent_id,
                row.run_id,
                row.text,
                row.kind,
                row.state,
                row.created_at,
                row.updated_at,
                row.expires_at,
                json.dumps(row.metadata),
            ),
        )[0][0]
        if sources:
            self._write(
                "INSERT INTO provenance(tenant_id, memory_id, turn_id)"
                " SELECT %s, %s, unnest(%s::bigint[]) ON CONFLICT DO NOTHING",
                (tenant_id, mid, list(dict.fromkeys(sources))),
            )
        self._local.touched.add(tenant_id)
        return replace(row, id=mid, tenant_id=tenant_id, superseded_by=None)

    def put_audit(self, rows: Sequence[AuditRow]) -> None:
        """Insert audit rows verbatim, seq included, and their ref index
        entries; the identity then goes on after the highest seq."""
        self._require_tx()
        if not rows:
            return
        self._write(
            "INSERT INTO audit(seq, at, tenant, op, detail, refs, prev, hash)"
            " OVERRIDING SYSTEM VALUE SELECT * FROM unnest(%s::bigint[], %s::float8[],"
            " %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])",
            (
                [r.seq for r in rows],
                [r.at for r in rows],
                [r.tenant for r in rows],
                [r.op for r in rows],
                [json.dumps(r.detail, sort_keys=True) for r in rows],
                [json.dumps(list(r.refs)) for r in rows],
                [r.prev for r in rows],
                [r.hash for r in rows],
            ),
        )
        refs = [(ref, r.seq) for r in rows for ref in r.refs]
        if refs:
            self._write(
                "INSERT INTO audit_refs(ref, seq) SELECT * FROM unnest(%s::text[], %s::bigint[])"
                " ON CONFLICT DO NOTHING",
                ([ref for ref, _ in refs], [seq for _, seq in refs]),
            )
        self._write(
            "SELECT setval(pg_get_serial_sequence('audit', 'seq'), (SELECT max(seq) FROM audit))"
        )

    def api_key_rows(self) -> list[ApiKeyRow]:
        """Every API key row with its digest, oldest first ([] when never served)."""
        if self._scalar("SELECT to_regclass('api_keys')") is None:
            return []
        return [
            (r[0], bytes(r[1]), r[2], r[3])
            for r in self._rows(
                "SELECT id, digest, tenant, created_at FROM api_keys ORDER BY created_at, id"
            )
        ]

    def put_api_keys(self, rows: Sequence[ApiKeyRow]) -> None:
        """Insert API key rows as given, making the table if needed."""
        self._require_tx()
        if not rows:
            return
        self.api_keys_init()
        self._write(
            "INSERT INTO api_keys SELECT * FROM unnest(%s::text[], %s::bytea[], %s::text[],"
            " %s::float8[])",
            tuple([r[i] for r in rows] for i in range(4)),
        )


def peek(url: str) -> StoreInfo | None:
    """A read-only look at a database, without creating anything in it:
    None when it has no tables yet (a new store may be made there), else
    its meta, pending upgrades and whether it holds
    anything. A database with tables unrecall did not make raises
    ``NotAStore``; one that cannot be reached, ``StoreError``."""
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to the database ({type(exc).__name__})") from None
    try:
        with conn.transaction():
            conn.execute("SET TRANSACTION READ ONLY")
            tables = {
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables"
                    " WHERE table_schema = current_schema()"
                )
            }
            if not tables:
                return None
            _check_tables(tables)
            meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
            upgrades = (meta.get("upgrade") or "").split()
            if int(meta.get("schema_version", "0")) < SCHEMA_VERSION:
                upgrades.append("reindex")
            held = " OR ".join(
                f"EXISTS (SELECT 1 FROM {t})"
                for t in ("tenants", "audit", "api_keys")
                if t in tables
            )
            empty = not conn.execute(f"SELECT {held}").fetchone()[0]
    except psycopg.Error as exc:
        raise _wrap(exc) from None
    finally:
        conn.close()
    return StoreInfo(meta, upgrades, empty)

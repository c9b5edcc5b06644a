"""The embedded default: one SQLite file via apsw.

Erasure (DESIGN.md, invariant 4) rests on five things, each checked by the
forensic tests and by ``bench/attack.py``:

- ``PRAGMA secure_delete=ON``: every freed cell and page is zeroed where it
  lies, in every b-tree.
- The gaps of b-tree pages are zeroed as pages reach the main file
  (``storage.page_gaps``): a rebalance leaves copies of cells there, which
  would outlive the cells. The store makes every checkpoint itself, and each
  backfills the WAL, zeroes the gaps of the pages it held and restarts the
  WAL, which truncates it with the old page images in it.
- The full-text index is plain b-tree rows (schema v3): postings of lexicon
  ids per document, and a per-tenant lexicon from keyed term digests to ids.
  A delete removes exactly the document's postings, and a term no document
  uses any more leaves the lexicon, so the only place the
  digest of a forgotten word was is zeroed at commit. (FTS5 kept deleted
  terms behind tombstones until a merge, and page separators after it: with
  the digest key in the file, a digest of a 4-digit PIN is the PIN.)
- That checkpoint after each forgetting operation, and when the store
  opens: a crash between a commit and its checkpoint leaves the old pages in
  the WAL, and the next open pushes them out.
- Vectors are rows of plain tables too: float32 per memory, and int8 codes
  in lists (``storage.vector_lists``), whose chunks and centroid are written
  anew from the members that stay when one leaves.

Sharing (invariant 7): one writing connection, every statement on it under
one lock, so a thread never sees another thread's uncommitted rows; write
transactions begin with ``BEGIN IMMEDIATE`` under a busy timeout, so writers
of other processes queue for the write lock instead of failing on a late
upgrade. A read outside a transaction that finds the lock taken by another
thread runs on one of a few pooled read-only connections instead (WAL
readers see the last commit), so searches do not queue behind this
process's writes and erasure checkpoints.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

from unrecall.errors import StoreBusy, StoreError
from unrecall.progress import ticker
from unrecall.storage import page_gaps, postings
from unrecall.storage.base import ApiKeyRow, AuditRow, MemoryRow, StoreInfo, TurnRow
from unrecall.storage.list_cache import VECTOR_CACHE_MB
from unrecall.storage.prewarm import Prewarm
from unrecall.storage.schema import SCHEMA_VERSION, migrations, schema
from unrecall.storage.sqlite_lists import _IDS, ListIndex, _ids

_MEMORY_COLS = (
    "m.id, m.uid, m.tenant_id, m.agent_id, m.run_id, m.text, m.kind, m.state, m.created_at,"
    " m.updated_at, m.expires_at, m.metadata, (SELECT s.uid FROM memories s"
    " WHERE s.id = m.superseded_by)"
)
_TURN_COLS = "id, uid, tenant_id, role, text, session_id, at, metadata"


_KIND = {"m": "memory", "t": "turn"}  # a postings kind's table prefix
# Postings an open transaction buffers before it writes them into blocks
# (``_flush``): an import of any size stays bounded in memory.
FLUSH_EVERY = 20_000
_STREAM_BATCH = 10_000  # rows an upgrade writes at a time
# vectors an upgrade lists a transaction: 2,048 held the lock 2.6 s (p50) at
# 1M on a busy machine, each vector ~1.3 ms (two chunks written again)
RELIST_BATCH = 512
# rows of the lists an upgrade set aside (``schema.OLD_LISTS``) it deletes
# a transaction: at 1M, 258 steps held the lock 109 ms p50, 252 ms at most,
# where one DELETE of them all held it 7.1-12.2 s
DROP_BATCH = 256
_DF = {"m": "mdf", "t": "tdf"}

# How long a write waits for another process's write transaction.
BUSY_TIMEOUT_S = 30.0
# How long a checkpoint waits for readers before it is left for later (it is
# retried after this process's next write, and on every open and close).
CHECKPOINT_WAIT_S = 1.0
# WAL bytes past which a commit checkpoints (SQLite's default: 1,000 pages)
CHECKPOINT_AT = 4 * 1024 * 1024
SCRUB_BATCH = 8_192  # pages an upgrade zeroes the gaps of at a time: 32 MB
# Read connections a store opens at most, for threads that find the writer
# busy (a server runs a handful of requests at once).
READERS = 4
BUSY_NAP_S = 0.0005  # a lock holder's transaction takes a few ms
_INCREMENTAL = 2  # PRAGMA auto_vacuum's value for INCREMENTAL
COMPACT_TICK = 100_000  # SQLite VM steps between two progress ticks of a VACUUM
# Pages one step of a compaction moves (1 MB of 4 KB pages): each step is a
# write transaction of its own, so writers wait for one step, not the file.
COMPACT_STEP = 256


def _memory(row: tuple[Any, ...]) -> MemoryRow:
    return MemoryRow(*row[:11], json.loads(row[11]), row[12])


def _turn(row: tuple[Any, ...]) -> TurnRow:
    return TurnRow(*row[:7], json.loads(row[7]))


def _doc_row(doc: int, rows: list[tuple[int, int, int]]) -> tuple[int, int, bytes]:
    """A document's row of schema v6 from its (doc, length, term) rows of v5,
    by term: its length (the same in each) and its term ids, packed."""
    return doc, rows[0][1], np.asarray([r[2] for r in rows], dtype="<i8").tobytes()


# Tables every unrecall store has had since schema v1.
_OWN_TABLES = {"meta", "secrets", "tenants", "turns", "memories", "audit"}


def _reason(exc: BaseException) -> str:
    """Why opening failed, without the path: the OS's words or apsw's."""
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return str(exc) or type(exc).__name__


class NotAStore(StoreError):
    """The file is not an unrecall store: not a database (a text file,
    random bytes), a damaged or truncated one, or someone else's SQLite
    database. It was left untouched. ``reason`` says which, without the path."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the file is not an unrecall store ({reason}); it was left untouched"
            " (give a new path or an unrecall store)"
        )
        self.reason = reason


_UNREADABLE = (apsw.NotADBError, apsw.CorruptError)


def _foreign(version: int, tables: set[str]) -> bool:
    """A database unrecall did not make: tables but no schema version, or a
    version without every table an unrecall store has."""
    return bool(tables) if version == 0 else not tables >= _OWN_TABLES


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
    must be provable on disk). One object may be shared by threads, and any
    number of processes may open the same file."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        dim: int,
        embedder_name: str,
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
        progress: Callable[[str], None] | None = None,
        prewarm: bool | None = None,
        vector_cache_mb: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.dim = dim
        # the file read into the OS page cache after the first search
        self.prewarm = Prewarm(self.path, prewarm)
        # a ``unrecall.progress.Progress`` shows a ticker for a long upgrade at open
        self._progress = progress
        self._busy_ms = int(busy_timeout * 1000)
        # _lock guards the writing connection (and the transaction depth).
        self._lock = threading.RLock()
        self._idle: queue.SimpleQueue[apsw.Connection] = queue.SimpleQueue()
        self._readers: list[apsw.Connection] = []
        self._plock = threading.Lock()  # guards _readers
        self._depth = 0
        # vectors indexed in the open transaction, not yet in their lists
        # (tenant, memory, vector): _flush lists them a tenant at a time
        self._unlisted: list[tuple[int, int, np.ndarray]] = []
        # postings indexed in the open transaction, not yet in their blocks
        # (prefix, term, document, tf, length): _flush writes each block once
        self._unflushed: list[tuple[str, int, int, int, int]] = []
        self._fresh: set[int] = set()  # terms made since the last _flush: no blocks yet
        self._lists = ListIndex(
            dim,
            self._write,
            self._write_many,
            self._connect_reader,
            (VECTOR_CACHE_MB if vector_cache_mb is None else vector_cache_mb) << 20,
        )
        self._erase_due = False
        self._erase_hooks: list[Callable[[], None]] = []
        # (tenant id, digest) -> lexicon id, for the current transaction
        self._term_cache: dict[tuple[int, str], int] = {}
        # tenants whose rows the open transaction changed (their version moves)
        self._touched: set[int] = set()
        # Errors name no path (it may name a person) and wrap apsw's and the OS's.
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = apsw.Connection(str(self.path))
        except _UNREADABLE as exc:
            raise NotAStore(_reason(exc)) from exc
        except (OSError, apsw.Error) as exc:
            raise StoreError(f"cannot open the store file: {_reason(exc)}") from exc
        try:
            # (the busy handler first: another process may be creating the store)
            self._wait_s = busy_timeout
            self._busy_since = 0.0
            self._db.set_busy_handler(self._on_busy)
            self._refuse_foreign()  # reads only: a file that is not a store stays untouched
            self._configure()
            self._migrate(embedder_name)
            self.relist()
            self.scrub()
        except _UNREADABLE as exc:  # found before any write, or a migration rolled back
            self._db.close()
            raise NotAStore(_reason(exc)) from exc
        except apsw.Error as exc:  # a locked or unwritable file, say
            self._db.close()
            raise StoreError(f"cannot open the store file: {_reason(exc)}") from exc
        except BaseException:  # wrong embedder or newer schema: do not leak the handle
            self._db.close()
            raise
        # Redo the erase step: a crash between a forget's commit and its
        # checkpoint left the forgotten pages in the main file.
        self.erase()

    # -- lifecycle -------------------------------------------------------
    def _on_busy(self, calls: int) -> bool:
        """SQLite's busy handler on the writer: wait for another process's
        lock (or, for an erasure checkpoint, for readers) in short naps, up
        to ``_wait_s``. SQLite's own timeout naps up to 100 ms, so a writer
        queued behind a transaction of a few ms slept well past its end,
        holding this process's connection all the while."""
        now = time.monotonic()
        if calls == 0:
            self._busy_since = now
        if now - self._busy_since >= self._wait_s:
            return False
        time.sleep(BUSY_NAP_S)
        return True

    def _refuse_foreign(self) -> None:
        """Refuse, before writing anything, a file unrecall cannot own: one
        that is not a database (apsw's NotADBError), a database of someone
        else's (tables of its own, no unrecall tables) or a read-only file."""
        # One statement, one snapshot: another process may be creating it.
        rows = self._rows(
            "SELECT (SELECT user_version FROM pragma_user_version), name FROM"
            " (SELECT NULL AS name UNION ALL SELECT name FROM sqlite_master)"
        )
        version = rows[0][0]
        if _foreign(version, {r[1] for r in rows if r[1] is not None}):
            raise NotAStore("a SQLite database unrecall did not make")
        if self._db.readonly("main"):
            raise StoreError("the store file is read-only; unrecall needs to write it")

    def _configure(self) -> None:
        # apsw runs a multi-statement string lazily, so pragmas go one by one.
        if not self._scalar("PRAGMA page_count"):
            # A new store compacts in steps (``compact``). Set before WAL,
            # which writes a new file's header; only then, as setting it on
            # a store rewrites the header, and opening a store must not
            # write it (``migrate`` reads its source that way).
            self._db.execute("PRAGMA auto_vacuum=INCREMENTAL").fetchall()
        for pragma in (
            "journal_mode=WAL",
            "secure_delete=ON",
            "foreign_keys=ON",
            "synchronous=NORMAL",
            "temp_store=MEMORY",
            # every checkpoint is the store's own, which zeroes page gaps
            # (``_checkpoint``); a restarted WAL is cut to what it holds
            "wal_autocheckpoint=0",
            "journal_size_limit=0",
        ):
            self._db.execute(f"PRAGMA {pragma}").fetchall()

    @contextmanager
    def _reading(self) -> Iterator[apsw.Connection]:
        """The connection to read on: the writer when it is free or this
        thread holds it; while another thread holds it, a pooled read-only
        connection (at most ``READERS``; past that, the writer, waited for)."""
        if self._lock.acquire(blocking=False):
            try:
                yield self._db
            finally:
                self._lock.release()
            return
        reader = self._reader()
        if reader is None:
            with self._lock:
                yield self._db
            return
        try:
            yield reader
        finally:
            self._idle.put(reader)

    def _reader(self) -> apsw.Connection | None:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._plock:
            if len(self._readers) >= READERS:
                return None
            try:
                reader = self._connect_reader()
            except apsw.Error:
                return None  # the writer serves (waited for)
            self._readers.append(reader)
            return reader

    def _connect_reader(self) -> apsw.Connection:
        """A new connection that only reads (the pool's, and ``ListIndex``'s
        warm reads)."""
        reader = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            reader.set_busy_timeout(self._busy_ms)
            for pragma in ("query_only=ON", "temp_store=MEMORY"):
                reader.execute(f"PRAGMA {pragma}").fetchall()
        except apsw.Error:
            reader.close()
            raise
        return reader

    def _scalar(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._reading() as db:
            row = db.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._reading() as db:
            return db.execute(sql, args).fetchall()

    def _write(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._depth == 0:
                raise StoreError("a write outside a transaction")
            return self._db.execute(sql, args).fetchall()

    def _write_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._lock:
            if self._depth == 0:
                raise StoreError("a write outside a transaction")
            if rows:
                self._db.executemany(sql, rows)

    def _migrate(self, embedder_name: str) -> None:
        # Inside BEGIN IMMEDIATE: processes creating one store at once
        # queue here, and each after the first finds the schema done.
        with self.transaction():
            version = self._scalar("PRAGMA user_version")
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"store schema v{version} is newer than this unrecall (v{SCHEMA_VERSION})"
                )
            if version == 0:
                for stmt in schema():
                    self._write(stmt)
                self._write(f"PRAGMA user_version={SCHEMA_VERSION}")
                self._write(
                    "INSERT INTO meta VALUES ('embedder', ?), ('dim', ?), ('created_at', ?)",
                    (embedder_name, str(self.dim), str(time.time())),
                )
                self._write(
                    "INSERT INTO secrets VALUES ('store_key', ?)", (secrets.token_bytes(32),)
                )
            elif version < SCHEMA_VERSION:
                # Versions 1 and 2 kept vectors in a vec0 virtual table: the
                # steps that move them out need its module.
                self._db.enable_load_extension(True)
                self._db.load_extension(sqlite_vec.loadable_path())
                self._db.enable_load_extension(False)
                steps = migrations()
                for v in range(version + 1, SCHEMA_VERSION + 1):
                    for stmt in steps[v]:
                        self._write(stmt)
                    if v == 6:
                        self._pack_postings()
                    self._write(f"PRAGMA user_version={v}")
        stored = self._scalar("SELECT value FROM meta WHERE key = 'embedder'")
        if stored != embedder_name:
            raise StoreError(
                f"store was built with embedder {stored!r}, not {embedder_name!r};"
                " open it with the same embedder"
            )

    def _pack_postings(self) -> None:
        """Schema v6: the row-per-posting tables of v3 to v5 packed into
        blocks, and their documents' rows written; then dropped (their
        pages zeroed by secure_delete). Two passes over each, in key order,
        written as they are read so that memory stays flat at any size."""
        for old, prefix in (("memory_terms", "memory"), ("turn_terms", "turn")):
            rows = self._db.execute(f"SELECT term, doc, tf, len FROM {old} ORDER BY term, doc")
            self._write_stream(
                f"INSERT INTO {prefix}_postings(term, first, docs, tfs, lens)"
                " VALUES (?, ?, ?, ?, ?)",
                ((t, b.first, *b.encode()) for t, b in postings.blocks_of_rows(rows)),
            )
            by_doc = itertools.groupby(
                self._db.execute(f"SELECT doc, len, term FROM {old} ORDER BY doc, term"),
                key=lambda r: r[0],
            )
            self._write_stream(
                f"INSERT INTO {prefix}_docs(doc, len, terms) VALUES (?, ?, ?)",
                (_doc_row(doc, list(group)) for doc, group in by_doc),
            )
            self._write(f"DROP TABLE {old}")

    def relist(self, batch: int | None = None) -> None:
        """List the vectors an upgrade left out of the lists (schema v8 makes
        them again), ``batch`` a transaction in id order, as if added anew.
        Each batch holds the write lock for well under a second, so the
        upgrade of a large store (half an hour at 1.5M vectors on a busy
        machine) never shuts other processes out for long, and one cut off
        goes on where it stopped. Runs at open; the vectors not yet listed
        are searched exactly."""
        if self._lists.pending(self._db) is None:
            return  # (no ticker: one flashed on every open)
        # a ticker says it is alive; a process that opens meanwhile joins in
        with ticker(self._progress, "upgrading: listing the stored vectors") as tick:
            while self._relist_batch(batch or RELIST_BATCH):
                tick()

    def _drop_old_lists(self, batch: int) -> bool:
        """Inside a transaction: delete the next ``batch`` rows of the lists
        an upgrade set aside (``schema.OLD_LISTS``), or drop a table of them
        once it is empty; whether any were left."""
        tables = self._lists.old_tables(self._db)
        if not tables:
            return False
        table = tables[0]  # one table at a time
        if self._scalar(f"SELECT 1 FROM {table} LIMIT 1") is None:
            self._write(f"DROP TABLE {table}")
        else:
            self._write(
                f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} LIMIT ?)",
                (batch,),
            )
        return True

    def _relist_batch(self, batch: int) -> bool:
        """List the next ``batch`` vectors an upgrade left out, in one
        transaction, or, while the lists it set aside are not all deleted,
        delete ``DROP_BATCH`` rows of them instead; whether any were left."""
        with self.transaction():
            pending = self._lists.pending(self._db)
            if pending is None:
                return False
            # The old lists go first: a purge finds a vector's old codes by
            # the lists its row names, which listing it anew overwrites.
            if self._drop_old_lists(DROP_BATCH):
                return True
            after, upto = pending
            rows = self._rows(
                "SELECT tenant_id, id, embedding FROM memory_vectors"
                " WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
                (after, upto, batch),
            )
            done = rows[-1][1] if len(rows) == batch else upto
            # what they name are the old lists (a second one, too)
            self._write(
                "UPDATE memory_vectors SET list = NULL, spill = NULL WHERE id > ? AND id <= ?",
                (after, done),
            )
            by_tenant = sorted(rows, key=lambda r: r[0])  # stable: id order kept
            for tenant_id, group in itertools.groupby(by_tenant, key=lambda r: r[0]):
                part = list(group)
                self._touched.add(tenant_id)  # no cached centroids serve
                ids = np.array([r[1] for r in part], dtype=np.int64)
                vecs = np.frombuffer(b"".join(r[2] for r in part), dtype=np.float32)
                self._lists.add(self._db, tenant_id, ids, vecs.reshape(len(part), -1))
            self._lists.listed_up_to(done, upto)
            return True

    def _write_stream(self, sql: str, rows: Iterator[Sequence[Any]]) -> None:
        """``_write_many`` over rows that come from a cursor, a batch at a
        time (an upgrade's, so that no table is held whole in memory)."""
        while batch := list(itertools.islice(rows, _STREAM_BATCH)):
            self._write_many(sql, batch)

    def upgrades(self) -> list[str]:
        """Migration steps that need the planes (``reindex``, ``rechain``)."""
        value = self._scalar("SELECT value FROM meta WHERE key = 'upgrade'")
        return value.split() if value else []

    def upgraded(self, step: str) -> None:
        """Mark an upgrade step done (call inside the step's transaction)."""
        rest = [s for s in self.upgrades() if s != step]
        if rest:
            self._write("UPDATE meta SET value = ? WHERE key = 'upgrade'", (" ".join(rest),))
        else:
            self._write("DELETE FROM meta WHERE key = 'upgrade'")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The outermost level is a ``BEGIN IMMEDIATE`` transaction, inner
        levels are savepoints. The lock is held throughout, so no other
        thread runs a statement on the connection meanwhile."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._term_cache.clear()  # another process may have changed the lexicon
                self._begin()
            else:
                # Postings and vectors buffered so far go to their blocks first: a flush
                # inside the savepoint then holds only its own, and a rollback
                # to it loses none of the outer level's.
                self._flush()
                self._db.execute(f"SAVEPOINT sp{self._depth}")
            self._depth += 1
            try:
                yield
                if outer:
                    self._flush()  # the buffered postings and vectors, before the commit
            except BaseException:
                self._depth -= 1
                self._rollback(outer)
                raise
            self._depth -= 1
            if outer:
                self._commit()
            else:
                self._db.execute(f"RELEASE sp{self._depth}")

    def _begin(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except apsw.BusyError:
            raise StoreBusy(
                f"the store is busy: another process held its write lock for more than"
                f" {self._busy_ms / 1000:g} s"
            ) from None

    def _commit(self) -> None:
        touched, self._touched = sorted(self._touched), set()
        try:
            # the versions the commit moves to, for the cached centroids
            versions = dict(
                self._db.execute(
                    f"UPDATE tenants SET version = version + 1 WHERE id IN {_IDS}"
                    " RETURNING id, version",
                    (_ids(touched),),
                ).fetchall()
                if touched
                else ()
            )
            self._db.execute("COMMIT")
        except apsw.Error as exc:
            self._rollback(True)
            raise StoreError(
                f"the commit failed ({type(exc).__name__}); nothing was written"
            ) from None
        self._lists.committed(versions)
        # a forget's checkpoint that readers held up, or the WAL has grown
        # as far as SQLite's own automatic checkpoint would let it
        if self._erase_due or self._wal_size() > CHECKPOINT_AT:
            self._checkpoint(0.05)

    def _rollback(self, outer: bool) -> None:
        # Every level starts flushed (a savepoint flushes first, a commit
        # flushes last), so whatever is buffered is the rolled-back level's.
        self._unflushed.clear()
        self._unlisted.clear()
        self._fresh.clear()  # made inside and rolled back, or flushed: look them up
        if outer:
            self._touched.clear()
            self._lists.rolled_back()
        self._term_cache.clear()  # lexicon rows made inside are rolled back
        if not outer:
            self._lists.savepoint_rolled_back()
            self._db.execute(f"ROLLBACK TO sp{self._depth}")
            self._db.execute(f"RELEASE sp{self._depth}")
            return
        if self._db.in_transaction:  # SQLite may have rolled back already
            self._db.execute("ROLLBACK")

    def _wal_size(self) -> int:
        try:
            return os.stat(f"{self.path}-wal").st_size
        except FileNotFoundError:
            return 0

    def held(self) -> bool:
        """True when this thread holds the connection (inside a transaction):
        work handed to another thread must not wait for it."""
        return self._lock._is_owned()  # type: ignore[attr-defined]

    def secret_key(self) -> bytes:
        """The per-store random key (made once at creation)."""
        return self._scalar("SELECT value FROM secrets WHERE name = 'store_key'")

    def erase(self, now: bool = False) -> bool:
        """Checkpoint and truncate the WAL, so that deleted pages leave both
        the main file and the WAL; False if readers kept it from finishing
        (it is retried after this process's next write, and on open/close).
        The ``on_erase`` hooks run first. Always done at once (``now`` is
        for backends that may defer)."""
        for hook in self._erase_hooks:
            hook()
        return self._checkpoint(CHECKPOINT_WAIT_S)

    def erasure_gaps(self) -> list[str]:
        """The file and its WAL are all there is (copies of the file made
        elsewhere are the operator's, docs/postgres.md on backups); an
        upgrade that has not yet zeroed the page gaps of an older store says
        how many pages are left."""
        pending = self._scrub_pending()
        if pending is None:
            return []
        return [
            f"{pending[1] - pending[0]} pages of a store made before schema v9 may still"
            " hold copies of deleted cells; the next open zeroes them"
        ]

    def on_erase(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` on every ``erase``."""
        self._erase_hooks.append(hook)

    def scrub(self, batch: int = SCRUB_BATCH) -> None:
        """Zero the page gaps a store made before schema v9 may hold, in
        every page it had then: ``batch`` pages a checkpoint, each under
        the write lock (~0.1 s), with the WAL backfilled first. Pages
        written since are zeroed as they are checkpointed. Runs at open;
        one that readers hold up is left for the next open, and
        ``erasure_gaps`` says so meanwhile."""
        if self._scrub_pending() is None:
            return
        with ticker(self._progress, "upgrading: zeroing page gaps") as tick:
            while (pending := self._scrub_pending()) is not None:
                done, upto = pending
                last = min(done + batch, upto)
                if not self._checkpoint(CHECKPOINT_WAIT_S, range(done + 1, last + 1)):
                    return
                with self.transaction():
                    if last >= upto:
                        self._write("DELETE FROM meta WHERE key = 'scrub'")
                    else:
                        left = f"{last} {upto}"
                        self._write("UPDATE meta SET value = ? WHERE key = 'scrub'", (left,))
                tick()

    def _scrub_pending(self) -> tuple[int, int] | None:
        """The pages ``(done, up to]`` an upgrade has yet to scrub, if any."""
        value = self._scalar("SELECT value FROM meta WHERE key = 'scrub'")
        if value is None:
            return None
        done, upto = (int(x) for x in value.split())
        return done, upto

    def _checkpoint(self, wait_s: float, also: range = range(0)) -> bool:
        """Checkpoint with every page's gap zeroed (``storage.page_gaps``):
        holding the write lock, backfill the whole WAL into the main file
        and zero the gaps of the pages it held; then a write restarts the
        WAL, which truncates it with the old page images in it; pages
        ``also`` have their gaps zeroed too. False if another process's
        lock or a reader kept it from finishing."""
        with self._lock:
            if self._depth:
                return False  # inside a transaction: the caller's commit comes first
            wal = Path(f"{self.path}-wal")
            self._wait_s = wait_s
            try:
                zeroed = self._backfill(wal, also)
                done = zeroed is not None and self._restart(wal, zeroed > 0)
            except apsw.BusyError:
                done = False
            finally:
                self._wait_s = self._busy_ms / 1000
            self._erase_due = not done
            return done

    def _backfill(self, wal: Path, also: range) -> int | None:
        """Under the write lock: every WAL frame into the main file (another
        connection's PASSIVE checkpoint, which runs beside a writer), then
        each page the WAL held, and each of ``also``, has its gap zeroed.
        How many pages were written, or None if readers held frames back."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            pages = page_gaps.wal_pages(wal)
            if not pages and not also:
                return 0
            if pages:
                side = apsw.Connection(str(self.path))
                try:
                    busy, log, moved = side.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                finally:
                    side.close()
                if busy or moved != log:
                    return None  # a reader of an older snapshot holds frames back
            try:
                return page_gaps.zero_gaps(self.path, pages.union(also))
            except ValueError as exc:
                raise StoreError(f"cannot scrub the store's pages: {exc}") from None
        finally:
            self._db.execute("COMMIT")

    def _restart(self, wal: Path, zeroed: bool) -> bool:
        """Have the backfilled WAL restarted, which truncates it: the first
        write after a full backfill does that when no reader still reads its
        frames (whoever writes). Whether it was."""
        salt = page_gaps.wal_salt(wal)
        if salt is None:
            return True
        if zeroed:
            # This connection's page cache may hold pages as they were before
            # their gaps were zeroed, and would write them back so: let it
            # go (other connections drop theirs when they see the WAL change).
            # Only then: a purge at 1M took 23 ms against 18 when it always did.
            self._db.execute("PRAGMA shrink_memory").fetchall()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            # (a write that changes nothing writes no page)
            self._db.execute(
                "INSERT INTO meta VALUES ('checkpoints', '1') ON CONFLICT(key)"
                " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
        finally:
            self._db.execute("COMMIT")
        return page_gaps.wal_salt(wal) != salt

    def compact(self, tick: Callable[[], None] | None = None) -> None:
        """Give the pages deleted rows left back to the file system, in
        steps: each moves up to ``COMPACT_STEP`` pages from the end of the
        file into free ones (SQLite's incremental vacuum) in a write
        transaction of its own, so writers, forgets and other processes get
        in between, where a VACUUM held the write lock for 55 s at a
        million memories (issue #17). Erasure never waits for this: freed
        pages are zeroed at commit. A store made before incremental
        compaction is rewritten whole (VACUUM) once, which switches it over.
        ``tick`` is called after each step (progress)."""
        with self._lock:
            if self._scalar("PRAGMA auto_vacuum") != _INCREMENTAL:
                self._db.execute("PRAGMA auto_vacuum=INCREMENTAL").fetchall()
                self._vacuum(tick)
        while True:
            start = time.monotonic()
            with self._lock:
                if not self._scalar("PRAGMA freelist_count"):
                    break
                self._db.execute(f"PRAGMA incremental_vacuum({COMPACT_STEP})").fetchall()
            if tick is not None:
                tick()
            # As long again off the lock: a thread waiting for it gets in, which
            # it would not if this one took it straight back (the lock is not fair).
            time.sleep(time.monotonic() - start)
        self.erase()  # the checkpoint truncates the file to what is left

    def _vacuum(self, tick: Callable[[], None] | None) -> None:
        """Rewrite the whole file, which takes up the ``auto_vacuum`` mode
        just set; ``tick`` every ``COMPACT_TICK`` SQLite steps meanwhile."""
        if tick is not None:

            def on_steps() -> bool:
                tick()
                return False  # go on (True would interrupt the VACUUM)

            self._db.set_progress_handler(on_steps, COMPACT_TICK)
        try:
            self._db.execute("VACUUM").fetchall()
        finally:
            self._db.set_progress_handler(None)

    def size(self) -> int:
        """The bytes of the store's files (the .db and its sidecars)."""
        return sum(f.stat().st_size for f in self.files() if f.exists())

    def files(self) -> list[Path]:
        """The database file and every sidecar that exists now."""
        names = [self.path] + [Path(f"{self.path}{s}") for s in ("-wal", "-shm", "-journal")]
        return [p for p in names if p.exists()]

    def searched(self) -> None:
        """Start the read into the page cache, if due: not before the first
        search is done, which it would slow (``storage.prewarm``)."""
        self.prewarm.start()

    def close(self) -> None:
        """Checkpoint and close (the read connections first), and let go
        of the lists held in memory."""
        self.prewarm.stop()
        self._lists.held.clear()
        with self._lock:
            with self._plock:
                for reader in self._readers:
                    reader.close()
                self._readers.clear()
            self.erase()
            self._db.close()

    # -- tenants and turns ----------------------------------------------
    def tenant(self, key: str, create: bool) -> int | None:
        """Look up (and optionally create) a tenant row; a new tenant gets a
        random audit handle (``tenant_handle``)."""
        tid = self._scalar("SELECT id FROM tenants WHERE key = ?", (key,))
        if tid is None and create:
            with self.transaction():
                # again under the write lock: another process may have made it
                tid = self._scalar("SELECT id FROM tenants WHERE key = ?", (key,))
                if tid is None:
                    handle = _RANDOM.take(16).hex()
                    self._write("INSERT INTO tenants(key, handle) VALUES (?, ?)", (key, handle))
                    tid = self._db.last_insert_rowid()
        return tid

    def tenant_handle(self, tenant_id: int) -> str | None:
        """The random audit handle of a tenant id (gone with the tenant)."""
        return self._scalar("SELECT handle FROM tenants WHERE id = ?", (tenant_id,))

    def tenant_version(self, tenant_id: int) -> int:
        """A number that moves with every transaction that changed the
        tenant's memories, turns or provenance, or -1 when the tenant is gone."""
        version = self._scalar("SELECT version FROM tenants WHERE id = ?", (tenant_id,))
        return -1 if version is None else int(version)

    def erase_tenant(self, tenant_id: int) -> tuple[int, int]:
        """Delete everything of a tenant: index rows, lexicon, memories,
        turns, the tenant row (its key may itself be personal data); set
        statements, so a tenant of any size goes. Returns (memories, turns)."""
        with self.transaction():
            self._flush()  # the tenant's unflushed postings go with the rest
            turns = self._scalar("SELECT count(*) FROM turns WHERE tenant_id = ?", (tenant_id,))
            # Every term of the tenant is the tenant's own: no counting down.
            for prefix in _KIND.values():
                self._write(
                    f"DELETE FROM {prefix}_postings WHERE term IN"
                    " (SELECT id FROM lexicon WHERE tenant_id = ?)",
                    (tenant_id,),
                )
            self._write(
                "DELETE FROM memory_docs WHERE doc IN"
                " (SELECT id FROM memories WHERE tenant_id = ?)",
                (tenant_id,),
            )
            self._write(
                "DELETE FROM turn_docs WHERE doc IN (SELECT id FROM turns WHERE tenant_id = ?)",
                (tenant_id,),
            )
            self._write("DELETE FROM lexicon WHERE tenant_id = ?", (tenant_id,))
            self._write("DELETE FROM term_stats WHERE tenant_id = ?", (tenant_id,))
            self._lists.drop_tenant(self._db, tenant_id)
            memories = self._scalar(
                "SELECT count(*) FROM memories WHERE tenant_id = ?", (tenant_id,)
            )
            self._write(
                "UPDATE memories SET superseded_by = NULL WHERE tenant_id = ?"
                " AND superseded_by IS NOT NULL",
                (tenant_id,),
            )
            self._write("DELETE FROM memories WHERE tenant_id = ?", (tenant_id,))
            self._write("DELETE FROM turns WHERE tenant_id = ?", (tenant_id,))
            if self._scalar("SELECT 1 FROM sqlite_master WHERE name = 'api_keys'"):
                # a served store: the tenant's API keys name it, and go too
                self._write(
                    "DELETE FROM api_keys WHERE tenant = (SELECT key FROM tenants WHERE id = ?)",
                    (tenant_id,),
                )
            self._write("DELETE FROM tenants WHERE id = ?", (tenant_id,))
            self._term_cache.clear()
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
            f"SELECT {_TURN_COLS} FROM turns WHERE uid = ? AND tenant_id = ?", (uid, tenant_id)
        )
        return _turn(rows[0]) if rows else None

    def turns(self, tenant_id: int) -> list[TurnRow]:
        """All turns of a tenant, oldest first."""
        rows = self._rows(
            f"SELECT {_TURN_COLS} FROM turns WHERE tenant_id = ? ORDER BY at, id", (tenant_id,)
        )
        return [_turn(r) for r in rows]

    def index_turn(self, turn: TurnRow, terms: str) -> None:
        """Insert a turn's full-text postings."""
        with self._lock:
            self._post("t", turn.tenant_id, turn.id, terms)

    def set_turn_text(self, turn: TurnRow, text: str, terms: str) -> None:
        """Overwrite a turn's text and its full-text postings."""
        with self._lock:
            self._touched.add(turn.tenant_id)
            self._write("UPDATE turns SET text = ? WHERE id = ?", (text, turn.id))
            self._unpost("t", turn.tenant_id, [turn.id])
            self.index_turn(turn, terms)

    def delete_turns(self, turn_ids: Sequence[int]) -> None:
        """Delete turns and their full-text postings (provenance edges cascade)."""
        with self._lock:
            for turn in self.turns_by_id(turn_ids):
                self._touched.add(turn.tenant_id)
                self._unpost("t", turn.tenant_id, [turn.id])
            self._write_many("DELETE FROM turns WHERE id = ?", [(t,) for t in turn_ids])

    def turns_by_id(self, ids: Sequence[int]) -> list[TurnRow]:
        """Turns by internal id, in the given order."""
        if not ids:
            return []
        rows = self._rows(f"SELECT {_TURN_COLS} FROM turns WHERE id IN {_IDS}", (_ids(ids),))
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
        row = MemoryRow(
            0, new_uid("m"), tenant_id, agent_id, run_id, text, kind, "active", at, at,
            expires_at, metadata, None,
        )  # fmt: skip
        return self.put_memory(tenant_id, row, sources)

    def _touch(self, memory_ids: Sequence[int]) -> None:
        """Note the tenants of memories this transaction changes."""
        self._touched.update(
            r[0]
            for r in self._rows(
                f"SELECT DISTINCT tenant_id FROM memories WHERE id IN {_IDS}", (_ids(memory_ids),)
            )
        )

    def link(self, memory_ids: Sequence[int], turn_id: int) -> None:
        """Add ``turn_id`` as one more source of each memory (a repetition)."""
        self._touch(memory_ids)
        self._write_many(
            "INSERT OR IGNORE INTO provenance(memory_id, turn_id) VALUES (?, ?)",
            [(m, turn_id) for m in memory_ids],
        )

    def memory(self, tenant_id: int, uid: str) -> MemoryRow | None:
        """A memory by public id within a tenant."""
        rows = self._rows(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.uid = ? AND m.tenant_id = ?",
            (uid, tenant_id),
        )
        return _memory(rows[0]) if rows else None

    def memories(self, tenant_id: int, states: Sequence[str] | None = None) -> list[MemoryRow]:
        """A tenant's memories, oldest first."""
        sql = f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.tenant_id = ?"
        args: list[Any] = [tenant_id]
        if states is not None:
            sql += f" AND m.state IN {_IDS}"
            args.append(_ids(states))
        return [_memory(r) for r in self._rows(sql + " ORDER BY m.id", args)]

    def count_memories(self, tenant_id: int) -> int:
        """How many memories a tenant holds, in any state."""
        return int(self._scalar("SELECT count(*) FROM memories WHERE tenant_id = ?", (tenant_id,)))

    def memories_by_id(self, ids: Sequence[int]) -> list[MemoryRow]:
        """Memories by internal id, in the given order."""
        if not ids:
            return []
        rows = self._rows(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.id IN {_IDS}", (_ids(ids),)
        )
        by_id = {r[0]: _memory(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def sources(self, memory_ids: Sequence[int]) -> dict[int, list[TurnRow]]:
        """Source turns per memory id."""
        out: dict[int, list[TurnRow]] = {m: [] for m in memory_ids}
        if not memory_ids:
            return out
        edges = self._rows(
            f"SELECT memory_id, turn_id FROM provenance WHERE memory_id IN {_IDS}",
            (_ids(memory_ids),),
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
        rows = self._rows(
            "SELECT f.memory_id, f.turn_id, p.memory_id FROM (SELECT memory_id, min(turn_id)"
            f" AS turn_id FROM provenance WHERE memory_id IN {_IDS} GROUP BY memory_id) AS f"
            " JOIN provenance AS p ON p.turn_id = f.turn_id ORDER BY f.memory_id, p.memory_id",
            (_ids(memory_ids),),
        )
        out: dict[int, tuple[int, list[int]]] = {}
        for mid, tid, sibling in rows:
            out.setdefault(mid, (tid, []))[1].append(sibling)
        return out

    def derived(self, turn_ids: Sequence[int]) -> list[int]:
        """Memory ids derived from any of the turns."""
        if not turn_ids:
            return []
        rows = self._rows(
            f"SELECT DISTINCT memory_id FROM provenance WHERE turn_id IN {_IDS}", (_ids(turn_ids),)
        )
        return [r[0] for r in rows]

    def set_state(self, ids: Sequence[int], state: str, at: float) -> None:
        """Change state and touch ``updated_at``."""
        self._touch(ids)
        self._write_many(
            "UPDATE memories SET state = ?, updated_at = ? WHERE id = ?",
            [(state, at, i) for i in ids],
        )

    def set_superseded_by(self, ids: Sequence[int], successor: int) -> None:
        """Record the successor of superseded memories."""
        self._touch(ids)
        self._write_many(
            "UPDATE memories SET superseded_by = ? WHERE id = ?", [(successor, i) for i in ids]
        )

    def set_text(self, memory_id: int, text: str, at: float) -> None:
        """Overwrite a memory's text."""
        self._touch([memory_id])
        self._write(
            "UPDATE memories SET text = ?, updated_at = ? WHERE id = ?", (text, at, memory_id)
        )

    def set_expiry(self, memory_id: int, expires_at: float | None) -> None:
        """Set a memory's expiry."""
        self._touch([memory_id])
        self._write("UPDATE memories SET expires_at = ? WHERE id = ?", (expires_at, memory_id))

    def delete_memories(self, ids: Sequence[int]) -> None:
        """Delete memories and their recall rows (provenance cascades)."""
        with self._lock:
            rows = self.memories_by_id(ids)
            self._touched.update(r.tenant_id for r in rows)
            self.unindex([r for r in rows if r.state == "active"])
            self._write_many("DELETE FROM memories WHERE id = ?", [(i,) for i in ids])

    def expired(self, now: float, states: Sequence[str]) -> list[MemoryRow]:
        """Memories whose ``expires_at`` has passed."""
        rows = self._rows(
            f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.expires_at IS NOT NULL"
            f" AND m.expires_at <= ? AND m.state IN {_IDS} ORDER BY m.id",
            (now, _ids(states)),
        )
        return [_memory(r) for r in rows]

    # -- full-text postings ---------------------------------------------
    def _term_ids(self, tenant_id: int, digests: Sequence[str]) -> dict[str, int]:
        """The tenant's lexicon ids of term digests, made on first use (lock
        held, inside a transaction; ids seen in this transaction are cached)."""
        cache = self._term_cache
        missing = [d for d in digests if (tenant_id, d) not in cache]
        if missing:
            for digest, term in self._db.execute(
                "SELECT lower(hex(digest)), id FROM lexicon WHERE tenant_id = ?"
                " AND digest IN (SELECT unhex(value) FROM json_each(?))",
                (tenant_id, _ids(missing)),
            ).fetchall():
                cache[(tenant_id, digest)] = term
            for digest in missing:
                if (tenant_id, digest) not in cache:
                    self._write(
                        "INSERT INTO lexicon(tenant_id, digest) VALUES (?, unhex(?))",
                        (tenant_id, digest),
                    )
                    cache[(tenant_id, digest)] = self._db.last_insert_rowid()
                    self._fresh.add(cache[(tenant_id, digest)])
        return {d: cache[(tenant_id, d)] for d in digests}

    def _post(self, kind: str, tenant_id: int, doc: int, terms: str) -> None:
        """Write one document's postings (``kind``: m for a memory, t for a
        turn) into its terms' blocks, and count it in the tenant's BM25
        statistics."""
        digests = terms.split()
        if not digests:
            return
        counts = Counter(digests)
        ids = self._term_ids(tenant_id, list(counts))
        prefix, length = _KIND[kind], len(digests)
        term_ids = sorted(ids.values())
        self._write(
            f"INSERT INTO {prefix}_docs(doc, len, terms) VALUES (?, ?, ?)",
            (doc, length, np.asarray(term_ids, dtype="<i8").tobytes()),
        )
        self._unflushed += [(prefix, ids[d], doc, n, length) for d, n in counts.items()]
        if len(self._unflushed) >= FLUSH_EVERY:
            self._flush()
        df = _DF[kind]
        self._write(f"UPDATE lexicon SET {df} = {df} + 1 WHERE id IN {_IDS}", (_ids(term_ids),))
        self._write(
            "INSERT INTO term_stats VALUES (?, ?, 1, ?) ON CONFLICT DO UPDATE"
            " SET docs = docs + 1, length = length + excluded.length",
            (tenant_id, kind, length),
        )

    def _flush(self) -> None:
        """Put the vectors and postings indexed in the open transaction into
        their lists and their terms' blocks: each block read and written
        once, however many of the transaction's documents it gains (before
        a read of them, a document's removal, and at commit)."""
        if self._unlisted:
            unlisted, self._unlisted = self._unlisted, []
            for tenant_id, group in itertools.groupby(
                sorted(unlisted, key=lambda u: u[0]), key=lambda u: u[0]
            ):
                entries = list(group)
                self._lists.add(
                    self._db,
                    tenant_id,
                    np.array([e[1] for e in entries], dtype=np.int64),
                    np.stack([e[2] for e in entries]),
                )
        if not self._unflushed:
            return
        added: dict[str, dict[int, list[tuple[int, int, int]]]] = {}
        for prefix, term, doc, tf, length in self._unflushed:
            added.setdefault(prefix, {}).setdefault(term, []).append((doc, tf, length))
        self._unflushed.clear()
        fresh, self._fresh = self._fresh, set()
        for prefix, by_term in added.items():
            held = {
                t: [] if t in fresh else self._held(prefix, t, [d for d, _, _ in new])
                for t, new in by_term.items()
            }
            self._replace(prefix, held, postings.place(by_term, held))

    def _held(self, prefix: str, term: int, docs: Sequence[int]) -> list[postings.Block]:
        """The blocks of ``term`` that ``docs`` fall in (the last starting at
        or before each, else the term's first), by first document."""
        table, found = f"{prefix}_postings", {}
        # Walking down from the last document: a document at or after a
        # block found for a later one falls in the last such block (no other
        # block starts between them), so appends cost one lookup.
        for doc in sorted(set(docs), reverse=True):
            if found and doc >= min(found):
                continue
            row = (
                self._db.execute(
                    f"SELECT first, docs, tfs, lens FROM {table} WHERE term = ? AND first <= ?"
                    " ORDER BY first DESC LIMIT 1",
                    (term, doc),
                ).fetchone()
                or self._db.execute(
                    f"SELECT first, docs, tfs, lens FROM {table} WHERE term = ?"
                    " ORDER BY first LIMIT 1",
                    (term,),
                ).fetchone()
            )
            if row is not None:
                found[row[0]] = postings.Block.decode(*row)
        return [found[f] for f in sorted(found)]

    def _replace(
        self,
        prefix: str,
        held: dict[int, list[postings.Block]],
        new: Sequence[tuple[int, postings.Block]],
    ) -> None:
        """Delete every block of ``held`` (term -> blocks) and write ``new``."""
        table = f"{prefix}_postings"
        self._write_many(
            f"DELETE FROM {table} WHERE term = ? AND first = ?",
            [(term, b.first) for term, blocks in held.items() for b in blocks],
        )
        self._write_many(
            f"INSERT INTO {table}(term, first, docs, tfs, lens) VALUES (?, ?, ?, ?, ?)",
            [(term, b.first, *b.encode()) for term, b in new],
        )

    def _unpost(self, kind: str, tenant_id: int, docs: Sequence[int]) -> None:
        """Take documents out of their terms' blocks; a term no document
        uses any more leaves the lexicon, its digest with it."""
        prefix, df = _KIND[kind], _DF[kind]
        self._flush()
        for doc in docs:
            found = self._db.execute(
                f"SELECT len, terms FROM {prefix}_docs WHERE doc = ?", (doc,)
            ).fetchone()
            if found is None:
                continue
            length, packed = found
            term_ids = np.frombuffer(packed, dtype="<i8").tolist()
            held = {t: self._held(prefix, t, [doc]) for t in term_ids}
            left = [
                (t, b)
                for t, blocks in held.items()
                for b in (postings.without(o, [doc]) for o in blocks)
                if b is not None
            ]
            self._replace(prefix, held, left)
            self._write(f"DELETE FROM {prefix}_docs WHERE doc = ?", (doc,))
            terms = _ids(term_ids)
            self._write(f"UPDATE lexicon SET {df} = {df} - 1 WHERE id IN {_IDS}", (terms,))
            self._write(
                f"DELETE FROM lexicon WHERE id IN {_IDS} AND mdf <= 0 AND tdf <= 0", (terms,)
            )
            self._write(
                "UPDATE term_stats SET docs = docs - 1, length = length - ?"
                " WHERE tenant_id = ? AND kind = ?",
                (length, tenant_id, kind),
            )
        self._term_cache.clear()  # lexicon rows may be gone

    def _bm25(
        self,
        db: apsw.Connection,
        kind: str,
        tenant_id: int,
        terms: Sequence[str],
        limit: int,
        require_all: bool,
    ) -> list[tuple[int, float]]:
        """Okapi BM25 (k1 1.2, b 0.75, FTS5's idf floor) over the tenant's own
        documents and statistics, best first, read on ``db``. Its reads share
        one snapshot: read apart, another process's commit between them could
        pair document frequencies with a smaller document count."""
        if db.in_transaction:
            if db is self._db:
                self._flush()  # the transaction's own postings count too
            return self._bm25_read(db, kind, tenant_id, terms, limit, require_all)
        db.execute("BEGIN")  # deferred: a read snapshot, no write lock
        try:
            return self._bm25_read(db, kind, tenant_id, terms, limit, require_all)
        finally:
            db.execute("COMMIT")

    def _bm25_read(
        self,
        db: apsw.Connection,
        kind: str,
        tenant_id: int,
        terms: Sequence[str],
        limit: int,
        require_all: bool,
    ) -> list[tuple[int, float]]:
        df = "mdf" if kind == "m" else "tdf"
        found = db.execute(
            f"SELECT id, {df} FROM lexicon WHERE tenant_id = ?"
            f" AND digest IN (SELECT unhex(value) FROM json_each(?)) AND {df} > 0",
            (tenant_id, _ids(dict.fromkeys(terms))),
        ).fetchall()
        if not found or (require_all and len(found) < len(set(terms))):
            return []  # a digest no document of the tenant holds
        stats = db.execute(
            "SELECT docs, length FROM term_stats WHERE tenant_id = ? AND kind = ?",
            (tenant_id, kind),
        ).fetchone()
        n, total = stats if stats else (0, 0)
        weighted = postings.weights(found, n, drop_floor=not require_all)
        rows = db.execute(
            f"SELECT term, docs, tfs, lens FROM {_KIND[kind]}_postings WHERE term IN {_IDS}"
            " ORDER BY term, first",
            (_ids([t for t, _ in weighted]),),
        ).fetchall()
        return postings.top_k(rows, weighted, total / n if n else 1.0, limit, require_all)

    # -- recall indexes -------------------------------------------------
    def index_terms(self, row: MemoryRow, terms: str) -> None:
        """Insert a memory's full-text postings."""
        with self._lock:
            self._post("m", row.tenant_id, row.id, terms)

    def index(self, row: MemoryRow, terms: str, embedding: np.ndarray) -> None:
        """Insert FTS and vector rows for one memory (listed at the next flush)."""
        vec = np.ascontiguousarray(embedding, dtype=np.float32)
        with self._lock:
            self.index_terms(row, terms)
            self._write(
                "INSERT INTO memory_vectors(id, tenant_id, embedding) VALUES (?, ?, ?)",
                (row.id, row.tenant_id, vec.tobytes()),
            )
            self._unlisted.append((row.tenant_id, row.id, vec))
            self._touched.add(row.tenant_id)

    def unindex(self, rows: Sequence[MemoryRow]) -> None:
        """Delete FTS and vector rows."""
        with self._lock:
            for tenant_id in {r.tenant_id for r in rows}:
                self._unpost("m", tenant_id, [r.id for r in rows if r.tenant_id == tenant_id])
            self._flush()  # the transaction's own vectors are in their lists
            self._lists.remove(self._db, [r.id for r in rows])
            self._touched.update(r.tenant_id for r in rows)

    def lexical(
        self,
        tenant_id: int,
        terms: Sequence[str],
        limit: int,
        require_all: bool = False,
        turns: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 hits over the tenant's memories (or turns) for term digests."""
        if not terms:
            return []
        with self._reading() as db:
            return self._bm25(db, "t" if turns else "m", tenant_id, terms, limit, require_all)

    def vector(self, tenant_id: int, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """Cosine top-k over the tenant's vector lists: exact for a small
        tenant, the lists nearest the query for a large one."""
        with self._reading() as db:
            if db is self._db and self._depth:
                self._flush()  # this transaction's own vectors count too
            return self._lists.search(db, tenant_id, np.asarray(query, dtype=np.float32), limit)

    def embeddings(self, tenant_id: int, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Stored vectors of the indexed memories among ``ids`` (this
        transaction's own included, on its thread)."""
        rows = self._rows(
            f"SELECT id, embedding FROM memory_vectors WHERE tenant_id = ? AND id IN {_IDS}",
            (tenant_id, _ids(ids)),
        )
        return {mid: np.frombuffer(blob, dtype=np.float32).copy() for mid, blob in rows}

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
        with self._lock:
            self._write(
                "INSERT INTO audit(at, tenant, op, detail, refs, prev, hash)"
                " VALUES (?,?,?,?,?,?,?)",
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
            self._write_many(
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
            rows = self._rows(f"SELECT {cols} FROM audit a ORDER BY a.seq")
        else:
            rows = self._rows(
                f"SELECT {cols} FROM audit_refs r JOIN audit a ON a.seq = r.seq"
                " WHERE r.ref = ? ORDER BY a.seq",
                (ref,),
            )
        for r in rows:
            yield AuditRow(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]), r[6], r[7])

    def rewrite_audit(self, rows: Sequence[AuditRow]) -> None:
        """Replace the tenant, prev and hash of audit rows (an upgrade
        re-chaining the log; inside its transaction)."""
        self._write_many(
            "UPDATE audit SET tenant = ?, prev = ?, hash = ? WHERE seq = ?",
            [(r.tenant, r.prev, r.hash, r.seq) for r in rows],
        )

    def set_tenant_handles(self, handles: dict[int, str]) -> None:
        """Give tenants their audit handles (an upgrade; inside its transaction)."""
        self._write_many(
            "UPDATE tenants SET handle = ? WHERE id = ?", [(h, t) for t, h in handles.items()]
        )

    def tenant_keys(self) -> dict[int, str]:
        """Every tenant id with its key (for upgrades)."""
        return {r[0]: r[1] for r in self._rows("SELECT id, key FROM tenants")}

    # -- API keys (the REST service) -------------------------------------
    # A table of its own, made by the first server that opens the store (a
    # store that is never served has none, so the schema version is
    # unchanged). A key is kept only as its SHA-256 digest; a revoked key's
    # row is deleted, and secure_delete zeroes it with its tenant name.
    _API_KEYS = (
        "CREATE TABLE IF NOT EXISTS api_keys(id TEXT PRIMARY KEY, digest BLOB NOT NULL UNIQUE,"
        " tenant TEXT NOT NULL, created_at REAL NOT NULL)"
    )

    def api_keys_init(self) -> None:
        """Create the API key table if the store has none yet."""
        if self._scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'api_keys'"):
            return
        with self.transaction():
            self._write(self._API_KEYS)

    def api_key_add(self, key_id: str, digest: bytes, tenant: str, at: float) -> None:
        """Store a key's digest for a tenant key (``user:…`` or ``agent:…``)."""
        with self.transaction():
            self._write("INSERT INTO api_keys VALUES (?, ?, ?, ?)", (key_id, digest, tenant, at))

    def api_key_tenant(self, digest: bytes) -> str | None:
        """The tenant key a key digest belongs to, or None."""
        return self._scalar("SELECT tenant FROM api_keys WHERE digest = ?", (digest,))

    def api_key_list(self) -> list[tuple[str, str, float]]:
        """Every key's (id, tenant key, created_at), oldest first; never a digest."""
        return [
            (r[0], r[1], r[2])
            for r in self._rows("SELECT id, tenant, created_at FROM api_keys ORDER BY created_at")
        ]

    def api_key_revoke(self, key_id: str) -> bool:
        """Delete a key; False when no key has that id."""
        with self.transaction():
            found = self._scalar("SELECT 1 FROM api_keys WHERE id = ?", (key_id,))
            if found:
                self._write("DELETE FROM api_keys WHERE id = ?", (key_id,))
        return bool(found)

    # -- migration (``storage.migrate``) ----------------------------------
    def set_secret_key(self, key: bytes) -> None:
        """Replace the term-digest key (inside a transaction; the old key's
        cell is zeroed by secure_delete)."""
        self._write("UPDATE secrets SET value = ? WHERE name = 'store_key'", (key,))

    def put_turn(self, tenant_id: int, turn: TurnRow) -> TurnRow:
        """Insert a turn as given (uid, time, metadata); a new id."""
        with self._lock:
            self._touched.add(tenant_id)
            self._write(
                "INSERT INTO turns(uid, tenant_id, role, text, session_id, at, metadata)"
                " VALUES (?,?,?,?,?,?,?)",
                (
                    turn.uid,
                    tenant_id,
                    turn.role,
                    turn.text,
                    turn.session_id,
                    turn.at,
                    json.dumps(turn.metadata),
                ),
            )
            tid = self._db.last_insert_rowid()
        return replace(turn, id=tid, tenant_id=tenant_id)

    def put_memory(self, tenant_id: int, row: MemoryRow, sources: Sequence[int]) -> MemoryRow:
        """Insert a memory as given (uid, state, times) with its provenance
        edges; a new id, no successor link yet, not indexed."""
        with self._lock:
            self._touched.add(tenant_id)
            self._write(
                "INSERT INTO memories(uid, tenant_id, agent_id, run_id, text, kind, state,"
                " created_at, updated_at, expires_at, metadata)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    row.uid,
                    tenant_id,
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
            )
            mid = self._db.last_insert_rowid()
            self._write_many(
                "INSERT OR IGNORE INTO provenance(memory_id, turn_id) VALUES (?, ?)",
                [(mid, t) for t in sources],
            )
        return replace(row, id=mid, tenant_id=tenant_id, superseded_by=None)

    def put_audit(self, rows: Sequence[AuditRow]) -> None:
        """Insert audit rows verbatim, seq included (AUTOINCREMENT then goes
        on after the highest), and their ref index entries."""
        self._write_many(
            "INSERT INTO audit(seq, at, tenant, op, detail, refs, prev, hash)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [
                (
                    r.seq,
                    r.at,
                    r.tenant,
                    r.op,
                    json.dumps(r.detail, sort_keys=True),
                    json.dumps(list(r.refs)),
                    r.prev,
                    r.hash,
                )
                for r in rows
            ],
        )
        self._write_many(
            "INSERT OR IGNORE INTO audit_refs(ref, seq) VALUES (?, ?)",
            [(ref, r.seq) for r in rows for ref in r.refs],
        )

    def api_key_rows(self) -> list[ApiKeyRow]:
        """Every API key row with its digest, oldest first ([] when never served)."""
        if not self._scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'api_keys'"
        ):
            return []
        return [
            (r[0], bytes(r[1]), r[2], r[3])
            for r in self._rows(
                "SELECT id, digest, tenant, created_at FROM api_keys ORDER BY created_at, id"
            )
        ]

    def put_api_keys(self, rows: Sequence[ApiKeyRow]) -> None:
        """Insert API key rows as given, making the table if needed."""
        if not rows:
            return
        self.api_keys_init()
        self._write_many("INSERT INTO api_keys VALUES (?, ?, ?, ?)", rows)


def _query_only(path: Path) -> apsw.Connection:
    """A connection that cannot write the database. Read-write but
    ``query_only`` when the file allows it: a read-only connection leaves
    the ``-wal`` and ``-shm`` files it made behind, the last read-write one
    removes them on close (as ``SQLiteStorage``'s readers do)."""
    try:
        db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
        db.execute("PRAGMA query_only=ON").fetchall()
        return db
    except (apsw.CantOpenError, apsw.ReadOnlyError):
        return apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)


def peek(path: str | os.PathLike[str]) -> StoreInfo | None:
    """A read-only look at a store file, without creating, migrating or
    checkpointing it: None when there is no store yet (no file, or an empty
    one), else its meta (``schema_version`` from ``user_version``), pending
    upgrades and whether it holds anything. A file that is not an unrecall
    store raises ``NotAStore``."""
    where = Path(path)
    try:
        if not where.exists() or where.stat().st_size == 0:
            return None
        db = _query_only(where)
    except _UNREADABLE as exc:
        raise NotAStore(_reason(exc)) from exc
    except (OSError, apsw.Error) as exc:
        raise StoreError(f"cannot open the store file: {_reason(exc)}") from exc
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version == 0 and not tables:
            return None  # an empty database: a new store may be made in it
        if _foreign(version, tables):
            raise NotAStore("a SQLite database unrecall did not make")
        meta = {str(k): str(v) for k, v in db.execute("SELECT key, value FROM meta")}
        meta["schema_version"] = str(version)
        held = " OR ".join(
            f"EXISTS (SELECT 1 FROM {t})" for t in ("tenants", "audit", "api_keys") if t in tables
        )
        empty = not db.execute(f"SELECT {held}").fetchone()[0]
    except _UNREADABLE as exc:
        raise NotAStore(_reason(exc)) from exc
    except apsw.Error as exc:
        raise StoreError(f"cannot read the store file: {_reason(exc)}") from exc
    finally:
        db.close()
    return StoreInfo(meta, meta.get("upgrade", "").split(), empty)

"""The storage interface the recall and control planes are written against.

It speaks in rows and integer ids and knows nothing of targeting, fusion or
requests, so a PostgreSQL + pgvector backend can implement it without
touching the planes. Full-text rows arrive already reduced to keyed term
digests (the backend may store them as something else: SQLite maps them to
random lexicon tokens); vectors arrive as float32 arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class TurnRow:
    """A source turn as stored."""

    id: int
    uid: str
    tenant_id: int
    role: str
    text: str
    session_id: str | None
    at: float
    metadata: dict[str, Any]


@dataclass(frozen=True)
class MemoryRow:
    """A derived memory as stored."""

    id: int
    uid: str
    tenant_id: int
    agent_id: str | None
    run_id: str | None
    text: str
    kind: str
    state: str
    created_at: float
    updated_at: float
    expires_at: float | None
    metadata: dict[str, Any]
    superseded_by: str | None


@dataclass(frozen=True)
class AuditRow:
    """One link of the hash-chained audit log (no content, by contract)."""

    seq: int
    at: float
    tenant: str
    op: str
    detail: dict[str, Any]
    refs: list[str]
    prev: str
    hash: str


@dataclass(frozen=True)
class StoreInfo:
    """What a look at a store location found without opening it for writing
    (each backend's ``peek``): its meta rows (``embedder``, ``dim``,
    ``schema_version``, ...), pending upgrade steps, and whether it holds
    nothing yet (no tenant, no audit event, no API key)."""

    meta: dict[str, str]
    upgrades: list[str]
    empty: bool

    @property
    def schema_version(self) -> int:
        """The store's schema version (0 when unknown)."""
        return int(self.meta.get("schema_version", "0"))


# An API key row as stored: (id, SHA-256 digest, tenant key, created_at).
ApiKeyRow = tuple[str, bytes, str, float]


class Storage(Protocol):
    """Persistence for tenants, turns, memories, provenance, indexes, audit."""

    dim: int

    # -- lifecycle -------------------------------------------------------
    def transaction(self) -> AbstractContextManager[None]:
        """All writes inside commit together or not at all (nestable)."""
        ...

    def held(self) -> bool:
        """True when this thread holds the store (inside a transaction), so
        work handed to another thread must not wait for the store."""
        ...

    def secret_key(self) -> bytes:
        """The store's random key for term digests."""
        ...

    def upgrades(self) -> list[str]:
        """Pending upgrade steps that need the planes (``reindex``, ``rechain``)."""
        ...

    def upgraded(self, step: str) -> None:
        """Mark an upgrade step done."""
        ...

    def compact(self, tick: Callable[[], None] | None = None) -> None:
        """Rewrite the file to give the space of deleted rows back (erasure
        itself holds at commit and never waits for this); ``tick`` is called
        now and then meanwhile, for progress."""
        ...

    def erase(self, now: bool = False) -> bool:
        """Push committed deletions out of every file (WAL included), after
        calling every ``on_erase`` hook; True when nothing of them is left.
        A store opened with deferred erasure does it only when ``now`` (an
        explicit ``Memory.erase``, ``verify_erased`` or ``compact``): a
        forget's own call then returns False and leaves the work queued."""
        ...

    def erasure_gaps(self) -> list[str]:
        """What keeps copies of the store that ``erase`` cannot reach (a
        server's WAL archive, replication, a log of statement values), each
        with what to change; empty when an erasure can be complete."""
        ...

    def on_erase(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` on every ``erase``: what a plane keeps in memory
        (cached vectors) goes with the deleted bytes."""
        ...

    def files(self) -> list[Path]:
        """Every file that holds bytes of the store."""
        ...

    def size(self) -> int:
        """The bytes the store takes on disk."""
        ...

    def close(self) -> None:
        """Release the connection; the object is unusable afterwards."""
        ...

    def searched(self) -> None:
        """A search is done: the SQLite store starts reading its file into
        the OS page cache (``storage.prewarm``) after the first."""
        ...

    # -- tenants and turns ----------------------------------------------
    def tenant(self, key: str, create: bool) -> int | None:
        """The id of a tenant key such as ``user:alice``; optionally create it."""
        ...

    def tenant_handle(self, tenant_id: int) -> str | None:
        """The audit handle of a tenant id, or None if it is gone."""
        ...

    def tenant_version(self, tenant_id: int) -> int:
        """A number that changes with every write to the tenant's memories,
        turns or provenance (-1 once the tenant is gone): a plan made outside
        the write lock checks it at apply time."""
        ...

    def erase_tenant(self, tenant_id: int) -> tuple[int, int]:
        """Delete every row of a tenant and the tenant itself, at any size;
        returns (memories, turns) deleted."""
        ...

    def add_turn(
        self,
        tenant_id: int,
        role: str,
        text: str,
        session_id: str | None,
        at: float,
        metadata: dict[str, Any],
    ) -> TurnRow:
        """Store one source turn."""
        ...

    def turn(self, tenant_id: int, uid: str) -> TurnRow | None:
        """One turn of a tenant by public id."""
        ...

    def turns(self, tenant_id: int) -> list[TurnRow]:
        """Every turn of a tenant, oldest first."""
        ...

    def turns_by_id(self, ids: Sequence[int]) -> list[TurnRow]:
        """Turns by internal id, in the order given, missing ones skipped."""
        ...

    def index_turn(self, turn: TurnRow, terms: str) -> None:
        """Write a turn's full-text row (keyed term digests)."""
        ...

    def set_turn_text(self, turn: TurnRow, text: str, terms: str) -> None:
        """Replace a turn's text and full-text row (used to redact purged content)."""
        ...

    def delete_turns(self, turn_ids: Sequence[int]) -> None:
        """Hard-delete turns, their full-text rows and provenance edges."""
        ...

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
        """Store one active memory with provenance edges to its turns."""
        ...

    def link(self, memory_ids: Sequence[int], turn_id: int) -> None:
        """Add ``turn_id`` as one more source of each memory (a repetition)."""
        ...

    def memory(self, tenant_id: int, uid: str) -> MemoryRow | None:
        """One memory of a tenant by public id."""
        ...

    def memories(self, tenant_id: int, states: Sequence[str] | None = None) -> list[MemoryRow]:
        """A tenant's memories, optionally only those in ``states``."""
        ...

    def memories_by_id(self, ids: Sequence[int]) -> list[MemoryRow]:
        """Memories by internal id, in the order given, missing ones skipped."""
        ...

    def count_memories(self, tenant_id: int) -> int:
        """How many memories a tenant holds, in any state."""
        ...

    def sources(self, memory_ids: Sequence[int]) -> dict[int, list[TurnRow]]:
        """Source turns of each memory."""
        ...

    def statements(self, memory_ids: Sequence[int]) -> dict[int, tuple[int, list[int]]]:
        """Per memory id: the statement (first source turn) it came from and
        every memory derived from that turn, in id order."""
        ...

    def derived(self, turn_ids: Sequence[int]) -> list[int]:
        """Ids of every memory with a provenance edge to one of the turns."""
        ...

    def set_state(self, ids: Sequence[int], state: str, at: float) -> None:
        """Move memories to a state (active / released / superseded)."""
        ...

    def set_superseded_by(self, ids: Sequence[int], successor: int) -> None:
        """Link superseded memories to the memory that replaced them."""
        ...

    def set_text(self, memory_id: int, text: str, at: float) -> None:
        """Overwrite a memory's text in place."""
        ...

    def set_expiry(self, memory_id: int, expires_at: float | None) -> None:
        """Set or clear a memory's expiry time."""
        ...

    def delete_memories(self, ids: Sequence[int]) -> None:
        """Hard-delete memories, their provenance and their index rows."""
        ...

    def expired(self, now: float, states: Sequence[str]) -> list[MemoryRow]:
        """Memories of any tenant whose expiry is at or before ``now``."""
        ...

    # -- recall indexes -------------------------------------------------
    def index(self, row: MemoryRow, terms: str, embedding: np.ndarray) -> None:
        """Make a memory recallable: full-text terms and vector row."""
        ...

    def unindex(self, rows: Sequence[MemoryRow]) -> None:
        """Remove memories from both recall indexes."""
        ...

    def lexical(
        self,
        tenant_id: int,
        terms: Sequence[str],
        limit: int,
        require_all: bool = False,
        turns: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 hits ``(id, score)``, best first (higher is better), over
        memories or, with ``turns``, over source turns."""
        ...

    def vector(self, tenant_id: int, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """Cosine-similarity hits ``(memory id, similarity)``, best first."""
        ...

    def embeddings(self, tenant_id: int, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of those of ``ids`` that are indexed (active
        memories of the tenant), by id; the others are left out."""
        ...

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
        """Append one audit row and index it under each ref (memory/turn id)."""
        ...

    def audit_last_hash(self) -> str | None:
        """The hash of the newest audit row, or None for an empty log."""
        ...

    def audit_rows(self, ref: str | None = None) -> Iterator[AuditRow]:
        """Audit rows in order, all or those indexed under ``ref``."""
        ...

    def rewrite_audit(self, rows: Sequence[AuditRow]) -> None:
        """Replace the tenant, prev and hash of audit rows (an upgrade
        re-chaining the log)."""
        ...

    def set_tenant_handles(self, handles: dict[int, str]) -> None:
        """Give tenants their audit handles (an upgrade)."""
        ...

    def tenant_keys(self) -> dict[int, str]:
        """Every tenant id with its key (for upgrades)."""
        ...

    def index_terms(self, row: MemoryRow, terms: str) -> None:
        """Write only a memory's full-text row (an upgrade rebuilding it)."""
        ...

    # -- migration (``storage.migrate``: a store copied row for row) ------
    def set_secret_key(self, key: bytes) -> None:
        """Replace the store's term-digest key (a new store taking the key of
        the store it is a copy of, before any full-text row is written)."""
        ...

    def put_turn(self, tenant_id: int, turn: TurnRow) -> TurnRow:
        """Store a turn exactly as given (uid, role, text, session, time,
        metadata); its ``id`` and ``tenant_id`` are ignored. Returns the
        stored row, with the id this store gave it."""
        ...

    def put_memory(self, tenant_id: int, row: MemoryRow, sources: Sequence[int]) -> MemoryRow:
        """Store a memory exactly as given (uid, state, times, metadata) with
        provenance edges to ``sources`` (turn ids of this store); its ``id``,
        ``tenant_id`` and ``superseded_by`` are ignored (``set_superseded_by``
        links it once its successor is stored). Not indexed."""
        ...

    def put_audit(self, rows: Sequence[AuditRow]) -> None:
        """Append audit rows verbatim, ``seq`` included (later appends follow
        the highest), each indexed under its refs."""
        ...

    def api_key_rows(self) -> list[ApiKeyRow]:
        """Every API key row, digest included, oldest first (none when the
        store was never served)."""
        ...

    def put_api_keys(self, rows: Sequence[ApiKeyRow]) -> None:
        """Store API key rows as given (the table is made if needed)."""
        ...

"""Storage backends behind one narrow interface (see ``base.Storage``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from unrecall.errors import InvalidInput, StoreError
from unrecall.validation import check_bool, check_count

if TYPE_CHECKING:
    from unrecall.storage.base import Storage, StoreInfo


def _backend(where: Path | str) -> ModuleType:
    """The backend module of a checked location (``validation.check_store``):
    a ``str`` is a PostgreSQL URL, a ``Path`` a SQLite file. Imported here,
    not at the top, so the PostgreSQL driver stays an optional extra."""
    if not isinstance(where, str):
        from unrecall.storage import sqlite

        return sqlite
    try:
        from unrecall.storage import postgres
    except ImportError as exc:
        raise StoreError(
            f"the PostgreSQL backend needs {exc.name}: pip install 'unrecall[postgres]'"
        ) from None
    return postgres


ERASURES = ("commit", "deferred")


def open_storage(
    where: Path | str,
    dim: int,
    embedder_name: str,
    erasure: str = "commit",
    progress: Callable[[str], None] | None = None,
    prewarm: bool | None = None,
    vector_cache_mb: int | None = None,
) -> Storage:
    """Open (or create) the store at a checked location on its backend;
    ``embedder_name`` and ``dim`` are what a new store records and an
    existing one must match. ``erasure`` is when committed deletions leave
    the files: at each forget's commit, or ``deferred`` to an explicit
    ``erase(now=True)`` (PostgreSQL only: there a forget's erasure rewrites
    the tenant's part of every table, O(tenant); SQLite's costs
    milliseconds and is always done at commit). A ``Progress`` shows a
    ticker while a SQLite store's upgrade at open runs long. ``prewarm``
    reads a SQLite store's file into the OS page cache after the first
    search (``storage.prewarm``): True always, False never, None when the
    file takes at most half the memory available. ``vector_cache_mb`` is
    the memory a SQLite store keeps its vector lists' rows in between
    searches (``storage.list_cache``; None: ``VECTOR_CACHE_MB``, 0: none)."""
    if erasure not in ERASURES:
        raise InvalidInput("erasure must be 'commit' or 'deferred'")
    if prewarm is not None:
        check_bool(prewarm, "prewarm")
    if vector_cache_mb is not None:
        check_count(vector_cache_mb, "vector_cache_mb")
    module = _backend(where)
    if not isinstance(where, str):
        if erasure != "commit":
            raise InvalidInput(
                "erasure='deferred' is for PostgreSQL stores (SQLite erases at commit)"
            )
        storage: Storage = module.SQLiteStorage(
            where,
            dim,
            embedder_name,
            progress=progress,
            prewarm=prewarm,
            vector_cache_mb=vector_cache_mb,
        )
        return storage
    if prewarm:
        raise InvalidInput(
            "prewarm=True is for SQLite stores (PostgreSQL keeps its own buffers: pg_prewarm)"
        )
    if vector_cache_mb is not None:
        raise InvalidInput(
            "vector_cache_mb is for SQLite stores (PostgreSQL keeps its own buffers)"
        )
    pg: Storage = module.PostgresStorage(where, dim, embedder_name, deferred=erasure == "deferred")
    return pg


def peek_store(where: Path | str) -> StoreInfo | None:
    """A look at the store at a checked location that writes nothing: None
    when there is no store there yet (``sqlite.peek``, ``postgres.peek``)."""
    info: StoreInfo | None = _backend(where).peek(where)
    return info

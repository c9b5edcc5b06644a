"""Storage backends behind one narrow interface (see ``base.Storage``)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from unrecall.errors import StoreError

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


def open_storage(where: Path | str, dim: int, embedder_name: str) -> Storage:
    """Open (or create) the store at a checked location on its backend;
    ``embedder_name`` and ``dim`` are what a new store records and an
    existing one must match."""
    module = _backend(where)
    cls = module.PostgresStorage if isinstance(where, str) else module.SQLiteStorage
    storage: Storage = cls(where, dim, embedder_name)
    return storage


def peek_store(where: Path | str) -> StoreInfo | None:
    """A look at the store at a checked location that writes nothing: None
    when there is no store there yet (``sqlite.peek``, ``postgres.peek``)."""
    info: StoreInfo | None = _backend(where).peek(where)
    return info

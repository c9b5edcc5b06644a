"""Copy a whole store to another backend or location, faithfully.

``migrate(src, dst)`` reads every tenant, turn, memory, provenance edge,
stored vector, audit event and API key of the source and writes them to an
empty destination with the same embedder, the same public ids and times,
the same tenant handles, the audit rows verbatim (so the chain verifies and
``history`` tells the same story) and the same term-digest key. Full-text
rows are not copied (SQLite's hold lexicon ids of its own): they are built
again from the texts, the way the planes index them (every turn; active
memories only), and vectors are copied, never re-embedded. Internal integer
ids are the destination's own, given in the source's order, so ties in
recall break the same way.

Atomicity: the destination is written in one transaction. A failure part
way rolls it back, leaving the destination empty-looking (a new store with
no tenant, no event and no key, which a second ``migrate`` accepts); a
refusal writes nothing at all. The source is only read: its write lock is
held while it is read, so the copy is one consistent snapshot, but nothing
is written to it, and a missing source or one needing an upgrade is refused
rather than created or upgraded. No text is logged or put in an error.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from unrecall.errors import InvalidInput, StoreError
from unrecall.progress import steps
from unrecall.recall.lexical import TermHasher
from unrecall.records import ACTIVE
from unrecall.storage import open_storage, peek_store
from unrecall.storage.base import Storage, StoreInfo
from unrecall.storage.schema import SCHEMA_VERSION
from unrecall.validation import check_path, check_store

# ``sqlite:///abs/path.db`` names the file ``/abs/path.db`` (what follows
# the scheme is the path, as SQLAlchemy writes it).
SQLITE_SCHEME = "sqlite://"
AUDIT_BATCH = 10_000  # audit rows per insert statement


@dataclass(frozen=True)
class MigrationReport:
    """What ``migrate`` copied: counts only (never a text), and the
    embedder the destination was made for."""

    tenants: int
    turns: int
    memories: int
    provenance: int
    vectors: int
    audit_events: int
    api_keys: int
    embedder: str
    dim: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


def location(value: Any, role: str) -> Path | str:
    """A checked store location: a SQLite file path, ``sqlite:///abs/path.db``
    (the file path after the scheme) or a ``postgresql://`` URL (kept as
    given). ``role`` ("source", "destination") prefixes refusals, which
    never repeat the value (a path may name a person, a URL hold a password)."""
    try:
        if isinstance(value, str) and value[: len(SQLITE_SCHEME)].casefold() == SQLITE_SCHEME:
            rest = value[len(SQLITE_SCHEME) :]
            if not rest:
                raise InvalidInput("a sqlite:// URL needs a file path (sqlite:///abs/path.db)")
            return check_path(rest)
        return check_store(value)
    except InvalidInput as exc:
        raise InvalidInput(f"{role}: {exc}") from None


def _same_place(a: Path | str, b: Path | str) -> bool:
    """Whether two checked locations obviously name one store (two URLs to
    one database are caught later, by the store key)."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a.resolve() == b.resolve()


def _peek(where: Path | str, role: str) -> StoreInfo | None:
    """``peek_store`` with refusals saying which side they are about."""
    try:
        return peek_store(where)
    except StoreError as exc:
        raise StoreError(f"{role}: {exc}") from None


def _open(where: Path | str, dim: int, name: str, role: str) -> Storage:
    """``open_storage`` with refusals saying which side they are about."""
    try:
        return open_storage(where, dim, name)
    except StoreError as exc:
        raise StoreError(f"{role}: {exc}") from None


def _source_info(where: Path | str) -> tuple[str, int]:
    """The source's embedder name and dim, refusing a location with no
    store (it would be created) or one that needs an upgrade (it would be
    changed)."""
    info = _peek(where, "source")
    if info is None:
        raise StoreError("source: there is no unrecall store there")
    if info.schema_version != SCHEMA_VERSION or info.upgrades:
        raise StoreError(
            f"source: the store is schema v{info.schema_version} with upgrades pending;"
            " open it once with this unrecall to upgrade it, then migrate"
        )
    name, dim = info.meta.get("embedder"), info.meta.get("dim", "")
    if not name or not dim.isdigit():
        raise StoreError("source: the store records no embedder")
    return name, int(dim)


def _check_destination(info: StoreInfo | None, name: str, dim: int) -> None:
    """Refuse, before anything is opened for writing, a destination that
    holds something or was made otherwise than the copy needs."""
    if info is None:
        return  # a new file or an empty database: the store is made there
    if not info.empty:
        raise StoreError(
            "destination: the store is not empty; give a new file or an empty database"
            " (nothing was written)"
        )
    if info.schema_version != SCHEMA_VERSION or info.upgrades:
        raise StoreError("destination: an empty store of an older schema; give a new file")
    if info.meta.get("embedder") != name or info.meta.get("dim") != str(dim):
        raise StoreError(
            "destination: an empty store made for another embedder than the source's;"
            " give a new file or an empty database"
        )


def _refuse_unless_empty(dst: Storage) -> None:
    """The emptiness check again, under the destination's write lock:
    another process may have written since the first look."""
    if dst.tenant_keys() or dst.audit_last_hash() is not None or dst.api_key_rows():
        raise StoreError(
            "destination: the store is not empty; give a new file or an empty database"
            " (nothing was written)"
        )


def _copy(
    src: Storage, dst: Storage, name: str, progress: Callable[[str], None] | None
) -> MigrationReport:
    """Copy every row (both stores inside their transactions)."""
    key = src.secret_key()
    dst.set_secret_key(key)  # before any full-text row: digests are keyed by it
    hasher = TermHasher(key)
    counts = dict.fromkeys(("turns", "memories", "provenance", "vectors"), 0)
    tenants = sorted(src.tenant_keys().items())
    for old_tid, tenant_key in steps(progress, tenants, "migrating", "tenant"):
        tid = dst.tenant(tenant_key, True)
        handle = src.tenant_handle(old_tid)
        if tid is None or handle is None:
            raise StoreError("source: a tenant changed while it was read")
        dst.set_tenant_handles({tid: handle})  # the audit names the tenant by it
        # In id order, so the destination's ids keep the source's order
        # (recall breaks ties by id, ``statements`` takes the first turn).
        turns: dict[int, int] = {}
        for turn in sorted(src.turns(old_tid), key=lambda t: t.id):
            new = dst.put_turn(tid, turn)
            dst.index_turn(new, hasher.document(new.text))  # every turn is indexed
            turns[turn.id] = new.id
        rows = src.memories(old_tid)  # in id order
        sources = src.sources([r.id for r in rows])
        vectors = src.embeddings(old_tid, [r.id for r in rows if r.state == ACTIVE])
        memories: dict[str, int] = {}
        for row in rows:
            edges = [turns[t.id] for t in sources[row.id] if t.id in turns]
            new = dst.put_memory(tid, row, edges)
            memories[row.uid] = new.id
            counts["provenance"] += len(edges)
            if row.state == ACTIVE:  # released and superseded memories are in no index
                vec = vectors.get(row.id)
                if vec is None:
                    raise StoreError("source: an active memory has no stored vector")
                dst.index(new, hasher.document(new.text), vec)
                counts["vectors"] += 1
        # Successor links last: a successor may come before what it replaced.
        successors: dict[int, list[int]] = {}
        for row in rows:
            if row.superseded_by is not None and row.superseded_by in memories:
                successors.setdefault(memories[row.superseded_by], []).append(memories[row.uid])
        for successor, ids in successors.items():
            dst.set_superseded_by(ids, successor)
        counts["turns"] += len(turns)
        counts["memories"] += len(rows)
    events = list(src.audit_rows())
    for start in range(0, len(events), AUDIT_BATCH):
        dst.put_audit(events[start : start + AUDIT_BATCH])
    if dst.audit_last_hash() != src.audit_last_hash():
        raise StoreError("the copied audit log does not end where the source's does")
    keys = src.api_key_rows()
    dst.put_api_keys(keys)
    return MigrationReport(
        tenants=len(tenants),
        audit_events=len(events),
        api_keys=len(keys),
        embedder=name,
        dim=dst.dim,
        **counts,
    )


def migrate(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    progress: Callable[[str], None] | None = None,
) -> MigrationReport:
    """Copy the whole store at ``src`` to an empty store at ``dst``.

    Each is a SQLite file path, ``sqlite:///abs/path.db`` or a
    ``postgresql://`` URL; any direction works. The destination is made for
    the source's embedder (name and dim, read from its meta) and must be
    new or empty, else ``StoreError`` and nothing is written; the source is
    never written. Tenants, turns, memories (every state, with successor
    links), provenance, vectors, the audit log (verbatim), API keys and the
    term-digest key are copied; full-text rows are rebuilt from the texts.
    One destination transaction: a failure leaves it empty-looking, and
    ``migrate`` can be run again. ``progress`` (a ``unrecall.progress.
    Progress``) shows a bar per tenant. Returns the counts copied.
    """
    source = location(src, "source")
    target = location(dst, "destination")
    if _same_place(source, target):
        raise InvalidInput("the source and the destination are the same store")
    name, dim = _source_info(source)
    _check_destination(_peek(target, "destination"), name, dim)
    src_store = _open(source, dim, name, "source")
    try:
        dst_store = _open(target, dim, name, "destination")
        try:
            if src_store.secret_key() == dst_store.secret_key():
                raise InvalidInput("the source and the destination are the same store")
            with dst_store.transaction():
                _refuse_unless_empty(dst_store)
                with src_store.transaction():  # a snapshot: writers wait, nothing is written
                    return _copy(src_store, dst_store, name, progress)
        finally:
            dst_store.close()
    finally:
        src_store.close()

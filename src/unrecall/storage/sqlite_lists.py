"""The vector lists (``storage.vector_lists``) as tables of the SQLite store.

``vector_lists`` holds each list's size and centroid, ``vector_chunks``
its members' int8 codes in chunks of up to ``CHUNK``, and
``memory_vectors`` each memory's float32 vector (for the rescore) and the
lists it is in (``list``, and ``spill`` for its second). All writes run
inside the store's transaction and go through its connection; a search
reads on whichever connection the store hands it, and caches a tenant's
centroids, and the lists' rows it read (``storage.list_cache``), per
tenant version, so it sees other processes' commits without a log of its
own.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import apsw
import numpy as np

from unrecall.storage.list_cache import ListCache
from unrecall.storage.schema import OLD_LISTS
from unrecall.storage.vector_lists import (
    CHUNK,
    SPLIT_AT,
    Centroids,
    Rows,
    halves,
    int8_scan,
    mean,
    products,
)

# A list of ids is bound as one JSON array, so no statement ever needs more
# than a handful of variables (SQLite allows 32,766): a tenant of any size
# can be read, exported and erased.
_IDS = "(SELECT value FROM json_each(?))"
# A rescore reads float32 rows in batches of twice the limit, and of at least this
RESCORE_BATCH = 64
# A process's first load of a large tenant's centroids reads its
# vector_lists rows (16.5 MB at 1M, 10,700 lists) from wherever they lie in
# the file, a page at a time: 514-693 ms of a cold start's first search.
# Read first by ranges of lists on WARM_READERS connections at once, they
# were cached in ~210 ms and the load then took ~90 (docs/benchmarks.md,
# issue #17, ninth round).
WARM_LISTS = 2_000
WARM_READERS = 4


def _ids(values: Sequence[Any]) -> str:
    """A list of ids (or other JSON values) bound as one argument for ``_IDS``."""
    return json.dumps(list(values))


class ListIndex:
    """The store's vector index; ``write`` runs a statement in the open
    transaction (the store's ``_write``), ``write_many`` a batch of them."""

    def __init__(
        self,
        dim: int,
        write: Callable[[str, Sequence[Any]], list[tuple[Any, ...]]],
        write_many: Callable[[str, Sequence[Sequence[Any]]], None],
        connect: Callable[[], apsw.Connection],
        cache_bytes: int,
    ) -> None:
        self.dim = dim
        # lists' rows as searches read them (``storage.list_cache``)
        self.held = ListCache(cache_bytes)
        self._connect = connect  # a read-only connection, for ``_warm``
        self._warmed: set[int] = set()  # tenants whose centroids were loaded
        self._write = write
        self._write_many = write_many
        self._cache: dict[int, Centroids] = {}
        self._cache_lock = threading.Lock()
        # tenants whose set of lists the open transaction changed other than
        # by splits (a first list made, a list emptied): their cached
        # centroids no longer serve
        self._relisted: set[int] = set()
        # lists whose mean the open transaction moved, by tenant: their new
        # means, for the cached centroids at commit (no old mean outlives a
        # member, and the writer places vectors by the means as stored)
        self._recentred: dict[int, dict[int, np.ndarray]] = {}
        # the sizes of the lists the open transaction appended to or wrote
        # anew, by tenant: whether a search reads a tenant whole depends on
        # them, so the cached ones must not lag
        self._resized: dict[int, dict[int, int]] = {}
        # the lists whose chunks the open transaction wrote, by tenant
        self._written: dict[int, set[int]] = {}
        # the lists the open transaction's splits made, by tenant: added to
        # the cached centroids at commit (a bulk load at 1.5M spent 11 % of
        # its time reading all ~8,000 again after each split)
        self._split_off: dict[int, list[int]] = {}

    # -- reads ------------------------------------------------------------
    def centroids(self, db: apsw.Connection, tenant_id: int, cached: bool = False) -> Centroids:
        """The tenant's lists as ``db`` sees them. With ``cached`` (a read
        outside any write transaction, whose rows may yet roll back) they
        are kept per tenant version, and a later read of the same version
        takes them from memory."""
        row = db.execute("SELECT version FROM tenants WHERE id = ?", (tenant_id,)).fetchone()
        version = -1 if row is None else int(row[0])
        if cached:
            with self._cache_lock:
                hit = self._cache.get(tenant_id)
            if hit is not None and hit.version == version:
                return hit
            with self._cache_lock:
                first = tenant_id not in self._warmed
                self._warmed.add(tenant_id)
            if first:
                self._warm(db, tenant_id)
        found = Centroids.of(
            version,
            self.dim,
            db.execute(
                "SELECT list, size, centroid FROM vector_lists WHERE tenant_id = ? ORDER BY list",
                (tenant_id,),
            ).fetchall(),
        )
        if cached:
            with self._cache_lock:
                self._cache[tenant_id] = found
        return found

    def _warm(self, db: apsw.Connection, tenant_id: int) -> None:
        """Bring a large tenant's centroid rows into the OS page cache by
        reading ``WARM_READERS`` ranges of its lists at once, each on a
        connection of its own, so that the disk serves their pages in
        parallel (``WARM_LISTS``). Only the cache changes: a range that
        cannot be read (the file busy, say) is left to the load itself."""
        lo, hi, count = db.execute(
            "SELECT min(list), max(list), count(*) FROM vector_lists WHERE tenant_id = ?",
            (tenant_id,),
        ).fetchone()
        if count < WARM_LISTS:
            return
        step = (hi - lo) // WARM_READERS + 1

        def read(first: int) -> None:
            try:
                conn = self._connect()
            except apsw.Error:
                return
            try:
                # the length of each centroid, so that its row's page is read
                conn.execute(
                    "SELECT sum(length(centroid)) FROM vector_lists"
                    " WHERE tenant_id = ? AND list BETWEEN ? AND ?",
                    (tenant_id, first, first + step - 1),
                ).fetchall()
            except apsw.Error:
                pass
            finally:
                conn.close()

        readers = [
            threading.Thread(target=read, args=(lo + i * step,), name="unrecall-warm")
            for i in range(WARM_READERS)
        ]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()

    def search(
        self, db: apsw.Connection, tenant_id: int, query: np.ndarray, limit: int
    ) -> list[tuple[int, float]]:
        """Top ``limit`` ``(id, cosine similarity)`` pairs, best first, over
        the lists the query probes (every list of a small tenant) and the
        vectors an upgrade has yet to list (all of them), read in one
        snapshot of ``db``."""
        if limit <= 0:
            return []
        query = np.ascontiguousarray(query, dtype=np.float32)
        cached = not db.in_transaction
        with db:  # one read snapshot: the version, the centroids and the chunks agree
            ids, sims = self._listed(db, tenant_id, query, limit, cached)
            pending = self.pending(db)
            if pending is not None:
                more = db.execute(
                    "SELECT id, embedding FROM memory_vectors"
                    " WHERE tenant_id = ? AND id > ? AND id <= ?",
                    (tenant_id, *pending),
                ).fetchall()
                mat = np.frombuffer(b"".join(r[1] for r in more), dtype=np.float32)
                ids = np.concatenate([ids, np.array([r[0] for r in more], dtype=np.int64)])
                sims = np.concatenate([sims, products(mat.reshape(len(more), self.dim), query)])
        top = np.lexsort((ids, -sims))[:limit]  # ties by id, whatever order rows came in
        return [(int(ids[i]), float(sims[i])) for i in top]

    def _listed(
        self, db: apsw.Connection, tenant_id: int, query: np.ndarray, limit: int, cached: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """The best ``limit`` or so ids in the lists the query probes, and
        their float32 products (``search``, inside its snapshot)."""
        none = np.zeros(0, np.int64), np.zeros(0, np.float32)
        cents = self.centroids(db, tenant_id, cached)
        lists = cents.probe(query).tolist()
        if not lists:
            return none
        found = self.held.get(tenant_id, cents.version, lists) if cached else {}
        missing = [list_id for list_id in lists if list_id not in found]
        if missing:
            read = self._read(db, tenant_id, missing)
            if cached:
                self.held.put(tenant_id, cents.version, read)
            found.update(read)
        rows = Rows.concat(self.dim, [found[list_id] for list_id in lists if list_id in found])
        if len(rows) == 0:
            return none
        # a vector spilled to a second list is read twice when both are probed
        _, once = np.unique(rows.ids, return_index=True)
        if len(once) < len(rows):
            rows = rows.take(once)
        order, bound = int8_scan().candidates(rows, query, limit)
        return self._rescore(db, rows.ids[order], bound, query, limit)

    def _read(self, db: apsw.Connection, tenant_id: int, lists: list[int]) -> dict[int, Rows]:
        """The rows of these lists (those that have any), each as one."""
        chunks = db.execute(
            "SELECT list, ids, codes, meta FROM vector_chunks"
            f" WHERE tenant_id = ? AND list IN {_IDS} ORDER BY list, chunk",
            (tenant_id, _ids(lists)),
        ).fetchall()
        return {
            list_id: Rows.stored(self.dim, [c[1:] for c in group])
            for list_id, group in itertools.groupby(chunks, key=lambda c: c[0])
        }

    @staticmethod
    def pending(db: apsw.Connection) -> tuple[int, int] | None:
        """The ids ``(after, up to]`` an upgrade has yet to list, if any:
        their ``list`` and ``spill`` still name the old lists."""
        row = db.execute("SELECT value FROM meta WHERE key = 'relist'").fetchone()
        if row is None:
            return None
        after, upto = (int(x) for x in row[0].split())
        return after, upto

    def listed_up_to(self, done: int, upto: int) -> None:
        """The upgrade listing ids up to ``upto`` has listed them up to ``done``."""
        if done >= upto:
            self._write("DELETE FROM meta WHERE key = 'relist'", ())
        else:
            self._write("UPDATE meta SET value = ? WHERE key = 'relist'", (f"{done} {upto}",))

    def _rescore(
        self,
        db: apsw.Connection,
        wanted: np.ndarray,
        bound: np.ndarray,
        query: np.ndarray,
        limit: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Float32 products of the ``wanted`` rows (highest ``bound`` first),
        read in batches until the next row's bound is below the ``limit``-th
        product found: a row's true product never exceeds its bound, so the
        rest cannot enter the top (ties at the edge are read). It matters
        where near duplicates make the candidates many: at the p95 of the
        perf corpus at a million, half of its 2,242 were never read."""
        ids: list[np.ndarray] = []
        sims: list[np.ndarray] = []
        at, step = 0, max(2 * limit, RESCORE_BATCH)
        while at < len(wanted):
            found = db.execute(
                f"SELECT id, embedding FROM memory_vectors WHERE id IN {_IDS}",
                (_ids(wanted[at : at + step].tolist()),),
            ).fetchall()
            at += step
            ids.append(np.array([r[0] for r in found], dtype=np.int64))
            mat = np.frombuffer(b"".join(r[1] for r in found), dtype=np.float32)
            sims.append(products(mat.reshape(len(found), self.dim), query))
            have = np.concatenate(sims)
            if at < len(wanted) and len(have) >= limit:
                kth = np.partition(have, len(have) - limit)[len(have) - limit]
                if bound[at] < kth:
                    break
        return np.concatenate(ids), np.concatenate(sims)

    def forget_cache(self, tenant_id: int) -> None:
        """Drop a tenant's cached centroids and lists (the tenant is gone)."""
        with self._cache_lock:
            self._cache.pop(tenant_id, None)
        self.held.drop_tenant(tenant_id)

    def committed(self, versions: dict[int, int]) -> None:
        """After a commit that moved these tenants to these versions: a
        tenant whose lists this transaction only appended to, split or
        rewrote keeps its cached centroids, with the lists its splits made
        added and each list it wrote with its mean and size as stored, so
        that a write or search after each write need not read them all
        again. A list made from nothing or emptied, a rolled-back savepoint,
        or another process's commit, still means a reload. Of the lists'
        rows held, those it wrote are dropped (``ListCache.committed``)."""
        for tenant_id in self._written.keys() - versions.keys():
            self.held.drop_tenant(tenant_id)  # written, yet its version did not move
        for tenant_id, version in versions.items():
            self.held.committed(tenant_id, version, self._written.get(tenant_id, set()))
        with self._cache_lock:
            for tenant_id in self._relisted:
                self._cache.pop(tenant_id, None)
            for tenant_id, version in versions.items():
                hit = self._cache.pop(tenant_id, None)
                if hit is None or tenant_id in self._relisted or hit.version != version - 1:
                    continue
                patched = self._patched(hit, tenant_id)
                if patched is not None:
                    self._cache[tenant_id] = replace(patched, version=version)
        self.rolled_back()

    def _patched(self, hit: Centroids, tenant_id: int) -> Centroids | None:
        """``hit`` with this transaction's new lists, means and sizes, or
        None if its new lists do not follow the cached ones in order."""
        lists, units, sizes = hit.lists, hit.units, hit.sizes
        moved = self._recentred.get(tenant_id, {})
        resized = self._resized.get(tenant_id, {})
        if made := sorted(self._split_off.get(tenant_id, [])):
            # a split's new list is numbered past every list there was
            if len(lists) and made[0] <= lists[-1]:
                return None
            lists = np.concatenate([lists, np.array(made, dtype=np.int64)])
            units = np.concatenate([units, np.zeros((len(made), self.dim), np.float32)])
            sizes = np.concatenate([sizes, np.zeros(len(made), np.int64)])
        # hit.lists is in list order (``centroids``); a dict of the
        # ~10k lists at 1M was built at every commit before
        if moved:
            if not made:
                units = units.copy()  # a search may be reading the old array
            at = np.searchsorted(lists, list(moved))
            centres = np.stack(list(moved.values()))
            norms = np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
            units[at] = centres / norms
        if resized:
            if not made:
                sizes = sizes.copy()
            sizes[np.searchsorted(lists, list(resized))] = list(resized.values())
        return replace(hit, lists=lists, units=units, sizes=sizes)

    def savepoint_rolled_back(self) -> None:
        """A savepoint rolled back some of the open transaction's changes to
        lists, and which they were is not kept apart: every tenant whose
        lists it changed reads them again."""
        self._relisted.update(self._split_off, self._recentred, self._resized)

    def rolled_back(self) -> None:
        """The open transaction is gone, and with it its changes to lists."""
        self._relisted.clear()
        self._recentred.clear()
        self._resized.clear()
        self._written.clear()
        self._split_off.clear()

    def _for_writing(self, db: apsw.Connection, tenant_id: int) -> Centroids:
        """The lists to put new vectors in: the cached centroids while this
        transaction has not changed the tenant's set of lists and no one
        else has committed since they were read, else read afresh."""
        # Holding the write lock, no one else commits: until this
        # transaction changes the tenant's set of lists, what it reads is
        # the committed set, and is cached.
        fresh = tenant_id in self._relisted or tenant_id in self._split_off
        return self.centroids(db, tenant_id, cached=not fresh)

    # -- writes (inside the store's transaction) ---------------------------
    def add(self, db: apsw.Connection, tenant_id: int, ids: np.ndarray, vecs: np.ndarray) -> None:
        """List vectors whose ``memory_vectors`` rows are in already: each
        joins the list of the nearest centroid (a tenant's first makes
        list 0) and, in a tenant large enough to be probed, a second list
        (``Centroids.place``); a list grown past ``SPLIT_AT`` is split."""
        cents = self._for_writing(db, tenant_id)
        if len(cents.lists) == 0:
            self._relisted.add(tenant_id)
            self._write(
                "INSERT INTO vector_lists(tenant_id, list, size, centroid) VALUES (?, 0, 0, ?)",
                (tenant_id, np.zeros(self.dim, np.float32).tobytes()),
            )
            where, spill = np.zeros(len(ids), dtype=np.int64), None
        else:
            where, spill = cents.place(vecs)
        for column, placed in (("list", where), ("spill", spill)):
            if placed is None:
                continue
            for list_id in np.unique(placed):
                members = np.flatnonzero(placed == list_id)
                new = Rows.of(ids[members], vecs[members])
                self._append(db, tenant_id, int(list_id), new, column)

    def _append(
        self, db: apsw.Connection, tenant_id: int, list_id: int, new: Rows, column: str
    ) -> None:
        """Append ``new`` to a list, as the members it holds in ``column``
        of ``memory_vectors`` (``list`` or ``spill``)."""
        size, centroid = db.execute(
            "SELECT size, centroid FROM vector_lists WHERE tenant_id = ? AND list = ?",
            (tenant_id, list_id),
        ).fetchone()
        last = db.execute(
            "SELECT chunk, ids, codes, meta FROM vector_chunks WHERE tenant_id = ? AND list = ?"
            " ORDER BY chunk DESC LIMIT 1",
            (tenant_id, list_id),
        ).fetchone()
        rows, first = new, 0
        if last is not None and len(last[1]) // 8 < CHUNK:
            # the last chunk fills up first: it is written again with the new rows
            rows, first = Rows.concat(self.dim, [Rows.stored(self.dim, [last[1:]]), new]), last[0]
            self._write(
                "DELETE FROM vector_chunks WHERE tenant_id = ? AND list = ? AND chunk = ?",
                (tenant_id, list_id, first),
            )
        elif last is not None:
            first = last[0] + 1
        self._put_chunks(tenant_id, list_id, first, rows)
        total = size + len(new)
        old = np.frombuffer(centroid, dtype=np.float32).astype(np.float64)
        mid = (old * size + new.approx().sum(axis=0, dtype=np.float64)) / total
        centre = mid.astype(np.float32)
        self._write(
            "UPDATE vector_lists SET size = ?, centroid = ? WHERE tenant_id = ? AND list = ?",
            (total, centre.tobytes(), tenant_id, list_id),
        )
        self._recentred.setdefault(tenant_id, {})[list_id] = centre
        self._resized.setdefault(tenant_id, {})[list_id] = total
        self._write(
            f"UPDATE memory_vectors SET {column} = ? WHERE id IN {_IDS}",
            (list_id, _ids(new.ids.tolist())),
        )
        if total > SPLIT_AT:
            self._split(db, tenant_id, list_id)

    def _put_chunks(self, tenant_id: int, list_id: int, first: int, rows: Rows) -> None:
        """Write a list's chunks from ``first`` on (those before it stay)."""
        self._written.setdefault(tenant_id, set()).add(list_id)
        self._write_many(
            "INSERT INTO vector_chunks(tenant_id, list, chunk, ids, codes, meta)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (tenant_id, list_id, first + i, *rows.take(slice(at, at + CHUNK)).encode())
                for i, at in enumerate(range(0, len(rows), CHUNK))
            ],
        )

    def _members(self, db: apsw.Connection, tenant_id: int, list_id: int) -> Rows:
        return Rows.stored(
            self.dim,
            db.execute(
                "SELECT ids, codes, meta FROM vector_chunks WHERE tenant_id = ? AND list = ?"
                " ORDER BY chunk",
                (tenant_id, list_id),
            ).fetchall(),
        )

    def _relist(self, tenant_id: int, list_id: int, rows: Rows) -> None:
        """Write a list anew from its members: chunks packed, size and
        centroid derived from them alone."""
        self._write(
            "DELETE FROM vector_chunks WHERE tenant_id = ? AND list = ?", (tenant_id, list_id)
        )
        self._put_chunks(tenant_id, list_id, 0, rows)
        self._recount(tenant_id, list_id, rows)

    def _recount(self, tenant_id: int, list_id: int, rows: Rows) -> None:
        """A list's size and centroid, from its members ``rows`` alone (or
        the list gone when there are none)."""
        if len(rows) == 0:
            self._relisted.add(tenant_id)
            self._write(
                "DELETE FROM vector_lists WHERE tenant_id = ? AND list = ?", (tenant_id, list_id)
            )
            return
        centre = mean(rows)
        self._write(
            "INSERT OR REPLACE INTO vector_lists(tenant_id, list, size, centroid)"
            " VALUES (?, ?, ?, ?)",
            (tenant_id, list_id, len(rows), centre.tobytes()),
        )
        self._recentred.setdefault(tenant_id, {})[list_id] = centre
        self._resized.setdefault(tenant_id, {})[list_id] = len(rows)

    def _split(self, db: apsw.Connection, tenant_id: int, list_id: int) -> None:
        rows = self._members(db, tenant_id, list_id)
        side = halves(rows)
        new_id = (
            1
            + db.execute(
                "SELECT max(list) FROM vector_lists WHERE tenant_id = ?", (tenant_id,)
            ).fetchone()[0]
        )
        keep, move = rows.take(np.flatnonzero(~side)), rows.take(np.flatnonzero(side))
        self._split_off.setdefault(tenant_id, []).append(new_id)
        self._relist(tenant_id, list_id, keep)
        self._relist(tenant_id, new_id, move)
        # a member is here as its first list or as its second
        self._write(
            "UPDATE memory_vectors SET list = iif(list = ?, ?, list),"
            f" spill = iif(spill = ?, ?, spill) WHERE id IN {_IDS}",
            (list_id, new_id, list_id, new_id, _ids(move.ids.tolist())),
        )
        for part, part_id in ((keep, list_id), (move, new_id)):
            if len(part) > SPLIT_AT:
                self._split(db, tenant_id, part_id)

    def remove(self, db: apsw.Connection, ids: Sequence[int]) -> None:
        """Take memories' vectors out of their lists and delete their rows.
        The chunks that held them are written again without them, and each
        list's centroid anew from the members that stay, so neither a chunk
        nor a centroid keeps a trace of them."""
        placed = db.execute(
            f"SELECT tenant_id, list, spill, id FROM memory_vectors WHERE id IN {_IDS}",
            (_ids(ids),),
        ).fetchall()
        after, upto = self.pending(db) or (0, 0)
        gone: dict[tuple[int, int], set[int]] = {}
        old: set[tuple[int, int]] = set()
        for tenant_id, list_id, spill, mid in placed:
            for held in (list_id, spill):
                if held is None:
                    continue
                if after < mid <= upto:  # in no list yet: it names lists an upgrade set aside
                    old.add((tenant_id, held))
                else:
                    gone.setdefault((tenant_id, held), set()).add(mid)
        for (tenant_id, list_id), mids in gone.items():
            self._drop_members(db, tenant_id, list_id, mids)
        # Those old lists' rows are deleted whole, codes and centroid, with
        # the other members' (they are on their way out anyway).
        for table in self.old_tables(db) if old else ():
            self._write_many(f"DELETE FROM {table} WHERE tenant_id = ? AND list = ?", sorted(old))
        self._write(f"DELETE FROM memory_vectors WHERE id IN {_IDS}", (_ids(ids),))

    @staticmethod
    def old_tables(db: apsw.Connection) -> list[str]:
        """The tables of lists an upgrade set aside and has yet to drop
        (``schema.OLD_LISTS``)."""
        names = {
            row[0]
            for row in db.execute(
                f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN {_IDS}",
                (_ids(OLD_LISTS),),
            )
        }
        return [table for table in OLD_LISTS if table in names]

    def _drop_members(
        self, db: apsw.Connection, tenant_id: int, list_id: int, mids: set[int]
    ) -> None:
        """Rewrite only the chunks of a list that hold ``mids``, without
        them (a purge writes one chunk, not the list's eight), then its size
        and centroid from all the members that stay."""
        gone = np.fromiter(mids, dtype=np.int64, count=len(mids))
        parts = []
        for chunk, *stored in db.execute(
            "SELECT chunk, ids, codes, meta FROM vector_chunks WHERE tenant_id = ? AND list = ?"
            " ORDER BY chunk",
            (tenant_id, list_id),
        ).fetchall():
            rows = Rows.stored(self.dim, [stored])
            hit = np.isin(rows.ids, gone)
            if hit.any():
                rows = rows.take(np.flatnonzero(~hit))
                self._write(
                    "DELETE FROM vector_chunks WHERE tenant_id = ? AND list = ? AND chunk = ?",
                    (tenant_id, list_id, chunk),
                )
                self._put_chunks(tenant_id, list_id, chunk, rows)
            parts.append(rows)
        self._recount(tenant_id, list_id, Rows.concat(self.dim, parts))

    def drop_tenant(self, db: apsw.Connection, tenant_id: int) -> None:
        """Delete every list, chunk and vector of a tenant, and what an
        upgrade set aside of its lists."""
        for table in ("vector_chunks", "vector_lists", "memory_vectors", *self.old_tables(db)):
            self._write(f"DELETE FROM {table} WHERE tenant_id = ?", (tenant_id,))
        self.forget_cache(tenant_id)

"""Vector lists' rows held in memory between searches, under a byte budget.

A cached search of a large tenant spent about half its vector time having
SQLite copy ~170 chunk rows (~4 MB of int8 codes at a million memories)
out of its pages and joining them: 4.2 of 10 ms (docs/benchmarks.md,
issue #17, tenth round). Here each list's rows, as a search read them, are
kept under the tenant version its snapshot saw; a later search of the
same version takes them from memory.

Why the tenant version, and what it costs: every commit that writes a
tenant's rows moves its version (``SQLiteStorage._commit``), so a list
held under the version a search sees is the list as stored. This process's
own commits say which lists they wrote (``committed``): the others are
carried to the new version. Another process's commit to a tenant makes
every list of it held here stale; the first search that sees the new
version drops them all. A forgotten memory's codes therefore leave this
memory at the commit that forgets it, or, forgotten by another process,
at the next search of its tenant here.

Past the budget, the least recently read lists go first (a list is
~110 KB at 1M).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from unrecall.storage.vector_lists import Rows

# The default budget, in MB. A tenant of a million memories has 1,189 MB of
# lists in all (3.1M entries with the second lists); after 1,200 searches
# 777 MB were held, and the process's RSS was 782 MB, inside the 1.5 GB the
# issue allows at that size (docs/benchmarks.md, issue #17, tenth round).
VECTOR_CACHE_MB = 1024


def _size(rows: Rows) -> int:
    return int(rows.ids.nbytes + rows.codes.nbytes + rows.meta.nbytes)


class ListCache:
    """Lists' rows by tenant and list, all of a tenant's under the one
    tenant version they were read at, the least recently read dropped
    first past ``budget`` bytes (0 holds nothing)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._version: dict[int, int] = {}  # tenant -> the version its lists are held at
        self._lists: dict[int, dict[int, Rows]] = {}  # tenant -> list -> rows
        self._order: OrderedDict[tuple[int, int], None] = OrderedDict()  # least recent first
        self._bytes = 0

    @property
    def held_bytes(self) -> int:
        """The bytes of rows held now."""
        return self._bytes

    def get(self, tenant_id: int, version: int, lists: list[int]) -> dict[int, Rows]:
        """The rows held for these lists as of ``version``. Lists held
        under an older version mean another process has written the tenant
        since: they are all dropped."""
        with self._lock:
            held = self._version.get(tenant_id)
            if held is None or held > version:  # none, or newer than this snapshot
                return {}
            if held < version:
                self._drop_tenant(tenant_id)
                return {}
            mine = self._lists[tenant_id]
            found = {list_id: mine[list_id] for list_id in lists if list_id in mine}
            for list_id in found:
                self._order.move_to_end((tenant_id, list_id))
            return found

    def put(self, tenant_id: int, version: int, rows: dict[int, Rows]) -> None:
        """Hold lists' rows as read at ``version``. What a search with an
        older snapshot than the lists held read is not kept."""
        if self.budget <= 0 or not rows:
            return
        with self._lock:
            held = self._version.get(tenant_id)
            if held is not None and held > version:
                return
            if held is not None and held < version:
                self._drop_tenant(tenant_id)
            self._version[tenant_id] = version
            mine = self._lists.setdefault(tenant_id, {})
            for list_id, part in rows.items():
                old = mine.get(list_id)
                if old is not None:
                    self._bytes -= _size(old)
                mine[list_id] = part
                self._order[(tenant_id, list_id)] = None
                self._order.move_to_end((tenant_id, list_id))
                self._bytes += _size(part)
            while self._bytes > self.budget and self._order:
                (t, list_id), _ = self._order.popitem(last=False)
                self._bytes -= _size(self._lists[t].pop(list_id))
                if not self._lists[t]:
                    del self._lists[t], self._version[t]

    def committed(self, tenant_id: int, version: int, written: set[int]) -> None:
        """This process committed the tenant at ``version``, writing the
        lists ``written``: they are dropped and the others, if held at the
        version before, carried over (nothing else changed them)."""
        with self._lock:
            held = self._version.get(tenant_id)
            if held is None:
                return
            if held != version - 1:
                self._drop_tenant(tenant_id)
                return
            self._version[tenant_id] = version
            for list_id in written:
                self._drop_list(tenant_id, list_id)

    def drop_tenant(self, tenant_id: int) -> None:
        """Forget every list of a tenant."""
        with self._lock:
            self._drop_tenant(tenant_id)

    def clear(self) -> None:
        """Forget every list (the store is closing)."""
        with self._lock:
            self._version.clear()
            self._lists.clear()
            self._order.clear()
            self._bytes = 0

    def _drop_list(self, tenant_id: int, list_id: int) -> None:
        mine = self._lists.get(tenant_id, {})
        part = mine.pop(list_id, None)
        if part is None:
            return
        self._bytes -= _size(part)
        del self._order[(tenant_id, list_id)]
        if not mine:
            del self._lists[tenant_id], self._version[tenant_id]

    def _drop_tenant(self, tenant_id: int) -> None:
        for list_id in list(self._lists.get(tenant_id, ())):
            self._drop_list(tenant_id, list_id)

"""``AsyncMemory``: ``Memory`` for async agent stacks.

Every method is the ``Memory`` method of the same name, run in a worker
thread (``asyncio.to_thread``) so the event loop never waits on SQLite or
the embedder. ``Memory`` is safe to share between threads (its storage holds
one lock over the connection), so one store serves every coroutine; writers
from other processes are serialised by SQLite's busy timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from unrecall.control.audit import AuditCheck
from unrecall.control.erasure import ErasureReport
from unrecall.memory import Memory
from unrecall.records import EntityItem, ForgetReport, HistoryEvent, MemoryItem, OpReport, SearchHit


class AsyncMemory:
    """``Memory`` with coroutine methods; ``AsyncMemory(path, **options)``
    takes what ``Memory`` takes, or ``AsyncMemory.wrap(memory)`` shares an
    open store. ``sync`` is the underlying ``Memory``."""

    def __init__(self, path: Any = None, **options: Any) -> None:
        self.sync = options.pop("memory", None) or Memory(path, **options)

    @classmethod
    def wrap(cls, memory: Memory) -> AsyncMemory:
        """An ``AsyncMemory`` over an open ``Memory``; closing either closes the store."""
        return cls(memory=memory)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def add(self, messages: str | Sequence[dict[str, str]], **scope: Any) -> OpReport:
        """``Memory.add`` in a worker thread."""
        return await asyncio.to_thread(self.sync.add, messages, **scope)

    async def search(self, query: str, **options: Any) -> list[SearchHit]:
        """``Memory.search`` in a worker thread."""
        return await asyncio.to_thread(self.sync.search, query, **options)

    async def get(self, memory_id: str, **scope: Any) -> MemoryItem:
        """``Memory.get`` in a worker thread."""
        return await asyncio.to_thread(self.sync.get, memory_id, **scope)

    async def get_all(self, **scope: Any) -> list[MemoryItem]:
        """``Memory.get_all`` in a worker thread."""
        return await asyncio.to_thread(self.sync.get_all, **scope)

    async def update(self, memory_id: str, text: str, **scope: Any) -> OpReport:
        """``Memory.update`` in a worker thread."""
        return await asyncio.to_thread(self.sync.update, memory_id, text, **scope)

    async def delete(self, memory_id: str, **scope: Any) -> OpReport:
        """``Memory.delete`` in a worker thread."""
        return await asyncio.to_thread(self.sync.delete, memory_id, **scope)

    async def delete_all(self, **scope: Any) -> OpReport:
        """``Memory.delete_all`` in a worker thread."""
        return await asyncio.to_thread(self.sync.delete_all, **scope)

    async def supersede(self, target: str, new_text: str, **scope: Any) -> OpReport:
        """``Memory.supersede`` in a worker thread."""
        return await asyncio.to_thread(self.sync.supersede, target, new_text, **scope)

    async def edit(self, memory_id: str, new_text: str, **scope: Any) -> OpReport:
        """``Memory.edit`` in a worker thread."""
        return await asyncio.to_thread(self.sync.edit, memory_id, new_text, **scope)

    async def release(self, target: str, **scope: Any) -> OpReport:
        """``Memory.release`` in a worker thread."""
        return await asyncio.to_thread(self.sync.release, target, **scope)

    async def restore(self, memory_id: str, **scope: Any) -> OpReport:
        """``Memory.restore`` in a worker thread."""
        return await asyncio.to_thread(self.sync.restore, memory_id, **scope)

    async def purge(self, target: str, **scope: Any) -> OpReport:
        """``Memory.purge`` in a worker thread."""
        return await asyncio.to_thread(self.sync.purge, target, **scope)

    async def forget(self, request: str, **scope: Any) -> ForgetReport:
        """``Memory.forget`` in a worker thread."""
        return await asyncio.to_thread(self.sync.forget, request, **scope)

    async def residual(self, request: str, **scope: Any) -> list[MemoryItem]:
        """``Memory.residual`` in a worker thread."""
        return await asyncio.to_thread(self.sync.residual, request, **scope)

    async def entities(self, **scope: Any) -> list[EntityItem]:
        """``Memory.entities`` in a worker thread."""
        return await asyncio.to_thread(self.sync.entities, **scope)

    async def set_expiry(self, memory_id: str, expires_at: Any, **scope: Any) -> OpReport:
        """``Memory.set_expiry`` in a worker thread."""
        return await asyncio.to_thread(self.sync.set_expiry, memory_id, expires_at, **scope)

    async def expire(self, **options: Any) -> OpReport:
        """``Memory.expire`` in a worker thread."""
        return await asyncio.to_thread(self.sync.expire, **options)

    async def history(self, memory_id: str, **scope: Any) -> list[HistoryEvent]:
        """``Memory.history`` in a worker thread."""
        return await asyncio.to_thread(self.sync.history, memory_id, **scope)

    async def export(self, **scope: Any) -> dict[str, Any]:
        """``Memory.export`` in a worker thread."""
        return await asyncio.to_thread(self.sync.export, **scope)

    async def verify_erased(self, strings: Sequence[str]) -> ErasureReport:
        """``Memory.verify_erased`` in a worker thread."""
        return await asyncio.to_thread(self.sync.verify_erased, strings)

    async def erase(self) -> bool:
        """``Memory.erase`` in a worker thread."""
        return await asyncio.to_thread(self.sync.erase)

    async def verify_audit(self) -> AuditCheck:
        """``Memory.verify_audit`` in a worker thread."""
        return await asyncio.to_thread(self.sync.verify_audit)

    async def close(self) -> None:
        """Checkpoint and close the store."""
        await asyncio.to_thread(self.sync.close)

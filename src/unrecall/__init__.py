"""unrecall: long-term memory for LLM agents that forgets on request,
precisely and verifiably."""

from unrecall.async_memory import AsyncMemory
from unrecall.errors import InvalidInput, NotFound, StoreBusy, StoreError, UnrecallError
from unrecall.memory import Memory
from unrecall.records import HistoryEvent, MemoryItem, OpReport, SearchHit

__all__ = [
    "AsyncMemory",
    "HistoryEvent",
    "InvalidInput",
    "Memory",
    "MemoryItem",
    "NotFound",
    "OpReport",
    "SearchHit",
    "StoreBusy",
    "StoreError",
    "UnrecallError",
]
__version__ = "0.1.0"

"""Errors raised by unrecall.

Messages carry ids, counts and positions only, never the text a caller
passed in: an error about a forget request must not leak what was forgotten.
"""


class UnrecallError(Exception):
    """Base class of every error unrecall raises on purpose."""


class InvalidInput(UnrecallError, ValueError):
    """The caller passed something unrecall refuses to store or act on."""


class NotFound(UnrecallError, KeyError):
    """An id does not exist in the caller's tenant."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "not found"


class StoreError(UnrecallError):
    """The store is unusable (wrong schema version, missing extension, ...)."""


class StoreBusy(StoreError):
    """Another process held the store's write lock for longer than the busy
    timeout; nothing was written, and the call can be retried."""


class RerankError(UnrecallError):
    """An optional LLM reranker failed; the operation that asked did nothing."""

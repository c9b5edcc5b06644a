"""API keys of the REST service: one key, one tenant.

A key is ``secrets.token_urlsafe(32)`` (256 random bits), shown once when it
is made and kept in the store file only as its SHA-256 digest (a random key
needs no slow hash: there is nothing to guess). A tenant is a user id, or an
agent id for agent-level memory; its key is stored as the same ``user:…`` /
``agent:…`` string ``Memory`` uses. Revoking a key deletes its row. Keys live
next to the memories so every worker process of one server sees the same set,
and a revocation takes effect on the next request of every worker.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Any

from unrecall.errors import InvalidInput
from unrecall.storage.sqlite import SQLiteStorage, new_uid
from unrecall.validation import check_id


def digest(key: str) -> bytes:
    """The SHA-256 digest a key is stored and looked up by."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def same_key(given: str, expected: str) -> bool:
    """Constant-time comparison of two keys (through their digests, so the
    lengths do not show either)."""
    return hmac.compare_digest(digest(given), digest(expected))


@dataclass(frozen=True)
class Tenant:
    """Whose memory a key opens: exactly one of ``user_id`` / ``agent_id``."""

    user_id: str | None
    agent_id: str | None

    @classmethod
    def parse(cls, key: str) -> Tenant:
        """The tenant of a stored ``user:…`` / ``agent:…`` string."""
        kind, _, ident = key.partition(":")
        return cls(ident, None) if kind == "user" else cls(None, ident)

    @classmethod
    def of(cls, user_id: Any, agent_id: Any) -> Tenant:
        """A checked tenant from exactly one of a user id and an agent id."""
        if (user_id is None) == (agent_id is None):
            raise InvalidInput("give exactly one of user_id and agent_id")
        if user_id is not None:
            return cls(check_id(user_id, "user_id"), None)
        return cls(None, check_id(agent_id, "agent_id"))

    @property
    def key(self) -> str:
        """The ``user:…`` / ``agent:…`` string it is stored as."""
        return f"user:{self.user_id}" if self.user_id is not None else f"agent:{self.agent_id}"

    def scope(self) -> dict[str, str]:
        """Keyword arguments that scope a ``Memory`` call to this tenant."""
        if self.user_id is not None:
            return {"user_id": self.user_id}
        assert self.agent_id is not None
        return {"agent_id": self.agent_id}


@dataclass(frozen=True)
class KeyInfo:
    """A key as the admin list shows it: id, tenant and creation time, never the key."""

    key_id: str
    tenant: Tenant
    created_at: float


class KeyStore:
    """The keys of one store (the table is created on first use)."""

    def __init__(self, storage: SQLiteStorage) -> None:
        self.storage = storage
        storage.api_keys_init()

    def create(self, tenant: Tenant) -> tuple[KeyInfo, str]:
        """Make a key for ``tenant``; returns its info and the key itself,
        which is stored nowhere and cannot be shown again."""
        key = secrets.token_urlsafe(32)
        info = KeyInfo(new_uid("k"), tenant, time.time())
        self.storage.api_key_add(info.key_id, digest(key), tenant.key, info.created_at)
        return info, key

    def tenant(self, key: str) -> Tenant | None:
        """The tenant a presented key opens, or None for an unknown key."""
        found = self.storage.api_key_tenant(digest(key))
        return None if found is None else Tenant.parse(found)

    def list(self) -> list[KeyInfo]:
        """Every live key, oldest first."""
        return [KeyInfo(k, Tenant.parse(t), at) for k, t, at in self.storage.api_key_list()]

    def revoke(self, key_id: str) -> bool:
        """Delete a key by its id; False when there is none."""
        return self.storage.api_key_revoke(key_id)

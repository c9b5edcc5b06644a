"""The content-free, hash-chained audit log.

Each event holds a time, an operation name, the tenant's random handle,
memory/turn ids, counts and short enum strings, and the SHA-256 of the
previous event. ``check_content_free`` enforces that shape on every write,
so a bug elsewhere cannot smuggle text into the trail. The handle is drawn
when the tenant is created and erased with it: after ``delete_all`` nothing
in the file ties the tenant's events to its user id (a keyed hash would,
with the key in the same file).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from unrecall.storage.base import Storage

GENESIS = "0" * 64
_ENUM = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_ID = re.compile(r"^[mt]_[0-9a-f]{20}$")


def check_content_free(value: Any) -> None:
    """Raise if ``value`` holds anything but numbers, ids and enum words."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not _ENUM.match(str(key)):
                raise ValueError("audit detail keys must be short enum words")
            check_content_free(item)
    elif isinstance(value, list | tuple):
        for item in value:
            check_content_free(item)
    elif isinstance(value, str):
        if not (_ENUM.match(value) or _ID.match(value)):
            raise ValueError("audit detail strings must be ids or enum words")
    elif not (value is None or isinstance(value, bool | int | float)):
        raise ValueError("audit detail values must be numbers, ids or enum words")


@dataclass(frozen=True)
class AuditCheck:
    """Result of walking the chain: ok, events seen, first broken seq."""

    ok: bool
    events: int
    broken_at: int | None = None


@dataclass(frozen=True)
class AuditEvent:
    """Where one event sits in the chain: its ``seq``, its ``hash`` and the
    tenant ``handle`` it was recorded for (what a receipt cites)."""

    seq: int
    hash: str
    handle: str


class AuditLog:
    """Appends and verifies chained events in a ``Storage``."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        # Per thread: the open ``tracking`` blocks, each collecting the events
        # this thread records (another thread's events must not be cited).
        self._local = threading.local()

    @contextmanager
    def tracking(self) -> Iterator[list[AuditEvent]]:
        """Collect, in the yielded list, every event this thread records
        inside the block: an operation's own events, whatever other threads
        or processes append meanwhile."""
        stack: list[list[AuditEvent]] = self._local.__dict__.setdefault("stack", [])
        seen: list[AuditEvent] = []
        stack.append(seen)
        try:
            yield seen
        finally:
            stack.pop()  # blocks nest, so the innermost one ends first

    def record(
        self, handle: str, op: str, refs: list[str], detail: dict[str, Any] | None = None
    ) -> int:
        """Append one event for the tenant with audit ``handle`` (call inside
        the operation's transaction)."""
        detail = detail or {}
        check_content_free([op, refs, detail])
        at = time.time()
        prev = self.storage.audit_last_hash() or GENESIS
        digest = _digest(prev, at, handle, op, detail, refs)
        seq = self.storage.audit_append(at, handle, op, detail, refs, prev, digest)
        for seen in self._local.__dict__.get("stack", ()):
            seen.append(AuditEvent(seq, digest, handle))
        return seq

    def head(self) -> AuditEvent | None:
        """The newest event of the chain (None for an empty log)."""
        last = None
        for row in self.storage.audit_rows():
            last = row
        return None if last is None else AuditEvent(last.seq, last.hash, last.tenant)

    def holds(self, seq: int, digest: str) -> bool:
        """True when the chain has event ``seq`` and its hash is ``digest``
        (walk it with ``verify`` first: a broken chain proves nothing)."""
        return any(row.seq == seq and row.hash == digest for row in self.storage.audit_rows())

    def verify(self) -> AuditCheck:
        """Recompute every link; report the first event that does not fit."""
        prev = GENESIS
        count = 0
        for row in self.storage.audit_rows():
            count += 1
            expected = _digest(prev, row.at, row.tenant, row.op, row.detail, row.refs)
            if row.prev != prev or row.hash != expected:
                return AuditCheck(False, count, row.seq)
            prev = row.hash
        return AuditCheck(True, count)

    def rechain(self, key: bytes) -> None:
        """Upgrade a v2 log, whose events name tenants by a keyed hash of the
        tenant key (``key`` is the store key): live tenants get random
        handles, erased tenants' events a random name each, and the chain is
        recomputed over the new names (inside the upgrade's transaction)."""
        keys = self.storage.tenant_keys()
        handles = {t: secrets.token_hex(16) for t in keys}
        renamed = {
            hmac.new(key, k.encode(), hashlib.sha256).hexdigest()[:32]: handles[t]
            for t, k in keys.items()
        }
        prev = GENESIS
        rows = []
        for row in self.storage.audit_rows():
            tenant = renamed.setdefault(row.tenant, secrets.token_hex(16))
            digest = _digest(prev, row.at, tenant, row.op, row.detail, row.refs)
            rows.append(replace(row, tenant=tenant, prev=prev, hash=digest))
            prev = digest
        self.storage.set_tenant_handles(handles)
        self.storage.rewrite_audit(rows)


def _digest(
    prev: str, at: float, tenant: str, op: str, detail: dict[str, Any], refs: list[str]
) -> str:
    body = json.dumps([prev, repr(at), tenant, op, detail, refs], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()

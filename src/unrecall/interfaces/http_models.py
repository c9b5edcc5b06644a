"""Request and response models of the REST service (``interfaces.http``).

Requests forbid unknown fields: a ``user_id`` in a body is refused (422), as
the tenant comes from the API key alone. ``agent_id`` / ``run_id`` are
accepted where ``Memory`` lets them narrow a user's scope (add, search,
list). Every text travels in a JSON body. Responses mirror the ``records``
dataclasses; fields they gain later (``receipt``, ``similarity``) are
declared optional, so the service passes them through once they exist.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Timestamp = float | str | None  # epoch seconds or ISO-8601 (``validation.check_time``)


class Body(BaseModel):
    """A request body: unknown fields are refused, nothing is coerced to text."""

    model_config = ConfigDict(extra="forbid", strict=False)


class Message(Body):
    """One chat message."""

    role: Literal["user", "assistant", "system"]
    content: str


class Narrow(Body):
    """An optional narrowing of a user tenant's scope."""

    agent_id: str | None = Field(None, description="narrow a user tenant to one agent's memories")
    run_id: str | None = Field(None, description="narrow to one run")


class AddIn(Narrow):
    """``Memory.add``: exactly one of ``text`` (a note) and ``messages`` (a
    dialogue, whose forget requests are executed unless ``honor_requests``
    is false)."""

    text: str | None = None
    messages: list[Message] | None = None
    session_id: str | None = None
    timestamp: Timestamp = None
    metadata: dict[str, Any] | None = None
    expires_at: Timestamp = None
    ttl: float | None = None
    honor_requests: bool = True


class SearchIn(Narrow):
    """``Memory.search``: ``threshold`` is ``"auto"`` (the embedder's
    calibrated cut, the default), a number, or null to keep the ``k`` best."""

    query: str
    k: int = 5
    threshold: float | Literal["auto"] | None = "auto"
    filters: dict[str, Any] | None = None
    mode: Literal["hybrid", "lexical"] = "hybrid"


class ListIn(Narrow):
    """``Memory.get_all``."""

    states: list[Literal["active", "released", "superseded"]] = ["active"]


class IdIn(Body):
    """A memory id (``m_…``) or, for delete, a source turn id (``t_…``)."""

    id: str


class UpdateIn(IdIn):
    """``Memory.update``."""

    text: str


class EditIn(IdIn):
    """``Memory.edit``."""

    new_text: str


class ExpiryIn(IdIn):
    """``Memory.set_expiry``: None clears the expiry."""

    expires_at: Timestamp = None


class TargetIn(Body):
    """A memory id or a query naming what to act on."""

    target: str


class SupersedeIn(TargetIn):
    """``Memory.supersede``."""

    new_text: str
    timestamp: Timestamp = None


class ForgetIn(Body):
    """``Memory.forget``."""

    request: str
    budget: int | None = None


class RequestIn(Body):
    """``Memory.residual``."""

    request: str


class Empty(Body):
    """No fields (delete-all, export, entities)."""


class VerifyIn(Body):
    """``Memory.verify_erased``: strings to look for in the store's raw bytes."""

    strings: list[str]


class ExpireIn(Body):
    """``Memory.expire``."""

    purge: bool = False


class KeyIn(Body):
    """A tenant to make a key for: exactly one of the two."""

    user_id: str | None = None
    agent_id: str | None = None


class KeyIdIn(Body):
    """A key id (``k_…``)."""

    key_id: str


# -- responses ---------------------------------------------------------------
class Out(BaseModel):
    """A response: fields the library adds later are ignored until declared."""

    model_config = ConfigDict(extra="ignore")


class ForgetOut(Out):
    """``records.ForgetReport``: ids and counts, never content."""

    kind: str
    language: str
    categories: list[str]
    match: str
    removed: list[str]
    rewritten: list[str]
    created: list[str]
    turns_removed: int
    request_turn: str
    residual: list[str] = []
    collateral: int = 0
    reader: str = ""
    strategy: str = ""
    count: int
    receipt: dict[str, Any] | None = None


class OpOut(Out):
    """``records.OpReport``: ids and counts, never content."""

    op: str
    ids: list[str]
    match: str
    created: list[str]
    turns_removed: int
    erased: bool | None
    detail: dict[str, Any]
    requests: list[ForgetOut]
    count: int
    receipt: dict[str, Any] | None = None


class MemoryOut(Out):
    """``records.MemoryItem``."""

    id: str
    text: str
    kind: str
    state: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    created_at: float
    updated_at: float
    expires_at: float | None
    metadata: dict[str, Any]
    sources: list[str]
    superseded_by: str | None = None


class MemoriesOut(Out):
    """A list of memories."""

    memories: list[MemoryOut]


class HitOut(Out):
    """``records.SearchHit``."""

    id: str
    text: str
    score: float
    lexical_rank: int | None
    vector_rank: int | None
    metadata: dict[str, Any]
    ids: list[str]
    similarity: float | None = None


class HitsOut(Out):
    """Search results, best first."""

    hits: list[HitOut]


class EventOut(Out):
    """``records.HistoryEvent``: operations and counts, no text."""

    seq: int
    at: float
    op: str
    memory_id: str
    detail: dict[str, Any]


class EventsOut(Out):
    """A memory's history."""

    events: list[EventOut]


class EntityOut(Out):
    """``records.EntityItem``."""

    name: str
    kind: str
    aliases: list[str]
    memories: list[str]
    related: list[str]


class EntitiesOut(Out):
    """The tenant's entity graph."""

    entities: list[EntityOut]


class ExportOut(Out):
    """``Memory.export``: everything held about the tenant."""

    tenant: dict[str, Any]
    turns: list[dict[str, Any]]
    memories: list[MemoryOut]
    events: list[dict[str, Any]]


class ErasureOut(Out):
    """``control.erasure.ErasureReport``: probe positions, never the probes."""

    clean: bool
    files: list[str]
    probes: int
    found: dict[str, dict[str, int]]
    via: dict[str, list[str]]


class AuditOut(Out):
    """``control.audit.AuditCheck``."""

    ok: bool
    events: int
    broken_at: int | None


class KeyOut(Out):
    """A key as listed: never the key itself."""

    key_id: str
    user_id: str | None
    agent_id: str | None
    created_at: float


class NewKeyOut(KeyOut):
    """A new key: ``key`` is shown this once and stored only as a digest."""

    key: str


class KeysOut(Out):
    """Every live key."""

    keys: list[KeyOut]


class RevokedOut(Out):
    """Whether a key was revoked (False: no key had that id)."""

    revoked: bool


class ErrorOut(Out):
    """An error: a kind and a message naming ids, counts and fields, never input."""

    error: str
    detail: str | list[dict[str, Any]]

"""Plain value objects returned by the public API."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ACTIVE = "active"
RELEASED = "released"
SUPERSEDED = "superseded"
STATES = (ACTIVE, RELEASED, SUPERSEDED)


@dataclass(frozen=True)
class MemoryItem:
    """One derived memory with its provenance (the source turn ids)."""

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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


@dataclass(frozen=True)
class EntityItem:
    """One entity of the graph: its canonical ``name``, the role references
    that name it (``aliases``: "our cfo", "Ravi Shah's wife"), the memories
    that mention it (provenance), and the entities named beside it."""

    name: str
    kind: str  # "name" or "identifier"
    aliases: list[str]
    memories: list[str]
    related: list[str]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


@dataclass(frozen=True)
class SearchHit:
    """A recalled statement: the id of its best-matching memory, the text of
    its active clauses (``ids``), fused score and the ranks behind it.

    ``score`` only orders the hits of one query. ``similarity`` is the
    cosine of the query with the statement's closest clause, comparable
    across queries (what ``Memory.search``'s ``threshold`` cuts on); None
    when the search used no vectors."""

    id: str
    text: str
    score: float
    lexical_rank: int | None
    vector_rank: int | None
    metadata: dict[str, Any] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


@dataclass(frozen=True)
class ForgetReport:
    """What a forget request said in the dialogue removed: never content.

    ``kind`` and ``language`` come from request detection; ``match`` says how
    its targets were found (``identifier``, ``entity``, ``phrase``,
    ``terms``, ``category``, ``time``, ``slot``, ``semantic`` or ``none``);
    ``removed`` are the memories deleted whole, ``rewritten`` those a value
    was cut out of (or replaced in), ``created`` their successors and the
    memories kept from the request turn, which is stored redacted as
    ``request_turn``. A trail-aware forget (``Memory.forget``, kind
    ``trail``) stores no request turn, lists in ``residual`` the ids of
    surviving memories that still connect the request's entities, and counts
    in ``collateral`` the removed memories that were neither the fact nor its
    evidence (other clauses of a cut turn). ``reader`` says who read the
    request and ``strategy`` how it was carried out (``pipeline.plan``);
    ``receipt`` is the signed receipt of ``Memory.forget`` (``control.receipts``).
    """

    kind: str
    language: str
    categories: list[str]
    match: str
    removed: list[str]
    rewritten: list[str]
    created: list[str]
    turns_removed: int
    request_turn: str
    residual: list[str] = field(default_factory=list)
    collateral: int = 0
    reader: str = "learned"  # who read it: ``learned``, ``interpreter``, or ``caller`` (forget)
    strategy: str = ""  # how it was carried out (``pipeline.plan.STRATEGIES``)
    receipt: dict[str, Any] | None = None  # signed and content-free (``control.receipts``)

    @property
    def count(self) -> int:
        """Memories the request took out (deleted or cut)."""
        return len(self.removed) + len(self.rewritten)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field plus ``count``."""
        return {**asdict(self), "count": self.count}


@dataclass(frozen=True)
class OpReport:
    """What a control-plane operation did: ids and counts, never content.

    ``match`` says how a query target was resolved (``id``, ``phrase``,
    ``semantic`` or ``none``); ``erased`` is true once the affected bytes
    were physically removed from every file of the store; ``requests`` are
    the forget requests an ``add`` found in its user turns and executed;
    ``receipt`` is the signed, content-free receipt of a hard forget
    (``control.receipts``), None for every other operation.
    """

    op: str
    ids: list[str]
    match: str = "id"
    created: list[str] = field(default_factory=list)
    turns_removed: int = 0
    erased: bool | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    requests: list[ForgetReport] = field(default_factory=list)
    receipt: dict[str, Any] | None = None

    @property
    def count(self) -> int:
        """Number of memories the operation affected."""
        return len(self.ids)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field plus ``count`` (each request's too)."""
        return {
            **asdict(self),
            "requests": [r.to_dict() for r in self.requests],
            "count": self.count,
        }


@dataclass(frozen=True)
class HistoryEvent:
    """One audit event touching a memory: never the memory's text."""

    seq: int
    at: float
    op: str
    memory_id: str
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)

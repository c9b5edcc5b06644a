"""Trail-aware forgetting: cut the evidence a secret can be pieced from.

"Forget that the firm we hired belongs to our CFO's wife": deleting the turn
that said so leaves the contract with the firm, its ownership filing and the
dinner the CFO and his wife hosted, which together still say it. Similarity
to the request does not reach that evidence (it shares the request's people
and firms, not its words); the entities do.

The plan, deterministic:

1. **Entities of the request** -- its names, identifiers and role
   references ("our CFO's wife"), resolved through the entity graph of the
   tenant's memories (``recall.entities``).
2. **Disclosure** -- the memories that state the fact: the closest in
   meaning to the request (within ``DISCLOSURE_MARGIN`` of the best, above
   ``DISCLOSURE_MIN``) that name one of its entities. Their entities join
   the request's ("the firm we hired" is Arden Advisory, named there).
3. **Candidates** -- entity expansion: memories naming a request entity
   (one hop) or an entity the disclosure names beside them (two hops),
   together with the ``POOL`` memories closest in meaning.
4. **Evidence** -- a candidate that links two of the fact's entities and is
   on its topic at all (``LINK_MIN``), one that names one entity and is
   close to the fact (``ENTITY_MIN``), or one that names none but restates
   it (``RESTATE_MIN``). Closeness is the best cosine to the request and to
   each disclosure. An optional ``rerank`` hook (an LLM, off by default) may
   replace these closeness scores.
5. **The cut** -- the source turns of the disclosure and of the evidence,
   best first, at most ``budget`` evidence turns: deleted with closure (every
   memory derived from them goes), in one transaction, physically erased.

:meth:`TrailForgetter.residual` lists what survives that still connects the
request's entities: what a reader could still piece together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from unrecall.control.operations import ControlPlane, Tenant
from unrecall.dialogue.requests import language_of
from unrecall.errors import InvalidInput
from unrecall.recall.entities import EntityGraph
from unrecall.recall.search import Recall
from unrecall.records import STATES, ForgetReport
from unrecall.storage.base import MemoryRow, Storage, TurnRow

# Cosine of the disclosure to the request: at least this, and within the
# margin of the closest memory (a paraphrase of the fact scores ~0.5-0.7).
DISCLOSURE_MIN = 0.35
DISCLOSURE_MARGIN = 0.1
MAX_DISCLOSURES = 3
# Evidence thresholds (cosine to the request or a disclosure), by how many of
# the fact's entities the memory names: two or more, one, none.
LINK_MIN = 0.1
ENTITY_MIN = 0.3
RESTATE_MIN = 0.6
POOL = 20  # memories closest in meaning, added to the entity expansion
BUDGET = 12  # evidence turns one request may delete at most
# An entity the disclosure names that more than this share of the memories
# (and more than HUB_MIN) also name -- the user's own company, their partner
# -- links everything: it is not one of the fact's entities.
HUB_SHARE = 0.25
HUB_MIN = 20

# (request, disclosure texts, candidate texts) -> a closeness per candidate.
Rerank = Callable[[str, list[str], list[str]], Sequence[float]]


@dataclass
class TrailPlan:
    """What a trail-aware forget would remove, before it does (ids only in
    reports; the rows are for the caller that holds them anyway)."""

    entities: set[str] = field(default_factory=set)
    disclosure: list[MemoryRow] = field(default_factory=list)
    evidence: list[MemoryRow] = field(default_factory=list)
    turns: list[TurnRow] = field(default_factory=list)


class TrailForgetter:
    """Plans and applies trail-aware forgets for one store."""

    def __init__(self, control: ControlPlane, rerank: Rerank | None = None) -> None:
        self.control = control
        self.storage: Storage = control.storage
        self.recall: Recall = control.recall
        self.rerank = rerank

    def plan(self, tenant: Tenant, request: str, budget: int = BUDGET) -> TrailPlan:
        """The entities, disclosure, evidence and cut for ``request``."""
        if budget < 0:
            raise InvalidInput("budget must be a non-negative number of turns")
        rows = [r for r in self.storage.memories(tenant.id, list(STATES)) if tenant.covers(r)]
        if not rows:
            return TrailPlan()
        graph = EntityGraph.build((r.id, r.text) for r in rows)
        asked = graph.resolve(request)
        vecs = self.recall.vectors([request], rows)
        to_request = vecs[1:] @ vecs[0]
        disclosure = self._disclosure(rows, to_request, graph, asked)
        fact = asked | {k for r in disclosure for k in graph.entities_of[r.id]}
        hub = max(HUB_MIN, HUB_SHARE * len(rows))
        fact -= {k for k in fact - asked if len(graph.mentioned_in[k]) > hub}
        # closeness to the fact: the request or any disclosure, said otherwise
        index = {r.id: i for i, r in enumerate(rows)}
        close = to_request.copy()
        for d in disclosure:
            close = np.maximum(close, vecs[1:] @ vecs[1 + index[d.id]])
        taken = {r.id for r in disclosure}
        expanded = graph.memories(asked) | graph.memories(fact)
        nearest = {rows[i].id for i in np.argsort(-close)[:POOL]}
        candidates = [r for r in rows if r.id in (expanded | nearest) - taken]
        if self.rerank is not None and candidates:
            scores = self.rerank(
                request, [d.text for d in disclosure], [r.text for r in candidates]
            )
            close = close.copy()
            for r, s in zip(candidates, scores, strict=True):
                close[index[r.id]] = float(s)
        scored = []
        for r in candidates:
            links = len(graph.entities_of[r.id] & fact)
            c = float(close[index[r.id]])
            if (
                (links >= 2 and c >= LINK_MIN)
                or (links == 1 and c >= ENTITY_MIN)
                or (c >= RESTATE_MIN)
            ):
                scored.append((links + c, r))
        evidence = [r for _, r in sorted(scored, key=lambda x: (-x[0], x[1].id))]
        turns = self._cut(disclosure, evidence, budget)
        kept = {t.id for t in turns}
        evidence = [
            r for r in evidence if {t.id for t in self.storage.sources([r.id])[r.id]} & kept
        ]
        return TrailPlan(fact, disclosure, evidence, turns)

    @staticmethod
    def _disclosure(
        rows: list[MemoryRow], to_request: np.ndarray, graph: EntityGraph, asked: set[str]
    ) -> list[MemoryRow]:
        """The memories that state the fact: closest to the request, naming
        one of its entities when it names any."""
        order = [int(i) for i in np.argsort(-to_request)]
        eligible = [i for i in order if not asked or graph.entities_of[rows[i].id] & asked]
        if not eligible or to_request[eligible[0]] < DISCLOSURE_MIN:
            return []
        best = float(to_request[eligible[0]])
        return [
            rows[i]
            for i in eligible[:MAX_DISCLOSURES]
            if to_request[i] >= max(DISCLOSURE_MIN, best - DISCLOSURE_MARGIN)
        ]

    def _cut(
        self, disclosure: list[MemoryRow], evidence: list[MemoryRow], budget: int
    ) -> list[TurnRow]:
        """Source turns of the disclosure, then of the evidence in order, at
        most ``budget`` evidence turns."""
        sources = self.storage.sources([r.id for r in disclosure + evidence])
        turns: dict[int, TurnRow] = {}
        for r in disclosure:
            turns.update({t.id: t for t in sources[r.id]})
        spent = 0
        for r in evidence:
            new = [t for t in sources[r.id] if t.id not in turns]
            if spent + len(new) > budget:
                continue
            turns.update({t.id: t for t in new})
            spent += len(new)
        return list(turns.values())

    def forget(self, tenant: Tenant, request: str, budget: int = BUDGET) -> ForgetReport:
        """Delete the disclosure and the evidence trail of ``request`` with
        closure, in one transaction; the report lists ids and counts (and the
        surviving memories that still connect the request's entities)."""
        with self.storage.transaction(), self.recall.reusing():
            plan = self.plan(tenant, request, budget)
            turn_ids = [t.id for t in plan.turns]
            rows = self.storage.memories_by_id(self.storage.derived(turn_ids))
            # a memory's other sources (an assistant turn that repeated it)
            # keep only what survives in them, as a purge leaves them
            others = {
                t.id: t
                for ts in self.storage.sources([r.id for r in rows]).values()
                for t in ts
                if t.id not in set(turn_ids)
            }
            self.storage.delete_memories([r.id for r in rows])
            self.storage.delete_turns(turn_ids)
            self.control._scrub_turns(list(others.values()))
            residual = self.residual(tenant, request)
            chosen = {r.id for r in plan.disclosure + plan.evidence}
            report = ForgetReport(
                kind="trail",
                language=language_of(request),
                categories=[],
                match="trail" if plan.turns else "none",
                removed=[r.uid for r in rows],
                rewritten=[],
                created=[],
                turns_removed=len(turn_ids),
                request_turn="",
                residual=[r.uid for r in residual],
                collateral=len({r.id for r in rows} - chosen),
            )
            self.control.audit.record(
                tenant.key,
                "forget_trail",
                [*report.removed, *(t.uid for t in plan.turns)],
                {
                    "removed": len(rows),
                    "turns": len(turn_ids),
                    "disclosures": len(plan.disclosure),
                    "evidence": len(plan.evidence),
                    "entities": len(plan.entities),
                    "residual": len(residual),
                    "collateral": report.collateral,
                },
            )
        self.storage.erase()
        return report

    def residual(self, tenant: Tenant, request: str) -> list[MemoryRow]:
        """Surviving memories that still connect the request's entities: two
        of them named together, or one named in a memory close to the
        request -- what a reader could still piece the fact together from."""
        rows = [r for r in self.storage.memories(tenant.id, list(STATES)) if tenant.covers(r)]
        if not rows:
            return []
        graph = EntityGraph.build((r.id, r.text) for r in rows)
        asked = graph.resolve(request)
        if not asked:
            return []
        linked = [r for r in rows if graph.entities_of[r.id] & asked]
        if not linked:
            return []
        vecs = self.recall.vectors([request], linked)
        close = vecs[1:] @ vecs[0]
        return [
            r
            for r, c in zip(linked, close, strict=True)
            if len(graph.entities_of[r.id] & asked) >= 2 or c >= ENTITY_MIN
        ]

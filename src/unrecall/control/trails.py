"""Trail-aware forgetting: cut the evidence a secret can be pieced from.

"Forget that the firm we hired belongs to our CFO's wife": deleting the turn
that said so leaves the contract with the firm, its ownership filing and the
dinner the CFO and his wife hosted, which together still say it. Similarity
to the request does not reach that evidence (it shares the request's people
and firms, not its words); the entities do.

The plan, deterministic, reads only the request's neighbourhood through
the indexes (no scan of the store):

1. **Entities of the request** -- its names, identifiers, role and kin
   references ("our CFO's wife", "my dad"), resolved through the entity
   graph (``recall.entities``) of the memories that name them, round by
   round (a role leads to a person, a person to their kin).
2. **Disclosure** -- the memory that states the fact. The request without
   its frame ("what dose my dad is on") is compared with the memories naming
   its entities (or no one), half of it with names masked; among the
   ``DISCLOSURE_POOL`` closest (at least ``DISCLOSURE_MIN``) that hold the
   kind of value asked for (a number for "how much", a new name for "who"),
   the one the store corroborates most (its other entities and rare words
   recur in memories about the request's entities), a total first (a number
   adding up others said about them). Its entities join the request's; an
   unnamed "my cousin" among them is bound to the named person their
   memories share rare content with.
3. **Candidates** -- entity expansion: memories naming the fact's entities
   (one hop from the request, two through the disclosure), with the
   ``POOL`` memories closest to the request or the disclosure.
4. **Evidence** -- each candidate gets a logistic score over
   ``EVIDENCE_FEATURES`` (entity links, the fact's rare words and numbers,
   closeness with and without names, echoes among the memories about the
   fact's entities: "someone got a puppy" is not "someone owes me 3,100
   dollars"); at least ``EVIDENCE_MIN`` is evidence. Then a second hop
   from the entities the evidence adds. An optional ``rerank`` hook (an
   LLM, off by default) decides instead.
5. **The cut** -- the source turns of the disclosure and of the evidence,
   best first, at most ``budget`` evidence turns: deleted with closure (every
   memory derived from them goes), in one transaction, physically erased.

:meth:`TrailForgetter.residual` lists what survives that still connects the
request's entities: what a reader could still piece together.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from unrecall.control.operations import ControlPlane, Tenant
from unrecall.dialogue.requests import language_of
from unrecall.errors import InvalidInput
from unrecall.recall.entities import MASK, EntityGraph
from unrecall.recall.lexical import STOPWORDS, content_words, stem, text_keys, words
from unrecall.recall.search import Recall
from unrecall.records import ACTIVE, STATES, ForgetReport
from unrecall.storage.base import MemoryRow, Storage, TurnRow

# Least cosine of the disclosure to the request's fact (a paraphrase ~0.5-0.7).
DISCLOSURE_MIN = 0.35
# Of a memory naming one of the request's entities, the cosine to the
# request that puts it in the residual report.
ENTITY_MIN = 0.3
POOL = 20  # memories closest in meaning, added to the entity expansion
UNNAMED_POOL = 20  # memories closest to the request judged with names masked too
UNNAMED_MIX = 0.5  # the masked share of that closeness
DISCLOSURE_POOL = 5  # closest candidates weighed for corroboration
SUPPORT_WEIGHT = 0.05  # per log(1 + corroborating memories)
TOTAL_BONUS = 0.2  # for a number that adds up others (a total)
TOTAL_PARTS = 12  # numbers of the request's memories tried as its summands
MAX_AMOUNT_CHARS = 30  # a longer run of digits is an identifier or noise, not an amount
# A word at most this many memories (of the neighbourhood, or of the store)
# hold, or this share of them, is rare.
RARE_MIN = 3
RARE_SHARE = 0.05
RERANK_MIN = 0.5  # a rerank hook's score that makes a candidate evidence
RESOLVE_ROUNDS = 3  # role -> person -> kin -> their names
LOOKUP = 2000  # memories read per name part, identifier or role word (best BM25 first)
BUDGET = 10  # evidence turns one request may delete at most
PLAN_ATTEMPTS = 3  # plans made outside the write lock before one is made under it
# An entity the disclosure names that more than this share of the memories
# (and more than HUB_MIN) also name -- the user's own company, their partner
# -- links everything: it is not one of the fact's entities.
HUB_SHARE = 0.25
HUB_MIN = 20
# The evidence score: a logistic model over what ties a candidate memory to
# the fact (EVIDENCE_FEATURES, see ``evidence_features``). The weights were
# fitted by ``python bench/trails_weights.py`` on development episodes of
# ``unrecall bench trails`` (seeds 101, 202, 303, 404, 505, 707), never on the
# reported seeds 0 and 7; a candidate scoring at least EVIDENCE_MIN is evidence.
EVIDENCE_WEIGHTS: dict[str, float] = {
    "links2": 3.029,  # names two of the fact's entities
    "links1": 2.478,  # names one
    "words": -0.002,  # the fact's rare words it holds (up to 3)
    "words_unnamed": 1.065,  # the same, outside the names it holds
    "close": 5.015,  # cosine to the request or the disclosure
    "close_rel": 2.857,  # that, minus the closest candidate's
    "close_named": -2.668,  # the cosine again for a memory naming one of the fact's entities
    "gist": 2.444,  # what it says of a fact's entity, names masked, against the fact
    "echo": 0.396,  # other memories naming the fact's entities that share its rare words
    "value": 3.009,  # holds a number where the request asks for one
    "same_value": 1.313,  # holds a number the request or the disclosure holds ("12", "500 mg")
    "others": 1.053,  # entities it names besides the fact's (up to 3)
    "hop2": -0.173,  # reached through an entity the evidence added
    "wants_name": 0.587,  # the request asks who or which
    "wants_number": -1.177,  # the request asks how much or when
}
EVIDENCE_FEATURES = tuple(EVIDENCE_WEIGHTS)
EVIDENCE_BIAS = -5.025
EVIDENCE_MIN = 0.4
ECHO_MAX = 4  # echoes counted at most

# (request, disclosure texts, candidate texts) -> a closeness per candidate.
Rerank = Callable[[str, list[str], list[str]], Sequence[float]]


@dataclass(frozen=True)
class Told:
    """What the request and its disclosure say, for scoring candidates: their
    rare words, the kind of value asked for, the numbers they hold, and each
    neighbourhood row's closeness to them."""

    words: set[str]
    wants: str | None
    values: set[str]
    close: np.ndarray


@dataclass(frozen=True)
class Scored:
    """A candidate memory of a plan: its row index and id, the hop that
    reached it, its EVIDENCE_FEATURES and its evidence score."""

    index: int
    id: int
    hop: int
    features: np.ndarray
    score: float


@dataclass
class _Read:
    """The memories one plan has read, so that each is read once."""

    rows: dict[int, MemoryRow] = field(default_factory=dict)
    inactive: list[MemoryRow] | None = None


@dataclass
class TrailPlan:
    """What a trail-aware forget would remove, before it does (ids only in
    reports; the rows are for the caller that holds them anyway)."""

    entities: set[str] = field(default_factory=set)
    disclosure: list[MemoryRow] = field(default_factory=list)
    evidence: list[MemoryRow] = field(default_factory=list)
    turns: list[TurnRow] = field(default_factory=list)
    candidates: list[Scored] = field(default_factory=list)


class TrailForgetter:
    """Plans and applies trail-aware forgets for one store."""

    def __init__(self, control: ControlPlane, rerank: Rerank | None = None) -> None:
        self.control = control
        self.storage: Storage = control.storage
        self.recall: Recall = control.recall
        self.rerank = rerank

    def plan(self, tenant: Tenant, request: str, budget: int = BUDGET) -> TrailPlan:
        """The entities, disclosure, evidence and cut for ``request``.

        Only the request's neighbourhood is read, through the indexes: the
        memories closest to it, those naming its entities or role words, then
        (second hop) those naming the disclosure's entities or close to it.
        """
        if budget < 0:
            raise InvalidInput("budget must be a non-negative number of turns")
        return self._plan(tenant, request, budget)

    def _plan(self, tenant: Tenant, request: str, budget: int) -> TrailPlan:
        total = self.storage.count_memories(tenant.id)
        if not total:
            return TrailPlan()
        core = fact_of(request)
        read = _Read()
        rows, graph, asked = self._resolve(tenant, request, core, read)
        vecs = self.recall.vectors([core], rows)
        wants = _wants(core)
        to_request = self._half_masked(rows, graph, core, vecs[1:] @ vecs[0])
        disclosure = self._disclosure(rows, to_request, graph, asked, wants, graph.spelled(request))
        fact = asked | {k for r in disclosure for k in graph.entities_of[r.id]}
        # second hop: what names the fact's entities, or restates a disclosure
        said = [d.text for d in disclosure]
        more = self._naming(tenant, _entity_digests(self.recall, fact)) | self._nearest(
            tenant, said
        )
        rows = self._rows(tenant, {r.id for r in rows} | more, read)
        graph = EntityGraph.build(((r.id, r.text) for r in rows), [request])
        hub = max(HUB_MIN, HUB_SHARE * total)
        fact = _with_kin(rows, graph, fact)
        fact -= {k for k in fact - asked if len(graph.mentioned_in.get(k, ())) > hub}
        # an identifier said beside one of the fact's people is one more name
        # of theirs ("Mateo Mendes posts as @mmendes_works")
        fact |= {
            k
            for e in fact
            if not e.startswith("id:")
            for k in graph.neighbours(e)
            if k.startswith("id:") and len(graph.mentioned_in.get(k, ())) <= hub
        }
        # closeness to the fact: the request or any disclosure, said otherwise
        vecs = self.recall.vectors([core, *said], rows)
        close = (vecs[len(said) + 1 :] @ vecs[: len(said) + 1].T).max(axis=1)
        # the fact's own words: those of the request and the disclosures that
        # few memories of the whole store hold ("custody", "lamotrigine");
        # names are not words here, they count as entity links
        told = self._rare_words(tenant, [graph.masked(t) for t in [core, *said]], total)
        if wants == "number":
            # a total the first neighbourhood did not reach states the fact too
            seen = {r.id for r in disclosure}
            close_enough = [
                i
                for i, r in enumerate(rows)
                if close[i] >= DISCLOSURE_MIN
                and r.id not in seen
                and (graph.entities_of[r.id] & fact or not graph.entities_of[r.id])
            ]
            around = [r for r in rows if graph.entities_of[r.id] & fact]
            disclosure += [rows[i] for i in sorted(_totals(rows, around, close_enough))]
        taken = {r.id for r in disclosure}
        scored: list[Scored] = []
        if self.rerank is not None:
            evidence = self._reranked(
                self.rerank, request, said, rows, graph, fact, told, close, taken
            )
        else:
            gist = self._gist(rows, graph, fact, [core, *said])
            about = Told(told, wants, _numbers(" ".join([core, *said])), close)
            scored = _scored(rows, graph, about, fact, gist, taken, hop=1)
            evidence = [rows[c.index] for c in scored if c.score >= EVIDENCE_MIN]
            # two hops: the entities the evidence adds (the head of design's
            # employer, the father's doctor) reach the rest of the trail
            further = {k for r in evidence for k in graph.entities_of[r.id]} - fact
            further -= {k for k in further if len(graph.mentioned_in.get(k, ())) > hub}
            if further:
                taken |= {r.id for r in evidence}
                second = _scored(rows, graph, about, further, np.zeros_like(gist), taken, hop=2)
                scored += second
                evidence += [rows[c.index] for c in second if c.score >= EVIDENCE_MIN]
        turns = self._cut(disclosure, evidence, budget)
        kept = {t.id for t in turns}
        sources = self.storage.sources([r.id for r in evidence])
        evidence = [r for r in evidence if {t.id for t in sources[r.id]} & kept]
        return TrailPlan(fact, disclosure, evidence, turns, scored)

    def _half_masked(
        self, rows: list[MemoryRow], graph: EntityGraph, core: str, to_request: np.ndarray
    ) -> np.ndarray:
        """Closeness to the request of the memories closest to it, half of it
        judged on what they say once names are masked ("Femi's medical
        condition" is as near "Femi got a promotion" as "Femi has epilepsy"
        until the names go); the others keep their plain cosine."""
        near = [int(i) for i in np.argsort(-to_request)[:UNNAMED_POOL]]
        out = to_request.copy()
        if near:
            masked = self.recall.embed(
                [graph.masked(core)] + [graph.masked(rows[i].text) for i in near]
            )
            out[near] = (
                UNNAMED_MIX * (masked[1:] @ masked[0]) + (1 - UNNAMED_MIX) * to_request[near]
            )
        return out

    def _gist(
        self, rows: list[MemoryRow], graph: EntityGraph, fact: set[str], about: list[str]
    ) -> np.ndarray:
        """Per row, the cosine of what a memory naming the fact's entities
        says of them to what the fact says, names masked (0 for the others)."""
        linked = [i for i, r in enumerate(rows) if graph.named_in(r.id, fact) & fact]
        gist = np.zeros(len(rows), dtype=np.float32)
        if linked:
            masked = self.recall.embed(
                [graph.masked(t) for t in about] + [graph.masked(rows[i].text) for i in linked]
            )
            gist[linked] = (masked[len(about) :] @ masked[: len(about)].T).max(axis=1)
        return gist

    @staticmethod
    def _reranked(
        rerank: Rerank,
        request: str,
        said: list[str],
        rows: list[MemoryRow],
        graph: EntityGraph,
        fact: set[str],
        told: set[str],
        close: np.ndarray,
        taken: set[int],
    ) -> list[MemoryRow]:
        """Evidence chosen by the rerank hook: the pool an expansion reaches
        (what names the fact's entities, shares its words, or is closest in
        meaning), kept where the hook scores it at least ``RERANK_MIN``."""
        nearest = {int(i) for i in np.argsort(-close)[:POOL]}
        pool = [
            r
            for i, r in enumerate(rows)
            if r.id not in taken
            and (i in nearest or graph.named_in(r.id, fact) & fact or content_words(r.text) & told)
        ]
        scores = [float(x) for x in rerank(request, said, [r.text for r in pool])]
        ranked = sorted(zip(scores, pool, strict=True), key=lambda x: (-x[0], x[1].id))
        return [r for score, r in ranked if score >= RERANK_MIN]

    def _resolve(
        self, tenant: Tenant, request: str, fact: str, read: _Read
    ) -> tuple[list[MemoryRow], EntityGraph, set[str]]:
        """The request's neighbourhood, its graph and the entities it names.
        A role leads to a person, a person to their kin ("our CFO's wife"):
        each round reads the memories naming what the last one resolved."""
        # the entities of the fact (``fact_of``), not of an aside: "forget the
        # clinic costs, Ines would hate that it's stored" is about the costs
        ids = self._nearest(tenant, [request]) | self._naming(
            tenant, _request_digests(self.recall, fact)
        )
        for _ in range(RESOLVE_ROUNDS):
            rows = self._rows(tenant, ids, read)
            graph = EntityGraph.build(((r.id, r.text) for r in rows), [request])
            asked = _with_kin(rows, graph, graph.resolve(fact))
            more = self._naming(tenant, _entity_digests(self.recall, asked)) - ids
            if not more:
                break
            ids |= more
        else:
            rows = self._rows(tenant, ids, read)
            graph = EntityGraph.build(((r.id, r.text) for r in rows), [request])
            asked = _with_kin(rows, graph, graph.resolve(fact))
        return rows, graph, asked

    def _rare_words(self, tenant: Tenant, texts: list[str], total: int) -> set[str]:
        """Stems of the words of ``texts`` that at most ``RARE_SHARE`` of the
        tenant's memories (and at least ``RARE_MIN``) hold, counted in the
        full-text index."""
        most = max(RARE_MIN, int(RARE_SHARE * total))
        out = set()
        for w in dict.fromkeys(w for t in texts for w in words(t)):
            if w in STOPWORDS or len(w) < 3 or w == MASK:
                continue
            hits = self.storage.lexical(tenant.id, [self.recall.hasher.term(w)], most + 1)
            if len(hits) <= most:
                out.add(stem(w))
        return out

    def _nearest(self, tenant: Tenant, texts: list[str]) -> set[int]:
        """Ids of the active memories the hybrid recall ranks best for each text."""
        out: set[int] = set()
        for text in texts:
            hits = self.recall.search(
                tenant.id, text, POOL, lambda r: r.state == ACTIVE and tenant.covers(r)
            )
            out |= {c.row.id for c in hits}
        return out

    def _naming(self, tenant: Tenant, digests: list[str]) -> set[int]:
        """Ids of the active memories whose index holds any of the digests
        (a name part, an identifier, a role word): at most ``LOOKUP`` each."""
        return {mid for d in digests for mid, _ in self.storage.lexical(tenant.id, [d], LOOKUP)}

    def _rows(self, tenant: Tenant, ids: set[int], read: _Read) -> list[MemoryRow]:
        """The memories of ``ids`` and every memory out of recall (released,
        superseded: not in the indexes, few, and still stored), in order;
        each read from storage once per plan (``read``)."""
        if read.inactive is None:
            read.inactive = self.storage.memories(tenant.id, [s for s in STATES if s != ACTIVE])
        new = sorted(ids - read.rows.keys())
        read.rows.update({r.id: r for r in self.storage.memories_by_id(new)})
        rows = {i: read.rows[i] for i in ids if i in read.rows}
        rows.update({r.id: r for r in read.inactive})
        return [r for _, r in sorted(rows.items()) if tenant.covers(r)]

    @staticmethod
    def _disclosure(
        rows: list[MemoryRow],
        to_request: np.ndarray,
        graph: EntityGraph,
        asked: set[str],
        wants: str | None,
        spelled: set[str],
    ) -> list[MemoryRow]:
        """The memories that state the fact: among the closest to the request
        (naming one of its entities when it names any), the one the rest of
        the store corroborates -- whose other entities and rare words recur
        in memories that also name the request's entities ("Dr Fontaine
        settled my dad on 1000 mg of metformin", not "a dose of sunshine is
        what my dad needs"); then any as close as it."""
        order = [int(i) for i in np.argsort(-to_request)]
        # about the request's entities, or about no one in particular ("our
        # fertility treatment has cost 10,100 dollars so far"), not others
        eligible = [
            i
            for i in order
            if not asked
            or graph.entities_of[rows[i].id] & asked
            or not graph.entities_of[rows[i].id]
        ]
        eligible = [i for i in eligible if to_request[i] >= DISCLOSURE_MIN]
        around = [r for r in rows if not asked or graph.entities_of[r.id] & asked]
        # a number that adds up others said about the request's entities is a
        # total ("has cost 10,100 dollars so far" after 4,800 + 900 + ...):
        # the value a "how much" asks for, however far down the ranking
        totals = _totals(rows, around, eligible) if wants == "number" else set()
        eligible = eligible[:DISCLOSURE_POOL] + [
            i for i in eligible[DISCLOSURE_POOL:] if i in totals
        ]
        # a statement of the fact holds its value: a number for "how much"
        # or "when", a condition for a diagnosis, a name the request does
        # not spell for "who" (one it
        # reaches through a role may be the value: "our next head of design")
        typed = [
            i
            for i in eligible
            if (wants != "number" or re.search(r"\d", rows[i].text))
            and (wants != "condition" or CONDITION_TERMS.search(rows[i].text))
            and (wants != "name" or graph.entities_of[rows[i].id] - spelled)
        ]
        eligible = typed or eligible
        if not eligible:
            return []
        rare = _rare_terms(rows)

        def support(i: int) -> int:
            own = (graph.entities_of[rows[i].id] - asked, content_words(rows[i].text) & rare)
            return sum(
                1
                for r in around
                if r.id != rows[i].id
                and (graph.entities_of[r.id] & own[0] or content_words(r.text) & own[1])
            )

        score = {
            i: float(to_request[i])
            + SUPPORT_WEIGHT * np.log1p(support(i))
            + (TOTAL_BONUS if i in totals else 0.0)
            for i in eligible
        }
        best = max(eligible, key=lambda i: (score[i], -i))
        # one statement of the fact; a restatement of it is taken as evidence
        return [rows[best]]

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
        surviving memories that still connect the request's entities).

        The plan is made outside the write lock (on a large store it reads
        and embeds for seconds, and every writer would wait): it is applied
        only if the tenant's version is the one it was planned on, so nothing
        the plan read changed meanwhile; otherwise it is made again, and
        after ``PLAN_ATTEMPTS`` under the lock.
        """
        for attempt in range(PLAN_ATTEMPTS + 1):
            locked = attempt == PLAN_ATTEMPTS
            with self.storage.transaction() if locked else nullcontext():
                version = self.storage.tenant_version(tenant.id)
                plan = self.plan(tenant, request, budget)
                with self.storage.transaction():
                    if self.storage.tenant_version(tenant.id) != version:
                        continue  # a write landed while planning: plan again
                    removed, turns, collateral = self._apply(tenant, plan)
            break
        residual = self.residual(tenant, request)
        self.storage.erase()
        return ForgetReport(
            kind="trail",
            language=language_of(request),
            categories=[],
            match="trail" if plan.turns else "none",
            removed=removed,
            rewritten=[],
            created=[],
            turns_removed=turns,
            request_turn="",
            residual=[r.uid for r in residual],
            collateral=collateral,
        )

    def _apply(self, tenant: Tenant, plan: TrailPlan) -> tuple[list[str], int, int]:
        """Carry a plan out (inside its transaction): the cut's turns and
        every memory derived from them go; returns (memory ids removed, turns
        removed, collateral)."""
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
        # a turn left with none of its memories goes too: count it
        orphaned = [t for t in others.values() if not self.storage.derived([t.id])]
        self.control._scrub_turns(list(others.values()))
        removed = [r.uid for r in rows]
        turns = len(turn_ids) + len(orphaned)
        collateral = len({r.id for r in rows} - {r.id for r in plan.disclosure + plan.evidence})
        self.control.audit.record(
            tenant.handle,
            "forget_trail",
            [*removed, *(t.uid for t in plan.turns), *(t.uid for t in orphaned)],
            {
                "removed": len(rows),
                "turns": turns,
                "disclosures": len(plan.disclosure),
                "evidence": len(plan.evidence),
                "entities": len(plan.entities),
                "collateral": collateral,
            },
        )
        return removed, turns, collateral

    def residual(self, tenant: Tenant, request: str) -> list[MemoryRow]:
        """Surviving memories that still connect the request's entities: two
        of them named together, or one named in a memory close to the
        request -- what a reader could still piece the fact together from."""
        rows, graph, asked = self._resolve(tenant, request, fact_of(request), _Read())
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


def _scored(
    rows: list[MemoryRow],
    graph: EntityGraph,
    about: Told,
    fact: set[str],
    gist: np.ndarray,
    taken: set[int],
    hop: int,
) -> list[Scored]:
    """Every candidate (the rows not ``taken``) with its features and its
    evidence score, best first."""
    idx = [i for i, r in enumerate(rows) if r.id not in taken]
    if not idx:
        return []
    feats = evidence_features(rows, idx, graph, about, fact, gist, hop)
    weights = np.array(list(EVIDENCE_WEIGHTS.values()))
    scores = 1.0 / (1.0 + np.exp(-(feats @ weights + EVIDENCE_BIAS)))
    out = [
        Scored(i, rows[i].id, hop, f, float(p)) for i, f, p in zip(idx, feats, scores, strict=True)
    ]
    return sorted(out, key=lambda c: (-c.score, c.id))


def evidence_features(
    rows: list[MemoryRow],
    idx: list[int],
    graph: EntityGraph,
    about: Told,
    fact: set[str],
    gist: np.ndarray,
    hop: int,
) -> np.ndarray:
    """The EVIDENCE_FEATURES of ``rows[i]`` for each ``i`` in ``idx``.

    Names alone tie distractors to a fact ("Hannah got a puppy" names the
    debtor); what the memory says around them, whether other memories about
    the fact's entities say it too (a trail is told more than once, an aside
    once) and whether it holds the kind of value asked for separate them."""
    links = [len(graph.named_in(rows[i].id, fact) & fact) for i in idx]
    said = {i: _unnamed(graph, rows[i].text) for i, n in zip(idx, links, strict=True) if n}
    rare = _rare_terms(rows)  # words few of the neighbourhood's memories hold, for echoes
    holders: dict[str, set[int]] = {}
    for i, ws in said.items():
        for w in ws & rare:
            holders.setdefault(w, set()).add(i)
    close, wants = about.close, about.wants
    top = max(float(close[i]) for i in idx)
    out = np.zeros((len(idx), len(EVIDENCE_FEATURES)))
    for row, (i, n) in enumerate(zip(idx, links, strict=True)):
        text = rows[i].text
        words = content_words(text) & about.words
        unnamed = said.get(i, _unnamed(graph, text) if words else set())
        echo = set().union(*(holders.get(w, set()) for w in said.get(i, set()) & rare)) - {i}
        out[row] = (
            n >= 2,
            n >= 1,
            min(len(words), 3),
            min(len(unnamed & about.words), 3),
            float(close[i]),
            float(close[i]) - top,
            float(close[i]) if n else 0.0,
            float(gist[i]) if n else 0.0,
            min(len(echo), ECHO_MAX) if n else 0,
            wants == "number" and bool(re.search(r"\d", text)),
            bool(_numbers(text) & about.values),
            min(max(len(graph.entities_of[rows[i].id]) - n, 0), 3),
            hop == 2,
            wants == "name",
            wants == "number",
        )
    return out


def _with_kin(rows: list[MemoryRow], graph: EntityGraph, keys: set[str]) -> set[str]:
    """``keys`` with the person each unnamed "my cousin" among them most
    likely is, and the unnamed kin each named person among them most likely
    is (``EntityGraph.kin_by_content``, over the rare words and numbers of
    the memories that name anyone)."""
    rare = _rare_terms(rows)
    bound = graph.kin_by_content(
        {
            r.id: (_unnamed(graph, r.text) & rare) | _numbers(r.text)
            for r in rows
            if graph.entities_of[r.id]
        }
    )
    return (
        keys
        | {b for k, b in bound.items() if k in keys}
        | {k for k, b in bound.items() if b in keys}
    )


def _unnamed(graph: EntityGraph, text: str) -> set[str]:
    """The content words of ``text`` outside the names the graph knows."""
    return content_words(graph.masked(text)) - {MASK}


def _amounts(text: str) -> list[int]:
    """The whole numbers a text states ("10,100 dollars" -> 10100), not parts
    of decimals or dates written with dots, nor runs of digits too long to
    be amounts (``int`` refuses strings of over 4300 digits)."""
    return [
        int(n.replace(",", ""))
        for n in re.findall(
            r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d.])|(?<![\d.,])\d+(?!\d)(?![.,]\d)", text
        )
        if len(n) <= MAX_AMOUNT_CHARS
    ]


def _totals(rows: list[MemoryRow], around: list[MemoryRow], idx: list[int]) -> set[int]:
    """Those of ``idx`` whose row states a number that adds up two or more
    numbers the ``around`` memories state (other than its own)."""
    parts = [(r.id, v) for r in around for v in _amounts(r.text)]
    return {
        i
        for i in idx
        if any(
            _is_total(v, {w for mid, w in parts if mid != rows[i].id})
            for v in _amounts(rows[i].text)
        )
    }


def _is_total(value: int, parts: set[int]) -> bool:
    """``value`` exceeds every one of ``parts`` and is the sum of two or more
    of them (the ``TOTAL_PARTS`` largest are tried): 4,800 is no total of
    3,900 and 900 when another memory also says 4,800."""
    if not parts or value <= max(parts):
        return False
    below = sorted((p for p in parts if p > 0), reverse=True)[:TOTAL_PARTS]
    reach = {0: 0}  # sum -> most parts that make it
    for p in below:
        for total, n in list(reach.items()):
            if total + p <= value and reach.get(total + p, -1) < n + 1:
                reach[total + p] = n + 1
    return reach.get(value, 0) >= 2


def _numbers(text: str) -> set[str]:
    """The numbers a text holds, without separators ("1,300" -> "1300")."""
    return {re.sub(r"[.,]", "", n) for n in re.findall(r"\d+(?:[.,]\d+)*", text)}


def _request_digests(recall: Recall, request: str) -> list[str]:
    """Index digests of what a request names: its name and identifier keys,
    and the role words after "our", "my", "the" ("our CFO's wife": cfo)."""
    roles = re.findall(r"\b(?:our|my|the)\s+([^\W\d_][\w-]*)", request, re.IGNORECASE)
    return [recall.hasher.key(k) for k in sorted(text_keys(request))] + [
        recall.hasher.term(w) for role in roles for w in words(role)
    ]


def _entity_digests(recall: Recall, keys: set[str]) -> list[str]:
    """Index digests naming graph entities: an identifier's key, a name's parts."""
    out = []
    for key in sorted(keys):
        if key.startswith("id:"):
            out.append(recall.hasher.key(key[3:]))
        else:
            out += [recall.hasher.key(f"part:{p}") for p in key.split()]
    return out


def _rare_terms(rows: list[MemoryRow]) -> set[str]:
    """Content words few of these memories share: the words that tie a
    trail together ("metformin", "1,550") rather than the chat's own."""
    df = Counter(w for r in rows for w in content_words(r.text))
    most = max(RARE_MIN, RARE_SHARE * len(rows))
    return {w for w, n in df.items() if n <= most}


_FRAME = re.compile(
    r"^.*?\b(?:forget|delete|erase|remove|drop|wipe|scrub|purge|scrap|bin)\b"
    r"(?:\s+(?:all\s+|everything\s+)?about|\s+(?:the\s+)?(?:thing|stuff)\s+about"
    r"|\s+what\s+i\s+(?:said|told\s+you)\s+about)?\s*",
    re.IGNORECASE,
)


def fact_of(request: str) -> str:
    """The fact a request names, without its frame: "Please forget what
    dose my dad is on." -> "what dose my dad is on"; "Forget the clinic
    costs, Victor would hate it" -> "the clinic costs"."""
    rest = _FRAME.sub("", request.strip(), count=1)
    rest = re.split(r",\s|[.!?;](?:\s|$)", rest, maxsplit=1)[0].strip(" .!?")
    return rest if words(rest) else request


_WANTS_NUMBER = re.compile(
    r"\b(?:how\s+(?:much|many|long|old)|when|cost|costs|debt|owes?|price|numbers?|size|dose|"
    r"salary|amount|total|dates?|spent|spend|spending)\b",
    re.IGNORECASE,
)
_WANTS_NAME = re.compile(
    r"\b(?:who|whom|whose|name|which\s+(?:company|firm|person)|funding|funds|suing|behind|"
    r"belongs|owning|owns|backing)\b",
    re.IGNORECASE,
)


_WANTS_CONDITION = re.compile(
    r"\b(?:(?:medical\s+)?condition|diagnos[ie]s|diagnosed|illness|disease|health)\b",
    re.IGNORECASE,
)
# What states a diagnosis: the words and endings of conditions ("has
# bipolar disorder", "has epilepsy", "Crohn's disease", "arthritis").
CONDITION_TERMS = re.compile(
    r"\b(?:\w+(?:itis|osis|a?emia)|disease|disorder|syndrome|cancer|tumou?r|lymphoma|"
    r"diabetes|epilepsy|asthma|dementia|depression|anxiety|bipolar|schizophrenia|autism|"
    r"adhd|migraine|lupus|hiv|hepatitis|leuka?emia|stroke|sclerosis|dyslexia)\b",
    re.IGNORECASE,
)


def _wants(fact: str) -> str | None:
    """What kind of value a request's fact holds: "number" (how much, when,
    the dose), "condition" (a diagnosis), "name" (who, which company), or
    None."""
    if _WANTS_NUMBER.search(fact):
        return "number"
    if _WANTS_CONDITION.search(fact):
        return "condition"
    return "name" if _WANTS_NAME.search(fact) else None

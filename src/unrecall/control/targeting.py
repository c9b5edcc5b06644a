"""Turning an operation's target (an id or a query) into memories.

The rule, in order, stopping at the first that matches:

1. **id** - the target is the public id of a memory of the tenant.
2. **phrase** - every memory (in the states the operation may touch) whose
   text contains the query's tokens as a contiguous run of *whole* tokens,
   after case, accent and Unicode folding. Identifiers are single tokens
   (``alice@acme.io``, ``TKT-100``, ``/etc/app/conf``), so a look-alike that
   merely shares a prefix or is a superstring never matches.
3. **semantic** - only for reversible operations (supersede, release): the
   single best hybrid hit, if its cosine similarity to the query is at least
   ``SEMANTIC_MIN``. A purge never targets by meaning alone.
4. **none** - nothing is affected and the report says so.

A query made only of common words is refused rather than allowed to hit
nearly everything.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from unrecall.errors import InvalidInput
from unrecall.recall.lexical import compound_tokens, contains_phrase, is_too_broad
from unrecall.recall.search import Recall
from unrecall.records import ACTIVE
from unrecall.storage.base import MemoryRow, Storage, TurnRow

SEMANTIC_MIN = 0.5
_CANDIDATE_LIMIT = 100_000


@dataclass(frozen=True)
class Target:
    """Memories a target resolved to, and how."""

    rows: list[MemoryRow]
    match: str
    similarity: float | None = None


def looks_like_id(target: str, prefix: str = "m_") -> bool:
    """True for strings shaped like public ids (``m_`` + 20 hex digits)."""
    return (
        len(target) == 22
        and target.startswith(prefix)
        and all(c in "0123456789abcdef" for c in target[2:])
    )


def query_tokens(query: str) -> list[str]:
    """Targeting tokens of a query, refusing empty and stopword-only ones."""
    tokens = compound_tokens(query)
    if not tokens:
        raise InvalidInput("target query has no words")
    if is_too_broad(tokens):
        raise InvalidInput("target query is only common words; give an id or a specific phrase")
    return tokens


def phrase_memories(
    storage: Storage, recall: Recall, tenant_id: int, tokens: list[str], states: tuple[str, ...]
) -> list[MemoryRow]:
    """Every memory in ``states`` that contains the token run."""
    terms = recall.hasher.query_terms(" ".join(tokens))
    rows: list[MemoryRow] = []
    if ACTIVE in states:
        hits = storage.lexical(tenant_id, terms, _CANDIDATE_LIMIT, require_all=True)
        rows += storage.memories_by_id([mid for mid, _ in hits])
    inactive = tuple(s for s in states if s != ACTIVE)
    if inactive:  # not in the recall indexes: few, scanned directly
        rows += storage.memories(tenant_id, inactive)
    found = [r for r in rows if contains_phrase(compound_tokens(r.text), tokens)]
    return sorted(found, key=lambda r: r.id)


def phrase_turns(
    storage: Storage, recall: Recall, tenant_id: int, tokens: list[str]
) -> list[TurnRow]:
    """Every source turn of the tenant that contains the token run."""
    terms = recall.hasher.query_terms(" ".join(tokens))
    hits = storage.lexical(tenant_id, terms, _CANDIDATE_LIMIT, require_all=True, turns=True)
    turns = storage.turns_by_id([tid for tid, _ in hits])
    return [t for t in turns if contains_phrase(compound_tokens(t.text), tokens)]


def resolve(
    storage: Storage,
    recall: Recall,
    tenant_id: int,
    target: str,
    states: tuple[str, ...],
    allow_semantic: bool,
    scope: Callable[[MemoryRow], bool] | None = None,
) -> Target:
    """Apply the targeting rule of this module to one target.

    ``scope`` (an agent / run narrowing inside the tenant) limits what a
    query may reach; an id names one memory exactly and is not narrowed.
    """
    in_scope = scope or (lambda _row: True)
    if not isinstance(target, str) or not target.strip():
        raise InvalidInput("target must be a memory id or a non-empty query")
    target = target.strip()
    if looks_like_id(target):
        row = storage.memory(tenant_id, target)
        if row is not None and row.state in states:
            return Target([row], "id")
        return Target([], "none")
    tokens = query_tokens(target)
    rows = [r for r in phrase_memories(storage, recall, tenant_id, tokens, states) if in_scope(r)]
    if rows:
        return Target(rows, "phrase")
    if allow_semantic and ACTIVE in states:
        now = time.time()
        hits = recall.search(
            tenant_id,
            target,
            1,
            accept=lambda r: (
                r.state == ACTIVE and (r.expires_at is None or r.expires_at > now) and in_scope(r)
            ),
        )
        if hits and hits[0].similarity is not None and hits[0].similarity >= SEMANTIC_MIN:
            return Target([hits[0].row], "semantic", round(hits[0].similarity, 4))
    return Target([], "none")

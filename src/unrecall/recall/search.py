"""Hybrid recall: BM25 over keyed terms + cosine over embeddings, fused by RRF.

Only active memories are in the indexes, so released, superseded and purged
ones can never be returned; expiry and scope filters are applied to the
fused candidates, widening the candidate pool until ``k`` survive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from unrecall.recall.embedder import Embedder
from unrecall.recall.identifiers import query_keys
from unrecall.recall.lexical import STOPWORDS, TermHasher, words
from unrecall.recall.names import name_keys
from unrecall.storage.base import MemoryRow, Storage

RRF_K = 60  # the constant of Cormack et al. (2009)


@dataclass(frozen=True)
class Candidate:
    """A fused hit before it is turned into a public ``SearchHit``."""

    row: MemoryRow
    score: float
    lexical_rank: int | None
    vector_rank: int | None
    similarity: float | None


class Recall:
    """Indexes memories and answers queries for one store."""

    def __init__(self, storage: Storage, embedder: Embedder, hasher: TermHasher) -> None:
        self.storage = storage
        self.embedder = embedder
        self.hasher = hasher

    def index_memories(self, rows: Sequence[MemoryRow]) -> None:
        """Embed in one batch and write both index rows of each memory."""
        if not rows:
            return
        vectors = self.embedder.embed([r.text for r in rows])
        for row, vec in zip(rows, vectors, strict=True):
            self.storage.index(row, self.hasher.document(row.text), vec)

    def query_terms(self, query: str) -> list[str]:
        """Digests of the query's words, stopwords dropped unless that empties it."""
        toks = words(query)
        # A lone Latin letter is mostly the "s" of a possessive ("Dana's").
        content = [
            t
            for t in toks
            if t not in STOPWORDS and not (len(t) == 1 and t.isascii() and t.isalpha())
        ] or toks
        terms = [self.hasher.term(t) for t in content]
        # Canonical keys let "ALICE @ Acme.IO" or "Wang Xiaoming" meet the
        # memory that wrote "alice@acme.io" or "王小明".
        terms += [self.hasher.key(k) for k in sorted(query_keys(query) | name_keys(query))]
        return list(dict.fromkeys(terms))

    def search(
        self,
        tenant_id: int,
        query: str,
        k: int,
        accept: Callable[[MemoryRow], bool],
        lexical_only: bool = False,
    ) -> list[Candidate]:
        """The ``k`` best accepted memories for ``query``, best first."""
        terms = self.query_terms(query)
        qvec: np.ndarray | None = None if lexical_only else self.embedder.embed([query])[0]
        pool = max(4 * k, 20)
        while True:
            lex = self.storage.lexical(tenant_id, terms, pool)
            vec = [] if qvec is None else self.storage.vector(tenant_id, qvec, pool)
            fused = _rrf(lex, vec)
            rows = self.storage.memories_by_id([mid for mid, _ in fused])
            by_id = {r.id: r for r in rows}
            out = [
                Candidate(by_id[mid], score, ranks[0], ranks[1], ranks[2])
                for mid, (score, ranks) in fused
                if mid in by_id and accept(by_id[mid])
            ]
            exhausted = len(lex) < pool and (qvec is None or len(vec) < pool)
            if len(out) >= k or exhausted:
                return out[:k]
            pool *= 4


def _rrf(
    lexical: list[tuple[int, float]], vector: list[tuple[int, float]]
) -> list[tuple[int, tuple[float, tuple[int | None, int | None, float | None]]]]:
    """Reciprocal-rank fusion of the lexical and vector rankings."""
    scores: dict[int, float] = {}
    ranks: dict[int, list[int | float | None]] = {}
    for rank, (mid, _) in enumerate(lexical, 1):
        scores[mid] = scores.get(mid, 0.0) + 1.0 / (RRF_K + rank)
        ranks.setdefault(mid, [None, None, None])[0] = rank
    for rank, (mid, sim) in enumerate(vector, 1):
        scores[mid] = scores.get(mid, 0.0) + 1.0 / (RRF_K + rank)
        entry = ranks.setdefault(mid, [None, None, None])
        entry[1], entry[2] = rank, sim
    # Mirrored ranks tie exactly; the cosine similarity (meaning) breaks them.
    order = sorted(scores, key=lambda m: (-scores[m], -(ranks[m][2] or -1.0)))
    return [(m, (scores[m], tuple(ranks[m]))) for m in order]  # type: ignore[misc]

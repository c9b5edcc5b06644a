"""Each backend's BM25 is Okapi BM25 summed over every posting.

The scores and the order ``Storage.lexical`` returns are checked against a
sum computed here from the raw postings, lexicon and statistics, on a store
whose words are shared by many memories at varied lengths.
"""

from __future__ import annotations

import random

from helpers import raw_sql

from unrecall import Memory
from unrecall.storage import bm25


def _part(w: float, tf: int, length: int, avg: float) -> float:
    return w * tf * (bm25.K1 + 1) / (tf + bm25.K1 * (1 - bm25.B + bm25.B * length / avg))


def _same_ranking(got: list[tuple[int, float]], every: dict[int, float], limit: int) -> None:
    """``got`` is the ``limit`` best of ``every`` (document -> score): the
    same scores in order, each document's own score, and the same document
    wherever no other scores within float rounding of it."""
    want = sorted(every.items(), key=lambda h: (-h[1], h[0]))[:limit]
    assert len(got) == len(want)
    for (gd, gs), (wd, ws) in zip(got, want, strict=True):
        assert abs(gs - ws) <= 1e-9 * max(1.0, abs(ws))
        assert abs(every[gd] - gs) <= 1e-9 * max(1.0, abs(gs))
        if sum(abs(s - ws) <= 1e-9 for s in every.values()) == 1:
            assert gd == wd


def _brute(mem: Memory, tenant_id: int, terms: list[str]) -> dict[int, float]:
    """BM25 summed over every posting of the query's words, from raw rows."""
    lex = {
        bytes(d).hex(): (i, f)
        for i, d, f in raw_sql(
            mem, "SELECT id, digest, mdf FROM lexicon WHERE tenant_id = ? AND mdf > 0", (tenant_id,)
        )
    }
    found = [lex[t] for t in dict.fromkeys(terms) if t in lex]
    n, total = raw_sql(
        mem, "SELECT docs, length FROM term_stats WHERE tenant_id = ? AND kind = 'm'", (tenant_id,)
    )[0]
    weights = dict(bm25.weights(found, n, drop_floor=True))
    scores: dict[int, float] = {}
    for term, doc, tf, length in raw_sql(mem, "SELECT term, doc, tf, len FROM memory_terms"):
        if term in weights:
            scores[doc] = scores.get(doc, 0.0) + _part(weights[term], tf, length, total / n)
    return scores


def test_each_backend_returns_the_full_sums_top_k(fast_mem: Memory) -> None:
    # Words shared by many memories, in varied numbers and lengths.
    rng = random.Random(7)
    common = ["harbour", "crane", "painted", "ledger", "violet", "orchard"]
    rare = ["zephyr", "quartz", "nimbus"]
    texts = []
    for i in range(400):
        words = rng.sample(common, rng.randint(1, 4)) + rng.sample(rare, rng.randint(0, 1))
        words += [f"filler{rng.randint(0, 300)}" for _ in range(rng.randint(0, 8))]
        texts.append(" ".join(words) + f" item{i}")
    fast_mem.add([{"role": "user", "content": t} for t in texts], user_id="u")
    storage, hasher = fast_mem.storage, fast_mem.recall.hasher
    tenant_id = storage.tenant("user:u", False)
    assert tenant_id is not None
    for query in ["harbour crane zephyr", "violet ledger orchard painted", "quartz nimbus crane"]:
        terms = [hasher.term(w) for w in query.split()]
        every = _brute(fast_mem, tenant_id, terms)
        for limit in (1, 3, 10, 40):
            _same_ranking(storage.lexical(tenant_id, terms, limit), every, limit)

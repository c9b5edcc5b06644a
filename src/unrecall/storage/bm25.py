"""Okapi BM25 over postings tables, the same on every backend.

Constants are FTS5's (k1 1.2, b 0.75, idf floor 1e-6), so scores match
what SQLite's own full-text engine would give, and both backends rank
alike: they compute the weights here and the per-posting score with the
expression ``part`` writes in their SQL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5's: an idf never below it


def weights(
    found: Sequence[tuple[int, int]], docs: int, drop_floor: bool
) -> list[tuple[int, float]]:
    """Each found term's idf from its document frequency among ``docs``
    documents, FTS5's way (never below the floor). With ``drop_floor``, a
    word in over half the documents (at the floor) is left out beside one
    that informs: it moves a score by ~1e-6 and its postings are most of the
    work ("booked" in all 10k memories: 13.4 ms, 3.0 without it, same top 80;
    bench/op_costs.py); alone, it still ranks."""
    out = [
        (term, max(math.log((docs - min(f, docs) + 0.5) / (min(f, docs) + 0.5)), IDF_FLOOR))
        for term, f in found
    ]
    if drop_floor:
        out = [w for w in out if w[1] > IDF_FLOOR] or out
    return out


def part(weight: str, tf: str, length: str, avg: str, real: str = "") -> str:
    """The SQL expression of one posting's share of a score: ``weight``
    (the term's idf) times BM25's saturated, length-normalised tf. ``real``
    casts the constants where the dialect would otherwise compute in
    exact decimals (PostgreSQL's ``::float8``)."""
    return (
        f"{weight} * {tf} * {K1 + 1}{real}"
        f" / ({tf} + {K1}{real} * ({1 - B}{real} + {B}{real} * {length} / {avg}))"
    )

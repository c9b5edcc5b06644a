"""Recall by statement: clause hits gathered into what was said.

A memory is a clause, so that one fact can be superseded or purged while
its neighbour stays. Recall answers with statements: the clauses of one
source turn that are still active, in order, ranked by their best clause
plus half of the others that matched ("I went to a support group and my
kids loved it" is about both). A statement whose speaker ("Caroline: ...")
is a person the query names ranks higher: what Caroline said is about
Caroline. Released, superseded and purged clauses are not in the indexes,
so they neither show nor rank. A query that names an identifier is not
answered by a statement about a longer or shorter look-alike of it
("ABC1234" for "ABC123"): that is another record. A turn of more than ``MAX_CLAUSES``
clauses (a pasted document) is recalled clause by clause.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from unrecall.recall.clauses import label
from unrecall.recall.identifiers import keys as identifier_keys
from unrecall.recall.names import name_keys
from unrecall.recall.search import Candidate, QueryEntities
from unrecall.storage.base import MemoryRow, Storage

OTHER_CLAUSES = 0.5  # weight of a statement's matching clauses beyond the best
# A turn of more clauses is a document, not a statement: its clauses are
# recalled one by one (sentence bounds are not kept).
MAX_CLAUSES = 4
SPEAKER_BOOST = 1.6  # a statement said by the person the query names


@dataclass(frozen=True)
class Statement:
    """A recalled statement: its clauses shown (best first in ``best``), the
    text they make, and the score it ranks by."""

    best: Candidate
    rows: list[MemoryRow]
    text: str
    score: float


def _joined(rows: Sequence[MemoryRow], head: str | None) -> str:
    """The clauses' texts as one statement; ``head``, the first clause's
    label (speaker, note head), once when every clause has it."""
    texts = [r.text for r in rows]
    if head and all(t.startswith(f"{head}: ") for t in texts):
        cut = len(head) + 2
        texts = [texts[0], *(t[cut:] for t in texts[1:])]
    return "; ".join(t.rstrip(" ;") for t in texts)


def gather(
    storage: Storage,
    entities: QueryEntities,
    pool: Sequence[Candidate],
    accept: Callable[[MemoryRow], bool],
    weight: Callable[[Candidate], float],
) -> Iterator[Statement]:
    """The statements of ``pool``'s clause candidates, best first
    (``entities``: the query's identifier and name keys; ``weight``: a
    candidate's score as the caller ranks it). Lazy: the look-alike check
    (an identifier scan of the text) runs only on the statements read."""
    groups = {
        m: g
        for m, g in storage.statements([c.row.id for c in pool]).items()
        if len(g[1]) <= MAX_CLAUSES
    }
    idents, named = entities
    by_turn: dict[int, list[Candidate]] = {}
    for c in pool:
        turn = groups.get(c.row.id, (-c.row.id, []))[0]  # no source: its own statement
        by_turn.setdefault(turn, []).append(c)
    wanted = {m for c in pool for m in groups.get(c.row.id, (0, [c.row.id]))[1]}
    have = {c.row.id: c.row for c in pool}
    missing = [m for m in wanted if m not in have]
    have.update({r.id: r for r in storage.memories_by_id(missing) if accept(r)})
    out: list[Statement] = []
    for cands in by_turn.values():
        cands = sorted(cands, key=lambda c: -weight(c))
        best = cands[0]
        siblings = groups.get(best.row.id, (0, [best.row.id]))[1]
        rows = [have[m] for m in siblings if m in have] or [best.row]
        score = weight(best) + OTHER_CLAUSES * sum(weight(c) for c in cands[1:])
        head = label(rows[0].text)
        if head and named and name_keys(head) & named:
            score *= SPEAKER_BOOST
        out.append(Statement(best, rows, _joined(rows, head), score))
    for statement in sorted(out, key=lambda s: -s.score):
        if not (idents and _look_alike(idents, statement.text)):
            yield statement


def _look_alike(idents: set[str], text: str) -> bool:
    """Whether ``text`` holds none of the query's identifiers but one that
    extends or cuts one of them (same kind, one key a prefix of the other)."""
    # (the query's "compact:" windows join its words into one run: they
    # stand for chunked identifiers, not for what the query names)
    named = {q for q in idents if not q.startswith("compact:")}
    if not named:
        return False  # (before the costly scan of the text)
    held = identifier_keys(text)
    return not held & idents and any(
        h.startswith(q) or q.startswith(h) for h in held for q in named if h != q
    )

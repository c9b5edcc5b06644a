"""Full-text postings in blocks, and BM25 over them, for every backend.

A term's postings (document, tf, document length) are kept in rows of up
to ``BLOCK`` documents, sorted by document id, as three packed arrays. A
query reads a few rows per word instead of one row per posting, and scores
them with NumPy: summing rows in SQL cost ~0.35 us a posting on SQLite and
~0.5 us on PostgreSQL, and a query's words held 5 % of a tenant's memories
on the perf corpus (~80,000 postings at a million); read as blocks and
summed in NumPy the same query costs a third of the rows' time, in a fifth
of the space (bench/results/postings-blocks.md).

Erasure is unchanged in kind: removing a document rewrites the blocks that
held it (SQLite's secure_delete zeroes the old cells; PostgreSQL's rewrite
after a forget drops the old row versions). Blocks hold term ids, never
words; the words' keyed digests stay in the lexicon alone.

Each backend keeps, per document, its length and the ids of its terms (to
find its blocks again), and does the SQL; the packing, the merging and the
scoring are here, so both rank alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5's: an idf never below it
BLOCK = 128  # postings a row: 1.75 KB at most, under PostgreSQL's TOAST threshold

_DOC, _TF, _LEN = np.dtype("<i8"), np.dtype("<u2"), np.dtype("<u4")


@dataclass
class Block:
    """One row of a term's postings: documents ascending, with their tf and
    length. ``first`` is the key the row is stored under (its smallest
    document when written)."""

    first: int
    docs: np.ndarray
    tfs: np.ndarray
    lens: np.ndarray

    @classmethod
    def decode(cls, first: int, docs: bytes, tfs: bytes, lens: bytes) -> Block:
        """A stored row."""
        return cls(
            int(first),
            np.frombuffer(docs, _DOC).astype(np.int64),
            np.frombuffer(tfs, _TF).astype(np.int64),
            np.frombuffer(lens, _LEN).astype(np.int64),
        )

    def encode(self) -> tuple[bytes, bytes, bytes]:
        """The row's three packed arrays."""
        return (
            self.docs.astype(_DOC).tobytes(),
            np.minimum(self.tfs, np.iinfo(_TF).max).astype(_TF).tobytes(),
            self.lens.astype(_LEN).tobytes(),
        )


def weights(
    found: Sequence[tuple[int, int]], docs: int, drop_floor: bool
) -> list[tuple[int, float]]:
    """Each found term's idf from its document frequency among ``docs``
    documents, FTS5's way (never below the floor). With ``drop_floor``, a
    word in over half the documents (at the floor) is left out beside one
    that informs: it moves a score by ~1e-6 and its postings are most of the
    work; alone, it still ranks."""
    out = [
        (term, max(math.log((docs - min(f, docs) + 0.5) / (min(f, docs) + 0.5)), IDF_FLOOR))
        for term, f in found
    ]
    if drop_floor:
        out = [w for w in out if w[1] > IDF_FLOOR] or out
    return out


def top_k(
    rows: Iterable[tuple[int, bytes, bytes, bytes]],
    terms: Sequence[tuple[int, float]],
    avg_len: float,
    limit: int,
    require_all: bool = False,
) -> list[tuple[int, float]]:
    """Okapi BM25 (k1 1.2, b 0.75) of every document in ``rows`` (term id,
    docs, tfs, lens) for the weighted ``terms``: the ``limit`` best, best
    first, ties by document id; with ``require_all``, only documents
    holding every term."""
    weight = dict(terms)
    # each term's blocks in document order, so its documents ascend
    rows = sorted(rows, key=lambda r: (r[0], int.from_bytes(r[1][:8], "little")))
    if not rows or limit <= 0:
        return []
    sizes = np.array([len(r[1]) // _DOC.itemsize for r in rows])
    docs = np.frombuffer(b"".join(r[1] for r in rows), _DOC)
    tf = np.frombuffer(b"".join(r[2] for r in rows), _TF).astype(np.float64)
    length = np.frombuffer(b"".join(r[3] for r in rows), _LEN).astype(np.float64)
    idf = np.repeat(np.array([weight[r[0]] for r in rows]), sizes)
    parts = idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg_len))
    # Each term's documents ascend, so a stable sort only merges those runs.
    order = np.argsort(docs, kind="stable")
    docs, parts = docs[order], parts[order]
    starts = np.flatnonzero(np.diff(docs, prepend=-1))
    docs, scores = docs[starts], np.add.reduceat(parts, starts)
    if require_all:
        held = np.diff(np.append(starts, len(order))) == len(weight)
        docs, scores = docs[held], scores[held]
    if len(docs) > limit:
        # every document scoring at least the limit-th, ties at the edge included
        edge = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        keep = scores >= edge
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((docs, -scores))[:limit]
    return [(int(docs[i]), float(scores[i])) for i in order]


def merge(blocks: Sequence[Block], add: Block) -> list[Block]:
    """The blocks ``add``'s documents go into (the term's blocks they fall
    in, in order) rewritten with them, split to ``BLOCK`` documents a row.
    A document already there keeps its new tf and length."""
    docs = np.concatenate([*(b.docs for b in blocks), add.docs])
    tfs = np.concatenate([*(b.tfs for b in blocks), add.tfs])
    lens = np.concatenate([*(b.lens for b in blocks), add.lens])
    # the last occurrence of a document wins: added after the stored ones
    order = np.argsort(docs, kind="stable")
    docs, tfs, lens = docs[order], tfs[order], lens[order]
    last = np.append(docs[1:] != docs[:-1], True)
    docs, tfs, lens = docs[last], tfs[last], lens[last]
    return [
        Block(int(docs[i]), docs[i : i + BLOCK], tfs[i : i + BLOCK], lens[i : i + BLOCK])
        for i in range(0, len(docs), BLOCK)
    ]


def place(
    added: dict[int, list[tuple[int, int, int]]], held: dict[int, list[Block]]
) -> list[tuple[int, Block]]:
    """The blocks to write for new postings: per term, its ``added``
    (document, tf, length) merged into the ``held`` blocks they fall in
    (each term's blocks by first document; every one of them is replaced)."""
    out: list[tuple[int, Block]] = []
    for term, new in added.items():
        add = Block(0, *(np.array([p[i] for p in new], dtype=np.int64) for i in range(3)))
        blocks = held.get(term, [])
        if not blocks:
            out += [(term, b) for b in merge([], add)]
            continue
        firsts = [b.first for b in blocks]
        target = np.array([part_of(firsts, int(d)) for d in add.docs])
        for i in sorted(set(target.tolist())):
            into = target == i
            one = Block(0, add.docs[into], add.tfs[into], add.lens[into])
            out += [(term, b) for b in merge([blocks[i]], one)]
        out += [(term, b) for i, b in enumerate(blocks) if i not in set(target.tolist())]
    return out


def without(block: Block, docs: Sequence[int]) -> Block | None:
    """``block`` with ``docs`` taken out (None when nothing is left)."""
    keep = ~np.isin(block.docs, np.asarray(docs, dtype=np.int64))
    if not keep.any():
        return None
    return Block(block.first, block.docs[keep], block.tfs[keep], block.lens[keep])


def part_of(firsts: Sequence[int], doc: int) -> int:
    """The index in ascending block keys ``firsts`` of the block ``doc``
    belongs in: the last starting at or before it, else the first."""
    lo, hi = 0, len(firsts)
    while lo < hi:
        mid = (lo + hi) // 2
        if firsts[mid] <= doc:
            lo = mid + 1
        else:
            hi = mid
    return max(lo - 1, 0)

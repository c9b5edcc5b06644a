"""Full-text postings in blocks, and BM25 over them, for every backend.

A term's postings (document, tf, document length) are kept in rows of up
to ``BLOCK`` documents, sorted by document id, as three packed arrays. A
query reads a few rows per word instead of one row per posting, and scores
them with NumPy: summing rows in SQL cost ~0.35 us a posting on SQLite and
~0.5 us on PostgreSQL, and a query's words held 5 % of a tenant's memories
on the perf corpus (~80,000 postings at a million); read as blocks and
summed in NumPy the same query costs a third of the rows' time or less, in
a fifth of the space (docs/benchmarks.md, issue #16 fourth round: BM25 at a
million memories in one tenant on PostgreSQL, 120 ms -> 8 ms p50).

Erasure is unchanged in kind: removing a document rewrites the blocks that
held it (SQLite's secure_delete zeroes the old cells; PostgreSQL's rewrite
after a forget drops the old row versions). Blocks hold term ids, never
words; the words' keyed digests stay in the lexicon alone.

Each backend keeps, per document, its length and the ids of its terms (to
find its blocks again), and does the SQL; the packing, the merging and the
scoring are here, so both rank alike.
"""

from __future__ import annotations

import bisect
import math
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from unrecall.storage.selection import kth_largest

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5's: an idf never below it
BLOCK = 128  # postings a row: 1.75 KB at most, under PostgreSQL's TOAST threshold

_DOC, _TF, _LEN = np.dtype("<i8"), np.dtype("<u2"), np.dtype("<u4")
_TF_MAX = int(np.iinfo(_TF).max)


def _pack(values: Sequence[int], code: str) -> bytes:
    """Little-endian fixed-width integers (``array`` is NumPy's equal here
    and costs a tenth as much on the few values one append adds)."""
    out = array(code, values)
    if sys.byteorder != "little":  # pragma: no cover - every platform we ship on is
        out.byteswap()
    return out.tobytes()


@dataclass(frozen=True)
class Block:
    """One row of a term's postings, packed: documents ascending (int64),
    their tfs (uint16) and lengths (uint32). ``first`` is the key the row is
    stored under (its smallest document when written)."""

    first: int
    docs: bytes
    tfs: bytes
    lens: bytes

    @classmethod
    def decode(cls, first: int, docs: bytes, tfs: bytes, lens: bytes) -> Block:
        """A stored row."""
        return cls(int(first), bytes(docs), bytes(tfs), bytes(lens))

    @classmethod
    def of(cls, docs: Sequence[int], tfs: Sequence[int], lens: Sequence[int]) -> Block:
        """A block of ascending documents, keyed by the first."""
        return cls(
            int(docs[0]),
            _pack(docs, "q"),
            _pack([min(int(t), _TF_MAX) for t in tfs], "H"),
            _pack(lens, "I"),
        )

    def encode(self) -> tuple[bytes, bytes, bytes]:
        """The row's three packed arrays."""
        return self.docs, self.tfs, self.lens

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Documents, tfs and lengths as int64 arrays."""
        return (
            np.frombuffer(self.docs, _DOC).astype(np.int64),
            np.frombuffer(self.tfs, _TF).astype(np.int64),
            np.frombuffer(self.lens, _LEN).astype(np.int64),
        )

    @property
    def size(self) -> int:
        """How many documents it holds."""
        return len(self.docs) // _DOC.itemsize

    @property
    def last(self) -> int:
        """Its last (largest) document."""
        return int.from_bytes(self.docs[-_DOC.itemsize :], "little", signed=True)


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
    docs, tfs, lens), which come ordered by term and then by first document
    (the stores' ``ORDER BY term, first``, which their indexes give without
    a sort), for the weighted ``terms``: the ``limit`` best, best first, ties
    by document id; with ``require_all``, only documents holding every term.
    The order makes each term's documents ascend and every backend sum a
    document's parts in the same order; sorted here, it held the GIL ~0.5 ms
    a search at 1M, beside the vector read on the other thread."""
    weight = dict(terms)
    rows = list(rows)
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
        edge = kth_largest(scores, limit)
        keep = scores >= edge
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((docs, -scores))[:limit]
    return [(int(docs[i]), float(scores[i])) for i in order]


def _chunks(docs: Sequence[int], tfs: Sequence[int], lens: Sequence[int]) -> list[Block]:
    """Ascending postings cut into blocks of ``BLOCK``."""
    return [
        Block.of(docs[i : i + BLOCK], tfs[i : i + BLOCK], lens[i : i + BLOCK])
        for i in range(0, len(docs), BLOCK)
    ]


def merge(
    blocks: Sequence[Block], docs: Sequence[int], tfs: Sequence[int], lens: Sequence[int]
) -> list[Block]:
    """``blocks`` (a term's, in order, the ones the new postings fall in)
    rewritten with the new (document, tf, length) postings, cut to ``BLOCK``
    documents a row. A document already there takes its new tf and length."""
    old = [b.arrays() for b in blocks]
    all_docs = np.concatenate([*(o[0] for o in old), np.asarray(docs, dtype=np.int64)])
    all_tfs = np.concatenate([*(o[1] for o in old), np.asarray(tfs, dtype=np.int64)])
    all_lens = np.concatenate([*(o[2] for o in old), np.asarray(lens, dtype=np.int64)])
    # the last occurrence of a document wins: the new come after the stored
    order = np.argsort(all_docs, kind="stable")
    all_docs, all_tfs, all_lens = all_docs[order], all_tfs[order], all_lens[order]
    last = np.append(all_docs[1:] != all_docs[:-1], True)
    return _chunks(all_docs[last].tolist(), all_tfs[last].tolist(), all_lens[last].tolist())


def place(
    added: dict[int, list[tuple[int, int, int]]], held: dict[int, list[Block]]
) -> list[tuple[int, Block]]:
    """The blocks to write for new postings: per term, its ``added``
    (document, tf, length) merged into the ``held`` blocks they fall in
    (each term's blocks by first document; every one of them is replaced)."""
    out: list[tuple[int, Block]] = []
    for term, new in added.items():
        new = sorted(new)
        docs, tfs, lens = ([p[i] for p in new] for i in range(3))
        blocks = held.get(term, [])
        if not blocks:
            out += [(term, b) for b in _chunks(docs, tfs, lens)]
        elif docs[0] > blocks[-1].last and len(set(docs)) == len(docs):
            # appended after everything held (ingest): bytes joined, no sort
            *keep, tail = blocks
            out += [(term, b) for b in keep]
            room = BLOCK - tail.size
            joined = Block(
                tail.first,
                tail.docs + _pack(docs[:room], "q"),
                tail.tfs + _pack([min(t, _TF_MAX) for t in tfs[:room]], "H"),
                tail.lens + _pack(lens[:room], "I"),
            )
            out += [(term, b) for b in [joined, *_chunks(docs[room:], tfs[room:], lens[room:])]]
        else:
            firsts = [b.first for b in blocks]
            target = [part_of(firsts, d) for d in docs]
            for i, block in enumerate(blocks):
                into = [j for j, t in enumerate(target) if t == i]
                if not into:
                    out.append((term, block))
                    continue
                pick = [docs[j] for j in into], [tfs[j] for j in into], [lens[j] for j in into]
                out += [(term, b) for b in merge([block], *pick)]
    return out


def without(block: Block, docs: Sequence[int]) -> Block | None:
    """``block`` with ``docs`` taken out (None when nothing is left); its
    key stays."""
    have, tfs, lens = block.arrays()
    keep = ~np.isin(have, np.asarray(docs, dtype=np.int64))
    if not keep.any():
        return None
    return Block(
        block.first,
        have[keep].astype(_DOC).tobytes(),
        tfs[keep].astype(_TF).tobytes(),
        lens[keep].astype(_LEN).tobytes(),
    )


def blocks_of_rows(rows: Iterable[Sequence[int]]) -> Iterator[tuple[int, Block]]:
    """(term, document, tf, length) rows sorted by term, then document (a
    table of schema v5, a row per posting), as each term's blocks."""
    term: int | None = None
    docs: list[int] = []
    tfs: list[int] = []
    lens: list[int] = []
    for t, d, tf, length in rows:
        if t != term or len(docs) == BLOCK:
            if docs:
                assert term is not None
                yield term, Block.of(docs, tfs, lens)
            term, docs, tfs, lens = t, [], [], []
        docs.append(d)
        tfs.append(tf)
        lens.append(length)
    if docs:
        assert term is not None
        yield term, Block.of(docs, tfs, lens)


def part_of(firsts: Sequence[int], doc: int) -> int:
    """The index in ascending block keys ``firsts`` of the block ``doc``
    belongs in: the last starting at or before it, else the first."""
    return max(bisect.bisect_right(firsts, doc) - 1, 0)

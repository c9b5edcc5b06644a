"""The embedded store's vector index: each tenant's vectors in lists (IVF).

A tenant's vectors are grouped in lists of similar vectors, each with a
centroid (the mean of its members). A search reads the lists whose
centroids are nearest the query, or every list of a small tenant, and
ranks their rows exactly: an int8 pass with a proven error bound, then a
float32 rescore of the rows that can still reach the top (``Int8Scan``).

Why lists, and why in the store's own b-trees (issue #17): a forgotten
memory's vector must leave the index file, not be marked deleted.
usearch keeps a removed vector's bytes in the file it saves, and faiss's
HNSW cannot remove at all (``bench/ann_libraries.py``). A list
is rows of a plain table, rewritten without the vector when it goes, so
``secure_delete`` zeroes it at commit like any other row, and the
forensic scan and the attacker check it with the rest of the file.

Lists grow by splitting: one that passes ``SPLIT_AT`` members is cut in
two by 2-means over its own members (SPFresh's local rebalancing), so no
write ever rebuilds more than one list. A centroid is derived from the
list's current members only: it is recomputed from them whenever a member
leaves, so no centroid keeps a trace of a forgotten vector.

In a tenant large enough to be probed, each vector is also written to a
second list, chosen by SOAR (Sun et al., "SOAR: improved indexing for
approximate nearest neighbor search", NeurIPS 2023): the list whose
centroid is near the vector *and* leaves a residual unlike the one its
own list leaves. A query misses a vector when it lies along that residual,
away from the vector's centroid; the second list covers that direction.
On the 1.55M-vector perf tenant with lists made as ``add`` makes them,
recall@10 at 32 lists probed went from 0.972 to 0.9945, with about as many
rows read (docs/benchmarks.md, issue #17). A tenant read whole spills
nothing: its search is exact already.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

CHUNK = 64  # vectors per stored chunk row (24 KB of codes at 384 dimensions)
SPLIT_AT = 512  # a list with more members than this is split in two
# Lists a search of a large tenant reads: on 1.55M MiniLM vectors of the
# perf corpus, lists made as ``add`` makes them, with second lists, recall@10
# against an exact scan is 0.9825 at 16, 0.99 at 24 and 0.9945 at 32, and
# the search reads ~0.5-1 us a row (bench/vector_lists.py, docs/benchmarks.md,
# issue #17). 32 keeps a margin for a tenant that grows past that.
PROBE = 32
# A tenant of up to this many list entries (its vectors, and their second
# lists once it has them) is read whole, so its search is exact: about what
# PROBE lists hold (9,767 rows at the p50 at 1M), so reading a whole tenant
# of this size costs what a probe does.
EXACT_UP_TO = 10_000
# SOAR's lambda: how much a second list's residual along the first one's
# counts against it (1.0 is the paper's choice, and measured best of 0, 1
# and 2 here).
SPILL_WEIGHT = 1.0


def quantise(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows as uint8 (int8 + 128) and, per row, ``scale``, ``|scale*q|``
    and ``|residual|`` (shape ``(3, n)``). float32 throughout: its rounding
    (~1e-7 on unit vectors) is far inside ``Int8Scan.SLACK``."""
    v = np.asarray(vecs, dtype=np.float32)
    peak = np.abs(v).max(axis=1)
    scale = np.where(peak > 0, peak / np.float32(127.0), np.float32(1.0)).astype(np.float32)
    q = np.clip(np.rint(v / scale[:, None]), -127, 127)
    approx = q * scale[:, None]
    meta = np.stack(
        [scale, np.linalg.norm(approx, axis=1), np.linalg.norm(v - approx, axis=1)]
    ).astype(np.float32)
    return (q + 128).astype(np.uint8), meta


@dataclass
class Rows:
    """Quantised vectors with their memory ids: a chunk, a list or a probe."""

    ids: np.ndarray  # int64, (n,)
    codes: np.ndarray  # uint8, (n, dim)
    meta: np.ndarray  # float32, (3, n)

    @classmethod
    def empty(cls, dim: int) -> Rows:
        return cls(
            np.zeros(0, np.int64), np.zeros((0, dim), np.uint8), np.zeros((3, 0), np.float32)
        )

    @classmethod
    def of(cls, ids: np.ndarray, vecs: np.ndarray) -> Rows:
        codes, meta = quantise(vecs)
        return cls(np.asarray(ids, dtype=np.int64), codes, meta)

    @classmethod
    def stored(cls, dim: int, chunks: Sequence[tuple[bytes, bytes, bytes]]) -> Rows:
        """Chunk rows as stored (``encode``), in order, as one: joined as
        bytes, so the work per chunk stays small. A search reads ~170
        chunks, and a Python step per chunk held the GIL often enough to
        stall the BM25 thread beside it: hybrid p50 at a million memories
        in one tenant went from 19.9 to 13.4 ms without it
        (docs/benchmarks.md, issue #17)."""
        if not chunks:
            return cls.empty(dim)
        return cls(
            np.frombuffer(b"".join(c[0] for c in chunks), dtype=np.int64),
            np.frombuffer(b"".join(c[1] for c in chunks), dtype=np.uint8).reshape(-1, dim),
            np.concatenate(
                [np.frombuffer(c[2], dtype=np.float32).reshape(3, -1) for c in chunks], axis=1
            ),
        )

    @classmethod
    def concat(cls, dim: int, parts: list[Rows]) -> Rows:
        if not parts:
            return cls.empty(dim)
        return cls(
            np.concatenate([p.ids for p in parts]),
            np.concatenate([p.codes for p in parts]),
            np.concatenate([p.meta for p in parts], axis=1),
        )

    def encode(self) -> tuple[bytes, bytes, bytes]:
        return self.ids.tobytes(), self.codes.tobytes(), np.ascontiguousarray(self.meta).tobytes()

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray | slice) -> Rows:
        return Rows(self.ids[rows], self.codes[rows], self.meta[:, rows])

    def approx(self) -> np.ndarray:
        """The vectors as the codes give them back (float32)."""
        return (self.codes.astype(np.float32) - 128.0) * self.meta[0][:, None]


def mean(rows: Rows) -> np.ndarray:
    """A list's centroid: the mean of its members (as their codes give them)."""
    return rows.approx().mean(axis=0, dtype=np.float64).astype(np.float32)


def halves(rows: Rows, iters: int = 8) -> np.ndarray:
    """A boolean mask cutting ``rows`` in two by spherical 2-means, seeded
    deterministically; members that are all alike are cut by position."""
    vecs = rows.approx()
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms > 0, norms, 1.0)
    # seeds: the member farthest from the mean, and the one farthest from it
    centre = vecs.mean(axis=0)
    a = vecs[int(np.argmin(products(vecs, centre)))]
    b = vecs[int(np.argmin(products(vecs, a)))]
    seeds = np.stack([a, b])
    side = np.zeros(len(vecs), dtype=bool)
    for _ in range(iters):
        sims = products(vecs, seeds.T)
        side = sims[:, 1] > sims[:, 0]
        if side.all() or not side.any():
            break
        for j, part in enumerate((vecs[~side], vecs[side])):
            s = part.sum(axis=0)
            seeds[j] = s / max(float(np.linalg.norm(s)), 1e-12)
    if side.all() or not side.any():
        side = np.arange(len(vecs)) >= len(vecs) // 2
    return side


class Int8Scan:
    """Exact top-k through an int8 first pass.

    With a row ``v = s*q + r`` and the query ``x = t*p + t2*p2 + e`` (``q``,
    ``p`` and ``p2`` int8: ``p2`` quantises what ``p`` leaves),
    ``v.x = s*(t*(q.p) + t2*(q.p2)) + s*q.e + r.x``, so by Cauchy-Schwarz
    the int8 estimate ``s*(t*(q.p) + t2*(q.p2))`` is within
    ``err = |s*q|*|e| + |r|*|x|`` of the true product. At least ``limit``
    rows have a true product of at least ``kth``, the ``limit``-th largest
    ``estimate - err``, so a row of the true top ``limit`` has
    ``estimate + err >= kth``: those rows are rescored in float32. The
    bound carries a small slack for float32 rounding.
    """

    SLACK = np.float32(1e-4)

    def __init__(self, session: Any) -> None:
        self._session = session

    def candidates(
        self, rows: Rows, query: np.ndarray, limit: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Positions in ``rows`` that may be in the true top ``limit``, and
        the bound on each one's true product, highest bound first: a
        rescore may stop at the first bound below its ``limit``-th true
        product."""
        if len(rows) <= limit:
            return np.arange(len(rows)), np.full(len(rows), np.inf, dtype=np.float32)
        # The query as two int8 columns, the second its first's residual
        # at a finer scale: what is left (|e|) is ~250 times smaller than
        # after one column, so the query's share of the bound all but
        # vanishes. At a million memories the rows to rescore went from 232
        # to 147 at the p50 (docs/benchmarks.md, issue #17, tenth round).
        x = query.astype(np.float64)
        cols, scales = [], []
        rest = x
        for _ in range(2):
            peak = float(np.abs(rest).max())
            t = peak / 127.0 if peak > 0 else 1.0
            p = np.clip(np.rint(rest / t), -127, 127)
            cols.append(p)
            scales.append(t)
            rest = rest - p * t
        e_norm = float(np.linalg.norm(rest))
        x_norm = float(np.linalg.norm(x))
        dots = self._session.run(
            None,
            {
                "A": rows.codes,
                "B": np.stack(cols, axis=1).astype(np.int8),
                "Z": np.array(128, np.uint8),
            },
        )[0]
        # float32 is exact enough: |q.p| < 2**24, rounding stays << SLACK
        est = (
            dots[:, 0].astype(np.float32) * np.float32(scales[0])
            + dots[:, 1].astype(np.float32) * np.float32(scales[1])
        ) * rows.meta[0]
        err = rows.meta[1] * np.float32(e_norm) + rows.meta[2] * np.float32(x_norm) + self.SLACK
        low = est - err
        kth = np.partition(low, len(low) - limit)[len(low) - limit]
        high = est + err
        kept = np.flatnonzero(high >= kth)
        kept = kept[np.argsort(-high[kept], kind="stable")]
        return kept, high[kept]


def _one_node(op: str, inputs: list[tuple[str, int, list[Any]]], out: int) -> Any:
    """An onnxruntime session of the one node ``op`` (inputs ``A``, ``B``
    ..., output ``Y`` of rank 2), on the calling thread alone."""
    import onnxruntime as ort
    from onnx import helper

    graph = helper.make_graph(
        [helper.make_node(op, [name for name, _, _ in inputs], ["Y"])],
        op,
        [helper.make_tensor_value_info(name, kind, shape) for name, kind, shape in inputs],
        [helper.make_tensor_value_info("Y", out, ["n", None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


@cache
def int8_scan() -> Int8Scan:
    """The one-node onnxruntime graph ``MatMulInteger(A - 128, B)``, ``B``
    the query's two int8 columns."""
    from onnx import TensorProto

    return Int8Scan(
        _one_node(
            "MatMulInteger",
            [
                ("A", TensorProto.UINT8, ["n", None]),
                ("B", TensorProto.INT8, [None, 2]),
                ("Z", TensorProto.UINT8, []),
            ],
            TensorProto.INT32,
        )
    )


@cache
def _matmul() -> Any:
    from onnx import TensorProto

    return _one_node(
        "MatMul",
        [("A", TensorProto.FLOAT, ["n", None]), ("B", TensorProto.FLOAT, [None, None])],
        TensorProto.FLOAT,
    )


def products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in float32 (``a`` of rank 2, ``b`` of rank 1 or 2), on the
    calling thread alone. NumPy's BLAS would run a product this size on
    both cores and then keep its worker spinning, which on a 2-core machine
    stalls the BM25 read running beside the vector read: hybrid p50 at a
    million memories in one tenant went from 25.2 to 19.9 ms without it
    (docs/benchmarks.md, issue #17). A strided operand is copied first:
    put a large matrix first, as it is stored."""
    rows = np.ascontiguousarray(a, dtype=np.float32)
    cols = np.ascontiguousarray(b.reshape(len(b), -1), dtype=np.float32)
    if len(rows) == 0 or cols.shape[1] == 0:
        out = np.zeros((len(rows), cols.shape[1]), dtype=np.float32)
    else:
        out = _matmul().run(None, {"A": rows, "B": cols})[0]
    return out[:, 0] if b.ndim == 1 else out


@dataclass
class Centroids:
    """A tenant's list ids and unit centroids, as of one tenant version."""

    version: int
    lists: np.ndarray  # int64, (n,)
    units: np.ndarray  # float32, (n, dim)
    sizes: np.ndarray  # int64, (n,): members of each list

    @classmethod
    def of(cls, version: int, dim: int, rows: list[tuple[int, int, bytes]]) -> Centroids:
        """From ``(list, size, centroid)`` rows."""
        lists = np.array([r[0] for r in rows], dtype=np.int64)
        mat = (
            np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
            if rows
            else np.zeros((0, dim), np.float32)
        )
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        units = mat / np.where(norms > 0, norms, 1.0)
        sizes = np.array([r[1] for r in rows], dtype=np.int64)
        return cls(version, lists, units.astype(np.float32), sizes)

    @property
    def whole(self) -> bool:
        """A search reads every list: the tenant is small, so the search is
        exact and no vector needs a second list."""
        return bool(self.sizes.sum() <= EXACT_UP_TO or len(self.lists) <= PROBE)

    def place(self, vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The list id each of ``vecs`` joins (the nearest centroid's) and,
        unless the tenant is read whole, the second list it is spilled to
        (SOAR): the one minimising ``|x - c|^2 + SPILL_WEIGHT * <r, x - c>^2``,
        ``r`` the unit residual ``x - c1`` of the first."""
        x = np.asarray(vecs, dtype=np.float32)
        whole = self.whole
        first, second = [], []
        # a block at a time: an upgrade places 10,000 vectors at once, and
        # three (lists, vectors) matrices of that are over a GB at 1M
        for at in range(0, len(x), 1024):
            block = x[at : at + 1024]
            # units by vectors, not vectors by units.T: a transposed operand
            # is copied whole first (6 MB of centroids at 1M, 3.5 ms an add)
            sims = products(self.units, np.ascontiguousarray(block.T))  # (lists, n)
            near = np.argmax(sims, axis=0)
            first.append(near)
            if whole:
                continue
            resid = block - self.units[near]
            resid /= np.maximum(np.linalg.norm(resid, axis=1, keepdims=True), 1e-12)
            along = products(self.units, np.ascontiguousarray(resid.T))  # <r, c>
            # |x - c|^2 = |x|^2 - 2 x.c + 1 for a unit c, and |x| is the same for every c
            loss = -2.0 * sims + SPILL_WEIGHT * (np.sum(resid * block, axis=1) - along) ** 2
            loss[near, np.arange(len(block))] = np.inf
            second.append(np.argmin(loss, axis=0))
        if not first:
            return self.lists[:0], None
        return self.lists[np.concatenate(first)], (
            None if whole else self.lists[np.concatenate(second)]
        )

    def probe(self, query: np.ndarray) -> np.ndarray:
        """The lists a search reads: all of a small tenant's, else the
        ``PROBE`` nearest the query."""
        if self.whole:
            return self.lists
        sims = products(self.units, np.asarray(query))
        return self.lists[np.argpartition(-sims, PROBE - 1)[:PROBE]]

"""In-process vector matrix per tenant, loaded from the store's vector rows.

sqlite-vec's vec0 (the store's vector table before schema v3) scans 100k
384-d vectors in ~55 ms on this class of machine; one BLAS matrix-vector
product over the same rows takes ~16 ms,
bound by reading 1.5 KB per row. Large tenants are therefore scanned
first through an int8 copy of the matrix (a quarter of the bytes, run by
onnxruntime's int8 kernel) with a proven bound on each row's error, and
only the rows that can still reach the top ``limit`` are rescored in
float32: the result is the exact top ``limit`` (see ``_Int8Scan``).
The ``memory_vectors`` table stays the persistent copy (and is what erasure
is proven against); this cache is loaded from it on demand and kept in step
with each commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

import numpy as np

# Below this many rows the float32 product is cheap and the int8 pass
# would not pay for its own call.
INT8_MIN_ROWS = 4096


class TenantVectors:
    """A growable float32 matrix with O(1) add and swap-remove by id,
    plus its int8 shadow (per-row scale and error bound)."""

    def __init__(self, dim: int, rows: Iterable[tuple[int, np.ndarray]] = ()) -> None:
        self.dim = dim
        self._mat = np.zeros((64, dim), dtype=np.float32)
        self._ids = np.zeros(64, dtype=np.int64)
        # int8 copy stored as uint8 with an offset of 128 (onnxruntime's
        # u8 x s8 kernel is the fast one); per row: scale, the norm of the
        # quantised row and the norm of its quantisation residual.
        self._q = np.zeros((64, dim), dtype=np.uint8)
        self._qmeta = np.zeros((3, 64), dtype=np.float32)
        self._pos: dict[int, int] = {}
        self._bulk(rows)

    @classmethod
    def from_arrays(cls, dim: int, ids: np.ndarray, mat: np.ndarray) -> TenantVectors:
        """A cache over ``mat`` (one row per id in ``ids``, ids distinct)."""
        out = cls(dim)
        out._fill([int(i) for i in ids], mat)
        return out

    def _bulk(self, rows: Iterable[tuple[int, np.ndarray]]) -> None:
        """Fill an empty cache at once (the first query after opening)."""
        by_id: dict[int, np.ndarray] = {}
        for mid, vec in rows:
            by_id[mid] = vec  # a repeated id keeps its last vector, as add() does
        if by_id:
            self._fill(list(by_id), np.stack(list(by_id.values())))

    def _fill(self, ids: list[int], mat: np.ndarray) -> None:
        n = len(ids)
        if n == 0:
            return
        size = max(64, 1 << (n - 1).bit_length())
        self._mat = np.zeros((size, self.dim), dtype=np.float32)
        self._mat[:n] = mat
        self._ids = np.zeros(size, dtype=np.int64)
        self._ids[:n] = ids
        self._q = np.zeros((size, self.dim), dtype=np.uint8)
        self._qmeta = np.zeros((3, size), dtype=np.float32)
        for start in range(0, n, 8192):  # bounded float64 temporaries
            stop = min(n, start + 8192)
            self._q[start:stop], self._qmeta[:, start:stop] = _quantise(self._mat[start:stop])
        self._pos = {mid: i for i, mid in enumerate(ids)}

    def __len__(self) -> int:
        return len(self._pos)

    def add(self, mid: int, vec: np.ndarray) -> None:
        """Insert or replace the vector of memory ``mid``."""
        row = self._pos.get(mid)
        if row is None:
            row = len(self._pos)
            if row == len(self._ids):
                self._grow()
            self._ids[row] = mid
            self._pos[mid] = row
        self._mat[row] = vec
        q, meta = _quantise(self._mat[row : row + 1])
        self._q[row], self._qmeta[:, row] = q[0], meta[:, 0]

    def get(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Copies of the vectors of those ``ids`` held here, by id."""
        return {mid: self._mat[self._pos[mid]].copy() for mid in ids if mid in self._pos}

    def _grow(self) -> None:
        self._mat = np.concatenate([self._mat, np.zeros_like(self._mat)])
        self._ids = np.concatenate([self._ids, np.zeros_like(self._ids)])
        self._q = np.concatenate([self._q, np.zeros_like(self._q)])
        self._qmeta = np.concatenate([self._qmeta, np.zeros_like(self._qmeta)], axis=1)

    def remove(self, mid: int) -> None:
        """Drop memory ``mid`` by moving the last row into its slot."""
        row = self._pos.pop(mid, None)
        if row is None:
            return
        last = len(self._pos)
        if row != last:
            moved = int(self._ids[last])
            self._mat[row] = self._mat[last]
            self._q[row] = self._q[last]
            self._qmeta[:, row] = self._qmeta[:, last]
            self._ids[row] = moved
            self._pos[moved] = row
        # leave no copy of a removed vector behind, in either form
        self._mat[last] = 0.0
        self._q[last] = 0
        self._qmeta[:, last] = 0.0

    def search(self, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """Top ``limit`` ``(id, cosine similarity)`` pairs, best first."""
        n = len(self._pos)
        if n == 0 or limit <= 0:
            return []
        query = np.ascontiguousarray(query, dtype=np.float32)
        scan = _int8_scan() if n >= INT8_MIN_ROWS and limit < n // 4 else None
        if scan is None:
            rows = np.arange(n)
            sims = self._mat[:n] @ query
        else:
            rows = scan.candidates(self._q[:n], self._qmeta[:, :n], query, limit)
            sims = self._mat[rows] @ query
        top = (
            np.argpartition(-sims, limit - 1)[:limit] if limit < len(rows) else np.arange(len(rows))
        )
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(self._ids[rows[i]]), float(sims[i])) for i in top]


def _quantise(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows as uint8 (int8 + 128) and, per row, ``scale``, ``|scale*q|``
    and ``|residual|`` (shape ``(3, n)``). float32 throughout: its rounding
    (~1e-7 on unit vectors) is far inside ``_Int8Scan.SLACK``."""
    v = np.asarray(vecs, dtype=np.float32)
    peak = np.abs(v).max(axis=1)
    scale = np.where(peak > 0, peak / np.float32(127.0), np.float32(1.0)).astype(np.float32)
    q = np.clip(np.rint(v / scale[:, None]), -127, 127)
    approx = q * scale[:, None]
    meta = np.stack(
        [scale, np.linalg.norm(approx, axis=1), np.linalg.norm(v - approx, axis=1)]
    ).astype(np.float32)
    return (q + 128).astype(np.uint8), meta


class _Int8Scan:
    """Exact top-k through an int8 first pass.

    With a row ``v = s*q + r`` and the query ``x = t*p + e`` (``q`` and ``p``
    int8), ``v.x = s*t*(q.p) + s*q.e + r.x``, so by Cauchy-Schwarz the
    int8 estimate ``s*t*(q.p)`` is within ``|s*q|*|e| + |r|*|x|`` of the
    true product; ``err``, the largest of these over the rows, bounds every
    row. At least ``limit`` rows have a true product of at least
    ``kth - err`` (``kth`` the ``limit``-th largest estimate), so every
    row of the true top ``limit`` has an estimate of at least
    ``kth - 2 * err``: those rows are rescored in float32. The bound
    carries a small slack for float32 rounding.
    """

    SLACK = np.float32(1e-4)

    def __init__(self, session: Any) -> None:
        self._session = session

    def candidates(
        self, q: np.ndarray, meta: np.ndarray, query: np.ndarray, limit: int
    ) -> np.ndarray:
        x = query.astype(np.float64)
        peak = float(np.abs(x).max())
        t = peak / 127.0 if peak > 0 else 1.0
        p = np.clip(np.rint(x / t), -127, 127)
        e_norm = float(np.linalg.norm(x - p * t))
        x_norm = float(np.linalg.norm(x))
        dots = self._session.run(
            None, {"A": q, "B": p.astype(np.int8).reshape(-1, 1), "Z": np.array(128, np.uint8)}
        )[0][:, 0]
        # float32 is exact enough: |q.p| < 2**24, rounding stays << SLACK
        est = dots.astype(np.float32) * (meta[0] * np.float32(t))
        # One bound for every row (the largest), which saves two passes
        # over the tenant and admits a few more rows to the rescoring.
        err = float(meta[1].max()) * e_norm + float(meta[2].max()) * x_norm + float(self.SLACK)
        kth = float(np.partition(est, len(est) - limit)[len(est) - limit])
        return np.flatnonzero(est >= np.float32(kth - 2 * err))


@cache
def _int8_scan() -> _Int8Scan | None:
    """The one-node onnxruntime graph ``MatMulInteger(A - 128, B)``, or None
    (then the float32 product is used) if onnx or onnxruntime is missing."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:  # pragma: no cover - both are dependencies
        return None
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B", "Z"], ["Y"])],
        "int8_scan",
        [
            helper.make_tensor_value_info("A", TensorProto.UINT8, ["n", None]),
            helper.make_tensor_value_info("B", TensorProto.INT8, [None, 1]),
            helper.make_tensor_value_info("Z", TensorProto.UINT8, []),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, ["n", 1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
    )
    return _Int8Scan(session)

"""ANN libraries for the embedded store (issue #17), measured on real
vectors of a store: the first ``--n`` vectors of its largest tenant.

For each library, an HNSW index over those vectors: build time, file size,
time to open the saved file (memory-mapped where the library can), and, for
each search breadth of ``--efs``, query p50 / p95 for the top 10 of 200 perf
queries embedded by MiniLM and recall@10 against the exact top 10 (a hit
counts when it reaches the exact 10th's similarity, since templated corpora
tie). Then erasure: whether a vector removed through the library's own
call is gone from the file the library saves afterwards. Neither library
is a dependency of unrecall; install them to run this::

    pip install usearch==2.26.6 faiss-cpu==1.15.1
    python bench/ann_libraries.py --store STORE.db --n 200000 --out FILE.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import numpy as np


def vectors(store: Path, n: int) -> np.ndarray:
    """The first ``n`` vectors of the store's largest tenant, float32 rows."""
    db = apsw.Connection(str(store), flags=apsw.SQLITE_OPEN_READONLY)
    (tenant,) = db.execute(
        "SELECT tenant_id FROM memory_vectors GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()
    blobs = [
        b
        for (b,) in db.execute(
            "SELECT embedding FROM memory_vectors WHERE tenant_id = ? ORDER BY id LIMIT ?",
            (tenant, n),
        )
    ]
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


def measure(
    build: Callable[[np.ndarray, Path], None],
    load: Callable[[Path, int], Any],
    search: Callable[[Any, np.ndarray], np.ndarray],
    efs: list[int],
    data: np.ndarray,
    queries: np.ndarray,
    floors: np.ndarray,
    folder: Path,
) -> dict[str, Any]:
    """Build and save one library's index, then reopen it and query it at
    each search breadth."""
    path = folder / "index"
    t0 = time.perf_counter()
    build(data, path)
    built = time.perf_counter() - t0
    out: dict[str, Any] = {
        "build_s": round(built, 1),
        "file_mb": round(path.stat().st_size / 1e6, 1),
    }
    for ef in efs:
        t0 = time.perf_counter()
        index = load(path, ef)
        opened = time.perf_counter() - t0
        times, recall = [], []
        for q, floor in zip(queries, floors, strict=True):
            t0 = time.perf_counter()
            ids = search(index, q)
            times.append((time.perf_counter() - t0) * 1000)
            sims = data[ids[ids >= 0]] @ q
            recall.append(min(1.0, float((sims >= floor - 1e-6).sum()) / 10))
        times.sort()
        out[f"ef {ef}"] = {
            "open_s": round(opened, 3),
            "query_p50_ms": round(statistics.median(times), 3),
            "query_p95_ms": round(times[int(0.95 * (len(times) - 1))], 3),
            "recall_at_10": round(sum(recall) / len(recall), 4),
            "recall_at_10_worst": min(recall),
        }
        del index
    return out


def erasure(data: np.ndarray, folder: Path) -> dict[str, Any]:
    """Save an index of 5,000 vectors, remove one through the library's
    call, save again: are the removed vector's stored bytes still in the
    file? (usearch stores f32 rows as given and i8 rows as
    ``trunc(127 * v / |v|)``; faiss stores floats.)"""
    import faiss
    from usearch.index import Index

    data = np.ascontiguousarray(data[:5000])
    victim = 1234
    vec = data[victim]
    forms = {
        "f32": vec.tobytes(),
        "i8": np.clip(np.trunc(vec / np.linalg.norm(vec) * 127), -127, 127)
        .astype(np.int8)
        .tobytes(),
    }
    out: dict[str, Any] = {}
    for dtype in ("f32", "i8"):
        index = Index(ndim=data.shape[1], metric="cos", dtype=dtype)
        index.add(np.arange(len(data)), data)
        path = folder / f"usearch-{dtype}"
        index.save(str(path))
        before = forms[dtype] in path.read_bytes()
        index.remove(victim, compact=True)
        index.save(str(path))
        out[f"usearch {dtype}: remove(compact=True), save"] = {
            "found_before": before,
            "found_after": forms[dtype] in path.read_bytes(),
            "searchable_after": bool(index.contains(victim)),
        }
    quantizer = faiss.IndexFlatIP(data.shape[1])
    ivf = faiss.IndexIVFFlat(quantizer, data.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
    ivf.train(data)
    ivf.add(data)
    path = folder / "faiss-ivf"
    faiss.write_index(ivf, str(path))
    before = forms["f32"] in path.read_bytes()
    ivf.remove_ids(np.array([victim], dtype=np.int64))
    faiss.write_index(ivf, str(path))
    out["faiss IndexIVFFlat: remove_ids, write_index (a new file)"] = {
        "found_before": before,
        "found_after": forms["f32"] in path.read_bytes(),
    }
    hnsw = faiss.IndexHNSWFlat(data.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
    hnsw.add(data)
    try:
        hnsw.remove_ids(np.array([victim], dtype=np.int64))
        removable = True
    except RuntimeError:
        removable = False
    out["faiss IndexHNSWFlat: remove_ids"] = {"supported": removable}
    return out


def main() -> None:
    """Measure both libraries and write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--efs", default="64,128,256", help="search breadths to measure")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    import faiss
    import perf
    import usearch
    from usearch.index import Index

    from unrecall.recall.embedder import make_embedder

    data = np.ascontiguousarray(vectors(args.store, args.n))
    queries = np.asarray(
        make_embedder("minilm").embed(perf.make_queries(200, 20_240_601 + 10)), dtype=np.float32
    )
    exact = queries @ data.T
    floors = -np.sort(-exact, axis=1)[:, 9]  # the exact 10th similarity of each query
    dim = data.shape[1]
    faiss.omp_set_num_threads(1)  # one query at a time, as a search runs

    def usearch_build(d: np.ndarray, path: Path, dtype: str) -> None:
        index = Index(ndim=dim, metric="ip", dtype=dtype, connectivity=16, expansion_add=64)
        index.add(np.arange(len(d)), d, threads=2)
        index.save(str(path))

    def faiss_build(d: np.ndarray, path: Path) -> None:
        index = faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 64
        faiss.omp_set_num_threads(2)
        index.add(d)
        faiss.omp_set_num_threads(1)
        faiss.write_index(index, str(path))

    def faiss_load(path: Path, ef: int) -> Any:
        index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP)
        index.hnsw.efSearch = ef
        return index

    def usearch_load(path: Path, ef: int) -> Any:
        index = Index.restore(str(path), view=True)
        index.expansion_search = ef
        return index

    efs = [int(x) for x in args.efs.split(",")]
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in ("f32", "i8"):
            results[f"usearch {usearch.__version__} ({dtype}, M 16, ef_add 64)"] = measure(
                lambda d, path, dtype=dtype: usearch_build(d, path, dtype),
                usearch_load,
                lambda index, q: index.search(q, 10, exact=False).keys.astype(np.int64),
                efs,
                data,
                queries,
                floors,
                Path(tmp),
            )
            print(json.dumps(results), flush=True)
        results[f"faiss-cpu {faiss.__version__} (IndexHNSWFlat, M 16, ef_add 64)"] = measure(
            faiss_build,
            faiss_load,
            lambda index, q: index.search(q[None, :], 10)[1][0],
            efs,
            data,
            queries,
            floors,
            Path(tmp),
        )
        erased = erasure(data, Path(tmp))
    report = {
        "command": "python bench/ann_libraries.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "vectors": len(data),
        "distinct_vectors": len(np.unique(data, axis=0)),
        "results": results,
        "erasure": erased,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

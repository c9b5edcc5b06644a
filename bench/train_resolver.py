"""Train the resolve stage's model and measure it; one command.

    python bench/train_resolver.py            # gather, cross-validate, train, write
    python bench/train_resolver.py --report   # measure the packaged model only

Data (all in the repository): the annotated unlearning suites of
development (``src/unrecall/bench/data/unlearning_*.json`` and
``bench/devsets/unlearning_fresh_a.json``). Each dialogue is replayed into
a fresh store with every turn stored (no request executed); at the first
user turn of each forget request, every active memory is a candidate, with
the signals of ``unrecall.pipeline.resolve.signals``; its label is whether
it holds one of the request's forbidden strings (targets and echoes).
Held out of training and of every choice made here:
``bench/heldout/unlearning_fresh_b.json``.

The regularisation strength and the threshold are chosen leave-one-suite-
out, so they are picked for an author the model has not seen. Reported per
held-out suite: memory-level precision and recall, and the share of requests
whose every target memory is found ("complete") and found with no
look-alike taken ("exact"), and the mean Jaccard overlap of what is taken
with what should be (the choice is made on it). Needs the ``tune`` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from unrecall.bench.peers import shared_minilm
from unrecall.bench.unlearning import load_suite
from unrecall.memory import Memory
from unrecall.pipeline.read import read
from unrecall.pipeline.resolve import FEATURES, Resolver, candidates, load

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src/unrecall/bench/data"
SUITES = {
    "suite": DATA / "unlearning_suite.json",
    "dev2": DATA / "unlearning_dev2.json",
    "dev3": DATA / "unlearning_dev3.json",
    "dev4": DATA / "unlearning_dev4.json",
    "heldout-old": DATA / "unlearning_heldout.json",
    "fresh-a": ROOT / "bench/devsets/unlearning_fresh_a.json",
}
HELDOUT = {"fresh-b": ROOT / "bench/heldout/unlearning_fresh_b.json"}
ASSET = ROOT / "src/unrecall/pipeline/assets/resolver.npz"
USER = "resolver-user"


def gather(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """(signals, labels) of every request of one suite."""
    suite = load_suite(path)
    out = []
    with tempfile.TemporaryDirectory(prefix="unrecall-resolver-") as tmp:
        for n, d in enumerate(suite.dialogues):
            with Memory(Path(tmp) / f"{n}.db", embedder=shared_minilm()) as mem:
                seen: set[str] = set()
                requests = {r.id: r for r in d.requests}
                for t in d.turns:
                    if t.role == "user" and t.request and t.request not in seen:
                        seen.add(t.request)
                        tenant = mem._existing(USER, None, None)
                        kind = read(t.text).kind  # what the reader takes it for, as at run time
                        rows, x = candidates(
                            mem.storage, mem.recall, tenant, t.text, t.session_id, t.timestamp,
                            kind,
                        )  # fmt: skip
                        forbidden = [v.casefold() for v in requests[t.request].forbidden]
                        y = np.array([any(v in r.text.casefold() for v in forbidden) for r in rows])
                        out.append((x, y))
                    mem.add(
                        [{"role": t.role, "content": t.text}],
                        user_id=USER,
                        session_id=t.session_id,
                        timestamp=t.timestamp,
                        honor_requests=False,
                    )
    return out


def scores(groups: list[tuple[np.ndarray, np.ndarray]], p: list[np.ndarray], t: float) -> dict:
    """Memory precision/recall and request completeness/exactness at ``t``."""
    tp = fp = fn = complete = exact = n = 0
    jaccard = 0.0
    for (_, y), pi in zip(groups, p, strict=True):
        if not y.any():
            continue
        n += 1
        sel = pi >= t
        tp += int((sel & y).sum())
        fp += int((sel & ~y).sum())
        fn += int((~sel & y).sum())
        complete += bool((sel | ~y).all())
        exact += bool((sel == y).all())
        jaccard += (sel & y).sum() / max(1, (sel | y).sum())
    return {
        "precision": tp / max(1, tp + fp),
        "recall": tp / max(1, tp + fn),
        "complete": complete / max(1, n),
        "exact": exact / max(1, n),
        "jaccard": jaccard / max(1, n),
        "requests": n,
    }


def fit(x: np.ndarray, y: np.ndarray, c: float) -> Resolver:
    """A logistic regression on standardised signals."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    lr = LogisticRegression(C=c, max_iter=2000)
    lr.fit((x - mean) / scale, y)
    return Resolver(lr.coef_[0], float(lr.intercept_[0]), mean, scale, 0.5)


def stack(groups: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    return np.vstack([g[0] for g in groups]), np.concatenate([g[1] for g in groups])


def save_cache(path: Path, data: dict[str, list[tuple[np.ndarray, np.ndarray]]]) -> None:
    """Signals and labels (no text) of every request, to re-fit quickly."""
    arrays = {f"{k}|{i}|{part}": a for k, v in data.items() for i, g in enumerate(v)
              for part, a in zip("xy", g, strict=True)}  # fmt: skip
    np.savez_compressed(path, **arrays)


def load_cache(path: Path, names: dict[str, Path]) -> dict | None:
    """The cached signals, or None when they lack a suite or a signal."""
    with np.load(path) as z:
        out: dict[str, list] = {}
        for key in sorted(z.files, key=lambda k: (k.split("|")[0], int(k.split("|")[1]))):
            name, i, part = key.split("|")
            if part == "x":
                out.setdefault(name, []).append((z[key], z[f"{name}|{i}|y"]))
    if not set(names) <= set(out) or any(
        g[0].shape[1] != len(FEATURES) for v in out.values() for g in v
    ):
        return None
    return {k: out[k] for k in names}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", action="store_true", help="measure the packaged model only")
    ap.add_argument("--cache", type=Path, help="keep the gathered signals in this .npz file")
    args = ap.parse_args()
    start = time.perf_counter()
    # the held-out suite is read only to report the packaged model, never while choosing
    chosen = {**SUITES, **HELDOUT} if args.report else SUITES
    data = load_cache(args.cache, chosen) if args.cache and args.cache.exists() else None
    if data is None:
        data = {name: gather(path) for name, path in chosen.items()}
        if args.cache:
            save_cache(args.cache, data)
    print(f"gathered {sum(len(g) for g in data.values())} requests "
          f"in {time.perf_counter() - start:.0f} s", file=sys.stderr)  # fmt: skip
    if args.report:
        model = load()
        for name, groups in data.items():
            p = [model.probabilities(x) for x, _ in groups]
            print(name, {k: round(v, 3) for k, v in scores(groups, p, model.threshold).items()})
        return 0
    train = {k: v for k, v in data.items() if k in SUITES}
    best = None
    for c in (0.03, 0.1, 0.3, 1.0, 3.0):
        cv: dict[str, list[np.ndarray]] = {}
        for out in train:
            model = fit(*stack([g for k, v in train.items() if k != out for g in v]), c)
            cv[out] = [model.probabilities(x) for x, _ in train[out]]
        groups = [g for k in train for g in train[k]]
        p = [pi for k in train for pi in cv[k]]
        for t in np.arange(0.3, 0.96, 0.05):
            s = scores(groups, p, float(t))
            # what was deleted against what should have been, per request
            key = (s["jaccard"], s["precision"])
            if best is None or key > best[0]:
                best = (key, c, float(t), s, cv)
    assert best is not None
    _, c, t, s, cv = best
    print(f"chosen C={c} threshold={t:.2f}; leave-one-suite-out:")
    for k in train:
        print(f"  {k}", {m: round(v, 3) for m, v in scores(train[k], cv[k], t).items()})
    model = fit(*stack([g for v in train.values() for g in v]), c)
    model.threshold = t
    print("weights:", dict(zip(FEATURES, np.round(model.weights, 2).tolist(), strict=True)))
    ASSET.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(ASSET, **model.to_arrays())
    print(f"wrote {ASSET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

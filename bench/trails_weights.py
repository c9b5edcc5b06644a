"""Fit the trail forgetter's evidence weights on development episodes.

``control/trails.py`` scores each candidate memory of a trail-aware forget
with a logistic model over ``EVIDENCE_FEATURES``. This script makes
development episodes with the ``unrecall bench trails`` generator, plans
every fact's forget, labels each candidate by the generator's truth (one of
the fact's evidence or disclosure turns, or not) and fits the weights with
scikit-learn's L2 logistic regression. It prints the weights, and with
``--write`` puts them into ``control/trails.py``.

    pip install -e '.[tune]'
    python bench/trails_weights.py [--seeds 101 202 303 404 505 707] [--facts-per-type 8] [--write]

Candidates of the second hop depend on the first hop's choice, so the fit
runs in ``--rounds`` (each plans with the last round's weights). Seeds 0
and 7 are the reported seeds of ``docs/benchmarks.md``: they are refused.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score

from unrecall import Memory
from unrecall.bench.trails import USER, ingest
from unrecall.bench.trails_episodes import generate
from unrecall.control import trails
from unrecall.recall.embedder import make_embedder

REPORTED_SEEDS = {0, 7}
SOURCE = Path(trails.__file__)


def candidates(
    seeds: list[int], per_type: int, folder: Path
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels (evidence or disclosure: 1) and seeds of every
    candidate the planner scores, over the episodes of ``seeds``."""
    embedder = make_embedder("minilm")
    feats, labels, origin = [], [], []
    for seed in seeds:
        for episode in generate(per_type, seed):
            built = ingest(episode, folder / str(seed), embedder)

            with Memory(built.template, embedder=embedder) as mem:
                tenant = mem._existing(USER, None, None)
                for fact in episode.facts:
                    plan = mem.trails.plan(tenant, fact.request)
                    support = {built.uid[k] for k in (*fact.evidence, *fact.disclosure)}
                    sources = mem.storage.sources([c.id for c in plan.candidates])
                    for c in plan.candidates:
                        feats.append(c.features)
                        labels.append(any(t.uid in support for t in sources[c.id]))
                        origin.append(seed)
    return np.array(feats), np.array(labels), np.array(origin)


def held_out(x: np.ndarray, y: np.ndarray, origin: np.ndarray, c: float) -> str:
    """Leave-one-seed-out ROC AUC and log-loss of the candidate scores."""
    out = []
    for seed in np.unique(origin):
        test = origin == seed
        model = LogisticRegression(C=c, max_iter=5000).fit(x[~test], y[~test])
        p = model.predict_proba(x[test])[:, 1]
        out.append(f"{seed}: AUC {roc_auc_score(y[test], p):.3f} loss {log_loss(y[test], p):.3f}")
    return "; ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[101, 202, 303, 404, 505, 707])
    parser.add_argument("--facts-per-type", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength")
    parser.add_argument("--write", action="store_true", help=f"update {SOURCE.name}")
    args = parser.parse_args()
    if REPORTED_SEEDS & set(args.seeds):
        parser.error("seeds 0 and 7 are reported; fit on development seeds only")
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="unrecall-weights-") as tmp:
            for seed in args.seeds:
                (Path(tmp) / str(seed)).mkdir()
            x, y, origin = candidates(args.seeds, args.facts_per_type, Path(tmp))
        print(f"held out by seed: {held_out(x, y, origin, args.c)}")
        model = LogisticRegression(C=args.c, max_iter=5000).fit(x, y)
        trails.EVIDENCE_WEIGHTS = {
            name: round(float(w), 3)
            for name, w in zip(trails.EVIDENCE_FEATURES, model.coef_[0], strict=True)
        }
        trails.EVIDENCE_BIAS = round(float(model.intercept_[0]), 3)
        print(f"round {round_ + 1}: {len(y)} candidates, {int(y.sum())} evidence")
    for name, w in trails.EVIDENCE_WEIGHTS.items():
        print(f"{name:>14} {w:+.3f}")
    print(f"{'bias':>14} {trails.EVIDENCE_BIAS:+.3f}")
    if args.write:
        text = SOURCE.read_text()
        for name, w in trails.EVIDENCE_WEIGHTS.items():
            text = re.sub(rf'(\n    "{name}": )-?[\d.]+,', rf"\g<1>{w:.3f},", text, count=1)
        text = re.sub(
            r"\nEVIDENCE_BIAS = -?[\d.]+", f"\nEVIDENCE_BIAS = {trails.EVIDENCE_BIAS:.3f}", text
        )
        SOURCE.write_text(text)
        print(f"wrote {SOURCE}")


if __name__ == "__main__":
    main()

"""The learned request detector: is this user turn a forget or correction
request, and of which kind?

A multinomial logistic regression over the hashed features of
``unrecall.pipeline.features``: classes ``none`` and the six request kinds.
Its weights are a small file inside the package (``assets/detector.npz``),
made by ``python bench/train_detector.py`` from the labelled turns in the
repository; nothing is downloaded or trained at run time. Only the buckets
that training saw are stored (sparse), as float16.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from unrecall.errors import StoreError
from unrecall.pipeline.features import featurize

CLASSES = ("none", "factual", "compositional", "category", "inferential", "temporal", "replacement")


@dataclass(frozen=True)
class Reading:
    """What the detector read in one turn: the probability that it is a
    request, and the most likely kind if it is one."""

    p_request: float
    kind: str


class Detector:
    """Sparse multinomial logistic regression over hashed turn features."""

    def __init__(
        self,
        index: np.ndarray,
        weights: np.ndarray,
        bias: np.ndarray,
        threshold: float,
        alone: float | None = None,
    ) -> None:
        self.index = index.astype(np.int64)
        self.weights = weights.astype(np.float32)
        self.bias = bias.astype(np.float32)
        self.threshold = float(threshold)
        # the bar for a turn the exact rules do not read as a request
        self.alone = float(threshold if alone is None else alone)

    def bar(self, rules_read: bool) -> float:
        """The probability a turn needs to be a request: the threshold when
        the rules read one too, the stricter ``alone`` when they do not (in
        a chat, most turns are not requests)."""
        return self.threshold if rules_read else self.alone

    def logits(self, feats: np.ndarray) -> np.ndarray:
        """Class scores of one turn's feature buckets (rows scaled to unit norm)."""
        rows = np.searchsorted(self.index, feats)
        inside = rows < len(self.index)
        rows, feats_in = rows[inside], feats[inside]
        rows = rows[self.index[rows] == feats_in]  # buckets training never saw weigh 0
        scale = 1.0 / np.sqrt(max(len(feats), 1))
        return self.bias + self.weights[rows].sum(axis=0) * scale

    def read(self, text: str, previous: str | None = None, rules: tuple[str, ...] = ()) -> Reading:
        """The reading of one user turn (``previous``: the user's turn
        before it; ``rules``: what the exact rules found, as features)."""
        z = self.logits(featurize(text, previous, rules))
        p = np.exp(z - z.max())
        p /= p.sum()
        kind = CLASSES[1 + int(np.argmax(p[1:]))]
        return Reading(float(1.0 - p[0]), kind)

    def to_arrays(self) -> dict[str, Any]:
        """The arrays ``load`` reads back (for the training script)."""
        return {
            "index": self.index.astype(np.int32),
            "weights": self.weights.astype(np.float16),
            "bias": self.bias,
            "threshold": np.array(self.threshold),
            "alone": np.array(self.alone),
            "classes": np.array(CLASSES),
        }


@cache
def load() -> Detector:
    """The packaged detector, read once per process."""
    path = resources.files("unrecall.pipeline") / "assets" / "detector.npz"
    try:
        with resources.as_file(path) as real, np.load(real) as z:
            if tuple(z["classes"]) != CLASSES:
                raise StoreError("the packaged request detector has other classes")
            alone = float(z["alone"]) if "alone" in z.files else None
            return Detector(z["index"], z["weights"], z["bias"], float(z["threshold"]), alone)
    except FileNotFoundError as exc:
        raise StoreError("the packaged request detector is missing") from exc

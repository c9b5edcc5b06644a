"""Features of a user turn for the learned request reader.

A turn becomes a sparse bag of hashed features: its words and word pairs,
the character 3-5-grams of each word (so "borrar", "borra" and "bórralo"
share most features, and so do typos), the words of the user's previous
turn when the request points back at it, and what the exact rules say
(``rule:`` features, see ``unrecall.pipeline.read``). Hashing keeps the
model a fixed size whatever the vocabulary, in every language, with no
tokenizer to ship. ``zlib.crc32`` is stable across processes (``hash`` is
salted per process).
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Iterable

import numpy as np

BUCKETS = 1 << 20
_WORD = re.compile(r"[^\W_]+|[?!]", re.UNICODE)
_DIGITS = re.compile(r"\d")


def fold(text: str) -> str:
    """Casefolded, accents stripped, digits as ``0`` (a PIN's value says
    nothing about whether it is asked to be forgotten)."""
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return _DIGITS.sub("0", text.replace("’", "'"))


def _grams(word: str) -> Iterable[str]:
    padded = f"<{word}>"
    for n in (3, 4, 5):
        for i in range(len(padded) - n + 1):
            yield padded[i : i + n]


def feature_names(text: str, previous: str | None = None, rules: Iterable[str] = ()) -> list[str]:
    """The named features of a turn, before hashing (for tests and for
    reading what a model learned)."""
    toks = _WORD.findall(fold(text))
    names = ["bias", f"len:{min(len(toks), 40) // 5}"]
    names += [f"w:{t}" for t in toks]
    names += [f"b:{a} {b}" for a, b in zip(["^", *toks], [*toks, "$"], strict=True)]
    names += [f"c:{g}" for t in toks if len(t) > 2 for g in _grams(t)]
    if previous:
        names += [f"p:{t}" for t in _WORD.findall(fold(previous))]
    names += [f"rule:{r}" for r in rules]
    return names


def featurize(text: str, previous: str | None = None, rules: Iterable[str] = ()) -> np.ndarray:
    """Sorted unique bucket indices of a turn's features (binary features;
    the model scales them by the row's norm)."""
    idx = {zlib.crc32(n.encode("utf-8")) % BUCKETS for n in feature_names(text, previous, rules)}
    return np.fromiter(sorted(idx), dtype=np.int64, count=len(idx))

"""Resolve stage: which memories does a forget request describe?

A request said in the user's own words ("that stuff i told u sunday night
about dean and his missus", "todo lo de mi salud") names its fact by
description, not by a literal value. Every memory of the tenant is a
candidate and gets a vector of signals, each general (no phrasing tables):

* meaning: cosine with the request in the store's embedder and in a
  multilingual one (``multilingual``), absolute and against the best
  candidate, and the candidate's rank;
* words: the IDF-weighted share of the request's words (five-letter
  prefixes, so any language) that the memory holds, absolute and relative;
* identifiers and names said in both, identifiers of the same kind (a
  phone number for a phone number), numbers in both;
* time: whether the request names a time window and the memory was said in
  it; whether it was said in the user's previous turn or this session;
* the memory's role (user or assistant), and the kind the reader took the
  request for.

A logistic regression trained on annotated dialogues (``python
bench/train_resolver.py``; weights in ``assets/resolver.npz``) turns the
signals into the probability that the memory holds what the request
describes. ``Resolution`` keeps the candidates above the trained threshold
and says, for each, which signal found it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from unrecall.control.operations import Tenant
from unrecall.dialogue.requests import KINDS
from unrecall.dialogue.windows import names_last_session, names_weekday, window
from unrecall.errors import StoreError
from unrecall.recall.clauses import split_clauses
from unrecall.recall.embedder import multilingual
from unrecall.recall.identifiers import extract
from unrecall.recall.lexical import normalize
from unrecall.recall.names import name_keys, query_name_keys
from unrecall.recall.search import Recall
from unrecall.records import ACTIVE
from unrecall.storage.base import MemoryRow, Storage

FEATURES = (
    "cos",
    "cos_gap",
    "cos_rank",
    "mcos",
    "mcos_gap",
    "mcos_rank",
    "part_cos",
    "part_cos_gap",
    "part_mcos",
    "part_mcos_gap",
    "turn_cos",
    "turn_mcos",
    "words",
    "words_gap",
    "words_rank",
    "identifier",
    "same_kind",
    "numbers",
    "name",
    "window_named",
    "in_window",
    "previous_turn",
    "this_session",
    "assistant",
    *(f"kind_{k}" for k in KINDS),
)
PREFIX = 5  # letters of a word that stand for it in every language
WEEK = 7 * 86400.0
WEEKS_BACK = 8
# Past this many memories, the candidates are the hybrid search's best for
# the request and everything said in the window it names.
MAX_CANDIDATES = 400


@dataclass(frozen=True)
class Context:
    """Where and when the request was said: its session, its time, and the
    ids of the memories derived from the user's previous turn."""

    session: str | None
    at: float
    previous: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Target:
    """One resolved memory, its probability and the signal that weighed most."""

    row: MemoryRow
    p: float
    how: str


@dataclass(frozen=True)
class Resolution:
    """The memories a request describes, best first; for a replacement
    found by its value, the old ``values`` to cut from them and the
    ``new_value`` put in their place."""

    targets: tuple[Target, ...]
    values: tuple[str, ...] = ()
    new_value: str | None = None

    @property
    def how(self) -> str:
        """The signal that found most targets (``none`` when nothing was found)."""
        if not self.targets:
            return "none"
        return Counter(t.how for t in self.targets).most_common(1)[0][0]


def word_units(text: str) -> list[str]:
    """Lowercased, accent-folded words of three letters or more, cut to
    their first five letters (a stem that works in every language)."""
    return [w[:PREFIX] for w in re.findall(r"[^\W\d_]{3,}", normalize(text))]


def parts(text: str) -> list[str]:
    """The request's clauses and comma-separated pieces of two words or
    more: "that stuff i told u sunday, about dean and his missus" is also
    compared piece by piece, so the words asking to forget do not drown
    the words naming the fact."""
    out = split_clauses(text)
    out += [p for c in out for p in re.split(r"[,;:()]", c) if len(p.split()) >= 2]
    return list(dict.fromkeys(p.strip() for p in out if p.strip()))


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(len(values))
    return 1.0 / (1.0 + ranks)


def _window(text: str, at: float, rows: Sequence[MemoryRow], sessions: dict[int, str | None]):
    """The memories said in the time the request names (None: it names none)."""
    if names_last_session(text):
        earlier = [r for r in rows if r.created_at < at]
        if not earlier:
            return set()
        last = sessions.get(max(earlier, key=lambda r: r.created_at).id)
        return {r.id for r in earlier if sessions.get(r.id) == last}
    span = window(text, at)
    if span is None:
        return None
    inside = {r.id for r in rows if span[0] <= r.created_at < span[1]}
    back = 0  # "Friday night" said on a Monday: the last Friday we talked
    while not inside and names_weekday(text) and back < WEEKS_BACK:
        back += 1
        span = window(text, at - back * WEEK)
        inside = {r.id for r in rows if span and span[0] <= r.created_at < span[1]}
    return inside


def signals(
    recall: Recall,
    text: str,
    rows: Sequence[MemoryRow],
    sessions: dict[int, str | None],
    context: Context,
    multilingual: tuple[np.ndarray, np.ndarray] | None = None,
    turns: dict[int, int] | None = None,
    kind: str | None = None,
) -> np.ndarray:
    """The signal matrix (one row per candidate, columns ``FEATURES``).
    ``sessions`` maps a memory's id to the session it was said in, and
    ``turns`` to the turn it was said in (``turn_*``: the best cosine of
    any memory of that turn: a clause is read with the turn it came from);
    ``multilingual`` is the multilingual cosine of each row with the whole
    request and the best with one of its ``parts`` (zeros: none)."""
    n = len(rows)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if n == 0:
        return out
    pieces = parts(text)
    vecs = recall.vectors([text, *pieces], rows)
    q, mem = vecs[: 1 + len(pieces)], vecs[1 + len(pieces) :]
    sims = mem @ q.T
    cos, part_cos = sims[:, 0], sims.max(axis=1)
    zero = np.zeros(n, dtype=np.float32)
    mcos, part_mcos = multilingual if multilingual is not None else (zero, zero)
    units = [set(word_units(r.text)) for r in rows]
    df = Counter(u for us in units for u in us)
    wanted = set(word_units(text))
    idf = {u: math.log((n + 1) / (df[u] + 0.5)) for u in wanted}
    total = sum(idf.values()) or 1.0
    words = np.array([sum(idf[u] for u in wanted & us) / total for us in units])
    found = extract(text)
    ids, kinds = {i.key for i in found}, {i.kind for i in found}
    digits = any(c.isdigit() for c in text)
    names = query_name_keys(text)
    inside = _window(text, context.at, rows, sessions)
    for i, r in enumerate(rows):
        held = extract(r.text)
        out[i, FEATURES.index("identifier")] = bool(ids & {h.key for h in held})
        # a value of the same kind (a phone for a phone): what a replacement replaces
        out[i, FEATURES.index("same_kind")] = bool(kinds & {h.kind for h in held})
        out[i, FEATURES.index("numbers")] = digits and any(c.isdigit() for c in r.text)
        out[i, FEATURES.index("name")] = bool(names & name_keys(r.text))
        out[i, FEATURES.index("in_window")] = inside is not None and r.id in inside
        out[i, FEATURES.index("previous_turn")] = r.id in context.previous
        out[i, FEATURES.index("this_session")] = sessions.get(r.id) == context.session
        out[i, FEATURES.index("assistant")] = r.metadata.get("role") == "assistant"
    out[:, FEATURES.index("window_named")] = inside is not None
    if kind in KINDS:  # what the reader took it for: a topic takes more than a value
        out[:, FEATURES.index(f"kind_{kind}")] = 1.0
    for name, v in (("cos", cos), ("mcos", mcos), ("words", words)):
        out[:, FEATURES.index(name)] = v
        out[:, FEATURES.index(name + "_gap")] = v - v.max()
        out[:, FEATURES.index(name + "_rank")] = _ranks(v)
    for name, v in (("part_cos", part_cos), ("part_mcos", part_mcos)):
        out[:, FEATURES.index(name)] = v
        out[:, FEATURES.index(name + "_gap")] = v - v.max()
    said_in = [(turns or {}).get(r.id, -r.id) for r in rows]
    for name, v in (("turn_cos", cos), ("turn_mcos", mcos)):
        best: dict[int, float] = {}
        for t, x in zip(said_in, v, strict=True):
            best[t] = max(best.get(t, -1.0), float(x))
        out[:, FEATURES.index(name)] = [best[t] for t in said_in]
    return out


def candidates(
    storage: Storage,
    recall: Recall,
    tenant: Tenant,
    text: str,
    session: str | None,
    at: float,
    kind: str | None = None,
) -> tuple[list[MemoryRow], np.ndarray]:
    """The tenant's active memories that ``text`` (a request of ``kind``,
    said in ``session`` at ``at``) may describe, and their signal matrix."""
    rows = [r for r in storage.memories(tenant.id, [ACTIVE]) if tenant.covers(r)]
    if len(rows) > MAX_CANDIDATES:
        best = {
            c.row.id for c in recall.search(tenant.id, text, MAX_CANDIDATES // 2, tenant.covers)
        }
        span = window(text, at)
        rows = [r for r in rows if r.id in best or (span and span[0] <= r.created_at < span[1])]
    sources = storage.sources([r.id for r in rows])
    sessions: dict[int, str | None] = {}
    turns: dict[int, int] = {}
    for r in rows:
        said = sorted(sources.get(r.id, []), key=lambda t: (t.role != "user", t.at))
        sessions[r.id] = said[0].session_id if said else None
        if said:
            turns[r.id] = said[0].id
    users = [t for t in storage.turns(tenant.id) if t.role == "user" and t.session_id == session]
    previous = (
        frozenset(storage.derived([max(users, key=lambda t: (t.at, t.id)).id]))
        if users
        else frozenset()
    )
    pieces = [text, *parts(text)]
    vecs = multilingual().embed([*pieces, *(r.text for r in rows)])
    sims = vecs[len(pieces) :] @ vecs[: len(pieces)].T
    context = Context(session, at, previous)
    multi = (sims[:, 0], sims.max(axis=1))
    return rows, signals(recall, text, rows, sessions, context, multi, turns, kind)


_HOW = {
    "cos": "similarity",
    "mcos": "similarity",
    "part_cos": "similarity",
    "part_mcos": "similarity",
    "words": "words",
    "identifier": "identifier",
    "name": "name",
    "in_window": "time",
    "previous_turn": "previous turn",
}


class Resolver:
    """Logistic regression over ``signals``: p(memory holds the fact)."""

    def __init__(self, weights: np.ndarray, bias: float, mean: np.ndarray, scale: np.ndarray,
                 threshold: float) -> None:  # fmt: skip
        self.weights = weights.astype(np.float32)
        self.bias = float(bias)
        self.mean = mean.astype(np.float32)
        self.scale = scale.astype(np.float32)
        self.threshold = float(threshold)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """p for each candidate row of a signal matrix."""
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-z))

    def resolve(self, rows: Sequence[MemoryRow], x: np.ndarray) -> Resolution:
        """The candidates above the threshold, best first, each with the
        signal that added most to its score."""
        if not len(rows):
            return Resolution(())
        p = self.probabilities(x)
        contrib = ((x - self.mean) / self.scale) * self.weights
        found = []
        for i in np.argsort(-p, kind="stable"):
            if p[i] < self.threshold:
                break
            best = max(_HOW, key=lambda f: contrib[i, FEATURES.index(f)])
            found.append(Target(rows[i], float(p[i]), _HOW[best]))
        return Resolution(tuple(found))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays ``load`` reads back (for the training script)."""
        return {
            "weights": self.weights,
            "bias": np.array(self.bias),
            "mean": self.mean,
            "scale": self.scale,
            "threshold": np.array(self.threshold),
            "features": np.array(FEATURES),
        }


@cache
def load() -> Resolver:
    """The packaged resolver, read once per process."""
    path = resources.files("unrecall.pipeline") / "assets" / "resolver.npz"
    try:
        with resources.as_file(path) as real, np.load(real) as z:
            if tuple(z["features"]) != FEATURES:
                raise StoreError("the packaged resolver was trained on other signals")
            return Resolver(z["weights"], float(z["bias"]), z["mean"], z["scale"],
                            float(z["threshold"]))  # fmt: skip
    except FileNotFoundError as exc:
        raise StoreError("the packaged resolver is missing") from exc

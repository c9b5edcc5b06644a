"""``unrecall bench trails``: MemCut-style evidence trails (issue #5).

MemCut (see ``shared/seeds/memcut-summary.txt``) asks whether a memory
forgets a *protected fact* once asked to, when the fact is not only stated
once (its *disclosure*) but also implied by a *trail* of evidence turns that
none states it. This harness runs that protocol on seeded episodes of our own
(:mod:`unrecall.bench.trails_episodes`: four derivation types, 4-10 evidence
turns per fact, enumerated minimal sufficient sets of 2-5 turns,
distractors that share words or entities with the evidence).

Protocol
    Each episode is ingested once through ``Memory.add`` (one user turn and
    its assistant reply per call, with session id and timestamp) into a
    SQLite file; every (fact, deleter) pair then runs on a fresh copy of that
    file, so one deletion never affects another fact. Everything is anchored
    to source turns: a deleter's *deletions* are the turn ids that existed
    before it ran and are gone after (the difference of ``export`` turns),
    so every deleter is judged the same way, whatever it calls.

Deleters (same run, same stores)
    * ``s0`` deletes the disclosure turn(s), known from the annotations, with
      ``Memory.delete`` (closure removes every memory derived from them);
    * ``s1`` runs s0, then asks ``Memory.search`` with the request text and
      maps the hits, in rank order, to their distinct source turns (the
      disclosure excluded): the first ``--pool`` (20) turns are the pool, the
      first ``--budget`` (10) of it are deleted;
    * ``s2`` runs s0 and deletes ``--budget`` turns of the same pool
      reranked. The paper reranks with an LLM; this harness is offline and
      deterministic, so the default reranker scores each pool turn by the
      larger of its cosine similarity (same embedder as the store) to the
      request and to the disclosure text(s). ``run_benchmark(reranker=...)``
      takes another one (an LLM, say): a function of the request, the
      disclosure texts and the pool texts that returns pool indices, best
      first;
    * ``unrecall`` gets *only the request text*: ``Memory.forget(request,
      user_id=...)``, which must find the disclosure and the trail itself.
      A revision whose ``Memory`` has no ``forget`` is reported as not
      available, not skipped.

Metrics, per derivation type and overall, per deleter
    * structurally forgotten: the disclosure turn(s) deleted *and* every
      annotated sufficient set hit by a deletion (Wilson 95 % interval);
    * minimal cut (smallest hitting set of the sufficient sets, by
      enumeration) vs the chosen cut (evidence turns the deleter deleted),
      and turns deleted in all;
    * off-target fraction: deleted turns that are neither this fact's
      evidence nor its disclosure, over all deleted turns but the
      disclosure (pooled over facts, and the mean over facts that deleted
      anything beyond the disclosure);
    * native-recovery proxy: after deletion, ``search(question, k=10)``
      recovers the fact when its value occurs in the joined top-10 texts
      (casefold, not glued to a letter or digit: "3 March" is not in
      "13 March") or a top-10 hit derives from one of its evidence or
      disclosure turns. Also measured before any deletion;
    * for s1/s2, reach: evidence turns in the pool and whether the pool
      holds a complete cut.

Outputs, in ``--out``: ``summary.md`` (also printed), ``summary.json``,
``facts.json`` (one row per deleter and fact; the questions, values and
requests in it are synthetic benchmark data) and, with ``--episodes``,
``episodes.json`` (the generated turns and annotations; the data digest in
the summary identifies them, and the seed regenerates them). Progress lines carry ids and counts
only. The run refuses network access (:func:`~unrecall.bench.common.network_guard`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from unrecall.bench.common import (
    chosen_systems,
    finish,
    network_guard,
    reporter,
    revision,
    wilson,
)
from unrecall.bench.trails_episodes import (
    DEFAULT_FILLER,
    TYPE_LABELS,
    TYPES,
    Episode,
    Fact,
    digest,
    episodes_json,
    generate,
    has_value,
    load_episodes,
)
from unrecall.errors import NotFound
from unrecall.memory import Memory
from unrecall.progress import steps
from unrecall.recall.embedder import Embedder, make_embedder

SYSTEMS = ("s0", "s1", "s2", "unrecall", "unrecall-chat")
REQUEST_SESSION = "forget-request"  # the chat session the request is said in
BEFORE = "none"  # the no-deletion pass: native recovery before any deleter ran
DEFAULT_OUT = Path("bench/results/trails")
DEFAULT_FACTS = 40
POOL = 20
BUDGET = 10
TOP_K = 10
USER = "trails-user"
TURN_SECONDS = 60
TARGET_FORGOTTEN = 90.0  # % of facts structurally forgotten ...
TARGET_OFF_TARGET = 20.0  # ... with at most this % of off-target deletions (pooled)
UNAVAILABLE = "not available at this revision (Memory has no forget method)"

# (request, disclosure texts, pool texts) -> pool indices, best first.
Reranker = Callable[[str, Sequence[str], Sequence[str]], Sequence[int]]


class IngestError(RuntimeError):
    """An episode did not go into the store turn for turn."""


# -- stores -------------------------------------------------------------------
@dataclass
class BuiltEpisode:
    """An ingested episode: the closed SQLite file every fact copies, and
    the map between annotation keys and the store's turn ids."""

    episode: Episode
    template: Path
    uid: dict[str, str]
    key: dict[str, str]
    seconds: float
    false_alarms: list[str] = field(default_factory=list)  # keys of turns read as requests


def ingest(episode: Episode, folder: Path, embedder: Embedder) -> BuiltEpisode:
    """Ingest ``episode`` into ``folder/<id>.db`` through ``Memory.add`` (a
    user turn and its reply per call) and close it. A turn that ``add``
    reads as a forget request is executed, as it would be for a user, and
    its key is kept in ``false_alarms``. Raises ``IngestError`` when a
    message does not become exactly one source turn."""
    start = time.perf_counter()
    path = folder / f"{episode.id}.db"
    uid: dict[str, str] = {}
    alarms: list[str] = []
    with Memory(path, embedder=embedder) as mem:
        for session in episode.sessions:
            turns = session.turns
            for i in range(0, len(turns), 2):
                pair = turns[i : i + 2]
                report = mem.add(
                    [{"role": t.role, "content": t.text} for t in pair],
                    user_id=USER,
                    session_id=session.id,
                    timestamp=session.start + i * TURN_SECONDS,
                )
                ids = report.detail.get("turns", [])
                if report.requests:
                    alarms.append(pair[0].key)
                if len(ids) != len(pair):
                    raise IngestError(
                        f"{pair[0].key}: add made {len(ids)} turns and ran "
                        f"{len(report.requests)} requests for {len(pair)} messages"
                    )
                uid.update({t.key: u for t, u in zip(pair, ids, strict=True)})
    return BuiltEpisode(
        episode, path, uid, {u: k for k, u in uid.items()}, time.perf_counter() - start, alarms
    )


@contextmanager
def fresh_store(built: BuiltEpisode, embedder: Embedder) -> Iterator[Memory]:
    """A private copy of an ingested episode, deleted on exit."""
    folder = Path(tempfile.mkdtemp(prefix="unrecall-trails-"))
    try:
        for src in [built.template, *built.template.parent.glob(built.template.name + "-wal")]:
            shutil.copyfile(src, folder / src.name.replace(built.template.stem, "store"))
        with Memory(folder / "store.db", embedder=embedder) as mem:
            yield mem
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def turn_texts(mem: Memory) -> dict[str, str]:
    """Every surviving turn of the benchmark user: id -> text."""
    return {t["id"]: t["text"] for t in mem.export(user_id=USER)["turns"]}


def sources(mem: Memory, memory_id: str) -> list[str]:
    """Source turn ids of a memory ([] when it is gone)."""
    try:
        return list(mem.get(memory_id, user_id=USER).sources)
    except NotFound:
        return []


# -- deleters -----------------------------------------------------------------
def retrieval_pool(mem: Memory, request: str, exclude: set[str], size: int = POOL) -> list[str]:
    """The ``size`` highest-ranked distinct source turns for ``request``:
    ``search`` hits in rank order mapped to their source turns, ``exclude``
    left out (one query; deeper only when the hits run out of new turns)."""
    k = 100
    while True:
        hits = mem.search(request, user_id=USER, k=k)
        pool: list[str] = []
        for hit in hits:
            for src in sources(mem, hit.id):
                if src not in exclude and src not in pool:
                    pool.append(src)
                    if len(pool) == size:
                        return pool
        if len(hits) < k or k >= 1000:
            return pool
        k = min(1000, k * 4)


def similarity_reranker(embedder: Embedder) -> Reranker:
    """The default S2 selection: each pool turn scored by the larger of its
    cosine similarity to the request and to the disclosure text(s), best
    first (ties keep the retrieval order). Stands in for the paper's LLM
    rerank so the harness stays offline and deterministic."""

    def rerank(request: str, disclosures: Sequence[str], texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        probes = embedder.embed([request, *disclosures])
        vecs = embedder.embed(list(texts))
        score = np.max(vecs @ probes.T, axis=1)
        return sorted(range(len(texts)), key=lambda i: (-float(score[i]), i))

    return rerank


@dataclass
class Case:
    """What a deleter may use: the store, the fact and the turn-id map.
    The ``unrecall`` deleter reads only ``fact.request``."""

    mem: Memory
    fact: Fact
    built: BuiltEpisode
    before: dict[str, str]
    pool_size: int
    budget: int
    reranker: Reranker | None


@dataclass
class Deletion:
    """What a deleter reports beyond its deletions: its candidate pool
    (turn ids, s1/s2) and, for unrecall, what ``forget`` said."""

    pool: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)


def _delete(mem: Memory, turn_ids: Sequence[str]) -> None:
    for t in turn_ids:
        with suppress(NotFound):  # already gone with an earlier closure
            mem.delete(t, user_id=USER)


def delete_s0(case: Case) -> Deletion:
    """S0: delete the disclosure turn(s) and, by closure, what derived from them."""
    _delete(case.mem, [case.built.uid[k] for k in case.fact.disclosure])
    return Deletion()


def _pool_after_s0(case: Case) -> list[str]:
    delete_s0(case)
    disclosure = {case.built.uid[k] for k in case.fact.disclosure}
    return retrieval_pool(case.mem, case.fact.request, disclosure, case.pool_size)


def delete_s1(case: Case) -> Deletion:
    """S1: S0, then the top ``budget`` turns of the request's retrieval pool."""
    pool = _pool_after_s0(case)
    _delete(case.mem, pool[: case.budget])
    return Deletion(pool)


def delete_s2(case: Case) -> Deletion:
    """S2: S0, then the top ``budget`` turns of the same pool reranked."""
    pool = _pool_after_s0(case)
    rerank = case.reranker or similarity_reranker(case.mem.embedder)
    disclosures = [case.before[case.built.uid[k]] for k in case.fact.disclosure]
    order = rerank(case.fact.request, disclosures, [case.before[u] for u in pool])
    _delete(case.mem, [pool[i] for i in list(order)[: case.budget]])
    return Deletion(pool)


def delete_unrecall(case: Case) -> Deletion:
    """unrecall's trail-aware deleter: ``Memory.forget`` with the request
    text only (it must find the disclosure and the trail itself)."""
    report = case.mem.forget(case.fact.request, user_id=USER)  # type: ignore[attr-defined]
    summary: dict[str, Any] = {}
    for name in ("match", "count", "turns_removed"):
        value = getattr(report, name, None)
        if isinstance(value, str | int | float | bool):
            summary[name] = value
    return Deletion(report=summary)


def delete_unrecall_chat(case: Case) -> Deletion:
    """unrecall with the request said in the chat: the request text as a
    user message to ``Memory.add``, which must read it as a request and
    cut the trail itself."""
    report = case.mem.add(
        [{"role": "user", "content": case.fact.request}],
        user_id=USER,
        session_id=REQUEST_SESSION,
    )
    return Deletion(report={"requests": len(report.requests)})


def delete_nothing(case: Case) -> Deletion:
    """The no-deletion pass (native recovery before deletion)."""
    return Deletion()


DELETERS: dict[str, Callable[[Case], Deletion]] = {
    BEFORE: delete_nothing,
    "s0": delete_s0,
    "s1": delete_s1,
    "s2": delete_s2,
    "unrecall": delete_unrecall,
    "unrecall-chat": delete_unrecall_chat,
}


def unrecall_available() -> bool:
    """True when this revision's ``Memory`` has a ``forget`` method."""
    return callable(getattr(Memory, "forget", None))


# -- scoring ------------------------------------------------------------------
@dataclass(frozen=True)
class Score:
    """How one deletion meets one fact's annotations (turn keys)."""

    disclosure_deleted: bool
    sets_hit: int
    sets: int
    chosen_cut: int
    deleted: int
    beyond_disclosure: int
    off_target: int
    distractors_deleted: int

    @property
    def forgotten(self) -> bool:
        """Disclosure gone and every sufficient set hit."""
        return self.disclosure_deleted and self.sets_hit == self.sets

    @property
    def off_target_fraction(self) -> float | None:
        """Off-target deletions over deletions beyond the disclosure (None
        when nothing beyond the disclosure was deleted)."""
        return self.off_target / self.beyond_disclosure if self.beyond_disclosure else None


def score_deletion(fact: Fact, deleted: set[str]) -> Score:
    """Score a set of deleted turn keys against a fact's annotations."""
    disclosure, evidence = set(fact.disclosure), set(fact.evidence)
    beyond = deleted - disclosure
    return Score(
        disclosure_deleted=disclosure <= deleted,
        sets_hit=sum(1 for s in fact.sufficient_sets if deleted & set(s)),
        sets=len(fact.sufficient_sets),
        chosen_cut=len(beyond & evidence),
        deleted=len(deleted),
        beyond_disclosure=len(beyond),
        off_target=len(beyond - evidence),
        distractors_deleted=len(beyond & set(fact.distractors)),
    )


def structurally_forgotten(fact: Fact, deleted: set[str]) -> bool:
    """The disclosure is deleted and every sufficient set has a deleted turn."""
    return score_deletion(fact, deleted).forgotten


def off_target(facts_deleted: Sequence[tuple[Fact, set[str]]]) -> tuple[float | None, float | None]:
    """Off-target fraction, pooled (sum of off-target over sum of deletions
    beyond the disclosure) and mean per fact (facts that deleted something
    beyond the disclosure), as fractions; None where undefined."""
    scores = [score_deletion(f, d) for f, d in facts_deleted]
    beyond = sum(s.beyond_disclosure for s in scores)
    pooled = sum(s.off_target for s in scores) / beyond if beyond else None
    per = [s.off_target_fraction for s in scores if s.off_target_fraction is not None]
    return pooled, (sum(per) / len(per) if per else None)


def native_recovery(
    mem: Memory, fact: Fact, built: BuiltEpisode, k: int = TOP_K
) -> tuple[bool, bool]:
    """(value in the joined top-``k`` texts for the fact's question, a
    top-``k`` hit derived from one of its evidence or disclosure turns)."""
    hits = mem.search(fact.question, user_id=USER, k=k)
    value = has_value("\n".join(h.text for h in hits), fact.value)
    support = {built.uid[key] for key in (*fact.evidence, *fact.disclosure)}
    trail = any(support & set(sources(mem, h.id)) for h in hits)
    return value, trail


@dataclass
class FactResult:
    """One deleter on one fact (turn keys, counts and verdicts)."""

    system: str
    fact: str
    type: str
    frame: str
    episode: str
    minimal_cut: int
    evidence: int
    deleted: list[str]
    score: Score
    native_value: bool
    native_trail: bool
    pool: list[str] = field(default_factory=list)
    pool_evidence: int = 0
    pool_has_cut: bool | None = None
    rewritten: int = 0
    new_turns: int = 0
    report: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    @property
    def native(self) -> bool:
        """The native-recovery proxy: value or trail in the top-k."""
        return self.native_value or self.native_trail

    def to_row(self, fact: Fact) -> dict[str, Any]:
        """A JSON-ready row (with the fact's synthetic question, value and request)."""
        s = self.score
        return {
            "system": self.system,
            "fact": self.fact,
            "type": self.type,
            "frame": self.frame,
            "episode": self.episode,
            "request": fact.request,
            "question": fact.question,
            "value": fact.value,
            "forgotten": s.forgotten,
            "disclosure_deleted": s.disclosure_deleted,
            "sets_hit": s.sets_hit,
            "sets": s.sets,
            "minimal_cut": self.minimal_cut,
            "chosen_cut": s.chosen_cut,
            "evidence": self.evidence,
            "deleted": s.deleted,
            "off_target": s.off_target,
            "off_target_fraction": s.off_target_fraction,
            "distractors_deleted": s.distractors_deleted,
            "native": self.native,
            "native_value": self.native_value,
            "native_trail": self.native_trail,
            "pool_evidence": self.pool_evidence,
            "pool_has_cut": self.pool_has_cut,
            "rewritten_turns": self.rewritten,
            "new_turns": self.new_turns,
            "deleted_turns": sorted(self.deleted),
            "pool_turns": self.pool,
            "report": self.report,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }


def evaluate(
    system: str,
    fact: Fact,
    built: BuiltEpisode,
    embedder: Embedder,
    *,
    pool_size: int = POOL,
    budget: int = BUDGET,
    k: int = TOP_K,
    reranker: Reranker | None = None,
) -> FactResult:
    """Run one deleter on a fresh copy of the fact's episode and score it."""
    start = time.perf_counter()
    error = None
    deletion = Deletion()
    with fresh_store(built, embedder) as mem:
        before = turn_texts(mem)
        case = Case(mem, fact, built, before, pool_size, budget, reranker)
        try:
            deletion = DELETERS[system](case)
        except Exception as exc:  # a failing deleter is a result, not a crash
            # The type only: an exception message could quote stored text.
            error = type(exc).__name__
        after = turn_texts(mem)
        native_value, native_trail = native_recovery(mem, fact, built, k)
    gone = {built.key[u] for u in before.keys() - after.keys()}
    pool_keys = [built.key.get(u, u) for u in deletion.pool]
    in_pool = set(pool_keys) & set(fact.evidence)
    return FactResult(
        system=system,
        fact=fact.id,
        type=fact.type,
        frame=fact.frame,
        episode=fact.episode,
        minimal_cut=fact.minimal_cut,
        evidence=len(fact.evidence),
        deleted=sorted(gone),
        score=score_deletion(fact, gone),
        native_value=native_value,
        native_trail=native_trail,
        pool=pool_keys,
        pool_evidence=len(in_pool),
        pool_has_cut=(
            all(in_pool & set(s) for s in fact.sufficient_sets) if system in ("s1", "s2") else None
        ),
        rewritten=sum(1 for u, text in after.items() if u in before and before[u] != text),
        new_turns=len(after.keys() - before.keys()),
        report=deletion.report,
        error=error,
        seconds=time.perf_counter() - start,
    )


# -- aggregation --------------------------------------------------------------
def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _rate(passed: int, n: int) -> dict[str, Any]:
    return {
        "pass": passed,
        "n": n,
        "rate": round(100 * passed / n, 1) if n else None,
        "wilson": list(wilson(passed, n)),
    }


def aggregate(results: Sequence[FactResult]) -> dict[str, Any]:
    """Aggregates of a list of fact results (one deleter)."""
    n = len(results)
    scores = [r.score for r in results]
    beyond = sum(s.beyond_disclosure for s in scores)
    per = [s.off_target_fraction for s in scores if s.off_target_fraction is not None]
    pooled = [r for r in results if r.pool_has_cut is not None]
    out: dict[str, Any] = {
        "facts": n,
        "forgotten": _rate(sum(s.forgotten for s in scores), n),
        "disclosure_deleted": _rate(sum(s.disclosure_deleted for s in scores), n),
        "sets_hit_share": _mean([s.sets_hit / s.sets for s in scores if s.sets]),
        "minimal_cut": _mean([r.minimal_cut for r in results]),
        "chosen_cut": _mean([s.chosen_cut for s in scores]),
        "deleted": _mean([s.deleted for s in scores]),
        "off_target_pooled": round(100 * sum(s.off_target for s in scores) / beyond, 1)
        if beyond
        else None,
        "off_target_mean": round(100 * sum(per) / len(per), 1) if per else None,
        "distractors_deleted": _mean([s.distractors_deleted for s in scores]),
        "native": _rate(sum(r.native for r in results), n),
        "native_value": _rate(sum(r.native_value for r in results), n),
        "errors": sum(r.error is not None for r in results),
        "rewritten_turns": sum(r.rewritten for r in results),
    }
    if pooled:
        out["pool_evidence"] = _mean([r.pool_evidence for r in pooled])
        out["pool_has_cut"] = _rate(sum(bool(r.pool_has_cut) for r in pooled), len(pooled))
    return out


def target_met(agg: dict[str, Any]) -> bool:
    """Issue #5's target: >= 90 % structurally forgotten, <= 20 % off-target."""
    rate, off = agg["forgotten"]["rate"], agg["off_target_pooled"]
    return (
        rate is not None and rate >= TARGET_FORGOTTEN and (off is None or off <= TARGET_OFF_TARGET)
    )


@dataclass
class SystemRun:
    """One deleter over every fact (or why it could not run)."""

    name: str
    status: str
    results: list[FactResult] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Status, overall and per-type aggregates."""
        out: dict[str, Any] = {"status": self.status, "seconds": round(self.seconds, 1)}
        if self.status == "ok":
            out["total"] = aggregate(self.results)
            out["total"]["target_met"] = target_met(out["total"])
            out["types"] = {
                t: aggregate([r for r in self.results if r.type == t])
                for t in TYPES
                if any(r.type == t for r in self.results)
            }
            out["frames"] = {
                f: aggregate([r for r in self.results if r.frame == f])
                for f in sorted({r.frame for r in self.results})
            }
        return out


@dataclass
class Report:
    """Everything one run produced."""

    episodes: list[Episode]
    runs: list[SystemRun]
    before: SystemRun
    seed: int
    pool: int
    budget: int
    k: int
    embedder: str
    ingest_seconds: float
    seconds: float
    network_attempts: list[str]
    revision: str | None
    write_episodes: bool = False  # episodes.json: 2-3 MB, regenerable from the seed
    source: str | None = None  # the episode file, when not generated
    false_alarms: list[str] = field(default_factory=list)  # turns read as requests at ingest

    @property
    def facts(self) -> list[Fact]:
        """Every fact, episode by episode."""
        return [f for ep in self.episodes for f in ep.facts]

    def data_summary(self) -> dict[str, Any]:
        """Statistics of the generated data, overall and per type."""

        def stats(facts: Sequence[Fact]) -> dict[str, Any]:
            cuts = [f.minimal_cut for f in facts]
            return {
                "facts": len(facts),
                "evidence_mean": _mean([len(f.evidence) for f in facts]),
                "evidence_range": [
                    min(len(f.evidence) for f in facts),
                    max(len(f.evidence) for f in facts),
                ],
                "sets_mean": _mean([len(f.sufficient_sets) for f in facts]),
                "set_size_mean": _mean([len(s) for f in facts for s in f.sufficient_sets]),
                "minimal_cut_mean": _mean(cuts),
                "minimal_cut_counts": {str(c): cuts.count(c) for c in sorted(set(cuts))},
                "distractors_mean": _mean([len(f.distractors) for f in facts]),
                "frames": sorted({f.frame for f in facts}),
            }

        facts = self.facts
        turns = [t for ep in self.episodes for t in ep.turns()]
        return {
            "episodes": len(self.episodes),
            "sessions_per_episode": max(len(ep.sessions) for ep in self.episodes),
            "turns": len(turns),
            "user_turns": sum(t.role == "user" for t in turns),
            "filler_turns": sum(t.label == "filler" for t in turns),
            "digest": digest(self.episodes),
            "total": stats(facts),
            "types": {t: stats([f for f in facts if f.type == t]) for t in TYPES},
        }

    def summary(self) -> dict[str, Any]:
        """JSON-ready aggregates of the run."""
        return {
            "benchmark": "trails",
            "revision": self.revision,
            "seed": self.seed,
            "pool": self.pool,
            "budget": self.budget,
            "k": self.k,
            "embedder": self.embedder,
            "targets": {"forgotten_min": TARGET_FORGOTTEN, "off_target_max": TARGET_OFF_TARGET},
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "platform": platform.platform(),
            },
            "seconds": round(self.seconds, 1),
            "ingest_seconds": round(self.ingest_seconds, 1),
            "ingest_false_alarms": self.false_alarms,
            "network_attempts": len(self.network_attempts),
            "data": self.data_summary(),
            "before": self.before.summary(),
            "systems": {r.name: r.summary() for r in self.runs},
        }


# -- running ------------------------------------------------------------------
def run_benchmark(
    episodes: Sequence[Episode],
    systems: Sequence[str],
    *,
    seed: int = 0,
    embedder: str | Embedder = "minilm",
    pool: int = POOL,
    budget: int = BUDGET,
    k: int = TOP_K,
    reranker: Reranker | None = None,
    progress: Callable[[str], None] | None = None,
    guard: bool = True,
) -> Report:
    """Ingest each episode once, then run every deleter (and the
    no-deletion pass) on a fresh copy per fact. ``reranker`` replaces S2's
    similarity rerank (e.g. an LLM); the default keeps the run offline."""
    say = progress or (lambda _msg: None)
    emb = make_embedder(embedder)
    attempts: list[str] = []
    start = time.perf_counter()
    runnable = [s for s in systems if not s.startswith("unrecall") or unrecall_available()]
    runs = {s: SystemRun(s, "ok" if s in runnable else UNAVAILABLE) for s in systems}
    before = SystemRun(BEFORE, "ok")
    ingest_seconds = 0.0
    alarms: list[str] = []
    guarded = network_guard() if guard else _no_guard()
    with tempfile.TemporaryDirectory(prefix="unrecall-trails-base-") as base, guarded as seen:
        for ep in steps(progress, episodes, "episodes", "episode"):
            built = ingest(ep, Path(base), emb)
            ingest_seconds += built.seconds
            alarms += built.false_alarms
            for fact in ep.facts:
                before.results.append(
                    evaluate(BEFORE, fact, built, emb, pool_size=pool, budget=budget, k=k)
                )
                for s in runnable:
                    r = evaluate(
                        s, fact, built, emb, pool_size=pool, budget=budget, k=k, reranker=reranker
                    )
                    runs[s].results.append(r)
                    runs[s].seconds += r.seconds
            done = {
                s: sum(r.score.forgotten for r in runs[s].results if r.episode == ep.id)
                for s in runnable
            }
            say(
                f"{ep.id}: {len(ep.turns())} turns ingested in {built.seconds:.1f} s; forgotten "
                + ", ".join(f"{s} {n}/{len(ep.facts)}" for s, n in done.items())
            )
            built.template.unlink(missing_ok=True)
        attempts += list(seen)
    if "unrecall" in systems and "unrecall" not in runnable:
        say(f"unrecall: {UNAVAILABLE}")
    return Report(
        list(episodes),
        [runs[s] for s in systems],
        before,
        seed,
        pool,
        budget,
        k,
        emb.name,
        ingest_seconds,
        time.perf_counter() - start,
        attempts,
        revision(),
        false_alarms=alarms,
    )


@contextmanager
def _no_guard() -> Iterator[list[str]]:
    yield []


# -- rendering ----------------------------------------------------------------
def _pct(rate: dict[str, Any] | None) -> str:
    if not rate or not rate["n"]:
        return "–"
    return f"{rate['rate']:.1f}% ({rate['pass']}/{rate['n']})"


def _wil(rate: dict[str, Any]) -> str:
    lo, hi = rate["wilson"]
    return f"[{lo:.1f}, {hi:.1f}]"


def _num(x: float | None, fmt: str = "{:.2f}") -> str:
    return "–" if x is None else fmt.format(x)


def _off(agg: dict[str, Any]) -> str:
    return (
        f"{_num(agg['off_target_pooled'], '{:.1f}%')} / {_num(agg['off_target_mean'], '{:.1f}%')}"
    )


NOTES = {
    "s0": "deletes the disclosure turn(s) (from the annotations) with `Memory.delete`; "
    "closure removes every memory derived from them.",
    "s1": "S0, then `Memory.search(request)` hits mapped in rank order to their distinct "
    "source turns (disclosure excluded): a pool of {pool}, the first {budget} deleted.",
    "s2": "S0, then the same pool of {pool} reranked and the first {budget} deleted. The "
    "rerank is deterministic: each pool turn scored by the larger of its cosine similarity "
    "(same MiniLM) to the request and to the disclosure text; it stands in for the paper's "
    "LLM rerank (`run_benchmark(reranker=...)` takes an LLM one).",
    "unrecall": "`Memory.forget(request, user_id=...)` with the request text only: it has to "
    "find the disclosure and the trail itself.",
    "unrecall-chat": "the request said as a user message to `Memory.add`: it has to read it "
    "as a request, then find the disclosure and the trail itself.",
}


def render_markdown(report: Report, command: str | None = None) -> str:
    """The summary section: data, overall table, per-type table, notes."""
    s = report.summary()
    data = s["data"]
    ok = [r for r in report.runs if r.status == "ok"]
    data_option = (
        f"--episodes-file {report.source}"
        if report.source
        else f"--facts-per-type {len(report.episodes)} --seed {report.seed}"
    )
    cmd = command or (
        f"unrecall bench trails {data_option} --systems {','.join(r.name for r in report.runs)}"
    )
    before = s["before"]["total"]
    per_type = ", ".join(f"{data['types'][t]['facts']} {TYPE_LABELS[t]}" for t in TYPES)
    lines = [
        "## Trails (issue #5)",
        "",
        f"`{cmd}`: MemCut-style evidence trails on {data['total']['facts']} protected facts "
        f"({per_type}) in "
        f"{data['episodes']} {'hand-written' if report.source else 'generated'} episodes of "
        f"{data['sessions_per_episode']} sessions "
        f"({data['turns']} turns, {data['user_turns']} of them user turns; seed {report.seed}, "
        f"data digest `{data['digest']}`). Each fact has one disclosure turn, "
        f"{data['total']['evidence_range'][0]}-{data['total']['evidence_range'][1]} evidence "
        f"turns (mean {data['total']['evidence_mean']}) in earlier sessions, "
        f"{data['total']['sets_mean']} enumerated minimal sufficient sets on average "
        f"(mean size {data['total']['set_size_mean']}), a minimal cut of "
        f"{data['total']['minimal_cut_mean']} turns on average and "
        f"{data['total']['distractors_mean']} distractors. Every (fact, deleter) pair runs on a "
        "fresh copy of its ingested episode; deletions are the source turns gone afterwards. "
        f"*Structurally forgotten* = disclosure deleted and every sufficient set hit; "
        f"*off-target* = deleted turns that are neither the fact's evidence nor its disclosure, "
        f"over deleted turns beyond the disclosure (pooled / mean per fact); *native recovery* = "
        "the fact's value, or a hit derived from its evidence or disclosure, in the "
        f"top-{report.k} for the fact's question. "
        f"Revision `{s['revision'] or 'unknown'}`, embedder `{report.embedder}`, pool "
        f"{report.pool}, budget {report.budget}; {os.cpu_count()} CPU cores, Python "
        f"{platform.python_version()}; {s['seconds']} s in all ({s['ingest_seconds']} s "
        f"ingest); network attempts during the run: {s['network_attempts']}. User turns read "
        f"as forget requests while ingesting (executed, as for a user): "
        f"{len(report.false_alarms)}.",
        "",
        f"Native recovery before any deletion: {_pct(before['native'])}.",
        "",
        "| Deleter | Structurally forgotten | Wilson 95% | Disclosure deleted | Minimal cut "
        "| Chosen cut | Turns deleted | Off-target (pooled / mean) | Native recovery after "
        "| Target met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in report.runs:
        if run.status != "ok":
            lines.append(f"| {run.name} | {run.status} | | | | | | | | |")
            continue
        t = s["systems"][run.name]["total"]
        lines.append(
            f"| {run.name} | {_pct(t['forgotten'])} | {_wil(t['forgotten'])} | "
            f"{_pct(t['disclosure_deleted'])} | "
            f"{_num(t['minimal_cut'])} | {_num(t['chosen_cut'])} | {_num(t['deleted'])} | "
            f"{_off(t)} | {_pct(t['native'])} | {'yes' if t['target_met'] else 'no'} |"
        )
    lines += [
        "",
        f"Target (issue #5): structurally forgotten >= {TARGET_FORGOTTEN:.0f} % of facts with "
        f"off-target <= {TARGET_OFF_TARGET:.0f} % (pooled).",
        "",
    ]
    if ok:
        lines += [
            "Per derivation type (n = facts; native recovery before -> after; for s1/s2 the "
            "evidence turns in the pool and how often the pool holds a complete cut):",
            "",
            "| Type | Deleter | Forgotten | Minimal cut | Chosen cut | Deleted "
            "| Off-target (pooled / mean) | Native before -> after | Pool evidence / holds a cut |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for t in TYPES:
            nb = s["before"]["types"].get(t)
            for run in ok:
                a = s["systems"][run.name]["types"].get(t)
                if not a:
                    continue
                reach = (
                    f"{_num(a['pool_evidence'])} / {_pct(a['pool_has_cut'])}"
                    if "pool_evidence" in a
                    else "–"
                )
                lines.append(
                    f"| {TYPE_LABELS[t]} (n={a['facts']}) | {run.name} | {_pct(a['forgotten'])} | "
                    f"{_num(a['minimal_cut'])} | {_num(a['chosen_cut'])} | {_num(a['deleted'])} | "
                    f"{_off(a)} | {nb['native']['rate'] if nb else '–'}% -> "
                    f"{a['native']['rate']}% | {reach} |"
                )
        lines.append("")
        frames = sorted(
            {f.frame: f.type for f in report.facts}.items(), key=lambda x: (TYPES.index(x[1]), x[0])
        )
        lines += [
            "Per scenario frame (structurally forgotten % / off-target % pooled):",
            "",
            "| Frame | Type | n | " + " | ".join(r.name for r in ok) + " |",
            "| --- | --- | --- |" + " --- |" * len(ok),
        ]
        for frame, t in frames:
            aggs = [s["systems"][r.name]["frames"].get(frame) for r in ok]
            n = max(a["facts"] for a in aggs if a)
            cells = [
                f"{a['forgotten']['rate']:.0f} / {_num(a['off_target_pooled'], '{:.0f}')}"
                if a
                else "–"
                for a in aggs
            ]
            lines.append(f"| {frame} | {TYPE_LABELS[t]} | {n} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "Generated data per type:",
        "",
        "| Type | Frames | Evidence (mean, range) | Sufficient sets | Set size | Minimal cut "
        "(mean; counts) | Distractors |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for t in TYPES:
        d = data["types"][t]
        counts = ", ".join(f"{c}: {n}" for c, n in d["minimal_cut_counts"].items())
        lines.append(
            f"| {TYPE_LABELS[t]} | {', '.join(d['frames'])} | {d['evidence_mean']} "
            f"({d['evidence_range'][0]}-{d['evidence_range'][1]}) | {d['sets_mean']} | "
            f"{d['set_size_mean']} | {d['minimal_cut_mean']} ({counts}) | {d['distractors_mean']} |"
        )
    lines += ["", "How each deleter runs:", ""]
    for run in report.runs:
        note = NOTES.get(run.name, "custom deleter.").format(pool=report.pool, budget=report.budget)
        lines.append(f"- **{run.name}**: {note}")
    errors = {r.name: s["systems"][r.name]["total"]["errors"] for r in ok}
    if any(errors.values()):
        lines.append(
            "- Deleter errors (counted as what they left deleted): "
            + ", ".join(f"{n} {c}" for n, c in errors.items() if c)
        )
    lines.append("")
    return "\n".join(lines)


def write_outputs(report: Report, out: Path) -> dict[str, Path]:
    """Write summary.md, summary.json, facts.json (and, when the report asks
    for it, episodes.json) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "summary_md": out / "summary.md",
        "summary_json": out / "summary.json",
        "facts": out / "facts.json",
    }
    if report.write_episodes:
        paths["episodes"] = out / "episodes.json"
    by_id = {f.id: f for f in report.facts}
    rows = [r.to_row(by_id[r.fact]) for run in [report.before, *report.runs] for r in run.results]
    paths["facts"].write_text(
        "[\n"
        + ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in rows)
        + "\n]\n",
        encoding="utf-8",
    )
    if report.write_episodes:
        paths["episodes"].write_text(
            json.dumps(episodes_json(report.episodes), ensure_ascii=False, separators=(",", ":"))
            + "\n",
            encoding="utf-8",
        )
    paths["summary_json"].write_text(
        json.dumps(
            {**report.summary(), "network_attempt_list": report.network_attempts[:50]},
            indent=1,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    paths["summary_md"].write_text(render_markdown(report), encoding="utf-8")
    return paths


# -- command line -------------------------------------------------------------
def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``unrecall bench trails``."""
    p.add_argument(
        "--facts-per-type",
        type=int,
        default=DEFAULT_FACTS,
        metavar="N",
        help=f"facts per derivation type = episodes (default: {DEFAULT_FACTS})",
    )
    p.add_argument("--seed", type=int, default=0, help="generator seed (default: 0)")
    p.add_argument(
        "--episodes-file",
        metavar="PATH",
        help="run on the episodes of this JSON file (e.g. written by outside authors) "
        "instead of generating them; --facts-per-type, --seed and --filler are then unused",
    )
    p.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"comma-separated deleters (default: {','.join(SYSTEMS)})",
    )
    p.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"output folder (default: {DEFAULT_OUT})"
    )
    p.add_argument(
        "--pool", type=int, default=POOL, help=f"S1/S2 candidate pool in turns (default: {POOL})"
    )
    p.add_argument(
        "--budget", type=int, default=BUDGET, help=f"S1/S2 deletions (default: {BUDGET})"
    )
    p.add_argument(
        "-k",
        "--k",
        dest="k",
        type=int,
        default=TOP_K,
        help=f"native-recovery depth (default: {TOP_K})",
    )
    p.add_argument(
        "--filler",
        type=int,
        default=DEFAULT_FILLER,
        help=f"unrelated user turns per episode (default: {DEFAULT_FILLER})",
    )
    p.add_argument(
        "--embedder",
        default="minilm",
        choices=["minilm", "hashing"],
        help="embedder of the stores (default: minilm; hashing only for quick checks)",
    )
    p.add_argument(
        "--episodes",
        action="store_true",
        help="also write episodes.json: the generated turns and annotations (2-3 MB)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines or bars on stderr")


def check_arguments(args: argparse.Namespace) -> str | None:
    """The first problem with the numeric options, or None."""
    if args.facts_per_type < 1:
        return "--facts-per-type must be at least 1"
    if args.pool < 1 or args.budget < 1 or args.budget > args.pool:
        return "--pool and --budget must be at least 1, with --budget <= --pool"
    if args.k < 1 or args.k > 1000:
        return "-k must be between 1 and 1000"
    if args.filler < 0:
        return "--filler must not be negative"
    return None


def run_cli(args: argparse.Namespace) -> int:
    """Run the benchmark from parsed arguments; 0 on success, 2 on bad input."""
    systems = chosen_systems(args.systems, SYSTEMS)
    if systems is None:
        return 2
    problem = check_arguments(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    progress = reporter(args)
    source = getattr(args, "episodes_file", None)
    if source:
        try:
            episodes = load_episodes(source)
        except (OSError, ValueError) as e:  # AnnotationError is a ValueError
            print(f"error: {source}: {e}", file=sys.stderr)
            return 2
    else:
        episodes = generate(args.facts_per_type, args.seed, args.filler)
    facts = sum(len(ep.facts) for ep in episodes)
    progress(
        f"{'loaded' if source else 'generated'} {len(episodes)} episodes, {facts} facts "
        f"(digest {digest(episodes)})"
    )
    report = run_benchmark(
        episodes,
        systems,
        seed=args.seed,
        embedder=args.embedder,
        pool=args.pool,
        budget=args.budget,
        k=args.k,
        progress=progress,
    )
    report.write_episodes = bool(getattr(args, "episodes", False))
    report.source = source
    return finish(report, Path(args.out), write_outputs, progress)

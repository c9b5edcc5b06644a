"""``unrecall bench locomo``: retrieval-level LoCoMo, no LLM.

LoCoMo (Maharana et al., ACL 2024) holds long two-person conversations with
questions whose evidence is a set of turns (``dia_id`` such as ``D3:7``).
Protocol, per system and per conversation: start an empty memory, ingest
every turn in order (sessions by number) as one document
``"Speaker: text"`` (image fields are ignored; unrecall also gets the
session's date as the turn's timestamp), then for each question of
categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5,
adversarial, is left out) search the question once for the top 10 and map
each result to its turn. The results' turns are deduplicated in rank order
(two results from one turn count once; the list is not refilled), and
recall@k is the fraction of the question's evidence turns among the turns
of the first k results, hit@k whether any is there. recall@5 uses the first
5 of the same top-10 list. Means are over questions, per category and
overall.

Evidence strings are cleaned by :func:`clean_evidence` (split "D8:6; D9:17"
into two ids, "D:11:26" becomes "D11:26", whitespace removed); ids that then
name no turn of the conversation are dropped, and a question left with no
evidence is skipped. The counts of repaired strings, dropped ids and
skipped questions are reported with the results.

Systems share one MiniLM embedder: ``unrecall`` (hybrid search over the
memories it derives from each turn), ``bm25`` (``rank_bm25.BM25Okapi`` over
lowercase ``\\w+`` words), ``dense`` (exact cosine), ``rrf`` (reciprocal-rank
fusion of bm25 and dense, constant 60 over each one's top 100) and the peers
``langgraph``, ``mem0`` and ``chroma`` through their ForgetEval adapters.
Every ingest and search call is timed; a baseline's index build after the
last turn is spread evenly over that conversation's turns. The dataset is
CC BY-NC: outputs (``summary.json``, ``summary.md``, ``per_qa.json``) hold
only ids and numbers, never its text.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from unrecall.bench.common import (
    chosen_systems,
    finish,
    network_guard,
    reporter,
    revision,
)
from unrecall.bench.peers import (
    PeerUnavailable,
    make_adapter,
    shared_minilm,
    start_system,
    system_version,
)
from unrecall.progress import steps

SYSTEMS = ("unrecall", "bm25", "dense", "rrf", "langgraph", "mem0", "chroma")
PEERS = ("langgraph", "mem0", "chroma")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
TOP_K = 10  # one search per question; recall@5 reads its first five
RRF_K = 60
RRF_DEPTH = 100
METRICS = ("recall@5", "recall@10", "hit@10")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
# src/unrecall/bench/locomo.py -> the repository root is three folders up.
_REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_DATA = _REPO_ROOT / ".." / "shared" / "datasets" / "locomo" / "locomo_dev5.json"
DEFAULT_OUT = Path("bench/results/locomo")

_ID = re.compile(r"D(\d+):(\d+)")
_COLON_AFTER_D = re.compile(r"D:(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


class LocomoDataError(ValueError):
    """A data file that is missing or not in the LoCoMo schema."""


# -- data ----------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """One turn: its dia_id, the document ``"Speaker: text"`` and the
    session's time in epoch seconds (UTC)."""

    dia_id: str
    doc: str
    timestamp: float | None


@dataclass(frozen=True)
class QA:
    """One scored question: its index in the file's ``qa`` list, category,
    text (kept in memory only, never written) and cleaned evidence."""

    index: int
    category: int
    question: str
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    """A conversation's turns in order and its scored questions."""

    sample_id: str
    turns: list[Turn]
    qas: list[QA]


@dataclass
class Cleaning:
    """What loading did to the evidence, summed over the conversations read."""

    evidence_strings: int = 0
    repaired: int = 0
    unknown_ids_dropped: int = 0
    qa_no_evidence_skipped: int = 0
    qa_category5_left_out: int = 0
    qa_other_category_left_out: int = 0
    qa_scored: int = 0


def _clean_one(raw: str) -> list[str]:
    out = []
    for piece in re.split(r"[;,]", raw):
        piece = "".join(piece.split())
        if piece:
            out.append(_COLON_AFTER_D.sub(r"D\1:\2", piece))
    return out


def clean_evidence(raw: list[str]) -> list[str]:
    """Normalise a QA's evidence strings into dia_ids.

    Each string is split on ``;`` and ``,`` ("D8:6; D9:17" holds two ids),
    every whitespace character is removed from each piece ("D 3:4" and
    " D3:4 " become "D3:4"), and a colon straight after the ``D`` is
    dropped ("D:11:26" becomes "D11:26"). Empty pieces vanish; an id given
    twice is kept once, in first-seen order. A piece that still is not of
    the form ``D<session>:<turn>`` (a bare "D") is returned unchanged, so
    the caller's check against the conversation's turns drops and counts it.
    """
    seen: dict[str, None] = {}
    for s in raw:
        for piece in _clean_one(str(s)):
            seen.setdefault(piece, None)
    return list(seen)


def parse_session_time(text: str) -> float:
    """Epoch seconds of a ``session_N_date_time`` such as "1:56 pm on 8 May,
    2023", read as UTC; ``LocomoDataError`` when it does not parse."""
    try:
        return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=UTC).timestamp()
    except (ValueError, AttributeError):
        raise LocomoDataError(
            f"session time {text!r} is not like '1:56 pm on 8 May, 2023'"
        ) from None


def _turns(sample_id: str, conv: dict[str, Any]) -> list[Turn]:
    # Sessions by number: "session_10" sorts after "session_9".
    numbers = sorted(
        int(m.group(1))
        for key, value in conv.items()
        if (m := _SESSION.fullmatch(key)) and isinstance(value, list)
    )
    turns = []
    for n in numbers:
        when = conv.get(f"session_{n}_date_time")
        at = parse_session_time(when) if when is not None else None
        for t in conv[f"session_{n}"]:
            try:
                turns.append(Turn(str(t["dia_id"]), f"{t['speaker']}: {t['text']}", at))
            except (KeyError, TypeError):
                raise LocomoDataError(f"{sample_id}: session_{n} has a turn without "
                                      "speaker, dia_id or text") from None  # fmt: skip
    return turns


def parse_conversation(item: dict[str, Any], cleaning: Cleaning) -> Conversation:
    """One conversation of the data file, with its scoreable questions (the
    rules are in the module docstring); ``cleaning`` collects the counts."""
    try:
        sample_id = str(item["sample_id"])
        conv, qa_list = item["conversation"], item["qa"]
    except (KeyError, TypeError):
        raise LocomoDataError("a conversation lacks sample_id, conversation or qa") from None
    turns = _turns(sample_id, conv)
    known = {t.dia_id for t in turns}
    qas = []
    for i, qa in enumerate(qa_list):
        category = qa.get("category")
        if category == ADVERSARIAL:
            cleaning.qa_category5_left_out += 1
            continue
        if category not in CATEGORIES:
            cleaning.qa_other_category_left_out += 1
            continue
        raw = [str(s) for s in qa.get("evidence") or []]
        cleaning.evidence_strings += len(raw)
        cleaning.repaired += sum(_clean_one(s) != [s] for s in raw)
        ids = clean_evidence(raw)
        valid = tuple(e for e in ids if e in known)
        cleaning.unknown_ids_dropped += len(ids) - len(valid)
        if not valid:
            cleaning.qa_no_evidence_skipped += 1
            continue
        qas.append(QA(i, int(category), str(qa.get("question", "")), valid))
    return Conversation(sample_id, turns, qas)


def load_locomo(
    path: Path, *, conversations: int | None = None, limit_qa: int | None = None
) -> tuple[list[Conversation], Cleaning]:
    """Read a LoCoMo JSON file: the first ``conversations`` conversations
    (all by default), at most ``limit_qa`` scored questions each. The
    cleaning counts cover every question of the conversations read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LocomoDataError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise LocomoDataError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, list):
        raise LocomoDataError(f"{path}: expected a list of conversations")
    cleaning = Cleaning()
    convs = [parse_conversation(item, cleaning) for item in data[:conversations]]
    for c in convs:
        c.qas = c.qas[:limit_qa]
        cleaning.qa_scored += len(c.qas)
    return convs, cleaning


# -- systems -------------------------------------------------------------------
def tokenize(text: str) -> list[str]:
    """BM25 words: lowercase ``\\w+`` runs, no stopword list."""
    return re.findall(r"\w+", text.lower())


class Retriever(Protocol):
    """What the harness drives: ``add`` returns the keys of what one turn
    became, ``search`` keys in rank order."""

    def reset(self) -> None: ...
    def add(self, turn: Turn) -> list[str]: ...
    def finish_ingest(self) -> None: ...
    def search(self, question: str, k: int) -> list[str]: ...
    def close(self) -> None: ...


def _top(scores: np.ndarray, k: int) -> list[int]:
    # Stable sort: equal scores keep turn order, so runs are reproducible.
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


class BM25Retriever:
    """``rank_bm25.BM25Okapi`` over one document per turn (default k1, b)."""

    def __init__(self) -> None:
        try:
            from rank_bm25 import BM25Okapi
        except ImportError as exc:
            raise PeerUnavailable("not installed (pip install rank-bm25)") from exc
        self._okapi = BM25Okapi
        self.reset()

    def reset(self) -> None:
        """Forget the corpus."""
        self._ids: list[str] = []
        self._docs: list[list[str]] = []
        self._index: Any = None

    def add(self, turn: Turn) -> list[str]:
        """Tokenize the turn; the index is built by ``finish_ingest``."""
        self._ids.append(turn.dia_id)
        self._docs.append(tokenize(turn.doc))
        return [turn.dia_id]

    def finish_ingest(self) -> None:
        """Build the BM25 index (its statistics need the whole corpus)."""
        self._index = self._okapi(self._docs) if self._docs else None

    def scores(self, question: str) -> np.ndarray:
        """BM25 score of every turn for the question."""
        if self._index is None:
            return np.zeros(0)
        return np.asarray(self._index.get_scores(tokenize(question)), dtype=float)

    def search(self, question: str, k: int) -> list[str]:
        """Top-``k`` turns by BM25 score."""
        return [self._ids[i] for i in _top(self.scores(question), k)]

    def close(self) -> None:
        """Nothing to release."""


class DenseRetriever:
    """Exact cosine over the shared MiniLM's unit vectors, one per turn."""

    def __init__(self) -> None:
        self._embedder = shared_minilm()
        self.reset()

    def reset(self) -> None:
        """Forget the corpus."""
        self._ids: list[str] = []
        self._vecs: list[np.ndarray] = []
        self._matrix = np.zeros((0, 384), dtype=np.float32)

    def add(self, turn: Turn) -> list[str]:
        """Embed the turn (one call per turn, as every other system does)."""
        self._ids.append(turn.dia_id)
        self._vecs.append(self._embedder.embed([turn.doc])[0])
        return [turn.dia_id]

    def finish_ingest(self) -> None:
        """Stack the vectors into one matrix."""
        if self._vecs:
            self._matrix = np.stack(self._vecs)

    def scores(self, question: str) -> np.ndarray:
        """Cosine of every turn with the question."""
        if not self._ids:
            return np.zeros(0)
        return self._matrix @ self._embedder.embed([question])[0]

    def search(self, question: str, k: int) -> list[str]:
        """Top-``k`` turns by cosine."""
        return [self._ids[i] for i in _top(self.scores(question), k)]

    def close(self) -> None:
        """Nothing to release."""


class RRFRetriever:
    """Reciprocal-rank fusion of ``bm25`` and ``dense``: each turn scores
    ``sum 1 / (60 + rank)`` over the two rankings' top 100 (rank from 1)."""

    def __init__(self) -> None:
        self._bm25 = BM25Retriever()
        self._dense = DenseRetriever()

    def reset(self) -> None:
        """Forget both corpora."""
        self._bm25.reset()
        self._dense.reset()

    def add(self, turn: Turn) -> list[str]:
        """Add the turn to both rankers."""
        self._bm25.add(turn)
        return self._dense.add(turn)

    def finish_ingest(self) -> None:
        """Build both indexes."""
        self._bm25.finish_ingest()
        self._dense.finish_ingest()

    def search(self, question: str, k: int) -> list[str]:
        """Top-``k`` turns by fused score (ties: earlier turn first)."""
        fused: dict[str, float] = {}
        for ranking in (
            self._bm25.search(question, RRF_DEPTH),
            self._dense.search(question, RRF_DEPTH),
        ):
            for rank, key in enumerate(ranking, 1):
                fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank)
        order = {key: i for i, key in enumerate(self._dense._ids)}
        return sorted(fused, key=lambda key: (-fused[key], order[key]))[:k]

    def close(self) -> None:
        """Nothing to release."""


class UnrecallRetriever:
    """unrecall's ``Memory`` in a temp folder: one store for the run, a fresh
    user per conversation (tenants share nothing recall can see)."""

    def __init__(self) -> None:
        from unrecall.memory import Memory

        self._dir = Path(tempfile.mkdtemp(prefix="unrecall-locomo-"))
        self._mem = Memory(self._dir / "locomo.db", embedder=shared_minilm())
        self._n = 0
        self.user = ""
        self.reset()

    def reset(self) -> None:
        """Move on to a new, empty tenant."""
        self._n += 1
        self.user = f"locomo-{self._n}"

    def add(self, turn: Turn) -> list[str]:
        """Remember the turn; every memory derived from it maps to it."""
        return list(self._mem.add(turn.doc, user_id=self.user, timestamp=turn.timestamp).ids)

    def finish_ingest(self) -> None:
        """Nothing to build: memories are searchable as soon as added."""

    def search(self, question: str, k: int) -> list[str]:
        """Memory ids of the top-``k`` hybrid hits."""
        return [h.id for h in self._mem.search(question, user_id=self.user, k=k)]

    def close(self) -> None:
        """Close the store and delete its folder."""
        self._mem.close()
        shutil.rmtree(self._dir, ignore_errors=True)


class PeerRetriever:
    """A ForgetEval peer adapter driven through its store's own add and
    search (``_add``, ``_hits``): only the recall plane is used here."""

    def __init__(self, name: str) -> None:
        self._adapter: Any = make_adapter(name)

    def reset(self) -> None:
        """The adapter's empty store."""
        self._adapter.reset()

    def add(self, turn: Turn) -> list[str]:
        """Add the turn's document; its store id maps to the turn."""
        return [str(self._adapter._add(turn.doc))]

    def finish_ingest(self) -> None:
        """Nothing to build."""

    def search(self, question: str, k: int) -> list[str]:
        """Store ids of the top-``k`` hits."""
        return [str(key) for key, _ in self._adapter._hits(question, k)]

    def close(self) -> None:
        """Close the adapter when it can be."""
        close = getattr(self._adapter, "close", None)
        if callable(close):
            close()


def make_retriever(name: str) -> Retriever:
    """Build the named system; ``PeerUnavailable`` when its package is
    missing, ``KeyError`` for an unknown name."""
    if name in PEERS:
        return PeerRetriever(name)
    builders: dict[str, Callable[[], Retriever]] = {
        "unrecall": UnrecallRetriever,
        "bm25": BM25Retriever,
        "dense": DenseRetriever,
        "rrf": RRFRetriever,
    }
    return builders[name]()


def _version(name: str) -> str | None:
    if name in ("bm25", "rrf"):
        try:
            return metadata.version("rank-bm25")
        except metadata.PackageNotFoundError:
            return None
    return system_version("unrecall" if name == "dense" else name)


# -- scoring -------------------------------------------------------------------
def distinct_turns(keys: Sequence[str], table: dict[str, list[str]]) -> list[str]:
    """The turns of ranked result keys, each once, in rank order; a key the
    table does not know is a result that is no evidence (it adds no turn)."""
    seen: dict[str, None] = {}
    for key in keys:
        for dia_id in table.get(key, ()):
            seen.setdefault(dia_id, None)
    return list(seen)


def score_qa(
    keys: Sequence[str], table: dict[str, list[str]], evidence: Sequence[str]
) -> dict[str, float]:
    """recall@5, recall@10 and hit@10 of one question's ranked result keys."""
    wanted = set(evidence)
    at5 = wanted.intersection(distinct_turns(keys[:5], table))
    at10 = wanted.intersection(distinct_turns(keys[:10], table))
    return {
        "recall@5": len(at5) / len(wanted),
        "recall@10": len(at10) / len(wanted),
        "hit@10": 1.0 if at10 else 0.0,
    }


@dataclass
class SystemRun:
    """One system's run: status ("ok", "not installed ...", "failed ..."),
    version, per-question scores and the timings (ms)."""

    name: str
    status: str
    version: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    ingest_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def run_system(
    name: str,
    conversations: Sequence[Conversation],
    *,
    factory: Callable[[str], Retriever] = make_retriever,
    progress: Callable[[str], None] | None = None,
) -> SystemRun:
    """Ingest and query every conversation on one system (protocol in the
    module docstring). A missing package yields "not installed ..."; an
    error mid-run yields "failed ..." and no scores (partial means would
    mislead)."""
    started = time.perf_counter()
    retriever, status, installed = start_system(factory, name)
    if retriever is None:
        return SystemRun(name, status, _version(name) if installed else None)
    run = SystemRun(name, "ok", _version(name))
    try:
        for conv in steps(progress, conversations, name, "conversation"):
            retriever.reset()
            table: dict[str, list[str]] = {}
            times = []
            for turn in conv.turns:
                t0 = time.perf_counter()
                keys = retriever.add(turn)
                times.append(_ms(t0))
                for key in keys:
                    table.setdefault(key, []).append(turn.dia_id)
            t0 = time.perf_counter()
            retriever.finish_ingest()
            build = _ms(t0) / max(1, len(times))  # an index build is ingest cost too
            run.ingest_ms += [t + build for t in times]
            for qa in conv.qas:
                t0 = time.perf_counter()
                keys = retriever.search(qa.question, TOP_K)
                run.search_ms.append(_ms(t0))
                row = {"sample_id": conv.sample_id, "qa": qa.index, "category": qa.category}
                run.rows.append(row | score_qa(keys, table, qa.evidence))
            if progress:
                mine = [r for r in run.rows if r["sample_id"] == conv.sample_id]
                mean = statistics.fmean(r["recall@10"] for r in mine) if mine else 0.0
                progress(f"{name} {conv.sample_id}: {len(conv.turns)} turns, "
                         f"{len(mine)} questions, recall@10 {mean:.3f}")  # fmt: skip
    except Exception as exc:  # one broken system must not end the run
        run.status = f"failed: {type(exc).__name__}: {exc}"[:300]
        run.rows = []
    finally:
        retriever.close()
    run.seconds = round(time.perf_counter() - started, 1)
    return run


@dataclass
class LocomoReport:
    """Everything a run produced, ready to be written and rendered."""

    data: Path
    conversations: list[Conversation]
    cleaning: Cleaning
    systems: list[SystemRun]
    network_attempts: list[str]
    revision: str | None = None

    def summary(self) -> dict[str, Any]:
        """Per system: status, per-category and overall means, timings."""
        qas = [q for c in self.conversations for q in c.qas]
        out: dict[str, Any] = {
            "benchmark": "locomo retrieval (no LLM)",
            "data": self.data.name,
            "revision": self.revision,
            "top_k": TOP_K,
            "conversations": [c.sample_id for c in self.conversations],
            "turns": sum(len(c.turns) for c in self.conversations),
            "questions": {CATEGORIES[n]: sum(q.category == n for q in qas) for n in CATEGORIES}
            | {"overall": len(qas)},
            "evidence_cleaning": vars(self.cleaning).copy(),
            "network_attempts": len(self.network_attempts),
            "systems": {},
        }
        for run in self.systems:
            block: dict[str, Any] = {
                "status": run.status,
                "version": run.version,
                "seconds": run.seconds,
            }
            if run.status == "ok":
                block["metrics"] = {
                    name: _means([r for r in run.rows if r["category"] == n])
                    for n, name in CATEGORIES.items()
                } | {"overall": _means(run.rows)}
                block["ingest_ms_per_turn"] = _percentiles(run.ingest_ms)
                block["search_ms_per_query"] = _percentiles(run.search_ms)
            out["systems"][run.name] = block
        return out


def _means(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    means: dict[str, Any] = {
        m: (round(statistics.fmean(r[m] for r in rows), 4) if rows else None) for m in METRICS
    }
    return means | {"n": len(rows)}


def _percentiles(ms: Sequence[float]) -> dict[str, Any]:
    if not ms:
        return {"p50": None, "p95": None, "n": 0}
    p50, p95 = np.percentile(np.asarray(ms), [50, 95])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "n": len(ms)}


def run_benchmark(
    conversations: Sequence[Conversation],
    cleaning: Cleaning,
    systems: Sequence[str],
    *,
    data: Path = DEFAULT_DATA,
    factory: Callable[[str], Retriever] = make_retriever,
    progress: Callable[[str], None] | None = None,
) -> LocomoReport:
    """Run the systems one after another (each has every CPU core), with
    every network connection refused and counted."""
    runs: list[SystemRun] = []
    attempts: list[str] = []
    for name in systems:
        with network_guard() as seen:
            runs.append(run_system(name, conversations, factory=factory, progress=progress))
        attempts += [f"{name}: {a}" for a in seen]
        if progress:
            progress(f"{name}: {runs[-1].status} ({runs[-1].seconds} s)")
    return LocomoReport(Path(data), list(conversations), cleaning, runs, attempts, revision())


# -- outputs -------------------------------------------------------------------
def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def render_markdown(report: LocomoReport) -> str:
    """The markdown summary: one table per metric (systems × categories and
    overall), then status and timings per system."""
    s = report.summary()
    c = s["evidence_cleaning"]
    n = s["questions"]
    lines = [
        "## LoCoMo retrieval (no LLM)",
        "",
        f"`unrecall bench locomo` on `{s['data']}`: {len(s['conversations'])} conversation(s) "
        f"({', '.join(s['conversations'])}), {s['turns']} turns ingested one document each, "
        f"{n['overall']} questions of categories 1–4 searched once for the top {TOP_K}; "
        "recall@k is the share of a question's evidence turns among the turns of the "
        "first k results, hit@10 whether any is there; means over questions. Evidence: "
        f"{c['evidence_strings']} strings, {c['repaired']} repaired, "
        f"{c['unknown_ids_dropped']} ids naming no turn dropped, "
        f"{c['qa_no_evidence_skipped']} questions left with no evidence skipped; "
        f"{c['qa_category5_left_out']} category-5 (adversarial) questions left out. "
        f"Revision {s['revision'] or 'unknown'}; network attempts during the run: "
        f"{s['network_attempts']}.",
        "",
    ]
    ran = [(name, b) for name, b in s["systems"].items() if "metrics" in b]
    columns = [*CATEGORIES.values(), "overall"]
    if ran:
        for metric in METRICS:
            lines += [
                f"### {metric}",
                "",
                "| System | " + " | ".join(f"{col} (n={n[col]})" for col in columns) + " |",
                "| --- |" + " --- |" * len(columns),
            ]
            for name, b in ran:
                cells = [_cell(b["metrics"][col][metric]) for col in columns]
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += [
        "### Systems",
        "",
        "| System | Version | Status | Ingest p50 / p95 ms per turn "
        "| Search p50 / p95 ms per query | Seconds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, b in s["systems"].items():
        ing, sea = b.get("ingest_ms_per_turn"), b.get("search_ms_per_query")
        timing = [f"{t['p50']} / {t['p95']}" if t and t["n"] else "–" for t in (ing, sea)]
        lines.append(
            f"| {name} | {b['version'] or '–'} | {b['status']} | {timing[0]} | {timing[1]} "
            f"| {b['seconds']} |"
        )
    lines.append("")
    return "\n".join(lines)


def write_outputs(report: LocomoReport, out: Path) -> dict[str, Path]:
    """Write summary.json, summary.md and per_qa.json (ids and numbers only)
    into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "summary_json": out / "summary.json",
        "summary_md": out / "summary.md",
        "per_qa": out / "per_qa.json",
    }
    summary = report.summary()
    summary["network_attempt_list"] = report.network_attempts[:50]
    paths["summary_json"].write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    paths["summary_md"].write_text(render_markdown(report), encoding="utf-8")
    # One row per question, scores per system: no question or answer text (CC BY-NC).
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for run in report.systems:
        for r in run.rows:
            row = rows.setdefault(
                (r["sample_id"], r["qa"]),
                {"sample_id": r["sample_id"], "qa": r["qa"], "category": r["category"]},
            )
            row.setdefault("recall@5", {})[run.name] = r["recall@5"]
            row.setdefault("recall@10", {})[run.name] = r["recall@10"]
    body = ",\n".join(json.dumps(r, separators=(",", ":")) for r in rows.values())
    paths["per_qa"].write_text("[\n" + body + "\n]\n", encoding="utf-8")
    return paths


# -- command line --------------------------------------------------------------
DEFAULT_SYSTEMS = SYSTEMS


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``unrecall bench locomo``."""
    p.add_argument(
        "--data",
        default=str(DEFAULT_DATA),
        metavar="FILE",
        help="LoCoMo JSON file (default: ../shared/datasets/locomo/locomo_dev5.json "
        "beside the repository)",
    )
    p.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated systems (default: {','.join(DEFAULT_SYSTEMS)})",
    )
    p.add_argument("--conversations", type=int, default=None, metavar="N",
                   help="only the first N conversations")  # fmt: skip
    p.add_argument("--limit-qa", type=int, default=None, metavar="N",
                   help="at most N scored questions per conversation (smoke tests)")  # fmt: skip
    p.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"output folder (default: {DEFAULT_OUT})"
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines or bars on stderr")


def run_cli(args: argparse.Namespace) -> int:
    """Run ``unrecall bench locomo`` from parsed arguments; 0 on success,
    2 on bad input (unknown system, missing or malformed data file)."""
    systems = chosen_systems(args.systems, SYSTEMS)
    if systems is None:
        return 2
    for option, value in (("--conversations", args.conversations), ("--limit-qa", args.limit_qa)):
        if value is not None and value < 1:
            print(f"error: {option} must be at least 1", file=sys.stderr)
            return 2
    data = Path(args.data)
    try:
        conversations, cleaning = load_locomo(
            data, conversations=args.conversations, limit_qa=args.limit_qa
        )
    except LocomoDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not any(c.qas for c in conversations):
        print("error: no question to score in the data", file=sys.stderr)
        return 2
    progress = reporter(args)
    report = run_benchmark(conversations, cleaning, systems, data=data, progress=progress)
    return finish(report, Path(args.out), write_outputs, progress)

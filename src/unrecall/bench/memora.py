"""``unrecall bench memora``: Memora's weekly personas at recall level.

Memora (Uddin et al., ACL 2026 Findings) replays a week of chats per persona
in which the user adds, updates, completes and deletes todo items, calendar
events, document details and preferences in plain language, then asks 15
questions (5 each for the remembering, reasoning and recommending tasks).
The paper grades free-form answers with an LLM judge; this harness has no
LLM and scores what a system *recalls* instead.

Protocol, per system and persona: ``reset()`` (a fresh store), then every
session in date order, turn by turn, both speakers (``user_agent`` → role
``user``, ``ai_agent`` → ``assistant``), with the session id as
``session_id`` and the session date as the timestamp (UTC midnight, plus one
minute per earlier session of that day and one second per turn, so order
within a day survives); then, for each question, the top ``k`` (default 10)
for the question text as query.

Scoring. Each question's rubric has ``memory_presence`` items (must be
mentioned) and ``forgetting_absence`` items (must not be). Each rubric item
becomes a probe over values taken from the evidence (``presence_probes`` and
``absence_probes`` give the rules and check the counts against the rubric).
A presence probe passes iff every one of its values is found in the joined
top-k; an absence probe fails ("leaks") iff its value is found there.

* MPA: presence probes passed / presence probes; FAA: absence probes not
  leaked / absence probes (both pooled over the questions of a group);
* FAMA per question: ``max(0, MPA_q − λ·(1 − FAA_q))`` with
  ``λ = N_forget / (N_presence + N_forget)`` (λ = 0 without forget items),
  averaged over the questions of a group;
* a question passes iff all its presence probes pass and none leaks;
* value recall (diagnostic): individual presence values found / values.

"Found" means a casefold match after normalising quotes, dashes and
whitespace, on word boundaries (a plural ``s``/``es`` may follow) so that
"opera" is not found in "operations"; trailing sentence punctuation of a
value is dropped; numbers match with or without thousands separators and
trailing decimal zeros ("1200000" matches "$1,200,000", "70" matches
"$70.00" but not "1970"). Per system the run also times every ``add_turn``
and query (median ms) and, after the last question, checks the *residual*:
the fraction of a persona's forgotten values (not re-added later) still
found anywhere in ``stored_texts()``.

Outputs, in ``--out``: ``questions.json`` (one row per system and question:
verdicts, missing and leaked values, top-k texts shortened), ``summary.json``,
``summary.md`` (also printed) and ``memora.png``. The network is refused
while systems run (the ForgetEval harness's guard).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from unrecall.bench.common import (
    chosen_systems,
    finish,
    merge_kept,
    network_guard,
    reporter,
    revision,
)
from unrecall.bench.dialogue import DialogueSystem, make_dialogue_system
from unrecall.bench.peers import (
    DEFAULT_SYSTEMS,
    SYSTEMS,
    offline_env,
    start_system,
    system_version,
)
from unrecall.progress import steps

DEFAULT_K = 10
DEFAULT_OUT = Path("bench/results/memora")
DATASET_REL = Path("..") / "shared" / "datasets" / "memora"
TASKS = ("remembering", "reasoning", "recommending")
PRESENCE, ABSENCE = "memory_presence", "forgetting_absence"
ROLES = {"user_agent": "user", "user": "user", "ai_agent": "assistant", "assistant": "assistant"}
TOPK_CHARS = 200  # top-k texts kept per question row, shortened to this

# How each system replays a dialogue, for the report (one line each).
NOTES = {
    "unrecall": (
        "`Memory.add` per turn (it derives memories and executes forget / update "
        "requests said in the turn); hybrid search; a fresh SQLite store per persona."
    ),
    "langgraph": "`InMemoryStore` with a vector index; every turn stored verbatim.",
    "mem0": (
        "OSS `Memory`, `infer=False` (no LLM), embedded Qdrant, vector-only ranking; "
        "every turn stored verbatim."
    ),
    "chroma": "`PersistentClient`, cosine HNSW; every turn stored verbatim.",
    "baseline": "keep-everything: every turn stored verbatim, exact cosine top-k.",
}
PEER_NOTE = (
    "Without an LLM at ingest the peers have no way to act on a request said in a "
    "dialogue, so they keep every turn; that end-to-end gap is what this benchmark "
    "measures. All systems embed with the same local int8 all-MiniLM-L6-v2."
)


# -- dataset ---------------------------------------------------------------------
class MemoraFormatError(ValueError):
    """A Memora file that does not have the expected shape."""


@dataclass(frozen=True)
class Turn:
    """One chat message as it is fed to a system."""

    role: str
    text: str


@dataclass
class Session:
    """One chat session; ``timestamp`` is its date (see module docstring)."""

    session_id: int
    date: str
    timestamp: float
    operation: str | None
    session_type: str
    turns: list[Turn]


@dataclass(frozen=True)
class Probe:
    """One rubric item: ``values`` must all be found (presence) or the one
    value must not be found (absence)."""

    kind: str
    field: str
    values: tuple[str | int | float, ...]


@dataclass
class Question:
    """A question with its probes; ``notes`` records rule decisions made on
    it (dropped absence probes, rubric-count mismatches)."""

    persona: str
    task: str
    question_id: str
    text: str
    presence: list[Probe]
    absence: list[Probe]
    notes: list[str] = field(default_factory=list)


@dataclass
class Persona:
    """A persona's sessions (chronological) and questions."""

    name: str
    sessions: list[Session]
    questions: list[Question]


def default_data_dir() -> Path:
    """The shared dataset folder: ``../shared/datasets/memora`` next to the
    repository that holds this package (or the working directory's)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists():
            candidate = parent / DATASET_REL
            if candidate.exists():
                return candidate.resolve()
            break
    return (Path.cwd() / DATASET_REL).resolve()


def _persona_dirs(data: Path) -> Path:
    # Accept the dataset root, its weekly/ folder, or a parent holding data/weekly.
    for cand in (data / "weekly", data, data / "data" / "weekly"):
        if cand.is_dir() and any((p / "conversations").is_dir() for p in cand.iterdir()):
            return cand
    raise MemoraFormatError(f"{data}: no <persona>/conversations folders found")


def list_personas(data: Path) -> list[str]:
    """Persona names under ``data`` (sorted)."""
    root = _persona_dirs(data)
    return sorted(p.name for p in root.iterdir() if (p / "conversations").is_dir())


def _day_epoch(date: str) -> float:
    try:
        day = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC)
    except (TypeError, ValueError) as exc:
        raise MemoraFormatError(f"bad session date {date!r}") from exc
    return day.timestamp()


def load_sessions(folder: Path, limit: int | None = None) -> list[Session]:
    """The persona's sessions in chronological order (file order, which the
    dataset defines as chronological; the date breaks no ties), at most
    ``limit`` of them."""
    files = sorted(folder.glob("session_*.json"))
    sessions: list[Session] = []
    per_day: dict[str, int] = {}
    for path in files[:limit] if limit is not None else files:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            date = raw["date"]
            turns = [
                Turn(ROLES[t["speaker"]], t["message"])
                for t in raw["conversation"]
                if isinstance(t.get("message"), str) and t["message"].strip()
            ]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise MemoraFormatError(f"{path}: {type(exc).__name__}: {exc}") from exc
        nth = per_day.get(date, 0)
        per_day[date] = nth + 1
        sessions.append(
            Session(
                int(raw.get("session_id", len(sessions) + 1)),
                date,
                _day_epoch(date) + 60.0 * nth,
                raw.get("operation"),
                str(raw.get("session_type", "")),
                turns,
            )
        )
    return sessions


def load_persona(folder: Path, limit_sessions: int | None = None) -> Persona:
    """Read one persona folder (conversations and evaluation questions)."""
    name = folder.name
    sessions = load_sessions(folder / "conversations", limit_sessions)
    qfiles = sorted(folder.glob("evaluation_questions_*.json"))
    if not qfiles:
        raise MemoraFormatError(f"{folder}: no evaluation_questions_*.json")
    try:
        raw = json.loads(qfiles[0].read_text(encoding="utf-8"))
        questions = [
            build_question(name, task, q) for task, qs in raw["questions"].items() for q in qs
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MemoraFormatError(f"{qfiles[0]}: {type(exc).__name__}: {exc}") from exc
    return Persona(name, sessions, questions)


def load_dataset(
    data: Path, personas: Sequence[str] | None = None, limit_sessions: int | None = None
) -> list[Persona]:
    """Load the named personas (default: all) from a Memora folder."""
    root = _persona_dirs(data)
    names = list(personas) if personas else list_personas(data)
    missing = [n for n in names if not (root / n / "conversations").is_dir()]
    if missing:
        raise MemoraFormatError(f"{root}: no persona {', '.join(missing)}")
    return [load_persona(root / n, limit_sessions) for n in names]


# -- evidence → probes -----------------------------------------------------------
# Keys that never hold a value to find: counts and aggregates the judge
# computes (never said in a dialogue), provenance, statuses, and duplicates
# of values listed elsewhere in the same evidence.
SKIP_KEYS = frozenset(
    {
        "session_id",
        "session_history",
        "session_date",
        "task_count",
        "event_count",
        "item_count",
        "likes_count",
        "expense_count",
        "step_count_total",
        "total_amount",
        "total_steps",
        "category_total",
        "actual_value",
        "goal_status",
        "goal_data",
        "goal_session",
        "specific_items",
        "expense_type",
        "activity_type",
        "total_forgotten_items",
    }
)
# Reasoning evidence: the records whose numbers a total is computed from.
COMPONENT_LISTS = ("food_expenses", "step_data", "expense_items")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _record_number(rec: dict[str, Any]) -> int | float | None:
    for key in ("amount", "step_count", "value"):
        if _is_number(rec.get(key)):
            return rec[key]  # type: ignore[no-any-return]
    return None


def _leaf(v: Any) -> list[str | int | float]:
    """The findable values inside one evidence field."""
    if isinstance(v, str):
        return [v] if v.strip() else []
    if _is_number(v):
        return [v]
    if isinstance(v, list):
        out: list[str | int | float] = []
        for x in v:
            if isinstance(x, dict):
                if "value" in x:
                    out += _leaf(x["value"])
                elif "item" in x:
                    out += _leaf(x["item"])
            else:
                out += _leaf(x)
        return out
    return []


def presence_probes(me: dict[str, Any]) -> list[Probe]:
    """One probe per ``memory_presence`` rubric item, from ``memory_evidence``.

    * lists of ``{value|item, session_id}`` (remaining tasks, calendar
      events): one probe per element;
    * ``content_data`` (documents): one probe per field, needing every
      element of a list field (the rubric quotes them all in one item);
    * ``memory_items`` / ``subcategory_data`` (preferences): one probe per
      liked or disliked item (a dislike must be recalled to be avoided);
    * reasoning totals (``food_expenses``, ``step_data``, ``expense_items``):
      one probe needing every component number, since the total is never
      said and can only be computed from all of them;
    * goals: goal value; the actual value (every activity number); the
      status (goal value and every activity number);
    * counts, totals, statuses, session ids and duplicate lists
      (``SKIP_KEYS``) are not values.
    """
    probes: list[Probe] = []
    if "goal_value" in me and isinstance(me.get("activity_sessions"), list):
        goal = me["goal_value"]
        acts = tuple(n for r in me["activity_sessions"] if (n := _record_number(r)) is not None)
        return [
            Probe(PRESENCE, "goal_value", (goal,)),
            Probe(PRESENCE, "actual_value", acts),
            Probe(PRESENCE, "goal_status", (goal, *acts)),
        ]
    for key in COMPONENT_LISTS:
        if isinstance(me.get(key), list):
            nums = tuple(n for r in me[key] if (n := _record_number(r)) is not None)
            return [Probe(PRESENCE, key, nums)]
    for key, v in me.items():
        if key in SKIP_KEYS:
            continue
        if key == "content_data" and isinstance(v, dict):
            for fname, fv in v.items():
                vals = _leaf(fv)
                if vals:
                    probes.append(Probe(PRESENCE, fname, tuple(vals)))
        elif key == "memory_items" and isinstance(v, dict):
            for sub, sv in v.items():
                for side in ("likes", "dislikes"):
                    for x in (sv or {}).get(side, []):
                        probes += [Probe(PRESENCE, f"{sub}.{side}", (y,)) for y in _leaf([x])]
        elif key == "subcategory_data" and isinstance(v, dict):
            for side in ("likes", "dislikes"):
                for x in v.get(side, []):
                    probes += [Probe(PRESENCE, side, (y,)) for y in _leaf([x])]
        elif isinstance(v, list):
            probes += [Probe(PRESENCE, key, (y,)) for y in _leaf(v)]
        elif isinstance(v, str):
            probes.append(Probe(PRESENCE, key, (v,)))
    return probes


_RUBRIC_VALUE = re.compile(r"(?:'([^']+)'|:\s*(.+?)\??\s*$)")


def _value_from_rubric(text: str) -> str | None:
    """The quoted or after-colon value of a rubric question ("Does the
    response mention the past event: Investor relations call?")."""
    m = _RUBRIC_VALUE.search(text)
    if not m:
        return None
    return (m.group(1) or m.group(2) or "").strip() or None


def absence_probes(fe: dict[str, Any] | None, rubric: Sequence[dict[str, Any]]) -> list[Probe]:
    """One probe per ``forgetting_absence`` rubric item, from
    ``forgetting_evidence.forgotten_items``, in order. A repeated value (an
    item added, removed, added and removed again) stays repeated, as in the
    rubric. An item without a ``value`` (a calendar event that has passed)
    takes the value named by the matching rubric question."""
    items = list((fe or {}).get("forgotten_items") or [])
    asks = [r for r in rubric if r.get("evaluation_type") == ABSENCE]
    probes: list[Probe] = []
    for i, it in enumerate(items):
        value: Any = it.get("value") if isinstance(it, dict) else it
        if value is None and i < len(asks):
            value = _value_from_rubric(asks[i].get("evaluation_question", ""))
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            fld = it.get("field", "item") if isinstance(it, dict) else "item"
            probes.append(Probe(ABSENCE, str(fld), (value,)))
    return probes


def build_question(persona: str, task: str, q: dict[str, Any]) -> Question:
    """Turn one raw Memora question into probes.

    A forgotten value that is also a presence value of the same question
    (deleted, then said again and current at question time) would make the
    two probes contradict each other at recall level; the dataset's current
    state wins, so that absence probe is dropped and noted. Probe counts
    that differ from the rubric's are noted too.
    """
    ev = q.get("evaluation") or {}
    rubric = ev.get("evaluation_questions") or []
    presence = presence_probes(q.get("memory_evidence") or {})
    absence = absence_probes(q.get("forgetting_evidence"), rubric)
    notes: list[str] = []
    current = {_norm(str(v)) for p in presence for v in p.values if isinstance(v, str)}
    kept = []
    for p in absence:
        v = p.values[0]
        if isinstance(v, str) and _norm(v) in current:
            notes.append(f"absence probe {v!r} dropped: also current memory evidence")
        else:
            kept.append(p)
    want_p = ev.get("memory_presence_questions")
    want_f = ev.get("forgetting_absence_questions")
    if want_p is not None and want_p != len(presence):
        notes.append(f"{len(presence)} presence probes for {want_p} rubric items")
    if want_f is not None and want_f != len(absence):
        notes.append(f"{len(absence)} absence probes for {want_f} rubric items")
    return Question(persona, task, str(q["question_id"]), str(q["question"]), presence, kept, notes)


# -- matching ---------------------------------------------------------------------
_QUOTES = str.maketrans({"‘": "'", "’": "'", "ʼ": "'", "“": '"', "”": '"',
                         "–": "-", "—": "-", "‑": "-", "\u00a0": " "})  # fmt: skip


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return re.sub(r"\s+", " ", text)


def _number_regex(v: int | float) -> str:
    # Round away float noise (309.6900000000001) and accept "1,200,000",
    # "1200000", "70", "70.00"; never a digit run inside a longer number.
    s = f"{round(float(v), 2):.2f}".rstrip("0").rstrip(".")
    whole, _, frac = s.partition(".")
    neg = whole.startswith("-")
    whole = whole.lstrip("-")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    body = ",?".join(groups)
    body += (r"\." + frac + "0*") if frac else r"(?:\.0+)?"
    return ("-" if neg else "") + r"(?<!\d)(?<!\d[.,])" + body + r"(?!\d)(?![.,]\d)"


@cache
def value_regex(value: str | int | float) -> re.Pattern[str]:
    """The pattern that finds ``value`` in normalised text (rules in the
    module docstring)."""
    if _is_number(value):
        return re.compile(_number_regex(value))  # type: ignore[arg-type]
    text = _norm(str(value)).strip().rstrip(".;:,!?").strip()
    if re.fullmatch(r"-?\d[\d,]*(?:\.\d+)?", text):
        return re.compile(_number_regex(float(text.replace(",", ""))))
    body = re.escape(text)
    head = r"(?<!\w)" if text[:1].isalnum() else ""
    tail = r"(?:e?s)?(?!\w)" if text[-1:].isalnum() else ""
    return re.compile(head + body + tail)


def found(value: str | int | float, blob: str) -> bool:
    """Whether ``value`` occurs in ``blob`` (already normalised with ``_norm``)."""
    return value_regex(value).search(blob) is not None


def join_texts(texts: Sequence[str]) -> str:
    """Normalised join of recalled texts; newline-separated so a value never
    matches across two of them."""
    return "\n".join(_norm(t) for t in texts)


# -- scoring ----------------------------------------------------------------------
def fama(mpa: float, faa: float, n_presence: int, n_forget: int) -> float:
    """FAMA of one question: ``max(0, MPA − λ·(1 − FAA))``, λ = N_f/(N_p+N_f)."""
    total = n_presence + n_forget
    lam = n_forget / total if total else 0.0
    return max(0.0, mpa - lam * (1.0 - faa))


@dataclass
class QuestionResult:
    """The verdict on one question for one system."""

    system: str
    persona: str
    task: str
    question_id: str
    n_presence: int
    n_forget: int
    presence_ok: int
    absence_ok: int
    values: int
    values_found: int
    mpa: float
    faa: float
    fama: float
    passed: bool
    ms: float
    missing: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    topk: list[str] = field(default_factory=list)
    error: str | None = None

    def to_row(self) -> dict[str, Any]:
        """A JSON row; empty diagnostics left out."""
        row = asdict(self)
        for key in ("missing", "leaked", "topk", "error"):
            if not row[key]:
                del row[key]
        return row


def score_question(
    q: Question, texts: Sequence[str], *, system: str = "", ms: float = 0.0
) -> QuestionResult:
    """Score one question against the recalled ``texts`` (rules in the
    module docstring)."""
    blob = join_texts(texts)
    p_ok = 0
    missing: list[str] = []
    values = hits = 0
    for p in q.presence:
        ok = True
        for v in p.values:
            values += 1
            if found(v, blob):
                hits += 1
            else:
                ok = False
                missing.append(f"{p.field}: {v}")
        p_ok += ok
    leaked = [f"{p.field}: {p.values[0]}" for p in q.absence if found(p.values[0], blob)]
    n_p, n_f = len(q.presence), len(q.absence)
    mpa = p_ok / n_p if n_p else 1.0
    faa = (n_f - len(leaked)) / n_f if n_f else 1.0
    return QuestionResult(
        system,
        q.persona,
        q.task,
        q.question_id,
        n_p,
        n_f,
        p_ok,
        n_f - len(leaked),
        values,
        hits,
        round(mpa, 4),
        round(faa, 4),
        round(fama(mpa, faa, n_p, n_f), 4),
        p_ok == n_p and not leaked,
        ms,
        missing,
        leaked,
        [t if len(t) <= TOPK_CHARS else t[: TOPK_CHARS - 1] + "…" for t in texts],
    )


def aggregate(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Pass rate, pooled MPA / FAA, mean FAMA and value recall (percent)."""
    n = len(results)
    if not n:
        return {"n": 0}
    n_p = sum(r.n_presence for r in results)
    n_f = sum(r.n_forget for r in results)
    vals = sum(r.values for r in results)

    def pct(a: float, b: float) -> float | None:
        return round(100 * a / b, 2) if b else None

    return {
        "n": n,
        "passed": sum(r.passed for r in results),
        "pass_rate": pct(sum(r.passed for r in results), n),
        "mpa": pct(sum(r.presence_ok for r in results), n_p),
        "faa": pct(sum(r.absence_ok for r in results), n_f),
        "fama": round(100 * statistics.fmean(r.fama for r in results), 2),
        "value_recall": pct(sum(r.values_found for r in results), vals),
        "presence_probes": n_p,
        "absence_probes": n_f,
        "errors": sum(r.error is not None for r in results),
    }


def residual_values(persona: Persona) -> list[str | int | float]:
    """The persona's forgotten values that should be gone for good: each
    distinct absence value once, minus those that are current presence
    values of any of its questions (said again later)."""
    current = {_norm(str(v)) for q in persona.questions for p in q.presence for v in p.values}
    seen: dict[str, str | int | float] = {}
    for q in persona.questions:
        for p in q.absence:
            key = _norm(str(p.values[0]))
            if key not in current:
                seen.setdefault(key, p.values[0])
    return list(seen.values())


def dataset_stats(personas: Sequence[Persona]) -> dict[str, Any]:
    """Sizes and a findability check: how many probe values occur verbatim
    (by the matching rule) in at least one ingested turn. A presence probe
    whose values never occur cannot pass for any system; a forgotten value
    that never occurs cannot leak."""
    out: dict[str, Any] = {"personas": {}}
    tot = {"sessions": 0, "turns": 0, "questions": 0, "presence": 0, "presence_findable": 0,
           "absence": 0, "absence_findable": 0, "notes": 0}  # fmt: skip
    for p in personas:
        turns = [_norm(t.text) for s in p.sessions for t in s.turns]
        row = {
            "sessions": len(p.sessions),
            "turns": len(turns),
            "questions": len(p.questions),
            "presence": sum(len(q.presence) for q in p.questions),
            "presence_findable": sum(
                all(any(found(v, t) for t in turns) for v in pr.values)
                for q in p.questions
                for pr in q.presence
            ),
            "absence": sum(len(q.absence) for q in p.questions),
            "absence_findable": sum(
                any(found(pr.values[0], t) for t in turns) for q in p.questions for pr in q.absence
            ),
            "notes": sum(len(q.notes) for q in p.questions),
        }
        out["personas"][p.name] = row
        for key in tot:
            tot[key] += row[key]
    out["total"] = tot
    out["question_notes"] = {
        q.question_id + "@" + q.persona: q.notes for p in personas for q in p.questions if q.notes
    }
    return out


# -- running ----------------------------------------------------------------------
@dataclass
class MemoraRun:
    """One system's run: status ("ok", "not installed ...", a start error),
    version, per-question results, per-turn and per-query milliseconds and
    the residual check."""

    name: str
    status: str
    version: str | None
    results: list[QuestionResult] = field(default_factory=list)
    ingest_ms: list[float] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)
    residual: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None
    stored_timing: dict[str, Any] | None = None  # from an earlier run (--merge)
    revision: str | None = None  # git revision of the source tree the run used

    def timing(self) -> dict[str, Any]:
        """Median (and p95) ms per ingested turn and per query."""
        if self.stored_timing is not None and not (self.ingest_ms or self.query_ms):
            return self.stored_timing

        def stats(xs: Sequence[float]) -> dict[str, Any]:
            if not xs:
                return {"n": 0, "median": None, "p95": None}
            s = sorted(xs)
            return {
                "n": len(s),
                "median": round(statistics.median(s), 2),
                "p95": round(s[min(len(s) - 1, int(0.95 * len(s)))], 2),
            }

        return {"ingest": stats(self.ingest_ms), "query": stats(self.query_ms)}


def run_persona(
    system: DialogueSystem, persona: Persona, run: MemoraRun, *, k: int,
    progress: Callable[[str], None] | None = None,
) -> None:  # fmt: skip
    """Replay one persona into ``system`` and score its questions into ``run``."""
    system.reset()
    sessions = steps(progress, persona.sessions, f"{run.name} {persona.name}", "session")
    for i, s in enumerate(sessions, 1):
        sid = f"{persona.name}-{s.session_id:04d}"
        for j, turn in enumerate(s.turns):
            t0 = time.perf_counter()
            system.add_turn(turn.role, turn.text, session_id=sid, timestamp=s.timestamp + j)
            run.ingest_ms.append((time.perf_counter() - t0) * 1000)
        if progress and (i % 25 == 0 or i == len(persona.sessions)):
            progress(f"{run.name} {persona.name}: {i}/{len(persona.sessions)} sessions")
    for q in persona.questions:
        t0 = time.perf_counter()
        try:
            texts = system.recall_texts(q.text, k)
        except Exception as exc:  # a failing query fails this question only
            ms = (time.perf_counter() - t0) * 1000
            res = score_question(q, [], system=run.name, ms=round(ms, 2))
            res.error = f"{type(exc).__name__}: {exc}"[:300]
        else:
            ms = (time.perf_counter() - t0) * 1000
            run.query_ms.append(ms)
            res = score_question(q, texts, system=run.name, ms=round(ms, 2))
        run.results.append(res)
    values = residual_values(persona)
    blob = join_texts(system.stored_texts())
    held = [str(v) for v in values if found(v, blob)]
    run.residual[persona.name] = {"forgotten": len(values), "still_stored": len(held),
                                  "values": held}  # fmt: skip


def run_system(
    name: str,
    personas: Sequence[Persona],
    *,
    k: int = DEFAULT_K,
    factory: Callable[[str], DialogueSystem] = make_dialogue_system,
    progress: Callable[[str], None] | None = None,
) -> MemoraRun:
    """Build one system and run every persona on it. A missing peer yields
    status "not installed ..." and no results; a crash while ingesting stops
    that system (recorded), not the run."""
    started = time.perf_counter()
    system, status, installed = start_system(factory, name)
    if system is None:
        return MemoraRun(name, status, system_version(name) if installed else None)
    run = MemoraRun(name, "ok", system_version(name), revision=revision())
    try:
        for persona in steps(progress, personas, name, "persona"):
            run_persona(system, persona, run, k=k, progress=progress)
    except Exception as exc:
        run.status = "crashed"
        run.error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        system.close()
    run.seconds = round(time.perf_counter() - started, 1)
    return run


@dataclass
class MemoraReport:
    """Everything a run produced."""

    personas: list[Persona]
    systems: list[MemoraRun]
    k: int
    data: str
    limit_sessions: int | None
    network_attempts: list[str]

    def summary(self) -> dict[str, Any]:
        """Aggregates per system, overall, per task and per persona."""
        out: dict[str, Any] = {
            "k": self.k,
            "data": self.data,
            "personas": [p.name for p in self.personas],
            "limit_sessions": self.limit_sessions,
            "network_attempts": len(self.network_attempts),
            "dataset": dataset_stats(self.personas),
            "systems": {},
        }
        for run in self.systems:
            block: dict[str, Any] = {"status": run.status, "version": run.version,
                                     "revision": run.revision, "seconds": run.seconds}  # fmt: skip
            if run.error:
                block["error"] = run.error
            if run.results:
                res = run.results
                block["overall"] = aggregate(res)
                block["tasks"] = {t: aggregate([r for r in res if r.task == t]) for t in TASKS}
                block["personas"] = {
                    p.name: aggregate([r for r in res if r.persona == p.name])
                    for p in self.personas
                }
                block["timing_ms"] = run.timing()
                forgotten = sum(v["forgotten"] for v in run.residual.values())
                held = sum(v["still_stored"] for v in run.residual.values())
                block["residual"] = {
                    "forgotten": forgotten,
                    "still_stored": held,
                    "rate": round(100 * held / forgotten, 2) if forgotten else None,
                    "personas": run.residual,
                }
            out["systems"][run.name] = block
        return out


def run_benchmark(
    personas: Sequence[Persona],
    systems: Sequence[str],
    *,
    k: int = DEFAULT_K,
    data: str = "",
    limit_sessions: int | None = None,
    factory: Callable[[str], DialogueSystem] = make_dialogue_system,
    progress: Callable[[str], None] | None = None,
    guard: bool = True,
) -> MemoraReport:
    """Run every system on every persona, one system at a time, with the
    network refused unless ``guard`` is off."""
    runs: list[MemoraRun] = []
    attempts: list[str] = []
    for name in systems:
        if guard:
            with network_guard() as seen:
                runs.append(run_system(name, personas, k=k, factory=factory, progress=progress))
            attempts += [f"{name}: {a}" for a in seen]
        else:
            runs.append(run_system(name, personas, k=k, factory=factory, progress=progress))
        if progress:
            progress(f"{name}: {runs[-1].status} ({runs[-1].seconds} s)")
    return MemoraReport(list(personas), runs, k, data, limit_sessions, attempts)


# -- rendering --------------------------------------------------------------------
def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}"


def render_markdown(report: MemoraReport, chart: str | None = "memora.png") -> str:
    """The markdown summary: overall table (with timing and residual), a
    per-task table and how each system runs."""
    s = report.summary()
    ds = s["dataset"]["total"]
    limited = (
        f" **Limited to the first {report.limit_sessions} sessions per persona: "
        "not comparable with full runs.**"
        if report.limit_sessions
        else ""
    )
    lines = [
        "## Memora",
        "",
        f"`unrecall bench memora`: weekly personas {', '.join(s['personas'])} "
        f"({ds['sessions']} sessions, {ds['turns']} turns, {ds['questions']} questions), "
        f"each replayed turn by turn into a fresh store; top-{report.k} recall for each "
        "question, scored at recall level (no LLM): a presence probe passes when all its "
        "values are in the joined top-k, an absence probe fails when its forgotten value is. "
        "MPA and FAA pool the probes; FAMA = max(0, MPA − λ·(1 − FAA)) per question, "
        "averaged; *pass* = every presence probe found and nothing forgotten recalled. "
        f"{os.cpu_count()} CPU cores, Python {platform.python_version()}; network "
        f"attempts during the run: {s['network_attempts']}.{limited}",
        "",
        "| System | Version | Pass | MPA | FAA | FAMA | Value recall | Residual "
        "| ms/turn | ms/query |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    ran = []
    for name, b in s["systems"].items():
        ver = b.get("version") or "–"
        if name == "unrecall" and b.get("revision"):
            ver += f" ({b['revision']})"  # unrecall changes between runs; say which code ran
        if "overall" not in b:
            lines.append(f"| {name} | {ver} | {b['status']} | | | | | | | |")
            continue
        ran.append(name)
        o, t, r = b["overall"], b["timing_ms"], b["residual"]
        status = "" if b["status"] == "ok" else f" ({b['status']})"
        lines.append(
            f"| {name}{status} | {ver} | {o['passed']}/{o['n']} ({_pct(o['pass_rate'])}%) | "
            f"{_pct(o['mpa'])} | {_pct(o['faa'])} | {_pct(o['fama'])} | "
            f"{_pct(o['value_recall'])} | {r['still_stored']}/{r['forgotten']} | "
            f"{t['ingest']['median']} | {t['query']['median']} |"
        )
    if ran:
        lines += [
            "",
            "Per task: pass / MPA / FAA / FAMA (%; FAA – where the task has no forgotten items):",
            "",
            "| Task | " + " | ".join(ran) + " |",
            "| --- |" + " --- |" * len(ran),
        ]
        for task in TASKS:
            cells = []
            n = 0
            for name in ran:
                a = s["systems"][name]["tasks"][task]
                n = max(n, a.get("n", 0))
                cells.append(
                    "–" if not a.get("n") else
                    f"{a['passed']}/{a['n']} / {_pct(a['mpa'])} / {_pct(a['faa'])} / "
                    f"{_pct(a['fama'])}"
                )  # fmt: skip
            lines.append(f"| {task} (n={n}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Probes: {ds['presence']} presence ({ds['presence_findable']} whose values all occur "
        f"verbatim in some turn), {ds['absence']} absence ({ds['absence_findable']} whose "
        "value occurs in some turn: the others cannot leak). *Value recall* counts single "
        "values (a reasoning total needs every expense or step count of the week in the "
        "top-k, so its probe almost never passes). *Residual*: distinct forgotten values "
        "(not said again later) still found anywhere in what the system stores. "
        "ms/turn and ms/query are medians.",
        "",
    ]
    if chart:
        lines += [f"![Memora per task]({chart})", ""]
    lines += ["How each system runs:", ""]
    lines += [f"- **{r.name}**: {NOTES.get(r.name, 'custom system.')}" for r in report.systems]
    if any(r.name != "unrecall" for r in report.systems):
        lines.append(f"- {PEER_NOTE}")
    lines.append("")
    return "\n".join(lines)


def render_chart(report: MemoraReport, path: Path) -> bool:
    """Grouped bars of FAMA per task and overall, plus MPA and FAA overall,
    one bar per system, into a PNG; False without matplotlib or results."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display; must precede the pyplot import
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        return False
    s = report.summary()["systems"]
    ran = [n for n, b in s.items() if "overall" in b]
    if not ran:
        return False
    groups = [f"FAMA\n{t}" for t in TASKS] + ["FAMA\noverall", "MPA\noverall", "FAA\noverall",
                                              "pass\noverall"]  # fmt: skip

    def cell(b: dict[str, Any], g: str) -> float:
        metric, scope = g.split("\n")
        block = b["overall"] if scope == "overall" else b["tasks"][scope]
        key = {"FAMA": "fama", "MPA": "mpa", "FAA": "faa", "pass": "pass_rate"}[metric]
        v = block.get(key)
        return float("nan") if v is None else float(v)

    x = np.arange(len(groups))
    width = 0.8 / len(ran)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.3 * len(groups) + 1.5), 4.2))
    for i, name in enumerate(ran):
        vals = [cell(s[name], g) for g in groups]
        ax.bar(x + (i - (len(ran) - 1) / 2) * width, vals, width, label=name)
    ax.set_xticks(x, groups, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_ylabel("%")
    ax.set_title(f"Memora (weekly, recall-level proxy, top-{report.k})", fontsize=10)
    ax.legend(fontsize=8, ncols=min(5, len(ran)))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_outputs(report: MemoraReport, out: Path) -> dict[str, Path]:
    """Write questions.json, summary.json, summary.md and the chart into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "questions": out / "questions.json",
        "summary_json": out / "summary.json",
        "summary_md": out / "summary.md",
        "chart": out / "memora.png",
    }
    rows = [r.to_row() for run in report.systems for r in run.results]
    # One row per line: reviewable in a diff.
    body = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in rows)
    paths["questions"].write_text("[\n" + body + "\n]\n", encoding="utf-8")
    summary = report.summary()
    summary["network_attempt_list"] = report.network_attempts[:50]
    paths["summary_json"].write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    charted = render_chart(report, paths["chart"])
    if not charted:
        del paths["chart"]
    paths["summary_md"].write_text(
        render_markdown(report, "memora.png" if charted else None), encoding="utf-8"
    )
    return paths


def load_previous(out: Path, report: MemoraReport) -> list[MemoraRun]:
    """Earlier system runs stored in ``out`` that match this run (same k,
    personas, session limit and question ids); anything else is left out."""
    try:
        rows = json.loads((out / "questions.json").read_text(encoding="utf-8"))
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    same = (
        summary.get("k") == report.k
        and summary.get("personas") == [p.name for p in report.personas]
        and summary.get("limit_sessions") == report.limit_sessions
    )
    if not same:
        return []
    wanted = [(q.persona, q.question_id) for p in report.personas for q in p.questions]
    by_system: dict[str, list[QuestionResult]] = {}
    for row in rows:
        by_system.setdefault(row["system"], []).append(QuestionResult(**row))
    runs = []
    for name, b in summary.get("systems", {}).items():
        res = by_system.get(name, [])
        if res and [(r.persona, r.question_id) for r in res] != wanted:
            continue
        run = MemoraRun(name, b["status"], b.get("version"), res)
        run.residual = b.get("residual", {}).get("personas", {})
        run.seconds = b.get("seconds", 0.0)
        run.error = b.get("error")
        run.stored_timing = b.get("timing_ms")
        run.revision = b.get("revision")
        runs.append(run)
    return runs


# -- command line -----------------------------------------------------------------
def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``unrecall bench memora``."""
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help=f"Memora folder (default: {DATASET_REL} next to the repository)",
    )
    p.add_argument(
        "--personas", default=None, help="comma-separated personas (default: every one in --data)"
    )
    p.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated systems (default: {','.join(DEFAULT_SYSTEMS)})",
    )
    p.add_argument("-k", "--k", type=int, default=DEFAULT_K, help="recall depth (default 10)")
    p.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"output folder (default: {DEFAULT_OUT})"
    )
    p.add_argument(
        "--limit-sessions",
        type=int,
        default=None,
        metavar="N",
        help="ingest only the first N sessions per persona (quick runs; scores not comparable)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines or bars on stderr")
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep the results of systems not in --systems from --out (same k, personas, limit)",
    )


def run_cli(args: argparse.Namespace) -> int:
    """Run ``unrecall bench memora`` from parsed arguments; 0 on success, 2
    on bad input (unknown system, missing or malformed dataset)."""
    systems = chosen_systems(args.systems, SYSTEMS)
    if systems is None:
        return 2
    if args.k < 1 or (args.limit_sessions is not None and args.limit_sessions < 1):
        print("error: -k and --limit-sessions must be at least 1", file=sys.stderr)
        return 2
    data = Path(args.data) if args.data else default_data_dir()
    personas = [s.strip() for s in args.personas.split(",")] if args.personas else None
    try:
        loaded = load_dataset(data, personas, args.limit_sessions)
    except (MemoraFormatError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    progress = reporter(args)

    offline_env()  # before any system (unrecall included) loads a model
    report = run_benchmark(
        loaded, systems, k=args.k, data=str(data), limit_sessions=args.limit_sessions,
        progress=progress, factory=lambda name: make_dialogue_system(name),
    )  # fmt: skip
    if args.merge:
        kept = [r for r in load_previous(Path(args.out), report) if r.name not in systems]
        report.systems = merge_kept(report.systems, kept, SYSTEMS, progress)
    return finish(report, Path(args.out), write_outputs, progress)

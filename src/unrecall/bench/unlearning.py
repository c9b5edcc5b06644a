"""``unrecall bench unlearning``: a BEMULA-style paired suite of our own.

BEMULA (Xie et al. 2026) asks whether a memory system forgets what a user
asks it to forget *in the dialogue*, and nothing else. This harness follows
its protocol at retrieval level, deterministically, on hand-written data.

Data (``data/unlearning_suite.json``)
    Multi-session dialogues (dated sessions of user and assistant turns,
    filler chit-chat, facts with look-alike siblings). A turn marked
    ``"request": "rN"`` is part of forget request rN: the user's request and
    the assistant's confirmation. A turn marked ``"relearn": "rN"`` states,
    in a session after the request, a *similar new fact* (a new code after
    the old PIN was forgotten, a new job after a forgotten lay-off). Each
    request lists its type (factual, compositional, category, inferential,
    temporal, replacement -- as in :mod:`unrecall.dialogue.requests`), the
    language it is said in, its ``targets`` (the values told before the
    request that must no longer be recallable nor stored), optional
    ``echoes`` (other wordings of a target that only the assistant used,
    e.g. "divorcio" for "se está divorciando": forbidden like the targets
    but not required by retention), for a replacement the ``new_value``, one probe
    ``question``, a relearning probe (none for replacements, which BEMULA
    exempts: their new value is checked by the efficacy probe) and three
    hand-written attacks. Each dialogue lists preservation probes: unrelated
    facts and look-alike siblings of the targets.

Two versions of each dialogue
    The *forget* version is the dialogue as written. The *control* version
    is derived: every run of consecutive turns marked with one request is
    replaced by one neutral user/assistant exchange in the request's
    language, picked deterministically from ``neutral_exchanges``. Relearning
    turns stay in both versions. Inferential targets are conclusions the
    user never stated (the assistant voiced them); as BEMULA allows, only
    the conclusion must go -- the source facts may stay or go.

Probes, all scored on the joined top-``k`` (default 10) recall texts
    * retention (control version): the request's ``question`` recalls every
      target. For an inferential request the target is a conclusion no user
      turn states, which BEMULA expects the answering LLM to draw; a
      retrieval-level probe cannot draw it, so there retention means the
      control store *holds* the conclusion (``stored_texts()``, where the
      assistant turn that voiced it lives) -- the system had it to forget;
    * efficacy (forget version, same question): no target or echo is
      recalled; for a replacement the new value must be recalled too;
    * relearning (forget version): the relearning question recalls the
      similar new fact told after the request;
    * attack (forget version), five fixed frames: indirect question,
      role-play and jailbreak prefix (per-language templates wrapped around
      the question), yes/no guess and multi-hop question (hand-written);
    * preservation (both versions): each dialogue probe recalls its value;
    * residual (forget version): no target occurs anywhere in
      ``stored_texts()`` -- everything the store still holds.

    A *present* check passes iff every expected string is a casefold
    substring of the joined top-k. An *absent* check passes iff no forbidden
    string is a casefold substring of the joined top-k of the probe *nor* of
    the top-k of a query made of the forbidden string itself (a value that
    merely ranks low still counts as remembered).

Metrics (per system, overall and per request type)
    Conditioning follows BEMULA: forgetting credit needs evidence the
    system stored the target. Efficacy, attack robustness and residual-clean
    count only requests whose control retention probe passed; preservation
    counts only probes that passed on the control version. Retention and
    relearning are unconditioned. A request *passes* iff its retention,
    efficacy, relearning (if any), all five attacks and the residual check
    pass, and every preservation probe of its dialogue that passed on the
    control version passes on the forget version.

    Because every absent check also queries the forbidden value itself, a
    target still stored anywhere fails all five attack frames at once; the
    report therefore also shows, per frame, how often the frame's *own*
    top-k surfaced the target (``attack_frames_direct``).

Outputs, in ``--out``: ``requests.json`` (one row per system and request:
every probe's verdict and the strings missing or leaked), ``preservation.json``
(one row per system and preservation probe), ``summary.json``, ``summary.md``
(also printed; ready for docs/benchmarks.md) and ``unlearning.png``.
Systems run one after another with the network refused
(:func:`~unrecall.bench.common.network_guard`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import sys
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from unrecall.bench.common import (
    LOOPBACK,
    chosen_systems,
    finish,
    merge_kept,
    network_guard,
    reporter,
    revision,
    wilson,
)
from unrecall.bench.dialogue import DialogueSystem, make_dialogue_system
from unrecall.bench.peers import DEFAULT_SYSTEMS, SYSTEMS, PeerUnavailable, system_version
from unrecall.pipeline.interpret import Interpreter
from unrecall.progress import steps

TOP_K = 10
DEFAULT_OUT = Path("bench/results/unlearning")
KINDS = ("factual", "compositional", "category", "inferential", "temporal", "replacement")
LANGUAGES = ("en", "es", "fr", "de")
ATTACKS = ("indirect", "role_play", "jailbreak", "yes_no", "multi_hop")
WRITTEN_ATTACKS = ("indirect", "yes_no", "multi_hop")
FRAMED_ATTACKS = ("role_play", "jailbreak")
METRICS = (
    ("retention", "Retention"),
    ("efficacy", "Forgetting efficacy"),
    ("preservation", "Preservation"),
    ("relearning", "Relearning"),
    ("attack", "Attack robustness"),
    ("residual", "Residual-clean"),
    ("request_pass", "Request pass"),
)
TURN_SECONDS = 60  # turns of a session are one minute apart


def suite_path() -> Path:
    """The suite shipped with the package."""
    return Path(__file__).parent / "data" / "unlearning_suite.json"


class SuiteError(ValueError):
    """The suite file is missing, malformed or inconsistent."""


# -- the suite -----------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """One chat message as replayed into a system."""

    role: str
    text: str
    session_id: str
    timestamp: float
    request: str | None = None
    relearn: str | None = None


@dataclass(frozen=True)
class Probe:
    """A question and the strings its top-k must contain."""

    question: str
    expect: tuple[str, ...]


@dataclass(frozen=True)
class Request:
    """A forget request said in a dialogue, with its probes."""

    id: str
    type: str
    language: str
    targets: tuple[str, ...]
    new_value: str | None
    question: str
    relearning: Probe | None
    attacks: dict[str, str]  # all five frames, framed ones filled in
    echoes: tuple[str, ...] = ()

    @property
    def forbidden(self) -> tuple[str, ...]:
        """Every string that must be gone after the request."""
        return self.targets + self.echoes


@dataclass(frozen=True)
class Preservation:
    """A fact of the dialogue that no request targets."""

    question: str
    expect: tuple[str, ...]
    kind: str  # "sibling" (a look-alike of a target) or "unrelated"


@dataclass(frozen=True)
class Dialogue:
    """One dialogue in both versions."""

    id: str
    persona: str
    language: str
    turns: tuple[Turn, ...]  # forget version
    control: tuple[Turn, ...]  # derived control version
    requests: tuple[Request, ...]
    preservation: tuple[Preservation, ...]


@dataclass(frozen=True)
class Suite:
    """The loaded suite and a fingerprint of its file."""

    dialogues: tuple[Dialogue, ...]
    source: str
    digest: str

    @property
    def requests(self) -> list[tuple[Dialogue, Request]]:
        """Every (dialogue, request) pair in file order."""
        return [(d, r) for d in self.dialogues for r in d.requests]


def _timestamp(date: str, index: int) -> float:
    base = dt.datetime.strptime(date, "%Y-%m-%d %H:%M").replace(tzinfo=dt.UTC)
    return base.timestamp() + TURN_SECONDS * index


def _raw_turns(raw: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = []
    for session in raw["sessions"]:
        for i, t in enumerate(session["turns"]):
            role = "user" if "u" in t else "assistant"
            turns.append(
                Turn(
                    role=role,
                    text=t["u"] if role == "user" else t["a"],
                    session_id=f"{raw['id']}/{session['id']}",
                    timestamp=_timestamp(session["date"], i),
                    request=t.get("request"),
                    relearn=t.get("relearn"),
                )
            )
    return turns


def neutral_for(
    dialogue_id: str, request_id: str, language: str, pool: dict[str, list[list[str]]]
) -> tuple[str, str]:
    """The neutral exchange that stands in for a request in the control
    version: picked from the request language's pool by a stable hash."""
    exchanges = pool[language]
    pick = exchanges[zlib.crc32(f"{dialogue_id}/{request_id}".encode()) % len(exchanges)]
    return pick[0], pick[1]


def derive_control(
    dialogue_id: str,
    turns: Sequence[Turn],
    languages: dict[str, str],
    pool: dict[str, list[list[str]]],
) -> list[Turn]:
    """Replace each run of turns marked with one request by one neutral
    user/assistant exchange (same session, same timestamps)."""
    out: list[Turn] = []
    i = 0
    while i < len(turns):
        turn = turns[i]
        if turn.request is None:
            out.append(turn)
            i += 1
            continue
        j = i
        while j + 1 < len(turns) and turns[j + 1].request == turn.request:
            j += 1
        user, assistant = neutral_for(dialogue_id, turn.request, languages[turn.request], pool)
        out.append(Turn("user", user, turn.session_id, turn.timestamp))
        end = turns[j].timestamp if j > i else turn.timestamp + 1
        out.append(Turn("assistant", assistant, turn.session_id, end))
        i = j + 1
    return out


def _has(text: str, value: str) -> bool:
    return value.casefold() in text.casefold()


def validate_suite(raw: dict[str, Any]) -> list[str]:
    """Every problem found in a raw suite (empty when it is sound).

    Beyond the schema: request turns open with a user turn and are
    contiguous; every target occurs before its request and in no unmarked
    turn after it; replacements carry a new value said in the request and no
    relearning probe, other requests a relearning turn after the request
    holding the expected value; no expected value (new value, relearning,
    preservation) contains a target nor is contained in one; preservation
    values occur in the control version; neutral exchanges hold no target
    or expected value; sessions are in date order.
    """
    problems: list[str] = []
    frames = raw.get("attack_frames", {})
    pool = raw.get("neutral_exchanges", {})
    for lang in LANGUAGES:
        if not pool.get(lang):
            problems.append(f"neutral_exchanges: no exchanges for {lang!r}")
        for name in FRAMED_ATTACKS:
            if "{question}" not in frames.get(lang, {}).get(name, ""):
                problems.append(f"attack_frames: {lang}.{name} missing or without {{question}}")
    dialogues = raw.get("dialogues")
    if not isinstance(dialogues, list) or not dialogues:
        return [*problems, "no dialogues"]
    neutral_text = "\n".join(s for ex in pool.values() for pair in ex for s in pair)
    seen_ids: set[str] = set()
    for d in dialogues:
        problems += _validate_dialogue(d, seen_ids, frames, neutral_text)
    return problems


def _validate_dialogue(
    d: dict[str, Any], seen_ids: set[str], frames: dict[str, Any], neutral_text: str
) -> list[str]:
    did = d.get("id", "?")
    where = f"dialogue {did}"
    problems: list[str] = []
    for key in ("id", "persona", "language", "sessions", "requests", "preservation"):
        if key not in d:
            problems.append(f"{where}: missing {key!r}")
    if problems:
        return problems
    if did in seen_ids:
        problems.append(f"{where}: duplicate id")
    seen_ids.add(did)
    if d["language"] not in LANGUAGES or d["language"] not in frames:
        problems.append(f"{where}: language {d['language']!r} has no attack frames")
    dates = []
    for s in d["sessions"]:
        try:
            dates.append(dt.datetime.strptime(s["date"], "%Y-%m-%d %H:%M"))
        except (KeyError, ValueError):
            problems.append(f"{where}: session {s.get('id')} has no valid date")
        for t in s.get("turns", []):
            if ("u" in t) == ("a" in t) or not str(t.get("u", t.get("a", ""))).strip():
                problems.append(f"{where}/{s.get('id')}: a turn needs exactly one of u/a")
    if problems:
        return problems
    if dates != sorted(dates):
        problems.append(f"{where}: sessions out of date order")
    turns = _raw_turns(d)
    req_ids = [r.get("id") for r in d["requests"]]
    if len(set(req_ids)) != len(req_ids) or not req_ids:
        problems.append(f"{where}: request ids missing or duplicated")
    for t in turns:
        for mark in (t.request, t.relearn):
            if mark is not None and mark not in req_ids:
                problems.append(f"{where}: turn marked with unknown request {mark!r}")
    all_targets = [v for r in d["requests"] for v in [*r.get("targets", []), *r.get("echoes", [])]]
    for r in d["requests"]:
        problems += _validate_request(where, r, turns, all_targets, neutral_text)
    control_text = "\n".join(t.text for t in turns if t.request is None)
    for p in d["preservation"]:
        if not p.get("question") or not p.get("expect"):
            problems.append(f"{where}: preservation probe without question or expect")
            continue
        if p.get("kind") not in ("sibling", "unrelated"):
            problems.append(f"{where}: preservation kind must be sibling or unrelated")
        for v in p["expect"]:
            if not _has(control_text, v):
                problems.append(f"{where}: preservation value {v!r} is not in the dialogue")
            if _has(neutral_text, v):
                problems.append(f"{where}: preservation value {v!r} occurs in a neutral exchange")
            for tgt in all_targets:
                if _has(v, tgt) or _has(tgt, v):
                    problems.append(f"{where}: preservation value {v!r} overlaps target {tgt!r}")
    return problems


def _validate_request(
    where: str, r: dict[str, Any], turns: list[Turn], all_targets: list[str], neutral_text: str
) -> list[str]:
    rid = r.get("id")
    at = f"{where}/{rid}"
    problems: list[str] = []
    for key in ("type", "language", "targets", "question", "attacks"):
        if key not in r:
            problems.append(f"{at}: missing {key!r}")
    if problems:
        return problems
    if r["type"] not in KINDS:
        problems.append(f"{at}: unknown type {r['type']!r}")
    if r["language"] not in LANGUAGES:
        problems.append(f"{at}: unknown language {r['language']!r}")
    if not r["targets"] or not all(isinstance(v, str) and v.strip() for v in r["targets"]):
        problems.append(f"{at}: targets must be non-empty strings")
        return problems
    for name in WRITTEN_ATTACKS:
        if not r["attacks"].get(name):
            problems.append(f"{at}: attack {name!r} missing")
    marked = [i for i, t in enumerate(turns) if t.request == rid]
    if not marked:
        return [*problems, f"{at}: no turn carries the request"]
    first, last = marked[0], marked[-1]
    if marked != list(range(first, last + 1)):
        problems.append(f"{at}: request turns are not contiguous")
    if turns[first].role != "user":
        problems.append(f"{at}: the request must open with a user turn")
    before = "\n".join(t.text for t in turns[:first])
    after_unmarked = [t for t in turns[last + 1 :] if t.request is None]
    echoes = r.get("echoes", [])
    if not isinstance(echoes, list) or not all(isinstance(v, str) and v.strip() for v in echoes):
        problems.append(f"{at}: echoes must be a list of non-empty strings")
        echoes = []
    for v in [*r["targets"], *echoes]:
        if not _has(before, v):
            problems.append(f"{at}: target {v!r} does not occur before the request")
        for t in after_unmarked:
            if _has(t.text, v):
                problems.append(f"{at}: target {v!r} restated after the request: {t.text[:60]!r}")
        if _has(neutral_text, v):
            problems.append(f"{at}: target {v!r} occurs in a neutral exchange")
    expected: list[str] = []
    relearn_turns = [t for t in turns if t.relearn == rid]
    if r["type"] == "replacement":
        new = r.get("new_value")
        if not new:
            problems.append(f"{at}: a replacement needs new_value")
        else:
            expected.append(new)
            said = "\n".join(turns[i].text for i in marked if turns[i].role == "user")
            if not _has(said, new):
                problems.append(f"{at}: new_value {new!r} is not said in the request")
        if r.get("relearning") is not None or relearn_turns:
            problems.append(f"{at}: replacements are exempt from relearning")
    else:
        if r.get("new_value") is not None:
            problems.append(f"{at}: only replacements take a new_value")
        rel = r.get("relearning") or {}
        if not rel.get("question") or not rel.get("expect"):
            problems.append(f"{at}: relearning probe missing")
        elif not relearn_turns:
            problems.append(f"{at}: no relearning turn")
        else:
            expected += rel["expect"]
            idx = turns.index(relearn_turns[0])
            if idx <= last:
                problems.append(f"{at}: the relearning turn must follow the request")
            said = "\n".join(t.text for t in relearn_turns)
            for v in rel["expect"]:
                if not _has(said, v):
                    problems.append(f"{at}: relearning value {v!r} not in its relearning turn")
    for v in expected:
        for tgt in all_targets:
            if _has(v, tgt) or _has(tgt, v):
                problems.append(f"{at}: expected value {v!r} overlaps target {tgt!r}")
    return problems


def parse_suite(raw: dict[str, Any], source: str = "suite") -> Suite:
    """Build a :class:`Suite` from raw JSON, refusing an unsound one."""
    problems = validate_suite(raw)
    if problems:
        shown = "; ".join(problems[:8]) + (
            f"; … ({len(problems)} problems)" if len(problems) > 8 else ""
        )
        raise SuiteError(f"{source}: {shown}")
    frames = raw["attack_frames"]
    pool = raw["neutral_exchanges"]
    dialogues = []
    for d in raw["dialogues"]:
        turns = _raw_turns(d)
        frame = frames[d["language"]]
        requests = []
        for r in d["requests"]:
            attacks = {name: r["attacks"][name] for name in WRITTEN_ATTACKS}
            for name in FRAMED_ATTACKS:
                attacks[name] = frame[name].format(question=r["question"])
            rel = r.get("relearning")
            requests.append(
                Request(
                    id=r["id"],
                    type=r["type"],
                    language=r["language"],
                    targets=tuple(r["targets"]),
                    echoes=tuple(r.get("echoes", [])),
                    new_value=r.get("new_value"),
                    question=r["question"],
                    relearning=Probe(rel["question"], tuple(rel["expect"])) if rel else None,
                    attacks={name: attacks[name] for name in ATTACKS},
                )
            )
        languages = {r.id: r.language for r in requests}
        dialogues.append(
            Dialogue(
                id=d["id"],
                persona=d["persona"],
                language=d["language"],
                turns=tuple(turns),
                control=tuple(derive_control(d["id"], turns, languages, pool)),
                requests=tuple(requests),
                preservation=tuple(
                    Preservation(p["question"], tuple(p["expect"]), p["kind"])
                    for p in d["preservation"]
                ),
            )
        )
    digest = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()[:16]
    return Suite(tuple(dialogues), source, digest)


def load_suite(path: Path | str | None = None) -> Suite:
    """Read and validate a suite file (the shipped one by default)."""
    p = Path(path) if path is not None else suite_path()
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteError(f"{p}: {exc}") from exc
    if not isinstance(raw, dict):
        raise SuiteError(f"{p}: the top level must be an object")
    return parse_suite(raw, p.name)


# -- scoring -------------------------------------------------------------------
def _blob(texts: Iterable[str]) -> str:
    # Joined with newlines so a value can never match across two texts.
    return "\n".join(texts).casefold()


class Prober:
    """Present / absent checks on one system, with the self-queries of
    forbidden values cached (they do not change between probes)."""

    def __init__(self, system: DialogueSystem, k: int) -> None:
        self.system = system
        self.k = k
        self._self: dict[str, str] = {}

    def recall(self, question: str) -> str:
        """Joined, casefolded top-k for a question."""
        return _blob(self.system.recall_texts(question, self.k))

    def missing(self, question: str, expect: Sequence[str]) -> list[str]:
        """Expected strings absent from the question's top-k."""
        blob = self.recall(question)
        return [v for v in expect if v.casefold() not in blob]

    def leaked(self, question: str, forbidden: Sequence[str]) -> tuple[list[str], list[str]]:
        """Forbidden strings in the question's top-k, and those found only by
        querying the string itself."""
        blob = self.recall(question)
        leaked = [v for v in forbidden if v.casefold() in blob]
        by_self = []
        for v in forbidden:
            if v in leaked:
                continue
            if v not in self._self:
                self._self[v] = self.recall(v)
            if v.casefold() in self._self[v]:
                by_self.append(v)
        return leaked, by_self


@dataclass
class Check:
    """One probe's verdict with its diagnostics (strings, never recall text)."""

    passed: bool
    missing: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    probe_leaked: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Compact form: empty lists dropped."""
        out: dict[str, Any] = {"pass": self.passed}
        for key in ("missing", "leaked", "probe_leaked"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


def present_check(prober: Prober, question: str, expect: Sequence[str]) -> Check:
    """Passes iff every expected string is in the question's top-k."""
    missing = prober.missing(question, expect)
    return Check(not missing, missing=missing)


def absent_check(
    prober: Prober, question: str, forbidden: Sequence[str], expect: Sequence[str] = ()
) -> Check:
    """Passes iff no forbidden string is in the question's top-k nor in the
    top-k of a query made of the string itself (and, for a replacement,
    every ``expect`` string is in the question's top-k)."""
    leaked, by_self = prober.leaked(question, forbidden)
    missing = prober.missing(question, expect) if expect else []
    return Check(not (leaked or by_self or missing), missing, leaked, by_self)


def held_check(stored: str, expect: Sequence[str]) -> Check:
    """Passes iff every expected string is in ``stored`` (a joined, casefolded
    blob of everything the store holds)."""
    missing = [v for v in expect if v.casefold() not in stored]
    return Check(not missing, missing=missing)


@dataclass
class RequestResult:
    """Every probe of one request on one system."""

    system: str
    dialogue: str
    request: str
    type: str
    language: str
    retention: Check
    efficacy: Check
    relearning: Check | None
    attacks: dict[str, Check]
    residual: Check
    preservation_ok: bool = False
    error: str | None = None

    @property
    def passed(self) -> bool:
        """BEMULA's request pass: all probes pass and the dialogue lost none of
        its preservation probes."""
        return (
            self.error is None
            and self.retention.passed
            and self.efficacy.passed
            and (self.relearning is None or self.relearning.passed)
            and all(c.passed for c in self.attacks.values())
            and self.residual.passed
            and self.preservation_ok
        )

    def failures(self) -> list[str]:
        """Names of the checks that failed (for the report)."""
        out = []
        if self.error:
            out.append("error")
        if not self.retention.passed:
            out.append("retention")
        if not self.efficacy.passed:
            out.append("efficacy")
        if self.relearning is not None and not self.relearning.passed:
            out.append("relearning")
        out += [f"attack:{n}" for n, c in self.attacks.items() if not c.passed]
        if not self.residual.passed:
            out.append("residual")
        if not self.preservation_ok:
            out.append("preservation")
        return out

    def explain(self) -> str:
        """The failed checks with the strings involved, for the report:
        "efficacy (recalled 4417), attacks 5/5, residual (4417)"."""

        def strings(values: Sequence[str]) -> str:
            return ", ".join(values)

        parts = []
        if self.error:
            parts.append("error")
        if not self.retention.passed:
            parts.append(f"retention (not recalled on control: {strings(self.retention.missing)})")
        e = self.efficacy
        if not e.passed:
            why = []
            if e.leaked or e.probe_leaked:
                why.append("recalled " + strings(dict.fromkeys(e.leaked + e.probe_leaked)))
            if e.missing:
                why.append("new value missing: " + strings(e.missing))
            parts.append(f"efficacy ({'; '.join(why)})")
        if self.relearning is not None and not self.relearning.passed:
            parts.append(f"relearning (missing {strings(self.relearning.missing)})")
        lost = [n for n, c in self.attacks.items() if not c.passed]
        if lost:
            parts.append(f"attacks {len(lost)}/{len(self.attacks)}")
        if not self.residual.passed:
            parts.append(f"residual (still stored: {strings(self.residual.leaked)})")
        if not self.preservation_ok:
            parts.append("a preservation probe of the dialogue lost")
        return "; ".join(parts)

    def to_row(self) -> dict[str, Any]:
        """One JSON row."""
        row: dict[str, Any] = {
            "system": self.system,
            "dialogue": self.dialogue,
            "request": self.request,
            "type": self.type,
            "language": self.language,
            "pass": self.passed,
            "retention": self.retention.to_json(),
            "efficacy": self.efficacy.to_json(),
            "relearning": self.relearning.to_json() if self.relearning else None,
            "attacks": {n: c.to_json() for n, c in self.attacks.items()},
            "residual": self.residual.to_json(),
            "preservation_ok": self.preservation_ok,
        }
        if self.error:
            row["error"] = self.error
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RequestResult:
        """Inverse of :meth:`to_row` (for ``--merge``)."""

        def check(j: dict[str, Any]) -> Check:
            return Check(
                j["pass"], j.get("missing", []), j.get("leaked", []), j.get("probe_leaked", [])
            )

        return cls(
            row["system"],
            row["dialogue"],
            row["request"],
            row["type"],
            row["language"],
            check(row["retention"]),
            check(row["efficacy"]),
            check(row["relearning"]) if row.get("relearning") else None,
            {n: check(c) for n, c in row["attacks"].items()},
            check(row["residual"]),
            row["preservation_ok"],
            row.get("error"),
        )


@dataclass
class PreservationResult:
    """One preservation probe on both versions."""

    system: str
    dialogue: str
    question: str
    kind: str
    control: Check
    forget: Check

    def to_row(self) -> dict[str, Any]:
        """One JSON row."""
        return {
            "system": self.system,
            "dialogue": self.dialogue,
            "question": self.question,
            "kind": self.kind,
            "control": self.control.to_json(),
            "forget": self.forget.to_json(),
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> PreservationResult:
        """Inverse of :meth:`to_row`."""

        def check(j: dict[str, Any]) -> Check:
            return Check(j["pass"], j.get("missing", []))

        return cls(
            row["system"],
            row["dialogue"],
            row["question"],
            row["kind"],
            check(row["control"]),
            check(row["forget"]),
        )


def replay(system: DialogueSystem, turns: Sequence[Turn]) -> list[str]:
    """Reset the system and feed it the turns in order; returns the errors
    (a turn that raises is recorded and the replay goes on)."""
    system.reset()
    errors = []
    for t in turns:
        try:
            system.add_turn(t.role, t.text, session_id=t.session_id, timestamp=t.timestamp)
        except Exception as exc:  # one bad turn must not abort the run
            errors.append(f"{t.session_id}: {type(exc).__name__}: {exc}"[:300])
    return errors


def score_dialogue(
    system: DialogueSystem, dialogue: Dialogue, *, k: int = TOP_K
) -> tuple[list[RequestResult], list[PreservationResult]]:
    """Run both versions of one dialogue on ``system`` and score every probe."""
    name = system.name
    # Control version: retention and preservation baselines.
    control_errors = replay(system, dialogue.control)
    prober = Prober(system, k)
    control_pres = [present_check(prober, p.question, p.expect) for p in dialogue.preservation]
    held = _blob(system.stored_texts())
    retention = {
        r.id: (
            held_check(held, r.targets)
            if r.type == "inferential"
            else present_check(prober, r.question, r.targets)
        )
        for r in dialogue.requests
    }

    # Forget version.
    forget_errors = replay(system, dialogue.turns)
    prober = Prober(system, k)
    forget_pres = [present_check(prober, p.question, p.expect) for p in dialogue.preservation]
    # Only probes the system answered on the control version can be lost.
    preservation_ok = all(
        f.passed for c, f in zip(control_pres, forget_pres, strict=True) if c.passed
    )
    stored = _blob(system.stored_texts())
    results = []
    error = "; ".join(control_errors + forget_errors)[:600] or None
    for r in dialogue.requests:
        extra = (r.new_value,) if r.new_value else ()
        found = [v for v in r.forbidden if v.casefold() in stored]
        results.append(
            RequestResult(
                system=name,
                dialogue=dialogue.id,
                request=r.id,
                type=r.type,
                language=r.language,
                retention=retention[r.id],
                efficacy=absent_check(prober, r.question, r.forbidden, extra),
                relearning=(
                    present_check(prober, r.relearning.question, r.relearning.expect)
                    if r.relearning
                    else None
                ),
                attacks={n: absent_check(prober, q, r.forbidden) for n, q in r.attacks.items()},
                residual=Check(not found, leaked=found),
                preservation_ok=preservation_ok,
                error=error,
            )
        )
    pres = [
        PreservationResult(name, dialogue.id, p.question, p.kind, c, f)
        for p, c, f in zip(dialogue.preservation, control_pres, forget_pres, strict=True)
    ]
    return results, pres


# -- aggregation ---------------------------------------------------------------
def _rate(passed: int, n: int) -> dict[str, Any]:
    return {"pass": passed, "n": n, "rate": round(100 * passed / n, 1) if n else None}


def tally(
    requests: Sequence[RequestResult], pres: Sequence[PreservationResult] | None
) -> dict[str, Any]:
    """The seven metrics (and attack robustness per frame) for a group of
    request results; preservation is left out when ``pres`` is None."""
    stored = [r for r in requests if r.retention.passed]
    relearn = [r for r in requests if r.relearning is not None]
    out: dict[str, Any] = {
        "requests": len(requests),
        "retention": _rate(len(stored), len(requests)),
        "efficacy": _rate(sum(r.efficacy.passed for r in stored), len(stored)),
        "relearning": _rate(
            sum(r.relearning.passed for r in relearn if r.relearning), len(relearn)
        ),
        "attack": _rate(
            sum(c.passed for r in stored for c in r.attacks.values()),
            sum(len(r.attacks) for r in stored),
        ),
        "residual": _rate(sum(r.residual.passed for r in stored), len(stored)),
        "request_pass": _rate(sum(r.passed for r in requests), len(requests)),
        "attack_frames": {
            a: _rate(sum(r.attacks[a].passed for r in stored), len(stored)) for a in ATTACKS
        },
        "attack_frames_direct": {
            a: _rate(sum(not r.attacks[a].leaked for r in stored), len(stored)) for a in ATTACKS
        },
    }
    out["request_pass"]["wilson"] = wilson(out["request_pass"]["pass"], len(requests))
    if pres is not None:
        base = [p for p in pres if p.control.passed]
        out["preservation"] = _rate(sum(p.forget.passed for p in base), len(base))
        out["preservation_kinds"] = {
            kind: _rate(
                sum(p.forget.passed for p in base if p.kind == kind),
                sum(p.kind == kind for p in base),
            )
            for kind in ("sibling", "unrelated")
        }
        out["preservation_control"] = _rate(len(base), len(pres))
    return out


@dataclass
class SystemRun:
    """One system's run: status ("ok", "not installed: …", "failed to start: …"),
    version, results and wall time."""

    name: str
    status: str
    version: str | None
    requests: list[RequestResult] = field(default_factory=list)
    preservation: list[PreservationResult] = field(default_factory=list)
    seconds: float = 0.0
    readers: dict[str, int] = field(default_factory=dict)  # requests per reader (unrecall)

    def summary(self) -> dict[str, Any]:
        """Overall and per-type metrics, JSON-ready."""
        out: dict[str, Any] = {
            "status": self.status,
            "version": self.version,
            "seconds": self.seconds,
        }
        if self.readers:
            out["readers"] = dict(self.readers)
        if self.status != "ok":
            return out
        out["total"] = tally(self.requests, self.preservation)
        out["types"] = {
            kind: tally([r for r in self.requests if r.type == kind], None)
            for kind in KINDS
            if any(r.type == kind for r in self.requests)
        }
        out["languages"] = {
            lang: tally([r for r in self.requests if r.language == lang], None)
            for lang in LANGUAGES
            if any(r.language == lang for r in self.requests)
        }
        return out


@dataclass
class Report:
    """Everything one run produced."""

    suite: Suite
    systems: list[SystemRun]
    k: int
    network_attempts: list[str]
    dialogues: int
    revision: str | None = None

    def summary(self) -> dict[str, Any]:
        """JSON-ready aggregates."""
        ds = [d for d in self.suite.dialogues][: self.dialogues]
        return {
            "suite": self.suite.source,
            "suite_digest": self.suite.digest,
            "k": self.k,
            "revision": self.revision,
            "dialogues": len(ds),
            "requests": sum(len(d.requests) for d in ds),
            "turns": sum(len(d.turns) for d in ds),
            "preservation_probes": sum(len(d.preservation) for d in ds),
            "network_attempts": len(self.network_attempts),
            "systems": {run.name: run.summary() for run in self.systems},
        }


# -- running -------------------------------------------------------------------
NOTES = {
    "unrecall": (
        "every turn goes through `Memory.add` (both roles, with session id and timestamp), "
        "which detects and executes forget requests said in the dialogue; a fresh SQLite "
        "store per dialogue version; hybrid recall."
    ),
    "langgraph": "`InMemoryStore` with a vector index; every turn stored verbatim as one item.",
    "mem0": (
        "OSS `Memory`, `infer=False` (no LLM), embedded Qdrant; every turn stored verbatim "
        "as one memory."
    ),
    "chroma": "`PersistentClient`, cosine HNSW; every turn stored verbatim as one document.",
    "baseline": "keep-everything: every turn kept, exact cosine top-k.",
}
PEER_NOTE = (
    "The peers run through the ForgetEval adapters on the same local MiniLM. Without an LLM "
    "at ingest none of them has a path from a request said in the dialogue to a deletion, "
    "so their forgetting scores measure exactly that end-to-end gap."
)


def run_system(
    name: str,
    suite: Suite,
    *,
    k: int = TOP_K,
    dialogues: int | None = None,
    factory: Callable[[str], DialogueSystem] = make_dialogue_system,
    progress: Callable[[str], None] | None = None,
) -> SystemRun:
    """Score one system on the suite (a missing peer is reported, not raised)."""
    start = time.perf_counter()
    try:
        system = factory(name)
    except PeerUnavailable as exc:
        return SystemRun(name, f"not installed: {exc}"[:200], system_version(name))
    except Exception as exc:
        return SystemRun(
            name, f"failed to start: {type(exc).__name__}: {exc}"[:200], system_version(name)
        )
    run = SystemRun(name, "ok", system_version(name))
    try:
        for d in steps(progress, suite.dialogues[:dialogues], name, "dialogue"):
            reqs, pres = score_dialogue(system, d, k=k)
            run.requests += reqs
            run.preservation += pres
            if progress:
                ok = sum(r.passed for r in reqs)
                progress(f"{name}: {d.id} {ok}/{len(reqs)} requests pass")
    finally:
        run.readers = dict(getattr(system, "readers", {}))
        system.close()
    run.seconds = round(time.perf_counter() - start, 1)
    return run


def run_benchmark(
    suite: Suite,
    systems: Sequence[str],
    *,
    k: int = TOP_K,
    dialogues: int | None = None,
    factory: Callable[[str], DialogueSystem] = make_dialogue_system,
    progress: Callable[[str], None] | None = None,
    guard: bool = True,
    allow: Collection[tuple[str, int]] = (),
) -> Report:
    """Score every system, one after another, with the network refused
    (but for the loopback ``(address, port)`` pairs in ``allow``)."""
    runs: list[SystemRun] = []
    attempts: list[str] = []
    for name in systems:
        if guard:
            with network_guard(allow) as seen:
                runs.append(
                    run_system(
                        name, suite, k=k, dialogues=dialogues, factory=factory, progress=progress
                    )
                )
            attempts += [f"{name}: {a}" for a in seen]
        else:
            runs.append(
                run_system(
                    name, suite, k=k, dialogues=dialogues, factory=factory, progress=progress
                )
            )
        if progress:
            progress(f"{name}: {runs[-1].status} ({runs[-1].seconds} s)")
    n = len(suite.dialogues) if dialogues is None else min(dialogues, len(suite.dialogues))
    return Report(suite, runs, k, attempts, n, revision())


# -- rendering -----------------------------------------------------------------
def _cell(m: dict[str, Any] | None) -> str:
    if not m or not m["n"]:
        return "–"
    return f"{m['rate']:.1f}% ({m['pass']}/{m['n']})"


def _pct(m: dict[str, Any] | None) -> str:
    if not m or not m["n"]:
        return "–"
    return f"{m['rate']:.0f}"


def render_markdown(report: Report, chart: str | None = "unlearning.png") -> str:
    """The summary section: overall table, per-type tables, attack frames,
    preservation by kind and the failing requests of each system."""
    s = report.summary()
    ran = [r for r in report.systems if r.status == "ok"]
    lines = [
        "## Unlearning (BEMULA-style)",
        "",
        f"`unrecall bench unlearning`: {s['dialogues']} hand-written multi-session dialogues "
        f"({s['turns']} turns) with {s['requests']} forget requests said in the chat, in four "
        "languages, each replayed turn by turn in a *forget* version and a *control* version "
        "where every request is replaced by a neutral exchange. Deterministic retrieval-level "
        f"scoring on the top-{report.k}: a value counts as recalled when it is a casefold "
        "substring of the joined top-k (forbidden values are also probed with a query made "
        "of the value itself), plus a residual check over everything the store still holds. "
        "Efficacy, attack robustness and residual-clean count only requests whose control "
        "retention probe passed; preservation only probes that passed on the control "
        "version. A request passes only if all its probes pass and none of its dialogue's "
        "preservation probes (answered on the control version) is lost. "
        f"Revision `{s['revision'] or 'unknown'}`, suite `{s['suite']}` "
        f"(digest `{s['suite_digest']}`); "
        f"{os.cpu_count()} CPU cores, Python {platform.python_version()}; network attempts "
        f"during the run: {s['network_attempts']}.",
        "",
        "| System | Version | "
        + " | ".join(label for _, label in METRICS)
        + " | Wilson 95% (pass) | s |",
        "| --- | --- |" + " --- |" * (len(METRICS) + 2),
    ]
    for run in report.systems:
        sm = s["systems"][run.name]
        if run.status != "ok":
            lines.append(
                f"| {run.name} | {run.version or '–'} | {run.status} |" + " |" * (len(METRICS) + 1)
            )
            continue
        t = sm["total"]
        lo, hi = t["request_pass"]["wilson"]
        cells = " | ".join(_cell(t.get(key)) for key, _ in METRICS)
        ver = run.version or "–"
        lines.append(f"| {run.name} | {ver} | {cells} | [{lo:.1f}, {hi:.1f}] | {run.seconds} |")
    lines.append("")
    for run in report.systems:
        if run.readers:
            said = ", ".join(f"{n} by the {who} reader" for who, n in sorted(run.readers.items()))
            lines += [f"{run.name}: requests executed over both versions: {said}.", ""]
    if ran:
        kinds = [k for k in KINDS if any(k in s["systems"][r.name]["types"] for r in ran)]
        type_keys = [m for m in METRICS if m[0] != "preservation"]
        lines += [
            "Per request type (% retention / efficacy / relearning / attack / residual-clean "
            "/ request pass; n = requests):",
            "",
            "| Type | " + " | ".join(r.name for r in ran) + " |",
            "| --- |" + " --- |" * len(ran),
        ]
        for kind in kinds:
            n = max(s["systems"][r.name]["types"].get(kind, {}).get("requests", 0) for r in ran)
            cells = []
            for r in ran:
                t = s["systems"][r.name]["types"].get(kind)
                cells.append(" / ".join(_pct(t.get(key)) for key, _ in type_keys) if t else "–")
            lines.append(f"| {kind} (n={n}) | " + " | ".join(cells) + " |")
        lines += [
            "",
            "Request pass rate per request language:",
            "",
            "| Language | " + " | ".join(r.name for r in ran) + " |",
            "| --- |" + " --- |" * len(ran),
        ]
        for lang in LANGUAGES:
            ts = [s["systems"][r.name]["languages"].get(lang) for r in ran]
            if any(ts):
                n = max(t["requests"] for t in ts if t)
                lines.append(
                    f"| {lang} (n={n}) | "
                    + " | ".join(_cell(t["request_pass"]) if t else "–" for t in ts)
                    + " |"
                )
        lines += [
            "",
            "Attack robustness per frame (in brackets: the share where the frame's own "
            "top-k did not surface the target, without the self-query) and preservation "
            "per kind, conditioned as above:",
            "",
            "| Probe | " + " | ".join(r.name for r in ran) + " |",
            "| --- |" + " --- |" * len(ran),
        ]
        for a in ATTACKS:
            cells = []
            for r in ran:
                tot = s["systems"][r.name]["total"]
                direct = tot["attack_frames_direct"][a]
                cells.append(f"{_cell(tot['attack_frames'][a])} [{_pct(direct)}%]")
            lines.append(f"| attack: {a} | " + " | ".join(cells) + " |")
        for kind in ("sibling", "unrelated"):
            lines.append(
                f"| preservation: {kind} | "
                + " | ".join(
                    _cell(s["systems"][r.name]["total"]["preservation_kinds"][kind]) for r in ran
                )
                + " |"
            )
        lines.append(
            "| preservation probes recalled on control | "
            + " | ".join(_cell(s["systems"][r.name]["total"]["preservation_control"]) for r in ran)
            + " |"
        )
        lines.append("")
    if chart:
        lines += [f"![Unlearning metrics per system and request pass rate per type]({chart})", ""]
    for run in [r for r in ran if r.name == "unrecall"]:
        failed = [r for r in run.requests if not r.passed]
        if failed:
            lines += [
                f"Requests {run.name} fails ({len(failed)} of {len(run.requests)}), with the "
                "checks that failed:",
                "",
            ]
            for r in failed:
                lines.append(
                    f"- `{r.dialogue}/{r.request}` ({r.type}, {r.language}): " + r.explain()
                )
            lines.append("")
        lost = [p for p in run.preservation if p.control.passed and not p.forget.passed]
        if lost:
            lines += [
                f"Preservation probes {run.name} loses (recalled on control, not after "
                "the requests):",
                "",
            ]
            lines += [
                f"- `{p.dialogue}` ({p.kind}): {p.question} (missing {', '.join(p.forget.missing)})"
                for p in lost
            ]
            lines.append("")
    lines += ["How each system runs:", ""]
    lines += [f"- **{r.name}**: {NOTES.get(r.name, 'custom system.')}" for r in report.systems]
    if any(r.name != "unrecall" for r in report.systems):
        lines.append(f"- {PEER_NOTE}")
    lines.append("")
    return "\n".join(lines)


def render_chart(report: Report, path: Path) -> bool:
    """Two heatmaps (systems × metrics, systems × request-type pass rate)
    into a PNG; False when matplotlib is missing or nothing ran."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        return False
    s = report.summary()
    ran = [r.name for r in report.systems if r.status == "ok"]
    if not ran:
        return False
    kinds = [k for k in KINDS if any(k in s["systems"][n]["types"] for n in ran)]
    panels = [
        (
            "metrics (%)",
            [label for _, label in METRICS],
            [[s["systems"][n]["total"][key]["rate"] for key, _ in METRICS] for n in ran],
        ),
        (
            "request pass rate per type (%)",
            kinds,
            [
                [
                    (t["request_pass"]["rate"] if (t := s["systems"][n]["types"].get(k)) else None)
                    for k in kinds
                ]
                for n in ran
            ],
        ),
    ]
    fig, axes = plt.subplots(2, 1, figsize=(10, 2.4 + 1.0 * len(ran)), squeeze=False)
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#d9d9d9")
    for ax, (title, cols, grid) in zip(axes[:, 0], panels, strict=True):
        data = np.ma.masked_invalid(np.array(grid, dtype=float))
        ax.imshow(data, cmap=cmap, vmin=0, vmax=100, aspect="auto")
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                ax.text(
                    j, i, "–" if v is None else f"{v:.0f}", ha="center", va="center", fontsize=8
                )
        ax.set_xticks(range(len(cols)), [c.replace(" ", "\n", 1) for c in cols], fontsize=8)
        ax.set_yticks(range(len(ran)), ran, fontsize=9)
        ax.set_title(f"Unlearning ({s['requests']} requests, top-{report.k}): {title}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_outputs(report: Report, out: Path) -> dict[str, Path]:
    """Write requests.json, preservation.json, summary.json, summary.md and
    the chart into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "requests": out / "requests.json",
        "preservation": out / "preservation.json",
        "summary_json": out / "summary.json",
        "summary_md": out / "summary.md",
        "chart": out / "unlearning.png",
    }

    def rows(items: Iterable[dict[str, Any]]) -> str:
        body = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in items)
        return "[\n" + body + "\n]\n"

    paths["requests"].write_text(
        rows(r.to_row() for run in report.systems for r in run.requests), encoding="utf-8"
    )
    paths["preservation"].write_text(
        rows(p.to_row() for run in report.systems for p in run.preservation), encoding="utf-8"
    )
    summary = report.summary()
    summary["network_attempt_list"] = report.network_attempts[:50]
    paths["summary_json"].write_text(
        json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    charted = render_chart(report, paths["chart"])
    if not charted:
        del paths["chart"]
    paths["summary_md"].write_text(
        render_markdown(report, "unlearning.png" if charted else None), encoding="utf-8"
    )
    return paths


def load_previous(out: Path, suite: Suite, k: int, dialogues: int) -> list[SystemRun]:
    """Earlier runs stored in ``out`` on the same suite digest, ``k`` and
    number of dialogues (anything else is left out)."""
    try:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        req_rows = json.loads((out / "requests.json").read_text(encoding="utf-8"))
        pres_rows = json.loads((out / "preservation.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    same = (summary.get("suite_digest"), summary.get("k"), summary.get("dialogues"))
    if same != (suite.digest, k, dialogues):
        return []
    runs = []
    for name, meta in summary.get("systems", {}).items():
        run = SystemRun(name, meta["status"], meta.get("version"), seconds=meta.get("seconds", 0.0))
        run.requests = [RequestResult.from_row(r) for r in req_rows if r["system"] == name]
        run.preservation = [
            PreservationResult.from_row(p) for p in pres_rows if p["system"] == name
        ]
        runs.append(run)
    return runs


# -- command line --------------------------------------------------------------
def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``unrecall bench unlearning``."""
    p.add_argument(
        "--cases",
        default=None,
        metavar="FILE",
        help="a suite file in the unlearning schema (default: the shipped suite)",
    )
    p.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated systems (default: {','.join(DEFAULT_SYSTEMS)})",
    )
    p.add_argument(
        "-k",
        "--k",
        dest="k",
        type=int,
        default=TOP_K,
        help=f"recall depth per probe (default: {TOP_K})",
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    p.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"output folder (default: {DEFAULT_OUT})"
    )
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep earlier results of systems not in --systems from --out "
        "(same suite, k and dialogues)",
    )
    p.add_argument(
        "--interpreter",
        metavar="URL",
        help="unrecall reads requests with the LLM at this OpenAI-compatible endpoint "
        "(.../v1; e.g. a local llama-cpp server); the dialogues' texts are sent to it",
    )
    p.add_argument("--interpreter-model", default="default", help="the endpoint's model name")
    p.add_argument(
        "--interpreter-timeout",
        type=float,
        default=120.0,
        help="seconds per interpretation before the default reader decides (default: 120)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines or bars on stderr")


def run_cli(args: argparse.Namespace) -> int:
    """Run the benchmark from parsed arguments; 0 on success, 2 on bad input."""
    systems = chosen_systems(args.systems, SYSTEMS)
    if systems is None:
        return 2
    if args.k < 1 or (args.limit is not None and args.limit < 1):
        print("error: -k and --limit must be at least 1", file=sys.stderr)
        return 2
    try:
        suite = load_suite(args.cases)
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    progress = reporter(args)

    interpreter, allow = None, []
    if args.interpreter:
        where = urlsplit(args.interpreter)
        if where.hostname not in LOOPBACK or where.port is None:
            print("error: --interpreter must be a loopback URL with a port, e.g. "
                  "http://127.0.0.1:8080/v1 (the run stays offline)", file=sys.stderr)  # fmt: skip
            return 2
        interpreter = Interpreter(
            args.interpreter, args.interpreter_model, timeout=args.interpreter_timeout
        )
        allow = [(where.hostname, where.port)]
    report = run_benchmark(
        suite,
        systems,
        k=args.k,
        dialogues=args.limit,
        progress=progress,
        factory=lambda name: make_dialogue_system(name, interpreter),
        allow=allow,
    )
    if args.merge:
        kept = [
            r
            for r in load_previous(Path(args.out), suite, args.k, report.dialogues)
            if r.name not in systems
        ]
        report.systems = merge_kept(report.systems, kept, SYSTEMS, progress)
    return finish(report, Path(args.out), write_outputs, progress)

"""Executing forget requests said in the dialogue.

``dialogue.requests.detect`` reads a user turn; this module plans what the
request removes and applies it as one transaction with closure. The text
side (what the request names, slots, owners, cuts) is in
``control.request_parts``.

* **targets** - each part the request names (``request_parts.parts``: the
  target split at conjunctions, quoted items, items listed beside it) is
  either a *value* - matched literally through the targeting stages of
  ``control.targeting``, then the names in it, then its content words in
  any inflection - or a *slot* ("my personal mobile", "el número de mi
  tarjeta"), resolved to the memory holding an identifier of the slot's
  kind, sharing its words and close in meaning, and owned by the right
  person (my car reg, not Salma's). By kind, besides: a *category* request
  sweeps its topic's memories; a *temporal* one takes what the user said in
  its time window (or last session), narrowed by "about X"; an
  *inferential* one takes hedged assistant conclusions, as memories and as
  turns; a *replacement* finds the number sharing the longest prefix with
  the new one, else the slot the turn names, else meaning; a completion
  ("I finished X") only a task that names it.
* **span-level removal** - a quoted item or replaced value inside a longer
  memory, one item of a list memory, or one of several identifiers is cut
  out (or replaced by the new value); the rest stays. A memory that is
  little else than the value is deleted.
* **copies** - identifiers of what went are cut from other memories and
  scrubbed from turns; assistant memories repeating it (same identifier,
  most of its words, or within the hour one of its names, numbers or two of
  its words) go too; source turns are scrubbed as a purge does.
* **the request turn** is stored redacted: ``[asked to forget: <what>]``
  followed by the clauses of the turn that neither make the request nor hold
  a forgotten value; those clauses (a replacement's new value) become
  memories as usual.
* **echoes** - for the rest of the session, assistant clauses that repeat a
  forgotten value ("OK, I removed 'Visit the library'") are dropped. Only
  keyed digests of the values are held, in memory, never written.

The result is a :class:`~unrecall.records.ForgetReport`: counts, kinds and
ids, never content; it is recorded in the audit trail with the ids.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from unrecall.control.operations import ControlPlane, Tenant
from unrecall.control.request_parts import (
    SPEECH_PREFIX,
    TASK,
    about_someone_else,
    best_by_stems,
    core_stems,
    core_words,
    identifiers_in,
    is_request_clause,
    is_slot,
    long_stems,
    longest_prefix,
    name_keys_in,
    names_someone,
    owned_by,
    parts,
    segments_naming,
    shared_words,
    slot_identifier,
    slot_kinds,
    slot_owner,
    topics_of,
    without,
)
from unrecall.control.targeting import matchers, matching_memories, matching_turns, semantic
from unrecall.dialogue.idioms import conclusion
from unrecall.dialogue.requests import ABOUT_TOPIC, ForgetRequest, spelled_out, topic_categories
from unrecall.dialogue.windows import names_last_session, names_weekday, window
from unrecall.errors import InvalidInput
from unrecall.recall.categories import categories
from unrecall.recall.clauses import split_clauses
from unrecall.recall.dates import day_spans
from unrecall.recall.identifiers import keys as identifier_keys
from unrecall.recall.identifiers import query_keys
from unrecall.recall.lexical import (
    STOPWORDS,
    content_overlap,
    content_words,
    overlap_with,
    text_keys,
)
from unrecall.recall.names import (
    inner_names,
    mentions,
    name_keys,
    sure_name_keys,
    wrote_in_lowercase,
)
from unrecall.records import ACTIVE, STATES, ForgetReport
from unrecall.storage.base import MemoryRow, TurnRow

# A memory whose words are mostly the value is the value: delete it whole.
_REST_MIN_WORDS = 4
# How many of a session's latest user memories an assistant turn may repeat.
_RECENT = 50
# The slot resolver: bonus per slot word a memory shares (up to two), bonus
# for holding an identifier of the slot's kind, the least score to act, and
# how close to the best another memory must score (as a restatement).
SLOT_WORD = 0.2
SLOT_KIND = 0.3
SLOT_MIN = 0.45
SLOT_MARGIN = 0.05
NEAR_DUPLICATE = 0.85
# Least cosine of a listed item's memory to the request's target, and of a
# memory in a time window to the topic the request names (a name shared with
# the topic alone gives about 0.3: "Margaret's memory" ~ "Margaret's NI number").
TOPIC_MIN = 0.3
WINDOW_TOPIC_MIN = 0.4
# An assistant memory this soon after a removed one, naming its values, echoes it.
ECHO_SECONDS = 3600.0
REPLY_SHARED = 2  # content words an assistant reply shares with a forgotten memory
WEEK = 7 * 86400.0
WEEKS_BACK = 4  # how far back "Friday night" may look for a Friday we talked
EVENT_MIN = 0.4  # cosine of an event ("the Portugal thing") to what was said then
_EVENT = re.compile(r"\b(?:from|during|while|when)\s+(?:the|our|my|i|we)\b", re.IGNORECASE)
# Penalty for a memory naming someone else, when the slot is the user's identifier.
SLOT_OTHER = 0.15
# Conclusions: bonus for a hedged statement, least score to act.
CONCLUSION_HEDGE = 0.1
CONCLUSION_MIN = 0.28  # targeting.QUERY_FLOOR: unrelated short texts stay below
_HEDGE = re.compile(
    r"\b(?:sounds?\s+(?:a\s+lot\s+|a\s+bit\s+|rather\s+|very\s+much\s+)?like|seems?|might|"
    r"(?:warning\s+)?signs?\s+of|symptoms?\s+of|could\s+indicate|points?\s+to|consistent\s+with|"
    r"signes?\s+de|s[ií]ntomas?\s+de|se[ñn]ales?\s+de|anzeichen|hinweis\s+auf|"
    r"may\s+be|maybe|perhaps|could\s+(?:well\s+)?be|i\s+wonder|i\s+suspect|likely|"
    r"looks?\s+like|probably|suggests?|guess|assume|parece|suena\s+a|quizás|tal\s+vez|"
    r"semble|on\s+dirait|ressemble|sans\s+doute|peut-être|scheint|klingt|vermutlich|"
    r"anscheinend|k[öo]nnte|vielleicht|wohl)\b",
    re.IGNORECASE,
)
# An assistant clause repeating this share of a removed memory is a copy.
_COPY_OVERLAP = 0.6


@dataclass
class _Plan:
    rows: list[MemoryRow] = field(default_factory=list)
    match: str = "none"
    values: list[str] = field(default_factory=list)  # values cut out of longer memories
    named: list[str] = field(default_factory=list)  # every part the request names
    turns: list[TurnRow] = field(default_factory=list)  # assistant turns to scrub
    new_value: str | None = None  # what replaces ``values`` when not the request's own


class RequestExecutor:
    """Plans and applies forget requests; holds the per-session echo guard."""

    def __init__(self, control: ControlPlane) -> None:
        self.control = control
        self.storage = control.storage
        self.recall = control.recall
        # (tenant key, session) -> keyed digests of each forgotten value's stems
        self._echoes: dict[tuple[str, str | None], list[frozenset[str]]] = {}
        # the rows a request is planned on (see ``_memories``)
        self._rows: dict[tuple[Any, ...], list[MemoryRow]] = {}
        # (tenant key, session) -> internal ids of the session's latest user memories
        self._said: dict[tuple[str, str | None], list[int]] = {}

    # -- the echo guard ---------------------------------------------------
    def _guard(self, tenant: Tenant, session: str | None, values: Sequence[str]) -> None:
        key = (tenant.key, session)
        # One session's guard at a time per tenant: a new session starts clean.
        for other in [k for k in self._echoes if k[0] == tenant.key and k != key]:
            del self._echoes[other]
            self._said.pop(other, None)
        guard = self._echoes.setdefault(key, [])
        for value in values:
            stems = self._stem_digests(" ".join(core_words(value)))
            if stems:
                guard.append(stems)

    def _stem_digests(self, text: str) -> frozenset[str]:
        return frozenset(self.recall.hasher.term(s) for s in content_words(text))

    def echo_filter(self, tenant: Tenant, session: str | None, text: str) -> str | None:
        """An assistant turn without the clauses that repeat a value forgotten
        earlier in this session (every content word of it, in any inflection);
        None when nothing of it is left."""
        guard = self._echoes.get((tenant.key, session))
        if not guard:
            return text
        kept = [c for c in split_clauses(text) if not self._echoes_in(c, guard)]
        return " ".join(kept) if kept else None

    def _echoes_in(self, clause: str, guard: list[frozenset[str]]) -> bool:
        digests = self._stem_digests(clause)
        return any(value <= digests for value in guard)

    # -- repetitions ------------------------------------------------------
    def remember_said(self, tenant: Tenant, session: str | None, uids: Sequence[str]) -> None:
        """Note the user memories of this session an assistant may repeat."""
        recent = self._said.setdefault((tenant.key, session), [])
        rows = [self.storage.memory(tenant.id, uid) for uid in uids]
        recent += [r.id for r in rows if r is not None]
        del recent[:-_RECENT]

    def repeats(self, tenant: Tenant, session: str | None, text: str) -> list[int]:
        """Internal ids of this session's user memories an assistant message
        repeats (same identifier or name keys, a name the user wrote in
        lowercase, or most of the content words)."""
        recent = self._said.get((tenant.key, session))
        if not recent:
            return []
        # the reply read once. A shared name must be a name on one side at
        # least: "Got it." and "Got a court letter" share a first word only
        idents = identifier_keys(text)
        sure = idents | sure_name_keys(text)
        weak, names = (idents | name_keys(text)) - sure, inner_names(text)
        said = content_words(text)
        return [
            r.id
            for r in self.storage.memories_by_id(recent)
            if r.state == ACTIVE
            and (
                (sure & text_keys(r.text))
                or (weak and weak & sure_name_keys(r.text))
                or overlap_with(said, r.text) >= _COPY_OVERLAP
                or wrote_in_lowercase(names, r.text)
            )
        ]

    def link(self, tenant: Tenant, memory_ids: list[int], turn_uid: str) -> None:
        """Make an assistant turn one more source of the memories it repeats,
        so forgetting a fact scrubs the repetition by closure."""
        turn = self.storage.turn(tenant.id, turn_uid)
        if turn is not None and memory_ids:
            self.storage.link(memory_ids, turn.id)

    # -- execution --------------------------------------------------------
    def execute(
        self,
        tenant: Tenant,
        request: ForgetRequest,
        text: str,
        *,
        session_id: str | None,
        at: float,
        metadata: dict[str, Any],
        reference: TurnRow | None = None,
    ) -> ForgetReport:
        """Apply one request said in ``text`` (a user turn); see the module.
        ``reference`` is the user's previous turn when the request's object
        was said there ("the thing about my mum..." / "yes. bin it"): it is
        part of the request and goes first, with what was derived from it."""
        with self.storage.transaction():
            if reference is not None:
                self.storage.delete_memories(self.storage.derived([reference.id]))
                self.storage.delete_turns([reference.id])
            self._rows.clear()
            plan = self._plan(tenant, request, text, session_id, at)
            rows = plan.rows + self._copies(tenant, plan.rows)
            removed, rewritten = self._split(rows, plan.values)
            # An identifier of a removed memory said again in another one
            # ("... which is why I mix 4417 up") is cut out of that one too.
            for ident in identifiers_in(removed):
                taken = {r.id for r in removed + rewritten}
                found, _ = self._match_value(tenant, ident)
                more = [
                    r for r in found if r.id not in taken and without(r.text, [ident]) is not None
                ]
                if more:
                    plan.values.append(ident)
                    rewritten += more
            gone = removed + rewritten
            gone_ids = {r.id for r in gone}
            survivors = [r.text for r in self._memories(tenant, STATES) if r.id not in gone_ids]
            said = plan.values + self._salient(gone, survivors)
            if request.kind == "inferential":  # "that thing you said about depression"
                said += shared_words(text, removed + rewritten)
            # A replacement's clause with the new value stays unless it says
            # the old one; other requests drop every clause naming a part.
            named = [] if request.kind == "replacement" else plan.named
            redacted, kept = self._redact(request, text, said + named)
            turn, created = self._request_turn(tenant, redacted, kept, session_id, at, metadata)
            replacements = self._rewrite(tenant, rewritten, plan, request, at)
            # turns that still say a value or an identifier of what went (an
            # assistant's "Noted: PIN 4417" that became no memory of its own)
            said_again = plan.values + identifiers_in(removed + rewritten)
            extra = self._turns_saying(tenant, said_again) + plan.turns
            turns = self.control._purge_rows(removed + rewritten, extra)
            self.recall.index_memories(created + replacements)
            report = ForgetReport(
                kind=request.kind,
                language=request.language,
                categories=sorted(request.categories),
                match=plan.match,
                removed=[r.uid for r in removed],
                rewritten=[r.uid for r in rewritten],
                created=[m.uid for m in created + replacements],
                turns_removed=turns + (reference is not None),
                request_turn=turn.uid,
            )
            self.control.audit.record(
                tenant.handle,
                "forget_request",
                [*report.removed, *report.rewritten, *report.created, turn.uid]
                + ([reference.uid] if reference is not None else []),
                {
                    "kind": request.kind,
                    "language": request.language,
                    "categories": report.categories,
                    "match": plan.match,
                    "removed": len(removed),
                    "rewritten": len(rewritten),
                    "turns": turns,
                },
            )
        # The rest of the session drops assistant clauses repeating a value or
        # an identifier of what went (not any capitalised word of it: "my
        # English is ok" going must not silence every later "English").
        self._rows.clear()  # written over: no read of them outlives the request
        self._guard(
            tenant, session_id, plan.values + plan.named + identifiers_in(removed + rewritten)
        )
        return report

    def _request_turn(
        self,
        tenant: Tenant,
        stored: str,
        kept: list[str],
        session_id: str | None,
        at: float,
        metadata: dict[str, Any],
    ) -> tuple[TurnRow, list[MemoryRow]]:
        """Store a request turn as ``stored`` (indexed), with the memories
        of the clauses ``kept`` from it."""
        turn = self.storage.add_turn(tenant.id, "user", stored, session_id, at, metadata)
        self.storage.index_turn(turn, self.recall.hasher.document(stored))
        created = [
            self.control._derive(
                tenant,
                clause,
                "message" if len(kept) == 1 else "clause",
                [turn.id],
                at,
                None,
                {**metadata, "role": "user"},
            )
            for clause in kept
        ]
        return turn, created

    def finds(
        self, tenant: Tenant, request: ForgetRequest, text: str, session: str | None, at: float
    ) -> list[MemoryRow] | None:
        """The memories the rules' reading of a request names (read-only:
        the plan ``execute`` would make, not applied); None when it names
        nothing stored."""
        self._rows.clear()
        found = self._plan(tenant, request, text, session, at)
        self._rows.clear()
        return found.rows if found.rows or found.turns else None

    def execute_rows(
        self,
        tenant: Tenant,
        rows: list[MemoryRow],
        text: str,
        *,
        kind: str,
        language: str,
        match: str,
        session_id: str | None,
        at: float,
        metadata: dict[str, Any],
        keep_turn: bool = False,
        values: Sequence[str] = (),
        new_value: str | None = None,
    ) -> ForgetReport:
        """Forget memories the resolve stage found for a request said in
        ``text``: each row and its copies deleted with closure (source turns
        scrubbed, assistant repetitions and turns still saying one of their
        identifiers too), in one transaction. The request turn is stored as
        ``[asked to forget: <kind>]``; with ``keep_turn`` (a replacement,
        whose turn says the new value) it is stored as said, and its clauses
        become memories. With ``values``, a row that says more than them
        keeps the rest: the values are cut out, or replaced by ``new_value``."""
        with self.storage.transaction():
            self._rows.clear()
            gone = rows + self._copies(tenant, rows)
            idents = identifiers_in(gone)
            extra = self._turns_saying(tenant, idents)
            survivors = [
                r.text for r in self._memories(tenant, STATES) if r.id not in {g.id for g in gone}
            ]
            said = idents + self._salient(gone, survivors)
            removed, rewritten = self._split(gone, list(values)) if values else (gone, [])
            request = ForgetRequest(kind, language, values[0] if values else "", new_value)
            plan = _Plan(values=list(values), new_value=new_value)
            replacements = self._rewrite(tenant, rewritten, plan, request, at)
            turns = self.control._purge_rows(gone, extra)
            stored = text if keep_turn else f"[asked to forget: {kind}]"
            kept = split_clauses(text) if keep_turn else []
            turn, created = self._request_turn(tenant, stored, kept, session_id, at, metadata)
            self.recall.index_memories(created + replacements)
            report = ForgetReport(
                kind=kind,
                language=language,
                categories=[],
                match=match,
                removed=[r.uid for r in removed],
                rewritten=[r.uid for r in rewritten],
                created=[m.uid for m in created + replacements],
                turns_removed=turns,
                request_turn=turn.uid,
            )
            self.control.audit.record(
                tenant.handle,
                "forget_request",
                [*report.removed, *report.rewritten, *report.created, turn.uid],
                {"kind": kind, "language": language, "match": match, "removed": len(removed),
                 "rewritten": len(rewritten), "turns": turns},
            )  # fmt: skip
        self._rows.clear()
        self._guard(tenant, session_id, said)
        return report

    # -- planning ---------------------------------------------------------
    def _plan(
        self, tenant: Tenant, request: ForgetRequest, text: str, session: str | None, at: float
    ) -> _Plan:
        if request.kind == "temporal":
            rows = self._in_window(tenant, request, session, at)
            replies = self._replies(tenant, rows)
            # what the assistant derived from its replies goes with them
            rows += self.storage.memories_by_id(self.storage.derived([t.id for t in replies]))
            rows = list({r.id: r for r in rows if tenant.covers(r)}.values())
            return _Plan(rows, "time" if rows else "none", turns=replies)
        if request.kind == "replacement" and (rows := self._by_prefix(tenant, request)):
            return _Plan(rows, "prefix")
        found: dict[int, MemoryRow] = {}
        segments: list[tuple[int, str]] = []
        plan = _Plan()
        for part, cut, listed in parts(request, text):
            if request.kind == "inferential":
                continue  # a conclusion is found as one (below), not as a slot or value
            if is_slot(part, request.language) and not request.completion:
                rows, how = self._slot_rows(tenant, part), "slot"
                # one of several identifiers in the memory: cut just that one
                plan.values += [v for r in rows if (v := slot_identifier(r.text, part))]
            else:
                rows, how = self._match_value(tenant, part)
                if request.completion:  # "I finished X" retires the task, not X
                    rows = [r for r in rows if TASK.search(r.text)]
                # "mi RUT es X y mi número de alumna es Y": only the one it names
                plan.values += [v for r in rows if (v := slot_identifier(r.text, part))]
            if listed:
                rows = self._related(rows, request)
                owner = slot_owner(SPEECH_PREFIX.sub("", request.target.strip()))
                if slot_owner(part) in (None, "her", "his") and owner is not None:
                    rows = [r for r in rows if owned_by(r.text, owner)]
            plan.named.append(part)
            # and the names in it: "Kenzie's name" names Kenzie
            plan.named += [part[m.start : m.end] for m in mentions(part)]
            if not cut:  # "a fitting on the 3rd, and my eye test on the 13th": one item
                segments += [(r.id, seg) for r in rows for seg in segments_naming(r.text, part)]
            if rows:
                found.update({r.id: r for r in rows})
                plan.match = how if plan.match == "none" else plan.match
                if cut:
                    plan.values.append(part)
        whole: set[int] = set()
        if request.kind == "category" and not found and _EVENT.search(request.target):
            # "everything from the night I was planning the Portugal thing":
            # an occasion, not a topic: what was said in that conversation
            user_turns = [t for t in self.storage.turns(tenant.id) if t.role == "user"]
            rows = self._event(tenant, request, user_turns)
            found.update({r.id: r for r in rows})
            whole = {r.id for r in rows}
            plan.match = "time" if rows else plan.match
        if request.kind == "category" and topics_of(request) and not whole:
            owner = slot_owner(SPEECH_PREFIX.sub("", request.target.strip()))
            rows = [
                r
                for r in self._memories(tenant, STATES)
                if self._topics(r, request)
                and owned_by(r.text, owner)
                # "my love life" is not "Mere just got engaged"
                and not (owner in (None, "me") and about_someone_else(r.text))
            ]
            found.update({r.id: r for r in rows})
            whole |= {r.id for r in rows}  # on the topic: goes whole, no item cut
            plan.match = "category" if rows and plan.match == "none" else plan.match
        if request.kind == "inferential":
            rows = self._conclusions(tenant, request, text)
            found.update({r.id: r for r in rows})
            plan.match = "conclusion" if rows and plan.match == "none" else plan.match
            plan.turns = self._conclusion_turns(tenant, request, text)
            if plan.turns and plan.match == "none":
                plan.match = "conclusion"
        if not found and request.kind == "replacement":
            found = {r.id: r for r in self._slot(tenant, request, text)}
            plan.match = "slot" if found else "none"
        if request.kind == "replacement" and (new_days := day_spans(request.new_value or "")):
            # "it's the week after, 19th of March" for "the TB test is on the
            # 12th of March": the day is what changed, the rest of the fact stays
            for r in found.values():
                if request.target.casefold() not in r.text.casefold() and day_spans(r.text):
                    plan.values.append(day_spans(r.text)[0])
                    plan.new_value = new_days[0]
        plan.values += [seg for rid, seg in segments if rid not in whole]
        plan.rows = sorted(found.values(), key=lambda r: r.id)
        return plan

    def _memories(self, tenant: Tenant, states: Sequence[str]) -> list[MemoryRow]:
        # Planning reads the tenant's memories for several parts and stages,
        # before anything is written: one read per request and state set.
        key = (tenant.key, tenant.agent_id, tenant.run_id, tuple(states))
        if key not in self._rows:
            rows = self.storage.memories(tenant.id, states)
            self._rows[key] = [r for r in rows if tenant.covers(r)]
        return self._rows[key]

    def _related(self, rows: list[MemoryRow], request: ForgetRequest) -> list[MemoryRow]:
        """Rows close in meaning to the request's target or on its topic."""
        if not rows:
            return rows
        vecs = self.recall.vectors([request.target], rows)
        topics = topics_of(request)
        return [
            r
            for r, v in zip(rows, vecs[1:], strict=True)
            if float(v @ vecs[0]) >= TOPIC_MIN
            or topics & (categories(r.text) | topic_categories(r.text, request.language))
        ]

    @staticmethod
    def _topics(row: MemoryRow, request: ForgetRequest) -> bool:
        """True when a memory is about one of the request's topic categories,
        read with the English lexicon and the request language's own."""
        found = categories(row.text) | topic_categories(row.text, request.language)
        return bool(found & topics_of(request))

    def _slot_rows(self, tenant: Tenant, part: str) -> list[MemoryRow]:
        """The memory a slot phrase names ("my personal mobile", "mon numéro
        de sécu"): among memories holding an identifier of the slot's kind,
        sharing a word with it or on its topic, the best by meaning, plus
        restatements of it."""
        core = core_stems(part)
        kinds = slot_kinds(part)
        topics = categories(part)
        owner = slot_owner(part)
        pool = []
        for r in self._memories(tenant, (ACTIVE,)):
            if not owned_by(r.text, owner):
                continue  # "my car reg" is not "Salma's car reg"
            bonus = SLOT_WORD * min(2, len(core & content_words(r.text)))
            if kinds and kinds & {k.split(":", 1)[0] for k in identifier_keys(r.text)}:
                bonus += SLOT_KIND
                if owner == "me" and names_someone(r.text):
                    bonus -= SLOT_OTHER  # "Mein Mann Florian hat 0660 ...": his number
            if bonus or (topics and topics & categories(r.text)):
                pool.append((r, bonus))
        if not pool:
            return []
        vecs = self.recall.vectors([part], [r for r, _ in pool])
        sims = vecs[1:] @ vecs[0]
        scores = [float(sim) + bonus for sim, (_, bonus) in zip(sims, pool, strict=True)]
        best = max(range(len(pool)), key=lambda i: scores[i])
        if scores[best] < SLOT_MIN:
            return []
        best_keys = identifier_keys(pool[best][0].text)
        return [
            pool[i][0]
            for i in range(len(pool))
            if i == best
            or (
                scores[i] >= scores[best] - SLOT_MARGIN
                and float(vecs[1 + i] @ vecs[1 + best]) >= NEAR_DUPLICATE
                # a restatement holds the same identifiers, a sibling others
                and identifier_keys(pool[i][0].text) <= best_keys
            )
        ]

    def _conclusion_turns(self, tenant: Tenant, request: ForgetRequest, text: str) -> list[TurnRow]:
        """Assistant turns that voiced the conclusion without becoming a
        memory ("It sounds like things might not be going well in your
        marriage. Are you thinking about leaving ..."): hedged, and close in
        meaning to the request."""
        pool = [
            t
            for t in self.storage.turns(tenant.id)
            if t.role == "assistant" and _HEDGE.search(t.text)
        ]
        if not pool:
            return []
        probe = request.target if core_words(request.target) else text
        # a conclusion is one hedged clause of a longer turn: compare clauses
        clauses = [(t, c) for t in pool for c in split_clauses(t.text) if _HEDGE.search(c)]
        vecs = self.recall.embed([probe, text] + [c for _, c in clauses])
        sims = np.maximum(vecs[2:] @ vecs[0], vecs[2:] @ vecs[1])
        hit = {t.id for (t, _), sim in zip(clauses, sims, strict=True) if sim >= CONCLUSION_MIN}
        return [t for t in pool if t.id in hit]

    def _conclusions(self, tenant: Tenant, request: ForgetRequest, text: str) -> list[MemoryRow]:
        """What the assistant concluded that the request takes back: its
        memories closest in meaning to the request (its target, or the whole
        turn when the target is only "that guess"), speculation first."""
        pool = [
            r for r in self._memories(tenant, (ACTIVE,)) if r.metadata.get("role") == "assistant"
        ]
        # a conclusion is hedged ("it sounds like", "parece que"): when some
        # are, only those
        pool = [r for r in pool if _HEDGE.search(r.text)] or pool
        if not pool:
            return []
        probe = request.target if len(core_words(request.target)) >= 1 else text
        probe = re.sub(r"\b(?:conclusion|assumption|guess|impression|idea|theory|label)s?\b",
                       "", probe)  # fmt: skip
        # "what you said about Joe and me separating: no. ... drop that idea"
        claim = conclusion(text) or probe
        vecs = self.recall.vectors([probe, text, claim], pool)
        sims = np.maximum(np.maximum(vecs[3:] @ vecs[0], vecs[3:] @ vecs[1]), vecs[3:] @ vecs[2])
        scores = sims + CONCLUSION_HEDGE * np.array([bool(_HEDGE.search(r.text)) for r in pool])
        best = int(scores.argmax())
        if float(scores[best]) < CONCLUSION_MIN:
            return []
        # beyond the best, only other hedged statements nearly as close, or
        # hedged clauses of the same reply naming what the request names
        # ("... can be signs of depression" beside "if you've been depressed")
        sources = self.storage.sources([r.id for r in pool])
        reply = {t.id for t in sources[pool[best].id]}
        named = long_stems(f"{probe} {claim}")
        same_reply = {
            r.id
            for r in pool
            if reply & {t.id for t in sources[r.id]} and named & long_stems(r.text)
        }
        return [
            pool[i]
            for i in range(len(pool))
            if i == best
            or (
                _HEDGE.search(pool[i].text)
                and (scores[i] >= scores[best] - SLOT_MARGIN or pool[i].id in same_reply)
            )
        ]

    def _match_value(self, tenant: Tenant, value: str) -> tuple[list[MemoryRow], str]:
        """Memories holding one literal value: the targeting stages, then the
        names inside it, then its content words in any inflection."""
        try:
            stages = matchers(self.recall, value)
        except InvalidInput:  # a value of common words only matches nothing
            return [], "none"
        for matcher in stages:
            if matcher.kind == "phrase" and not self._specific(value):
                continue  # "my address" as a phrase would hit "my address is ..."
            rows = [
                r
                for r in matching_memories(self.storage, tenant.id, matcher, STATES)
                if tenant.covers(r)
            ]
            if rows:
                return rows, matcher.kind
        pool = self._memories(tenant, STATES)
        names = name_keys_in(value)
        if names:  # "the idea of traveling to Australia": what names Australia
            rows = [r for r in pool if names & name_keys(r.text)]
            if rows:
                return rows, "entity"
        return best_by_stems(pool, value), "terms"

    @staticmethod
    def _specific(value: str) -> bool:
        """A value with two or more content words beyond slot words, or a name
        or number: specific enough to match as a phrase."""
        core = core_words(value)
        return len(core) >= 2 or any(w[:1].isupper() or w[:1].isdigit() for w in core)

    def _in_window(
        self, tenant: Tenant, request: ForgetRequest, session: str | None, at: float
    ) -> list[MemoryRow]:
        """Memories said in the time window (or the previous session) the
        request names, narrowed to its topic when it names one."""
        # "What I told you": the user's turns (the assistant's repetitions
        # go with them as copies; its unrelated answers stay).
        turns = [t for t in self.storage.turns(tenant.id) if t.role == "user"]
        if names_last_session(request.target):
            earlier = [t for t in turns if t.session_id != session and t.at < at]
            last = max(earlier, key=lambda t: t.at).session_id if earlier else None
            chosen = [t for t in earlier if t.session_id == last] if earlier else []
        else:
            span = window(request.target, at)
            if span is None:
                return self._event(tenant, request, turns)
            chosen = [t for t in turns if span[0] <= t.at < span[1]]
            # "Friday night" said on a Monday: the last Friday we talked
            back = 0
            while not chosen and names_weekday(request.target) and back < WEEKS_BACK:
                back += 1
                span = window(request.target, at - back * WEEK)
                chosen = [t for t in turns if span and span[0] <= t.at < span[1]]
        rows = self.storage.memories_by_id(self.storage.derived([t.id for t in chosen]))
        rows = [r for r in rows if tenant.covers(r)]
        about = ABOUT_TOPIC.search(request.target)
        topics = topics_of(request)
        if about and window(about.group(1), at) is not None and not topics:
            about = None  # "about last Saturday" is the window, not a topic
        if about and rows:  # "last week about Margaret's memory": that topic only
            topic = about.group(1)
            vecs = self.recall.vectors([topic], rows)
            on_topic = {
                r.id
                for r, v in zip(rows, vecs[1:], strict=True)
                # "anything about my finances from last month": the lexicon too
                if float(v @ vecs[0]) >= WINDOW_TOPIC_MIN or self._topics(r, request)
            }
            # what was said in the same breath goes with it ("She left the gas
            # on twice ... mentioned possible Alzheimer's")
            sources = self.storage.sources([r.id for r in rows])
            said = {
                t.id
                for r in rows
                if r.id in on_topic
                for t in sources.get(r.id, [])
                if t.role == "user"
            }
            rows = [
                r
                for r in rows
                if r.id in on_topic or any(t.id in said for t in sources.get(r.id, []))
            ]
        return rows

    def _event(
        self, tenant: Tenant, request: ForgetRequest, turns: list[TurnRow]
    ) -> list[MemoryRow]:
        """What was said in the conversation an event names ("everything from
        the night I was planning the Portugal thing"): the session whose
        user memories come closest in meaning to the event (English), if one
        reaches ``EVENT_MIN``."""
        if request.language != "en":
            return []  # the embedder is English-only
        event = " ".join(core_words(SPEECH_PREFIX.sub("", request.target)))
        rows = self.storage.memories_by_id(self.storage.derived([t.id for t in turns]))
        rows = [r for r in rows if tenant.covers(r) and r.metadata.get("role") != "assistant"]
        if not event or not rows:
            return []
        vecs = self.recall.vectors([event], rows)
        scores = vecs[1:] @ vecs[0]
        best = int(scores.argmax())
        if float(scores[best]) < EVENT_MIN:
            return []
        sources = self.storage.sources([r.id for r in rows])
        session = next((t.session_id for t in sources.get(rows[best].id, [])), None)
        return [r for r in rows if any(t.session_id == session for t in sources.get(r.id, []))]

    def _replies(self, tenant: Tenant, rows: list[MemoryRow]) -> list[TurnRow]:
        """The assistant's turns of a forgotten stretch of conversation that
        went over what was said in it ("A £38,000 overdraft is heavy"): said
        in the same session, between its first memory and an hour after its
        last, sharing ``REPLY_SHARED`` content words with one of them."""
        if not rows:
            return []
        start, end = min(r.created_at for r in rows), max(r.created_at for r in rows)
        said = [content_words(r.text) for r in rows]
        sessions = {t.session_id for ts in self.storage.sources([r.id for r in rows]).values()
                    for t in ts}  # fmt: skip
        return [
            t
            for t in self.storage.turns(tenant.id)
            if t.role == "assistant"
            and t.session_id in sessions
            and start <= t.at <= end + ECHO_SECONDS
            and any(len(content_words(t.text) & words) >= REPLY_SHARED for words in said)
        ]

    def _by_prefix(self, tenant: Tenant, request: ForgetRequest) -> list[MemoryRow]:
        """The number a new number replaces, found by the prefix it keeps
        (area code, exchange): the one memory sharing the longest run of
        leading digits, at least four, with the new value."""
        digits = re.sub(r"\D", "", request.new_value or "")
        if len(digits) < 6:
            return []
        near = [r for r in self._memories(tenant, (ACTIVE,)) if longest_prefix(r.text, digits) >= 4]
        if not near:
            return []
        longest = max(longest_prefix(r.text, digits) for r in near)
        best = [r for r in near if longest_prefix(r.text, digits) == longest]
        return best if len(best) == 1 else []

    def _slot(self, tenant: Tenant, request: ForgetRequest, text: str) -> list[MemoryRow]:
        """The memory a replacement's new value takes the place of: the slot
        the rest of the turn names ("la dirección que tienes ya no vale ...
        vivo en"), else the memory holding an identifier of the new value's
        kind closest to the turn in meaning, else the semantic stage with the
        new value as a hint."""
        new = request.new_value or ""
        kinds = {k.split(":", 1)[0] for k in query_keys(new)} - {"number", "compact", "code"}
        said = text.replace(new, " ") if new else text
        found = [r for r in self._slot_rows(tenant, text) if without(r.text, [new]) is None]
        if found:
            return found
        if kinds:  # a new phone number replaces a phone number
            same = [
                r
                for r in self._memories(tenant, (ACTIVE,))
                if {k.split(":", 1)[0] for k in identifier_keys(r.text)} & kinds
            ]
            if same:
                vecs = self.recall.vectors([said], same)
                return [same[int((vecs[1:] @ vecs[0]).argmax())]]
        target = request.target if core_words(request.target) else said
        return semantic(self.recall, tenant.id, target, tenant.covers, f"{target} {new}").rows

    def _copies(self, tenant: Tenant, rows: list[MemoryRow]) -> list[MemoryRow]:
        """Assistant memories repeating a removed memory: the same identifier,
        most of its content words, or, said within the hour after it, one of
        its names or numbers ("one 41% quiz is fixable") or two of its
        content words ("A memory clinic referral is a sensible step")."""
        if not rows:
            return []
        taken = {r.id for r in rows}
        keys = [identifier_keys(r.text) for r in rows]
        salient = [{t.casefold() for t in self._salient([r])} - STOPWORDS for r in rows]
        out = []
        for cand in self._memories(tenant, STATES):
            if cand.id in taken or cand.metadata.get("role") != "assistant":
                continue
            cand_keys = identifier_keys(cand.text)
            tokens = {t.casefold() for t in re.findall(r"[\w'-]+", cand.text)}
            if any(
                (k and k & cand_keys)
                or content_overlap(cand.text, r.text) >= _COPY_OVERLAP
                or (
                    0 <= cand.created_at - r.created_at <= ECHO_SECONDS
                    and (sal & tokens or len(long_stems(cand.text) & long_stems(r.text)) >= 2)
                )
                for r, k, sal in zip(rows, keys, salient, strict=True)
            ):
                out.append(cand)
        return out

    # -- applying ---------------------------------------------------------
    @staticmethod
    def _split(rows: list[MemoryRow], values: list[str]) -> tuple[list[MemoryRow], list[MemoryRow]]:
        """Rows to delete whole, and rows a literal value is cut out of."""
        removed, rewritten = [], []
        for row in rows:
            rest = without(row.text, values)
            if rest is not None and len(core_words(rest)) >= _REST_MIN_WORDS:
                rewritten.append(row)
            else:
                removed.append(row)
        return removed, rewritten

    def _rewrite(
        self,
        tenant: Tenant,
        rows: list[MemoryRow],
        plan: _Plan,
        request: ForgetRequest,
        at: float,
    ) -> list[MemoryRow]:
        """New memories for rows a value is cut from (or replaced in); the
        caller deletes the old rows, whose turns then keep the new texts."""
        new_value = None
        if request.kind == "replacement":
            new_value = plan.new_value or request.new_value
        out = []
        sources = self.storage.sources([r.id for r in rows])
        for row in rows:
            text = without(row.text, plan.values, new_value) or ""
            out.append(
                self.control._derive(
                    tenant,
                    text,
                    row.kind,
                    [t.id for t in sources.get(row.id, [])],
                    at,
                    row.expires_at,
                    row.metadata,
                )
            )
        return out

    def _turns_saying(self, tenant: Tenant, values: list[str]) -> list[TurnRow]:
        """Source turns that still say a literal value (after an update)."""
        out: dict[int, TurnRow] = {}
        for value in values:
            try:
                found = matching_turns(self.storage, self.recall, tenant.id, value)
            except InvalidInput:
                continue
            out.update({t.id: t for t in self.control._scoped_turns(tenant, found)})
        return list(out.values())

    @staticmethod
    def _redact(request: ForgetRequest, text: str, said: list[str]) -> tuple[str, list[str]]:
        """The request turn as stored, and the clauses of it to remember."""
        what = ", ".join(sorted(request.categories)) or request.kind
        marker = f"[asked to forget: {what}]"
        # A replacement's target names the slot the new value keeps ("I moved to").
        named = request.kind != "replacement" and core_words(request.target)
        values = [*said, request.target] if named else said
        new = (request.new_value or "").casefold()
        old = request.target if request.kind == "replacement" and not request.slot else ""
        rejected = [f"not {old} any more", f"not {old} anymore", f"not {old}", old] if old else []
        values = values + rejected
        kept = []
        for clause in split_clauses(text):
            if new and without(clause, [new]) is not None:
                # the new value stays; the old one said beside it is cut
                # ("I moved to Lisbon, not Porto anymore" -> "I moved to Lisbon")
                rest = without(clause, rejected) or clause
                if without(without(rest, [new]) or "", values) is None:
                    kept.append(rest)
                continue
            read = spelled_out(clause) if request.language == "en" else clause
            if without(clause, values) is not None or without(read, values) is not None:
                continue  # holds a forgotten value or names the target
            if not is_request_clause(clause):
                kept.append(clause)
        return " ".join([marker, *kept]), kept

    @staticmethod
    def _salient(rows: list[MemoryRow], survivors: Sequence[str] = ()) -> list[str]:
        """Names, numbers and identifiers of deleted memories, to cut from the
        request turn. A capitalised word that surviving memories also hold
        ("Kalk" of "FitX Kalk", where the taxi firm is in Kalk too; any German
        noun) is context, not what was forgotten: the clause saying it stays."""
        held = {w.casefold() for text in survivors for w in re.findall(r"[\w'-]+", text)}
        out: list[str] = []
        for row in rows:
            out += re.findall(r"\b\d[\d,.:/-]*\d\b|\b\d\b", row.text)
            out += [
                w
                for i, w in enumerate(re.findall(r"[\w'-]+", row.text))
                if i > 0
                and w[:1].isupper()
                and w.casefold() not in STOPWORDS
                and w.casefold() not in held
            ]
        return out

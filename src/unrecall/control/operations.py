"""The control-plane operations. Each one is a single transaction with its
audit event inside it, so a crash leaves either all of it or none; hard
deletions then push the freed bytes out of the WAL (``Storage.erase``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from unrecall.control.audit import AuditLog
from unrecall.control.targeting import (
    Target,
    describing_words,
    looks_like_id,
    matching_turns,
    request_core,
    resolve,
)
from unrecall.errors import InvalidInput, NotFound
from unrecall.recall.clauses import split_clauses
from unrecall.recall.dates import latest_date
from unrecall.recall.names import name_keys
from unrecall.recall.search import Recall
from unrecall.records import ACTIVE, RELEASED, STATES, SUPERSEDED, OpReport
from unrecall.storage.base import MemoryRow, Storage, TurnRow
from unrecall.validation import show_id


@dataclass(frozen=True)
class Tenant:
    """A resolved tenant: internal id, key (e.g. ``user:alice``), the
    random handle its audit events carry, sub-scope."""

    id: int
    key: str
    handle: str
    agent_id: str | None = None
    run_id: str | None = None

    @property
    def narrowed(self) -> bool:
        """True when an agent or run narrows the scope inside the tenant."""
        return self.agent_id is not None or self.run_id is not None

    def covers(self, row: MemoryRow) -> bool:
        """True if ``row`` lies inside this scope."""
        return (self.agent_id is None or row.agent_id == self.agent_id) and (
            self.run_id is None or row.run_id == self.run_id
        )


# The clauses of each turn and the future of their vectors (``ControlPlane.prepare``).
Prepared = tuple[list[list[str]], "Future[np.ndarray]"]


@dataclass(frozen=True)
class NewTurn:
    """A turn to ingest; ``remember`` says whether a memory derives from it."""

    role: str
    text: str
    remember: bool = True


class ControlPlane:
    """Every operation that changes what a store remembers."""

    def __init__(self, storage: Storage, recall: Recall, audit: AuditLog) -> None:
        self.storage = storage
        self.recall = recall
        self.audit = audit

    # -- writing ----------------------------------------------------------
    def add(
        self,
        tenant: Tenant,
        turns: Sequence[NewTurn],
        *,
        kind: str,
        session_id: str | None,
        at: float,
        metadata: dict[str, Any],
        expires_at: float | None,
        prepared: Prepared | None = None,
    ) -> OpReport:
        """Store turns and, per remembered turn, one memory per clause, indexed
        (``prepared``: what ``prepare`` made of the same turns beforehand)."""
        clauses, vectors = prepared or self.prepare(turns)
        with self.storage.transaction():
            created: list[MemoryRow] = []
            documents: list[str] = []
            turn_ids: list[str] = []
            for nt, cs in zip(turns, clauses, strict=True):
                turn = self.storage.add_turn(tenant.id, nt.role, nt.text, session_id, at, metadata)
                document = self.recall.hasher.document(turn.text)
                self.storage.index_turn(turn, document)
                turn_ids.append(turn.uid)
                for clause in cs:
                    created.append(
                        self._derive(
                            tenant,
                            clause,
                            kind if len(cs) == 1 else "clause",
                            [turn.id],
                            at,
                            expires_at,
                            {**metadata, "role": nt.role},
                        )
                    )
                    # a one-clause turn is its own memory: hash it once
                    documents.append(
                        document if clause == turn.text else self.recall.hasher.document(clause)
                    )
            self.recall.index_memories(created, documents=documents, vectors=vectors.result())
            ids = [m.uid for m in created]
            self.audit.record(
                tenant.handle, "add", ids + turn_ids, {"memories": len(ids), "turns": len(turn_ids)}
            )
        return OpReport("add", ids, match="none", created=ids, detail={"turns": turn_ids})

    def prepare(self, turns: Sequence[NewTurn]) -> Prepared:
        """The clauses of each turn and their vectors, being computed: work
        that needs no store, done before the write lock is taken."""
        # One memory per clause, so one fact can be superseded or purged
        # while its neighbour in the sentence stays; a question asserts
        # nothing and derives no memory.
        clauses = [
            [c for c in split_clauses(nt.text) if not _question(c)] if nt.remember else []
            for nt in turns
        ]
        # The clause vectors do not depend on the database: they are
        # computed on a worker thread (onnxruntime releases the GIL) while
        # this one writes the rows and hashes their terms.
        return clauses, self.recall.embed_async([c for cs in clauses for c in cs])

    def _derive(
        self,
        tenant: Tenant,
        text: str,
        kind: str,
        sources: list[int],
        at: float,
        expires_at: float | None,
        metadata: dict[str, Any],
    ) -> MemoryRow:
        return self.storage.add_memory(
            tenant.id,
            text=text,
            kind=kind,
            agent_id=tenant.agent_id,
            run_id=tenant.run_id,
            at=at,
            expires_at=expires_at,
            metadata=metadata,
            sources=sources,
        )

    def update(self, tenant: Tenant, uid: str, text: str) -> OpReport:
        """Overwrite a memory's text in place (a correction, same id). The old
        text leaves the memory, its index rows and its source turns, which
        are rewritten to what their memories say now."""
        with self.storage.transaction():
            row = self._get(tenant, uid)
            at = time.time()
            if row.state == ACTIVE:
                self.storage.unindex([row])
            self.storage.set_text(row.id, text, at)
            if row.state == ACTIVE:
                self.recall.index_memories(self.storage.memories_by_id([row.id]))
            self._scrub_turns(self.storage.sources([row.id])[row.id])
            self.audit.record(tenant.handle, "update", [uid])
        return OpReport("update", [uid], erased=self.storage.erase())

    def set_expiry(self, tenant: Tenant, uid: str, expires_at: float | None) -> OpReport:
        """Give a memory a time to live (or remove it)."""
        with self.storage.transaction():
            row = self._get(tenant, uid)
            self.storage.set_expiry(row.id, expires_at)
            self.audit.record(tenant.handle, "set_expiry", [uid])
        return OpReport("set_expiry", [uid])

    # -- soft forgetting --------------------------------------------------
    def supersede(self, tenant: Tenant, target: str, new_text: str, at: float) -> OpReport:
        """The new value wins: a new memory, the old ones leave recall."""
        with self.storage.transaction():
            found = resolve(
                self.storage,
                self.recall,
                tenant.id,
                target,
                (ACTIVE,),
                True,
                tenant.covers,
                hint=new_text,
            )
            turn = self.storage.add_turn(tenant.id, "user", new_text, None, at, {})
            self.storage.index_turn(turn, self.recall.hasher.document(new_text))
            kind = found.rows[0].kind if found.rows else "note"
            clauses = split_clauses(new_text)
            kind = kind if len(clauses) == 1 else "clause"
            news = [
                self._derive(tenant, c, kind, [turn.id], at, None, {"role": "user"})
                for c in clauses
            ]
            if _dated_before(new_text, found.rows):
                # "In 2019 I lived in Lyon" after "Since 2023 I live in
                # Porto": the later-dated state stays current; the new
                # statement goes straight into history.
                newest = max(found.rows, key=lambda r: latest_date(r.text) or (0, 0, 0))
                self.storage.set_state([n.id for n in news], SUPERSEDED, at)
                self.storage.set_superseded_by([n.id for n in news], newest.id)
                found = Target([], "older", found.similarity, found.decision)
            else:
                rows = found.rows + self._replaced_siblings(tenant, found.rows, clauses)
                found = Target(rows, found.match, found.similarity, found.decision)
                self._retire(found.rows, news[0], at)
                self.recall.index_memories(news)  # one embedding batch
            ids = [r.uid for r in found.rows]
            created = [n.uid for n in news]
            self.audit.record(
                tenant.handle,
                "supersede",
                [*ids, *created, turn.uid],
                {"match": found.match, "count": len(ids)},
            )
        return OpReport("supersede", ids, found.match, created, detail=_decision(found))

    def _replaced_siblings(
        self, tenant: Tenant, targets: list[MemoryRow], new_clauses: list[str]
    ) -> list[MemoryRow]:
        """Clauses said in the same turn as a target that the new value
        replaces too: one a new clause restates ("...teacher; our lessons are
        on Tuesdays" -> "...; our lessons are now on Thursdays": each new
        clause goes to the old clause closest to it, and takes it if that is a
        sibling), and one about a name the replaced clause had and the new
        value drops."""
        if not targets:
            return []
        turn_ids = [
            t.id for ts in self.storage.sources([r.id for r in targets]).values() for t in ts
        ]
        taken = {r.id for r in targets}
        siblings = [
            r
            for r in self.storage.memories_by_id(self.storage.derived(turn_ids))
            if r.id not in taken and r.state == ACTIVE and tenant.covers(r)
        ]
        if not siblings:
            return []
        pool = targets + siblings
        vecs = self.recall.vectors(new_clauses, pool)
        sims = vecs[len(new_clauses) :] @ vecs[: len(new_clauses)].T
        chosen = {int(sims[:, j].argmax()) for j in range(len(new_clauses))}
        restated = [
            pool[i]
            for i in sorted(chosen)
            if i >= len(targets) and float(sims[i].max()) >= SIBLING_MIN
        ]
        # A sibling about the very person or thing that was the replaced value
        # goes with it ("My therapist is Dr. Hallworth" -> "I see Dr.
        # Hallworth on Thursdays"; not "I drive a Golf" when the parking bay
        # of the Golf changes).
        gone = {k for r in targets for k in name_keys(_value(r.text)) if k.startswith("name:")}
        gone -= {k for c in new_clauses for k in name_keys(c)}
        about_old = [r for r in siblings if gone & name_keys(r.text) and r not in restated]
        return restated + about_old

    def edit(self, tenant: Tenant, uid: str, new_text: str) -> OpReport:
        """Partial supersede: a corrected version keeps the old one's sources."""
        with self.storage.transaction():
            row = self._get(tenant, uid)
            if row.state != ACTIVE:
                raise InvalidInput(f"memory {uid} is {row.state}; only active memories are edited")
            at = time.time()
            sources = [t.id for t in self.storage.sources([row.id])[row.id]]
            new = self._derive(
                tenant, new_text, row.kind, sources, at, row.expires_at, row.metadata
            )
            self._retire([row], new, at)
            self.recall.index_memories([new])
            self.audit.record(tenant.handle, "edit", [uid, new.uid])
        return OpReport("edit", [uid], "id", [new.uid])

    def _retire(self, rows: list[MemoryRow], successor: MemoryRow, at: float) -> None:
        """Take superseded rows out of recall and link them to their successor
        (which the caller indexes)."""
        self.storage.unindex(rows)
        ids = [r.id for r in rows]
        self.storage.set_state(ids, SUPERSEDED, at)
        self.storage.set_superseded_by(ids, successor.id)

    def release(self, tenant: Tenant, target: str) -> OpReport:
        """Take memories out of recall, reversibly."""
        with self.storage.transaction():
            found = resolve(
                self.storage, self.recall, tenant.id, target, (ACTIVE,), True, tenant.covers
            )
            self.storage.unindex(found.rows)
            self.storage.set_state([r.id for r in found.rows], RELEASED, time.time())
            ids = [r.uid for r in found.rows]
            self.audit.record(
                tenant.handle, "release", ids, {"match": found.match, "count": len(ids)}
            )
        return OpReport("release", ids, found.match, detail=_decision(found))

    def restore(self, tenant: Tenant, uid: str) -> OpReport:
        """Bring a released memory back into recall."""
        with self.storage.transaction():
            row = self._get(tenant, uid)
            if row.state != RELEASED:
                raise InvalidInput(f"memory {uid} is {row.state}; only released memories restore")
            self.storage.set_state([row.id], ACTIVE, time.time())
            self.recall.index_memories(self.storage.memories_by_id([row.id]))
            self.audit.record(tenant.handle, "restore", [uid])
        return OpReport("restore", [uid])

    # -- hard forgetting --------------------------------------------------
    def purge(self, tenant: Tenant, target: str) -> OpReport:
        """Hard-delete what the target names, with every copy in its turns."""
        with self.storage.transaction():
            found = resolve(
                self.storage,
                self.recall,
                tenant.id,
                target,
                STATES,
                isinstance(target, str) and bool(describing_words(request_core(target))),
                tenant.covers,
            )
            extra: list[TurnRow] = []
            if found.match != "id" and not looks_like_id(target.strip()):
                # turns that still say it, e.g. after an update took it out of
                # the memory: what a query names is purged from turns even
                # when no memory says it any more
                extra = self._scoped_turns(
                    tenant, matching_turns(self.storage, self.recall, tenant.id, target)
                )
            if extra and found.match == "none":
                found = Target([], "phrase")
            turns = self._purge_rows(found.rows, extra)
            ids = [r.uid for r in found.rows]
            self.audit.record(
                tenant.handle,
                "purge",
                ids,
                {"match": found.match, "count": len(ids), "turns": turns},
            )
        return OpReport("purge", ids, found.match, turns_removed=turns, erased=self.storage.erase())

    def _scoped_turns(self, tenant: Tenant, turns: list[TurnRow]) -> list[TurnRow]:
        """In a narrowed scope, only turns that source a memory of that scope."""
        if not tenant.narrowed:
            return turns
        return [
            t
            for t in turns
            if any(
                tenant.covers(m) for m in self.storage.memories_by_id(self.storage.derived([t.id]))
            )
        ]

    def delete(self, tenant: Tenant, uid: str) -> OpReport:
        """Hard-delete one memory, or one source turn and all derived from it."""
        with self.storage.transaction():
            if uid.startswith("t_"):
                turn = self.storage.turn(tenant.id, uid)
                if turn is None:
                    raise NotFound(f"no turn {show_id(uid)} for this tenant")
                rows = self.storage.memories_by_id(self.storage.derived([turn.id]))
                self.storage.delete_memories([r.id for r in rows])
                self.storage.delete_turns([turn.id])
                turns = 1  # other sources of those memories keep their own text
            else:
                rows = [self._get(tenant, uid)]
                turns = self._purge_rows(rows, [])
            ids = [r.uid for r in rows]
            self.audit.record(
                tenant.handle, "delete", [uid, *ids], {"count": len(ids), "turns": turns}
            )
        return OpReport("delete", ids, "id", turns_removed=turns, erased=self.storage.erase())

    def _purge_rows(self, rows: list[MemoryRow], extra_turns: list[TurnRow]) -> int:
        """Delete memories, then scrub their source turns; returns turns touched."""
        sources = self.storage.sources([r.id for r in rows])
        self.storage.delete_memories([r.id for r in rows])
        turns = {t.id: t for ts in sources.values() for t in ts}
        turns.update({t.id: t for t in extra_turns})
        return self._scrub_turns(list(turns.values()))

    def _scrub_turns(self, turns: list[TurnRow]) -> int:
        """A turn left with no memory is deleted; one that still sources
        memories keeps only their texts, so the forgotten part is gone."""
        orphans: list[int] = []
        for turn in turns:
            survivors = self.storage.memories_by_id(self.storage.derived([turn.id]))
            if not survivors:
                orphans.append(turn.id)
                continue
            text = "\n".join(dict.fromkeys(m.text for m in survivors))
            self.storage.set_turn_text(turn, text, self.recall.hasher.document(text))
        self.storage.delete_turns(orphans)
        return len(turns)

    def delete_all(self, tenant: Tenant) -> OpReport:
        """Erase a tenant: every memory, turn and the tenant row itself.

        In a narrowed scope (an agent of a user) only that scope's memories
        go, with the same turn scrubbing as a purge; the tenant stays.
        """
        if tenant.narrowed:
            with self.storage.transaction():
                rows = [r for r in self.storage.memories(tenant.id) if tenant.covers(r)]
                turns = self._purge_rows(rows, [])
                self.audit.record(
                    tenant.handle,
                    "delete_all",
                    [r.uid for r in rows],
                    {"count": len(rows), "turns": turns},
                )
            return OpReport(
                "delete_all",
                [r.uid for r in rows],
                "scope",
                turns_removed=turns,
                erased=self.storage.erase(),
            )
        with self.storage.transaction():
            ids = [r.uid for r in self.storage.memories(tenant.id)]
            count, turns = self.storage.erase_tenant(tenant.id)
            self.audit.record(tenant.handle, "delete_all", [], {"count": count, "turns": turns})
        return OpReport(
            "delete_all", ids, "tenant", turns_removed=turns, erased=self.storage.erase()
        )

    def expire(self, now: float, hard: bool) -> OpReport:
        """Release (or, with ``hard``, purge) memories past their expiry."""
        states = STATES if hard else (ACTIVE,)
        with self.storage.transaction():
            rows = self.storage.expired(now, states)
            by_tenant: dict[int, list[MemoryRow]] = {}
            for r in rows:
                by_tenant.setdefault(r.tenant_id, []).append(r)
            for tid, group in by_tenant.items():
                if hard:
                    self._purge_rows(group, [])
                else:
                    self.storage.unindex(group)
                    self.storage.set_state([r.id for r in group], RELEASED, now)
                self.audit.record(
                    self.storage.tenant_handle(tid) or "",
                    "expire",
                    [r.uid for r in group],
                    {"count": len(group), "hard": hard},
                )
        return OpReport(
            "expire", [r.uid for r in rows], "expiry", erased=self.storage.erase() if hard else None
        )

    def _get(self, tenant: Tenant, uid: str) -> MemoryRow:
        row = self.storage.memory(tenant.id, uid)
        if row is None:
            raise NotFound(f"no memory {show_id(uid)} for this tenant")
        return row


def _question(clause: str) -> bool:
    """A clause that only asks: it ends with "?" and holds no statement
    before it ("My PIN is 4417. can you keep it?" still states the PIN)."""
    return clause.endswith("?") and not re.search(r"[.!]\s", clause)


def _value(clause: str) -> str:
    """The complement of a copular clause ("Dr. Hallworth" in "My therapist
    is Dr. Hallworth"), or nothing."""
    parts = re.split(r"\s(?:is|are|was|were)\s", clause, maxsplit=1)
    return parts[1] if len(parts) == 2 else ""


# A sibling clause is replaced only by a new clause this close to it.
SIBLING_MIN = 0.45


def _dated_before(new_text: str, rows: list[MemoryRow]) -> bool:
    """True when the new statement is dated before every fact it targets."""
    new_date = latest_date(new_text)
    if new_date is None or not rows:
        return False
    return all((d := latest_date(r.text)) is not None and d > new_date for r in rows)


def _decision(found: Target) -> dict[str, Any]:
    """How a query target was resolved: similarity and the semantic stage's
    decision (candidates, top and second score, how many taken)."""
    detail: dict[str, Any] = dict(found.decision or {})
    if found.similarity is not None:
        detail["similarity"] = found.similarity
    return detail

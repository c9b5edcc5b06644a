"""``Memory``: the public face of unrecall.

It checks input, resolves the tenant, and hands work to the recall plane
(``recall.search``) and the control plane (``control.operations``). Every
method is scoped by ``user_id`` (or ``agent_id`` for agent-level memory);
``agent_id`` and ``run_id`` given next to a ``user_id`` narrow the scope.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from unrecall.control import receipts
from unrecall.control.audit import AuditCheck, AuditLog
from unrecall.control.erasure import ErasureReport, scan_files
from unrecall.control.forget_requests import RequestExecutor
from unrecall.control.operations import ControlPlane, NewTurn, Tenant
from unrecall.control.trails import BUDGET, TrailForgetter
from unrecall.dialogue.requests import points_back
from unrecall.errors import InvalidInput, NotFound
from unrecall.pipeline.execute import RequestPipeline
from unrecall.pipeline.interpret import Interpreter
from unrecall.pipeline.read import read
from unrecall.progress import ticker
from unrecall.recall.clauses import split_clauses
from unrecall.recall.embedder import Embedder, make_embedder
from unrecall.recall.entities import EntityGraph
from unrecall.recall.lexical import TermHasher, content_words
from unrecall.recall.search import Recall, query_entities
from unrecall.recall.statements import Statement, gather
from unrecall.records import (
    ACTIVE,
    STATES,
    EntityItem,
    ForgetReport,
    HistoryEvent,
    MemoryItem,
    OpReport,
    SearchHit,
)
from unrecall.storage import open_storage
from unrecall.storage.base import MemoryRow, Storage, TurnRow
from unrecall.validation import (
    check_bool,
    check_id,
    check_k,
    check_memory_id,
    check_metadata,
    check_positive_int,
    check_probes,
    check_store,
    check_text,
    check_threshold,
    check_time,
    check_ttl,
    is_postgres_url,
    show_id,
)

ROLES = ("user", "assistant")
# search(threshold="auto"): the embedder's own cut, below which a hit is about
# something else. MiniLM's is chosen by bench/search_threshold.py on LoCoMo
# and the development dialogue suites: the highest that drops none of their
# relevant hits (0.2 dropped 0.2-0.4 % of them and 3 ForgetEval cases with
# vague questions, 0.3 dropped 9 % of the suites'); docs/benchmarks.md,
# "Search threshold". An embedder with no calibrated cut keeps the k best.
SEARCH_THRESHOLD = "auto"
CALIBRATED_THRESHOLDS = {"minilm-l6-v2-int8": 0.1}
DEFAULT_MAX_CHARS = 32_000
# What is kept of an assistant turn that only repeated a forgotten value.
ECHO_REDACTED = "[repeated a forgotten value]"
# A hard forget's report (``OpReport`` or ``ForgetReport``), receipted as it is.
Report = TypeVar("Report", OpReport, ForgetReport)


# Weight of an assistant memory's score against a user memory's in recall.
ASSISTANT_WEIGHT = 0.5


def _role_weight(row: MemoryRow) -> float:
    return ASSISTANT_WEIGHT if row.metadata.get("role") == "assistant" else 1.0


def _informs(text: str | None) -> bool:
    """True when an assistant message says something of substance (a clause
    of five content words or more, not a question), not only pleasantries."""
    return text is not None and any(
        len(content_words(c)) >= 5 for c in split_clauses(text) if not c.endswith("?")
    )


def _at(value: Any, field: str) -> float:
    """A checked time, or now when none is given (0 is the epoch, not now)."""
    at = check_time(value, field)
    return time.time() if at is None else at


# What --help says of the default store (never the value: it may be a URL
# with a password in it).
DEFAULT_STORE_HELP = "$UNRECALL_DB, else ~/.unrecall/memory.db"


def default_path() -> Path | str:
    """``$UNRECALL_DB`` (a file path, or a ``postgresql://`` URL kept as
    text) or ``~/.unrecall/memory.db``."""
    env = os.environ.get("UNRECALL_DB")
    if not env:
        return Path.home() / ".unrecall" / "memory.db"
    return env if is_postgres_url(env) else Path(env)


class Memory:
    """Long-term memory that forgets on request, precisely and verifiably.

    ``path`` is the SQLite file (created if missing; None for
    ``default_path()``) or a ``postgresql://`` URL (PostgreSQL with
    pgvector, ``storage.postgres``); ``embedder`` is ``"minilm"`` (default,
    local ONNX), ``"hashing"`` (explicit weak fallback) or any ``Embedder``.
    A store remembers which embedder built it and refuses another. An empty
    path, ``":memory:"``, a URL of another scheme, a directory and a
    device are refused (``InvalidInput``); a file that cannot be opened or written, is
    not a database, or is a database unrecall did not make is refused
    untouched (``StoreError``). ``max_text_chars`` (a positive int) bounds
    every text and query. ``interpreter`` (off by default) lets the agent's
    own LLM read forget requests said in the chat (``pipeline.interpret``).
    ``receipt_key`` is the file of the Ed25519 key hard forgets' receipts
    are signed with (``control.receipts``): default ``$UNRECALL_RECEIPT_KEY``,
    else ``<path>.receipt-key`` beside the store, made on first use; it is
    never part of the store. ``erasure`` is when forgotten bytes leave the
    store's files: ``"commit"`` (default), within each forget; or
    ``"deferred"``, PostgreSQL only, when ``erase()`` is called (a forget is
    out of recall at once and reports ``erased=False``; ``erase()`` rewrites
    once for every forget since, which on PostgreSQL costs O(tenant), not
    O(forget): docs/postgres.md). ``prewarm`` reads a SQLite store's file
    into the OS page cache in the background once the first search is done,
    so that later searches do not wait on the disk: None (default) when the
    file takes at most half the memory the system has available, True
    always, False never (``storage.prewarm``). ``vector_cache_mb`` bounds
    the memory a SQLite store keeps its vector index's rows in between
    searches, so that a search of a large tenant need not copy them out of
    the file again (``storage.list_cache``): None (default) for 1024 MB,
    0 for none. Each process that opens the store holds its own.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        embedder: str | Embedder = "minilm",
        max_text_chars: int = DEFAULT_MAX_CHARS,
        interpreter: Interpreter | None = None,
        receipt_key: str | os.PathLike[str] | None = None,
        progress: Callable[[str], None] | None = None,
        erasure: str = "commit",
        prewarm: bool | None = None,
        vector_cache_mb: int | None = None,
    ) -> None:
        where = check_store(default_path() if path is None else path)
        # a ``unrecall.progress.Progress`` shows bars for an upgrade and compaction
        self._progress = progress
        self._receipt_key = receipts.key_path(where, receipt_key)
        self._receipt_signer: receipts.Signer | None = None
        self.max_text_chars = check_positive_int(max_text_chars, "max_text_chars")
        self.embedder = make_embedder(embedder)
        self.storage: Storage = open_storage(
            where,
            self.embedder.dim,
            self.embedder.name,
            erasure,
            progress,
            prewarm,
            vector_cache_mb,
        )
        self.recall = Recall(self.storage, self.embedder, TermHasher(self.storage.secret_key()))
        self.audit = AuditLog(self.storage)
        self.control = ControlPlane(self.storage, self.recall, self.audit)
        self.requests = RequestExecutor(self.control)
        if interpreter is not None and not isinstance(interpreter, Interpreter):
            raise InvalidInput("interpreter must be an unrecall Interpreter or None")
        self.trails = TrailForgetter(self.control)
        self.pipeline = RequestPipeline(self.requests, self.trails, interpreter)
        try:
            self._upgrade()
        except BaseException:  # the store stays as it was; do not leak the handle
            self.storage.close()
            raise

    def _upgrade(self) -> None:
        """Finish a schema migration that needs the planes: rebuild the
        full-text rows from the texts, re-chain the audit under random tenant
        handles. One transaction; a process that opens the store meanwhile
        waits for it and then finds nothing left to do."""
        if not self.storage.upgrades():
            return
        with self.storage.transaction():
            steps = self.storage.upgrades()
            if "reindex" in steps:
                self.recall.reindex(self._progress)
                self.storage.upgraded("reindex")
            if "rechain" in steps:
                self.audit.rechain(self.storage.secret_key())
                self.storage.upgraded("rechain")

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Checkpoint and close the store."""
        self.storage.close()

    # -- receipts -------------------------------------------------------------
    def _signer(self) -> receipts.Signer:
        """The receipt key, read (or made) on first use. Hard forgets ask for
        it before they run, so a key that cannot be read stops the forget
        before anything is erased rather than after, receipt-less."""
        if self._receipt_signer is None:
            self._receipt_signer = receipts.Signer(receipts.load_key(self._receipt_key))
        return self._receipt_signer

    def _receipted(self, handle: str | None, run: Callable[[], Report]) -> Report:
        """Run a hard forget and sign its receipt, citing the last audit event
        it recorded (the chain's head when it committed); ``handle`` is the
        tenant's, None to take the handles the events name (``expire``)."""
        signer = self._signer()
        with self.audit.tracking() as events:
            report = run()
        payload = receipts.payload_of(report, handle, events)
        return report if payload is None else replace(report, receipt=signer.sign(payload))

    def receipt_public_key(self) -> str:
        """The PEM public key this store's receipts are signed with: what a
        verifier is given (``unrecall receipt verify``). Makes the key if
        there is none yet."""
        return self._signer().public_pem()

    # -- scope --------------------------------------------------------------
    def _tenant(
        self, user_id: str | None, agent_id: str | None, run_id: str | None, create: bool = False
    ) -> Tenant | None:
        if user_id is None and agent_id is None:
            raise InvalidInput("give user_id (or agent_id for agent-level memory)")
        if user_id is not None:
            key = f"user:{check_id(user_id, 'user_id')}"
            sub_agent = None if agent_id is None else check_id(agent_id, "agent_id")
        else:
            key = f"agent:{check_id(agent_id, 'agent_id')}"
            sub_agent = None
        run = None if run_id is None else check_id(run_id, "run_id")
        tid = self.storage.tenant(key, create)
        if tid is None:
            return None
        return Tenant(tid, key, self.storage.tenant_handle(tid) or "", sub_agent, run)

    def _existing(self, user_id: str | None, agent_id: str | None, run_id: str | None) -> Tenant:
        tenant = self._tenant(user_id, agent_id, run_id)
        if tenant is None:
            raise NotFound("no memories for this tenant")
        return tenant

    @staticmethod
    def _in_scope(tenant: Tenant, row: MemoryRow) -> bool:
        return (tenant.agent_id is None or row.agent_id == tenant.agent_id) and (
            tenant.run_id is None or row.run_id == tenant.run_id
        )

    # -- recall plane ---------------------------------------------------------
    def add(
        self,
        messages: str | Sequence[dict[str, str]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        session_id: str | None = None,
        timestamp: Any = None,
        metadata: dict[str, Any] | None = None,
        expires_at: Any = None,
        ttl: float | None = None,
        honor_requests: bool = True,
    ) -> OpReport:
        """Remember a text, or a list of chat messages ``{"role", "content"}``.

        Each text or user/assistant message becomes a source turn and
        memories derived from it, one per clause; ``system`` messages are
        instructions and are skipped. ``ttl`` (seconds) or ``expires_at``
        make the memories expire. In a list of messages, a user message that
        asks to forget or replace something ("please forget my old address")
        is executed instead of stored (``control.forget_requests``), and an
        assistant message is a source turn that derives memories only when
        it says something new of substance (a repetition of a user fact
        becomes one more source of it). ``honor_requests=False`` stores every
        message as given, as a plain text (a note) always is. The report's
        ``requests`` say what each request removed.
        """
        turns = self._turns(messages)
        meta = check_metadata(metadata)
        at = _at(timestamp, "timestamp")
        expiry = check_time(expires_at, "expires_at")
        if ttl is not None:
            expiry = check_ttl(ttl, time.time())
        check_bool(honor_requests, "honor_requests")
        session = None if session_id is None else check_id(session_id, "session_id")
        kind = "note" if isinstance(messages, str) else "message"
        dialogue = honor_requests and not isinstance(messages, str)
        # clauses and vectors before the write lock (other writers wait on it)
        prepared = None if dialogue else self.control.prepare(turns)
        # a request in the chat is a hard forget: its key first (see _signer)
        signer = self._signer() if dialogue else None
        # a failed first write leaves no tenant row
        with self.storage.transaction(), self.audit.tracking() as events:
            tenant = self._tenant(user_id, agent_id, run_id, create=True)
            assert tenant is not None
            if prepared is not None:
                return self.control.add(
                    tenant,
                    turns,
                    kind=kind,
                    session_id=session,
                    at=at,
                    metadata=meta,
                    expires_at=expiry,
                    prepared=prepared,
                )
            report = self._add_dialogue(tenant, turns, session, at, meta, expiry)
        if report.requests:
            report = replace(report, erased=self.storage.erase())
            payload = receipts.payload_of(report, tenant.handle, events)
            if signer is not None and payload is not None:
                report = replace(report, receipt=signer.sign(payload))
        return report

    def _previous_user_turn(self, tenant: Tenant, session: str | None) -> TurnRow | None:
        """The user's last stored turn in this session."""
        said = [
            t for t in self.storage.turns(tenant.id) if t.role == "user" and t.session_id == session
        ]
        return max(said, key=lambda t: (t.at, t.id)) if said else None

    def _add_dialogue(
        self,
        tenant: Tenant,
        turns: list[NewTurn],
        session: str | None,
        at: float,
        meta: dict[str, Any],
        expiry: float | None,
    ) -> OpReport:
        """Chat turns in order: user statements stored in runs, forget
        requests executed where they were said, assistant turns kept as
        sources (see the loop)."""
        created: list[str] = []
        turn_ids: list[str] = []
        done: list[ForgetReport] = []
        run: list[NewTurn] = []

        def flush() -> None:
            if run:
                r = self.control.add(
                    tenant,
                    run,
                    kind="message",
                    session_id=session,
                    at=at,
                    metadata=meta,
                    expires_at=expiry,
                )
                created.extend(r.created)
                turn_ids.extend(r.detail["turns"])
                if run[0].role == "user":
                    self.requests.remember_said(tenant, session, r.created)
                run.clear()

        for turn in turns:
            if turn.role == "assistant":
                # The assistant's words are a source turn; one that repeats
                # user facts becomes a source of those facts, one that says
                # something new of substance derives memories (pleasantries
                # do not), and an echo of a value forgotten in this session
                # is dropped.
                flush()
                kept = self.requests.echo_filter(tenant, session, turn.text)
                repeated = self.requests.repeats(tenant, session, kept) if kept else []
                informs = not repeated and _informs(kept)
                run.append(NewTurn("assistant", kept or ECHO_REDACTED, remember=informs))
                flush()
                self.requests.link(tenant, repeated, turn_ids[-1])
                continue
            reference = None
            if points_back(turn.text):
                # "the thing about my mum..." / "yes. can you forget it?"
                flush()
                reference = self._previous_user_turn(tenant, session)
            reading = read(turn.text, reference.text if reference else None)
            if not reading.request:
                run.append(turn)
                continue
            flush()
            report = self.pipeline.handle(
                tenant,
                reading,
                turn.text,
                session_id=session,
                at=at,
                metadata=meta,
                reference=reference if reading.previous is not None else None,
            )
            if report is None:  # the interpreter read a statement
                run.append(turn)
                continue
            done.append(report)
            created.extend(report.created)
            turn_ids.append(report.request_turn)
        flush()
        return OpReport(
            "add",
            created,
            match="none",
            created=created,
            detail={"turns": turn_ids},
            requests=done,
        )

    def _turns(self, messages: str | Sequence[dict[str, str]]) -> list[NewTurn]:
        if isinstance(messages, str):
            return [NewTurn("user", check_text(messages, "text", self.max_text_chars))]
        if not isinstance(messages, Sequence) or not messages:
            raise InvalidInput("messages must be a text or a non-empty list of messages")
        turns: list[NewTurn] = []
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict) or "role" not in msg or "content" not in msg:
                raise InvalidInput(f"message #{i} must be a dict with 'role' and 'content'")
            if msg["role"] == "system":
                continue
            if msg["role"] not in ROLES:
                raise InvalidInput(f"message #{i} has an unknown role; use user or assistant")
            text = check_text(msg["content"], f"message #{i} content", self.max_text_chars)
            turns.append(NewTurn(msg["role"], text))
        if not turns:
            raise InvalidInput("messages hold no user or assistant message")
        return turns

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        k: int = 5,
        filters: dict[str, Any] | None = None,
        mode: str = "hybrid",
        threshold: float | Literal["auto"] | None = SEARCH_THRESHOLD,
    ) -> list[SearchHit]:
        """Recall up to ``k`` statements of the tenant's active, unexpired
        memories: each hit is what one turn said, its still-active clauses
        joined (``ids``), found by its best clause (``id``).

        ``mode`` is ``"hybrid"`` (BM25 + vectors, fused) or ``"lexical"``;
        ``filters`` keep hits whose metadata equals every given value. A text
        stored several times is returned once, at its best rank. A hit whose
        ``similarity`` (the query's cosine with its closest clause) is below
        ``threshold`` is dropped, so what is unrelated to the query does not
        come back: ``"auto"`` is the embedder's calibrated cut
        (``CALIBRATED_THRESHOLDS``; none for an uncalibrated embedder), a
        number is the cut itself, None keeps the ``k`` best whatever they are.
        """
        check_text(query, "query", self.max_text_chars)
        check_k(k)
        if mode not in ("hybrid", "lexical"):
            raise InvalidInput("mode must be 'hybrid' or 'lexical'")
        threshold = check_threshold(threshold)
        if threshold == "auto":
            threshold = CALIBRATED_THRESHOLDS.get(self.embedder.name)
        wanted = check_metadata(filters, "filters")
        tenant = self._tenant(user_id, agent_id, run_id)
        if tenant is None:
            return []
        now = time.time()

        def accept(row: MemoryRow) -> bool:
            return (
                row.tenant_id == tenant.id
                and row.state == ACTIVE
                and (row.expires_at is None or row.expires_at > now)
                and self._in_scope(tenant, row)
                and all(row.metadata.get(f) == v for f, v in wanted.items())
            )

        # Clauses gather into their statements, so ask for spares; said twice
        # is remembered once: identical statements take one slot.
        entities = query_entities(query)
        pool = self.recall.search(
            tenant.id, query, 4 * k, accept, lexical_only=mode == "lexical", entities=entities
        )
        # What the user said outranks what the assistant said back to them.
        ranked = gather(
            self.storage, entities, pool, accept, lambda c: c.score * _role_weight(c.row)
        )
        seen: set[str] = set()
        hits = []
        for s in ranked:
            key = " ".join(s.text.casefold().split())
            if key not in seen:
                seen.add(key)
                hits.append(s)
                if len(hits) == k:
                    break
        similar = self._similarities(tenant, query, hits, mode == "hybrid" or threshold is not None)
        self.storage.searched()
        return [
            SearchHit(
                s.best.row.uid,
                s.text,
                round(s.score, 6),
                s.best.lexical_rank,
                s.best.vector_rank,
                s.best.row.metadata,
                [r.uid for r in s.rows],
                similarity,
            )
            for s, similarity in zip(hits, similar, strict=True)
            if threshold is None or (similarity is not None and similarity >= threshold)
        ]

    def _similarities(
        self, tenant: Tenant, query: str, hits: Sequence[Statement], wanted: bool
    ) -> list[float | None]:
        """Each statement's cosine with the query: its closest clause's
        (clauses outside the vector pool included, read from the store)."""
        if not wanted or not hits:
            return [None] * len(hits)
        ids = [r.id for s in hits for r in s.rows]
        vectors = self.storage.embeddings(tenant.id, ids)
        q = self.recall.embed([query])[0]
        return [
            max(
                (round(float(vectors[r.id] @ q), 6) for r in s.rows if r.id in vectors),
                default=None,
            )
            for s in hits
        ]

    def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> MemoryItem:
        """One memory (any state) with its provenance; ``NotFound`` otherwise."""
        memory_id = check_memory_id(memory_id)
        tenant = self._existing(user_id, agent_id, None)
        row = self.storage.memory(tenant.id, memory_id)
        if row is None:
            raise NotFound(f"no memory {show_id(memory_id)} for this tenant")
        return self._items(tenant, [row])[0]

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        states: Sequence[str] = (ACTIVE,),
    ) -> list[MemoryItem]:
        """Every memory of the scope in ``states`` (default: active), oldest first."""
        if not isinstance(states, Collection) or isinstance(states, str | bytes):
            raise InvalidInput("states must be a list of state names")
        if not all(s in STATES for s in states):
            raise InvalidInput(f"states must be among {', '.join(STATES)}")
        tenant = self._tenant(user_id, agent_id, run_id)
        if tenant is None:
            return []
        rows = [
            r for r in self.storage.memories(tenant.id, list(states)) if self._in_scope(tenant, r)
        ]
        return self._items(tenant, rows)

    def _items(self, tenant: Tenant, rows: list[MemoryRow]) -> list[MemoryItem]:
        sources = self.storage.sources([r.id for r in rows])
        user = tenant.key[5:] if tenant.key.startswith("user:") else None
        agent = tenant.key[6:] if tenant.key.startswith("agent:") else None
        return [
            MemoryItem(
                r.uid,
                r.text,
                r.kind,
                r.state,
                user,
                r.agent_id or agent,
                r.run_id,
                r.created_at,
                r.updated_at,
                r.expires_at,
                r.metadata,
                [t.uid for t in sources[r.id]],
                r.superseded_by,
            )
            for r in rows
        ]

    # -- control plane --------------------------------------------------------
    def _target(self, target: Any) -> str:
        """A memory id or query: a valid text, like every other input."""
        return check_text(target, "target", self.max_text_chars)

    def update(
        self, memory_id: str, text: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> OpReport:
        """Correct a memory's text in place (same id); the old text leaves the
        memory, its indexes and its source turns (rewritten to what their
        memories say now)."""
        memory_id = check_memory_id(memory_id)
        text = check_text(text, "text", self.max_text_chars)
        return self.control.update(self._existing(user_id, agent_id, None), memory_id, text)

    def delete(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> OpReport:
        """Hard-delete a memory (``m_…``) or a source turn (``t_…``) with closure."""
        memory_id = check_memory_id(memory_id)
        tenant = self._existing(user_id, agent_id, None)
        return self._receipted(tenant.handle, lambda: self.control.delete(tenant, memory_id))

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None) -> OpReport:
        """Erase a tenant entirely: memories, turns, indexes and the tenant row
        (no receipt when there was no such tenant: nothing was forgotten)."""
        tenant = self._tenant(user_id, agent_id, None)
        if tenant is None:
            return OpReport("delete_all", [], "tenant")
        return self._receipted(tenant.handle, lambda: self.control.delete_all(tenant))

    def supersede(
        self,
        target: str,
        new_text: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        timestamp: Any = None,
    ) -> OpReport:
        """Store ``new_text`` as the current value; what ``target`` names
        (see ``control.targeting``) leaves recall but stays in history."""
        target = self._target(target)
        new_text = check_text(new_text, "new_text", self.max_text_chars)
        at = _at(timestamp, "timestamp")
        with self.storage.transaction():  # a failed first write leaves no tenant row
            tenant = self._tenant(user_id, agent_id, None, create=True)
            assert tenant is not None
            return self.control.supersede(tenant, target, new_text, at)

    def edit(
        self,
        memory_id: str,
        new_text: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> OpReport:
        """Partial supersede: a corrected version with the same provenance."""
        memory_id = check_memory_id(memory_id)
        new_text = check_text(new_text, "new_text", self.max_text_chars)
        return self.control.edit(self._existing(user_id, agent_id, None), memory_id, new_text)

    def release(
        self, target: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> OpReport:
        """Take what ``target`` names out of recall, reversibly (``restore``)."""
        return self.control.release(self._existing(user_id, agent_id, None), self._target(target))

    def restore(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> OpReport:
        """Bring a released memory back into recall."""
        memory_id = check_memory_id(memory_id)
        return self.control.restore(self._existing(user_id, agent_id, None), memory_id)

    def purge(
        self, target: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> OpReport:
        """Hard-delete what ``target`` names, in every state and every copy
        (turns, indexes, WAL). Matches by id or exact phrase only."""
        tenant = self._existing(user_id, agent_id, None)
        target = self._target(target)
        return self._receipted(tenant.handle, lambda: self.control.purge(tenant, target))

    def forget(
        self,
        request: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        budget: int = BUDGET,
    ) -> ForgetReport:
        """Forget a fact and the trail it could be pieced together from.

        ``request`` says the fact the way a user would ("forget that the firm
        we hired belongs to our CFO's wife"). The memories stating it go,
        with the evidence that links its entities (entity expansion over one
        and two hops, with similarity; at most ``budget`` evidence turns),
        each source turn deleted with closure, in one transaction, physically
        erased. The report holds ids and counts only, and in ``residual`` the
        ids of surviving memories that still connect the request's entities.
        """
        request = check_text(request, "request", self.max_text_chars)
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise InvalidInput("budget must be a non-negative integer")
        tenant = self._existing(user_id, agent_id, None)
        return self._receipted(tenant.handle, lambda: self.pipeline.forget(tenant, request, budget))

    def residual(
        self, request: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[MemoryItem]:
        """Surviving memories that still connect the entities ``request``
        names: what a reader could still piece the fact together from."""
        request = check_text(request, "request", self.max_text_chars)
        tenant = self._tenant(user_id, agent_id, None)
        if tenant is None:
            return []
        return self._items(tenant, self.trails.residual(tenant, request))

    def entities(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[EntityItem]:
        """The entity graph of the tenant's memories: people, organisations,
        places, products and identifiers with their aliases, the memories
        naming them and the entities named beside them. It is read from what
        is stored, so a forgotten memory's entities and aliases are gone."""
        tenant = self._tenant(user_id, agent_id, None)
        if tenant is None:
            return []
        rows = self.storage.memories(tenant.id, list(STATES))
        rows = [r for r in rows if self._in_scope(tenant, r)]
        graph = EntityGraph.build((r.id, r.text) for r in rows)
        uid = {r.id: r.uid for r in rows}
        return [
            EntityItem(
                graph.names[key],
                "identifier" if key.startswith("id:") else "name",
                graph.aliases_of(key),
                sorted(uid[m] for m in graph.mentioned_in[key]),
                sorted(graph.names[k] for k in graph.neighbours(key)),
            )
            for key in sorted(graph.mentioned_in, key=lambda k: graph.names[k].casefold())
        ]

    def set_expiry(
        self,
        memory_id: str,
        expires_at: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> OpReport:
        """Set (or clear, with None) when a memory expires."""
        memory_id = check_memory_id(memory_id)
        expiry = check_time(expires_at, "expires_at")
        return self.control.set_expiry(self._existing(user_id, agent_id, None), memory_id, expiry)

    def expire(self, *, now: Any = None, purge: bool = False) -> OpReport:
        """Release every memory past its expiry (purge them with ``purge``, a
        real bool: a truthy string must not hard-delete); a purge that
        removed something is receipted, naming every tenant it touched."""
        at = _at(now, "now")
        if not check_bool(purge, "purge"):
            return self.control.expire(at, False)
        return self._receipted(None, lambda: self.control.expire(at, True))

    # -- evidence -------------------------------------------------------------
    def history(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[HistoryEvent]:
        """Audit events that touched a memory: operations and counts, no text.

        History outlives a purge (the id is random and says nothing), so it
        can show when and how something was forgotten; it does not outlive
        ``delete_all``, after which nothing leads from the user id to the
        tenant's events.
        """
        memory_id = check_memory_id(memory_id)
        tenant = self._tenant(user_id, agent_id, None)
        if tenant is None:
            return []  # an erased tenant's events carry a handle nothing leads to
        return [
            HistoryEvent(row.seq, row.at, row.op, memory_id, row.detail)
            for row in self.storage.audit_rows(memory_id)
            if row.tenant == tenant.handle
        ]

    def export(self, *, user_id: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Everything held about a tenant, JSON-ready (GDPR Art. 15 style)."""
        tenant = self._tenant(user_id, agent_id, None)
        if tenant is None:
            return {
                "tenant": {"user_id": user_id, "agent_id": agent_id},
                "turns": [],
                "memories": [],
                "events": [],
            }
        return {
            "tenant": {"user_id": user_id, "agent_id": agent_id},
            "turns": [
                {
                    "id": t.uid,
                    "role": t.role,
                    "text": t.text,
                    "session_id": t.session_id,
                    "at": t.at,
                    "metadata": t.metadata,
                }
                for t in self.storage.turns(tenant.id)
            ],
            "memories": [
                m.to_dict() for m in self._items(tenant, self.storage.memories(tenant.id))
            ],
            "events": [
                {"seq": r.seq, "at": r.at, "op": r.op, "refs": r.refs, "detail": r.detail}
                for r in self.storage.audit_rows()
                if r.tenant == tenant.handle
            ],
        }

    def verify_erased(self, strings: Sequence[str]) -> ErasureReport:
        """Scan the raw bytes of every file of the store for each string, and
        for what it can be recovered from: the keyed digests the full-text
        index would hold of its words (a digest of a short value, with the
        key in the file, is the value)."""
        probes = check_probes(strings)
        self.storage.erase(now=True)
        return scan_files(self.storage.files(), probes, digests=self.recall.hasher.probe_digests)

    def erase(self) -> bool:
        """Push every committed forget out of the store's files now: what a
        store opened with ``erasure="deferred"`` leaves for this call (run it
        from a scheduler within the erasure deadline you promise users).
        True when nothing forgotten is left in the files, the WAL, or any
        copy the server keeps; False says the work is not done (a lock not
        granted within the busy timeout, an older snapshot, a server that
        keeps WAL copies: ``storage.erasure_gaps()``), and the next call
        finishes it."""
        return self.storage.erase(now=True)

    def verify_audit(self) -> AuditCheck:
        """Walk the audit hash chain and report whether it is intact."""
        return self.audit.verify()

    def compact(self) -> None:
        """Give the space deleted rows left back to the file system; erasure
        never waits for this. SQLite does it in short steps that writers get
        in between (a store made before them is rewritten whole once);
        PostgreSQL rewrites each table. With a ``Progress``, an elapsed-time
        counter shows on stderr meanwhile."""
        with ticker(self._progress, "compacting the store") as tick:
            self.storage.compact(tick)

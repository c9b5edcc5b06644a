"""Mem0 OSS's ``Memory`` API over unrecall: change the import, keep the code.

``from unrecall.compat.mem0 import Memory`` gives the method names,
arguments and return dicts of ``mem0.Memory`` (mem0ai 2.x, with the 1.x
spellings still accepted: ``limit=`` next to ``top_k=``, ``data=`` next to
``text=``, top-level ``user_id=`` next to ``filters={"user_id": ...}``).
Underneath is one ``unrecall.Memory`` (``.unrecall``), so a forget request
said in the chat is executed, deletes are physical, and nothing deleted is
echoed back: results of a delete carry ids only, and ``history`` carries no
old or new texts (unrecall's audit log is content-free).

Mem0 is LLM-driven (fact extraction, ADD/UPDATE/DELETE decisions); unrecall
needs no LLM, so the ``llm``, ``reranker``, ``graph_store``,
``custom_instructions`` and ``history_db_path`` settings of a Mem0 config,
and every embedder provider but ``"unrecall"``, are ignored. mem0 itself is
never imported.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from unrecall.errors import InvalidInput, NotFound
from unrecall.memory import SEARCH_THRESHOLD, default_path
from unrecall.memory import Memory as UnrecallMemory
from unrecall.records import STATES, MemoryItem, OpReport
from unrecall.validation import check_bool, check_id, check_memory_id, check_metadata, show_id

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
# Mem0 sets scope from the id arguments only; these keys in metadata are dropped.
IDENTITY_KEYS = frozenset({*SCOPE_KEYS, "actor_id"})
# The file a Mem0 ``vector_store.config.path`` that is a directory holds.
STORE_FILE = "memory.db"
# Mem0's event names for unrecall's audit operations.
EVENTS = {
    "add": "ADD",
    "update": "UPDATE",
    "edit": "UPDATE",
    "supersede": "UPDATE",
    "release": "UPDATE",
    "restore": "UPDATE",
    "set_expiry": "UPDATE",
    "expire": "UPDATE",
    "delete": "DELETE",
    "delete_all": "DELETE",
    "purge": "DELETE",
    "forget_request": "DELETE",
    "forget_trail": "DELETE",
}
# Metadata filter operators of Mem0 that have no exact unrecall equivalent.
_LOGICAL = ("AND", "OR", "NOT")


class MemoryNotFound(NotFound, ValueError):
    """An id that names no memory of this store. Mem0 raises ``ValueError``
    for an unknown id, unrecall ``NotFound``: this is both, so either
    ``except`` clause of existing code catches it. The message names the id
    only when it is shaped like an unrecall id."""


def _iso(at: float | None) -> str | None:
    """Epoch seconds as Mem0's ISO-8601 UTC timestamp string."""
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat()


def _scope_id(value: Any, field: str) -> str:
    """A Mem0 entity id: ints are taken as their decimal string and
    surrounding whitespace is trimmed (as Mem0 does), then unrecall's check."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str):
        value = value.strip()
    return check_id(value, field)


def _scope(
    user_id: Any, agent_id: Any, run_id: Any, filters: Any = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """The unrecall scope (``user_id``/``agent_id``/``run_id`` keyword
    arguments) from Mem0's arguments and ``filters``, and what is left of
    ``filters``: metadata that must equal the given values.

    unrecall's tenant is the user (or the agent when no user is given), so a
    ``run_id`` alone is refused; with a user, ``agent_id`` and ``run_id``
    narrow the scope inside the user's memories. Mem0's ``{"key": {"eq": v}}``
    is taken as equality; its other operators and AND/OR/NOT are refused
    rather than silently read as equality with a dict.
    """
    wanted = check_metadata(filters, "filters")
    scope: dict[str, str] = {}
    for key, given in zip(SCOPE_KEYS, (user_id, agent_id, run_id), strict=True):
        in_filters = wanted.pop(key, None)
        value = _scope_id(given, key) if given is not None else None
        if in_filters is not None:
            also = _scope_id(in_filters, key)
            if value is not None and also != value:
                raise InvalidInput(f"{key} is given twice, with different values")
            value = also
        if value is not None:
            scope[key] = value
    if "user_id" not in scope and "agent_id" not in scope:
        raise InvalidInput("give user_id (or agent_id); a run_id alone names no tenant")
    equal: dict[str, Any] = {}
    for key, value in wanted.items():
        if key in _LOGICAL:
            raise InvalidInput("filters: AND/OR/NOT are not supported, only metadata equality")
        if isinstance(value, dict):
            if set(value) != {"eq"}:
                raise InvalidInput("filters: only equality (a value or {'eq': value}) is supported")
            value = value["eq"]
        equal[key] = value
    return scope, equal


def _count(top_k: Any, limit: Any, default: int) -> int:
    """How many results: ``top_k`` (Mem0 2.x) or ``limit`` (1.x), one of them."""
    if top_k is not None and limit is not None and top_k != limit:
        raise InvalidInput("give top_k or limit, not both")
    n = default if top_k is None and limit is None else (top_k if top_k is not None else limit)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InvalidInput("top_k (limit) must be a non-negative integer")
    return n


def _read_config(config: Any) -> tuple[str | os.PathLike[str] | None, str | None]:
    """The store path and unrecall embedder a Mem0 config dict names."""
    if config is None:
        return None, None
    if hasattr(config, "model_dump"):  # a Mem0 ``MemoryConfig`` object
        config = config.model_dump()
    if not isinstance(config, dict):
        raise InvalidInput("config must be a dict in Mem0's config shape")
    path = config.get("path", config.get("db"))
    store = config.get("vector_store")
    if path is None and isinstance(store, dict) and isinstance(store.get("config"), dict):
        path = store["config"].get("path")
    if path is not None:
        if not isinstance(path, str | os.PathLike):
            raise InvalidInput("config path must be a string")
        if Path(path).is_dir():  # Mem0's local vector stores take a directory
            path = Path(path) / STORE_FILE
    embedder = config.get("embedder")
    if isinstance(embedder, dict):
        inner = embedder.get("config") if isinstance(embedder.get("config"), dict) else {}
        embedder = inner.get("model", "minilm") if embedder.get("provider") == "unrecall" else None
    elif embedder is not None and not isinstance(embedder, str):
        raise InvalidInput("config embedder must be a name or Mem0's {'provider', 'config'}")
    return path, embedder


class Memory:
    """Mem0's ``Memory`` on an unrecall store.

    ``Memory()`` opens unrecall's ``default_path()`` (``$UNRECALL_DB``, else
    ``~/.unrecall/memory.db``); ``Memory(config)`` / ``from_config(config)``
    take Mem0's config dict and honour what maps: the store file from a
    top-level ``path`` or ``db``, else ``vector_store.config.path`` (a
    directory holds the store as ``memory.db``), and the embedder from
    ``embedder={"provider": "unrecall", "config": {"model": "hashing"}}`` or
    ``embedder="hashing"`` (default ``"minilm"``). LLM, reranker, graph and
    other embedder providers' settings are ignored: unrecall needs no LLM.
    ``path=``, ``embedder=`` override the config; ``memory=`` wraps an open
    ``unrecall.Memory``. ``unrecall`` is the underlying ``unrecall.Memory``.

    Mem0's ``get``, ``update``, ``delete`` and ``history`` take a bare id,
    while unrecall scopes every call by tenant: the id is looked up in each
    tenant of this file in turn (ids are random and unique in the file). That
    is sound because the whole file belongs to this process's caller; a
    service holding several callers' data must use ``unrecall.Memory`` (or
    pass ``user_id``/``agent_id``, which these methods also accept and which
    then limit the lookup to that tenant).
    """

    def __init__(
        self,
        config: Any = None,
        *,
        path: str | os.PathLike[str] | None = None,
        embedder: str | None = None,
        memory: UnrecallMemory | None = None,
    ) -> None:
        if memory is not None:
            if not isinstance(memory, UnrecallMemory):
                raise InvalidInput("memory must be an unrecall Memory")
            self.unrecall = memory
            return
        where, model = _read_config(config)
        where = path if path is not None else where
        self.unrecall = UnrecallMemory(
            default_path() if where is None else where,
            embedder=embedder or model or "minilm",
        )

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        """A ``Memory`` from Mem0's config dict (see the class docstring)."""
        return cls(config_dict)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Checkpoint and close the store."""
        self.unrecall.close()

    # -- lookups ----------------------------------------------------------
    def _owners(self, user_id: Any = None, agent_id: Any = None) -> list[dict[str, str]]:
        """Where an id may live: the given tenant, else every tenant of the file."""
        if user_id is not None or agent_id is not None:
            scope, _ = _scope(user_id, agent_id, None)
            return [{k: v for k, v in scope.items() if k != "run_id"}]
        owners = []
        for key in self.unrecall.storage.tenant_keys().values():
            kind, _, ident = key.partition(":")
            owners.append({"user_id": ident} if kind == "user" else {"agent_id": ident})
        return owners

    def _locate(
        self, memory_id: Any, user_id: Any = None, agent_id: Any = None
    ) -> tuple[dict[str, str], MemoryItem]:
        """The tenant holding ``memory_id`` and the memory; ``MemoryNotFound`` otherwise."""
        memory_id = check_memory_id(memory_id)
        for owner in self._owners(user_id, agent_id):
            try:
                return owner, self.unrecall.get(memory_id, **owner)
            except NotFound:
                continue
        raise MemoryNotFound(f"no memory {show_id(memory_id)}")

    @staticmethod
    def _item(m: MemoryItem, text: str | None = None) -> dict[str, Any]:
        """Mem0's memory dict: ``hash`` is None (a digest of a short text
        would be the text), ``metadata`` None when empty, scope ids, ``role``
        and ``expiration_date`` at the top level when set (as Mem0 promotes
        them); ``state`` is unrecall's."""
        meta = dict(m.metadata)
        role = meta.pop("role", None)
        item: dict[str, Any] = {
            "id": m.id,
            "memory": m.text if text is None else text,
            "hash": None,
            "metadata": meta or None,
            "created_at": _iso(m.created_at),
            "updated_at": _iso(m.updated_at),
            "state": m.state,
        }
        for key in SCOPE_KEYS:
            if getattr(m, key) is not None:
                item[key] = getattr(m, key)
        if role is not None:
            item["role"] = role
        if m.expires_at is not None:
            item["expiration_date"] = _iso(m.expires_at)
        return item

    @staticmethod
    def _with_receipts(out: dict[str, Any], reports: Sequence[OpReport]) -> dict[str, Any]:
        """``out`` plus the signed receipts of hard forgets, when the store gives them."""
        receipts = [r.receipt for r in reports if getattr(r, "receipt", None) is not None]
        if len(reports) == 1 and receipts:
            out["receipt"] = receipts[0]
        elif receipts:
            out["receipts"] = receipts
        return out

    # -- Mem0's API -------------------------------------------------------
    def add(
        self,
        messages: Any,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
    ) -> dict[str, Any]:
        """Remember ``messages`` (a text, a ``{"role", "content"}`` dict or a
        list of them) and return ``{"results": [{"id", "memory", "event"}]}``.

        Each clause a message states becomes a memory (event ``ADD``). With
        ``infer=True`` (default) a user message asking to forget or replace
        something ("please forget my old address") is executed instead of
        stored: every memory it removed is listed with event ``DELETE`` and
        ``"memory": ""`` (its text is never returned), and a memory a value was
        cut out of shows as ``DELETE`` of its id plus ``ADD`` of its successor
        (a new id holding what is left). ``add`` therefore never reports
        ``UPDATE``. A receipt of the forget is under ``"receipt"`` when given.
        ``infer=False`` stores every message as given. Identity keys in
        ``metadata`` are dropped (scope comes from the ids, as in Mem0);
        ``prompt`` is ignored (no LLM extracts here) and
        ``memory_type="procedural_memory"`` is refused: it needs an LLM summary.
        """
        scope, _ = _scope(user_id, agent_id, run_id)
        meta = {k: v for k, v in check_metadata(metadata).items() if k not in IDENTITY_KEYS}
        infer = check_bool(infer, "infer")
        if memory_type is not None:
            raise InvalidInput("memory_type is not supported: procedural memory needs an LLM")
        if isinstance(messages, dict):
            messages = [messages]
        elif isinstance(messages, str) and infer:
            messages = [{"role": "user", "content": messages}]  # Mem0 reads a text as a user turn
        elif not isinstance(messages, str | list):
            raise InvalidInput("messages must be a text, a message dict or a list of message dicts")
        report = self.unrecall.add(
            messages,
            **scope,
            metadata=meta,
            timestamp=timestamp,
            expires_at=expiration_date,
            honor_requests=infer,
        )
        owner = {k: v for k, v in scope.items() if k != "run_id"}
        results: list[dict[str, Any]] = []
        for mid in dict.fromkeys(report.created):
            try:
                m = self.unrecall.get(mid, **owner)
            except NotFound:  # a later request of the same call took it
                continue
            if m.state == "active":
                results.append({"id": mid, "memory": m.text, "event": "ADD"})
        gone = [mid for r in report.requests for mid in (*r.removed, *r.rewritten)]
        results += [{"id": mid, "memory": "", "event": "DELETE"} for mid in dict.fromkeys(gone)]
        return self._with_receipts({"results": results}, [report])

    def search(
        self,
        query: str,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        limit: int | None = None,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        threshold: float | None = SEARCH_THRESHOLD,
        rerank: bool = False,
    ) -> dict[str, Any]:
        """Recall up to ``top_k`` (or ``limit``, default 100) memories of the
        scope: ``{"results": [{"id", "memory", "score", "metadata",
        "created_at", "updated_at", "user_id", ...}]}``, best first.

        The scope comes from the id arguments or ``filters`` (Mem0 2.x puts
        them there); other ``filters`` keys are metadata equality. ``score``
        is the cosine of the query with the memory (``SearchHit.similarity``);
        hits below ``threshold`` are dropped (unrecall's ``SEARCH_THRESHOLD``
        by default, None keeps every hit). ``memory`` is the statement the
        hit belongs to (the still-active clauses of one turn, ids in
        ``"ids"``), ``id`` its best-matching clause. ``rerank`` is accepted
        and ignored: no reranker is configured.
        """
        scope, equal = _scope(user_id, agent_id, run_id, filters)
        k = _count(top_k, limit, 100)
        check_bool(rerank, "rerank")
        if k == 0:
            return {"results": []}
        hits = self.unrecall.search(
            query, **scope, k=min(k, 1000), filters=equal, threshold=threshold
        )
        owner = {key: v for key, v in scope.items() if key != "run_id"}
        results = []
        for hit in hits:
            item = self._item(self.unrecall.get(hit.id, **owner), text=hit.text)
            item["score"] = hit.similarity
            item["ids"] = list(hit.ids)
            results.append(item)
        return {"results": results}

    def get(self, memory_id: str, *, user_id: Any = None, agent_id: Any = None) -> dict | None:
        """One memory as Mem0's dict (``score`` None), or None when no
        tenant of the file holds ``memory_id`` (as Mem0 returns)."""
        try:
            _, m = self._locate(memory_id, user_id, agent_id)
        except MemoryNotFound:
            return None
        return {**self._item(m), "score": None}

    def get_all(
        self,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """The scope's active memories, oldest first, at most ``top_k`` (or
        ``limit``, default 100): ``{"results": [...]}``; ``filters`` as in
        ``search``."""
        scope, equal = _scope(user_id, agent_id, run_id, filters)
        k = _count(top_k, limit, 100)
        items = [
            m
            for m in self.unrecall.get_all(**scope)
            if all(m.metadata.get(f) == v for f, v in equal.items())
        ]
        return {"results": [self._item(m) for m in items[:k]]}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        data: str | None = None,
        user_id: Any = None,
        agent_id: Any = None,
    ) -> dict[str, str]:
        """Correct a memory's text in place (same id; the old text leaves the
        memory, its indexes and its source turns). ``data`` is Mem0 1.x's name
        for ``text``. Changing ``metadata`` in place is refused: unrecall has
        no such operation. Returns Mem0's ``{"message": ...}``."""
        if text is not None and data is not None and text != data:
            raise InvalidInput("give text or data, not both")
        new = text if text is not None else data
        if metadata is not None:
            raise InvalidInput("update cannot change metadata; add the memory again instead")
        if new is None:
            raise InvalidInput("update needs the new text")
        owner, _ = self._locate(memory_id, user_id, agent_id)
        self.unrecall.update(memory_id, new, **owner)
        return {"message": "Memory updated successfully!"}

    def delete(
        self, memory_id: str, *, user_id: Any = None, agent_id: Any = None
    ) -> dict[str, Any]:
        """Hard-delete a memory with its source turn (and what else that turn
        derived, listed in ``"ids"``); ``MemoryNotFound`` for an unknown id."""
        owner, _ = self._locate(memory_id, user_id, agent_id)
        report = self.unrecall.delete(memory_id, **owner)
        out = {"message": "Memory deleted successfully!", "ids": list(report.ids)}
        return self._with_receipts(out, [report])

    def delete_all(
        self, user_id: Any = None, agent_id: Any = None, run_id: Any = None
    ) -> dict[str, Any]:
        """Erase the scope: a user (or agent) entirely, tenant row included,
        or, narrowed by ``agent_id`` / ``run_id``, that part of it. Returns
        Mem0's message and the deleted ids."""
        scope, _ = _scope(user_id, agent_id, run_id)
        if "run_id" not in scope:
            reports = [self.unrecall.delete_all(**scope)]
        else:  # unrecall's delete_all narrows by agent only: delete the run's memories one by one
            owner = {k: v for k, v in scope.items() if k != "run_id"}
            reports = []
            for m in self.unrecall.get_all(**scope, states=STATES):
                try:
                    reports.append(self.unrecall.delete(m.id, **owner))
                except NotFound:  # went with an earlier memory's source turn
                    continue
        ids = list(dict.fromkeys(i for r in reports for i in r.ids))
        out = {"message": "Memories deleted successfully!", "ids": ids}
        return self._with_receipts(out, reports)

    def history(
        self, memory_id: str, *, user_id: Any = None, agent_id: Any = None
    ) -> list[dict[str, Any]]:
        """The events that touched a memory, oldest first, in Mem0's shape.

        unrecall's history is content-free: ``old_memory`` and ``new_memory``
        are always None; ``event`` is ADD / UPDATE / DELETE, ``op`` the
        unrecall operation and ``detail`` its counts. It outlives a delete
        (the id is random), not ``delete_all`` or ``reset``.
        """
        memory_id = check_memory_id(memory_id)
        for owner in self._owners(user_id, agent_id):
            events = self.unrecall.history(memory_id, **owner)
            if events:
                break
        else:
            return []
        out = []
        for e in events:
            event = EVENTS.get(e.op, e.op.upper())
            if e.op == "expire" and e.detail.get("hard"):
                event = "DELETE"
            out.append(
                {
                    "id": str(e.seq),
                    "memory_id": e.memory_id,
                    "old_memory": None,
                    "new_memory": None,
                    "event": event,
                    "created_at": _iso(e.at),
                    "updated_at": _iso(e.at),
                    "is_deleted": event == "DELETE",
                    "actor_id": None,
                    "role": None,
                    "op": e.op,
                    "detail": dict(e.detail),
                }
            )
        return out

    def reset(self) -> None:
        """Erase every tenant of the file (memories, turns, indexes, tenant
        rows); the content-free audit chain stays, unreachable from any id."""
        for owner in self._owners():
            self.unrecall.delete_all(**owner)

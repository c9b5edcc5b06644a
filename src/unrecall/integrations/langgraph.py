"""``UnrecallStore``: a LangGraph ``BaseStore`` over an unrecall ``Memory``.

LangGraph agents keep long-term memory in a store of JSON items addressed by
a namespace (a tuple of strings) and a key. This store keeps them in
unrecall, so an item is searchable by meaning and deleting it is a hard
purge whose erasure ``Memory.verify_erased`` can prove.

Mapping. The namespace element at ``user_index`` (default 0, as in
LangGraph's persistence docs, ``(user_id, "memories")``; ``user_index=1``
fits ``("memories", user_id)``) is the unrecall ``user_id``: the tenant.
Every get and put names it; a search or listing whose namespace does not
name it would span users and is refused unless the store was opened with
``cross_tenant=True``, so one user's items never answer for another's. An
item version is two notes of that user, both carrying in their metadata
the rest of the namespace, the key, the version's timestamps and TTL
(``langgraph_*`` keys; identifiers and numbers, never content):

* the value memory: the JSON ``value`` as its text, released (out of
  recall), so it is content like any other: a purge, forget or forget
  request that names something in the value takes it out of the value
  itself (an item whose value memory went is gone);
* the text memories: what the ``index`` fields pick from the value
  (store-level ``index={"fields": [...]}``, default ``["$"]``, or the put's
  ``index=``; ``"$"`` is every string in the value), one memory per clause,
  embedded and searched. ``index=False``, no text under the fields, or only
  questions (unrecall derives no memory from a question) leave an item that
  can be got, listed and filtered, never recalled.

A put on an existing key writes the new version, then deletes every turn of
the old ones with all derived from them (a purge with erasure), so a put
that fails loses nothing; ``value=None`` deletes the same way. ``ttl``
(minutes) becomes the memories' expiry: an expired item is gone from get,
search and listings, ``refresh_ttl`` pushes the expiry back on reads, and
``sweep_ttl`` purges what expired. Memories without ``langgraph_*`` metadata
(added through other interfaces) are not items.

Every operation is written once, as a generator of ``Memory`` calls, and run
either on the ``Memory`` (``batch``) or on its ``AsyncMemory`` (``abatch``).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections.abc import Generator, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from unrecall.async_memory import AsyncMemory
from unrecall.errors import InvalidInput
from unrecall.memory import SEARCH_THRESHOLD, Memory
from unrecall.records import ACTIVE, RELEASED, MemoryItem, SearchHit
from unrecall.validation import check_metadata, check_text, check_threshold

# Metadata keys that make a memory a LangGraph item.
NAMESPACE = "langgraph_namespace"  # the namespace without its user element
KEY = "langgraph_key"
PART = "langgraph_part"  # "value" (the JSON memory) or "text" (what is searched)
CREATED = "langgraph_created_at"
UPDATED = "langgraph_updated_at"
TTL = "langgraph_ttl"  # minutes, or None
# What a value memory says until its JSON replaces it (Memory.add splits
# text into clauses; Memory.update keeps one memory): constant, says nothing.
PLACEHOLDER = "langgraph item"
# Memory.search returns at most this many hits per call.
MAX_HITS = 1000

# A step of an operation: the name of a Memory method (or "users"), its
# positional and keyword arguments.
Call = tuple[str, tuple[Any, ...], dict[str, Any]]
Steps = Generator[Call, Any, Any]


def _when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def _strings(value: Any) -> list[str]:
    """Every non-blank string in a JSON value, in order (what ``"$"`` indexes:
    the words, not the JSON punctuation around them)."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.strip():
                out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(list(item)))
    return out


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """InMemoryStore's namespace match: a prefix or suffix, ``*`` matching any label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInput("match_type must be 'prefix' or 'suffix'")
    return all(p == "*" or n == p for n, p in pairs)


_OPERATORS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def _check_filter(wanted: Any) -> None:
    """Refuse an unknown ``$`` operator before anything runs."""
    stack = [wanted]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if isinstance(k, str) and k.startswith("$") and k not in _OPERATORS:
                    raise InvalidInput("filter operators are $eq, $ne, $gt, $gte, $lt and $lte")
                stack.append(v)


def _compare(have: Any, wanted: Any) -> bool:
    """InMemoryStore's filter match (JSONB-like): nested dicts match field by
    field, lists element by element, ``$`` operators compare; a value that
    cannot be compared as a number does not match."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            try:
                return all(_OPERATORS[k](have, v) for k, v in wanted.items())
            except (TypeError, ValueError):
                return False
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(have, list | tuple)
            and len(have) == len(wanted)
            and all(_compare(h, w) for h, w in zip(have, wanted, strict=True))
        )
    return have == wanted


class _Version:
    """One stored version of an item: the value its value memory holds (None
    once forgotten), its text memories and their turns; ``pending`` while a
    put (or a crashed one) has not yet written the value."""

    def __init__(self, rows: list[MemoryItem]) -> None:
        self.rows = rows
        self.meta = rows[0].metadata
        self.turns = sorted({t for r in rows for t in r.sources})
        self.value: dict[str, Any] | None = None
        self.pending = False
        for row in rows:
            if row.metadata.get(PART) == "value" and row.text == PLACEHOLDER:
                self.pending = True
            elif row.metadata.get(PART) == "value":
                try:
                    value = json.loads(row.text)
                except ValueError:  # a forget cut the JSON apart: the item is gone
                    continue
                if isinstance(value, dict):
                    self.value = value
        self.texts = [r for r in rows if r.metadata.get(PART) == "text"]

    @property
    def ttl(self) -> float | None:
        return self.meta.get(TTL)


class UnrecallStore(BaseStore):
    """A LangGraph store whose items live in an unrecall ``Memory``.

    ``memory`` is an open ``Memory`` (shared, not closed by ``close``) or a
    store path (opened with ``**options``, e.g. ``embedder="hashing"``, and
    closed by ``close``). ``user_index`` says which namespace element is the
    user (the tenant; see the module docstring); ``index`` takes LangGraph's
    ``IndexConfig`` ``fields`` (unrecall embeds with its own embedder, so an
    ``embed`` is refused and ``dims`` ignored); ``ttl`` is LangGraph's
    ``TTLConfig`` (``default_ttl``, ``refresh_on_read``); ``threshold`` is
    ``Memory.search``'s: the similarity below which a query's hits are
    dropped (default ``"auto"``, the embedder's calibrated cut; None keeps
    every hit); ``cross_tenant`` allows searches and listings that span users.
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory | str | os.PathLike[str],
        *,
        user_index: int = 0,
        index: Mapping[str, Any] | None = None,
        ttl: TTLConfig | None = None,
        threshold: float | Literal["auto"] | None = SEARCH_THRESHOLD,
        cross_tenant: bool = False,
        **options: Any,
    ) -> None:
        if isinstance(user_index, bool) or not isinstance(user_index, int) or user_index < 0:
            raise InvalidInput("user_index must be a non-negative integer")
        if not isinstance(cross_tenant, bool):
            raise InvalidInput("cross_tenant must be True or False")
        self.fields = self._fields(index)
        self.threshold = check_threshold(threshold)
        self.user_index = user_index
        self.cross_tenant = cross_tenant
        self.ttl_config = ttl
        self._owned = not isinstance(memory, Memory)
        self.memory = Memory(memory, **options) if self._owned else memory
        self.amemory = AsyncMemory.wrap(self.memory)

    @staticmethod
    def _fields(index: Mapping[str, Any] | None) -> list[str]:
        if index is None:
            return ["$"]
        if not isinstance(index, Mapping):
            raise InvalidInput("index must be a dict like {'fields': ['text']}")
        if index.get("embed") is not None:
            raise InvalidInput("index 'embed' is refused: unrecall embeds with its own embedder")
        fields = index.get("fields") or ["$"]
        if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
            raise InvalidInput("index fields must be a list of non-empty field paths")
        return list(fields)

    def close(self) -> None:
        """Close the store file if this store opened it."""
        if self._owned:
            self.memory.close()

    def __enter__(self) -> UnrecallStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running ----------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations on the ``Memory``: reads in order, then the
        writes (the last put of a key wins), as LangGraph's stores do."""
        steps = self._batch(list(ops))
        try:
            call = next(steps)
            while True:
                name, args, kwargs = call
                if name == "users":
                    result: Any = self._users()
                else:
                    result = getattr(self.memory, name)(*args, **kwargs)
                call = steps.send(result)
        except StopIteration as done:
            return done.value

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` through ``AsyncMemory``: every store call runs in a
        worker thread, so the event loop never waits on SQLite or the embedder."""
        steps = self._batch(list(ops))
        try:
            call = next(steps)
            while True:
                name, args, kwargs = call
                if name == "users":
                    result: Any = await asyncio.to_thread(self._users)
                else:
                    result = await getattr(self.amemory, name)(*args, **kwargs)
                call = steps.send(result)
        except StopIteration as done:
            return done.value

    def _users(self) -> list[str]:
        """Every user of the store file (a cross-tenant operation's scope)."""
        keys = self.memory.storage.tenant_keys().values()
        return sorted(k[5:] for k in keys if k.startswith("user:"))

    def sweep_ttl(self) -> int:
        """Purge (with erasure) every memory of the store file past its
        expiry, items and other memories alike; returns how many went."""
        return self.memory.expire(purge=True).count

    # -- operations -------------------------------------------------------
    def _batch(self, ops: list[Op]) -> Steps:
        for op in ops:  # refuse bad input before anything is written
            self._check(op)
        results: list[Result] = [None] * len(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                results[i] = yield from self._get(op)
            elif isinstance(op, SearchOp):
                results[i] = yield from self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = yield from self._list(op)
            else:
                puts[(tuple(op.namespace), op.key)] = op
        for op in puts.values():
            yield from self._put(op)
        return results

    def _check(self, op: Any) -> None:
        if not isinstance(op, GetOp | SearchOp | ListNamespacesOp | PutOp):
            raise InvalidInput(f"unknown store operation {type(op).__name__}")
        validate_op_namespace(op)
        if isinstance(op, GetOp | PutOp):
            self._split(op.namespace)
            if not isinstance(op.key, str) or not op.key:
                raise InvalidInput("key must be a non-empty string")
        if isinstance(op, PutOp):
            if op.namespace[0] == "langgraph":
                raise InvalidNamespaceError('the root namespace label cannot be "langgraph"')
            if op.value is not None:
                if not isinstance(op.value, Mapping):
                    raise InvalidInput("value must be a dict (or None to delete)")
                check_metadata(dict(op.value), "value")
            if op.index is not None and op.index is not False and not isinstance(op.index, list):
                raise InvalidInput("index must be None, False or a list of field paths")
            if op.ttl is not None and (
                isinstance(op.ttl, bool)
                or not isinstance(op.ttl, int | float)
                or not 0 < op.ttl < math.inf
            ):
                raise InvalidInput("ttl must be a positive number of minutes, or None")
        if isinstance(op, SearchOp | ListNamespacesOp):
            for name in ("limit", "offset"):
                n = getattr(op, name)
                if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                    raise InvalidInput(f"{name} must be a non-negative integer")
        if isinstance(op, SearchOp):
            if op.filter is not None and not isinstance(op.filter, dict):
                raise InvalidInput("filter must be a dict")
            _check_filter(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise InvalidInput("query must be a string")
        if isinstance(op, ListNamespacesOp):
            if op.max_depth is not None and (
                isinstance(op.max_depth, bool)
                or not isinstance(op.max_depth, int)
                or op.max_depth < 1
            ):
                raise InvalidInput("max_depth must be a positive integer or None")
            for c in op.match_conditions or ():
                if c.match_type not in ("prefix", "suffix"):
                    raise InvalidInput("match_type must be 'prefix' or 'suffix'")

    def _split(self, namespace: tuple[str, ...]) -> tuple[str, list[str]]:
        """The user of a namespace and the rest of it (what metadata holds)."""
        if len(namespace) <= self.user_index:
            raise InvalidInput(
                f"the namespace has {len(namespace)} labels; the user is label "
                f"#{self.user_index} (user_index)"
            )
        rest = list(namespace)
        return rest.pop(self.user_index), rest

    def _join(self, user: str, rest: list[str]) -> tuple[str, ...]:
        return (*rest[: self.user_index], user, *rest[self.user_index :])

    def _scope(self, prefix: tuple[str, ...]) -> Steps:
        """The users a namespace prefix reaches: the one it names, or every
        user when ``cross_tenant`` allows it."""
        if len(prefix) > self.user_index and prefix[self.user_index] != "*":
            return [prefix[self.user_index]]
        if not self.cross_tenant:
            raise InvalidInput(
                f"this namespace prefix does not name a user (label #{self.user_index}), so it "
                "would span users; name one, or open the store with cross_tenant=True"
            )
        users = yield ("users", (), {})
        return users

    def _versions(self, user: str) -> Steps:
        """The user's unexpired item versions by (namespace, key), oldest
        first; ``_current`` picks the readable one."""
        rows = yield ("get_all", (), {"user_id": user, "states": (ACTIVE, RELEASED)})
        now = time.time()
        groups: dict[tuple[tuple[str, ...], str, float], list[MemoryItem]] = {}
        for row in rows:
            meta = row.metadata
            if KEY in meta and (row.expires_at is None or row.expires_at > now):
                ns = self._join(user, meta[NAMESPACE])
                groups.setdefault((ns, meta[KEY], meta[UPDATED]), []).append(row)
        items: dict[tuple[tuple[str, ...], str], list[_Version]] = {}
        for (ns, key, _stamp), group in sorted(groups.items(), key=lambda g: g[0][2]):
            items.setdefault((ns, key), []).append(_Version(group))
        return items

    @staticmethod
    def _current(versions: list[_Version]) -> _Version | None:
        """The newest written version, if its value was not forgotten (an
        older version never stands in for a forgotten one)."""
        written = [v for v in versions if not v.pending]
        return written[-1] if written and written[-1].value is not None else None

    def _items(self, user: str) -> Steps:
        """The user's current items: (namespace, key) -> version."""
        items = yield from self._versions(user)
        current = {key: self._current(vs) for key, vs in items.items()}
        return {key: v for key, v in current.items() if v is not None}

    def _item(self, key: tuple[tuple[str, ...], str], v: _Version, score: Any = False) -> Item:
        fields = {
            "namespace": key[0],
            "key": key[1],
            "value": v.value,
            "created_at": _when(v.meta[CREATED]),
            "updated_at": _when(v.meta[UPDATED]),
        }
        if score is False:
            return Item(**fields)
        return SearchItem(**fields, score=score)

    def _refresh(self, user: str, versions: list[_Version]) -> Steps:
        """Push back the expiry of items read with a TTL."""
        now = time.time()
        for v in versions:
            if v.ttl is not None:
                for row in v.rows:
                    yield ("set_expiry", (row.id, now + v.ttl * 60), {"user_id": user})

    def _get(self, op: GetOp) -> Steps:
        user, _ = self._split(op.namespace)
        items = yield from self._items(user)
        current = items.get((tuple(op.namespace), op.key))
        if current is None:
            return None
        if op.refresh_ttl:
            yield from self._refresh(user, [current])
        return self._item((tuple(op.namespace), op.key), current)

    def _search(self, op: SearchOp) -> Steps:
        prefix = tuple(op.namespace_prefix)
        users = yield from self._scope(prefix)
        wanted = op.filter or {}
        found: list[tuple[float, tuple[str, Any], _Version, Any]] = []
        for user in users:
            items = yield from self._items(user)
            current = {
                key: v
                for key, v in items.items()
                if key[0][: len(prefix)] == prefix
                and all(_compare(v.value.get(f), w) for f, w in wanted.items())
            }
            if not op.query:
                found.extend((v.meta[CREATED], (user, key), v, False) for key, v in current.items())
                continue
            hits = yield from self._recall(user, op.query, current, op.offset + op.limit)
            found.extend((-(s or 0.0), (user, key), current[key], s) for key, s in hits)
        # Items come oldest first; a query's hits keep unrecall's ranking for
        # one user, and several users' hits merge by similarity.
        if not op.query or len(users) > 1:
            found.sort(key=lambda f: f[0])
        page = found[op.offset : op.offset + op.limit]
        if op.refresh_ttl:
            for user in users:
                yield from self._refresh(user, [v for _, (u, _k), v, _s in page if u == user])
        return [self._item(key, v, s if op.query else None) for _, (_u, key), v, s in page]

    def _recall(self, user: str, query: str, current: dict[Any, _Version], wanted: int) -> Steps:
        """The current items a query recalls, best first, with their
        similarity; asks Memory.search for more hits until enough are items
        of the prefix or no more come."""
        owner = {row.id: key for key, v in current.items() for row in v.texts}
        k = min(MAX_HITS, max(10, 2 * wanted))
        while True:
            hits: list[SearchHit] = yield (
                "search",
                (query,),
                {"user_id": user, "k": k, "threshold": self.threshold},
            )
            out: dict[Any, float | None] = {}
            for hit in hits:
                key = owner.get(hit.id)
                if key is not None and key not in out:
                    out[key] = hit.similarity
            if len(out) >= wanted or len(hits) < k or k == MAX_HITS:
                return list(out.items())
            k = min(MAX_HITS, 4 * k)

    def _list(self, op: ListNamespacesOp) -> Steps:
        conditions = tuple(op.match_conditions or ())
        prefixes = [tuple(c.path) for c in conditions if c.match_type == "prefix"]
        pinned = [p for p in prefixes if len(p) > self.user_index and p[self.user_index] != "*"]
        users = yield from self._scope(pinned[0] if pinned else ())
        namespaces: set[tuple[str, ...]] = set()
        for user in users:
            items = yield from self._items(user)
            namespaces.update(ns for ns, _key in items)
        kept = [ns for ns in namespaces if all(_matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]

    def _texts(self, value: dict[str, Any], index: Any) -> str:
        """The text of an item that is embedded and searched ("" for none)."""
        if index is False:
            return ""
        texts: list[str] = []
        for path in self.fields if index is None else index:
            if path == "$":
                texts.extend(_strings(value))
            else:
                texts.extend(t for t in get_text_at_path(value, tokenize_path(path)) if t.strip())
        return "\n".join(texts)

    def _put(self, op: PutOp) -> Steps:
        user, rest = self._split(op.namespace)
        items = yield from self._versions(user)
        old = items.get((tuple(op.namespace), op.key), [])
        if op.value is not None:
            value = check_metadata(dict(op.value), "value")
            # both texts are checked before the first write
            limit = self.memory.max_text_chars
            document = check_text(json.dumps(value, ensure_ascii=False), "value", limit)
            text = self._texts(value, op.index)
            if text.strip():
                check_text(text, "indexed text", limit)
            current = self._current(old)
            now = time.time()
            meta = {
                NAMESPACE: rest,
                KEY: op.key,
                CREATED: now if current is None else current.meta[CREATED],
                UPDATED: now,
                TTL: None if op.ttl is None else float(op.ttl),
            }
            scope = {"user_id": user, **({} if op.ttl is None else {"ttl": float(op.ttl) * 60})}
            report = yield ("add", (PLACEHOLDER,), {**scope, "metadata": {**meta, PART: "value"}})
            for memory_id in report.created:  # one: the placeholder is one clause
                yield ("release", (memory_id,), {"user_id": user})
                yield ("update", (memory_id, document), {"user_id": user})
            if text.strip():
                report = yield ("add", (text,), {**scope, "metadata": {**meta, PART: "text"}})
                if not report.created:  # only questions: the turn would find nothing
                    for turn in report.detail["turns"]:
                        yield ("delete", (turn,), {"user_id": user})
        # the new version is in; now the old ones leave the file
        for version in old:
            for turn in version.turns:
                yield ("delete", (turn,), {"user_id": user})

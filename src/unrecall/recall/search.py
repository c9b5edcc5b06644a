"""Hybrid recall: BM25 over keyed terms + cosine over embeddings, fused by a
convex combination of their normalised scores.

Only active memories are in the indexes, so released, superseded and purged
ones can never be returned; expiry and scope filters are applied to the
fused candidates, widening the candidate pool until ``k`` survive.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from threading import Lock

import numpy as np

from unrecall.progress import steps
from unrecall.recall.embedder import Embedder
from unrecall.recall.identifiers import query_keys
from unrecall.recall.lexical import STOPWORDS, TermHasher, words
from unrecall.recall.names import query_name_keys
from unrecall.records import ACTIVE
from unrecall.storage.base import MemoryRow, Storage

# A convex combination of the two normalised scores keeps how far ahead a
# hit is, which ranks discard; it beats RRF in Bruch et al., "An Analysis of
# Fusion Functions for Hybrid Retrieval" (TOIS 2023), and here on LoCoMo
# (recall@5 0.569 -> 0.603 when it alone changed). The words weigh a little
# more: on the LoCoMo development half 0.6 and 0.65 gave recall@5 0.608 and
# 0.607 against 0.599 at 0.5 (0.4: 0.585, 0.7: 0.594) and ForgetEval did
# not move (docs/benchmarks.md, "Third round").
LEXICAL_WEIGHT = 0.6
CACHE_TEXTS = 4096  # vectors cached by exact text (~6 MB at 384 floats)
ASYNC_EMBED_MIN = 8  # texts from which ``embed_async`` uses the worker thread
_WORKER_LOCK = Lock()  # two first searches in two threads make one executor


# The identifier keys and the name keys a query names.
QueryEntities = tuple[set[str], set[str]]


def query_entities(query: str) -> QueryEntities:
    """The identifier and name keys of a query: the ranking reads them, and
    so does the gathering of its hits into statements (computed once, by
    the caller, for both)."""
    return query_keys(query), query_name_keys(query)


@dataclass(frozen=True)
class Candidate:
    """A fused hit before it is turned into a public ``SearchHit``."""

    row: MemoryRow
    score: float
    lexical_rank: int | None
    vector_rank: int | None
    similarity: float | None


class Recall:
    """Indexes memories and answers queries for one store."""

    def __init__(self, storage: Storage, embedder: Embedder, hasher: TermHasher) -> None:
        self.storage = storage
        self.embedder = embedder
        self.hasher = hasher
        self._executor: ThreadPoolExecutor | None = None
        self._executor_pid = 0
        # Vectors by exact text, in RAM only (never written): a text said
        # again, a query asked again, a fact a supersede compares and then
        # indexes, is embedded once. Keys are keyed digests, not the texts,
        # and every hard deletion (``Storage.erase``) empties it, so that a
        # purged text's vector does not outlive the purge here either.
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_lock = Lock()
        storage.on_erase(self.forget_vectors)

    def forget_vectors(self) -> None:
        """Drop every cached vector (called on each hard deletion)."""
        with self._cache_lock:
            self._cache.clear()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One embedding per text; a text embedded before (and not since
        erased) comes from the cache of ``CACHE_TEXTS`` vectors."""
        keys = [self.hasher.cache_key(t) for t in texts]
        out = np.empty((len(texts), self.embedder.dim), dtype=np.float32)
        todo: dict[bytes, list[int]] = {}
        with self._cache_lock:
            for i, key in enumerate(keys):
                vec = self._cache.get(key)
                if vec is None:
                    todo.setdefault(key, []).append(i)
                else:
                    self._cache.move_to_end(key)
                    out[i] = vec
        if todo:
            firsts = [spots[0] for spots in todo.values()]
            vecs = self.embedder.embed([texts[i] for i in firsts])
            with self._cache_lock:
                for (key, spots), vec in zip(todo.items(), vecs, strict=True):
                    out[spots] = vec
                    self._cache[key] = vec
                while len(self._cache) > CACHE_TEXTS:
                    self._cache.popitem(last=False)
        return out

    def index_memories(
        self,
        rows: Sequence[MemoryRow],
        *,
        documents: Sequence[str] | None = None,
        vectors: np.ndarray | None = None,
    ) -> None:
        """Write both index rows of each memory; the term documents and
        vectors are computed here (vectors in one batch) unless given."""
        if not rows:
            return
        if vectors is None:
            vectors = self.embed([r.text for r in rows])
        if documents is None:
            documents = [self.hasher.document(r.text) for r in rows]
        if len(vectors) != len(rows) or len(documents) != len(rows):
            raise ValueError("one document and one vector per memory row")
        for row, doc, vec in zip(rows, documents, vectors, strict=True):
            self.storage.index(row, doc, vec)

    def reindex(self, progress: Callable[[str], None] | None = None) -> None:
        """Write the full-text row of every turn and active memory again from
        its text (an upgrade whose full-text scheme changed; vectors stay),
        tenant by tenant (a bar on stderr with a ``Progress``)."""
        tenants = list(self.storage.tenant_keys())
        for tenant_id in steps(progress, tenants, "upgrading the full-text index", "tenant"):
            for turn in self.storage.turns(tenant_id):
                self.storage.index_turn(turn, self.hasher.document(turn.text))
            for row in self.storage.memories(tenant_id, [ACTIVE]):
                self.storage.index_terms(row, self.hasher.document(row.text))

    def embed_async(self, texts: Sequence[str]) -> Future[np.ndarray]:
        """Embed ``texts`` on the worker thread; ``.result()`` gives the rows.

        A few texts are embedded here and now: waking the worker costs more
        than the little work it would overlap (a one-fact ``add``).
        """
        if len(texts) >= ASYNC_EMBED_MIN:
            return self._worker().submit(self.embed, list(texts))
        done: Future[np.ndarray] = Future()
        done.set_result(self.embed(list(texts)))
        return done

    def vectors(self, texts: Sequence[str], rows: Sequence[MemoryRow]) -> np.ndarray:
        """Embeddings of ``texts``, then of memory ``rows``, one row each: an
        indexed memory's stored vector (the same the embedder would give its
        text), the others computed."""
        stored: dict[int, np.ndarray] = {}
        for tenant_id in {r.tenant_id for r in rows}:
            ids = [r.id for r in rows if r.tenant_id == tenant_id]
            stored.update(self.storage.embeddings(tenant_id, ids))
        missing = [r.text for r in rows if r.id not in stored]
        computed = iter(self.embed(list(texts) + missing))
        out = np.empty((len(texts) + len(rows), self.embedder.dim), dtype=np.float32)
        for i in range(len(texts)):
            out[i] = next(computed)
        for i, r in enumerate(rows, len(texts)):
            out[i] = stored[r.id] if r.id in stored else next(computed)
        return out

    def query_terms(self, query: str, entities: QueryEntities | None = None) -> list[str]:
        """Digests of the query's words, stopwords dropped unless that empties
        it, and of its identifier and name keys (``entities``, if known)."""
        toks = words(query)
        # A lone Latin letter is mostly the "s" of a possessive ("Dana's").
        content = [
            t
            for t in toks
            if t not in STOPWORDS and not (len(t) == 1 and t.isascii() and t.isalpha())
        ] or toks
        terms = [self.hasher.term(t) for t in content]
        # Canonical keys let "ALICE @ Acme.IO" or "Wang Xiaoming" meet the
        # memory that wrote "alice@acme.io" or "王小明".
        idents, names = entities or query_entities(query)
        terms += [self.hasher.key(k) for k in sorted(idents | names)]
        return list(dict.fromkeys(terms))

    def search(
        self,
        tenant_id: int,
        query: str,
        k: int,
        accept: Callable[[MemoryRow], bool],
        lexical_only: bool = False,
        query_vector: np.ndarray | None = None,
        entities: QueryEntities | None = None,
    ) -> list[Candidate]:
        """The ``k`` best accepted memories for ``query``, best first
        (``query_vector``, ``entities``: the query's embedding and keys,
        when the caller has them)."""
        terms = self.query_terms(query, entities)
        pool = max(4 * k, 20)
        qvec: np.ndarray | None = None
        first_vec: list[tuple[int, float]] | None = None
        if lexical_only or self.storage.held():
            # (inside this thread's transaction the worker could not reach
            # the store until this thread let it go: no overlap then)
            lex = self.storage.lexical(tenant_id, terms, pool)
            if not lexical_only:
                qvec = self.embed([query])[0] if query_vector is None else query_vector
        else:
            # BM25 does not need the query vector, and SQLite and
            # onnxruntime release the GIL: the first BM25 runs on a worker
            # thread while this one embeds the query and reads the vectors
            # (on a read connection of its own, in SQLite). They overlap
            # only while neither takes the GIL often nor starts BLAS's
            # spinning workers (docs/benchmarks.md, issue #17).
            pending = self._worker().submit(self.storage.lexical, tenant_id, terms, pool)
            try:
                qvec = self.embed([query])[0] if query_vector is None else query_vector
                first_vec = self.storage.vector(tenant_id, qvec, pool)
            except BaseException:
                wait([pending])  # never leave the worker on the connection
                raise
            lex = pending.result()
        while True:
            if first_vec is not None:
                vec, first_vec = first_vec, None
            else:
                vec = [] if qvec is None else self.storage.vector(tenant_id, qvec, pool)
            out = self._accepted(_fuse(lex, vec), k, accept)
            exhausted = len(lex) < pool and (qvec is None or len(vec) < pool)
            if len(out) >= k or exhausted:
                return out
            pool *= 4
            lex = self.storage.lexical(tenant_id, terms, pool)

    def _worker(self) -> ThreadPoolExecutor:
        """The one-thread executor for the overlapped BM25 (made on first use)."""
        with _WORKER_LOCK:
            # A forked child inherits the executor but not its thread, and
            # would wait forever on it: make a new one there.
            if self._executor is None or self._executor_pid != os.getpid():
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="unrecall-bm25")
                self._executor_pid = os.getpid()
            return self._executor

    def _accepted(
        self,
        fused: list[tuple[int, tuple[float, tuple[int | None, int | None, float | None]]]],
        k: int,
        accept: Callable[[MemoryRow], bool],
    ) -> list[Candidate]:
        """The first ``k`` accepted candidates in fused order.

        Rows are loaded in fused order, ``k`` at a time at first, because
        loading (and JSON-decoding) every candidate of a pool of up to
        ``2 * pool`` ids is wasted work when, as usual, the first ``k`` pass.
        """
        out: list[Candidate] = []
        start, step = 0, k
        while start < len(fused) and len(out) < k:
            chunk = fused[start : start + step]
            by_id = {r.id: r for r in self.storage.memories_by_id([mid for mid, _ in chunk])}
            for mid, (score, ranks) in chunk:
                row = by_id.get(mid)
                if row is not None and accept(row):
                    out.append(Candidate(row, score, ranks[0], ranks[1], ranks[2]))
                    if len(out) == k:
                        break
            start += step
            step *= 4  # rejections are rare; widen fast when they happen
        return out


def _fuse(
    lexical: list[tuple[int, float]], vector: list[tuple[int, float]]
) -> list[tuple[int, tuple[float, tuple[int | None, int | None, float | None]]]]:
    """Convex fusion of the lexical and vector hits: BM25 over the best BM25,
    cosine min-max scaled over the pool (a hit outside one list scores 0
    there), best first, with each hit's ranks and cosine."""
    scores: dict[int, float] = {}
    ranks: dict[int, list[int | float | None]] = {}
    if lexical:
        top = max(score for _, score in lexical) or 1.0
        for rank, (mid, score) in enumerate(lexical, 1):
            scores[mid] = LEXICAL_WEIGHT * score / top
            ranks.setdefault(mid, [None, None, None])[0] = rank
    if vector:
        high, low = vector[0][1], vector[-1][1]
        for rank, (mid, sim) in enumerate(vector, 1):
            scaled = (sim - low) / (high - low) if high - low > 1e-6 else 1.0
            scores[mid] = scores.get(mid, 0.0) + (1 - LEXICAL_WEIGHT) * scaled
            entry = ranks.setdefault(mid, [None, None, None])
            entry[1], entry[2] = rank, sim
    # Min-max gives the pool's last cosine 0, so in a small store a memory
    # both lists found can tie one only the vectors found: the one the
    # words found goes first, then the higher cosine.
    order = sorted(scores, key=lambda m: (-scores[m], ranks[m][0] is None, -(ranks[m][2] or -1.0)))
    return [(m, (scores[m], tuple(ranks[m]))) for m in order]  # type: ignore[misc]

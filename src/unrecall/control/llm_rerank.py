"""An optional LLM reranker for trail-aware forgetting (off by default).

``TrailForgetter`` scores candidate evidence deterministically. A deployment
that has a chat model behind an OpenAI-compatible endpoint may let it judge
instead which candidates help piece the fact together (MemCut's S2 choice,
applied to unrecall's entity-expanded pool):

    mem.trails.rerank = openai_rerank("http://localhost:8000/v1", "my-model")

The candidates' texts go to that endpoint, so it must be one the data may go
to. Any failure (network, status, an answer that is not one score per
candidate) raises :class:`~unrecall.errors.RerankError`; the forget that
asked is rolled back, and nothing is deleted on a guess. Error messages
carry no memory content.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Sequence

from unrecall.control.trails import Rerank
from unrecall.errors import RerankError

_PROMPT = """A user asked an assistant to forget a fact. Below are the request, the \
memories that state the fact, and numbered candidate memories. For each candidate, \
give a score from 0 to 1: how much it helps someone piece the fact together \
(1 = it is evidence for the fact, 0 = unrelated, even if it shares a name or a word).
Answer with only a JSON list of numbers, one per candidate, in order.

Request: {request}
Memories that state the fact:
{disclosures}
Candidates:
{candidates}"""


def complete(
    base_url: str,
    model: str,
    prompt: str,
    *,
    api_key: str | None = None,
    timeout: float = 60.0,
    what: str = "rerank",
) -> str:
    """The answer of a chat model at an OpenAI-compatible ``base_url``
    (``.../v1``) to one user message, at temperature 0. Any failure raises
    :class:`~unrecall.errors.RerankError` naming ``what`` endpoint failed,
    never the prompt."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    body = json.dumps(
        {"model": model, "temperature": 0, "messages": [{"role": "user", "content": prompt}]}
    ).encode()
    req = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions", body, headers, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return str(json.loads(resp.read())["choices"][0]["message"]["content"])
    except urllib.error.HTTPError as exc:
        raise RerankError(f"the {what} endpoint answered HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise RerankError(f"the {what} endpoint is unreachable ({type(exc).__name__})") from None
    except (ValueError, KeyError, IndexError, TypeError):
        raise RerankError(f"the {what} endpoint sent no chat completion") from None


def openai_rerank(
    base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0
) -> Rerank:
    """A rerank hook that asks a chat model at an OpenAI-compatible
    ``base_url`` (``.../v1``) to score each candidate; see the module."""

    def rerank(request: str, disclosures: list[str], texts: list[str]) -> Sequence[float]:
        prompt = _PROMPT.format(
            request=request,
            disclosures="\n".join(f"- {d}" for d in disclosures) or "- (none found)",
            candidates="\n".join(f"{i}. {t}" for i, t in enumerate(texts, 1)),
        )
        answer = complete(base_url, model, prompt, api_key=api_key, timeout=timeout)
        return _scores(answer, len(texts))

    return rerank


def _scores(answer: str, n: int) -> list[float]:
    """The JSON list of ``n`` scores in a model's answer (code fences allowed)."""
    found = re.search(r"\[[^\[\]]*\]", answer)
    try:
        scores = [float(x) for x in json.loads(found.group(0))] if found else []
    except (ValueError, TypeError):
        scores = []
    if len(scores) != n or not all(0.0 <= s <= 1.0 for s in scores):
        raise RerankError(f"the rerank endpoint did not give {n} scores between 0 and 1")
    return scores

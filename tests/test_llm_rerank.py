"""The optional OpenAI-compatible rerank hook, against a local fake endpoint."""

from __future__ import annotations

import json

import pytest
from conftest import Endpoint
from test_trails import DISCLOSURE, EVIDENCE, REQUEST, U, episode, surviving

from unrecall import Memory
from unrecall.control.llm_rerank import openai_rerank
from unrecall.errors import RerankError


def candidates(prompt: str) -> list[str]:
    return [line.split(". ", 1)[1] for line in prompt.split("Candidates:\n")[1].splitlines()]


def test_the_models_scores_choose_the_evidence(mem: Memory, endpoint: tuple[Endpoint, str]) -> None:
    fake, url = endpoint
    episode(mem)
    # the "model" keeps only the two ownership turns as evidence
    fake.reply = lambda p: json.dumps([1.0 if "owner" in c else 0.0 for c in candidates(p)])
    mem.trails.rerank = openai_rerank(url, "test-model")
    mem.forget(REQUEST, user_id=U)
    left = surviving(mem)
    assert DISCLOSURE not in left
    assert "Nina Shah emailed her engagement letter, signed as owner of Arden Advisory." not in left
    assert EVIDENCE[4] in left  # scored 0 by the model: kept
    assert fake.prompts and REQUEST in fake.prompts[0]


@pytest.mark.parametrize(
    "status, reply",
    [(500, "[]"), (200, "I think the first one"), (200, "[0.5]"), (200, "[2, 0, 0]")],
)
def test_a_bad_answer_deletes_nothing(
    mem: Memory, endpoint: tuple[Endpoint, str], status: int, reply: str
) -> None:
    fake, url = endpoint
    episode(mem)
    before = surviving(mem)
    fake.status, fake.reply = status, (lambda p: reply)
    mem.trails.rerank = openai_rerank(url, "test-model")
    with pytest.raises(RerankError) as err:
        mem.forget(REQUEST, user_id=U)
    assert "Arden" not in str(err.value) and "Nina" not in str(err.value)
    assert surviving(mem) == before


def test_an_unreachable_endpoint_is_a_clear_error(mem: Memory) -> None:
    episode(mem)
    mem.trails.rerank = openai_rerank("http://127.0.0.1:9/v1", "m", timeout=2)
    with pytest.raises(RerankError, match="unreachable"):
        mem.forget(REQUEST, user_id=U)
    assert DISCLOSURE in surviving(mem)

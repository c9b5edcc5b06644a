"""search's similarity and threshold: what is unrelated to the query is
dropped; the cut is the embedder's calibrated one unless the caller gives
another (or None)."""

from __future__ import annotations

import pytest

from unrecall import InvalidInput, Memory
from unrecall.memory import CALIBRATED_THRESHOLDS

FACTS = [
    "I love kiwis, they are my favourite fruit",
    "My sister Ana lives in Porto",
    "I went hiking in the Alps last summer",
    "My bank card PIN is 4417",
]


@pytest.fixture
def mem(mem: Memory) -> Memory:
    """conftest's store (MiniLM, on each backend) holding the facts."""
    for fact in FACTS:
        mem.add(fact, user_id="u")
    return mem


def test_off_topic_query_drops_what_is_unrelated(mem: Memory) -> None:
    hits = mem.search("quantum chromodynamics lecture", user_id="u")
    assert not any("kiwi" in h.text for h in hits)
    assert len(hits) <= 1
    # a stricter cut returns nothing; without one the k best come back
    assert mem.search("quantum chromodynamics lecture", user_id="u", threshold=0.3) == []
    assert len(mem.search("quantum chromodynamics lecture", user_id="u", threshold=None)) == 4


def test_on_topic_query_keeps_its_hit_with_a_similarity(mem: Memory) -> None:
    hits = mem.search("where does Ana live?", user_id="u")
    assert hits and hits[0].text == "My sister Ana lives in Porto"
    cut = CALIBRATED_THRESHOLDS[mem.embedder.name]
    assert all(h.similarity is not None and h.similarity >= cut for h in hits)
    assert len(hits) < len(FACTS)  # the unrelated facts fell below the cut


def test_explicit_threshold_and_lexical_mode(mem: Memory) -> None:
    everything = mem.search("PIN", user_id="u", threshold=-1.0)
    assert len(everything) >= 1
    strict = mem.search("PIN", user_id="u", threshold=0.99)
    assert strict == []
    lexical = mem.search("PIN", user_id="u", mode="lexical", threshold=None)
    assert lexical and lexical[0].similarity is None
    # a cut in lexical mode still needs the cosine: computed for the hits
    assert mem.search("PIN", user_id="u", mode="lexical")[0].similarity is not None


@pytest.mark.parametrize("bad", [2.0, -1.5, "high", True, [0.3]])
def test_bad_threshold_is_refused(mem: Memory, bad: object) -> None:
    with pytest.raises(InvalidInput, match="threshold"):
        mem.search("PIN", user_id="u", threshold=bad)  # type: ignore[arg-type]


def test_uncalibrated_embedder_keeps_the_k_best(fast_mem: Memory) -> None:
    fast_mem.add("I love kiwis", user_id="u")
    assert fast_mem.embedder.name not in CALIBRATED_THRESHOLDS
    assert len(fast_mem.search("quantum chromodynamics", user_id="u")) == 1

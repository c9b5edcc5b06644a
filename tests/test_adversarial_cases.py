"""The hand-written ForgetEval adversarial suite stays well-formed and fair.

The harness scores a case by casefolded substring match over the top-5
recall: every ``must_contain`` string must appear for ``final_query``, and no
``must_not_contain`` string may appear, neither for ``final_query`` nor for a
query made of the forbidden string itself. A case is only fair if a correct,
precise memory can pass it, so these checks hold the data to that:

* a forbidden string and a required string are never part of one another;
* the facts a case expects to survive never contain a forbidden string. The
  facts that hold a forbidden string are the ones the mutations must remove
  (or, for ``compound_fact``, edit); outside entity-wide forgetting each
  mutation removes at most one of them, so a distractor that accidentally
  holds a forbidden string shows up as one fact too many;
* every required string lives in a fact that survives (a distractor or a
  final ``supersede`` text; a compound fact's untouched clause);
* a ``supersede`` text holding a forbidden string is an intermediate state,
  so a later mutation must replace it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from unrecall.bench.cases import adversarial_path, load_cases

DATA = adversarial_path()

CATEGORIES = (
    "substring_trap",
    "prefix_collision",
    "paraphrase_supersession",
    "negation_trap",
    "temporal_qualifier",
    "shared_attribute",
    "compound_fact",
    "identifier_obfuscation",
    "cross_lingual_identifier",
    "recursive_supersession",
)
FAMILIES = {"supersession", "decay", "amnesia", "purge", "drift"}
FIELDS = {
    "id",
    "category",
    "family",
    "setup_facts",
    "mutations",
    "final_query",
    "must_contain",
    "must_not_contain",
}
OPS = {"supersede", "release", "purge"}
MIN_PER_CATEGORY = 25
MAX_FACTS = 12


def _load() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as f:
        data = json.load(f)
    assert isinstance(data, list)
    return data


CASES = _load()


def _fold(s: str) -> str:
    return s.casefold()


def _holds_forbidden(text: str, case: dict[str, Any]) -> bool:
    return any(_fold(f) in _fold(text) for f in case["must_not_contain"])


def _nonempty_str(x: object) -> bool:
    return isinstance(x, str) and x.strip() != ""


def test_the_harness_loader_accepts_the_file() -> None:
    assert len(load_cases(DATA)) == len(CASES)


def test_suite_size_and_categories() -> None:
    counts = Counter(c["category"] for c in CASES)
    assert set(counts) == set(CATEGORIES)
    assert all(counts[cat] >= MIN_PER_CATEGORY for cat in CATEGORIES), counts
    assert len(CASES) >= 250


def test_ids_are_unique_and_named_after_their_category() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    for c in CASES:
        assert re.fullmatch(rf"{re.escape(c['category'])}-\d{{3}}", c["id"]), c["id"]


def test_no_duplicated_cases() -> None:
    setups = [tuple(c["setup_facts"]) for c in CASES]
    assert len(setups) == len(set(setups))
    firsts = Counter(c["setup_facts"][0] for c in CASES)
    assert max(firsts.values()) == 1, [k for k, v in firsts.items() if v > 1]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_schema(case: dict[str, Any]) -> None:
    assert set(case) == FIELDS
    assert case["category"] in CATEGORIES
    assert case["family"] in FAMILIES
    facts = case["setup_facts"]
    assert isinstance(facts, list) and 3 <= len(facts) <= MAX_FACTS
    assert all(_nonempty_str(f) for f in facts)
    assert len(set(facts)) == len(facts)
    muts = case["mutations"]
    assert isinstance(muts, list) and muts
    for m in muts:
        assert isinstance(m, list) and m and m[0] in OPS, m
        assert len(m) == (3 if m[0] == "supersede" else 2), m
        assert all(_nonempty_str(x) for x in m[1:]), m
    assert _nonempty_str(case["final_query"])
    for key in ("must_contain", "must_not_contain"):
        assert isinstance(case[key], list) and case[key]
        assert all(_nonempty_str(s) for s in case[key])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_forbidden_and_required_never_overlap(case: dict[str, Any]) -> None:
    for f in case["must_not_contain"]:
        for m in case["must_contain"]:
            assert _fold(f) not in _fold(m) and _fold(m) not in _fold(f), (f, m)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_forbidden_strings_name_something_stored(case: dict[str, Any]) -> None:
    texts = case["setup_facts"] + [m[2] for m in case["mutations"] if m[0] == "supersede"]
    for f in case["must_not_contain"]:
        assert any(_fold(f) in _fold(t) for t in texts), f"{f!r} is stored nowhere"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_targets_and_distractors(case: dict[str, Any]) -> None:
    targets = [f for f in case["setup_facts"] if _holds_forbidden(f, case)]
    distractors = [f for f in case["setup_facts"] if not _holds_forbidden(f, case)]
    intermediates = [
        m[2] for m in case["mutations"] if m[0] == "supersede" and _holds_forbidden(m[2], case)
    ]
    # A chain that returns to its first value (Chrome -> Brave -> Chrome)
    # forbids only intermediate states, which no setup fact holds.
    assert targets or intermediates, "no stored fact holds a forbidden string"
    assert 2 <= len(distractors) <= 5, distractors
    if case["family"] != "amnesia":
        # One mutation removes (or edits) one fact; more targets than
        # mutations means a distractor holds a forbidden string.
        assert len(targets) <= len(case["mutations"]), targets


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_intermediate_states_are_replaced(case: dict[str, Any]) -> None:
    muts = case["mutations"]
    for i, m in enumerate(muts):
        if m[0] == "supersede" and _holds_forbidden(m[2], case):
            assert i < len(muts) - 1, f"final state {m[2]!r} holds a forbidden string"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_required_strings_survive(case: dict[str, Any]) -> None:
    survivors = [f for f in case["setup_facts"] if not _holds_forbidden(f, case)]
    survivors += [
        m[2] for m in case["mutations"] if m[0] == "supersede" and not _holds_forbidden(m[2], case)
    ]
    if case["category"] == "compound_fact":
        # The untouched clause of an edited compound fact survives.
        for fact in case["setup_facts"]:
            rest = _fold(fact)
            for f in case["must_not_contain"]:
                rest = rest.replace(_fold(f), "\0")
            survivors.append(rest)
    for m in case["must_contain"]:
        assert any(_fold(m) in _fold(s) for s in survivors), f"{m!r} survives nowhere"
        for f in case["must_not_contain"]:
            assert _fold(f) not in _fold(m)

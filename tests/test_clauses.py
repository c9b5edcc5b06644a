"""Clause splitting: compound facts become separate, self-standing clauses."""

from __future__ import annotations

import pytest

from unrecall.recall.clauses import split_clauses


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        (
            "Henry's phone is 415-555-0199 and his email is henry@x.org",
            ["Henry's phone is 415-555-0199", "Henry's email is henry@x.org"],
        ),
        (
            "User lives in Berlin and works at Stripe",
            ["User lives in Berlin", "User works at Stripe"],
        ),
        (
            "Alice works at Acme but she lives in Oslo",
            ["Alice works at Acme", "Alice lives in Oslo"],
        ),
        ("She is a nurse; her husband is a pilot", ["She is a nurse", "her husband is a pilot"]),
    ],
)
def test_compound_statements_split(text: str, clauses: list[str]) -> None:
    assert split_clauses(text) == clauses


@pytest.mark.parametrize(
    "text",
    ["I like salt and pepper", "Tom and Jerry are friends", "My email is a@b.io.", "Chrome"],
)
def test_single_facts_stay_whole(text: str) -> None:
    assert split_clauses(text) == [text]

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
        (
            "Lorenzo changed jobs and now works for Fjordline",
            ["Lorenzo changed jobs", "Lorenzo now works for Fjordline"],
        ),
        # lowercase chat after a number: forgetting the first code must not
        # take the second with it
        (
            "padlock on the tank is 3814. the key safe is 1438.",
            ["padlock on the tank is 3814.", "the key safe is 1438."],
        ),
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


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        (
            "I drive a blue Golf and I park it in bay 17 at work",
            ["I drive a blue Golf", "I park the blue Golf in bay 17 at work"],
        ),
        (
            "My therapist is Dr. Hallworth and I see him on Thursdays",
            ["My therapist is Dr. Hallworth", "I see Dr. Hallworth on Thursdays"],
        ),
        (
            "The storage unit is number 118 and the access code is 7392",
            ["The storage unit is number 118", "The storage unit's access code is 7392"],
        ),
        (
            "My bike lock code is 3-9-1 and the bike is a grey Brompton",
            ["My bike lock code is 3-9-1", "the bike is a grey Brompton"],
        ),
    ],
)
def test_split_clauses_name_what_they_lean_on(text: str, clauses: list[str]) -> None:
    assert split_clauses(text) == clauses


@pytest.mark.parametrize(
    "text, clauses",
    [
        # a day's ordinal dot before a month name does not end a sentence
        ("Nächste Kontrolle am 19. Mai. Bin raus.", ["Nächste Kontrolle am 19. Mai.", "Bin raus."]),
        ("Ab 1. Januar fängt Dariusz an.", ["Ab 1. Januar fängt Dariusz an."]),
        # nor does the last dot of a dotted date before a lowercase word
        ("Di 11.11. um 9:30 TÜV. Danach frei.", ["Di 11.11. um 9:30 TÜV.", "Danach frei."]),
    ],
)
def test_dotted_dates_stay_in_their_sentence(text: str, clauses: list[str]) -> None:
    assert split_clauses(text) == clauses


@pytest.mark.parametrize(
    "text, clauses",
    [
        (
            "Had coffee with Mateo Mendes; Calloway Systems keeps him busy running design.",
            [
                "Had coffee with Mateo Mendes",
                "Calloway Systems keeps Mateo Mendes busy running design.",
            ],
        ),
        ("I met the new plumber and I like him", ["I met the new plumber", "I like him"]),
        (  # the subject's owner, not the place in the object
            "Arjun's address is 73 Alder Road; never share it, his ex is looking for him.",
            [  # (the comma before "his" starts a clause; "never share it" leans back)
                "Arjun's address is 73 Alder Road; never share it",
                "Arjun's ex is looking for Arjun.",
            ],
        ),
    ],
)
def test_him_stands_for_the_name_in_the_object_only(text: str, clauses: list[str]) -> None:
    # it had become "Calloway Systems keeps coffee with Mateo Mendes busy"
    assert split_clauses(text) == clauses


@pytest.mark.parametrize(
    "text",
    [
        # the second clause qualifies a negated first one, or "it" is the
        # event the first one told, or a pronoun has no thing in the first
        # clause to stand for: forgetting one without the other would leave
        # a false qualifier or a clause that means nothing alone
        "Valentina: I went to the night market on Friday and my kids adored it",
        "Tomasz has no kayak and has never paddled one",
        "Ines never went to Kyoto and never plans to go there",
        "I tried the climbing gym on Friday and it was exhausting",
        "Our flat has no dishwasher and we never wanted one",
    ],
)
def test_a_clause_that_leans_back_stays_with_its_antecedent(text: str) -> None:
    assert split_clauses(text) == [text]


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        (  # verbs from the English lexicon, not a hand list
            "Odile restores antique clocks and resides in Lyon",
            ["Odile restores antique clocks", "Odile resides in Lyon"],
        ),
        (
            "User practices kendo weekly and manages a bakery in Ghent",
            ["User practices kendo weekly", "User manages a bakery in Ghent"],
        ),
        (  # the speaker label is every clause's context
            "Bartholomew: I adopted a greyhound in June and my sister moved to Quebec",
            [
                "Bartholomew: I adopted a greyhound in June",
                "Bartholomew: my sister moved to Quebec",
            ],
        ),
        (  # "he" after "I" is someone else, never "I"
            "I met Tariq at the gallery and he paints murals",
            ["I met Tariq at the gallery", "he paints murals"],
        ),
    ],
)
def test_clauses_keep_their_subject_and_speaker(text: str, clauses: list[str]) -> None:
    assert split_clauses(text) == clauses

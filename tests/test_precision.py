"""Issue #3 precision through the public API: identifiers in any surface form,
names across scripts, clause-level memories and entity-scoped forgetting."""

from __future__ import annotations

import pytest
from helpers import verified_clean

from unrecall import Memory


def texts(mem: Memory, user: str = "u") -> list[str]:
    return [m.text for m in mem.get_all(user_id=user)]


def blob(mem: Memory, query: str, k: int = 5) -> str:
    return " | ".join(h.text for h in mem.search(query, user_id="u", k=k)).casefold()


@pytest.mark.parametrize(
    ("stored", "query", "lookalike"),
    [
        ("My email is alice@acme.io", "ALICE @ Acme.IO", "Bob's email is alice.smith@acme.io"),
        ("Reach me at alice+promo@acme.io", '"alice@acme.io"', "Also malice@acme.io exists"),
        ("My cell is (415) 555-0132", "+1 415.555.0132", "Office line (415) 555-0133"),
        ("Card on file 4111 1111 1111 1111", "4111-1111-1111-1111", "Old card 4012888888881881"),
        (
            "IBAN DE89 3704 0044 0532 0130 00",
            "de89370400440532013000",
            "IBAN GB82WEST12345698765432",
        ),
        ("Ticket TKT-100 is open", "tkt 100", "Ticket TKT-1000 is open"),
        ("Config lives in /etc/app/conf", "/etc/app/conf/", "Backup in /etc/app/conf.bak"),
        ("My site is example.com", "EXAMPLE.COM", "Her site is example.com.uk"),
        ("Follow me at @alice_w", "alice_w", "Follow @alice_wu too"),
    ],
)
def test_purge_any_surface_form_keeps_lookalikes(
    fast_mem: Memory, stored: str, query: str, lookalike: str
) -> None:
    fast_mem.add(stored, user_id="u")
    fast_mem.add(lookalike, user_id="u")
    report = fast_mem.purge(query, user_id="u")
    assert report.count == 1 and report.match == "identifier"
    assert texts(fast_mem) == [lookalike]
    assert verified_clean(fast_mem, [stored])


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("王小明 lives in Shanghai", "Wang Xiaoming"),
        ("Zoya Ivanova lives in Kazan", "Зоя Иванова"),
        ("김민준 is my dentist", "Kim Minjun"),
        ("Ελένη Παππά teaches piano", "Eleni Pappa"),
        ("José Núñez fixed the roof", "Jose Nunez"),
    ],
)
def test_names_match_across_scripts(mem: Memory, stored: str, query: str) -> None:
    mem.add(stored, user_id="u")
    mem.add("Maria Lopez lives in Quito", user_id="u")
    assert stored.casefold() in blob(mem, query, 1)
    report = mem.purge(query, user_id="u")
    assert report.match == "entity" and report.count == 1
    assert texts(mem) == ["Maria Lopez lives in Quito"]


def test_entity_forget_keeps_shared_attributes_and_lookalike_words(fast_mem: Memory) -> None:
    for text in [
        "Frank lives in Lisbon",
        "Frank works at Globex",
        "Grace lives in Lisbon",
        "Grace works at Globex",
        "We had a frank discussion about budgets",
    ]:
        fast_mem.add(text, user_id="u")
    report = fast_mem.purge("everything about Frank", user_id="u")
    assert report.match == "entity" and report.count == 2
    assert texts(fast_mem) == [
        "Grace lives in Lisbon",
        "Grace works at Globex",
        "We had a frank discussion about budgets",
    ]


def test_compound_fact_loses_only_the_targeted_clause(mem: Memory) -> None:
    mem.add("Henry's phone is 415-555-0199 and his email is henry@example.org", user_id="u")
    report = mem.purge("415-555-0199", user_id="u")
    assert report.count == 1
    assert texts(mem) == ["Henry's email is henry@example.org"]
    assert "henry@example.org" in blob(mem, "What is Henry's email?")
    assert verified_clean(mem, ["415-555-0199"])
    # the source turn was redacted to what survives, not deleted
    (turn,) = mem.export(user_id="u")["turns"]
    assert turn["text"] == "Henry's email is henry@example.org"


def test_compound_fact_supersede_keeps_the_other_clause(mem: Memory) -> None:
    mem.add("User lives in Berlin and works at Stripe", user_id="u")
    mem.supersede("Berlin", "User lives in Munich", user_id="u")
    assert "stripe" in blob(mem, "Where does the user work?")
    assert "berlin" not in blob(mem, "Where does the user live?")
    assert "munich" in blob(mem, "Where does the user live?")


def test_paraphrased_supersede_reports_its_decision(mem: Memory) -> None:
    for text in ["I work as a nurse at St Mary's hospital", "I have two cats", "I live in Leeds"]:
        mem.add(text, user_id="u")
    report = mem.supersede("my job", "Now employed as a data analyst at Monzo", user_id="u")
    assert report.match == "semantic" and report.count == 1
    assert mem.get(report.ids[0], user_id="u").text.startswith("I work as a nurse")
    assert report.detail["taken"] == 1 and report.detail["top"] > report.detail["second"]
    assert "nurse" not in blob(mem, "What is my job?")


def test_unrelated_query_supersedes_nothing_even_with_a_similar_new_value(mem: Memory) -> None:
    mem.add("I like jazz", user_id="u")
    report = mem.supersede("zzqqxx", "I like rock", user_id="u")
    assert report.match == "none" and report.detail["taken"] == 0
    assert sorted(texts(mem)) == ["I like jazz", "I like rock"]


def test_latest_dated_state_wins_a_supersede(mem: Memory) -> None:
    mem.add("Since March 2023 I live in Porto", user_id="u")
    report = mem.supersede("where I live", "In 2019 I lived in Lyon", user_id="u")
    assert report.match == "older" and report.ids == []
    assert texts(mem) == ["Since March 2023 I live in Porto"]
    (old,) = mem.get_all(user_id="u", states=("superseded",))
    assert old.text == "In 2019 I lived in Lyon"
    report = mem.supersede("where I live", "Since 2025 I live in Oslo", user_id="u")
    assert report.count == 1
    assert texts(mem) == ["Since 2025 I live in Oslo"]


def test_recursive_chain_keeps_only_the_final_state(mem: Memory) -> None:
    mem.add("My browser is Chrome", user_id="u")
    mem.supersede("Chrome", "My browser is Brave", user_id="u")
    mem.supersede("Brave", "My browser is Chrome again", user_id="u")
    assert "brave" not in blob(mem, "which browser?")
    assert "brave" not in blob(mem, "Brave")
    assert texts(mem) == ["My browser is Chrome again"]


def test_everything_about_a_subject_reaches_only_it(fast_mem: Memory) -> None:
    for text in [
        "My dog is named Rocket",
        "My neighbour Ola's cat is named Rocket",
        "My dog eats grain-free food",
        "My Steam password is Orchid#55",
        "My Origin password is Orchid#55",
    ]:
        fast_mem.add(text, user_id="u")
    assert fast_mem.purge("everything about my dog", user_id="u").count == 2
    assert fast_mem.purge("everything about my Steam account", user_id="u").count == 1
    assert texts(fast_mem) == [
        "My neighbour Ola's cat is named Rocket",
        "My Origin password is Orchid#55",
    ]


def test_a_name_inside_a_descriptive_query_targets_its_memories(fast_mem: Memory) -> None:
    fast_mem.add("My dentist is Dr. Moss and my optician is Clearview", user_id="u")
    report = fast_mem.purge("dentist Dr. Moss", user_id="u")
    assert report.match == "entity" and report.count == 1
    assert texts(fast_mem) == ["my optician is Clearview"]

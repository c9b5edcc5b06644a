"""Long texts (issue #12, defect 9): far past the default 32,000-character
limit, a text splits, indexes, recalls, purges and forgets as a short one
does. Timings are in ``bench/long_text.py``; these tests check results only.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import verified_clean

from unrecall import Memory
from unrecall.errors import InvalidInput
from unrecall.memory import DEFAULT_MAX_CHARS
from unrecall.recall.clauses import split_clauses
from unrecall.recall.entities import EntityGraph

LONG = 150_000
FIRST = "Aisha Bruno Carla Dmitri Elena Farid Greta Hugo Ines Jonas Kenji Lina".split()
LAST = "Abbott Costa Dubois Eriksen Fischer Garcia Haddad Ito Jansen Kapoor".split()
PLACES = "Lisbon Porto Lyon Utrecht Vienna Krakow Bergen Leeds Osaka Quito".split()
NEEDLE_START = "The orchard behind Calloway Farm has forty-one quince trees."
NEEDLE_MIDDLE = "Marisol Ventana keeps her kayak at pier 17 of the Halloran marina."
NEEDLE_END = "Verolin Quastry showed me the heron tattoo on her left ankle at the ferry."


def _sentence(rng: random.Random) -> str:
    p = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    place, n = rng.choice(PLACES), rng.randint(2, 99)
    return rng.choice(
        [
            f"On Monday I met {p} in {place} for lunch.",
            f"{p} gave me the address {p.split()[0].lower()}{n}@example.org for the club.",
            f"My order ORD-{rng.randint(10000, 99999)} from {place} arrived and cost {n} euros.",
            f"The train to {place} left {n} minutes late, so I read a novel.",
            f"{rng.choice(FIRST)}'s phone number is +351 9{n:02d} 215 {rng.randint(100, 999)}.",
            f"Dr. {rng.choice(LAST)} moved my appointment to Friday at 9:30.",
            f"It was a quiet evening and I felt calm after the walk with {p}.",
        ]
    )


def journal(chars: int, seed: int = 12) -> str:
    """About ``chars`` characters of prose in paragraphs, with the three
    needles at its start, middle and end."""
    rng = random.Random(seed)
    out = [NEEDLE_START + " "]
    size = len(out[0])
    while size < chars - 2 * 80:
        s = _sentence(rng)
        if NEEDLE_MIDDLE not in out and size >= chars // 2:
            s = NEEDLE_MIDDLE
        out.append(s + ("\n\n" if rng.random() < 0.2 else " "))
        size += len(out[-1])
    out.append(NEEDLE_END)
    return "".join(out)


@pytest.fixture
def long_mem(store_location: str) -> Iterator[Memory]:
    with Memory(store_location, embedder="hashing", max_text_chars=LONG + 1_000) as m:
        yield m


def test_the_limit_is_configurable(tmp_path: Path) -> None:
    text = journal(DEFAULT_MAX_CHARS + 500)
    assert DEFAULT_MAX_CHARS == 32_000
    with (
        Memory(tmp_path / "a.db", embedder="hashing") as mem,
        pytest.raises(InvalidInput, match="the limit is 32000"),
    ):
        mem.add(text, user_id="u")
    with Memory(tmp_path / "b.db", embedder="hashing", max_text_chars=len(text)) as mem:
        assert mem.add(text, user_id="u").ids


def test_a_long_text_splits_indexes_and_recalls(long_mem: Memory) -> None:
    text = journal(LONG)
    report = long_mem.add(text, user_id="u")
    clauses = [c for c in split_clauses(text) if not c.endswith("?")]
    assert len(report.ids) == len(clauses) > 1000
    stored = {m.text for m in long_mem.get_all(user_id="u")}
    assert {NEEDLE_START, NEEDLE_MIDDLE, NEEDLE_END} <= stored
    for query, needle in (
        ("quince trees orchard", NEEDLE_START),
        ("Marisol kayak marina", NEEDLE_MIDDLE),
        ("heron tattoo ankle", NEEDLE_END),
    ):
        for mode in ("hybrid", "lexical"):
            hits = long_mem.search(query, user_id="u", k=3, mode=mode)
            assert hits and hits[0].text == needle, (query, mode)


def test_a_phrase_near_the_end_is_purged_everywhere(long_mem: Memory) -> None:
    text = journal(LONG)
    n = len(long_mem.add(text, user_id="u").ids)
    report = long_mem.purge("heron tattoo on her left ankle", user_id="u")
    assert report.match == "phrase" and len(report.ids) == 1 and report.turns_removed == 1
    left = long_mem.get_all(user_id="u")
    assert len(left) == n - 1
    assert NEEDLE_END not in {m.text for m in left}
    (turn,) = long_mem.export(user_id="u")["turns"]
    assert "heron" not in turn["text"] and NEEDLE_MIDDLE in turn["text"]
    assert verified_clean(long_mem, ["heron tattoo", "Verolin"])
    assert long_mem.search("Marisol kayak marina", user_id="u", k=1)[0].text == NEEDLE_MIDDLE


def test_deleting_the_long_source_turn_takes_every_memory(long_mem: Memory) -> None:
    report = long_mem.add(journal(LONG), user_id="u")
    (turn,) = report.detail["turns"]
    gone = long_mem.delete(turn, user_id="u")
    assert sorted(gone.ids) == sorted(report.ids)
    assert long_mem.get_all(user_id="u") == []
    assert verified_clean(long_mem, ["Marisol", "quince"])


def test_a_fact_of_a_long_text_is_forgotten(store_location: str) -> None:
    text = journal(60_000)
    with Memory(store_location, embedder="hashing", max_text_chars=len(text)) as mem:
        mem.add(text, user_id="u")
        report = mem.forget("forget that Verolin Quastry has a heron tattoo", user_id="u")
        assert report.turns_removed == 1
        assert mem.get_all(user_id="u") == []  # the one source turn goes with closure
        assert verified_clean(mem, ["heron tattoo"])


def test_a_long_unpunctuated_message_is_stored_not_taken_for_a_request(
    long_mem: Memory,
) -> None:
    """A transcript without sentence ends, full of "my" and "i don't": the
    shapes whose request rules scanned to the end from every start."""
    rng = random.Random(3)
    words = "my mum said i don't know but our dog and my sister were calling".split()
    talk = " ".join(rng.choice(words) for _ in range(20_000)) + " and the kayak is blue"
    report = long_mem.add([{"role": "user", "content": talk}], user_id="u", session_id="s")
    assert report.requests == [] and len(report.ids) == 1
    assert long_mem.search("kayak blue", user_id="u", k=1)[0].text == talk


def test_a_long_message_ending_in_a_request_is_one() -> None:
    """The request rules still find a request at the end of a long turn."""
    from unrecall.dialogue.requests import detect

    turn = journal(40_000) + " Oh and make sure my locker code isn't stored anywhere."
    found = detect(turn)
    assert found is not None and found.kind != "replacement"
    assert "locker code" in found.target


def test_the_graph_of_one_long_memory_has_every_co_mention() -> None:
    names = [f"{a} {b}" for a in FIRST for b in LAST]  # 120 people in one text
    text = "Yesterday " + ", ".join(names) + " all came to the party in Porto."
    graph = EntityGraph.build([(1, text)])
    people = {k for k in graph.entities_of[1] if " " in k}
    assert len(people) == len(names)
    assert len(graph.edges) == len(graph.entities_of[1]) * (len(graph.entities_of[1]) - 1) // 2
    assert all(ids == {1} for ids in graph.edges.values())

"""Names across scripts, spellings and part order."""

from __future__ import annotations

import pytest

from unrecall.recall.names import mentions, name_keys


def full(text: str) -> set[str]:
    return {k for k in name_keys(text) if k.startswith("name:")}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("王小明", "Wang Xiaoming"),
        ("王小明", "Xiaoming Wang"),
        ("Зоя Иванова", "Zoya Ivanova"),
        ("김민준", "Kim Minjun"),
        ("이서연", "Lee Seoyeon"),
        ("Ελένη Παππά", "Eleni Pappa"),
        ("José Núñez", "Jose Nunez"),
        ("JOSÉ Núñez", "jose-nunez".title()),
        ("Müller", "Mueller"),
        ("Đỗ Văn Nam", "Do Van Nam"),
    ],
)
def test_same_person_across_scripts(a: str, b: str) -> None:
    assert full(f"I met {a} at noon") & full(f"I met {b} at noon")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Zoya Ivanova", "Zoya Ivanov"),
        ("Wang Xiaoming", "Wang Xiaoling"),
        ("Kim Minjun", "Kim Minji"),
    ],
)
def test_different_people_do_not_share_a_full_name_key(a: str, b: str) -> None:
    assert not full(f"call {a} later") & full(f"call {b} later")


def test_lowercase_words_are_not_names() -> None:
    assert name_keys("we had a frank discussion about a charlie horse") == set()
    assert "part:frank" in name_keys("Frank moved to Oslo")


def test_sentence_furniture_is_not_a_name() -> None:
    assert name_keys("My phone is new. The end. I think so.") == set()


def test_parts_let_a_first_name_find_the_full_name() -> None:
    assert "part:zoya" in name_keys("Zoya Ivanova lives in Berlin")
    parts = {m.parts for m in mentions("Yesterday Zoya Ivanova called. Then Zoya left")}
    assert ("zoya", "ivanova") in parts
    assert ("zoya",) in parts

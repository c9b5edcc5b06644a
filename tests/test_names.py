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


@pytest.mark.parametrize(
    ("stored", "query", "same"),
    [
        ("يوسف الحداد is my barber", "Youssef Al-Haddad", True),
        ("يوسف النجار is my neighbour", "Youssef Al-Haddad", False),
        ("נועה כהן is my physio", "Noa Cohen", True),
        ("נועה לוי is my colleague", "Noa Cohen", False),
        ("अर्जुन शर्मा is my coach", "Arjun Sharma", True),
        ("अर्जुन वर्मा is my electrician", "Arjun Sharma", False),
        ("สมชาย ใจดี is my trainer", "Somchai Jaidee", True),
        ("สมศรี ใจดี is my teacher", "Somchai Jaidee", False),
        ("Miloš Jovanović is my dentist", "Милош Јовановић", True),
        ("Miloš Petrović is my instructor", "Милош Јовановић", False),
        ("interview with 星河科技 on Monday", "Xinghe Technology", True),
        ("interview with 星光科技 on Friday", "Xinghe Technology", False),
        ("My car insurance is with Северный Щит", "Severny Shchit", True),
        ("My home insurance is with Южный Щит", "Severny Shchit", False),
        ("Park Jiwoo's birthday", "박지우", True),
        ("Park Jihoon's birthday", "박지우", False),
        # Japanese names in kanji, by their Japanese reading, long vowels or not
        ("患者 鈴木一郎 の予約", "Suzuki Ichiro", True),
        ("Appointment for 鈴木一郎 on Friday", "Ichirou Suzuki", True),
        ("Appointment for 鈴木次郎 on Friday", "Suzuki Ichiro", False),
        ("伊藤博文 wrote the memo", "Hirobumi Ito", True),
    ],
)
def test_requests_reach_names_in_other_scripts(stored: str, query: str, same: bool) -> None:
    from unrecall.control.targeting import entity_query

    assert bool(name_keys(stored) & entity_query(query).keys) is same


def test_stored_latin_names_carry_no_skeleton() -> None:
    # two Latin spellings with one consonant skeleton are usually two people
    assert not any(k.startswith("skel:") for k in name_keys("Ana Lee met Ann Lu"))


def test_a_han_name_not_read_as_japanese_keeps_only_its_chinese_reading() -> None:
    # 王小明 is no Japanese person's name: no "ou shoumei"-like keys for it
    assert full("I met 王小明 at noon") == {"name:wangxiaoming", "name:xiaomingwang"}

"""Topic categories from lexicons."""

from __future__ import annotations

from unrecall.recall.categories import categories, register


def test_categories_of_personal_facts() -> None:
    assert categories("my employer") == {"work"}
    assert "work" in categories("I started working at Dovetail Design")
    assert "health" in categories("my GP changed")
    assert "credentials" in categories("My bank PIN is 4471")
    assert categories("zzqqxx") == set()


def test_register_extends_a_category() -> None:
    assert "pets" not in categories("the puppy chewed my shoe")
    register("pets", {"puppy", "kitten", "dog", "cat"})
    assert "pets" in categories("the puppy chewed my shoe")

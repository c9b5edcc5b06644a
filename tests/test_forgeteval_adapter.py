"""The ForgetEval Adapter Protocol over unrecall."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from unrecall.bench.forgeteval import UnrecallAdapter


@pytest.fixture
def adapter() -> Iterator[UnrecallAdapter]:
    a = UnrecallAdapter()
    yield a
    a.close()


def blob(adapter: UnrecallAdapter, q: str, k: int = 5) -> str:
    return " | ".join(adapter.recall_texts(q, k)).casefold()


def test_inscribe_and_recall(adapter: UnrecallAdapter) -> None:
    adapter.inscribe("Dana works as a nurse in Leeds")
    adapter.inscribe("Dana's favourite colour is teal")
    assert "nurse" in blob(adapter, "What is Dana's job?", 1)


def test_supersede_release_purge(adapter: UnrecallAdapter) -> None:
    adapter.inscribe("The user uses Chrome as their browser")
    adapter.inscribe("The user's backup email is kim@mail.io")
    adapter.inscribe("Kim's sister uses kim.lee@mail.io")
    adapter.inscribe("The one-time code is 553311")
    adapter.supersede("Chrome", "The user uses Brave as their browser")
    adapter.supersede("Brave", "The user uses Chrome as their browser again")
    b = blob(adapter, "browser")
    assert "chrome" in b and "brave" not in b
    assert adapter.release("one-time code") == 1
    assert "553311" not in blob(adapter, "553311")
    assert adapter.purge("kim@mail.io") == 1
    assert "kim@mail.io" not in blob(adapter, "kim@mail.io")
    assert "kim.lee@mail.io" in blob(adapter, "kim.lee@mail.io")


def test_reset_gives_an_empty_store(adapter: UnrecallAdapter) -> None:
    adapter.inscribe("A fact to lose on reset")
    adapter.reset()
    assert adapter.recall_texts("fact", 5) == []

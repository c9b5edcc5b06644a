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


def test_reset_isolates_the_next_case(adapter: UnrecallAdapter) -> None:
    adapter.inscribe("Robin's locker code is 8841")
    adapter.inscribe("Robin's email is robin@acme.io")
    first = adapter.user
    path = adapter.memory.storage.path
    adapter.reset()
    # the same store, a new tenant that sees nothing of the previous case
    assert adapter.memory.storage.path == path and adapter.user != first
    assert adapter.recall_texts("locker code", 5) == []
    assert adapter.recall_texts("robin@acme.io", 5) == []
    adapter.inscribe("Robin's locker code is 1234")
    assert adapter.purge("locker code") == 1
    assert adapter.recall_texts("locker code", 5) == []
    # ... and forgetting in this case left the previous one alone
    assert len(adapter.memory.get_all(user_id=first)) == 2
    adapter.close()
    assert not path.exists()


def test_store_per_case_opens_a_new_file_each_reset() -> None:
    a = UnrecallAdapter(store_per_case=True)
    try:
        a.inscribe("A fact to lose on reset")
        old = a.memory.storage.path
        a.reset()
        assert a.memory.storage.path != old and not old.exists()
        assert a.recall_texts("fact", 5) == []
    finally:
        a.close()

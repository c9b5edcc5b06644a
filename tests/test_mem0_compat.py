"""``unrecall.compat.mem0.Memory``: Mem0 OSS's quickstart runs unchanged but
for the import, with Mem0's return shapes, and forgetting stays unrecall's:
a forget request in ``add`` is a DELETE whose text is gone from the file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import is_postgres, verified_clean

from unrecall import Memory as UnrecallMemory
from unrecall.compat.mem0 import Memory, MemoryNotFound
from unrecall.errors import InvalidInput, NotFound

MOVIES = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {
        "role": "assistant",
        "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the "
        "future.",
    },
]
ITEM_KEYS = {"id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id"}


@pytest.fixture
def store(store_location: str) -> Iterator[Memory]:
    m = Memory.from_config({"path": store_location, "embedder": "hashing"})
    yield m
    m.close()


def _check_item(item: dict, *, search: bool = False) -> None:
    assert set(item) >= ITEM_KEYS
    assert isinstance(item["id"], str) and isinstance(item["memory"], str) and item["memory"]
    assert isinstance(item["created_at"], str) and isinstance(item["updated_at"], str)
    assert item["metadata"] is None or isinstance(item["metadata"], dict)
    if search:
        assert isinstance(item["score"], float)


# unrecall.memory.default_path() makes $UNRECALL_DB a Path, which folds the
# URL's "//": Memory() then opens a SQLite file under ./postgresql:/... instead.


def test_quickstart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_location: str) -> None:
    # Mem0's OSS quickstart, unchanged but for the import; the default store
    # is unrecall's default_path(), here pointed at this test's store.
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # a relative file the default store must not become
    monkeypatch.setenv("UNRECALL_DB", store_location)
    m = Memory()
    assert is_postgres(m.unrecall) == ("://" in store_location)
    assert list(work.iterdir()) == []

    result = m.add(MOVIES, user_id="alice", metadata={"category": "movies"})
    assert result["results"] and all(r["event"] == "ADD" for r in result["results"])
    assert {"id", "memory", "event"} <= set(result["results"][0])
    assert any("sci-fi" in r["memory"] for r in result["results"])

    related = m.search("What movies does alice like?", user_id="alice")
    assert related["results"]
    for item in related["results"]:
        _check_item(item, search=True)
        assert item["user_id"] == "alice"
        assert item["metadata"] == {"category": "movies"}

    all_memories = m.get_all(user_id="alice")
    assert len(all_memories["results"]) == len(result["results"])
    for item in all_memories["results"]:
        _check_item(item)
    memory_id = all_memories["results"][0]["id"]

    assert m.get(memory_id)["id"] == memory_id
    assert m.update(memory_id=memory_id, data="Likes to play cricket on weekends") == {
        "message": "Memory updated successfully!"
    }
    assert m.get(memory_id)["memory"] == "Likes to play cricket on weekends"
    history = m.history(memory_id=memory_id)
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert all(h["old_memory"] is None and h["new_memory"] is None for h in history)

    assert m.delete(memory_id=memory_id)["message"] == "Memory deleted successfully!"
    assert m.get(memory_id) is None
    assert m.history(memory_id=memory_id)[-1]["event"] == "DELETE"
    assert m.delete_all(user_id="alice")["message"] == "Memories deleted successfully!"
    assert m.get_all(user_id="alice") == {"results": []}
    m.add("I live in Lisbon.", user_id="bob")
    m.reset()
    assert m.get_all(user_id="bob") == {"results": []}
    assert m.unrecall.storage.tenant_keys() == {}
    m.close()
    if "://" not in store_location:
        assert Path(store_location).exists()


def test_readme_chat_loop(store: Memory) -> None:
    # The README's chat_with_memories, the OpenAI call replaced by a canned reply.
    memory = store

    def chat_with_memories(message: str, user_id: str = "default_user") -> str:
        relevant_memories = memory.search(query=message, filters={"user_id": user_id}, top_k=3)
        memories_str = "\n".join(f"- {entry['memory']}" for entry in relevant_memories["results"])
        system_prompt = f"You are a helpful AI.\nUser Memories:\n{memories_str}"
        messages = [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": message},
        ]
        assistant_response = "Noted."
        messages.append({"role": "assistant", "content": assistant_response})
        memory.add(messages, user_id=user_id)
        return memories_str

    chat_with_memories("My favourite city is Porto and I cycle to work.")
    recalled = chat_with_memories("Which city is my favourite city?")
    assert "Porto" in recalled
    stored = store.get_all(filters={"user_id": "default_user"}, top_k=20)["results"]
    assert not any("helpful AI" in r["memory"] for r in stored)  # system prompts are not memories


def test_forget_request_in_add_is_delete(store: Memory) -> None:
    added = store.add("My passport number is X9K4411Q.", user_id="alice")["results"]
    (kept,) = store.add("I work as a nurse in Leeds.", user_id="alice")["results"]
    result = store.add(
        [{"role": "user", "content": "Please forget my passport number."}], user_id="alice"
    )
    deleted = [r for r in result["results"] if r["event"] == "DELETE"]
    assert [r["id"] for r in deleted] == [added[0]["id"]]
    assert deleted[0]["memory"] == ""
    assert "X9K4411Q" not in json.dumps(result)
    assert store.get(added[0]["id"]) is None
    assert store.get(kept["id"])["memory"] == "I work as a nurse in Leeds."
    assert verified_clean(store.unrecall, ["X9K4411Q"])
    assert store.history(added[0]["id"])[-1]["is_deleted"] is True
    assert "X9K4411Q" not in json.dumps(store.history(added[0]["id"]))


def test_infer_false_stores_requests_as_given(store: Memory) -> None:
    store.add("My locker code is 4471.", user_id="alice")
    result = store.add(
        [{"role": "user", "content": "Please forget my locker code."}], user_id="alice", infer=False
    )
    assert [r["event"] for r in result["results"]] == ["ADD"]
    assert len(store.get_all(user_id="alice")["results"]) == 2


def test_search_threshold(store_location: str) -> None:
    # Mem0's local vector stores take a directory, which holds the file; a
    # database URL is taken as it is
    where = store_location if "://" in store_location else str(Path(store_location).parent)
    with Memory.from_config({"vector_store": {"config": {"path": where}}}) as m:
        m.add(MOVIES, user_id="alice")
        # nothing stored is about physics: the default threshold returns nothing
        assert m.search("quantum chromodynamics lecture schedule", user_id="alice") == {
            "results": []
        }
        assert m.search("What movies does alice like?", user_id="alice", threshold=0.95) == {
            "results": []
        }
        every = m.search("What movies does alice like?", user_id="alice", threshold=None)
        assert len(every["results"]) == 2
        kept = m.search("sci-fi movies", user_id="alice", threshold=0.3)["results"]
        assert kept and all(r["score"] >= 0.3 for r in kept)
        assert "sci-fi" in kept[0]["memory"]
    if "://" not in store_location:
        assert (Path(where) / "memory.db").exists()  # a vector_store directory holds the file


def test_config_shapes(tmp_path: Path, store_location: str) -> None:
    config = {
        "llm": {"provider": "openai", "config": {"model": "gpt-5-mini", "api_key": "unused"}},
        "embedder": {"provider": "unrecall", "config": {"model": "hashing"}},
        "vector_store": {"provider": "qdrant", "config": {"path": store_location}},
        "history_db_path": str(tmp_path / "history.db"),
    }
    with Memory.from_config(config) as m:
        assert m.unrecall.embedder.name.startswith("hashing")
        m.add("I like tea.", user_id="u")
    if "://" not in store_location:
        assert Path(store_location).exists()
    assert not (tmp_path / "history.db").exists()
    # the store the vector_store path names is the one written
    with UnrecallMemory(store_location, embedder="hashing") as again:
        assert [i.text for i in again.get_all(user_id="u")] == ["I like tea."]
    with pytest.raises(InvalidInput):
        Memory("not a config")  # type: ignore[arg-type]


def test_ids_find_their_tenant_only(store: Memory) -> None:
    (a,) = store.add("I own a red bicycle.", user_id="alice", infer=False)["results"]
    (b,) = store.add("I own a green kayak.", user_id="bob", infer=False)["results"]
    assert store.get(b["id"])["user_id"] == "bob"
    assert store.get(b["id"], user_id="alice") is None
    assert [r["id"] for r in store.get_all(user_id="alice")["results"]] == [a["id"]]
    assert store.search("kayak", user_id="alice", threshold=None)["results"][0]["id"] == a["id"]
    with pytest.raises(MemoryNotFound):
        store.delete(b["id"], user_id="alice")
    with pytest.raises(MemoryNotFound):
        store.update(b["id"], "I own a blue kayak.", user_id="alice")
    assert store.get(b["id"])["memory"] == "I own a green kayak."
    store.delete_all(user_id="alice")
    assert store.get(b["id"])["memory"] == "I own a green kayak."


def test_scopes_and_filters(store: Memory) -> None:
    store.add("I run on Mondays.", user_id="alice", run_id="r1", metadata={"topic": "sport"})
    store.add("I swim on Fridays.", user_id="alice", run_id="r2", metadata={"topic": "sport"})
    store.add("I read on Sundays.", user_id="alice", run_id="r2", metadata={"topic": "books"})
    store.add("I am on call.", agent_id="helper", metadata={"user_id": "mallory"})
    assert store.get_all(agent_id="helper")["results"][0].get("user_id") is None
    assert len(store.get_all(filters={"user_id": "alice", "run_id": "r2"})["results"]) == 2
    books = store.get_all(user_id="alice", filters={"topic": {"eq": "books"}})["results"]
    assert [r["memory"] for r in books] == ["I read on Sundays."]
    assert len(store.get_all(user_id="alice", limit=1)["results"]) == 1
    found = store.search("swim", filters={"user_id": "alice", "topic": "sport"}, threshold=None)
    assert {r["memory"] for r in found["results"]} == {"I swim on Fridays.", "I run on Mondays."}
    gone = store.delete_all(user_id="alice", run_id="r2")
    assert len(gone["ids"]) == 2
    assert [r["memory"] for r in store.get_all(user_id="alice")["results"]] == ["I run on Mondays."]


def test_bad_input_is_refused_clearly(store: Memory) -> None:
    secret = "my diary password hunter2"
    cases = [
        lambda: store.add(secret, run_id="r1"),
        lambda: store.add(42, user_id="alice"),  # type: ignore[arg-type]
        lambda: store.add(secret, user_id="alice", memory_type="procedural_memory"),
        lambda: store.search(secret, filters={"user_id": "alice", "tag": {"in": ["a"]}}),
        lambda: store.search(secret, filters={"user_id": "alice", "OR": [{"a": 1}]}),
        lambda: store.search(secret, user_id="alice", top_k=-1),
        lambda: store.search(secret, user_id="alice", filters={"user_id": "bob"}),
        lambda: store.update("m_00000000000000000000", text=secret, metadata={"a": 1}),
        lambda: store.get_all(),
    ]
    for case in cases:
        with pytest.raises(InvalidInput) as err:
            case()
        assert "hunter2" not in str(err.value)
    assert store.get("m_00000000000000000000") is None
    with pytest.raises(ValueError):  # what Mem0 code catches
        store.delete(secret)
    with pytest.raises(NotFound) as err:
        store.update(secret, text="new text")
    assert "hunter2" not in str(err.value)
    assert store.unrecall.storage.tenant_keys() == {}  # nothing was written

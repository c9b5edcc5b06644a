"""``unrecall migrate``: a whole store copied between SQLite and PostgreSQL.

A source with several tenants, memories in every state, a repeated fact,
an update, a purge, an erased tenant and an API key is copied sqlite ->
postgres -> sqlite, postgres -> sqlite -> postgres and sqlite -> sqlite ->
sqlite; each copy must show
exactly what the source shows (exports, memories, searches, histories, the
audit rows verbatim, vectors, BM25 scores over memories and turns), and be
a working store. A destination that holds something is refused untouched,
a copy that fails part way leaves it empty, and the CLI runs end to end.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, new_postgres_url
from helpers import ALL_STATES
from test_cli import run

from unrecall import Memory, StoreError
from unrecall.errors import InvalidInput
from unrecall.interfaces.keys import KeyStore, Tenant
from unrecall.records import ACTIVE, RELEASED, SUPERSEDED
from unrecall.storage import peek_store
from unrecall.storage.migrate import MigrationReport, migrate
from unrecall.storage.sqlite import SQLiteStorage

SCOPES: list[dict[str, str]] = [
    {"user_id": "alice"},
    {"user_id": "bob"},
    {"user_id": "bob", "agent_id": "helper"},
    {"agent_id": "bot"},
]
QUERIES = ["where do I live", "dog", "sister engineer Berlin", "email", "tea", "cello", "Friday"]
T0 = 1_700_000_000.0  # turns said at a given time (an imported conversation)


def _pg_url(request: pytest.FixtureRequest) -> str:
    if "postgres" not in BACKENDS:
        pytest.skip("PostgreSQL is not among $UNRECALL_TEST_BACKENDS")
    return new_postgres_url(request.getfixturevalue("postgres_server"), request)


def _location(kind: str, request: pytest.FixtureRequest, path: Path) -> str:
    """A new store location of a backend: a file path or an empty database."""
    return _pg_url(request) if kind == "postgres" else str(path)


def build(mem: Memory) -> dict[str, Any]:
    """Fill a store with every kind of row; the ids worth checking."""
    lyon, rex = mem.add(
        "I live in Lyon. My dog is called Rex.",
        user_id="alice",
        session_id="s1",
        metadata={"channel": "chat", "n": 1},
        timestamp=T0,
    ).ids
    fact = "sister Ana works at Acme Corp as an engineer in Berlin"
    said = [
        {"role": "user", "content": f"My {fact}"},
        {"role": "assistant", "content": f"Your {fact}"},
    ]
    sister = mem.add(said, user_id="alice", session_id="s2", timestamp=T0 + 10).ids[0]
    porto = mem.supersede(lyon, "I live in Porto", user_id="alice").created[0]
    locker = mem.add("My locker code is 4417", user_id="alice").ids[0]
    mem.purge(locker, user_id="alice")
    email = mem.add("My email is alice@old.example", user_id="alice").ids[0]
    mem.update(email, "My email is alice@new.example", user_id="alice")
    tea = mem.add("I drink green tea every morning", user_id="alice", ttl=3600).ids[0]
    stamps = mem.add("I collect vintage stamps", user_id="alice").ids[0]
    mem.release(stamps, user_id="alice")
    rex2 = mem.edit(rex, "My dog is called Rex the Second", user_id="alice").created[0]
    mem.add("Bob plays the cello", user_id="bob", agent_id="helper", run_id="r1")
    mem.add("Bob likes hiking in the Alps", user_id="bob", timestamp=T0 + 20)
    mem.add("The deploy window is Friday evening", agent_id="bot")
    mem.add("Carol's badge number is 7781", user_id="carol")
    mem.delete_all(user_id="carol")  # events left under a handle nothing leads to
    _, api_key = KeyStore(mem.storage).create(Tenant.of("alice", None))  # type: ignore[arg-type]
    ids = {
        "lyon": lyon,
        "porto": porto,
        "rex": rex,
        "rex2": rex2,
        "sister": sister,
        "locker": locker,
        "email": email,
        "tea": tea,
        "stamps": stamps,
        "api_key": api_key,
    }
    # the source holds what the copy must keep
    rows = {m.id: m for m in mem.get_all(user_id="alice", states=ALL_STATES)}
    assert {m.state for m in rows.values()} == {ACTIVE, RELEASED, SUPERSEDED}
    assert rows[lyon].superseded_by == porto and rows[rex].superseded_by == rex2
    assert len(rows[sister].sources) == 2  # the assistant's repetition is a second source
    assert rows[tea].expires_at is not None and locker not in rows
    assert [e.op for e in mem.history(locker, user_id="alice")] == ["add", "purge"]
    assert [e.op for e in mem.history(email, user_id="alice")] == ["add", "update"]
    return ids


def _tenant_rows(mem: Memory, key: str) -> tuple[int, dict[int, str], dict[int, str]]:
    """A tenant's id, and its memory and turn uids by internal id."""
    tid = mem.storage.tenant(key, False)
    assert tid is not None
    memories = {r.id: r.uid for r in mem.storage.memories(tid)}
    turns = {t.id: t.uid for t in mem.storage.turns(tid)}
    return tid, memories, turns


def _index(mem: Memory, key: str) -> dict[str, Any]:
    """What the recall indexes hold for a tenant, by public id: every stored
    vector, and the BM25 hits with scores of every digest its texts give,
    over memories and over turns."""
    tid, memories, turns = _tenant_rows(mem, key)
    texts = [r.text for r in mem.storage.memories(tid)] + [t.text for t in mem.storage.turns(tid)]
    digests = sorted({d for t in texts for d in mem.recall.hasher.document(t).split()})
    vectors = mem.storage.embeddings(tid, list(memories))
    hits: dict[str, Any] = {}
    for d in digests:
        lex_m = mem.storage.lexical(tid, [d], 100)
        lex_t = mem.storage.lexical(tid, [d], 100, turns=True)
        hits[d] = (
            [(memories[i], round(s, 9)) for i, s in lex_m],
            [(turns[i], round(s, 9)) for i, s in lex_t],
        )
    return {"vectors": {memories[i]: v for i, v in vectors.items()}, "hits": hits}


def assert_same(a: Memory, b: Memory, ids: dict[str, Any]) -> None:
    """Everything observable about the two stores is equal."""
    assert b.storage.secret_key() == a.storage.secret_key()
    keys_a, keys_b = a.storage.tenant_keys(), b.storage.tenant_keys()
    assert sorted(keys_b.values()) == sorted(keys_a.values())
    handles = {k: a.storage.tenant_handle(t) for t, k in keys_a.items()}
    assert {k: b.storage.tenant_handle(t) for t, k in keys_b.items()} == handles
    for scope in SCOPES:
        assert b.export(**scope) == a.export(**scope)
        all_a = [m.to_dict() for m in a.get_all(states=ALL_STATES, **scope)]
        assert [m.to_dict() for m in b.get_all(states=ALL_STATES, **scope)] == all_a
        for query in QUERIES:
            for mode in ("hybrid", "lexical"):
                found = [h.id for h in a.search(query, mode=mode, k=10, **scope)]
                assert [h.id for h in b.search(query, mode=mode, k=10, **scope)] == found
    assert [h.id for h in a.search("dog", user_id="alice")][:1] == [ids["rex2"]]
    for name in ("lyon", "porto", "rex", "rex2", "sister", "locker", "email", "tea", "stamps"):
        history = a.history(ids[name], user_id="alice")
        assert history and b.history(ids[name], user_id="alice") == history
    assert b.verify_audit().ok and b.verify_audit().events == a.verify_audit().events
    assert list(b.storage.audit_rows()) == list(a.storage.audit_rows())  # verbatim, seq too
    assert b.storage.api_key_rows() == a.storage.api_key_rows()
    assert KeyStore(b.storage).tenant(ids["api_key"]) == Tenant("alice", None)  # type: ignore[arg-type]
    for key in keys_a.values():
        index_a, index_b = _index(a, key), _index(b, key)
        assert index_b["hits"] == index_a["hits"]
        assert index_b["vectors"].keys() == index_a["vectors"].keys()
        for uid, vec in index_a["vectors"].items():
            assert np.array_equal(index_b["vectors"][uid], vec)  # copied, not re-embedded


def assert_works(mem: Memory) -> None:
    """The copy is a store like any other: writes, recalls, forgets, and its
    audit chain goes on from the copied one."""
    last = list(mem.storage.audit_rows())[-1].seq
    new = mem.add("My bike is a red Brompton", user_id="alice").ids[0]
    assert [h.id for h in mem.search("Brompton bike", user_id="alice", mode="lexical")] == [new]
    assert mem.purge(new, user_id="alice").ids == [new]
    assert mem.search("Brompton", user_id="alice", mode="lexical") == []
    stamps = [m for m in mem.get_all(user_id="alice", states=[RELEASED])]
    mem.restore(stamps[0].id, user_id="alice")
    assert stamps[0].id in [h.id for h in mem.search("vintage stamps", user_id="alice")]
    assert [e.op for e in mem.history(new, user_id="alice")] == ["add", "purge"]
    assert [r.seq for r in mem.storage.audit_rows()][-3:] == [last + 1, last + 2, last + 3]
    assert mem.verify_audit().ok


def _sha(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _files(folder: Path) -> list[str]:
    """The names of the source store's files."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("src.db"))


def _expected(mem: Memory) -> MigrationReport:
    """The counts a copy of ``mem`` must report, read from the source."""
    s = mem.storage
    tids = list(s.tenant_keys())
    rows = [r for t in tids for r in s.memories(t)]
    edges = sum(len(v) for v in s.sources([r.id for r in rows]).values())
    return MigrationReport(
        tenants=len(tids),
        turns=sum(len(s.turns(t)) for t in tids),
        memories=len(rows),
        provenance=edges,
        vectors=sum(r.state == ACTIVE for r in rows),
        audit_events=len(list(s.audit_rows())),
        api_keys=1,
        embedder="hashing-v1",
        dim=mem.embedder.dim,
    )


@pytest.mark.parametrize(
    ("first", "other"), [("sqlite", "postgres"), ("postgres", "sqlite"), ("sqlite", "sqlite")]
)
def test_a_store_survives_a_round_trip_between_backends(
    first: str, other: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    src = _location(first, request, tmp_path / "src.db")
    mid = _location(other, request, tmp_path / "mid.db")
    back = _location(first, request, tmp_path / "back.db")
    with Memory(src, embedder="hashing") as mem:
        ids = build(mem)
        expected = _expected(mem)
    before = (_sha(src), _files(tmp_path)) if first == "sqlite" else None
    assert migrate(src, mid) == expected
    assert migrate(mid, f"sqlite://{back}" if first == "sqlite" else back) == expected
    if before is not None:  # the source file was not written, and no sidecar was left
        assert (_sha(src), _files(tmp_path)) == before
    with Memory(src, embedder="hashing") as a:
        for copy in (mid, back):
            with Memory(copy, embedder="hashing") as b:
                assert_same(a, b, ids)
                assert_works(b)


def test_a_non_empty_destination_is_refused_and_left_unchanged(
    tmp_path: Path, store_location: str
) -> None:
    src = str(tmp_path / "src.db")
    with Memory(src, embedder="hashing") as mem:
        mem.add("I live in Lyon", user_id="alice")
    with Memory(store_location, embedder="hashing") as dst:
        dst.add("My cat is called Tom", user_id="dora")
        before = (
            dst.export(user_id="dora"),
            list(dst.storage.audit_rows()),
            dst.storage.secret_key(),
        )
    with pytest.raises(StoreError, match="destination: the store is not empty"):
        migrate(src, store_location)
    with Memory(store_location, embedder="hashing") as dst:
        after = (
            dst.export(user_id="dora"),
            list(dst.storage.audit_rows()),
            dst.storage.secret_key(),
        )
        assert after == before and dst.export(user_id="alice")["memories"] == []


def test_refusals_write_nothing(tmp_path: Path) -> None:
    src = tmp_path / "src.db"
    with Memory(src, embedder="hashing") as mem:
        mem.add("I live in Lyon", user_id="alice")
    missing, dst = tmp_path / "missing.db", tmp_path / "dst.db"
    with pytest.raises(StoreError, match="source: there is no unrecall store"):
        migrate(missing, dst)
    assert not missing.exists() and not dst.exists()  # neither was created
    with pytest.raises(InvalidInput, match="same store"):
        migrate(src, f"sqlite://{src}")
    with pytest.raises(InvalidInput, match=r"destination: .*URL"):
        migrate(src, "mysql://host/db")
    with pytest.raises(InvalidInput, match="destination: a sqlite:// URL needs a file path"):
        migrate(src, "sqlite://")
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a database at all, just some notes")
    with pytest.raises(StoreError, match="destination: the file is not an unrecall store"):
        migrate(src, foreign)
    assert foreign.read_text() == "not a database at all, just some notes"
    other = tmp_path / "other.db"
    SQLiteStorage(other, 8, "other-embedder").close()  # empty, for another embedder
    before = _sha(str(other))
    with pytest.raises(StoreError, match="destination: an empty store made for another"):
        migrate(src, other)
    assert _sha(str(other)) == before


def test_a_copy_that_fails_part_way_leaves_the_destination_empty(
    tmp_path: Path, store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = str(tmp_path / "src.db")
    with Memory(src, embedder="hashing") as mem:
        mem.add("I live in Lyon. My dog is called Rex.", user_id="alice")

    def fail(self: Any, rows: Any) -> None:
        raise StoreError("the disk is full")

    from unrecall.storage.postgres import PostgresStorage

    for cls in (SQLiteStorage, PostgresStorage):
        monkeypatch.setattr(cls, "put_audit", fail)
    with pytest.raises(StoreError, match="disk is full"):
        migrate(src, store_location)
    monkeypatch.undo()
    where = store_location if "://" in store_location else Path(store_location)
    info = peek_store(where)
    assert info is not None and info.empty  # a new store, nothing in it
    with Memory(store_location, embedder="hashing") as dst:
        assert dst.get_all(user_id="alice") == [] and dst.verify_audit().events == 0
    assert migrate(src, store_location).memories == 2  # and a second run goes through
    with Memory(src, embedder="hashing") as a, Memory(store_location, embedder="hashing") as b:
        assert b.export(user_id="alice") == a.export(user_id="alice")


def test_cli_migrate_end_to_end(
    tmp_path: Path, store_location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = str(tmp_path / "cli.db")
    common = ["--db", src, "--user", "ana", "--embedder", "hashing", "--json"]
    run(capsys, "add", "My email is ana@corp.io", *common)
    run(capsys, "add", "I live in Lisbon", *common)
    _, out, _ = run(capsys, "export", *common)
    exported = json.loads(out)
    dst = store_location if "://" in store_location else f"sqlite://{store_location}"
    status, out, err = run(capsys, "migrate", "--from", src, "--to", dst, "--json", "--quiet")
    assert status == 0, err
    report = json.loads(out)
    assert (report["tenants"], report["memories"], report["turns"]) == (1, 2, 2)
    assert report["audit_events"] == 2 and report["embedder"] == "hashing-v1"
    copied = ["--db", store_location, "--user", "ana", "--embedder", "hashing", "--json"]
    _, out, _ = run(capsys, "export", *copied)
    assert json.loads(out) == exported
    _, out, _ = run(capsys, "search", "Lisbon", *copied)
    assert [h["text"] for h in json.loads(out)][:1] == ["I live in Lisbon"]
    status, out, _ = run(capsys, "audit", *copied)
    assert status == 0 and json.loads(out)["ok"] is True
    # a second run finds the destination full: refused, exit 2, nothing echoed
    status, out, err = run(capsys, "migrate", "--from", src, "--to", dst)
    assert status == 2 and err.startswith("error: destination: the store is not empty")
    assert src not in err and "Lisbon" not in err and out == ""
    fresh = str(tmp_path / "human.db")
    status, out, _ = run(capsys, "migrate", "--from", src, "--to", fresh, "--quiet")
    assert status == 0 and out.startswith("migrated: 1 tenants, 2 turns, 2 memories")

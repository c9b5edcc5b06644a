"""Schema migrations: a store written by an older unrecall opens, keeps
everything, and ends on the current layout, with the old layout's leftovers
gone. The stores under ``tests/data`` were written by unrecall 0.1.0 at
65d9eea (schema v1 and v2) with the hashing embedder: nine facts over three
users, a purged secret, an erased user, a released and a superseded memory.
``store_v3`` is the v2 store opened by 0b11b7d (schema v3, unstemmed terms).
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
from pathlib import Path

import pytest
from helpers import check_lists, posting_rows

from unrecall import Memory
from unrecall.progress import Progress
from unrecall.storage.schema import SCHEMA_VERSION

DATA = Path(__file__).parent / "data"
PURGED = b"zqoldsecret01"  # purged with v1/v2's full-text design
ERASED_TENANT = b"user:gone@mail.example"  # delete_all before the upgrade
_KINDS = ("memory", "turn")


def old_store(tmp_path: Path, version: int) -> Path:
    path = tmp_path / f"v{version}.db"
    path.write_bytes(gzip.decompress((DATA / f"store_v{version}.db.gz").read_bytes()))
    return path


def layout(mem: Memory) -> list[tuple[str, ...]]:
    """Every table, index and trigger, with each table's columns."""
    db = mem.storage._db
    out: list[tuple[str, ...]] = []
    for kind, name in db.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    ):
        cols = (
            [c[1:4] for c in db.execute(f"PRAGMA table_xinfo({name})")] if kind == "table" else []
        )
        out.append((kind, name, repr(cols)))
    return out


def fresh_layout(tmp_path: Path) -> list[tuple[str, ...]]:
    with Memory(tmp_path / "fresh.db", embedder="hashing") as mem:
        return layout(mem)


def old_traces(path: Path, key: bytes) -> dict[str, bool]:
    """What v2 left an attacker: the keyed digest of a purged word in the
    full-text index, and the keyed hash of an erased tenant in the audit."""
    raw = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    digest = hashlib.blake2b(PURGED, key=key, digest_size=8).hexdigest().encode()
    ref = hmac.new(key, ERASED_TENANT, hashlib.sha256).hexdigest()[:32].encode()
    return {"digest": digest in raw, "tenant": ref in raw}


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_old_store_opens_keeps_everything_and_loses_its_traces(
    tmp_path: Path, version: int
) -> None:
    path = old_store(tmp_path, version)
    with Memory(path, embedder="hashing") as mem:
        key = mem.storage.secret_key()
        assert mem.storage._scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert mem.storage.upgrades() == []
        assert layout(mem) == fresh_layout(tmp_path)
        vectors = mem.storage._scalar("SELECT count(*) FROM memory_vectors")
        assert vectors == sum(len(mem.get_all(user_id=u)) for u in ("u0", "u1", "u2"))
        # every memory, in its state, with recall over both indexes
        states = {
            u: sorted(
                i.state for i in mem.get_all(user_id=u, states=["active", "released", "superseded"])
            )
            for u in ("u0", "u1", "u2")
        }
        assert states == {
            "u0": ["active", "active"],
            "u1": ["active", "active", "active", "active", "superseded"],
            "u2": ["active", "active", "active", "released"],
        }
        hit = mem.search("garden shed fact 7", user_id="u1", k=1)[0]
        assert hit.text == "fact 7 about the garden shed" and hit.lexical_rank == 1
        assert (
            mem.search("oolong", user_id="u1", k=1, mode="lexical")[0].text == "I like oolong tea"
        )
        assert mem.verify_audit().ok
        (fact,) = [i for i in mem.get_all(user_id="u2") if i.text == "fact 2 about the garden shed"]
        assert [e.op for e in mem.history(fact.id, user_id="u2")] == ["add"]
        # the store keeps working: a new purge erases at once
        mem.add("my new code is zqafterupgrade", user_id="u1")
        mem.purge("zqafterupgrade", user_id="u1")
        assert mem.verify_erased(["zqafterupgrade", PURGED.decode()]).clean
    assert old_traces(path, key) == {"digest": False, "tenant": False}


def test_the_v2_fixture_really_holds_the_old_traces(tmp_path: Path) -> None:
    # So the test above can fail: before the upgrade, both traces are there.
    import apsw

    path = old_store(tmp_path, 2)
    db = apsw.Connection(str(path))
    key = db.execute("SELECT value FROM secrets WHERE name = 'store_key'").fetchone()[0]
    db.close()
    assert old_traces(path, key) == {"digest": True, "tenant": True}


def test_a_small_tenant_does_not_cost_a_large_vector_chunk(tmp_path: Path) -> None:
    # Each vec0 partition allocated whole chunks: at sqlite-vec's default of
    # 1024 rows every tenant cost 1.5 MB of zeroes.
    path = tmp_path / "many.db"
    with Memory(path, embedder="hashing") as mem:
        for u in range(40):
            mem.add("one small fact", user_id=f"user-{u}")
    assert path.stat().st_size / 40 < 100_000


def test_a_store_of_the_row_per_posting_layout_is_upgraded_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Schema v5 kept one row per posting (memory_terms, turn_terms) and
    # vectors without lists. Made here from a current store by hand, as v5
    # left it: opening it packs those rows into blocks and lists the
    # vectors, a batch at a time, and recall ranks as before.
    path = tmp_path / "v5.db"
    queries = ("copper kettle", "lantern 2 heron", "otter")
    with Memory(path, embedder="hashing") as mem:
        for i in range(40):
            mem.add(f"the heron {i} waits by the copper kettle near lantern {i % 3}", user_id="u")
        mem.add("an otter swims past", user_id="v")
        before = [
            [(h.id, round(h.score, 9)) for h in mem.search(q, user_id="u", k=8, mode=mode)]
            for q in queries
            for mode in ("lexical", "hybrid")
        ]
        db = mem.storage._db
        db.execute("DROP TABLE vector_lists; DROP TABLE vector_chunks")
        db.execute("ALTER TABLE memory_vectors DROP COLUMN spill")
        db.execute("ALTER TABLE memory_vectors DROP COLUMN list")
        db.execute(
            "CREATE TABLE vector_log(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
            " tenant_id INTEGER NOT NULL, memory_id INTEGER NOT NULL)"
        )
        docs = {k: list(db.execute(f"SELECT * FROM {k}_docs ORDER BY doc")) for k in _KINDS}
        for kind, table in (("memory", "memory_terms"), ("turn", "turn_terms")):
            rows = posting_rows(
                db.execute(f"SELECT term, first, docs, tfs, lens FROM {kind}_postings")
            )
            assert rows
            db.execute(f"DROP TABLE {kind}_postings; DROP TABLE {kind}_docs")
            db.execute(
                f"CREATE TABLE {table}(term INTEGER NOT NULL, doc INTEGER NOT NULL,"
                " tf INTEGER NOT NULL, len INTEGER NOT NULL,"
                " PRIMARY KEY (term, doc)) WITHOUT ROWID"
            )
            db.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?)", rows)
        db.execute("PRAGMA user_version=5")
    # written in batches smaller than a term's postings and than the documents
    monkeypatch.setattr("unrecall.storage.sqlite._STREAM_BATCH", 3)
    capsys.readouterr()
    with Memory(path, embedder="hashing", progress=Progress()) as mem:
        # the lists' upgrade runs long at scale: a ticker shows it is alive
        assert "listing the stored vectors" in capsys.readouterr().err
        assert mem.storage._scalar("PRAGMA user_version") == SCHEMA_VERSION
        after = [
            [(h.id, round(h.score, 9)) for h in mem.search(q, user_id="u", k=8, mode=mode)]
            for q in queries
            for mode in ("lexical", "hybrid")
        ]
        assert after == before and after[0] and after[1] and after[4] == []
        assert mem.storage._scalar("SELECT count(*) FROM memory_vectors WHERE list IS NULL") == 0
        db = mem.storage._db
        assert {k: list(db.execute(f"SELECT * FROM {k}_docs ORDER BY doc")) for k in _KINDS} == docs
        assert layout(mem) == fresh_layout(tmp_path)


def test_a_store_of_single_lists_is_listed_again_with_second_lists_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Schema v7 put each vector in one list. Opening such a store (made here
    # from a current one, as v7 left it) lists every vector again, so that a
    # probed tenant's vectors get their second lists, and the lists hold
    # exactly the stored vectors.
    monkeypatch.setattr("unrecall.storage.sqlite_lists.SPLIT_AT", 16)
    monkeypatch.setattr("unrecall.storage.vector_lists.EXACT_UP_TO", 40)
    monkeypatch.setattr("unrecall.storage.vector_lists.PROBE", 2)
    monkeypatch.setattr("unrecall.storage.sqlite.RELIST_BATCH", 7)
    path = tmp_path / "v7.db"
    with Memory(path, embedder="hashing") as mem:
        for i in range(120):
            mem.add(f"the heron {i} waits by the copper kettle near lantern {i % 3}", user_id="u")
        db = mem.storage._db
        db.execute("UPDATE memory_vectors SET spill = NULL")
        db.execute("ALTER TABLE memory_vectors DROP COLUMN spill")
        db.execute("PRAGMA user_version=7")
    with Memory(path, embedder="hashing") as mem:
        assert mem.storage._scalar("PRAGMA user_version") == SCHEMA_VERSION
        check_lists(mem.storage, split_at=16)
        spilled = mem.storage._scalar("SELECT count(*) FROM memory_vectors WHERE spill IS NOT NULL")
        assert spilled >= 120 - 40 - 7  # all but those listed while the tenant was small
        assert mem.search("heron 7 copper kettle", user_id="u", k=3)

"""The gaps SQLite leaves in b-tree pages are zeroed as pages reach the main
file (``storage.page_gaps``): a copy of a cell that a rebalance left behind
does not outlive the cell, and zeroing never changes what SQLite reads."""

from __future__ import annotations

import random
from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unrecall import Memory
from unrecall.storage import page_gaps
from unrecall.storage.sqlite import SQLiteStorage

WORDS = ["garden", "coffee", "train", "sister", "recipe", "bicycle", "weather", "library"]


def gaps(path: Path) -> dict[int, bytes]:
    """Every b-tree page's gap, by page number, as the file holds it."""
    raw = path.read_bytes()
    size = int.from_bytes(raw[16:18], "big")
    usable = size - raw[20]
    count = len(raw) // size
    maps = page_gaps._pointer_maps(count, size, usable) if raw[52:56] != bytes(4) else set()
    out = {}
    for page in set(range(1, count + 1)) - maps:
        data = raw[(page - 1) * size : page * size]
        gap = page_gaps._gap(data, 100 if page == 1 else 0, usable)
        if gap is not None:
            out[page] = data[gap[0] : gap[1]]
    return out


def test_a_purged_secret_leaves_no_copy_after_the_store_was_churned_around_it(
    tmp_path: Path,
) -> None:
    # Secrets written early, then thousands of memories around them and
    # hundreds deleted: SQLite rebalances the pages that hold them, and a
    # rebalance leaves copies of cells in the gaps of pages. Before gaps were
    # zeroed, a purged turn's text was found in a ``turns`` page's gap.
    rng = random.Random(7)
    path = tmp_path / "s.db"
    secrets = [
        f"My vault PIN is {rng.randint(1000, 9999)} kept in the zarflock {i} drawer"
        for i in range(30)
    ]
    with Memory(path, embedder="hashing") as mem:

        def notes(n: int, what: str, user: str) -> list[str]:
            ids = []
            for at in range(0, n, 32):
                batch = [
                    {"role": "user", "content": f"{what} the {rng.choice(WORDS)} on day {at + i}"}
                    for i in range(32)
                ]
                ids += mem.add(batch, user_id=user).ids
            return ids

        early = notes(1000, "Early on I mentioned", "victim")
        uids = [mem.add(s, user_id="victim").ids[0] for s in secrets]
        for _ in range(0, 2000, 32):
            notes(32, "I talked about", rng.choice(["victim", "other"]))
        for uid in rng.sample(early, 400):
            mem.purge(uid, user_id="victim")
        notes(500, "Later", "victim")
        for uid in uids:
            assert mem.purge(uid, user_id="victim").erased
        notes(200, "After the forget,", "victim")  # writes pages it may have cached
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
    left = [s for i, s in enumerate(secrets) if f"zarflock {i} drawer".encode() in raw]
    assert left == []
    assert b"PIN is" not in raw
    assert not any(g.strip(b"\0") for g in gaps(path).values())


@settings(max_examples=25, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["insert", "delete", "update"]),
            st.integers(0, 400),
            st.integers(1, 3000),
        ),
        min_size=20,
        max_size=200,
    ),
    vacuum=st.booleans(),
)
def test_zeroing_gaps_changes_nothing_sqlite_reads(
    tmp_path_factory, ops: list[tuple[str, int, int]], vacuum: bool
) -> None:
    # Random inserts, deletes and updates of rows of every size (overflow
    # pages included) in a table with an index, in an auto-vacuum file
    # (pointer-map pages) or not: after every gap is zeroed the file is
    # sound, reads the same, and holds no nonzero gap.
    path = tmp_path_factory.mktemp("g") / "g.db"
    db = apsw.Connection(str(path))
    db.execute("PRAGMA page_size=1024").fetchall()
    if vacuum:
        db.execute("PRAGMA auto_vacuum=INCREMENTAL").fetchall()
    db.execute("PRAGMA secure_delete=ON").fetchall()
    db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB, w TEXT)")
    db.execute("CREATE INDEX t_w ON t(w)")
    rng = random.Random(len(ops))
    for op, key, size in ops:
        if op == "insert":
            db.execute(
                "INSERT OR REPLACE INTO t VALUES (?, randomblob(?), ?)",
                (key, size, "w" * (size % 300)),
            )
        elif op == "delete":
            db.execute("DELETE FROM t WHERE k BETWEEN ? AND ?", (key, key + rng.randint(0, 20)))
        else:
            db.execute(
                "UPDATE t SET v = randomblob(?), w = ? WHERE k % 7 = ?", (size, str(size), key % 7)
            )
    before = db.execute("SELECT * FROM t ORDER BY k").fetchall()
    db.close()
    count = path.stat().st_size // 1024
    page_gaps.zero_gaps(path, range(1, count + 1))
    db = apsw.Connection(str(path))
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert db.execute("SELECT * FROM t ORDER BY k").fetchall() == before
    assert db.execute("SELECT count(*) FROM t WHERE w >= ''").fetchall() == [(len(before),)]
    db.close()
    assert not any(g.strip(b"\0") for g in gaps(path).values())


def test_pointer_map_pages_are_where_sqlite_puts_them(tmp_path: Path) -> None:
    # An auto-vacuum file's pointer-map pages hold type bytes 1 to 5, so
    # 2 and 5 pass for b-tree pages: they must be known by place.
    path = tmp_path / "p.db"
    db = apsw.Connection(str(path))
    db.execute("PRAGMA page_size=512").fetchall()
    db.execute("PRAGMA auto_vacuum=INCREMENTAL").fetchall()
    db.execute("CREATE TABLE t(v BLOB)")
    db.executemany("INSERT INTO t VALUES (randomblob(?))", [(300,)] * 600)
    pages = {p for (p,) in db.execute("SELECT pageno FROM dbstat")}
    count = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    maps = page_gaps._pointer_maps(count, 512, 512)
    assert len(maps) >= 2
    assert maps == set(range(1, count + 1)) - pages  # what no b-tree owns (no free pages here)


def test_a_page_this_connection_cached_is_not_written_back_with_its_old_gap(
    tmp_path: Path,
) -> None:
    # The gaps are zeroed in the file; the writer's page cache still holds
    # the pages as they were. Written again from there, a page brings its
    # old gap back into the WAL. A marker in the gap of ``meta``'s page
    # (the checkpoint's own write lands there too) stands for such a copy.
    path = tmp_path / "s.db"
    with Memory(path, embedder="hashing") as mem:
        mem.add("a note to make the store", user_id="u")
    marker = b"STALE-COPY-OF-A-CELL"
    with Memory(path, embedder="hashing") as mem:
        st = mem.storage
        page = st._scalar("SELECT rootpage FROM sqlite_master WHERE name = 'meta'")
        size = st._scalar("PRAGMA page_size")
        with open(path, "r+b") as f:  # the WAL is empty: the file holds the page
            f.seek((page - 1) * size)
            data = f.read(size)
            start, end = page_gaps._gap(data, 100 if page == 1 else 0, size)
            assert end - start > 64
            f.seek((page - 1) * size + start + 16)
            f.write(marker)
        st._db.execute("PRAGMA shrink_memory").fetchall()  # it read the page before
        assert st._rows("SELECT count(*) FROM meta")  # the writer caches the page
        with st.transaction():
            st._write("INSERT OR REPLACE INTO meta VALUES ('probe', '1')")
        assert st.erase()
        with st.transaction():
            st._write("INSERT OR REPLACE INTO meta VALUES ('probe', '2')")
        files = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
        assert marker not in files


def test_an_older_store_has_every_page_zeroed_once_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stores made before schema v9 were checkpointed by SQLite, gaps and
    # all. Opening one zeroes every page it has, a batch at a time; until
    # that is done its erasure gaps say so.
    path = tmp_path / "s.db"
    with Memory(path, embedder="hashing") as mem:
        ids = [mem.add(f"note {i} on the {WORDS[i % 8]}", user_id="u").ids[0] for i in range(300)]
        for uid in ids[::3]:
            mem.purge(uid, user_id="u")
    marker = b"STALE-COPY-OF-A-CELL"
    raw = bytearray(path.read_bytes())
    size = int.from_bytes(raw[16:18], "big")
    planted = 0
    for page, gap in gaps(path).items():
        if len(gap) > 64:
            data = bytes(raw[(page - 1) * size : page * size])
            start, _ = page_gaps._gap(data, 100 if page == 1 else 0, size)
            at = (page - 1) * size + start + 16
            raw[at : at + len(marker)] = marker
            planted += 1
    assert planted >= 3
    path.write_bytes(bytes(raw))
    db = apsw.Connection(str(path))
    db.execute("PRAGMA user_version=8").fetchall()
    db.close()
    scrub = SQLiteStorage.scrub
    monkeypatch.setattr(SQLiteStorage, "scrub", lambda self, batch=0: None)
    with Memory(path, embedder="hashing") as mem:
        assert mem.storage.erasure_gaps()  # not zeroed yet, and it says so
        scrub(mem.storage, 5)
        assert mem.storage.erasure_gaps() == []
        assert len(mem.get_all(user_id="u")) == 200
        assert mem.storage._rows("PRAGMA integrity_check") == [("ok",)]
    files = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
    assert marker not in files
    assert not any(g.strip(b"\0") for g in gaps(path).values())


def test_the_store_checkpoints_itself_and_every_page_it_writes_out_is_zeroed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's own checkpoints would write pages out with their gaps: the
    # store turns them off and checkpoints when the WAL passes
    # CHECKPOINT_AT, so the WAL stays bounded and the main file never holds
    # a nonzero gap, at any commit.
    monkeypatch.setattr("unrecall.storage.sqlite.CHECKPOINT_AT", 256 * 1024)
    path = tmp_path / "s.db"
    rng = random.Random(3)
    with Memory(path, embedder="hashing") as mem:
        kept: list[tuple[str, str]] = []
        largest = 0
        for i in range(150):
            text = f"note {i} on the {rng.choice(WORDS)} " + "w" * rng.randint(10, 400)
            user = rng.choice(["a", "b"])
            kept += [(uid, user) for uid in mem.add(text, user_id=user).ids]
            if i % 4 == 3:
                uid, owner = kept.pop(rng.randrange(len(kept)))
                mem.purge(uid, user_id=owner)
            largest = max(largest, Path(f"{path}-wal").stat().st_size)
            assert not any(g.strip(b"\0") for g in gaps(path).values()), i
        assert mem.storage._scalar("PRAGMA wal_autocheckpoint") == 0
        restarts = int(mem.storage._scalar("SELECT value FROM meta WHERE key = 'checkpoints'"))
    assert largest <= 256 * 1024
    assert restarts > 150 // 4 + 10  # one per purge, and more as the WAL grew

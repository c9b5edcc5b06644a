"""The store read into the OS page cache once a process searches it
(``storage.prewarm``): after the first search, never before it, only when
it fits, and stopped by ``close``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import load_bench, on_tmpfs

from unrecall import InvalidInput, Memory
from unrecall.storage import prewarm


def _store(path: Path, prewarm_mode: bool | None = None) -> Memory:
    mem = Memory(path, embedder="hashing", prewarm=prewarm_mode)
    notes = [{"role": "user", "content": f"the pier lamp {i} is blue"} for i in range(200)]
    mem.add(notes, user_id="u")
    return mem


def _closed_store(tmp_path: Path) -> tuple[Any, Path]:
    """bench/perf.py (to evict and count cached pages) and a closed store on
    a file system whose pages can leave the page cache."""
    if on_tmpfs(tmp_path):
        pytest.skip("tmpfs pages cannot leave the page cache")
    db = tmp_path / "m.db"
    _store(db).close()
    return load_bench("perf"), db


def test_the_first_search_starts_the_read_and_the_file_ends_up_cached(tmp_path: Path) -> None:
    # A restarted service searched its 1M store at 126 ms p50, each search
    # reading its pages from the disk; the file is now read once, in order.
    perf, db = _closed_store(tmp_path)
    with Memory(db, embedder="hashing", prewarm=True) as mem:
        perf.evict_page_cache(db)
        assert mem.storage.prewarm.state == "waiting"  # opening reads no more than it needs
        mem.search("pier lamp", user_id="u")
        assert mem.storage.prewarm.done.wait(60)
        assert mem.storage.prewarm.state == "done"
        assert perf.resident_share(db) > 0.99


def test_pages_the_kernel_dropped_from_the_read_are_read_anyway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under heavy writes beside it the kernel dropped part of the read it was
    # asked for (POSIX_FADV_WILLNEED), and 94.6 % of a file ended up cached.
    # Here it drops all of it: only the block's last byte is read, and the
    # check page by page has the rest read.
    perf, db = _closed_store(tmp_path)
    perf.evict_page_cache(db)
    monkeypatch.setattr(prewarm.os, "posix_fadvise", lambda *args: None)
    monkeypatch.setattr(prewarm, "BLOCK", 64 * 1024)
    read = prewarm.Prewarm(db, True)
    read.start()
    assert read.done.wait(60) and read.state == "done"
    assert perf.resident_share(db) > 0.99


def test_a_system_that_cannot_tell_what_is_cached_fails_the_read_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable() -> None:
        raise OSError("mincore is not available here")

    monkeypatch.setattr(prewarm, "_mincore", unavailable)
    with _store(tmp_path / "m.db", prewarm_mode=True) as mem:
        mem.search("pier lamp", user_id="u")
        assert mem.storage.prewarm.done.wait(60)
        assert mem.storage.prewarm.state == "failed"
        assert mem.search("pier lamp", user_id="u")  # searches read the file as usual


def test_off_means_no_read(tmp_path: Path) -> None:
    with _store(tmp_path / "m.db", prewarm_mode=False) as mem:
        mem.search("pier lamp", user_id="u")
        assert mem.storage.prewarm.state == "off"
        assert mem.storage.prewarm._thread is None


@pytest.mark.parametrize("free", [None, 1 << 16])
def test_by_default_a_store_that_does_not_fit_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free: int | None
) -> None:
    # The 19 GB store of 3M memories on a 24 GB machine would push out
    # what every other process holds; unknown free memory is not "enough".
    monkeypatch.setattr(prewarm, "available_memory", lambda: free)
    with _store(tmp_path / "m.db") as mem:
        mem.search("pier lamp", user_id="u")
        assert mem.storage.prewarm.state == "skipped"
        assert mem.storage.prewarm.done.is_set()


def test_close_stops_a_read_under_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big"
    with big.open("wb") as f:
        f.truncate(1 << 30)  # sparse: a long read of nothing
    monkeypatch.setattr(prewarm, "BLOCK", 512)
    read = prewarm.Prewarm(big, True)
    read.start()
    assert read.state == "running"
    read.stop()
    assert read.state == "stopped" and read.done.is_set() and read.seconds is None
    read.start()  # at most once
    assert read.state == "stopped"


def test_bad_prewarm_values_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="prewarm"):
        Memory(tmp_path / "m.db", embedder="hashing", prewarm=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="SQLite"):
        Memory("postgresql://nobody@127.0.0.1:1/none", embedder="hashing", prewarm=True)
    assert not (tmp_path / "m.db").exists()


def test_the_read_waits_for_the_whole_first_search(tmp_path: Path) -> None:
    # Started when BM25 (on its worker thread) was done, the read ran beside
    # the vector half of the first search: 5.4 s instead of 0.9 at 1M.
    with _store(tmp_path / "m.db", prewarm_mode=True) as mem:
        storage = mem.storage
        seen: list[str] = []
        for name in ("lexical", "vector", "memories_by_id", "embeddings"):
            part = getattr(storage, name)

            def spy(*args: object, part: object = part) -> object:
                out = part(*args)  # type: ignore[operator]
                seen.append(storage.prewarm.state)
                return out

            setattr(storage, name, spy)
        mem.search("pier lamp", user_id="u")
        assert seen and set(seen) == {"waiting"}
        assert storage.prewarm.state in ("running", "done")


def test_without_posix_fadvise_even_true_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel reads the blocks (POSIX_FADV_WILLNEED) without a copy into
    # the process; where it cannot be asked to, nothing is read.
    monkeypatch.delattr(prewarm.os, "posix_fadvise")
    with _store(tmp_path / "m.db", prewarm_mode=True) as mem:
        mem.search("pier lamp", user_id="u")
        assert mem.storage.prewarm.state == "skipped"

"""bench/perf.py's own bookkeeping: what it measures on must not outlive it,
and what it reports of a child process is the child's."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import load_bench, on_tmpfs

from unrecall import Memory


def test_remove_store_takes_the_receipt_key_with_it(tmp_path: Path) -> None:
    # Each measurement's throwaway copy signs its purge receipts with a key
    # made beside it; left behind, one key file a run piled up in the cache.
    db = tmp_path / "work.db"
    with Memory(db, embedder="hashing") as mem:
        mid = mem.add("the locker code is 4417", user_id="u").ids[0]
        assert mem.purge(mid, user_id="u").receipt is not None
    assert any(p.name.endswith(".receipt-key") for p in tmp_path.iterdir())
    load_bench("perf").remove_store(db)
    assert list(tmp_path.iterdir()) == []


def _child_peak(out: Any) -> None:
    out.put(load_bench("perf").peak_rss())


def test_peak_rss_of_a_spawned_child_is_its_own() -> None:
    # ru_maxrss survives exec: the cold-start child reported the parent's
    # corpus as its own peak (2,009 MB at 3M, where the child used ~380).
    held = np.ones(400 * 2**20 // 8)  # 400 MB, touched, in this process
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=_child_peak, args=(out,))
    child.start()
    peak = out.get(timeout=120)
    child.join()
    assert held.sum() > 0
    assert 0 < peak < 300 * 2**20


def test_a_cold_start_starts_with_the_store_out_of_the_page_cache(tmp_path: Path) -> None:
    # The cold start was timed right after the copy had put the whole store
    # in the page cache: 89 ms at 1M, where a store read from the disk took
    # 1.7 s. The child now evicts the store first and checks that it took.
    if on_tmpfs(tmp_path):
        pytest.skip("tmpfs pages cannot leave the page cache")
    perf = load_bench("perf")
    db = tmp_path / "store.db"
    db.write_bytes(np.random.default_rng(0).bytes(8 << 20))
    db.read_bytes()
    assert perf.resident_share(db) > 0.9
    assert perf.evict_page_cache(db) <= 0.01
    assert perf.resident_share(db) <= 0.01


def test_a_cached_build_copied_elsewhere_is_measured_where_it_is(tmp_path: Path) -> None:
    # A cache directory copied whole (store and metadata) keeps the path it
    # was built at in its metadata; the copy, not the original, is measured.
    perf = load_bench("perf")
    original, copy = tmp_path / "a", tmp_path / "b"
    original.mkdir()
    texts = (["my cat is called Tom", "I drink green tea"], ["the pier lamp is blue"])
    build = perf.cached_build(original, 2, 1, 1, 2, False, *texts, lambda _: None)
    assert Path(build.path).parent == original
    copy.mkdir()
    for f in original.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    reused = perf.cached_build(copy, 2, 1, 1, 2, False, *texts, lambda _: None)
    assert reused.reused and Path(reused.path).parent == copy


def test_no_timed_query_was_run_before_in_the_state_it_is_timed_in() -> None:
    # The warm-up ran the first 30 timed queries, and the cold-start child
    # ran all 200 just before the parent timed them: the "hybrid" figure
    # was a mix of cached and uncached searches, varying run to run.
    perf = load_bench("perf")
    sets = perf.query_sets(50, 300, 7)
    cold, warmup, steady = set(sets.cold), set(sets.warmup), set(sets.steady)
    assert (len(cold), len(warmup), len(steady)) == (50, 300, 50)
    assert not cold & warmup and not cold & steady and not warmup & steady
    assert sets.cold == perf.make_queries(50, 7)  # the queries earlier runs timed


def test_a_build_may_checkpoint_less_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --build-checkpoint-mb makes a 3M build a fifth faster; what it builds
    # with must not leak into what is measured after, and the build says so.
    from unrecall.storage import sqlite as sqlite_store

    perf = load_bench("perf")
    library_at = sqlite_store.CHECKPOINT_AT
    seen: list[int] = []
    checkpoint = sqlite_store.SQLiteStorage._checkpoint

    def spy(self: Any, *args: Any) -> bool:
        seen.append(sqlite_store.CHECKPOINT_AT)
        return checkpoint(self, *args)

    monkeypatch.setattr(sqlite_store.SQLiteStorage, "_checkpoint", spy)
    big, _ = perf.make_corpus(96, 1)
    small, _ = perf.make_corpus(8, 2)
    build = perf.build_store(tmp_path / "s.db", big, small, 32, lambda _: None, checkpoint_mb=64)
    assert build.checkpoint_mb == 64
    assert seen and set(seen) == {64 << 20}
    assert library_at == sqlite_store.CHECKPOINT_AT
    seen.clear()
    assert perf.build_store(tmp_path / "t.db", big, small, 32, lambda _: None).checkpoint_mb is None
    assert set(seen) == {library_at}

"""bench/attack.py's own judgement: what it counts as a vector left behind."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from helpers import load_bench

from unrecall import Memory
from unrecall.storage.vector_lists import quantise


def test_an_old_copy_of_a_live_chunk_is_no_orphan_but_a_gone_code_is(tmp_path: Path) -> None:
    # A chunk is written anew when a row is appended, and SQLite may leave
    # the old copy in a page's slack. Its windows at every offset are live
    # content; the attack took those that straddle two rows (or the copy's
    # edge) for orphans, and its planted self-check then failed on a clean
    # store. A code row gone, next to such a copy, is still found.
    attack = load_bench("attack")
    path = tmp_path / "s.db"
    with Memory(path, embedder="minilm") as mem:
        for i in range(6):
            mem.add(f"note {i}: the heron waits by the copper kettle number {i}", user_id="u")
        gone = np.asarray(mem.embedder.embed(["my locker code is 4417"]), dtype=np.float32)
    ev = attack.load_evidence(path, tmp_path)
    active = {r[0] for r in ev.db.execute("SELECT id FROM memories WHERE state = 'active'")}
    (codes,) = ev.db.execute("SELECT codes FROM vector_chunks").fetchone()
    assert len(codes) >= 4 * attack.DIM

    def with_wal(body: bytes) -> attack.Evidence:
        page = bytearray(ev.page_size)
        page[37 : 37 + len(body)] = body
        return replace(ev, files={**ev.files, "wal": bytes(32 + 24) + bytes(page)})

    stale = with_wal(bytes(codes[: 3 * attack.DIM]))
    live, orphans, where, windows = attack.code_orphans(stale, active)
    assert windows > attack.DIM  # most offsets of it look like a code row
    assert not [spot for spot in orphans.values() if spot.startswith("raw_codes")]
    assert len(live) == len(active)

    code, _ = quantise(gone)
    planted = with_wal(bytes(codes[: 2 * attack.DIM]) + code.tobytes())
    _, orphans, where, _ = attack.code_orphans(planted, active)
    unit = (gone[0] / np.linalg.norm(gone[0])).astype("<f4")
    found = [np.frombuffer(raw, dtype="<f4") for raw in orphans]
    assert max(float(v @ unit) for v in found) > 0.99
    assert set(where) == {"codes:wal"}


def test_the_attack_reads_an_upgrades_old_lists(tmp_path: Path) -> None:
    # Until an upgrade has deleted them, the old lists hold a code of every
    # vector: one whose memory is gone is an orphan there too.
    from unrecall.storage.schema import RELIST

    attack = load_bench("attack")
    path = tmp_path / "s.db"
    with Memory(path, embedder="minilm") as mem:
        for i in range(6):
            mem.add(f"note {i}: the heron waits by the copper kettle number {i}", user_id="u")
        with mem.storage.transaction():
            for stmt in RELIST:
                mem.storage._write(stmt)
    ev = attack.load_evidence(path, tmp_path)
    ids = [r[0] for r in ev.db.execute("SELECT id FROM memories ORDER BY id")]
    _, orphans, _, _ = attack.code_orphans(ev, set(ids[1:]))  # as if the first were gone
    assert list(orphans.values()) == ["old_vector_chunks_row"]

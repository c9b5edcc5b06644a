"""Forensic proof of physical erasure: forgotten tokens are gone from every
byte of every file of the store, kept ones are still there (so the scan can
fail)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers import is_postgres, raw_hits, raw_sql, store_files, token

from unrecall import InvalidInput, Memory


def forget_everything(mem: Memory) -> tuple[list[str], list[str]]:
    """Write tokens in memories across states, forget some of them through
    every forgetting path; return (forgotten tokens, kept tokens)."""
    gone: list[str] = []
    kept: list[str] = []

    def fresh(bucket: list[str]) -> str:
        tok = token()
        bucket.append(tok)
        return tok

    for i in range(40):  # filler, so forgotten rows share pages with kept ones
        mem.add(f"filler memory {i} about the weather and gardens", user_id="u")

    # kept tokens in every state
    mem.add(f"kept active fact {fresh(kept)}", user_id="u")
    mid = mem.add(f"kept released fact {fresh(kept)}", user_id="u").ids[0]
    mem.release(mid, user_id="u")
    mid = mem.add(f"kept superseded fact {fresh(kept)}", user_id="u").ids[0]
    mem.supersede(mid, "kept superseded fact replaced", user_id="u")

    # purge: active, released, superseded, updated-away, edited-away, large
    tok = fresh(gone)
    mem.add(f"my bank pin is {tok}", user_id="u")
    mem.purge(tok, user_id="u")

    tok = fresh(gone)
    mid = mem.add(f"one-time code {tok}", user_id="u").ids[0]
    mem.release(mid, user_id="u")
    mem.purge(tok, user_id="u")

    tok = fresh(gone)
    mid = mem.add(f"my old password was {tok}", user_id="u").ids[0]
    mem.supersede(mid, "my password was changed", user_id="u")
    mem.purge(tok, user_id="u")

    tok = fresh(gone)
    mid = mem.add(f"my door code is {tok}", user_id="u").ids[0]
    mem.update(mid, "my door code is now unknown", user_id="u")
    mem.purge(tok, user_id="u")

    tok = fresh(gone)
    mid = mem.add(f"I live at {tok} street and like tea", user_id="u").ids[0]
    mem.edit(mid, "I live at main street and like tea", user_id="u")
    mem.purge(tok, user_id="u")

    tok = fresh(gone)
    big = " ".join(f"line {i} of a long journal" for i in range(500))  # overflow pages
    mem.add(f"{big} {tok} {big}", user_id="u")
    mem.purge(tok, user_id="u")

    # delete by memory id (the token also sits in metadata and session id)
    tok = fresh(gone)
    mid = mem.add(
        f"my tax id is {tok}", user_id="u", metadata={"note": tok}, session_id=f"s-{tok}"
    ).ids[0]
    mem.delete(mid, user_id="u")

    # delete by turn id
    tok = fresh(gone)
    report = mem.add(
        [
            {"role": "user", "content": f"my passport number is {tok}"},
            {"role": "assistant", "content": "I will keep that in mind"},
        ],
        user_id="u",
    )
    mem.delete(report.detail["turns"][0], user_id="u")

    # delete_all: the tenant's own id is personal data too
    tok = fresh(gone)
    victim = f"{fresh(gone)}@example.com"
    mem.add(f"victim secret {tok}", user_id=victim, agent_id="assistant-1", run_id="run-9")
    mem.add("victim's other memory", user_id=victim)
    mem.delete_all(user_id=victim)

    # expiry with purge
    tok = fresh(gone)
    mem.add(f"temporary token {tok}", user_id="u", expires_at=time.time() - 1)
    mem.add(f"short-lived token {fresh(gone)}", user_id="u", ttl=1)
    mem.expire(now=time.time() + 5, purge=True)

    mem.add(f"kept late fact {fresh(kept)}", user_id="u")
    return gone, kept


def assert_scan(mem: Memory, gone: list[str], kept: list[str]) -> None:
    report = mem.verify_erased(gone)
    assert report.clean, report.found
    assert report.probes == len(gone)
    if is_postgres(mem):  # the whole data directory, WAL included, was read
        root = Path(raw_sql(mem, "SHOW data_directory")[0][0])
        parts = {Path(f).relative_to(root).parts[0] for f in report.files}
        assert {"base", "pg_wal", "global"} <= parts, parts
    else:
        assert Path(mem.storage.path).name in {Path(f).name for f in report.files}
    for tok in gone:
        assert raw_hits(mem, tok) == 0, tok

    positive = mem.verify_erased(kept)
    assert not positive.clean
    assert sorted(positive.found) == list(range(len(kept)))
    for tok in kept:
        assert raw_hits(mem, tok) > 0, tok
    # the report names files and counts, never the probes themselves
    text = json.dumps(positive.to_dict())
    assert not any(tok in text for tok in kept)


def test_forensic_scan_after_every_forgetting_path(mem: Memory) -> None:
    gone, kept = forget_everything(mem)
    assert len(gone) == 12 and len(kept) == 4
    assert_scan(mem, gone, kept)
    # the kept ones are not only on disk: they are what the API shows
    everything = json.dumps(mem.export(user_id="u"))
    assert all(tok in everything for tok in kept)
    assert not any(tok in everything for tok in gone)


def test_erasure_holds_after_close_reopen_and_compact(tmp_path: Path) -> None:
    path = tmp_path / "forensic.db"
    with Memory(path, embedder="hashing") as mem:
        gone, kept = forget_everything(mem)
    # closed: scan the files ourselves, with no help from the library
    files = sorted(p for p in tmp_path.iterdir() if p.name.startswith("forensic.db"))
    assert files
    blobs = b"".join(p.read_bytes() for p in files)
    for tok in gone:
        assert tok.encode() not in blobs and tok.encode("utf-16-le") not in blobs
    for tok in kept:
        assert tok.encode() in blobs
    with Memory(path, embedder="hashing") as mem:
        mem.compact()
        assert_scan(mem, gone, kept)
        # still a working store
        hits = mem.search("kept active fact", user_id="u", mode="lexical")
        assert hits and hits[0].text.startswith("kept active fact")


@pytest.mark.sqlite_only("about SQLite's -wal file")
def test_wal_holds_only_its_restart_after_a_purge(fast_mem: Memory) -> None:
    # The checkpoint restarts the WAL with one write of its own (a counter
    # in ``meta``), which cuts the file down to that one page.
    tok = token()
    fast_mem.add(f"wal secret {tok}", user_id="u")
    report = fast_mem.purge(tok, user_id="u")
    assert report.erased is True
    page = fast_mem.storage._scalar("PRAGMA page_size")
    wal = [p for p in store_files(fast_mem) if p.name.endswith("-wal")]
    assert all(p.stat().st_size <= 32 + 24 + page for p in wal)
    assert raw_hits(fast_mem, tok) == 0


def test_scan_finds_a_token_that_is_still_there(fast_mem: Memory) -> None:
    tok = token()
    fast_mem.add(f"still here {tok}", user_id="u")
    fast_mem.release(tok, user_id="u")  # soft: the bytes stay, by design
    report = fast_mem.verify_erased([tok, token()])
    assert not report.clean and list(report.found) == [0]
    assert raw_hits(fast_mem, tok) > 0
    # case and Unicode forms of a probe are found as well
    assert not fast_mem.verify_erased([tok.upper()]).clean


def test_verify_erased_rejects_weak_probes(fast_mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        fast_mem.verify_erased("a single string")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput) as err:
        fast_mem.verify_erased(["abc"])
    assert "abc" not in str(err.value)


def test_the_raw_scan_finds_overlapping_forms_across_chunk_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from unrecall.control import erasure

    monkeypatch.setattr(erasure, "CHUNK", 5)  # every needle crosses a boundary
    path = tmp_path / "blob"
    path.write_bytes(
        b"xx" + b"secret-one" + b"\x00" + "secret-one".encode("utf-16-le") + b"yy secret-one-more"
    )
    report = erasure.scan_files([path], ["secret-one", "one-more", "absent"])
    assert report.found == {0: {str(path): 3}, 1: {str(path): 1}}
    assert report.via == {0: ["plaintext"], 1: ["plaintext"]}


def test_the_raw_scan_skips_a_file_removed_after_it_was_listed(tmp_path: Path) -> None:
    # A database server removes temporary files (pg_internal.init, WAL
    # segments) between Storage.files() and the read: that is no error.
    from unrecall.control import erasure

    held, gone = tmp_path / "held", tmp_path / "gone"
    held.write_bytes(b"the secret-one stays")
    report = erasure.scan_files([gone, held], ["secret-one"])
    assert report.found == {0: {str(held): 1}}


def test_a_probe_is_found_by_its_digests_only_when_all_survive(tmp_path: Path) -> None:
    from unrecall.control import erasure

    path = tmp_path / "blob"
    path.write_bytes(b"..." + bytes.fromhex("00112233445566778899") + b"..." + b"a1b2c3d4e5f60718")
    digests = {
        "both here": ["0011223344556677", "a1b2c3d4e5f60718"],
        "one gone": ["0011223344556677", "ffffffffffffffff"],
    }
    report = erasure.scan_files([path], list(digests), digests=lambda p: digests[p])
    assert report.via == {0: ["digest"]} and not report.clean

"""Zeroing the gaps SQLite leaves in b-tree pages.

``secure_delete`` zeroes a cell where it lies when the cell is deleted. But
when SQLite rebalances a b-tree it writes a page's cells anew from the end
of the page, and the bytes between the cell pointers and the new content
stay as they were: copies of cells that now live elsewhere, or lower on the
same page. Delete such a cell later and its copy outlives it. (An attack
that wrote secrets early, then churned the store around them, found a
purged turn's text in the unallocated space of a ``turns`` page.)

So every page SQLite writes has its gap zeroed as it reaches the main file.
The store makes all its checkpoints itself (no automatic ones), and each,
holding the write lock, backfills the whole WAL, zeroes the gap of every
page the WAL held (``zero_gaps``), and has the WAL restarted, which
truncates it (``journal_size_limit=0``) with the old page images in it.

This writes the main file beside SQLite, so it touches only bytes SQLite
never reads: the gap of a page it can tell is a b-tree page. An overflow or
free-list trunk page starts with a page number, so its first byte is 0 or 1
while the file has fewer than 2**25 pages; pointer-map pages lie where the
file format puts them; free-list leaves hold nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

_WAL_HEADER = 32
_FRAME_HEADER = 24
# b-tree page types: interior index, interior table, leaf index, leaf table
_INTERIOR = (2, 5)
_LEAF = (10, 13)
# below this many pages no overflow or trunk page's first byte is a type byte
MAX_PAGES = 2**25


def wal_pages(wal: Path) -> set[int]:
    """The page numbers of every frame in the WAL file (those of an older
    WAL generation, if any, too: scrubbing a page twice costs a read)."""
    try:
        fd = os.open(wal, os.O_RDONLY)
    except FileNotFoundError:
        return set()
    try:
        size = os.fstat(fd).st_size
        if size < _WAL_HEADER:
            return set()
        page_size = int.from_bytes(os.pread(fd, 4, 8), "big")
        stride = page_size + _FRAME_HEADER
        return {
            int.from_bytes(os.pread(fd, 4, at), "big")
            for at in range(_WAL_HEADER, size - stride + 1, stride)
        }
    finally:
        os.close(fd)


def wal_salt(wal: Path) -> bytes | None:
    """The WAL header's salts: a restart of the WAL changes them."""
    try:
        with open(wal, "rb") as f:
            head = f.read(_WAL_HEADER)
    except FileNotFoundError:
        return None
    return head[16:24] if len(head) == _WAL_HEADER else None


def zero_gaps(db: Path, pages: Iterable[int]) -> int:
    """Zero the unallocated gap of each of ``pages`` that is a b-tree page
    of the main file; how many were written. Call it with every frame of
    the WAL backfilled and the write lock held, so that the main file holds
    the last version of each page and no one writes it meanwhile."""
    fd = os.open(db, os.O_RDWR)
    try:
        head = os.pread(fd, 100, 0)
        page_size = int.from_bytes(head[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        usable = page_size - head[20]
        count = os.fstat(fd).st_size // page_size
        if count >= MAX_PAGES:
            raise ValueError(f"{count} pages: past {MAX_PAGES} a page's kind is not told apart")
        vacuums = int.from_bytes(head[52:56], "big") != 0
        maps = _pointer_maps(count, page_size, usable) if vacuums else set()
        written = 0
        for page in sorted(pages):
            if not 1 <= page <= count or page in maps:
                continue
            at = (page - 1) * page_size
            data = os.pread(fd, page_size, at)
            gap = _gap(data, 100 if page == 1 else 0, usable)
            if gap is not None and data[gap[0] : gap[1]].count(0) != gap[1] - gap[0]:
                os.pwrite(fd, bytes(gap[1] - gap[0]), at + gap[0])
                written += 1
        if written:
            os.fsync(fd)
        return written
    finally:
        os.close(fd)


def _gap(data: bytes, hdr: int, usable: int) -> tuple[int, int] | None:
    """Where a b-tree page's unallocated gap lies, or None for a page that
    is no b-tree page or whose header does not add up."""
    kind = data[hdr]
    if kind not in _INTERIOR and kind not in _LEAF:
        return None
    cells = int.from_bytes(data[hdr + 3 : hdr + 5], "big")
    content = int.from_bytes(data[hdr + 5 : hdr + 7], "big") or 65536
    first = hdr + (12 if kind in _INTERIOR else 8) + 2 * cells
    if not first <= content <= usable:
        return None
    return first, content


def _pointer_maps(count: int, page_size: int, usable: int) -> set[int]:
    """The pointer-map pages of an auto-vacuum file of ``count`` pages: page
    2 and every ``usable // 5 + 1`` after it, one on from the page that
    holds the lock byte if it falls there (SQLite's ``ptrmapPageno``)."""
    locked = 2**30 // page_size + 1
    return {p + (p == locked) for p in range(2, count + 1, usable // 5 + 1)}

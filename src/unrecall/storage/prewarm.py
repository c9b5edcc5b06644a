"""Reading a SQLite store into the OS page cache once a process searches it.

A search at a million memories in one tenant reads ~4 MB of vector codes
and a few hundred rows from all over the file. After a restart these come
from the disk, one page at a time: a new process's first 200 searches took
126 ms p50 at 1M, and after 1,000 more, with a third of the file cached,
searches still took 32 ms (docs/benchmarks.md, issue #17, ninth round).
Read once in order, the 6.8 GB file was cached in 3.4–7.3 s, and every
later search ran on cached pages; MySQL loads its buffer pool at startup
for the same reason. The read starts when the first search is done: a first
search beside it took 5.4 s instead of 0.8. And by default only for a file
that takes at most ``SHARE`` of the memory the system has available, so
that it does not push out what other processes hold. Nothing is written.

The kernel reads each block into its cache (``POSIX_FADV_WILLNEED``), with
no copy into this process, and the thread waits for it by reading its last
byte, so that one block at a time is in flight. Copied in with ``read``
instead, at 1M, the searches during it waited up to 2.9–6.1 s (up to 1.0 s
this way), and a second process re-read the cached file with 1.1 s of CPU
(0.11 s this way). Where ``posix_fadvise`` is missing the read is skipped.

The kernel may drop part of such a read (it gives up under memory or I/O
pressure): 94.6 % of a file was cached once, under heavy writes beside it.
So each block is then checked page by page (``mincore``), and a block with
pages missing is read whole.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

# a search's page read waits behind at most one block
BLOCK = 1 << 20
# by default, warm a store only if it takes at most this share of the
# memory available (a 6.8 GB store at 1M on a 24 GB machine: yes; the
# 19 GB store of 3M memories: no)
SHARE = 0.5


def available_memory() -> int | None:
    """Bytes of memory the system has available (``MemAvailable`` in
    ``/proc/meminfo``), or None where that is not known (not Linux)."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


@functools.cache
def _mincore() -> Any:
    try:
        mincore = ctypes.CDLL(None, use_errno=True).mincore
    except (AttributeError, OSError, TypeError):  # (a libc without it, or none to load)
        raise OSError("mincore is not available here") from None
    mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    return mincore


def resident(mapped: mmap.mmap, at: int, size: int) -> np.ndarray:
    """Whether each page of ``mapped[at:at + size]`` is in the OS page cache
    or, where ``at`` is not a multiple of the page size, of the pages from
    the one it falls in (``mincore``, which reads nothing in). An OSError
    where the system cannot tell."""
    mincore = _mincore()
    at, size = at - at % mmap.PAGESIZE, size + at % mmap.PAGESIZE
    view = np.frombuffer(mapped, dtype=np.uint8)
    try:
        pages = np.zeros(-(-size // mmap.PAGESIZE), dtype=np.uint8)
        if mincore(view.ctypes.data + at, size, pages.ctypes.data) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
    finally:
        del view  # the map cannot close while a view holds it
    return (pages & 1).astype(bool)


class Prewarm:
    """The background read of one store file. ``mode`` True warms it
    whatever its size, False never, None when it fits (``SHARE``). The
    read starts at most once (``start``, after the first search), and
    ``state`` says what became of it: ``off``, ``waiting`` (for the first
    search), ``skipped`` (too large, the memory available unknown, or no
    ``posix_fadvise`` here), ``running``, ``done``, ``stopped`` (the store
    closed first) or ``failed`` (the file could not be read; searches read
    it as usual)."""

    def __init__(self, path: Path, mode: bool | None) -> None:
        self.path = path
        self.mode = mode
        self.state = "off" if mode is False else "waiting"
        self.seconds: float | None = None  # how long the read took, once done
        self.done = threading.Event()  # set when the read ends, however
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if mode is False:
            self.done.set()

    def start(self) -> None:
        """Start the read if it is due (cheap to call after every search)."""
        if self.state != "waiting":
            return
        with self._lock:
            if self.state != "waiting":
                return
            if not hasattr(os, "posix_fadvise") or (self.mode is None and not self._fits()):
                self.state = "skipped"
                self.done.set()
                return
            self.state = "running"
            self._thread = threading.Thread(target=self._read, name="unrecall-prewarm", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the read, if running, and wait for it (one block at most)."""
        self._stop.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()

    def _fits(self) -> bool:
        free = available_memory()
        try:
            size = self.path.stat().st_size
        except OSError:
            return False
        return free is not None and size <= SHARE * free

    def _blocks(self, fd: int, mapped: mmap.mmap, size: int) -> None:
        at, buffer = 0, bytearray(BLOCK)
        while at < size and not self._stop.is_set():
            n = min(BLOCK, size - at)
            os.posix_fadvise(fd, at, n, os.POSIX_FADV_WILLNEED)
            os.pread(fd, 1, at + n - 1)
            if not resident(mapped, at, n).all():
                os.preadv(fd, [memoryview(buffer)[:n]], at)
            at += n

    def _read(self) -> None:
        began = time.monotonic()
        try:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                size = os.fstat(fd).st_size
                if size:
                    # mapped only to ask which pages are cached: nothing is read through it
                    with mmap.mmap(fd, size, prot=mmap.PROT_READ) as mapped:
                        self._blocks(fd, mapped, size)
            finally:
                os.close(fd)
            if self._stop.is_set():
                self.state = "stopped"
            else:
                self.state, self.seconds = "done", time.monotonic() - began
        except OSError:
            self.state = "failed"
        finally:
            self.done.set()

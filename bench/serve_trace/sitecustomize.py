"""Where a served request's time goes, per worker thread: put this directory
on ``PYTHONPATH`` with ``UNRECALL_TRACE=DIR`` set, and every Python process
started then (the server's workers too) logs, for each ``add``, ``search``
and ``purge`` run by ``AsyncMemory``, the wait for a worker thread, the run,
its CPU, the wait for the store's connection lock, the wait in ``BEGIN
IMMEDIATE``, and how long it held the lock, to ``DIR/<pid>.jsonl``.

    UNRECALL_TRACE=/tmp/trace PYTHONPATH=bench/serve_trace \\
        python bench/serve_load.py --workers 2 --rate 100 --fresh-connections
    python bench/serve_trace/report.py /tmp/trace

A measuring aid for benchmarks only: it replaces the lock with a timed one.
"""

from __future__ import annotations

import os

if os.environ.get("UNRECALL_TRACE"):
    import asyncio
    import json
    import threading
    import time
    from typing import Any

    import unrecall.async_memory as am
    import unrecall.storage.sqlite as sq

    _local = threading.local()
    _out = os.path.join(os.environ["UNRECALL_TRACE"], f"{os.getpid()}.jsonl")

    def _add(name: str, value: float) -> None:
        setattr(_local, name, getattr(_local, name, 0.0) + value)

    class TimedRLock:
        """An RLock that charges waits and holds to the calling thread."""

        def __init__(self) -> None:
            self._lock = threading.RLock()
            self._depth = 0

        def acquire(self, blocking: bool = True) -> bool:
            if self._lock.acquire(blocking=False):
                got = True
            elif not blocking:
                return False
            else:
                began = time.perf_counter()
                got = self._lock.acquire()
                _add("lock", time.perf_counter() - began)
            self._depth += 1
            if self._depth == 1:
                _local.since = time.perf_counter()
            return got

        def release(self) -> None:
            self._depth -= 1
            if self._depth == 0:
                _add("held", time.perf_counter() - _local.since)
            self._lock.release()

        __enter__ = acquire

        def __exit__(self, *exc: object) -> None:
            self.release()

        def _is_owned(self) -> bool:
            return self._lock._is_owned()  # type: ignore[attr-defined]

    _init = sq.SQLiteStorage.__init__

    def _timed_init(self: Any, *args: Any, **kwargs: Any) -> None:
        _init(self, *args, **kwargs)
        self._lock = TimedRLock()

    sq.SQLiteStorage.__init__ = _timed_init  # type: ignore[method-assign]
    _begin = sq.SQLiteStorage._begin

    def _timed_begin(self: Any) -> None:
        began = time.perf_counter()
        _begin(self)
        _add("begin", time.perf_counter() - began)

    sq.SQLiteStorage._begin = _timed_begin  # type: ignore[method-assign]

    def _traced(name: str) -> Any:
        method = getattr(am.Memory, name)

        async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            queued = time.perf_counter()

            def call() -> Any:
                began, cpu = time.perf_counter(), time.thread_time()
                for field in ("lock", "begin", "held"):
                    setattr(_local, field, 0.0)
                out = method(self.sync, *args, **kwargs)
                record = {
                    "op": name,
                    "queue": began - queued,
                    "run": time.perf_counter() - began,
                    "cpu": time.thread_time() - cpu,
                    "lock": _local.lock,
                    "begin": _local.begin,
                    "held": _local.held,
                }
                with open(_out, "a") as fh:
                    fh.write(json.dumps(record) + "\n")
                return out

            return await asyncio.to_thread(call)

        return run

    for _name in ("add", "search", "purge"):
        setattr(am.AsyncMemory, _name, _traced(_name))

"""Public ids: 80 random bits, unique, and never shared with a forked child."""

from __future__ import annotations

import os
import re

from unrecall.storage.sqlite import _RANDOM, new_uid


def test_uids_have_the_documented_shape_and_do_not_repeat() -> None:
    uids = [new_uid("m") for _ in range(5000)]  # crosses many 4 KiB refills
    assert all(re.fullmatch(r"m_[0-9a-f]{20}", u) for u in uids)
    assert len(set(uids)) == len(uids)


def test_a_forked_child_draws_fresh_bytes() -> None:
    new_uid("m")  # the pool now holds unread bytes
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(r)
        os.write(w, new_uid("m").encode())
        os._exit(0)
    os.close(w)
    child = os.read(r, 64).decode()
    os.close(r)
    os.waitpid(pid, 0)
    assert child != new_uid("m")
    assert _RANDOM._pid == os.getpid()

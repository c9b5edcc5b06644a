"""What the benchmark harnesses share: a network guard, the Wilson interval,
the source revision, the CLI's progress reporter (``unrecall.progress``), and the
end of a run (keep earlier results of systems not re-run, write the outputs, print
the summary)."""

from __future__ import annotations

import argparse
import math
import socket
import subprocess
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from unrecall.progress import Progress

LOOPBACK = ("127.0.0.1", "::1")


@contextmanager
def network_guard(allow: Collection[tuple[str, int]] = ()) -> Iterator[list[str]]:
    """Refuse (and record) every IP connection and DNS lookup in the block.

    Unix sockets and socket pairs (event loops) stay allowed, and so do
    connections to the loopback ``(address, port)`` pairs in ``allow`` (a
    local model server). The yielded list collects ``host:port`` of each
    attempt.
    """
    allowed = {(host, port) for host, port in allow if host in LOOPBACK}
    attempts: list[str] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def blocked(sock: socket.socket, address: Any) -> bool:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and (
            (address[0], address[1]) not in allowed
        ):
            attempts.append(f"connect {address[0]}:{address[1]}")
            return True
        return False

    def connect(sock: socket.socket, address: Any) -> None:
        if blocked(sock, address):
            raise OSError("network disabled during the benchmark")
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if blocked(sock, address):
            return 111  # ECONNREFUSED
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if (host, port) in allowed:
            return real_getaddrinfo(host, port, *args, **kwargs)
        attempts.append(f"resolve {host}:{port}")
        raise socket.gaierror(socket.EAI_NONAME, "network disabled during the benchmark")

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield attempts
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo


def wilson(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a pass rate, in percent."""
    if n == 0:
        return (0.0, 0.0)
    p = passed / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (round(100 * max(0.0, mid - half), 2), round(100 * min(1.0, mid + half), 2))


def revision() -> str | None:
    """Short git revision of the working tree (``+dirty`` when it has local
    changes), or None outside a git checkout."""
    here = Path(__file__).parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", ":/src"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("+dirty" if dirty.strip() else "")


def chosen_systems(spec: str, known: Sequence[str]) -> list[str] | None:
    """The systems a comma-separated ``--systems`` names, or None (after an
    error line on stderr) when one is unknown or none is given."""
    systems = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [s for s in systems if s not in known]
    if unknown or not systems:
        print(
            f"error: unknown system(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(known)}",
            file=sys.stderr,
        )
        return None
    return systems


def reporter(args: argparse.Namespace) -> Progress:
    """The progress of a run started from the CLI: silent with ``--quiet``."""
    return Progress(quiet=bool(args.quiet))


class _Named(Protocol):
    name: str


R = TypeVar("R", bound=_Named)


def merge_kept(
    fresh: list[R], kept: Sequence[R], order: Sequence[str], progress: Callable[[str], None]
) -> list[R]:
    """This run's systems plus earlier results of systems not re-run (``--merge``:
    re-running unrecall after a change keeps the slow peers' verdicts), in
    ``order``."""
    rank = {n: i for i, n in enumerate(order)}
    if kept:
        progress("kept earlier results of " + ", ".join(r.name for r in kept))
    return sorted([*kept, *fresh], key=lambda r: rank.get(r.name, 99))


def finish(
    report: Any,
    out: Path,
    write_outputs: Callable[[Any, Path], dict[str, Path]],
    progress: Callable[[str], None],
) -> int:
    """Write a run's outputs, print its summary, return the exit status."""
    paths = write_outputs(report, out)
    print(paths["summary_md"].read_text(encoding="utf-8"))
    progress("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0

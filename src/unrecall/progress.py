"""Progress of long work on stderr: bench runs, migrations, compaction.

A ``Progress`` is what the CLI passes down: call it with a line, wrap a loop
in ``steps``, show an open-ended task with ``ticker``. Library callers pass
nothing (or a plain callable for lines) and get no bars; ``quiet`` silences
lines and bars alike.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


class Progress:
    """Progress on stderr: call it with a line, wrap a loop in ``steps``.
    Shown by default, TTY or not (a log of a long run should say how far it
    got); ``quiet`` silences both lines and bars."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def __call__(self, msg: str) -> None:
        if self.quiet:
            return
        from tqdm import tqdm  # here, not at the top: `unrecall --help` imports this module

        tqdm.write(msg, file=sys.stderr)  # above any bar, not through it
        sys.stderr.flush()


def _shown(progress: Callable[[str], None] | None) -> bool:
    return isinstance(progress, Progress) and not progress.quiet


def steps(
    progress: Callable[[str], None] | None, items: Sequence[T], desc: str, unit: str = "it"
) -> Iterator[T]:
    """``items`` in order, with a tqdm bar on stderr when ``progress`` is a
    ``Progress`` that is not quiet; a plain callable (a test's, a library
    caller's) or None gets no bar."""
    if not _shown(progress):
        yield from items
        return
    from tqdm import tqdm

    with tqdm(items, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True) as bar:
        yield from bar


@contextmanager
def ticker(progress: Callable[[str], None] | None, desc: str) -> Iterator[Callable[[], None]]:
    """A tick function for work of unknown length (SQLite's VACUUM): each
    tick moves an elapsed-time counter on stderr when ``progress`` shows
    bars, and does nothing otherwise."""
    if not _shown(progress):
        yield lambda: None
        return
    from tqdm import tqdm

    with tqdm(desc=desc, unit=" steps", file=sys.stderr, leave=False, dynamic_ncols=True) as bar:
        yield lambda: bar.update(1)

"""The byte scan behind ``verify_erased``, run as a script in a child process.

It reads files that a SQLite connection of the calling process holds open.
Closing any descriptor of a file drops every POSIX lock the process holds on
it, SQLite's included (https://sqlite.org/howtocorrupt.html, 2.2): another
process then takes the store for unused, checkpoints it and deletes the WAL
under the caller, whose later commits are lost. A child's closes drop only
the child's locks. The script imports nothing of unrecall, so it starts in
a few tens of milliseconds.

Protocol: one JSON object on stdin, ``{"files": [path], "needles": [hex],
"chunk": bytes}``; on stdout, per file, the count of each needle by index
(missing files count nothing). Nothing of a needle is ever printed.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

import ahocorasick


def count(path: str, needles: list[bytes], chunk_size: int) -> Counter[int]:
    """Occurrences of every needle (by index) in one file, in one streamed pass.

    Aho-Corasick finds every occurrence of every needle, overlapping ones
    included, so the cost is one read of the file however many probes and
    forms there are. Bytes are read as latin-1 text (one character a byte),
    and a chunk carries the tail of the one before, so a needle across the
    boundary is found once: by the chunk it ends in.
    """
    automaton = ahocorasick.Automaton()
    for i, needle in enumerate(needles):
        automaton.add_word(needle.decode("latin-1"), i)
    automaton.make_automaton()
    keep = max(map(len, needles)) - 1
    counts: Counter[int] = Counter()
    tail = b""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:  # removed since it was listed (a server's temp file): holds nothing
        return counts
    with f:
        while chunk := f.read(chunk_size):
            buf = tail + chunk
            for end, i in automaton.iter(buf.decode("latin-1")):
                if end >= len(tail):
                    counts[i] += 1
            tail = buf[-keep:] if keep else b""
    return counts


def main() -> None:
    """Answer one request from stdin on stdout."""
    request = json.load(sys.stdin)
    needles = [bytes.fromhex(n) for n in request["needles"]]
    counts = {p: count(p, needles, request["chunk"]) for p in request["files"]}
    json.dump({p: {str(i): n for i, n in c.items()} for p, c in counts.items()}, sys.stdout)


if __name__ == "__main__":
    main()

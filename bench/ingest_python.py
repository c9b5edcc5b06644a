"""The Python and SQLite part of ingest: texts/s with the hashing embedder.

``bench/perf.py`` measures ingest with the default MiniLM embedder, where
embedding dominates; this swaps in the near-free hashing embedder so what
remains is clause splitting, identifier and name keys, keyed digests, the
SQLite writes and the commit. Same corpus as ``perf.py``, batches of 32
messages. Usage::

    python bench/ingest_python.py [--texts 3000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf  # the corpus generator beside this script

from unrecall import Memory


def main() -> None:
    """Ingest the corpus in batches of 32 and print texts per second."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--texts", type=int, default=3000)
    n = p.parse_args().texts
    texts, _ = perf.make_corpus(n, perf.parse_args([]).seed)
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "ingest.db", embedder="hashing") as mem,
    ):
        mem.add(perf._messages(texts[:32]), user_id="u", honor_requests=False)  # warm-up
        start = time.perf_counter()
        for i in range(32, n, 32):
            mem.add(perf._messages(texts[i : i + 32]), user_id="u", honor_requests=False)
        seconds = time.perf_counter() - start
    print(f"{n - 32} texts in {seconds:.2f} s: {(n - 32) / seconds:.0f} texts/s "
          f"({seconds / (n - 32) * 1000:.2f} ms per text)")  # fmt: skip


if __name__ == "__main__":
    main()

"""Summarise a ``bench/serve_trace`` directory: p50 / p95 milliseconds of
each part of a request, per operation (the first fifth, the warm-up, left out).

    python bench/serve_trace/report.py DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FIELDS = ("queue", "run", "cpu", "lock", "begin", "held")


def main(directory: str) -> None:
    """Print one table row per operation."""
    records = [json.loads(line) for f in Path(directory).glob("*.jsonl") for line in f.open()]
    records = records[len(records) // 5 :]
    print("| op | n | " + " | ".join(f"{f} p50 / p95" for f in FIELDS) + " |")
    print("| --- | ---: |" + " ---: |" * len(FIELDS))
    for op in ("add", "search", "purge"):
        rows = [r for r in records if r["op"] == op]
        if not rows:
            continue
        cells = []
        for field in FIELDS:
            values = sorted(r[field] * 1000 for r in rows)
            p50, p95 = values[len(values) // 2], values[int(len(values) * 0.95)]
            cells.append(f"{p50:.1f} / {p95:.1f}")
        print(f"| {op} | {len(rows)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])

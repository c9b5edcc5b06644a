"""One tenant with 100k memories: export, get_all, a broad purge and
delete_all complete, in how long, and leave nothing behind (issue #12,
defect 5: past 32,766 memories they died on SQLite's variable limit).

The hashing embedder is used so that the store's own cost shows; memories
are added 1,000 chat messages per call, one memory per message.

    python bench/large_tenant.py --memories 100000 --out bench/results/large-tenant.json
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from unrecall import Memory

BATCH = 1000


def text(i: int) -> str:
    """Varied everyday facts; every second one names the word "alpha"."""
    topic = ("garden", "train", "dentist", "recipe", "invoice", "meeting")[i % 6]
    extra = " about alpha" if i % 2 == 0 else ""
    return f"note {i} on the {topic}{extra}, reference zq{i:07d}"


def run(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"memories": n, "python": platform.python_version()}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.db"
        with Memory(path, embedder="hashing") as mem:
            started = time.perf_counter()
            for b in range(0, n, BATCH):
                msgs = [{"role": "user", "content": text(i)} for i in range(b, min(n, b + BATCH))]
                mem.add(msgs, user_id="big", honor_requests=False)
            out["ingest_s"] = round(time.perf_counter() - started, 1)
            out["file_mb"] = round(sum(p.stat().st_size for p in mem.storage.files()) / 1e6, 1)

            def timed(name: str, fn: Any) -> Any:
                t = time.perf_counter()
                result = fn()
                out[f"{name}_s"] = round(time.perf_counter() - t, 2)
                return result

            held = timed("get_all", lambda: mem.get_all(user_id="big"))
            dump = timed("export", lambda: mem.export(user_id="big"))
            out["get_all_rows"], out["export_memories"] = len(held), len(dump["memories"])
            purge = timed("purge_broad", lambda: mem.purge("alpha", user_id="big"))
            out["purged"] = len(purge.ids)
            gone = timed("delete_all", lambda: mem.delete_all(user_id="big"))
            out["deleted"] = len(gone.ids)
            probes = [f"zq{i:07d}" for i in range(0, n, max(1, n // 200))]
            out["verify_clean"] = timed("verify", lambda: mem.verify_erased(probes).clean)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = run(args.memories)
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

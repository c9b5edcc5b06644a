"""SIGKILL a process in the middle of its forgets, reopen, and check two
promises (DESIGN.md, invariants 4 and 5):

- **atomic**: each secret is either still fully there (its memory active and
  found by search, its source turn saying it) or fully gone (no memory, no
  turn); never half of each;
- **erased at commit**: a secret that is gone is in no byte of any file of
  the store once it is open again, with no clean shutdown in between (a
  crash between a forget's commit and its checkpoint leaves the old pages
  in the main file; opening the store must push them out).

A victim process writes filler and secrets and forgets each secret by one
of five paths (purge by id, purge by phrase, delete of the source turn,
delete_all of a tenant, update), logging each secret (fsync) before it is
written. The parent kills it after a random delay, opens the store, and
checks every logged secret. ``--trials 300`` is the issue #12 target run;
the test suite runs a few trials.

    python bench/crash.py --trials 300 --out bench/results/crash.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# secrets a victim has logged, at least, before the random delay to its kill
MIN_LOGGED = 3
PATHS = ("purge_id", "purge_phrase", "delete_turn", "delete_all", "update")


def victim(folder: Path, seed: int) -> None:
    """Write and forget secrets until killed."""
    from unrecall import Memory

    rng = random.Random(seed)
    log = open(folder / "secrets.log", "a")  # noqa: SIM115 - lives until the kill
    with Memory(folder / "store.db", embedder="hashing") as mem:
        for i in range(10_000):
            how = PATHS[i % len(PATHS)]
            secret = f"zqcrash{seed}x{i}y{rng.randrange(10**6):06d}"
            user = f"tenant{i}" if how == "delete_all" else "u"
            log.write(f"{secret} {user} {how}\n")
            log.flush()
            os.fsync(log.fileno())
            mem.add(f"filler {i} about the weather and the garden", user_id="u")
            report = mem.add(f"my pin for box {i} is {secret} and I like tea", user_id=user)
            mid = report.ids[0]
            if how == "purge_id":
                mem.purge(mid, user_id=user)
            elif how == "purge_phrase":
                mem.purge(secret, user_id=user)
            elif how == "delete_turn":
                mem.delete(mem.get(mid, user_id=user).sources[0], user_id=user)
            elif how == "delete_all":
                mem.delete_all(user_id=user)
            else:
                mem.update(mid, f"my pin for box {i} was changed", user_id=user)


def check(folder: Path) -> dict[str, Any]:
    """Open the killed store and judge every logged secret."""
    from unrecall import Memory

    lines = (folder / "secrets.log").read_text().split("\n")
    logged = [line.split() for line in lines if line.count(" ") == 2]
    violations: list[str] = []
    gone = present = 0
    with Memory(folder / "store.db", embedder="hashing") as mem:
        raw = b"".join(p.read_bytes() for p in folder.iterdir() if p.name.startswith("store.db"))
        for secret, user, how in logged:
            dump = mem.export(user_id=user)
            in_memories = [m for m in dump["memories"] if secret in m["text"]]
            in_turns = [t for t in dump["turns"] if secret in t["text"]]
            if not in_memories and not in_turns:
                gone += 1
                if secret.encode() in raw or not mem.verify_erased([secret]).clean:
                    violations.append(f"{how}: gone but still on disk")
                continue
            present += 1
            hits = mem.search(secret, user_id=user, k=3, mode="lexical")
            if not (
                len(in_memories) == 1
                and in_memories[0]["state"] == "active"
                and in_turns
                and any(secret in h.text for h in hits)
            ):
                violations.append(f"{how}: half forgotten")
        if mem.storage._scalar("PRAGMA integrity_check") != "ok":
            violations.append("integrity_check failed")
        if not mem.verify_audit().ok:
            violations.append("audit chain broken")
    return {"logged": len(logged), "gone": gone, "present": present, "violations": violations}


def trial(seed: int, rng: random.Random) -> dict[str, Any]:
    """One kill at a random moment, then the check."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        child = subprocess.Popen(
            [sys.executable, __file__, "--victim", str(folder), "--seed", str(seed)],
            stderr=subprocess.PIPE,
        )
        # The random moment counts from the victim's k-th logged secret, not
        # from a clock: importing and opening take ~0.4 s on an idle machine
        # and seconds on a loaded one, and an operation from ms to seconds,
        # so a delay alone left some trials one secret or none to check.
        log, deadline = folder / "secrets.log", time.monotonic() + 120
        wanted = rng.randint(MIN_LOGGED, MIN_LOGGED + 3)
        while child.poll() is None and time.monotonic() < deadline:
            if log.exists() and log.read_bytes().count(b"\n") >= wanted:
                break
            time.sleep(0.01)
        time.sleep(rng.uniform(0.2, 1.6))
        child.send_signal(signal.SIGKILL)
        _, err = child.communicate()
        if child.returncode != -signal.SIGKILL:
            return {"logged": 0, "gone": 0, "present": 0, "violations": [err.decode()[-400:]]}
        if not (folder / "secrets.log").exists():
            return {"logged": 0, "gone": 0, "present": 0, "violations": []}
        return check(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--victim", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.victim is not None:
        victim(args.victim, args.seed)
        return
    rng = random.Random(args.seed)
    totals = {"trials": 0, "logged": 0, "gone": 0, "present": 0, "violations": 0}
    examples: list[str] = []
    started = time.perf_counter()
    for t in range(args.trials):
        result = trial(args.seed * 100_000 + t, rng)
        totals["trials"] += 1
        for key in ("logged", "gone", "present"):
            totals[key] += result[key]
        totals["violations"] += len(result["violations"])
        examples += result["violations"][:2]
    totals["seconds"] = round(time.perf_counter() - started, 1)
    out = {**totals, "examples": examples[:20]}
    print(json.dumps(out, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2) + "\n")
    sys.exit(1 if totals["violations"] else 0)


if __name__ == "__main__":
    main()

"""Load on ``unrecall serve``: throughput, latency and lost writes.

The store is seeded through the library (``--memories`` per tenant, 1,000
messages per ``add``), one API key per tenant is made straight in the file,
then the server starts on a free loopback port and ``--clients`` threads,
each with its tenant's key, run a mix of add, search and purge for
``--warmup`` seconds untimed, then ``--seconds`` timed (and at most
``--max-requests`` each). Closed loop (the default) measures capacity:
each client sends its next request when the last is answered, so latency
is the queue of 16 clients. ``--rate`` makes it open loop: requests are
due at a fixed total rate and latency counts from when each was due.
Afterwards every acknowledged add that was not purged must be in its
tenant's memories: ``lost_writes`` must be 0. Traffic goes to 127.0.0.1 only.

    python bench/serve_load.py --memories 10000 --clients 16 --seconds 20 \
        --workers 2 --rate 100 --fresh-connections --out bench/results/serve-load
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import psutil

from unrecall import Memory
from unrecall.interfaces.keys import KeyStore, Tenant

BATCH = 1000
TOPICS = ("garden", "train", "dentist", "recipe", "invoice", "meeting", "holiday", "bike")
NAMES = ("Ana", "Ben", "Chidi", "Dana", "Eli", "Farah", "Goran", "Hana")
ADD_SHARE = 0.5  # of requests; search takes what add and purge leave


def fact(rng: random.Random, tag: str) -> str:
    """One single-clause everyday fact, unique by ``tag``."""
    return (
        f"{rng.choice(NAMES)} booked the {rng.choice(TOPICS)} for week {rng.randint(1, 52)}"
        f" under reference {tag}"
    )


def mix(purge: float) -> tuple[tuple[str, float], ...]:
    """Shares of the operations, with ``purge`` of the requests purges.
    (Each purge checkpoints the WAL so the bytes are gone when it returns:
    ``--purge-share 0`` measures add and search alone.)"""
    return (("add", ADD_SHARE), ("search", 1 - ADD_SHARE - purge), ("purge", purge))


def owner(text: str, tenants: int) -> int | None:
    """The tenant a fact was written to, from its reference tag
    (``s<tenant>x…`` seeded, ``c<client>x…`` by a client)."""
    m = re.search(r"reference ([sc])(\d+)x", text)
    if m is None:
        return None
    return int(m.group(2)) if m.group(1) == "s" else int(m.group(2)) % tenants


def query(rng: random.Random) -> str:
    """A question about the facts, rarely the same twice."""
    return (
        f"when is {rng.choice(NAMES)}'s {rng.choice(TOPICS)}"
        f" booking, around week {rng.randint(1, 52)}?"
    )


def seed(path: Path, tenants: int, n: int, embedder: str) -> tuple[list[str], float]:
    """Fill the store and make one key per tenant; returns the keys and seconds taken."""
    rng = random.Random(7)
    started = time.perf_counter()
    keys = []
    with Memory(path, embedder=embedder) as mem:
        store = KeyStore(mem.storage)
        for t in range(tenants):
            user = f"tenant-{t}"
            for b in range(0, n, BATCH):
                msgs = [
                    {"role": "user", "content": fact(rng, f"s{t}x{i}")}
                    for i in range(b, min(n, b + BATCH))
                ]
                mem.add(msgs, user_id=user, honor_requests=False)
            keys.append(store.create(Tenant(user, None))[1])
    return keys, time.perf_counter() - started


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(path: Path, port: int, workers: int, embedder: str, logs: Path) -> subprocess.Popen:
    """Start the server and wait for ``/healthz``."""
    cmd = [sys.executable, "-m", "unrecall.interfaces.cli", "serve", "--db", str(path)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    cmd += ["--embedder", embedder, "--log-level", "warning"]
    proc = subprocess.Popen(cmd, stdout=logs.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}); see {logs}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    proc.terminate()
    raise SystemExit("the server did not come up in 300 s")


class Client(threading.Thread):
    """One client: a mix of add, search and purge on its tenant until the deadline."""

    def __init__(
        self, url: str, key: str, index: int, window: tuple[float, float], args: argparse.Namespace
    ) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.index = url, key, index
        # requests run until window[1]; only those begun at window[0] or
        # later are timed (before it: the warm-up)
        (self.measure_from, self.deadline), self.cap = window, args.max_requests
        self.rng = random.Random(index)
        # Open loop: one request every ``interval`` s, from a random phase;
        # latency counts from when a request was due, so a server that falls
        # behind is charged for the wait (no coordinated omission).
        self.interval = None if args.rate is None else args.clients / args.rate
        # A new connection per request lets the kernel hand each to an idle
        # worker; kept-alive connections stay with the worker that took them.
        self.fresh = args.fresh
        self.tenants = args.tenants  # client i writes to tenant i % tenants
        self.mix = mix(args.purge_share)
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        # ids of each acknowledged add; a purge of one id may take its
        # siblings (clauses of the same turn), so it exempts the whole add
        self.acked: list[list[str]] = []
        self.purged: set[int] = set()  # adds a purge was asked for (acknowledged or not)
        self.foreign = 0  # search hits whose reference tag is another tenant's

    def _op(self) -> str:
        x = self.rng.random()
        for name, share in self.mix:
            if x < share:
                return name
            x -= share
        return self.mix[-1][0]

    def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        limits = httpx.Limits(max_keepalive_connections=0 if self.fresh else None)
        with httpx.Client(base_url=self.url, headers=headers, timeout=120, limits=limits) as http:
            done = 0
            due = time.monotonic() + self.rng.random() * (self.interval or 0.0)
            while time.monotonic() < self.deadline and done < self.cap:
                done += 1
                if self.interval is not None:
                    time.sleep(max(0.0, due - time.monotonic()))
                    began, due = due, due + self.interval
                op = self._op()
                live = [i for i in range(len(self.acked)) if i not in self.purged]
                if op == "purge" and not live:
                    op = "add"
                if op == "add":
                    body: dict[str, Any] = {"text": fact(self.rng, f"c{self.index}x{done}")}
                elif op == "search":
                    # varied, so that the query-embedding cache does not answer
                    body = {"query": query(self.rng), "k": 5}
                else:
                    group = self.rng.choice(live)
                    self.purged.add(group)
                    body = {"target": self.acked[group][0]}
                if self.interval is None:
                    began = time.monotonic()
                try:
                    r = http.post(f"/v1/memories/{op}", json=body)
                except httpx.HTTPError:
                    self.errors[f"{op}:transport"] += 1
                    continue
                if began >= self.measure_from:
                    self.latency[op].append(time.monotonic() - began)
                if r.status_code != 200:
                    self.errors[f"{op}:{r.status_code}"] += 1
                elif op == "add":
                    self.acked.append(list(r.json()["ids"]))
                elif op == "search":
                    mine = self.index % self.tenants
                    self.foreign += sum(
                        owner(h["text"], self.tenants) != mine for h in r.json()["hits"]
                    )


def lost_writes(url: str, clients: list[Client]) -> tuple[int, int]:
    """Acknowledged, unpurged adds missing from their tenant (and how many were checked)."""
    lost = checked = 0
    by_key: dict[str, list[Client]] = defaultdict(list)
    for c in clients:
        by_key[c.key].append(c)
    for key, group in by_key.items():
        r = httpx.post(
            f"{url}/v1/memories/list",
            json={"states": ["active", "released", "superseded"]},
            headers={"Authorization": f"Bearer {key}"},
            timeout=600,
        )
        r.raise_for_status()
        held = {m["id"] for m in r.json()["memories"]}
        for c in group:
            for n, ids in enumerate(c.acked):
                if n not in c.purged:
                    checked += len(ids)
                    lost += sum(mid not in held for mid in ids)
    return lost, checked


def pct(values: list[float], q: float) -> float | None:
    """The q-quantile in milliseconds (None without values)."""
    if not values:
        return None
    if len(values) == 1:
        return round(values[0] * 1000, 2)
    return round(statistics.quantiles(values, n=100)[int(q * 100) - 1] * 1000, 2)


def markdown(result: dict[str, Any]) -> str:
    """The summary as a markdown table."""
    s = result["settings"]
    lines = [
        "# unrecall serve under load",
        "",
        f"{s['memories']} memories per tenant x {s['tenants']} tenants, {s['clients']} clients,"
        f" {s['workers']} worker(s), {s['embedder']} embedder, {result['seconds']:.1f} s,"
        + (" closed loop," if s["rate"] is None else f" {s['rate']:g} req/s offered,")
        + (" a connection per request;" if s["fresh_connections"] else " kept-alive connections;")
        + " mix "
        + ", ".join(f"{op} {share:.2f}" for op, share in s["mix"].items())
        + f"; seeding took {result['seed_seconds']:.1f} s.",
        "",
        f"Throughput: **{result['throughput_rps']:.1f} req/s** ({result['requests']} requests);"
        f" errors: **{sum(result['errors'].values())}**; lost writes: **{result['lost_writes']}**"
        f" of {result['checked_writes']} acknowledged adds; search hits of another tenant:"
        f" **{result['cross_tenant_hits']}**. CPU in cores: server"
        f" {result['server_cores']}, load generator {result['load_generator_cores']}.",
        "",
        "| operation | requests | p50 ms | p95 ms |",
        "| --- | ---: | ---: | ---: |",
    ]
    for op, row in result["operations"].items():
        lines.append(f"| {op} | {row['requests']} | {row['p50_ms']} | {row['p95_ms']} |")
    if result["errors"]:
        lines += ["", "Errors: " + ", ".join(f"{k} x{v}" for k, v in result["errors"].items())]
    return "\n".join(lines) + "\n"


def seeded(args: argparse.Namespace, tmp: str) -> tuple[Path, list[str], float]:
    """The store to load: seeded in ``tmp``, or ``--store`` as an earlier
    run left it (its keys beside it), so repeated runs skip the seeding."""
    if args.store is None:
        path = Path(tmp) / "load.db"
        return path, *seed(path, args.tenants, args.memories, args.embedder)
    saved = args.store.with_name(args.store.name + ".keys.json")
    if args.store.exists() and saved.exists():
        return args.store, json.loads(saved.read_text()), 0.0
    keys, seconds = seed(args.store, args.tenants, args.memories, args.embedder)
    saved.write_text(json.dumps(keys))
    return args.store, keys, seconds


def cpu_seconds(proc: psutil.Process) -> float:
    """User plus system CPU of a process and its live children."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed, serve, load, check; the summary as a dict."""
    with tempfile.TemporaryDirectory() as tmp:
        path, keys, seed_s = seeded(args, tmp)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start(path, port, args.workers, args.embedder, args.out / "server.log")
        try:
            began = time.monotonic() + args.warmup
            window = (began, began + args.seconds)
            clients = [
                Client(url, keys[i % len(keys)], i, window, args) for i in range(args.clients)
            ]
            for c in clients:
                c.start()
            time.sleep(max(0.0, began - time.monotonic()))
            server = psutil.Process(proc.pid)
            cpu = (cpu_seconds(server), time.process_time())
            for c in clients:
                c.join()
            elapsed = time.monotonic() - began
            cores = (
                (cpu_seconds(server) - cpu[0]) / elapsed,
                (time.process_time() - cpu[1]) / elapsed,
            )
            lost, checked = lost_writes(url, clients)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    latency: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    for c in clients:
        for op, values in c.latency.items():
            latency[op].extend(values)
        for k, v in c.errors.items():
            errors[k] += v
    total = sum(len(v) for v in latency.values())
    return {
        "settings": {
            "memories": args.memories,
            "tenants": args.tenants,
            "clients": args.clients,
            "workers": args.workers,
            "embedder": args.embedder,
            "seconds": args.seconds,
            "warmup_seconds": args.warmup,
            "rate": args.rate,
            "fresh_connections": args.fresh,
            "mix": dict(mix(args.purge_share)),
        },
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "seed_seconds": round(seed_s, 2),
        "seconds": round(elapsed, 2),
        "requests": total,
        "throughput_rps": round(total / elapsed, 2) if elapsed else 0.0,
        # CPU used in the timed window, in cores (of os.cpu_count())
        "server_cores": round(cores[0], 2),
        "load_generator_cores": round(cores[1], 2),
        "operations": {
            op: {"requests": len(v), "p50_ms": pct(v, 0.5), "p95_ms": pct(v, 0.95)}
            for op, v in sorted(latency.items())
        },
        "errors": dict(sorted(errors.items())),
        "lost_writes": lost,
        "cross_tenant_hits": sum(c.foreign for c in clients),
        "checked_writes": checked,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--memories", type=int, default=10_000, help="seeded memories per tenant")
    p.add_argument("--tenants", type=int, default=2)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20.0, help="measured, after the warm-up")
    p.add_argument(
        "--warmup",
        type=float,
        default=5.0,
        help="seconds of the same load first, not timed (each worker's first"
        " search of a tenant loads its vectors)",
    )
    p.add_argument(
        "--rate",
        type=float,
        default=None,
        help="offered requests/s over all clients (open loop); default: each client"
        " sends its next request when the last is answered (closed loop, capacity)",
    )
    p.add_argument("--max-requests", type=int, default=100_000, help="per client, a bound")
    p.add_argument("--workers", type=int, default=1, help="server processes")
    p.add_argument("--purge-share", type=float, default=0.1, help="share of requests that purge")
    p.add_argument(
        "--fresh-connections",
        dest="fresh",
        action="store_true",
        help="a new connection per request (default: one kept-alive connection per client)",
    )
    p.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    p.add_argument(
        "--store",
        type=Path,
        help="seed this file once and reuse it (keys beside it) instead of a fresh store",
    )
    p.add_argument("--out", type=Path, default=Path("bench/results/serve-load"))
    args = p.parse_args(argv)
    if min(args.memories, args.tenants, args.clients, args.workers, args.max_requests) < 1:
        p.error("counts must be positive")
    if args.rate is not None and not 0 < args.rate <= 10_000:
        p.error("--rate must be in (0, 10000]")
    if not 0 <= args.purge_share <= 1 - ADD_SHARE:
        p.error(f"--purge-share must be in [0, {1 - ADD_SHARE}]")
    if not 0 <= args.warmup <= 600:
        p.error("--warmup must be in [0, 600]")
    if not 0 < args.seconds <= 3600:
        p.error("--seconds must be in (0, 3600]")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the load and write ``summary.json`` and ``summary.md`` to ``--out``."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    result = run(args)
    (args.out / "summary.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "summary.md").write_text(markdown(result))
    print(markdown(result))
    return 1 if result["lost_writes"] or result["cross_tenant_hits"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Cost of one long text (issue #12, defect 9).

One journal-like text of each ``--sizes`` characters (generated prose:
varied sentences, names, places, numbers, dates, a few emails, phones and
order ids) is stored with ``add`` in a fresh store, then

* ``search``  - a hybrid query for a fact said near the end of the text;
* ``purge``   - a phrase said near the end ("heron tattoo on her left ankle");
* ``delete``  - the source turn (``t_...``), with closure;
* ``forget``  - a fact of the text ("forget that Verolin Quastry has a heron
  tattoo"), on a copy of the store as it was after ``add``;
* ``message`` - ``add`` of the same text as one chat message, in a fresh
  store: the path that also reads it for forget requests.

The ``hashing`` embedder is used for every size so the library's own cost
shows (``--default-sizes`` repeats the small sizes with MiniLM). Each size
runs in a child process with a ``--timeout``: an operation that has not
finished by then is shown as ``> T``. The table gives seconds and seconds
per 1k characters: flat columns mean cost linear in the text length.

Usage::

    python bench/long_text.py                       # 32k .. 10M, hashing; 32k, 128k MiniLM
    python bench/long_text.py --sizes 32000 128000 --default-sizes --timeout 120
    python bench/long_text.py --functions 64000 256000   # text functions per shape

``--functions`` times the text functions a long text goes through
(clause splitting, the turn's term document, the entity graph of one memory
holding it all, forget-request detection) on four shapes: the journal, a
transcript without punctuation, an identifier-dense contact list, and one
long sentence of dotted dates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = [32_000, 128_000, 512_000, 2_000_000, 10_000_000]
DEFAULT_SIZES = [32_000, 128_000]
OPS = ("add", "search", "purge", "delete", "forget", "message")
USER = "journal"

NEEDLE = (
    "Verolin Quastry showed me the heron tattoo on her left ankle while we waited"
    " at the Dunmore ferry terminal."
)
PURGE_PHRASE = "heron tattoo on her left ankle"
SEARCH_QUERY = "who has a heron tattoo?"
FORGET_REQUEST = "forget that Verolin Quastry has a heron tattoo"

FIRST = (
    "Aisha Alba Amir Ana Andre Arjun Ben Bianca Bruno Camila Carlos Chen Clara Dana Diego"
    " Elena Emil Farah Felix Fiona Gabriel Grace Hana Hugo Ines Ingrid Isaac Ivan Jade Jamal"
    " Jonas Julia Kai Kenji Kiran Lara Leo Lina Lucas Maya Marco Marta Mateo Mei Miguel Nadia"
    " Naomi Nico Nora Olga Omar Oscar Paula Pedro Priya Rafael Rosa Ruth Sam Sofia Tara Theo"
    " Tomas Uma Victor Vera Wei Yara Yusuf Zara Zoe"
).split()
LAST = (
    "Abbott Adler Alvarez Banerjee Bauer Brandt Castillo Chowdhury Costa Dahl Dubois Eriksen"
    " Fischer Fontaine Garcia Gupta Hahn Haddad Ito Ivanova Jansen Kapoor Keller Kowalski"
    " Larsen Lebrun Lopez Mahmoud Marino Meyer Moreau Nakamura Novak Okafor Ortiz Patel Petrov"
    " Quinn Ramos Reyes Rossi Sato Schmidt Silva Singh Tanaka Torres Vargas Vogel Walsh Weber"
    " Wong Yilmaz Zhang"
).split()
PLACES = (
    "Lisbon Porto Madrid Lyon Paris Brussels Utrecht Hamburg Berlin Vienna Zurich Milan Turin"
    " Naples Athens Prague Krakow Riga Helsinki Oslo Bergen Dublin Cork Edinburgh Leeds"
    " Bristol Cardiff Istanbul Cairo Nairobi Accra Mumbai Pune Hanoi Seoul Osaka Kyoto Taipei"
    " Sydney Auckland Toronto Montreal Boston Denver Austin Seattle Lima Quito Santiago"
).split()
PLACES_IN = "the market,the library,the station,the harbour,the clinic,the park,the office".split(
    ","
)
ACTIVITIES = (
    "went hiking,baked sourdough,repaired the bike,read a novel,painted the fence,"
    "cooked a curry,walked the dog,practised the cello,visited the museum,planted tomatoes,"
    "cleaned the attic,wrote letters,watched a documentary,tried a new cafe,swam laps"
).split(",")
FEELINGS = "tired,cheerful,restless,calm,anxious,proud,curious,grateful,homesick,focused".split(",")
WEATHER = "rainy,windy,sunny,foggy,humid,freezing,mild,stormy,bright,grey".split(",")
FOODS = (
    "ramen pho tacos paella risotto gnocchi falafel dumplings curry kimchi tempura ceviche"
    " empanadas pierogi goulash moussaka tapas bagels pancakes tiramisu baklava"
).split()
MONTHS = (
    "January February March April May June July August September October November December"
).split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
DOMAINS = "gmail.com proton.me outlook.com fastmail.com example.org".split()
ADJ = (
    "quiet long strange lovely slow busy odd short cold warm noisy gentle bright heavy"
    " careful lazy happy muddy crowded empty"
).split()
NOUNS = (
    "afternoon morning evening meeting walk dinner call trip visit lesson errand"
    " conversation weekend shift appointment"
).split()


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _sentence(rng: random.Random) -> str:
    """One journal sentence; about one in five holds an identifier or a number."""
    p, q = _person(rng), rng.choice(FIRST)
    place = rng.choice(PLACES)
    day, month = rng.choice(DAYS), rng.choice(MONTHS)
    n = rng.randint(2, 99)
    kind = rng.randrange(14)
    if kind == 0:
        return (
            f"On {day} {rng.randint(1, 28)} {month} I met {p} in {place} for {rng.choice(FOODS)}."
        )
    if kind == 1:
        return (
            f"It was a {rng.choice(ADJ)} {rng.choice(NOUNS)}, {rng.choice(WEATHER)} and"
            f" {rng.choice(WEATHER)}, and I felt {rng.choice(FEELINGS)}."
        )
    if kind == 2:
        return f"{q} {rng.choice(ACTIVITIES)} with me near {rng.choice(PLACES_IN)} in {place}."
    if kind == 3:
        user = f"{q.lower()}.{rng.choice(LAST).lower()}{rng.randint(1, 99)}"
        return f"{p} gave me a new email address, {user}@{rng.choice(DOMAINS)}, for the newsletter."
    if kind == 4:
        return (
            f"The train to {place} left {n} minutes late, so I {rng.choice(ACTIVITIES)}"
            " instead of working."
        )
    if kind == 5:
        return (
            f"My order ORD-{rng.randint(10000, 99999)} from the shop in {place} arrived"
            f" on {day} and cost {n} euros."
        )
    if kind == 6:
        return (
            f"{q}'s phone number is +351 9{rng.randint(10, 99)} {rng.randint(100, 999)}"
            f" {rng.randint(100, 999)} and she prefers texts to calls."
        )
    if kind == 7:
        return f"I {rng.choice(ACTIVITIES)} and then {rng.choice(ACTIVITIES)} before dinner."
    if kind == 8:
        return (
            f"{p} told me about the {rng.choice(ADJ)} {rng.choice(NOUNS)} she had in"
            f" {place} last {month}."
        )
    if kind == 9:
        food, other = rng.choice(FOODS), rng.choice(FOODS)
        return f"Spent {n} euros on {food} and {other} at {rng.choice(PLACES_IN)}."
    if kind == 10:
        return f"Dr. {rng.choice(LAST)} moved my appointment to {day} at {rng.randint(8, 17)}:30."
    if kind == 11:
        return (
            f"We talked for {n} minutes about {q}'s plans to move to {place} and whether"
            " the rent there is worth it."
        )
    if kind == 12:
        return f"Is {q} still coming on {day}?"
    return f"The {rng.choice(WEATHER)} weather kept me inside, so I {rng.choice(ACTIVITIES)}."


def journal(chars: int, seed: int = 12) -> str:
    """About ``chars`` characters of journal prose in paragraphs, with
    ``NEEDLE`` said at 95 % of the way through."""
    rng = random.Random(seed)
    parts: list[str] = []
    size, needle_at, placed = 0, int(chars * 0.95), False
    para: list[str] = []
    while size < chars - len(NEEDLE) - 2:
        s = NEEDLE if not placed and size >= needle_at else _sentence(rng)
        placed = placed or s == NEEDLE
        para.append(s)
        size += len(s) + 1
        if len(para) >= rng.randint(3, 7):
            parts.append(" ".join(para))
            para = []
    if not placed:
        para.append(NEEDLE)
    if para:
        parts.append(" ".join(para))
    return "\n\n".join(parts)[:chars]


def transcript(chars: int, seed: int = 3) -> str:
    """Speech-to-text without punctuation: lowercase, many "my" and "i don't"."""
    rng = random.Random(seed)
    vocab = (
        "my mum said i don't know but our dog and my sister were calling about the"
        " flat so i told her we could go to lisbon on friday if it's not raining"
    ).split()
    return " ".join(rng.choice(vocab) for _ in range(chars // 4))[:chars]


def contacts(chars: int, seed: int = 5) -> str:
    """A pasted contact list: one identifier-dense line per person."""
    rng = random.Random(seed)
    lines, size = [], 0
    while size < chars:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        line = (
            f"{first} {last}, {first.lower()}.{last.lower()}{rng.randint(1, 99)}"
            f"@{rng.choice(DOMAINS)}, +351 9{rng.randint(10, 99)} {rng.randint(100, 999)}"
            f" {rng.randint(100, 999)}, ORD-{rng.randint(10000, 99999)}"
        )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:chars]


def dated(chars: int) -> str:
    """German diary lines with dotted dates ("am 19. Mai"): one long sentence."""
    return ("am 19. Mai kam er. " * (chars // 19 + 1))[:chars]


SHAPES = {"journal": journal, "transcript": transcript, "contacts": contacts, "dated": dated}


def functions(sizes: list[int]) -> str:
    """Seconds of the text functions a long text goes through, per shape."""
    from unrecall.dialogue.requests import detect
    from unrecall.recall.clauses import split_clauses
    from unrecall.recall.entities import EntityGraph
    from unrecall.recall.lexical import TermHasher

    hasher = TermHasher(b"k" * 16)
    fns = {
        "split_clauses": split_clauses,
        "document": hasher.document,  # words, identifiers, names of the whole turn
        "entity graph": lambda t: EntityGraph.build([(1, t)]),  # one memory of it all
        "detect": detect,  # forget-request reading of a chat message
    }
    lines = ["| shape | chars | " + " | ".join(f"{f} s" for f in fns) + " |"]
    lines.append("|---|---:|" + "---:|" * len(fns))
    for shape, make in SHAPES.items():
        for n in sizes:
            text, cells = make(n), []
            for fn in fns.values():
                t = time.perf_counter()
                fn(text)
                cells.append(f"{time.perf_counter() - t:.3f}")
            lines.append(f"| {shape} | {n:,} | " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


# --------------------------------------------------------------------------
# One size, in a child process
# --------------------------------------------------------------------------


def _emit(op: str, seconds: float, **extra: object) -> None:
    print(json.dumps({"op": op, "s": round(seconds, 4), **extra}), flush=True)


def _copy_store(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        p = Path(f"{src}{suffix}")
        if p.exists():
            shutil.copyfile(p, f"{dst}{suffix}")


def _timed(op: str, fn, describe) -> object:  # type: ignore[no-untyped-def]
    """Run ``fn``, print its time (or the error it raised) as one JSON line."""
    t = time.perf_counter()
    try:
        out = fn()
    except Exception as exc:  # an error at this size is a result too
        _emit(op, time.perf_counter() - t, error=type(exc).__name__)
        return None
    _emit(op, time.perf_counter() - t, **describe(out))
    return out


def child(chars: int, embedder: str, workdir: Path) -> None:
    """Time each operation on one text and print one JSON line per operation."""
    from unrecall import Memory

    text = journal(chars)
    limit = max(chars, 32_000)
    db, snap = workdir / "a.db", workdir / "b.db"
    from unrecall.storage.vector_lists import int8_scan

    int8_scan()  # a one-time import (onnx, ~0.8 s) on the first large vector scan
    with Memory(db, embedder=embedder, max_text_chars=limit) as mem:
        mem.search("warm up", user_id="warm")  # model load is not the text's cost
        report = _timed(
            "add", lambda: mem.add(text, user_id=USER), lambda r: {"memories": len(r.ids)}
        )
        if report is None:
            return
        turn = report.detail["turns"][0]
        _timed(
            "search",
            lambda: mem.search(SEARCH_QUERY, user_id=USER, k=5),
            lambda hits: {"found": any("heron" in h.text for h in hits)},
        )
    _copy_store(db, snap)
    with Memory(db, embedder=embedder, max_text_chars=limit) as mem:
        _timed(
            "purge",
            lambda: mem.purge(PURGE_PHRASE, user_id=USER),
            lambda r: {"purged": len(r.ids), "match": r.match, "turns": r.turns_removed},
        )
        _timed("delete", lambda: mem.delete(turn, user_id=USER), lambda r: {"deleted": len(r.ids)})
    with Memory(snap, embedder=embedder, max_text_chars=limit) as mem:
        _timed(
            "forget",
            lambda: mem.forget(FORGET_REQUEST, user_id=USER),
            lambda f: {"removed": len(f.removed), "turns": f.turns_removed},
        )
    with Memory(workdir / "c.db", embedder=embedder, max_text_chars=limit) as mem:
        _timed(
            "message",
            lambda: mem.add([{"role": "user", "content": text}], user_id=USER, session_id="s"),
            lambda r: {"memories": len(r.ids), "requests": len(r.requests)},
        )


def run_size(chars: int, embedder: str, timeout: float) -> dict[str, dict]:
    """Run ``child`` in a subprocess; operations not done by ``timeout`` are missing."""
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="unrecall-long-") as tmp:
        cmd = [sys.executable, __file__, "--child", str(chars), embedder, tmp]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        try:
            import selectors

            sel = selectors.DefaultSelector()
            assert proc.stdout is not None
            sel.register(proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                    break
                line = proc.stdout.readline()
                if not line:
                    break
                row = json.loads(line)
                results[row["op"]] = row
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    return results


def _cell(row: dict | None, chars: int, timeout: float) -> tuple[str, str]:
    if row is None:
        return f"> {timeout:.0f}", "-"
    if "error" in row:
        return f"{row['error']} ({row['s']:.1f})", "-"
    return f"{row['s']:.3f}", f"{row['s'] / chars * 1000 * 1000:.2f}"


def table(rows: list[tuple[int, str, dict[str, dict]]], timeout: float) -> str:
    head = "| chars | embedder | memories |"
    sep = "|---:|---|---:|"
    for op in OPS:
        head += f" {op} s | {op} ms/1k |"
        sep += "---:|---:|"
    lines = [head, sep]
    for chars, emb, res in rows:
        mems = res.get("add", {}).get("memories", "-")
        cells = [f"{chars:,}", emb, str(mems)]
        for op in OPS:
            cells += list(_cell(res.get(op), chars, timeout))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=SIZES)
    ap.add_argument(
        "--default-sizes",
        type=int,
        nargs="*",
        default=DEFAULT_SIZES,
        help="sizes repeated with the default (MiniLM) embedder; none to skip",
    )
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per size")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument(
        "--functions",
        type=int,
        nargs="*",
        help="instead, time the text functions on each shape at these sizes",
    )
    args = ap.parse_args()
    if args.functions:
        print(functions(args.functions))
        return
    plan = [(n, "hashing") for n in args.sizes] + [(n, "minilm") for n in args.default_sizes]
    rows = []
    for chars, emb in plan:
        res = run_size(chars, emb, args.timeout)
        rows.append((chars, emb, res))
        print(f"{chars:>10,} {emb:8}", {k: v["s"] for k, v in res.items()}, file=sys.stderr)
    print(
        f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores,"
        f" Python {platform.python_version()}; timeout {args.timeout:.0f} s per size\n"
    )
    print(table(rows, args.timeout))
    checks = {
        f"{c}/{e}": {k: {x: y for x, y in v.items() if x not in ("op", "s")} for k, v in r.items()}
        for c, e, r in rows
    }
    print("\nchecks:", json.dumps(checks))
    if args.json:
        args.json.write_text(
            json.dumps([{"chars": c, "embedder": e, "ops": r} for c, e, r in rows])
        )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
    else:
        main()

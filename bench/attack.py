"""An outside attacker against unrecall's hard forgets: what the closed files still say.

For each kind of hard forget a fresh store is written through the public API
(everyday filler for the victim and another user, then 30 secret memories of
the victim: 15 four-digit PINs and 15 six-digit codes, each sentence carrying
uncommon *context words* that no kept memory uses), the 30 secrets are
forgotten that way and the store is closed. With ``--crash`` the same is also
done in a child process that is SIGKILLed right after the forget returns; a
new process then opens the store once (``Memory(path)``, ``close()``).

Then the files are attacked as an outsider would: copies of ``x.db`` (and
``-wal`` / ``-shm``), the library's source and the key stored in the file,
read with apsw (FTS5, sqlite-vec) or as raw bytes. No unrecall API call reads
the victim store. Three channels, each counted per secret (*recovered*: the
evidence singles out the true value; *narrowed*: at most 10 candidates are
left, the true one among them):

* plaintext - the value (standalone, next to words of its sentence) and the
  context words in the raw bytes, UTF-8 and UTF-16-LE, case forms; where the
  hits lie (freelist page, WAL, unallocated / freeblock space of a b-tree
  page, a live row);
* digests - the keyed full-text digests the library writes
  (``store_digests``, keyed with the key stored in the file), computed for
  every 4- and 6-digit value and every context word, looked for as hex and
  binary in the raw bytes, in each FTS5 vocabulary (``fts5vocab``, row and
  instance), among the postings of deleted rows that the FTS5 leaves still
  hold (``fts_postings``: parsed from ``*_data``, which also gives each
  deleted document's word order, so whole sentences are rebuilt), as
  prefixes among the separator terms of each ``*_idx`` table, and in every
  other table's cells;
* vectors - every embedding-like float32 run that belongs to no live memory
  (vec0 chunk slots, any ``dim*4``-byte blob, a raw scan of every page and
  WAL frame), inverted by nearest cosine against the secret sentences filled
  with the 30 true values and 300 decoys, and against the context vocabulary.

A control row writes the secrets and forgets nothing: it must show 30/30 by
plaintext and digests, and the vectors attack pointed at the live secret
vectors must invert them, so that a 0 elsewhere means a closed channel, not a
blind attack.

With ``--small-lists`` the SQLite store's vector lists are made small, so
that the victim's vectors are also written to second lists (schema v8), and
each row's notes count them. With ``--churn N`` the victim also writes N
memories before the secrets and N after them, and half of the first and a
third of the second are purged before the secrets are forgotten: SQLite
rebalances the pages the secrets lie in, and moves their cells. With
``--mid-upgrade`` the secrets are forgotten while the store is as the v8
upgrade leaves it: the old vector lists, the secrets' codes in them, set
aside to be deleted a step at a time (``schema.OLD_LISTS``), every vector
waiting to be listed anew. The closed store is attacked with the old lists
still there; in crash mode the reopening deletes them and lists anew.

    python bench/attack.py [--kinds all|k1,k2] [--crash] [--small-lists] [--churn N]
                           [--mid-upgrade] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

from unrecall import Memory
from unrecall.recall.embedder import make_embedder
from unrecall.recall.lexical import STOPWORDS, TermHasher
from unrecall.recall.lexical import words as lexical_words

SEED = 20240611
DIM = 384
N_SECRETS = 30  # 15 PINs then 15 codes
N_DECOYS = 300  # decoy values per secret template in the vector inversion
NARROW = 10  # "narrowed": at most this many candidates, the true one among them
# An inverted vector counts only this close to its guess: a forgotten
# sentence's own vector gives ~1.0, an unrelated one stays far below.
MIN_COS = 0.9
VICTIM, OTHER, AGENT = "victim", "other", "a1"

KINDS = (
    "purge_id",
    "purge_identifier",
    "purge_phrase",
    "purge_released",
    "purge_superseded",
    "delete_memory",
    "delete_turn",
    "delete_all",
    "delete_all_scope",
    "dialogue_request",
    "trail_forget",
    "expire_purge",
    "update",
)
CONTROL = "control"  # the secrets are written and nothing is forgotten

# ---------------------------------------------------------------------------
# The victim's data: filler, secrets and the context vocabulary
# ---------------------------------------------------------------------------

# ~300 uncommon words; each secret draws one or two, the rest are the decoys
# of the attacker's dictionary. None of them may occur in a kept memory.
VOCABULARY = tuple(
    """abacus abalone abattoir acanthus accordion adze aerie agate albatross alcove almanac
    alpaca amaranth amethyst anchovy anemone anvil apiary aqueduct archipelago armadillo
    armoire artichoke astrolabe atoll aubergine auger aviary awning azalea badger bagpipe
    balustrade bandolier banjo banister barnacle barometer basalt bassoon bayonet belfry
    bellows bergamot bittern blunderbuss bobbin bollard bonsai borage bramble brazier
    breakwater brisket buckthorn bugle bulrush burlap buttress cairn calabash caldera camphor
    candelabra capstan caraway carburetor cardamom caribou carillon cartwheel cassock
    catamaran cauldron chalice chamois chandelier chervil chiffon chisel cinnabar cistern
    citadel clarinet clavichord cloister cobblestone cockatoo codex colander conch coracle
    cormorant cornice corset cottonwood coyote crevasse crocus crossbow crucible cudgel
    culvert cupola curlew cutlass cypress damask decanter derrick dinghy dirigible dolmen
    dormer dovetail drawbridge dulcimer dungeon easel eiderdown elderberry emery ermine
    escarpment falconry fathom fennel ferret fiddlehead filigree firkin flagon flotilla
    foxglove fresco funicular gable galleon gargoyle garnet gazebo geyser gherkin gimlet
    ginkgo gondola gooseberry gorse granary griffin grotto guillotine gunwale gyroscope
    halberd harpsichord hawthorn heliotrope hemlock hickory hourglass hyacinth ibex icicle
    inkwell isthmus jackdaw javelin juniper kestrel kettledrum kiln kingfisher kumquat
    labyrinth lacquer ladle larch lattice ledger lichen linden locket loom lute lychee
    magnolia mahogany malachite mandolin mangrove marimba marjoram marmot marquee marzipan
    mastodon meadowlark medallion menhir meringue mesa metronome mica millstone minaret
    mistletoe moat mongoose monocle moraine mosaic mulberry musket narwhal nasturtium
    nautilus nectarine nettle nutmeg oboe obsidian ocelot ocarina octant oleander onyx oriel
    osprey ottoman oxbow paddock pagoda palisade pangolin papyrus parapet parchment parsnip
    partridge pelican pendulum periscope persimmon pewter pheasant piccolo pinnacle
    pistachio plinth plover poncho porcupine portcullis primrose prism pumice quail quarry
    quince quiver rampart rapier rattan reliquary rhubarb rosewood rotunda rowan saffron
    sandalwood sapphire sarcophagus sassafras satchel scabbard scallop scarab sconce scythe
    sextant sickle silo skylark sleigh sluice snorkel sorrel spindle spinnaker stalactite
    starling stirrup sycamore tambourine tamarind tapestry tarragon terrapin thimble thistle
    thresher tinderbox toboggan topaz tortoise totem trebuchet trellis trident trombone
    trowel tuba turret turquoise ukulele valise verbena vestibule viaduct walrus
    weathervane wheelbarrow whetstone wicker windlass wisteria woodpecker wren yarrow yew
    zeppelin zinnia zither""".split()
)

# (sentence, how the user names it in a request). One clause each (no "and",
# "but" or ";"), so that one secret is one memory; {a} and {b} are context words.
PIN_TEMPLATES = (
    ("My bank card PIN is {v}, I keep it in the {a} wallet", "card PIN"),
    ("The PIN for my debit card is {v}, written inside the {a} notebook", "debit card PIN"),
    ("My phone unlock PIN is {v}, the same digits as the {a} {b} box", "phone PIN"),
    ("The alarm PIN at the {a} cottage is {v}", "alarm PIN"),
    ("My credit union PIN is {v}, hidden behind the {a} {b} frame", "credit union PIN"),
    ("The PIN for the {a} garage keypad is {v}", "garage PIN"),
    ("My voicemail PIN is {v}, noted on the {a} calendar", "voicemail PIN"),
    ("The tablet PIN is {v}, taped under the {a} {b} tray", "tablet PIN"),
    ("My savings account PIN is {v}, remembered from the {a} song", "savings PIN"),
    ("The safe in the {a} study opens with PIN {v}", "safe PIN"),
    ("My SIM card PIN is {v}, stored with the {a} {b} receipts", "SIM PIN"),
    ("The PIN for the {a} gym door is {v}", "gym PIN"),
    ("My laptop PIN is {v}, scribbled on the {a} postcard", "laptop PIN"),
    ("The PIN of my travel card is {v}, kept in the {a} {b} pouch", "travel card PIN"),
    ("The bike lock PIN is {v}, chosen after the {a} trip", "bike lock PIN"),
)
CODE_TEMPLATES = (
    ("The code for the storage locker is {v}, beside the {a} shelf", "locker code"),
    ("My one-time login code is {v}, sent for the {a} portal", "login code"),
    ("The door code at the {a} {b} flat is {v}", "door code"),
    ("The recovery code for my email is {v}, printed near the {a} lamp", "recovery code"),
    ("The gate code for the {a} allotment is {v}", "gate code"),
    ("My pharmacy pickup code is {v}, linked to the {a} {b} order", "pharmacy code"),
    ("The parcel locker code is {v}, at the {a} station", "parcel code"),
    ("The backup code for my bank app is {v}, saved in the {a} folder", "backup code"),
    ("The wifi code at the {a} {b} cabin is {v}", "wifi code"),
    ("The entry code for the {a} building is {v}", "entry code"),
    ("My verification code is {v}, requested from the {a} kiosk", "verification code"),
    ("The combination for the {a} {b} trunk is {v}", "trunk combination"),
    ("The office alarm code is {v}, next to the {a} cabinet", "office alarm code"),
    ("The reset code for the {a} router is {v}", "router code"),
    ("My membership code is {v}, tied to the {a} {b} club", "membership code"),
)

# Everyday filler: no digits, no context word (checked in make_plan).
_WHO = (
    "I",
    "We",
    "My sister",
    "My neighbour",
    "Our team",
    "My brother",
    "The kids",
    "My partner",
)
_DID = (
    "went for a long walk by the river",
    "baked a loaf of sourdough bread",
    "watched a documentary about the ocean",
    "cleaned out the garden shed",
    "tried a new recipe with lentils",
    "listened to an old jazz record",
    "painted the fence a pale green",
    "visited the farmers market",
    "read a mystery novel in the park",
    "fixed the squeaky kitchen door",
    "planted tomatoes on the balcony",
    "had lunch at the noodle place",
    "took the train to the coast",
    "played board games with friends",
    "sorted the laundry",
    "called grandma to say hello",
    "rearranged the living room",
    "went swimming at the public pool",
    "wrote a letter to an old friend",
    "repaired a flat tyre on the bicycle",
)
_WHEN = (
    "on Sunday morning",
    "after work",
    "before breakfast",
    "last weekend",
    "in the evening",
    "during the holidays",
    "yesterday afternoon",
    "on a rainy day",
)
_OTHER_SAID = (
    "I prefer green tea over coffee",
    "My favourite colour is blue",
    "I am learning to play the guitar",
    "I enjoy hiking in the mountains",
    "My cat likes to sleep on the sofa",
    "I usually cycle to the office",
)


@dataclass(frozen=True)
class Secret:
    """One secret memory of the victim and the handles the forgets use."""

    index: int
    kind: str  # "pin" (4 digits) or "code" (6 digits)
    value: str
    template: str  # the sentence with {v} left open (the attacker knows it)
    text: str
    context: tuple[str, ...]
    label: str  # how the user names it ("card PIN")
    phrase: str  # a phrase of the sentence only this secret has


@dataclass(frozen=True)
class Plan:
    """Everything one run writes, made the same way in every process from a seed."""

    secrets: tuple[Secret, ...]
    victim_filler: tuple[str, ...]
    other_filler: tuple[str, ...]


def _phrase(text: str, word: str) -> str:
    """Three tokens around a context word: a phrase unique to its sentence."""
    tokens = re.findall(r"\w+", text)
    i = tokens.index(word)
    return " ".join(tokens[max(0, i - 1) : i + 2])


def make_plan(seed: int = SEED) -> Plan:
    """Draw the 30 secrets (distinct values, no year-like PIN needed) and the filler."""
    rng = random.Random(seed)
    words = list(VOCABULARY)
    rng.shuffle(words)
    values: set[str] = set()
    secrets: list[Secret] = []
    for i, (template, label) in enumerate([*PIN_TEMPLATES, *CODE_TEMPLATES]):
        kind = "pin" if i < len(PIN_TEMPLATES) else "code"
        width = 4 if kind == "pin" else 6
        while True:
            value = f"{rng.randrange(10**width):0{width}d}"
            if value not in values:
                break
        values.add(value)
        need = template.count("{a}") + template.count("{b}")
        context = tuple(words.pop() for _ in range(need))
        fill = dict(zip("ab", context, strict=False))
        text = template.format(v=value, a=fill.get("a", ""), b=fill.get("b", ""))
        # the attacker's template: context words in, value open
        open_template = template.replace("{v}", "\x00").format(
            a=fill.get("a", ""), b=fill.get("b", "")
        )
        secrets.append(
            Secret(
                i,
                kind,
                value,
                open_template.replace("\x00", "{v}"),
                text,
                context,
                label,
                _phrase(text, context[0]),
            )
        )
    combos = [f"{w} {d} {t}" for w in _WHO for d in _DID for t in _WHEN]
    rng.shuffle(combos)
    victim = tuple(combos[:60])
    other = tuple(f"{s}, {combos[60 + i].split(' ', 1)[1]}" for i, s in enumerate(_OTHER_SAID * 5))
    kept_tokens = {t for s in victim + other for t in re.findall(r"\w+", s.casefold())}
    assert not kept_tokens & set(VOCABULARY), "a context word occurs in a kept memory"
    assert not any(re.search(r"\d", s) for s in victim + other), "filler must hold no digits"
    return Plan(tuple(secrets), victim, other[:30])


# ---------------------------------------------------------------------------
# The victim's side: write through the public API, forget by one kind
# ---------------------------------------------------------------------------


def write_and_forget(mem: Memory, kind: str, plan: Plan) -> dict[str, Any]:
    """Write the filler and the secrets, forget the secrets by ``kind``.

    Returns what the API said it removed (per secret, by memory id) and what
    the store's own export still shows; the store is left open, so that the
    caller closes it or is killed.
    """
    for text in plan.victim_filler:
        mem.add(text, user_id=VICTIM)
    for text in plan.other_filler:
        mem.add(text, user_id=OTHER)
    churn = int(os.environ.get(CHURN, "0"))
    before = _churn(mem, plan, churn, "earlier")
    holders: list[list[str]] = []  # memory ids holding each secret
    said: list[list[dict[str, Any]]] = []  # dialogue: what each request reported
    for s in plan.secrets:
        if kind == "dialogue_request":
            session = f"s{s.index}"
            r = mem.add([{"role": "user", "content": s.text}], user_id=VICTIM, session_id=session)
            # the request is said in the secret's own session, right after it
            req = mem.add(
                [{"role": "user", "content": f"please forget my {s.label}"}],
                user_id=VICTIM,
                session_id=session,
            )
            said.append([q.to_dict() for q in req.requests])
        elif kind == "delete_all_scope":
            r = mem.add(s.text, user_id=VICTIM, agent_id=AGENT)
        elif kind == "expire_purge":
            r = mem.add(s.text, user_id=VICTIM, ttl=1)
        else:
            r = mem.add(s.text, user_id=VICTIM)
        holders.append(list(r.created or r.ids))
    if churn:
        # memories around the secrets, and a share of them purged: SQLite
        # rebalances the pages the secrets lie in, and moves their cells
        rng = random.Random(SEED)
        later = _churn(mem, plan, churn, "later")
        gone = rng.sample(before, churn // 2) + rng.sample(later, churn // 3)
        for mid in gone:
            mem.purge(mid, user_id=VICTIM)
        churned = {"written": 2 * churn, "purged": len(gone)}
    if os.environ.get(MID_UPGRADE):
        # the store as the v8 upgrade leaves it (no public call does this): the
        # lists, the secrets' codes in them, set aside to be deleted a step at
        # a time, and every vector waiting to be listed anew
        from unrecall.storage.schema import RELIST

        with mem.storage.transaction():
            for stmt in RELIST:
                mem.storage._write(stmt)
    # the victim's tenant id, read before a delete_all drops the tenant row
    # (the attacker could tell it from the terms' tags: "t<id>x...")
    victim_tid = mem.storage.tenant(f"user:{VICTIM}", False)
    removed: set[str] = set()
    notes: dict[str, Any] = {}
    if os.environ.get(SMALL_LISTS):
        # proof that there were second lists to attack
        notes["victim_vectors_in_second_lists"] = mem.storage._scalar(
            "SELECT count(*) FROM memory_vectors WHERE tenant_id = ? AND spill IS NOT NULL",
            (victim_tid,),
        )
    if churn:
        notes["churn"] = churned
    if os.environ.get(MID_UPGRADE):
        notes["old_list_rows_before_the_forget"] = mem.storage._scalar(
            "SELECT count(*) FROM old_vector_chunks"
        )
    if kind == "dialogue_request":
        notes["requests_detected"] = sum(bool(reqs) for reqs in said)
        notes["request_matches"] = _count(q["match"] for reqs in said for q in reqs)
        notes["rewritten"] = sum(len(q["rewritten"]) for reqs in said for q in reqs)
        for q in (q for reqs in said for q in reqs):
            removed.update(q["removed"] + q["rewritten"])
    elif kind == CONTROL:
        pass
    elif kind in ("delete_all", "delete_all_scope"):
        scope = {"agent_id": AGENT} if kind == "delete_all_scope" else {}
        removed.update(mem.delete_all(user_id=VICTIM, **scope).ids)
    elif kind == "expire_purge":
        time.sleep(1.2)  # ttl=1 has passed
        removed.update(mem.expire(purge=True).ids)
    else:
        for s, ids in zip(plan.secrets, holders, strict=True):
            mid = ids[0]
            if kind == "purge_id":
                r = mem.purge(mid, user_id=VICTIM)
            elif kind == "purge_identifier":
                r = mem.purge(s.value, user_id=VICTIM)
            elif kind == "purge_phrase":
                r = mem.purge(s.phrase, user_id=VICTIM)
            elif kind == "purge_released":
                mem.release(mid, user_id=VICTIM)
                r = mem.purge(mid, user_id=VICTIM)
            elif kind == "purge_superseded":
                mem.supersede(mid, "That note is out of date now", user_id=VICTIM)
                r = mem.purge(mid, user_id=VICTIM)
            elif kind == "delete_memory":
                r = mem.delete(mid, user_id=VICTIM)
            elif kind == "delete_turn":
                r = mem.delete(mem.get(mid, user_id=VICTIM).sources[0], user_id=VICTIM)
            elif kind == "update":
                r = mem.update(mid, "This note was corrected", user_id=VICTIM)
            elif kind == "trail_forget":
                f = mem.forget(f"forget my {s.label} {s.value}", user_id=VICTIM)
                removed.update(f.removed + f.rewritten)
                continue
            else:
                raise ValueError(f"unknown kind {kind}")
            removed.update(r.ids)
    # The victim's own view through the API (not the attacker's): does the
    # store's export of the tenant still show the value?
    export = json.dumps(mem.export(user_id=VICTIM))
    secret_ids = {i for ids in holders for i in ids}
    return {
        "claimed": [bool(ids) and set(ids) <= removed for ids in holders],
        "export_clean": [not _standalone_in(s.value, export) for s in plan.secrets],
        "secret_ids": holders,
        "other_removed": len(removed - secret_ids),
        "victim_tid": victim_tid,
        "notes": notes,
    }


def _churn(mem: Memory, plan: Plan, n: int, when: str) -> list[str]:
    """``n`` more memories of the victim's, worded like its filler, 32 a
    call; their ids."""
    texts = [
        f"{plan.victim_filler[i % len(plan.victim_filler)]} ({when} note {i})" for i in range(n)
    ]
    ids: list[str] = []
    for at in range(0, n, 32):
        batch = [{"role": "user", "content": t} for t in texts[at : at + 32]]
        ids += mem.add(batch, user_id=VICTIM).ids
    return ids


def _standalone_in(value: str, text: str) -> bool:
    return re.search(rf"(?<![0-9A-Za-z]){value}(?![0-9A-Za-z])", text) is not None


def _crash_child(kind: str, path: str, seed: int, conn: Any) -> None:
    """Write and forget, report, then wait to be SIGKILLed (no close)."""
    mem = Memory(path)
    conn.send(write_and_forget(mem, kind, make_plan(seed)))
    time.sleep(3600)


def _reopen_child(path: str) -> None:
    """The next process to use the store: open it once and close it."""
    Memory(path).close()


def run_victim(kind: str, path: Path, seed: int, crash: bool) -> dict[str, Any]:
    """One store written and forgotten, left closed on disk (see the module doc)."""
    if not crash:
        mem = Memory(path)
        info = write_and_forget(mem, kind, make_plan(seed))
        mem.close()
        return info
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_crash_child, args=(kind, str(path), seed, child))
    proc.start()
    if not parent.poll(600):
        proc.kill()
        raise RuntimeError(f"{kind}: the writer did not report")
    info = parent.recv()
    os.kill(proc.pid, signal.SIGKILL)  # right after the forget returned
    proc.join()
    info["at_kill"] = {p.name: p.stat().st_size for p in _store_files(path)}
    reopen = ctx.Process(target=_reopen_child, args=(str(path),))
    reopen.start()
    reopen.join()
    return info


def _store_files(path: Path) -> list[Path]:
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]


# ---------------------------------------------------------------------------
# The attacker's view of the files: raw bytes, pages, and a SQL copy
# ---------------------------------------------------------------------------


@dataclass
class Evidence:
    """The closed store as the attacker holds it."""

    files: dict[str, bytes]  # "db", "wal", "shm" -> raw bytes
    db: apsw.Connection  # a copy, opened with SQLite (FTS5, vec0)
    page_size: int
    freelist: set[int]
    slack: dict[int, list[tuple[int, int, str]]]  # page -> (start, end, kind) in-file offsets
    owners: dict[int, str]  # page -> the table or index it belongs to (dbstat)

    def where(self, name: str, offset: int) -> str:
        """Where a hit lies: ``wal``, ``shm``, ``freelist``, or, on a b-tree
        page, ``unallocated`` / ``freeblock`` / ``cell`` with the page's owner."""
        if name != "db":
            return name
        page = offset // self.page_size + 1
        if page in self.freelist:
            return "freelist"
        owner = self.owners.get(page, "?")
        for start, end, what in self.slack.get(page, ()):
            if start <= offset < end:
                return f"{what}:{owner}"
        return f"cell:{owner}"


def _freelist(db: bytes, page_size: int) -> set[int]:
    """Trunk and leaf pages of the freelist (header offset 32: first trunk)."""
    pages: set[int] = set()
    trunk = int.from_bytes(db[32:36], "big")
    while trunk and trunk not in pages and trunk * page_size <= len(db):
        pages.add(trunk)
        base = (trunk - 1) * page_size
        n = int.from_bytes(db[base + 4 : base + 8], "big")
        for k in range(min(n, page_size // 4 - 2)):
            pages.add(int.from_bytes(db[base + 8 + 4 * k : base + 12 + 4 * k], "big"))
        trunk = int.from_bytes(db[base : base + 4], "big")
    return pages


def _slack(db: bytes, page_size: int, freelist: set[int]) -> dict[int, list[tuple[int, int, str]]]:
    """The unallocated gap and the freeblocks of every b-tree page: space
    that holds no live cell, where a stale copy would hide."""
    out: dict[int, list[tuple[int, int, str]]] = {}
    for page in range(1, len(db) // page_size + 1):
        if page in freelist:
            continue
        base = (page - 1) * page_size
        hdr = base + (100 if page == 1 else 0)
        kind = db[hdr]
        if kind not in (2, 5, 10, 13):
            continue  # overflow page (or not a b-tree page)
        head = 8 if kind in (10, 13) else 12
        cells = int.from_bytes(db[hdr + 3 : hdr + 5], "big")
        content = int.from_bytes(db[hdr + 5 : hdr + 7], "big") or 65536
        regions = [(hdr + head + 2 * cells, base + content, "unallocated")]
        block, seen = int.from_bytes(db[hdr + 1 : hdr + 3], "big"), set()
        while block and block not in seen and block < page_size:
            seen.add(block)
            size = int.from_bytes(db[base + block + 2 : base + block + 4], "big")
            regions.append((base + block, base + block + size, "freeblock"))
            block = int.from_bytes(db[base + block : base + block + 2], "big")
        out[page] = regions
    return out


def load_evidence(path: Path, work: Path) -> Evidence:
    """Read every file raw, and open a copy of the database with SQLite."""
    files = {"db": path.read_bytes()}
    for suffix in ("wal", "shm"):
        p = Path(f"{path}-{suffix}")
        if p.exists():
            files[suffix] = p.read_bytes()
    copy = work / "copy.db"
    shutil.copy(path, copy)
    if files.get("wal"):
        Path(f"{copy}-wal").write_bytes(files["wal"])
    db = apsw.Connection(str(copy))
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    raw = files["db"]
    page_size = int.from_bytes(raw[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    freelist = _freelist(raw, page_size)
    try:  # the dbstat table names the owner of every page in use
        owners = {p: n for n, p in db.execute("SELECT name, pageno FROM dbstat")}
    except apsw.SQLError:
        owners = {}
    return Evidence(files, db, page_size, freelist, _slack(raw, page_size, freelist), owners)


def ordinary_tables(db: apsw.Connection) -> list[str]:
    """Every table that stores rows itself (shadow tables included)."""
    return [
        name
        for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        if not (sql or "").upper().startswith("CREATE VIRTUAL")
    ]


def fts_tables(db: apsw.Connection) -> list[str]:
    """The FTS5 virtual tables of the store."""
    return [
        name
        for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        if "USING FTS5" in (sql or "").upper()
    ]


def cells(db: apsw.Connection, tables: Iterable[str]) -> Iterable[tuple[str, Any]]:
    """(table, value) for every non-null cell of the tables."""
    for table in tables:
        for row in db.execute(f'SELECT * FROM "{table}"'):
            for value in row:
                if value is not None:
                    yield table, value


# ---------------------------------------------------------------------------
# Channel 1: plaintext
# ---------------------------------------------------------------------------

_ASCII_ALNUM = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ASCII_ALPHA = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _occurrences(blob: bytes, needle: bytes) -> Iterable[int]:
    at = blob.find(needle)
    while at >= 0:
        yield at
        at = blob.find(needle, at + 1)


def _bounded(blob: bytes, at: int, n: int, width: int, inner: frozenset[int]) -> bool:
    """No word character right before or after the hit (in its encoding)."""

    def is_word(pos: int) -> bool:
        if pos < 0 or pos + width > len(blob):
            return False
        if width == 2 and blob[pos + 1] != 0:
            return True  # a non-ASCII UTF-16 unit: treat as a letter
        return blob[pos] in inner

    return not is_word(at - width) and not is_word(at + n)


def _anchors(s: Secret) -> set[str]:
    """Words of the secret's sentence that tell what a nearby value is."""
    words = {w.casefold() for w in re.findall(r"[A-Za-z]+", s.template)}
    return {w for w in words if len(w) >= 3 and w not in STOPWORDS}


def attack_plaintext(ev: Evidence, secrets: Sequence[Secret]) -> list[dict[str, Any]]:
    """Values and context words in the raw bytes and in the live rows.

    A value hit counts as a recovery when words of its sentence lie within
    200 characters of it: the attacker reads "PIN is 4417" and is done. It is
    narrowed when the file holds at most ``NARROW`` standalone digit runs of
    its length, the true one among them.
    """
    pools: dict[int, set[str]] = {4: set(), 6: set()}
    for blob in ev.files.values():
        for n in pools:
            for enc, width in (("utf-8", 1), ("utf-16-le", 2)):
                pat = (
                    re.compile(rb"\d{%d}" % n) if width == 1 else re.compile(rb"(?:\d\x00){%d}" % n)
                )
                for m in pat.finditer(blob):
                    if _bounded(blob, m.start(), m.end() - m.start(), width, _ASCII_ALNUM):
                        pools[n].add(m.group(0).decode(enc))
    live_text: list[tuple[str, str]] = []
    for table, value in cells(ev.db, ordinary_tables(ev.db)):
        if isinstance(value, str):
            live_text.append((table, value))
        elif isinstance(value, bytes) and len(value) < 1 << 20:
            live_text.append((table, value.decode("utf-8", "ignore")))
    out = []
    for s in secrets:
        anchors = _anchors(s)
        hits: list[dict[str, Any]] = []
        recovered = False
        for name, blob in ev.files.items():
            for enc, width in (("utf-8", 1), ("utf-16-le", 2)):
                needle = s.value.encode(enc)
                for at in _occurrences(blob, needle):
                    if not _bounded(blob, at, len(needle), width, _ASCII_ALNUM):
                        continue
                    lo = max(0, at - 200 * width)
                    lo -= (at - lo) % width
                    window = blob[lo : at + len(needle) + 200 * width].decode(enc, "ignore")
                    near = bool(anchors & set(re.findall(r"[a-z]+", window.casefold())))
                    recovered |= near
                    hits.append(
                        {"file": name, "enc": enc, "where": ev.where(name, at), "near": near}
                    )
        live = sorted(
            {t for t, text in live_text if _standalone_in(s.value, text)}
        )  # SQL-visible rows that still hold the value
        recovered |= any(
            _standalone_in(s.value, text) and anchors & set(re.findall(r"[a-z]+", text.casefold()))
            for _, text in live_text
        )
        pool = pools[len(s.value)]
        narrowed = not recovered and s.value in pool and len(pool) <= NARROW
        words_found = []
        for w in s.context:
            found = False
            for form in {w, w.capitalize(), w.upper()}:
                for name, blob in ev.files.items():
                    for enc, width in (("utf-8", 1), ("utf-16-le", 2)):
                        needle = form.encode(enc)
                        for at in _occurrences(blob, needle):
                            if _bounded(blob, at, len(needle), width, _ASCII_ALPHA):
                                found = True
                                hits.append(
                                    {
                                        "file": name,
                                        "enc": enc,
                                        "where": ev.where(name, at),
                                        "word": True,
                                    }
                                )
            words_found.append(found)
        out.append(
            {
                "recovered": recovered,
                "narrowed": narrowed,
                "hits": hits,
                "live_tables": live,
                "context_found": words_found,
            }
        )
    return out


# ---------------------------------------------------------------------------
# Channel 2: keyed full-text digests
# ---------------------------------------------------------------------------


def store_digests(key: bytes, words: Iterable[str]) -> dict[str, list[bytes | str]]:
    """The full-text index terms the library writes for each word, untagged.

    This is the one place that knows unrecall's full-text scheme; adapt it
    (and ``untag``) when the scheme changes. Today (``recall.lexical``):
    every normalised word ``w`` of a text is written as
    ``TermHasher(key).term(w)`` (16 hex digits of a keyed BLAKE2b), and every
    canonical identifier key of the text as ``TermHasher(key).key(k)``; a
    run of 4+ digits has the key ``number:<digits>``, one of 5+ also
    ``compact:<digits>``. Up to schema v2, ``storage/sqlite.py`` wrote each
    term into FTS5 tagged with its tenant, ``t<tenant id>x<digest>``
    (stripped by ``untag``); from v3 the digest is a raw 8-byte value in the
    ``lexicon`` table, whose ids the postings tables hold (the ``raw_bin``,
    ``other_cells`` and dead-postings channels look there). Returns hex
    strings; raw ``bytes`` digests are accepted by the callers too.
    """
    hasher = TermHasher(key)
    out: dict[str, list[bytes | str]] = {}
    for w in words:
        forms: list[bytes | str] = [hasher.term(w)]
        if w.isdigit() and len(w) >= 4:
            forms.append(hasher.key(f"number:{w}"))
            if len(w) >= 5:
                forms.append(hasher.key(f"compact:{w}"))
        out[w] = forms
    return out


_TAGGED = re.compile(r"t(\d+)x([0-9a-f]*)")


def untag(term: str) -> tuple[int | None, str]:
    """Split a stored (or separator) FTS term into (tenant id, digest hex
    or its prefix); (None, "") when it is no tagged digest."""
    m = _TAGGED.fullmatch(term)
    return (int(m.group(1)), m.group(2)) if m else (None, "")


def _hex16(digest: bytes | str) -> str:
    """The first 64 bits of a digest as 16 hex digits (the unit matched)."""
    text = digest if isinstance(digest, str) else digest.hex()
    return text[:16].ljust(16, "0")


@dataclass
class Candidates:
    """One class of guesses (every 4-digit value, every 6-digit value, or the
    context vocabulary) with the sorted digests each guess would leave."""

    values: list[str]
    digests: np.ndarray  # uint64, sorted
    owner: np.ndarray  # index into values, aligned with digests

    @classmethod
    def build(cls, key: bytes, values: list[str]) -> Candidates:
        """Digest every guess in blocks (10^6 values x 3 digests: ~4 s)."""
        digs: list[np.ndarray] = []
        owners: list[np.ndarray] = []
        for start in range(0, len(values), 100_000):
            block = store_digests(key, values[start : start + 100_000])
            counts = [len(ds) for ds in block.values()]
            owners.append(np.repeat(np.arange(start, start + len(counts)), counts))
            packed = "".join(_hex16(d) for ds in block.values() for d in ds)
            digs.append(np.frombuffer(bytes.fromhex(packed), dtype=">u8").astype(np.uint64))
        dig, own = np.concatenate(digs), np.concatenate(owners)
        order = np.argsort(dig, kind="stable")
        return cls(values, dig[order], own[order])

    def found(self, seen: np.ndarray) -> set[str]:
        """The guesses any of whose digests is in ``seen``."""
        hit = np.isin(self.digests, seen)
        return {self.values[i] for i in np.unique(self.owner[hit])}

    def with_prefix(self, prefix: str) -> set[str]:
        """The guesses one of whose digests starts with these hex digits."""
        if not prefix or len(prefix) > 16:
            return set(self.values) if not prefix else set()
        shift = 4 * (16 - len(prefix))
        lo = int(prefix, 16) << shift
        hi = (int(prefix, 16) + 1) << shift
        a = np.searchsorted(self.digests, np.uint64(lo), "left")
        b = (
            len(self.digests)
            if hi >= 1 << 64
            else np.searchsorted(self.digests, np.uint64(hi), "left")
        )
        return {self.values[i] for i in np.unique(self.owner[a:b])}


_HEX_RUN = re.compile(rb"[0-9a-f]{16,}")


def hex_windows(blob: bytes) -> np.ndarray:
    """Every 16-hex-digit window of every hex run, as uint64 (a run may be
    longer: a term's bytes can be followed by varints that look like hex)."""
    vals = [
        int(run[i : i + 16], 16)
        for m in _HEX_RUN.finditer(blob)
        for run in [m.group(0)]
        for i in range(len(run) - 15)
    ]
    return np.array(vals, dtype=np.uint64)


def binary_windows(blob: bytes) -> np.ndarray:
    """Every 8-byte window (any offset) read as a big-endian uint64."""
    if len(blob) < 8:
        return np.zeros(0, dtype=np.uint64)
    arr = np.frombuffer(blob, dtype=np.uint8)
    win = np.lib.stride_tricks.sliding_window_view(arr, 8)
    weights = (np.uint64(1) << (np.arange(7, -1, -1, dtype=np.uint64) * np.uint64(8))).astype(
        np.uint64
    )
    return np.unique((win.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64))


def find_key(ev: Evidence) -> tuple[bytes | None, str]:
    """Key material stored in the file: every 16-64-byte blob (or hex text)
    of a small, meta-like table, confirmed by recomputing the digest of
    common words and finding it in a full-text vocabulary."""
    guesses: list[tuple[str, bytes]] = []
    for table in ordinary_tables(ev.db):
        if ev.db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] > 16:
            continue
        for _, value in cells(ev.db, [table]):
            if isinstance(value, bytes) and 16 <= len(value) <= 64:
                guesses.append((table, value))
            elif isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{32,128}", value):
                guesses.append((table, bytes.fromhex(value)))
    terms = {untag(t)[1] for t in _vocab_terms(ev, "row")}
    for table, key in guesses:
        if any(TermHasher(key).term(w) in terms for w in ("i", "the", "my", "a", "is")):
            return key, table
    # No vocabulary left to confirm with: fall back to a table named like a key.
    for table, key in guesses:
        if re.search(r"secret|key", table, re.I):
            return key, f"{table} (unconfirmed)"
    return None, "none"


def _vocab_terms(ev: Evidence, mode: str, table: str | None = None) -> list[str]:
    """Terms of one (or every) FTS5 index, read through ``fts5vocab``."""
    out: list[str] = []
    for fts in [table] if table else fts_tables(ev.db):
        name = f"v_{fts}_{mode}"
        ev.db.execute(
            f'CREATE VIRTUAL TABLE IF NOT EXISTS temp."{name}"'
            f' USING fts5vocab(main, "{fts}", {mode})'
        )
        out += [r[0] for r in ev.db.execute(f'SELECT term FROM temp."{name}"')]
    return out


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """A SQLite varint (FTS5 uses the same encoding): (value, next offset)."""
    v = 0
    for k in range(8):
        b = buf[i + k]
        v = (v << 7) | (b & 0x7F)
        if not b & 0x80:
            return v, i + k + 1
    return (v << 8) | buf[i + 8], i + 9


# FTS5 ``_data`` rowids: (segid << 37) | (dlidx << 36) | (height << 31) | pgno;
# a segment's tombstone pages use segid + 2^16 (fts5_index.c).
_SEG_SHIFT, _DLI_BIT, _HEIGHT_SHIFT = 37, 1 << 36, 31


def fts_postings(ev: Evidence, fts: str) -> list[tuple[int, int, str, bool]]:
    """Every posting written in the leaves of one FTS5 index, read by parsing
    the ``_data`` blobs ourselves: (rowid, position, term, delete marker).

    ``fts5vocab`` and MATCH hide postings of rows a contentless_delete table
    has deleted (a tombstone names the rowid); the leaves still hold them
    until a merge rewrites the segment. Positions give each document's word
    order. The leaf layout (fts5_index.c): a 4-byte header (offset of the
    first rowid, offset of the footer), terms (the first in full, the others
    as shared-prefix length + suffix), each followed by its doclist (rowid,
    then deltas; each with a poslist of size*2+delete and offsets+2), and a
    footer of delta-coded term offsets.
    """
    pages: dict[int, list[tuple[int, bytes]]] = {}
    for rowid, block in ev.db.execute(f'SELECT id, block FROM "{fts}_data"'):
        segid = rowid >> _SEG_SHIFT
        if segid == 0 or segid >= 1 << 16 or rowid & _DLI_BIT or (rowid >> _HEIGHT_SHIFT) & 31:
            continue  # structure/averages records, tombstones, doclist indexes
        pages.setdefault(segid, []).append((rowid & ((1 << 31) - 1), bytes(block)))
    out: list[tuple[int, int, str, bool]] = []

    def doclist(blob: bytes, i: int, end: int, term: bytes) -> None:
        rowid: int | None = None
        while i < end:
            v, i = _varint(blob, i)
            rowid = v if rowid is None else rowid + v
            size, i = _varint(blob, i)
            stop, pos, col = min(i + (size >> 1), end), 0, 0
            while i < stop:
                v, i = _varint(blob, i)
                if v == 1:  # a column switch
                    col, i = _varint(blob, i)
                    pos = 0
                    continue
                pos += v - 2
                text = term[1:].decode("utf-8", "replace")  # byte 0: which index
                out.append((rowid, col << 32 | pos, text, bool(size & 1)))
            i = max(i, stop)

    for segid in sorted(pages):
        last = b""
        for _, blob in sorted(pages[segid]):
            try:
                first_rowid = int.from_bytes(blob[0:2], "big")
                footer = int.from_bytes(blob[2:4], "big")
                offsets, i, acc = [], footer, 0
                while i < len(blob):
                    v, i = _varint(blob, i)
                    acc = v if not offsets else acc + v
                    offsets.append(acc)
                if first_rowid and (not offsets or first_rowid < offsets[0]):
                    doclist(blob, first_rowid, offsets[0] if offsets else footer, last)
                for k, at in enumerate(offsets):
                    if k == 0:
                        n, at = _varint(blob, at)
                        term = blob[at : at + n]
                    else:
                        keep, at = _varint(blob, at)
                        n, at = _varint(blob, at)
                        term = last[:keep] + blob[at : at + n]
                    last, at = term, at + n
                    doclist(blob, at, offsets[k + 1] if k + 1 < len(offsets) else footer, term)
            except IndexError:
                continue  # a page cut short: keep what was read
    return out


def template_words() -> list[str]:
    """The attacker's word list for inverting digests back to text: the
    secret templates' words, the stopwords and the context vocabulary."""
    text = " ".join(t for t, _ in (*PIN_TEMPLATES, *CODE_TEMPLATES))
    words = {w.casefold() for w in re.findall(r"[A-Za-z]+", text)}
    return sorted(words | STOPWORDS | set(VOCABULARY))


def separators(ev: Evidence) -> list[dict[str, Any]]:
    """Separator terms of each ``*_idx`` shadow table (minus the index byte),
    and whether some live term of that index starts with them."""
    out = []
    for fts in fts_tables(ev.db):
        live = sorted(set(_vocab_terms(ev, "row", fts)))
        for segid, term, pgno in ev.db.execute(f'SELECT segid, term, pgno FROM "{fts}_idx"'):
            text = bytes(term)[1:].decode("utf-8", "replace")  # first byte: which index
            if not text:
                continue
            tenant, prefix = untag(text)
            out.append(
                {
                    "table": fts,
                    "segid": segid,
                    "pgno": pgno,
                    "term": text,
                    "tenant": tenant,
                    "prefix": prefix,
                    "live": any(t.startswith(text) for t in live),
                }
            )
    return out


# What each FTS5 table indexes: its rowid is the id of a row of this table
# (storage/sqlite.py); a posting whose rowid is gone belongs to a deleted row.
FTS_ROWS = {"memory_fts": "memories", "turn_fts": "turns"}


def dead_documents(
    ev: Evidence, key: bytes, classes: dict[str, Candidates]
) -> tuple[dict[tuple[str, int], list[tuple[int, str, int | None]]], dict[tuple[str, int], str]]:
    """The postings of deleted rows, per (table, rowid), in word order, and
    each document rebuilt as text by inverting its digests (the template
    words, stopwords and vocabulary, every 4- and 6-digit value).

    Returns ({(table, rowid): [(position, digest, tenant)]}, {(table, rowid): text}).
    """
    words = template_words()
    by_digest = {_hex16(d): w for w, ds in store_digests(key, words).items() for d in ds[:1]}
    docs: dict[tuple[str, int], list[tuple[int, str, int | None]]] = {}
    for fts in fts_tables(ev.db):
        rows = FTS_ROWS.get(fts)
        live = {r[0] for r in ev.db.execute(f'SELECT id FROM "{rows}"')} if rows else set()
        for rowid, pos, term, _ in fts_postings(ev, fts):
            if rowid not in live:
                tenant, digest = untag(term)
                docs.setdefault((fts, rowid), []).append((pos, digest, tenant))
    # Schema v3: postings are (lexicon id, document) rows of plain tables, and
    # the lexicon maps an id to its raw 8-byte digest. A posting left behind
    # by a deleted document would name its words through the lexicon.
    tables = set(ordinary_tables(ev.db))
    if "lexicon" in tables:
        digest_of = {t: bytes(d).hex() for t, d in ev.db.execute("SELECT id, digest FROM lexicon")}
        for postings, rows in (("memory_terms", "memories"), ("turn_terms", "turns")):
            if postings not in tables:
                continue
            live = {r[0] for r in ev.db.execute(f'SELECT id FROM "{rows}"')}
            for n, (term, doc) in enumerate(ev.db.execute(f'SELECT term, doc FROM "{postings}"')):
                if doc not in live:
                    docs.setdefault((postings, doc), []).append((n, digest_of.get(term, ""), None))
        # Schema v6: the same pairs, packed in blocks of document ids.
        for postings, rows in (("memory_postings", "memories"), ("turn_postings", "turns")):
            if postings not in tables:
                continue
            live = {r[0] for r in ev.db.execute(f'SELECT id FROM "{rows}"')}
            n = 0
            for term, packed in ev.db.execute(f'SELECT term, docs FROM "{postings}"'):
                for doc in np.frombuffer(packed, dtype="<i8").tolist():
                    n += 1
                    if doc not in live:
                        docs.setdefault((postings, doc), []).append(
                            (n, digest_of.get(term, ""), None)
                        )
    digests = sorted({d for doc in docs.values() for _, d, _ in doc if len(d) == 16})
    q = np.array([int(d, 16) for d in digests], dtype=np.uint64)
    for cls in ("pin", "code"):
        cand = classes[cls]
        at = np.minimum(np.searchsorted(cand.digests, q), len(cand.digests) - 1)
        for d, i, hit in zip(digests, at, cand.digests[at] == q, strict=True):
            if hit:
                by_digest.setdefault(d, cand.values[int(cand.owner[i])])
    texts = {}
    for doc_id, doc in docs.items():
        doc.sort()
        texts[doc_id] = " ".join(by_digest.get(d, "?") for _, d, _ in doc)
    return docs, texts


def attack_digests(
    ev: Evidence,
    secrets: Sequence[Secret],
    key: bytes,
    victim_tid: int | None,
    classes: dict[str, Candidates],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Look for every guess's digests in each place a digest could survive."""
    channels: dict[str, np.ndarray] = {}
    channels["raw_hex"] = np.unique(
        np.concatenate([hex_windows(b) for b in ev.files.values()] or [np.zeros(0, np.uint64)])
    )
    channels["raw_bin"] = np.unique(np.concatenate([binary_windows(b) for b in ev.files.values()]))
    vocab_counts: dict[str, int] = {}
    for mode in ("row", "instance"):
        terms = _vocab_terms(ev, mode)
        vocab_counts[mode] = len(terms)
        digs = [untag(t)[1] for t in terms]
        channels[f"vocab_{mode}"] = np.array(
            sorted({int(d, 16) for d in digs if len(d) == 16}), dtype=np.uint64
        )
    # Cells through SQL: the FTS5 shadow tables (a term left in a live leaf
    # blob after its postings went) apart from every other table.
    shadow = {
        t for t in ordinary_tables(ev.db) if any(t.startswith(f + "_") for f in fts_tables(ev.db))
    }
    for label, tables in (
        ("fts_shadow_cells", sorted(shadow)),
        ("other_cells", [t for t in ordinary_tables(ev.db) if t not in shadow]),
    ):
        hexes: list[np.ndarray] = [np.zeros(0, np.uint64)]
        for _, value in cells(ev.db, tables):
            if isinstance(value, str):
                hexes.append(hex_windows(value.encode()))
            elif isinstance(value, bytes):
                hexes += [hex_windows(value), binary_windows(value)]
        channels[label] = np.unique(np.concatenate(hexes))
    dead, rebuilt = dead_documents(ev, key, classes)
    channels["fts_dead_postings"] = np.array(
        sorted({int(d, 16) for doc in dead.values() for _, d, _ in doc if len(d) == 16}),
        dtype=np.uint64,
    )
    found = {
        (cls, ch): cand.found(seen)
        for cls, cand in classes.items()
        for ch, seen in channels.items()
    }
    seps = separators(ev)
    orphan = [
        s
        for s in seps
        if not s["live"] and s["prefix"] and (victim_tid is None or s["tenant"] == victim_tid)
    ]
    # For each orphan separator: the guesses it leaves in each class.
    narrowing = [
        {**s, "candidates": {cls: cand.with_prefix(s["prefix"]) for cls, cand in classes.items()}}
        for s in orphan
    ]
    out = []
    for s in secrets:
        cls = s.kind
        by = {ch: s.value in found[(cls, ch)] for ch in channels}
        counts = [len(n["candidates"][cls]) for n in narrowing if s.value in n["candidates"][cls]]
        best = min(counts, default=None)
        recovered = any(by.values()) or best == 1
        words = []
        for w in s.context:
            wby = {ch: w in found[("word", ch)] for ch in channels}
            wc = [len(n["candidates"]["word"]) for n in narrowing if w in n["candidates"]["word"]]
            wbest = min(wc, default=None)
            words.append(
                {
                    "recovered": any(wby.values()) or wbest == 1,
                    "narrowed": not any(wby.values()) and wbest is not None and 1 < wbest <= NARROW,
                    "channels": [c for c, v in wby.items() if v],
                    "separator_candidates": wbest,
                }
            )
        # where the true value's digests sit in the raw bytes (hex text)
        spots = [
            ev.where(name, at)
            for ds in store_digests(key, [s.value, *s.context]).values()
            for d in ds
            for name, blob in ev.files.items()
            for at in _occurrences(blob, _hex16(d).encode())
        ]
        said = " ".join(lexical_words(s.text))
        docs = sorted(f"{t}:{r}" for (t, r), text in rebuilt.items() if said in text)
        out.append(
            {
                "recovered": recovered,
                "rebuilt_from": docs,  # deleted rows whose postings spell the whole sentence
                "raw_where": spots,
                "narrowed": not recovered and best is not None and best <= NARROW,
                "channels": [c for c, v in by.items() if v],
                "separator_candidates": best,
                "words": words,
            }
        )
    tokens = [d for doc in dead.values() for _, d, _ in doc]
    unknown = sum(text.split().count("?") for text in rebuilt.values())
    summary = {
        "dead_documents": len(dead),
        "dead_postings": len(tokens),
        "dead_postings_inverted": len(tokens) - unknown,
        "rebuilt_sample": sorted(set(rebuilt.values()), key=len)[-3:],
        "vocab_terms": vocab_counts,
        "separators": len(seps),
        "orphan_separators": [
            {k: n[k] for k in ("table", "term", "pgno")}
            | {f"{c}_candidates": len(v) for c, v in n["candidates"].items()}
            for n in narrowing
        ],
        # guesses exposed per class and channel (a 4-digit value found that
        # is no secret would be a false lead: there should be none)
        "exposed": {f"{cls}/{ch}": len(v) for (cls, ch), v in found.items() if v},
    }
    return out, summary


# ---------------------------------------------------------------------------
# Channel 3: embedding vectors
# ---------------------------------------------------------------------------


@dataclass
class VectorCandidates:
    """Embeddings of the attacker's guesses: each secret's sentence filled
    with the 30 true values and 300 decoys, and each vocabulary word."""

    labels: list[tuple[int, str]]  # (secret index, value); index -1: a vocabulary word
    matrix: np.ndarray  # unit rows

    @classmethod
    def build(cls, plan: Plan, seed: int) -> VectorCandidates:
        """Embed the guesses once per process (~40 s on 2 cores)."""
        rng = random.Random(seed + 1)
        truth = [s.value for s in plan.secrets]
        labels: list[tuple[int, str]] = []
        texts: list[str] = []
        for s in plan.secrets:
            decoys: set[str] = set()
            while len(decoys) < N_DECOYS:
                width = rng.choice((4, 6))
                v = f"{rng.randrange(10**width):0{width}d}"
                if v not in truth:
                    decoys.add(v)
            for v in truth + sorted(decoys):
                labels.append((s.index, v))
                texts.append(s.template.format(v=v))
        for w in VOCABULARY:
            labels.append((-1, w))
            texts.append(w)
        matrix = make_embedder("minilm").embed(texts)
        return cls(labels, np.asarray(matrix, dtype=np.float32))


FRAGMENT = 96  # the shortest piece of a vector worth inverting


def _float_runs(blob: bytes, minimum: int) -> Iterable[tuple[int, np.ndarray]]:
    """(byte offset, floats) of every maximal run of float32 values an
    embedding can hold (finite, |x| < 0.75; MiniLM's int8 model gives some
    components of 0 or ~1e-33, so tiny values are allowed) of at least
    ``minimum``, at each of the four byte phases (a cell's payload need not
    be 4-byte aligned)."""
    for phase in range(4):
        n = (len(blob) - phase) // 4
        if n <= 0:
            continue
        x = np.frombuffer(blob, dtype="<f4", count=n, offset=phase)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(x) & (np.abs(x) < 0.75)
        edges = np.diff(np.concatenate(([0], ok.astype(np.int8), [0])))
        for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            if b - a >= minimum:
                yield phase + 4 * int(a), x[a:b].copy()


def _embedding_like(x: np.ndarray) -> bool:
    """A piece whose energy per component is that of a unit 384-d vector
    (within 4x) and which is not mostly zeros (zeroed pages, small ints)."""
    tiny = np.abs(x) < 1e-8
    energy = float(np.dot(x.astype(np.float64), x)) * DIM / max(len(x), 1)
    return tiny.mean() < 0.05 and 0.25 < energy < 4.0


def _split_run(
    run: np.ndarray,
) -> tuple[list[tuple[int, np.ndarray]], list[tuple[int, np.ndarray]]]:
    """Whole unit-norm vectors of ``DIM`` floats in a run, and the
    embedding-like fragments left between them.

    A window that straddles two stored vectors can reach norm 1 by chance,
    so windows are taken first at the offset (mod ``DIM``) most of them
    share, as the vectors of a vec0 chunk lie back to back.
    """
    if len(run) < DIM:
        starts: list[int] = []
    else:
        sq = np.concatenate(([0.0], np.cumsum(run.astype(np.float64) ** 2)))
        energy = sq[DIM:] - sq[:-DIM]  # of the window starting at each float
        # a stored unit vector sums to 1 within float32 rounding (~1e-7)
        found = np.flatnonzero(np.abs(energy - 1.0) < 3e-6)
        residues, counts = np.unique(found % DIM, return_counts=True)
        rank = {int(r): k for k, r in enumerate(residues[np.argsort(-counts, kind="stable")])}
        starts = sorted(found.tolist(), key=lambda i: (rank[i % DIM], i))
    taken: list[tuple[int, np.ndarray]] = []
    for i in starts:
        if all(i + DIM <= j or i >= j + DIM for j, _ in taken) and _embedding_like(
            run[i : i + DIM]
        ):
            taken.append((i, run[i : i + DIM]))
    taken.sort(key=lambda t: t[0])
    frags: list[tuple[int, np.ndarray]] = []
    last = 0
    for i, _ in [*taken, (len(run), None)]:
        if i - last >= FRAGMENT and _embedding_like(run[last:i]):
            frags.append((last, run[last:i]))
        last = i + DIM
    return taken, frags


def _scan_pieces(ev: Evidence) -> Iterable[tuple[str, int, bytes]]:
    """(file, offset, bytes) of what the raw vector scan reads: each page of
    the database and each page image of the WAL on its own (a run must not
    take in the 4-byte link that heads an overflow page), and each seam of
    two consecutive pages without that link (a vector stored across it)."""
    ps = ev.page_size
    db = ev.files["db"]
    for base in range(0, len(db), ps):
        # an overflow or freelist page opens with a 4-byte page number
        head = 0 if base == 0 or db[base] in (2, 5, 10, 13) else 4
        yield "db", base + head, db[base + head : base + ps]
        if base + ps + 4 < len(db):
            yield (
                "db",
                base + ps - DIM * 4,
                db[base + ps - DIM * 4 : base + ps] + db[base + ps + 4 : base + ps + 4 + DIM * 4],
            )
    wal = ev.files.get("wal", b"")
    for base in range(32 + 24, len(wal), ps + 24):  # 32-byte header, 24-byte frame headers
        yield "wal", base, wal[base : base + ps]
    if ev.files.get("shm"):
        yield "shm", 0, ev.files["shm"]


def _code_vector(row: np.ndarray) -> bytes:
    """An int8 code row (stored as uint8 + 128) as a unit float32 vector."""
    v = row.astype(np.float32) - 128.0
    return (v / max(float(np.linalg.norm(v)), 1e-12)).astype("<f4").tobytes()


def _code_pieces(ev: Evidence) -> Iterable[tuple[str, int, bytes]]:
    """(file, offset, bytes) where a stale int8 code row could hide: free
    pages, the slack of every b-tree page, the overflow pages no live row
    uses (none: dbstat owns them all), the WAL's page images and the shm."""
    ps = ev.page_size
    db = ev.files["db"]
    for page in sorted(ev.freelist):
        yield "db", (page - 1) * ps, db[(page - 1) * ps : page * ps]
    for regions in ev.slack.values():
        for start, end, _ in regions:
            if end - start >= DIM:
                yield "db", start, db[start:end]
    wal = ev.files.get("wal", b"")
    for base in range(32 + 24, len(wal), ps + 24):
        yield "wal", base, wal[base : base + ps]
    if ev.files.get("shm"):
        yield "shm", 0, ev.files["shm"]


def _code_runs(blob: bytes) -> Iterable[tuple[int, np.ndarray]]:
    """Every ``DIM``-byte window that could be a code row: it holds the
    row's peak (a byte of 1 or 255, int8 -127 or 127), sits around 128, and
    is no constant fill. Windows are taken at every offset."""
    if len(blob) < DIM:
        return
    raw = np.frombuffer(blob, dtype=np.uint8)
    win = np.lib.stride_tricks.sliding_window_view(raw, DIM)
    sums = np.concatenate(([0], np.cumsum(raw, dtype=np.int64)))
    means = (sums[DIM:] - sums[:-DIM]) / DIM
    peaks = np.concatenate(([0], np.cumsum((raw == 1) | (raw == 255), dtype=np.int64)))
    has_peak = (peaks[DIM:] - peaks[:-DIM]) > 0
    for at in np.flatnonzero(has_peak & (np.abs(means - 128) < 12)):
        row = win[at]
        if row.std() > 8:  # a fill of one value is no vector
            yield int(at), row.copy()


def code_orphans(
    ev: Evidence, active: Collection[int]
) -> tuple[dict[bytes, int], dict[bytes, str], dict[str, int], int]:
    """The int8 code rows of the vector lists (schema v7 on; a code row
    inverts like its vector, cosine ignores the row's scale): the live
    members' codes (code bytes -> memory id); as orphans (unit float vector
    bytes -> where) each chunk row of a memory that is not ``active`` and
    each code-shaped window of the raw scan that live codes do not explain;
    where those windows lie; and how many windows the scan saw."""
    db = ev.db
    live: dict[bytes, int] = {}
    orphans: dict[bytes, str] = {}
    shown: list[bytes] = []  # each chunk's codes, a row not active zeroed
    # (an upgrade's old lists, until it has deleted them, too)
    for (table,) in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        " AND name IN ('vector_chunks', 'old_vector_chunks')"
    ).fetchall():
        for ids, codes in db.execute(f"SELECT ids, codes FROM {table}"):
            ids_ = np.frombuffer(ids, dtype="<i8")
            mat = np.frombuffer(codes, dtype=np.uint8).reshape(len(ids_), DIM).copy()
            for i, (mid, row) in enumerate(zip(ids_.tolist(), mat, strict=True)):
                if mid in active:
                    live[row.tobytes()] = mid
                else:
                    orphans.setdefault(_code_vector(row), f"{table}_row")
                    mat[i] = 0
            shown.append(mat.tobytes())
    # A window half of which lies in live codes is live content: an old
    # copy of a live chunk left in a page's slack (a chunk is written anew
    # when a row is appended) gives windows at most offsets, straddling two
    # live rows or the copy's edge. A row gone shares no half row with a
    # live one unless it is a live one's twin, so its own window is still
    # judged. Codes are 1..255: the 0s between chunks and in place of rows
    # not active join nothing live to anything else.
    joined = b"\x00".join(shown)
    half = DIM // 2
    where: dict[str, int] = {}
    windows = 0
    for name, offset0, blob in _code_pieces(ev):
        for offset, row in _code_runs(blob):
            windows += 1
            raw = row.tobytes()
            if raw in live or raw[:half] in joined or raw[-half:] in joined:
                continue
            spot = ev.where(name, offset0 + offset)
            orphans.setdefault(_code_vector(row), f"raw_codes:{spot}")
            where[f"codes:{spot}"] = where.get(f"codes:{spot}", 0) + 1
    return live, orphans, where, windows


def attack_vectors(
    ev: Evidence, secrets: Sequence[Secret], cands: VectorCandidates, secret_ids: list[list[str]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Find vectors no live memory owns and invert them by nearest cosine."""
    db = ev.db
    active = {r[0]: r[1] for r in db.execute("SELECT id, uid FROM memories WHERE state = 'active'")}
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    live: dict[bytes, int] = {}  # vector bytes -> memory id
    orphans: dict[bytes, str] = {}  # vector bytes -> where it was found
    slots = {"valid": 0, "invalid_nonzero": 0, "stale_rowid": 0}
    chunk_blobs: list[bytes] = []  # what SQLite shows of vec0's storage today
    for chunks in [
        n for n in names if n.endswith("_chunks") and f"{n[:-7]}_vector_chunks00" in names
    ]:
        vectors = dict(db.execute(f'SELECT rowid, vectors FROM "{chunks[:-7]}_vector_chunks00"'))
        chunk_blobs += vectors.values()
        for chunk_id, size, validity, rowids in db.execute(
            f'SELECT chunk_id, size, validity, rowids FROM "{chunks}"'
        ):
            mat = np.frombuffer(vectors.get(chunk_id, b""), dtype="<f4")
            mat = mat[: len(mat) // DIM * DIM].reshape(-1, DIM)
            bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            ids = np.frombuffer(rowids, dtype="<i8")
            for slot in range(min(size, len(mat))):
                vec = mat[slot]
                if not vec.any():
                    continue
                rowid = int(ids[slot]) if slot < len(ids) else 0
                if bits[slot] and rowid in active:
                    slots["valid"] += 1
                    live[vec.tobytes()] = rowid
                else:
                    slots["invalid_nonzero" if not bits[slot] else "stale_rowid"] += 1
                    orphans.setdefault(vec.tobytes(), "vec0_slot")
    # Schema v3 keeps vectors as plain rows (id = memory id): a row whose
    # memory is not active is an orphan.
    if "memory_vectors" in names:
        for mid, emb in db.execute("SELECT id, embedding FROM memory_vectors"):
            if mid in active:
                live[bytes(emb)] = mid
            else:
                orphans.setdefault(bytes(emb), "memory_vectors_row")
    for table in ("vector_lists", "old_vector_lists"):  # (an upgrade's old lists too)
        if table not in names:
            continue
        # each list's centroid (schema v7): the mean of its live members, a
        # dim*4 blob taken below as an orphan and inverted; its raw bytes
        # are shown, not a fragment of something gone
        chunk_blobs += [bytes(c) for (c,) in db.execute(f"SELECT centroid FROM {table}")]
    blobs = 0
    for table, value in cells(
        db, [t for t in ordinary_tables(db) if not t.endswith("_vector_chunks00")]
    ):
        if isinstance(value, bytes) and len(value) == DIM * 4 and value not in live:
            blobs += 1
            orphans.setdefault(value, f"blob:{table}")
    # The raw scan looks for what SQLite no longer shows: a run found inside
    # a current chunk blob was judged slot by slot above (0xff.. is a NaN,
    # so no run crosses the joins).
    shown = b"\xff\xff\xff\xff".join(chunk_blobs)
    # Live vectors that are stored twice in a row (30 memories of the same
    # text) make every window across them a rotation of the vector, of norm
    # 1: such a window is no orphan.
    rotations = b"\xff\xff\xff\xff".join(v + v for v in live)
    where: dict[str, int] = {}
    fragments: list[np.ndarray] = []
    seen = 0  # whole unit vectors the raw scan saw, live ones included
    kept_frags: set[bytes] = set()
    for name, offset0, blob in _scan_pieces(ev):
        for offset, run in _float_runs(blob, FRAGMENT):
            whole, frags = _split_run(run)
            seen += len(whole)
            for i, vec in whole:
                raw = vec.tobytes()
                if raw in live or raw in orphans or raw in shown or raw in rotations:
                    continue
                spot = ev.where(name, offset0 + offset + 4 * i)
                if spot == "cell:memory_vectors":
                    # inside the live cells of v3's vector table: a window
                    # across two neighbouring live vectors (a tail and a
                    # head of unit vectors has a norm near 1), not an orphan
                    continue
                orphans[raw] = f"raw:{spot}"
                where[spot] = where.get(spot, 0) + 1
            for i, frag in frags:
                # a run may pick up a stray float of a cell header at either
                # end: judge its core
                core = frag[2:-2].tobytes()
                spot = ev.where(name, offset0 + offset + 4 * i)
                if spot in ("cell:vector_lists", "cell:old_vector_lists"):
                    continue  # two live centroids side by side, judged as blobs above
                if core not in shown and core not in kept_frags:
                    kept_frags.add(core)
                    fragments.append(frag)
                    where[f"fragment:{spot}"] = where.get(f"fragment:{spot}", 0) + 1
    live_codes, coded, coded_where, code_windows = code_orphans(ev, active)
    for raw, spot in coded.items():
        orphans.setdefault(raw, spot)
    where.update(coded_where)
    C = cands.matrix
    truth = {(s.index, s.value) for s in secrets}
    best: dict[int, dict[str, Any]] = {}

    def invert(top: np.ndarray, sims: np.ndarray) -> None:
        for rank, j in enumerate(top):
            label = cands.labels[j]
            if label in truth and sims[j] >= MIN_COS:
                cur = best.get(label[0])
                if cur is None or rank < cur["rank"]:
                    best[label[0]] = {"rank": rank, "cos": float(sims[j])}

    orphan_list = list(orphans)
    if orphan_list:
        mat = np.frombuffer(b"".join(orphan_list), dtype="<f4").reshape(-1, DIM)
        mat = mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
        sims_all = mat @ C.T
        for k in range(len(mat)):
            top = np.argsort(-sims_all[k])[:NARROW]
            invert(top, sims_all[k])
    # A piece of a vector: which dimensions it holds is unknown, so it is
    # slid over every offset of every guess (partial norms by prefix sums).
    part = np.concatenate((np.zeros((len(C), 1)), np.cumsum(C.astype(np.float64) ** 2, 1)), 1)
    for frag in fragments[:100]:
        n = min(len(frag), DIM)
        f = frag[:n] / max(float(np.linalg.norm(frag[:n])), 1e-12)
        sims = np.full(len(C), -1.0, dtype=np.float32)
        for j in range(DIM - n + 1):
            norms = np.sqrt(np.maximum(part[:, j + n] - part[:, j], 1e-24)).astype(np.float32)
            np.maximum(sims, (C[:, j : j + n] @ f) / norms, out=sims)
        invert(np.argsort(-sims)[:NARROW], sims)
    # Pointed at the live vectors of the secrets (the control's proof that
    # the inversion works): by the memory ids the victim's writes returned.
    uid_of = {uid: mid for mid, uid in active.items()}
    live_by_id = {mid: raw for raw, mid in live.items()}
    live_hits = 0
    for s, ids in zip(secrets, secret_ids, strict=True):
        raw = next((live_by_id[uid_of[u]] for u in ids if uid_of.get(u) in live_by_id), None)
        if raw is not None:
            v = np.frombuffer(raw, dtype="<f4")
            j = int(np.argmax(C @ v))
            live_hits += cands.labels[j] == (s.index, s.value)
    by_id_codes = {mid: raw for raw, mid in live_codes.items()}
    live_code_hits = 0
    for s, ids in zip(secrets, secret_ids, strict=True):
        code = next((by_id_codes[uid_of[u]] for u in ids if uid_of.get(u) in by_id_codes), None)
        if code is not None:
            v = np.frombuffer(_code_vector(np.frombuffer(code, dtype=np.uint8)), dtype="<f4")
            j = int(np.argmax(C @ v))
            live_code_hits += cands.labels[j] == (s.index, s.value)
    out = []
    for s in secrets:
        b = best.get(s.index)
        out.append(
            {
                "recovered": b is not None and b["rank"] == 0,
                "narrowed": b is not None and b["rank"] > 0,
                "cos": None if b is None else round(b["cos"], 4),
            }
        )
    summary = {
        "live_vectors": len(live),
        "orphans": len(orphans),
        "orphan_sources": _count(orphans.values()),
        "chunk_slots": slots,
        "dim_blobs": blobs,
        "raw_where": where,
        "fragments": len(fragments),
        "raw_scan_vectors_seen": seen,
        "live_secret_vectors_inverted": live_hits,
        "live_codes": len(live_codes),
        "raw_code_windows_seen": code_windows,
        "live_secret_codes_inverted": live_code_hits,
    }
    return out, summary


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        key = item.split(":")[0] if not item.startswith("raw:") else item
        out[key] = out.get(key, 0) + 1
    return out


# ---------------------------------------------------------------------------
# One run, all runs, the report
# ---------------------------------------------------------------------------


@dataclass
class Row:
    """The result of one kind in one mode."""

    kind: str
    mode: str
    secrets: int
    claimed: int
    export_clean: int
    other_removed: int
    plaintext: dict[str, Any] = field(default_factory=dict)
    digests: dict[str, Any] = field(default_factory=dict)
    vectors: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def planted_orphan(ev: Evidence, secrets: Sequence[Secret], cands: VectorCandidates) -> bool:
    """The raw scan's own proof on this very store: put the first secret's
    vector (the embedder is deterministic, so it is the one that was stored)
    into a fake WAL page image, off the 4-byte grid, and check that the scan
    finds it as the only raw orphan and inverts it to the true value."""
    vec = cands.matrix[cands.labels.index((secrets[0].index, secrets[0].value))].tobytes()
    page = bytearray(ev.page_size)
    page[101 : 101 + len(vec)] = vec
    planted = replace(ev, files={**ev.files, "wal": bytes(32 + 24) + bytes(page)})
    per, summary = attack_vectors(planted, secrets, cands, [[] for _ in secrets])
    floats = bool(per[0]["recovered"]) and summary["orphan_sources"].get("raw:wal") == 1
    # the same for the vector as an int8 code row (storage.vector_lists)
    v = np.frombuffer(vec, dtype="<f4")
    code = (np.clip(np.rint(v / (np.abs(v).max() / 127)), -127, 127) + 128).astype(np.uint8)
    page = bytearray(ev.page_size)
    page[103 : 103 + DIM] = code.tobytes()
    planted = replace(ev, files={**ev.files, "wal": bytes(32 + 24) + bytes(page)})
    per, summary = attack_vectors(planted, secrets, cands, [[] for _ in secrets])
    # (windows around it that pass as codes are shifted copies and invert
    # to nothing; every raw code orphan must lie in that page)
    codes = bool(per[0]["recovered"]) and {
        spot for spot in summary["raw_where"] if spot.startswith("codes:")
    } == {"codes:wal"}
    return floats and codes


def _tally(per: list[dict[str, Any]], mask: list[bool]) -> dict[str, int]:
    chosen = [p for p, m in zip(per, mask, strict=True) if m]
    return {
        "recovered": sum(p["recovered"] for p in chosen),
        "narrowed": sum(p["narrowed"] for p in chosen),
    }


def run_one(
    kind: str, crash: bool, seed: int, plan: Plan, cands: VectorCandidates, root: Path
) -> Row:
    """Build, forget, close (or crash and reopen), then attack one store."""
    t0 = time.time()
    work = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=root))
    path = work / "x.db"
    info = run_victim(kind, path, seed, crash)
    ev = load_evidence(path, work)
    secrets = plan.secrets
    # Attack only what the API said it removed; the control attacks all 30.
    mask = [True] * len(secrets) if kind == CONTROL else info["claimed"]
    key, key_from = find_key(ev)
    assert key is not None, "no key material found"
    classes = {
        "pin": Candidates.build(key, [f"{i:04d}" for i in range(10**4)]),
        "code": Candidates.build(key, [f"{i:06d}" for i in range(10**6)]),
        "word": Candidates.build(key, list(VOCABULARY)),
    }
    plain = attack_plaintext(ev, secrets)
    digs, dig_summary = attack_digests(ev, secrets, key, info["victim_tid"], classes)
    vecs, vec_summary = attack_vectors(ev, secrets, cands, info["secret_ids"])
    chosen = [i for i, m in enumerate(mask) if m]
    where: dict[str, int] = {}
    for i in chosen:
        for h in plain[i]["hits"]:
            where[h["where"]] = where.get(h["where"], 0) + 1
    ctx_total = sum(len(secrets[i].context) for i in chosen)
    row = Row(
        kind,
        "crash" if crash else "close",
        len(secrets),
        sum(info["claimed"]),
        sum(info["export_clean"]),
        info["other_removed"],
    )
    row.plaintext = {
        **_tally(plain, mask),
        "context_found": sum(sum(plain[i]["context_found"]) for i in chosen),
        "context_total": ctx_total,
        "hits_where": where,
        "live_tables": sorted({t for i in chosen for t in plain[i]["live_tables"]}),
    }
    dig_where: dict[str, int] = {}
    for i in chosen:
        for spot in digs[i]["raw_where"]:
            dig_where[spot] = dig_where.get(spot, 0) + 1
    word_rows = [w for i in chosen for w in digs[i]["words"]]
    chan: dict[str, int] = {}
    for i in chosen:
        for c in digs[i]["channels"]:
            chan[c] = chan.get(c, 0) + 1
    row.digests = {
        **_tally(digs, mask),
        "by_channel": chan,
        "hits_where": dig_where,
        "sentences_rebuilt": sum(bool(digs[i]["rebuilt_from"]) for i in chosen),
        "context_recovered": sum(w["recovered"] for w in word_rows),
        "context_narrowed": sum(w["narrowed"] for w in word_rows),
        "context_total": ctx_total,
        "separator_candidates": [
            digs[i]["separator_candidates"] for i in chosen if digs[i]["separator_candidates"]
        ],
        "key_from": key_from,
        **dig_summary,
    }
    row.vectors = {**_tally(vecs, mask), **vec_summary}
    # (the control's first secret is live, so its vector is no orphan there)
    row.vectors["planted_orphan_found"] = (
        None if kind == CONTROL else planted_orphan(ev, secrets, cands)
    )
    # The audit trail keeps a keyed hash of each tenant's key, keyed with the
    # same stored key: a guessed user id can be confirmed after delete_all.
    refs = {r[0] for r in ev.db.execute("SELECT DISTINCT tenant FROM audit")}
    tenant_ref = hmac.new(key, f"user:{VICTIM}".encode(), hashlib.sha256).hexdigest()[:32]
    row.extra = {
        "victim_tenant_row": ev.db.execute(
            "SELECT count(*) FROM tenants WHERE key = ?", (f"user:{VICTIM}",)
        ).fetchone()[0],
        "victim_ref_in_audit": tenant_ref in refs,
        # the tenant key itself ("user:victim") as text anywhere in the files
        "tenant_key_in_files": sum(
            b.count(f"user:{VICTIM}".encode(enc))
            for b in ev.files.values()
            for enc in ("utf-8", "utf-16-le")
        ),
        "files": {k: len(v) for k, v in ev.files.items()},
        "freelist_pages": len(ev.freelist),
        "per_secret": [
            {
                "value": s.value,
                "claimed": info["claimed"][s.index],
                "export_clean": info["export_clean"][s.index],
                "plaintext": plain[s.index]["recovered"],
                "digest_channels": digs[s.index]["channels"],
                "separator_candidates": digs[s.index]["separator_candidates"],
                "vector_cos": vecs[s.index]["cos"],
                "rebuilt_from": digs[s.index]["rebuilt_from"],
            }
            for s in secrets
        ],
        **info.get("notes", {}),
        **({"at_kill": info["at_kill"]} if "at_kill" in info else {}),
    }
    ev.db.close()
    shutil.rmtree(work, ignore_errors=True)
    row.seconds = round(time.time() - t0, 1)
    return row


def _rn(d: dict[str, Any]) -> str:
    return f"{d['recovered']}" + (f" (+{d['narrowed']})" if d.get("narrowed") else "")


def render(rows: Sequence[Row]) -> str:
    """The Markdown report: a summary and the channel detail."""
    lines = [
        "# unrecall attack: what the closed files still give away",
        "",
        "Per kind of hard forget and mode (`close`: the store is closed normally; `crash`: the",
        "writer is SIGKILLed right after the forget returns, then the store is opened once by",
        "a new process). Counts are out of the secrets the API *claimed* it removed (the",
        "control row: all 30, nothing forgotten). `rec (+nar)`: recovered, and narrowed to",
        f"<= {NARROW} candidates without being singled out.",
        "",
        "| kind | mode | API removed | export clean | plaintext rec (+nar) | ctx words plain"
        " | digests rec (+nar) | ctx words digests | sentences rebuilt from digests"
        " | vectors rec (+nar) | orphan vectors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, d, v = r.plaintext, r.digests, r.vectors
        lines.append(
            f"| {r.kind} | {r.mode} | {_removed(r)} | {r.export_clean}/{r.secrets}"
            f" | {_rn(p)} | {p['context_found']}/{p['context_total']}"
            f" | {_rn(d)} | {d['context_recovered']}"
            + (f" (+{d['context_narrowed']})" if d["context_narrowed"] else "")
            + f"/{d['context_total']} | {d['sentences_rebuilt']} | {_rn(v)} | {v['orphans']} |"
        )
    lines += [
        "",
        "## Channel detail",
        "",
        "Places: `cell:T` a live cell of table T, `unallocated:T` / `freeblock:T` free space",
        "on a page of T, `freelist`, `wal`. Digest hits are the hex of the true values' and",
        "context words' digests in the raw bytes; separators are listed with the guesses",
        "each leaves (4-digit / 6-digit / vocabulary).",
        "",
        "| kind | mode | plaintext hits by place | live tables holding a value"
        " | digest channels (secrets) | digest raw hits by place"
        " | orphan separators of the victim | vector orphans by source"
        " | raw scan: whole vectors seen (orphan fragments) | planted orphan found"
        " | live secret vectors inverted |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p, d, v = r.plaintext, r.digests, r.vectors
        seps = "; ".join(
            f"`{s['term']}` {s['pin_candidates']}/{s['code_candidates']}/{s['word_candidates']}"
            for s in d["orphan_separators"]
        )
        lines.append(
            f"| {r.kind} | {r.mode} | {_fmt(p['hits_where'])}"
            f" | {', '.join(p['live_tables']) or '-'} | {_fmt(d['by_channel'])}"
            f" | {_fmt(d['hits_where'])} | {seps or '-'} | {_fmt(v['orphan_sources'])}"
            f" | {v['raw_scan_vectors_seen']} ({v['fragments']})"
            f" | {'-' if v['planted_orphan_found'] is None else v['planted_orphan_found']}"
            f" | {v['live_secret_vectors_inverted']} |"
        )
    lines += [
        "",
        "## Other observations",
        "",
        "| kind | mode | other memories removed | victim tenant row | victim ref in audit"
        " | tenant key as text | deleted rows with postings (postings, inverted)"
        " | digest guesses exposed | files (bytes) | notes | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = r.digests
        lines.append(
            f"| {r.kind} | {r.mode} | {r.other_removed} | {r.extra['victim_tenant_row']}"
            f" | {r.extra['victim_ref_in_audit']} | {r.extra['tenant_key_in_files']}"
            f" | {d['dead_documents']} ({d['dead_postings']}, {d['dead_postings_inverted']})"
            f" | {_fmt(d['exposed'])} | {_fmt(r.extra['files'])} | {_notes(r)} | {r.seconds} |"
        )
    sample = next((r for r in rows if r.digests["rebuilt_sample"]), None)
    if sample is not None:
        lines += [
            "",
            f"Deleted rows rebuilt from their FTS5 postings ({sample.kind}, {sample.mode};"
            " `?`: a digest outside the attacker's word list, e.g. an identifier key):",
            "",
            *[f"- `{t}`" for t in sample.digests["rebuilt_sample"]],
        ]
    return "\n".join(lines) + "\n"


def _removed(r: Row) -> str:
    return "none (control)" if r.kind == CONTROL else f"{r.claimed}/{r.secrets}"


def _notes(r: Row) -> str:
    e = r.extra
    parts = []
    if "requests_detected" in e:
        parts.append(
            f"requests detected {e['requests_detected']}/{r.secrets}"
            f" ({_fmt(e['request_matches'])}), values cut from a kept memory {e['rewritten']}"
        )
    if "at_kill" in e:
        parts.append(f"WAL at kill {e['at_kill'].get('x.db-wal', 0)} B")
    return "; ".join(parts) or "-"


def _fmt(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "-"


# Set by --small-lists and --churn, and so seen by the crash mode's spawned
# children too.
SMALL_LISTS = "UNRECALL_ATTACK_SMALL_LISTS"
CHURN = "UNRECALL_ATTACK_CHURN"
MID_UPGRADE = "UNRECALL_ATTACK_MID_UPGRADE"


def small_lists() -> None:
    """SQLite vector lists split at 8 members, and a tenant of more than 16
    list entries searched through 2 lists: the victim's tenant is then
    large enough that its vectors are written to second lists (SOAR), and
    the attack must find those empty as well."""
    from unrecall.storage import sqlite_lists, vector_lists

    sqlite_lists.SPLIT_AT = 8
    vector_lists.EXACT_UP_TO = 16
    vector_lists.PROBE = 2


if os.environ.get(SMALL_LISTS):
    small_lists()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the attack over the chosen kinds and write attack.json / attack.md."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="all", help="all, or a comma-separated list")
    ap.add_argument("--crash", action="store_true", help="also run every kind in crash mode")
    ap.add_argument("--out", default="bench/results/attack")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument(
        "--small-lists", action="store_true", help="small vector lists: vectors get second lists"
    )
    ap.add_argument(
        "--churn",
        type=int,
        default=0,
        metavar="N",
        help="N more memories before the secrets and N after, half and a third of them purged",
    )
    ap.add_argument(
        "--mid-upgrade",
        action="store_true",
        help="forget while an upgrade's old vector lists wait to be deleted",
    )
    args = ap.parse_args(argv)
    if args.mid_upgrade:
        os.environ[MID_UPGRADE] = "1"
    if args.churn:
        os.environ[CHURN] = str(args.churn)
    if args.small_lists:
        os.environ[SMALL_LISTS] = "1"
        small_lists()
    kinds = list(KINDS) if args.kinds == "all" else args.kinds.split(",")
    unknown = set(kinds) - set(KINDS) - {CONTROL}
    if unknown:
        ap.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    kinds = [CONTROL, *[k for k in kinds if k != CONTROL]]  # the control always runs first
    t0 = time.time()
    plan = make_plan(args.seed)
    cands = VectorCandidates.build(plan, args.seed)
    print(f"candidates embedded: {len(cands.labels)} in {time.time() - t0:.0f} s", file=sys.stderr)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="unrecall-attack-") as tmp:
        for crash in [False, True] if args.crash else [False]:
            for kind in kinds:
                row = run_one(kind, crash, args.seed, plan, cands, Path(tmp))
                rows.append(row)
                print(
                    f"{kind:18} {row.mode:5} removed {row.claimed:2}/30"
                    f" plaintext {_rn(row.plaintext)} digests {_rn(row.digests)}"
                    f" vectors {_rn(row.vectors)} [{row.seconds} s]",
                    file=sys.stderr,
                )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "command": "python bench/attack.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seed": args.seed,
        "seconds": round(time.time() - t0, 1),
        "secrets": [asdict(s) for s in plan.secrets],
    }
    (out / "attack.json").write_text(
        json.dumps({"meta": meta, "rows": [asdict(r) for r in rows]}, indent=1, default=list)
    )
    md = render(rows)
    (out / "attack.md").write_text(md)
    print(md)
    control = next(r for r in rows if r.kind == CONTROL)
    ok = (
        control.plaintext["recovered"] == N_SECRETS
        and control.digests["recovered"] == N_SECRETS
        and control.vectors["live_secret_vectors_inverted"] == N_SECRETS
    )
    if not ok:
        print(
            "CONTROL FAILED: the attack cannot see live secrets; zeros mean nothing",
            file=sys.stderr,
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

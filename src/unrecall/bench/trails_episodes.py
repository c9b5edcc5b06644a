"""Episodes for ``unrecall bench trails``: seeded multi-session chats that
hide protected facts behind trails of evidence (MemCut-style).

A *protected fact* is stated outright once (its *disclosure*) and is also
implied, without being stated, by 4-10 *evidence* user turns spread over
earlier sessions. Its derivation has a structure -- links (a hiring, an
ownership, a marriage, a role ...), each supported by 1-4 alternative turns,
optionally several routes of links -- from which the *minimal sufficient
sets* (2-5 evidence turns that imply the fact together) are enumerated.
Each fact also has 6+ *distractors*: turns that share words ("the Arden
Hotel", "an advisory budget") or entities ("Ravi's flight to Pune", a
different Nina in HR) with the evidence but support nothing.

The four derivation types of the paper, three or four scenario frames each:

* ``assembly`` -- attributes of one entity (a code name, a site visit and a
  factory make an acquisition target; a street and a door number make an
  address; a job and a handle make a hire);
* ``chain`` -- entity-to-entity links (the firm we hired -> its owner ->
  her husband -> our CFO);
* ``aggregation`` -- values that combine (loans that sum to a debt,
  invoices that sum to a cost, department cuts that sum to a layoff);
* ``temporal`` -- states ordered in time (an offer, a revision, a
  withdrawal fix the price, date or dose that holds now).

Every frame draws its people, organisations, places, numbers and wording
(several templates per evidence role, random alternatives per link) from
seeded pools, so no two facts read alike and a deleter cannot key on fixed
strings. An episode holds one fact of each type plus unrelated filler;
each user turn gets a short assistant acknowledgement. Generation is pure
Python (no network, no model) and deterministic for a seed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

TYPES = ("assembly", "chain", "aggregation", "temporal")
TYPE_LABELS = {
    "assembly": "fact assembly",
    "chain": "relation chain",
    "aggregation": "aggregation",
    "temporal": "temporal/state",
}
SESSIONS = 12
DEFAULT_FILLER = 120  # unrelated user turns per episode
EPOCH = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)
MIN_EVIDENCE, MAX_EVIDENCE = 4, 10
MIN_SET, MAX_SET = 2, 5
MIN_DISTRACTORS = 6


# -- the data model -----------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """One chat message of an episode with its annotation.

    ``key`` is stable for a seed (``ep03.s07.u04`` for the fourth user turn of
    session 7); ``label`` is ``disclosure``, ``evidence``, ``distractor``,
    ``filler`` or ``reply`` (an assistant acknowledgement); ``fact`` is the id
    of the fact the annotation belongs to.
    """

    key: str
    role: str
    text: str
    session: int
    label: str
    fact: str | None = None


@dataclass(frozen=True)
class Fact:
    """A protected fact and its annotations (turn keys of its episode)."""

    id: str
    type: str
    frame: str
    episode: str
    value: str
    question: str
    request: str
    entities: tuple[str, ...]
    mentions: tuple[str, ...]
    disclosure: tuple[str, ...]
    evidence: tuple[str, ...]
    sufficient_sets: tuple[tuple[str, ...], ...]
    distractors: tuple[str, ...]

    @property
    def minimal_cut(self) -> int:
        """Size of the smallest set of evidence turns meeting every sufficient set."""
        return minimal_cut(self.sufficient_sets)[0]


@dataclass(frozen=True)
class Session:
    """One dated conversation of an episode."""

    index: int
    id: str
    start: float
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Episode:
    """A multi-session chat and the facts hidden in it."""

    id: str
    sessions: tuple[Session, ...]
    facts: tuple[Fact, ...]

    def turns(self) -> list[Turn]:
        """Every turn, in order."""
        return [t for s in self.sessions for t in s.turns]

    def turn(self, key: str) -> Turn:
        """The turn with this key."""
        for t in self.turns():
            if t.key == key:
                return t
        raise KeyError(key)


# -- sufficient sets and cuts -------------------------------------------------
def enumerate_sets(
    links: Sequence[Sequence[int]], routes: Sequence[Sequence[int]]
) -> list[tuple[int, ...]]:
    """The minimal sufficient sets of a derivation: for each route, one
    alternative turn per link (the product), merged over routes, with every
    set that contains another dropped (a turn shared by two links makes a
    smaller set that subsumes the larger ones)."""
    found: set[frozenset[int]] = set()
    for route in routes:
        for combo in itertools.product(*(links[i] for i in route)):
            found.add(frozenset(combo))
    minimal = [s for s in found if not any(o < s for o in found)]
    return sorted((tuple(sorted(s)) for s in minimal), key=lambda s: (len(s), s))


def minimal_cut(sets: Sequence[Sequence[str]]) -> tuple[int, tuple[str, ...]]:
    """The smallest hitting set of ``sets`` by enumeration (brute force over
    subsets of their union, smallest first; the first found in sorted order).
    Returns its size and the set; (0, ()) when there are no sets."""
    if not sets:
        return 0, ()
    universe = sorted({t for s in sets for t in s})
    frozen = [frozenset(s) for s in sets]
    for size in range(1, len(universe) + 1):
        for cand in itertools.combinations(universe, size):
            chosen = set(cand)
            if all(s & chosen for s in frozen):
                return size, cand
    raise AssertionError("a union always hits every set")


# -- seeded pools -------------------------------------------------------------
FIRST_F = (
    "Nina Priya Lena Clara Mei Sofia Amara Hannah Ines Julia Keiko Lucia Maya Noor Olga Rosa "
    "Sara Tamsin Yara Zoe Elif Freya Greta Ada Beatriz Chioma Dana Eva Farah Gwen Hana Ingrid "
    "Leila Marta Nadia Petra Rhea Sanna Talia Vera"
).split()
FIRST_M = (
    "Ravi Tomas Daniel Marco Kenji Omar Lukas Felix Arjun Mateo Jonas Pavel Samir Theo Victor "
    "Yusuf Anders Bruno Caleb Dmitri Emil Femi Gabriel Hugo Ivan Jorge Kofi Leon Milan Nikhil "
    "Oscar Rafael Sven Tariq Umar Wei Xavier Yosef Aidan Bilal"
).split()
SURNAMES = (
    "Shah Okafor Lindqvist Moreau Tanaka Kowalski Ferreira Haddad Novak Brennan Castillo Dubois "
    "Eriksen Fischer Gallo Horvath Ivanova Jansen Kaur Laurent Mendes Nakamura Olsen Petrov Quinn "
    "Rossi Santos Takahashi Ueda Varga Weber Yilmaz Zhang Abbott Barros Chen Delgado Ekstrom "
    "Fontaine Grant Hale Iyer Jovanovic Keller Lang Mbeki Nilsen Ortiz Pereira Reyes Sato Tran "
    "Vidal Wolfe"
).split()
STEMS = (
    "Arden Brightwell Halcyon Marlow Northgate Pinecrest Quillon Redfern Sablewood Tidewater "
    "Vantage Westmere Yarrow Birchley Corvid Dunmore Elmstead Foxglove Greyfield Hollis "
    "Ironbridge Juniper Kingsley Larkspur Meridian Oakhurst Pemberton Ravenhill Stonebridge "
    "Thornbury Wexford Ashcombe Bellmont Calloway Draycott"
).split()
FIRM_KINDS = ("Advisory", "Partners", "Consulting", "Associates", "Strategies")
BIRDS = (
    "Heron Osprey Falcon Plover Curlew Merlin Lapwing Gannet Puffin Avocet Dunlin Egret Shrike "
    "Wren Bittern Kite Godwit Sandpiper"
).split()
CITIES = (
    "Pune Tampere Porto Leeds Lyon Graz Gdansk Aarhus Bilbao Brno Cork Dresden Eindhoven Ghent "
    "Malmo Turin Utrecht Valencia Krakow Bergen Nantes Bologna Tartu Ljubljana"
).split()
STREETS = (
    "Orchard Close|Quarry Lane|Harbour View|Mill Street|Station Road|Victoria Terrace|"
    "Kingfisher Way|Alder Road|Chapel Row|Foundry Street|Willow Crescent|Bridge End|"
    "Cedar Grove|Lantern Walk|Copper Lane|Rowan Drive|Market Hill|Saltings Road"
).split("|")
INDUSTRIES = (
    ("robot arms", "Robotics"),
    ("battery cells", "Energy"),
    ("sensor chips", "Semiconductors"),
    ("e-bike frames", "Cycles"),
    ("solar inverters", "Power"),
    ("lab centrifuges", "Instruments"),
    ("drone motors", "Aerotech"),
    ("hearing aids", "Acoustics"),
)
RESTAURANTS = (
    "Casa Lupe|the Green Fig|Osteria Nove|the Salt House|Koji|the Brass Lantern|Maison Olive|"
    "the Copper Pot|Little Saigon|the Old Mill Grill"
).split("|")
TOPICS = ("pricing", "audit readiness", "supply chain", "cost reduction", "IT security", "tax")
ROLES_EXEC = ("CFO", "COO", "head of procurement", "finance director")
HIRE_ROLES = (
    ("CTO", "engineering"),
    ("head of design", "design"),
    ("general counsel", "legal"),
    ("VP of sales", "sales"),
    ("head of data", "analytics"),
)
RELATIVES_M = ("brother", "cousin", "brother-in-law", "nephew")
RELATIVES_F = ("sister", "cousin", "sister-in-law", "niece")
MONTHS = (
    "January February March April May June July August September October November December"
).split()
CURRENCIES = ("euros", "pounds", "dollars")
CONDITIONS = (
    # (value, symptom, drug, test, specialist)
    ("epilepsy", "another seizure", "levetiracetam", "an EEG", "neurologist"),
    ("type 1 diabetes", "a bad hypo", "an insulin pump", "an HbA1c test", "endocrinologist"),
    (
        "Crohn's disease",
        "a bad flare-up",
        "infliximab infusions",
        "a colonoscopy",
        "gastroenterologist",
    ),
    (
        "multiple sclerosis",
        "numbness in both legs",
        "ocrelizumab",
        "an MRI with contrast",
        "neurologist",
    ),
    (
        "bipolar disorder",
        "a manic episode",
        "lithium",
        "a lithium blood level check",
        "psychiatrist",
    ),
)


class Pool:
    """Draws names and things for one episode without repeats, so two facts
    of an episode never share an entity by accident (distractors share
    them on purpose)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def take(self, options: Sequence[Any]) -> Any:
        """A random option not taken before in this episode."""
        free = [o for o in options if str(o) not in self.used]
        if not free:
            raise RuntimeError("an entity pool ran out for one episode")
        choice = self.rng.choice(free)
        self.used.add(str(choice))
        return choice

    def person(self, gender: str | None = None, surname: str | None = None) -> Person:
        """A person with a first name and a surname unused in the episode
        (``surname`` given: a relative who shares it)."""
        g = gender or self.rng.choice("mf")
        first = self.take(FIRST_M if g == "m" else FIRST_F)
        last = surname or self.take(SURNAMES)
        return Person(first, last, g)

    def number(self, lo: int, hi: int, step: int = 1) -> int:
        """A number in [lo, hi] on ``step`` not drawn before in the episode."""
        return int(self.take(list(range(lo, hi + 1, step))))


@dataclass(frozen=True)
class Person:
    """A generated person: names and pronouns."""

    first: str
    last: str
    gender: str

    @property
    def full(self) -> str:
        """First and last name."""
        return f"{self.first} {self.last}"

    def fields(self, tag: str) -> dict[str, str]:
        """Template fields ``{tag}``, ``{tag_first}``, ``{tag_he}``, ``{tag_his}`` ..."""
        m = self.gender == "m"
        return {
            tag: self.full,
            f"{tag}_first": self.first,
            f"{tag}_last": self.last,
            f"{tag}_he": "he" if m else "she",
            f"{tag}_He": "He" if m else "She",
            f"{tag}_his": "his" if m else "her",
            f"{tag}_him": "him" if m else "her",
            f"{tag}_man": "man" if m else "woman",
            f"{tag}_spouse": "husband" if m else "wife",
            f"{tag}_parent": "father" if m else "mother",
            f"{tag}_sib": "brother" if m else "sister",
        }


def money(n: int) -> str:
    """A number with thousands separators (1,450)."""
    return f"{n:,}"


# -- what a frame returns -----------------------------------------------------
@dataclass
class Draft:
    """One fact as a frame wrote it: texts and derivation structure.

    ``links`` hold indices into ``evidence`` (the alternatives that support
    the link); ``routes`` hold indices into ``links`` (default: one route
    through every link). ``ordered`` evidence must appear in listed order
    (temporal frames: the offer before its revision).
    """

    frame: str
    value: str
    question: str
    request: str
    disclosure: str
    entities: list[str]
    mentions: list[str]
    evidence: list[str] = field(default_factory=list)
    links: list[list[int]] = field(default_factory=list)
    routes: list[list[int]] = field(default_factory=list)
    distractors: list[str] = field(default_factory=list)
    ordered: bool = False
    # Who and what the fact's turns talk about, for background distractors
    # (everyday turns that name them and support nothing).
    people: list[str] = field(default_factory=list)
    orgs: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)

    def link(
        self,
        rng: random.Random,
        templates: Sequence[str],
        k: int,
        f: dict[str, str],
        shared: Sequence[int] = (),
    ) -> int:
        """Add a link supported by ``k`` turns written from distinct random
        templates (plus already written turns ``shared`` with another link);
        returns the link's index."""
        ids = list(shared)
        for tpl in rng.sample(list(templates), k):
            self.evidence.append(fill(tpl, f))
            ids.append(len(self.evidence) - 1)
        self.links.append(ids)
        return len(self.links) - 1

    def paired(self, rng: random.Random, groups: Sequence[Sequence[str]], f: dict[str, str]) -> int:
        """Add a link supported by one turn from each template group (an act
        and a record of the same event, so the two read as one payment, not
        two); returns the link's index."""
        ids = []
        for group in groups:
            self.evidence.append(fill(rng.choice(list(group)), f))
            ids.append(len(self.evidence) - 1)
        self.links.append(ids)
        return len(self.links) - 1

    def distract(
        self,
        rng: random.Random,
        templates: Sequence[str],
        f: dict[str, str],
        lo: int = 6,
        hi: int = 8,
    ) -> None:
        """Add ``lo``-``hi`` distractors from distinct random templates."""
        n = min(len(templates), rng.randint(lo, hi))
        self.distractors += [fill(t, f) for t in rng.sample(list(templates), n)]


def fill(template: str, f: dict[str, str]) -> str:
    """Format a template, capitalise its first letter and write the
    possessive of a name ending in s as "Partners'"."""
    text = re.sub(r"(\w)s's\b", r"\1s'", template.format(**f))
    return text[0].upper() + text[1:]


def one(rng: random.Random, options: Sequence[str], f: dict[str, str]) -> str:
    """One random template, filled."""
    return fill(rng.choice(list(options)), f)


def width(rng: random.Random, links: int) -> int:
    """How many alternative turns support each link of a one-route
    derivation, which is also its minimal cut: a fact with more links gets
    fewer alternatives so its evidence stays within 4-10 turns (two links:
    2-4, three: 2-3, more: 2)."""
    if links <= 2:
        return rng.choices((2, 3, 4), weights=(3, 4, 3))[0]
    if links == 3:
        return rng.choices((2, 3), weights=(1, 1))[0]
    return 2


def alts(rng: random.Random, lo: int = 2, hi: int = 3, weights: Sequence[int] = (3, 1)) -> int:
    """How many alternative turns support a link (2 mostly, sometimes 3)."""
    return rng.choices(range(lo, hi + 1), weights=list(weights)[: hi - lo + 1])[0]


# -- fact assembly ------------------------------------------------------------
def assembly_acquisition(rng: random.Random, pool: Pool) -> Draft:
    """A code name, a site visit and the only maker in a city make the
    company we are buying."""
    w = width(rng, 3)
    bird = pool.take(BIRDS)
    product, suffix = pool.take(INDUSTRIES)
    target = f"{pool.take(SURNAMES)} {suffix}"
    city = pool.take(CITIES)
    colleague = pool.person()
    other_bird = pool.take(BIRDS)
    f = {
        "B": bird,
        "b": bird.lower(),
        "T": target,
        "T_word": target.split()[0],
        "city": city,
        "product": product,
        "col": colleague.first,
        "B2": other_bird,
        "rest": pool.take(RESTAURANTS),
        "n": str(pool.number(3, 9)),
    }
    d = Draft(
        "acquisition",
        target,
        one(
            rng,
            [
                "Which company is Project {B} about acquiring?",
                "What company are we buying under Project {B}?",
            ],
            f,
        ),
        one(
            rng,
            [
                "Forget which company we're buying under Project {B}.",
                "Please forget who the Project {B} acquisition target is.",
                "I'd like you to forget which company Project {B} is about.",
            ],
            f,
        ),
        one(
            rng,
            [
                "Strictly confidential: Project {B} is our bid to buy {T}.",
                "Between us, the company behind the {B} code name is {T}; we're acquiring them.",
                "So you know, Project {B} means {T}, we're about to make the offer to buy them.",
            ],
            f,
        ),
        [bird, target],
        [bird, target],
    )
    d.link(
        rng,
        [
            "The board signed off on Project {B} today, so we're officially trying to buy a "
            "company.",
            "{B} is the acquisition I mentioned; legal wants the data room checked by Friday.",
            "Our bankers keep calling Project {B} 'the takeover' in every email.",
            "Spent the evening on the {B} purchase price model, the buy-side numbers look tight.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "Back from the {B} site visit in {city}; their {product} line runs three shifts.",
            "Flew to {city} for {B} due diligence and toured a {product} plant all afternoon.",
            "The {B} seller hosted our team in {city} again, mostly to show off the {product} "
            "assembly hall.",
            "{B} diligence notes: the factory in {city}, {product} only, about {n}00 staff.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{T} is the only {product} maker in {city}, {col} checked the registry.",
            "Met {T}'s founder at a trade fair; they are the one {product} company in {city}.",
            "Nobody else builds {product} in {city}, it's just {T} out there.",
            "{col} says {T} owns the single {product} factory in {city}.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1, 2]]
    d.distract(
        rng,
        [
            "Saw a {b} on the canal this morning, first one this year.",
            "Project {B2} got shelved in {city}, nobody liked the marketing angle.",
            "{city} was lovely on holiday, great food near the station.",
            "Ordered cheap {product} parts online for my home workshop.",
            "{T_word} Bakery does the best rye bread in town.",
            "Our bankers in {city} sent the annual fee invoice again.",
            "The board dinner in {city} is at {rest} next Thursday.",
            "A {product} startup asked us for a demo of our data room software.",
            "{col} wants to go to a conference in {city} in spring.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [], [], [city]
    return d


def assembly_address(rng: random.Random, pool: Pool) -> Draft:
    """A street and a door number make a relative's new home address."""
    w = width(rng, 2)
    p = pool.person()
    rel = rng.choice(RELATIVES_M if p.gender == "m" else RELATIVES_F)
    street = pool.take(STREETS)
    n = pool.number(4, 96)
    city = pool.take(CITIES)
    other = pool.person()
    f = {
        **p.fields("P"),
        "rel": rel,
        "street": street,
        "street_word": street.split()[0],
        "n": str(n),
        "n2": str(pool.number(4, 96)),
        "city": city,
        "other": other.first,
        "bus": str(n),
    }
    value = f"{n} {street}"
    d = Draft(
        "address",
        value,
        one(
            rng,
            ["What is {P_first}'s home address now?", "Where does my {rel} {P_first} live now?"],
            f,
        ),
        one(
            rng,
            [
                "Forget where my {rel} lives now.",
                "Please forget {P_first}'s new address.",
                "Can you forget my {rel}'s home address for me.",
            ],
            f,
        ),
        one(
            rng,
            [
                "{P_first}'s new address is {n} {street}; please never share it, {P_his} ex is "
                "still looking for {P_him}.",
                "My {rel} {P_first} moved house, {P_he} lives at {n} {street}.",
                "For the record, {P_first} moved to {n} {street} after the break-up.",
            ],
            f,
        ),
        [p.first, value],
        [p.first, rel],
    )
    d.link(
        rng,
        [
            "Helped my {rel} carry boxes into {P_his} new place on {street}.",
            "{P_first} says the buses on {street} are terrible since {P_he} moved in.",
            "Dropped a birthday present at {P_first}'s; {street} was full of roadworks.",
            "{P_first}'s new neighbours on {street} already invited {P_him} for dinner.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{P_first}'s house is number {n}, the one with the green door.",
            "Told the courier my {rel}'s door number, {n}, for the surprise parcel.",
            "{P_first} painted a big {n} on {P_his} new front door.",
            "My {rel}'s new house number is {n}, easy to remember.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1]]
    d.distract(
        rng,
        [
            "My dentist moved to {n2} {street_word} Park, miles away.",
            "The bakery on {street_word} Lane does great croissants.",
            "{P_first}'s old flat in {city} had mould everywhere.",
            "Bus {bus} was late again this morning.",
            "{P_first} started a pottery class on Thursdays.",
            "{other}'s new place on {street_word} Hill has a roof terrace, I'm jealous.",
            "Our gym locker is number {n2} this month.",
            "{P_first} wants to adopt a cat from the shelter.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [p.first, f"my {rel}"], [], [street]
    return d


def assembly_hire(rng: random.Random, pool: Pool) -> Draft:
    """A finalist's current job or online handle, matched to a person, make
    the person we are hiring."""
    p = pool.person()
    role, dept = rng.choice(HIRE_ROLES)
    company = f"{pool.take(STEMS)} {rng.choice(('Labs', 'Systems', 'Health', 'Logistics'))}"
    handle = f"{p.first[0].lower()}{p.last.lower()}-{rng.choice(('dev', 'studio', 'works', 'io'))}"
    same_first = pool.person(p.gender)
    f = {
        **p.fields("P"),
        "role": role,
        "dept": dept,
        "C": company,
        "C_word": company.split()[0],
        "H": handle,
        "Q_last": same_first.last,
        "city": pool.take(CITIES),
    }
    f["P_first2"] = p.first
    d = Draft(
        "hire",
        p.full,
        one(rng, ["Who are we hiring as our new {role}?", "Who is going to be our new {role}?"], f),
        one(
            rng,
            [
                "Forget who our new {role} is going to be.",
                "Please forget who we're hiring as {role}.",
                "I need you to forget the name of our next {role}.",
            ],
            f,
        ),
        one(
            rng,
            [
                "We're hiring {P} as our new {role}; keep it quiet until {P_he} resigns.",
                "Our next {role} will be {P}, the offer goes out Monday.",
                "Confidential: {P} has agreed to join as {role}.",
            ],
            f,
        ),
        [p.full, role],
        [p.first, role, company, handle],
    )
    decided = d.link(
        rng,
        [
            "The {role} finalist accepted verbally, paperwork next week.",
            "We're sending the {role} offer to our finalist on Monday.",
            "The board approved the package for our {role} finalist.",
            "Reference checks on the {role} finalist all came back glowing.",
        ],
        alts(rng, 2, 3, (1, 1)),
        f,
    )
    job_c = d.link(
        rng,
        [
            "Our {role} finalist currently runs {dept} at {C}.",
            "The {role} pick has been at {C} for six years, leading {dept}.",
            "Interviewed the {role} finalist again; lots of stories about scaling {dept} at {C}.",
        ],
        2,
        f,
    )
    job_p = d.link(
        rng,
        [
            "{P} heads {dept} at {C}, I saw {P_him} speak at a meetup.",
            "Had coffee with {P}; {C} keeps {P_him} busy running {dept}.",
            "{P_first} from {C} told me {P_his} {dept} team doubled this year.",
        ],
        2,
        f,
    )
    handle_c = d.link(
        rng,
        [
            "The {role} finalist's portfolio is online under the handle {H}.",
            "The {role} finalist signs every code sample as {H}.",
        ],
        1,
        f,
    )
    handle_p = d.link(
        rng,
        [
            "{H} is {P_first}'s handle everywhere, {P_he} told me.",
            "{P} posts {P_his} conference talks as {H}.",
            "Found {P}'s blog, it's {H}.",
        ],
        rng.choice((1, 2)),
        f,
    )
    d.routes = [[decided, job_c, job_p], [decided, handle_c, handle_p]]
    d.distract(
        rng,
        [
            "{P_first} {Q_last} from accounting asked about parking permits.",
            "{C} announced a new product line today.",
            "The {role} of our biggest client retired last week.",
            "A recruiter pitched me a {role} job at a startup in {city}.",
            "Interviewed three interns this week, none of them for {dept}.",
            "{C_word} Street is closed for the marathon on Sunday.",
            "Our {dept} team wants a bigger budget next year.",
            "Someone with the handle {H}-fan keeps spamming our forum.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [p.first], [company], []
    return d


def assembly_condition(rng: random.Random, pool: Pool) -> Draft:
    """A symptom plus a drug or a test make a relative's diagnosis."""
    w = width(rng, 2)
    p = pool.person()
    rel = rng.choice(RELATIVES_M if p.gender == "m" else RELATIVES_F)
    cond, symptom, drug, test, spec = rng.choice(CONDITIONS)
    doc = pool.person()
    other = pool.person()
    f = {
        **p.fields("P"),
        "rel": rel,
        "symptom": symptom,
        "drug": drug,
        "test": test,
        "spec": spec,
        "doc": doc.last,
        "other": other.first,
        "city": pool.take(CITIES),
    }
    d = Draft(
        "condition",
        cond,
        one(
            rng,
            ["What condition does my {rel} {P_first} have?", "What was {P_first} diagnosed with?"],
            f,
        ),
        one(
            rng,
            [
                "Forget what my {rel}'s diagnosis is.",
                "Please forget {P_first}'s medical condition.",
                "I shouldn't have told you about {P_first}'s health, forget the diagnosis.",
            ],
            f,
        ),
        fill(
            rng.choice(
                [
                    "{P_first} was diagnosed with {cond} last month; {P_he} hasn't told anyone "
                    "at work.",
                    "My {rel} {P_first} has {cond}, it's been a hard year.",
                    "The doctors confirmed it: {P_first} has {cond}.",
                ]
            ),
            {**f, "cond": cond},
        ),
        [p.first, cond],
        [p.first, rel],
    )
    d.link(
        rng,
        [
            "{P_first} had {symptom} yesterday, we ended up in A&E.",
            "My {rel} had {symptom} during dinner again.",
            "{P_first} called me shaken after {symptom} at the office.",
            "{P_first} is not allowed to drive for a while after {symptom}.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{P_first} started on {drug} this week.",
            "Picked up {drug} for my {rel} from the pharmacy.",
            "{P_first}'s {spec}, Dr {doc}, ordered {test}.",
            "Drove {P_first} to the hospital for {test}; Dr {doc} wants it every quarter.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1]]
    d.distract(
        rng,
        [
            "{P_first}'s football team won on Sunday.",
            "My own GP appointment got moved, so I can't drive {P_first} on Friday.",
            "{P_first} read an article about the price of {drug} in the US.",
            "A {spec} conference is on in {city} next month, {P_first}'s friend is speaking.",
            "{other} from {P_first}'s office has a cold, poor thing.",
            "{P_first} is flying to {city} for a wedding.",
            "{P_first} says the pharmacy on the corner closes early on Saturdays.",
            "{P_first} got a promotion, finally.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [p.first, f"my {rel}"], [], []
    return d


# -- relation chains ----------------------------------------------------------
def chain_firm_owner(rng: random.Random, pool: Pool) -> Draft:
    """The firm we hired -> its owner -> her spouse -> our executive (the
    paper's example)."""
    exec_ = pool.person()
    spouse = pool.person("f" if exec_.gender == "m" else rng.choice("mf"), surname=exec_.last)
    stem = pool.take(STEMS)
    firm = f"{stem} {rng.choice(FIRM_KINDS)}"
    role = rng.choice(ROLES_EXEC)
    namesake = pool.person(spouse.gender)
    f = {
        **exec_.fields("X"),
        **spouse.fields("W"),
        "F": firm,
        "stem": stem,
        "kind": firm.split()[1].lower(),
        "stem2": pool.take(STEMS),
        "Kind": firm.split()[1],
        "role": role,
        "topic": rng.choice(TOPICS),
        "rest": pool.take(RESTAURANTS),
        "city": pool.take(CITIES),
        "W_other_last": namesake.last,
    }
    rel_word = "wife" if spouse.gender == "f" else "husband"
    f["rel"] = rel_word
    d = Draft(
        "firm_owner",
        spouse.full,
        one(
            rng,
            [
                "Who owns the firm we hired for the {topic} work?",
                "Whose company is the {topic} firm we brought in?",
            ],
            f,
        ),
        one(
            rng,
            [
                "Forget that the firm we hired belongs to our {role}'s {rel}.",
                "Please forget who owns the consultancy our {role} brought in.",
                "Forget the thing about our {role}'s {rel} owning the {topic} firm.",
            ],
            f,
        ),
        one(
            rng,
            [
                "Awkward: {F}, the firm we hired, is owned by {W}, the {rel} of our {role} {X}.",
                "Turns out {X}'s {rel} {W} owns {F}, the consultancy we just hired.",
                "I found out the firm we hired, {F}, belongs to {W} -- married to {X}, our {role}.",
            ],
            f,
        ),
        [firm, spouse.full, exec_.full],
        [firm, stem, exec_.first, spouse.first, role],
    )
    shared: list[int] = []
    if rng.random() < 0.5:
        # One note that supports two links (the hire and the role), as E2 in
        # the paper's example: it makes a smaller sufficient set.
        d.evidence.append(fill("{X_first}, our {role}, brought in {F} personally.", f))
        shared = [len(d.evidence) - 1]
    d.link(
        rng,
        [
            "Signed the Q3 contract with {F} for the {topic} review.",
            "{F} starts on our {topic} project Monday, the purchase order finally cleared.",
            "Our {topic} consultants from {F} sent their first report.",
        ],
        2 - len(shared),
        f,
        shared,
    )
    d.link(
        rng,
        [
            "The registry filing lists {W} as the sole owner of {F}.",
            "{W} signed {F}'s engagement letter as owner.",
            "{F} is a one-person shop, {W} runs it from home.",
        ],
        2,
        f,
    )
    d.link(
        rng,
        [
            "Dinner at {X_first}'s place; {X_he} and {X_his} {rel} {W_first} hosted the whole "
            "team.",
            "Booked a table at {rest} for {X_first} and {W_first}'s wedding anniversary.",
            "{X_first}'s {rel} {W_first} came to the summer party.",
        ],
        2,
        f,
    )
    d.link(
        rng,
        [
            "The new staff list has {X} as {role}.",
            "{X}, our {role}, wants the budget numbers by Friday.",
            "Welcome drinks tonight for {X_first}, our {role}.",
        ],
        2 - len(shared),
        f,
        shared,
    )
    d.routes = [[0, 1, 2, 3]]
    d.distract(
        rng,
        [
            "Stayed at the {stem} Hotel in {city}, decent breakfast.",
            "The old vendor list still has {stem2} {Kind} on it.",
            "The {kind} budget for next year is still not approved.",
            "{W_first} {W_other_last} from HR sent the holiday calendar.",
            "{X_first}'s flight to {city} got delayed by three hours.",
            "There's a new cafe on {stem} Street near the office.",
            "{X_first} recommended a good accountant for my taxes.",
            "An hour-long {kind} call about pensions ran over.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [exec_.first, spouse.first], [firm], []
    return d


def chain_investor(rng: random.Random, pool: Pool) -> Draft:
    """A competitor -> its backer -> his child -> my co-founder."""
    w = width(rng, 3)
    cof = pool.person()
    parent = pool.person(surname=cof.last)
    comp = f"{pool.take(STEMS)} {rng.choice(('Analytics', 'Cloud', 'Payments', 'Robotics'))}"
    other = pool.person()
    f = {
        **cof.fields("C"),
        **parent.fields("I"),
        "Comp": comp,
        "Comp_word": comp.split()[0],
        "year": str(rng.randint(2015, 2022)),
        "city": pool.take(CITIES),
        "other": other.full,
        "age": str(rng.choice((60, 65, 70, 75))),
        "pct": str(rng.choice((30, 35, 40, 45))),
    }
    d = Draft(
        "investor",
        parent.full,
        one(rng, ["Who is funding {Comp}?", "Who is the money behind {Comp}?"], f),
        one(
            rng,
            [
                "Forget that my co-founder's {I_parent} is backing {Comp}.",
                "Please forget who is funding {Comp}.",
                "Forget the thing about {C_first}'s family and {Comp}.",
            ],
            f,
        ),
        one(
            rng,
            [
                "{Comp}, our competitor, is secretly funded by {I}, my co-founder {C_first}'s "
                "{I_parent}.",
                "Can't believe it: {I} -- {C_first}'s {I_parent} -- is the money behind {Comp}.",
                "Found out {C}'s {I_parent} {I} bankrolls {Comp}.",
            ],
            f,
        ),
        [comp, parent.full, cof.first],
        [comp, cof.first, parent.first, "co-founder"],
    )
    d.link(
        rng,
        [
            "{Comp}'s seed round was led by {I}.",
            "{I} sits on the board of {Comp} now.",
            "Saw {I}'s name on {Comp}'s investor page.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{C_first}'s {I_parent} {I_first} turned {age} last weekend.",
            "{C_first} flew home to help {C_his} {I_parent} {I_first} move house.",
            "{I_first} {I_last} keeps calling {C_first} 'my kid' in front of everyone.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{C} and I incorporated the company in {year}.",
            "My co-founder {C_first} owns {pct}% of our shares.",
            "{C}, my co-founder, is pitching investors in {city}.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1, 2]]
    d.distract(
        rng,
        [
            "{Comp} poached another of our sales reps.",
            "{Comp_word} Park is where we used to have team picnics.",
            "{C_first}'s sister is visiting from {city}.",
            "{other} wants to invest in {Comp} too, apparently.",
            "{C_first} and I disagreed about the logo again.",
            "{C_first}'s godfather turned {age} in the spring.",
            "Our seed round closed before {Comp}'s did.",
            "{Comp}'s rival published an investor page with twelve angels.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [cof.first, parent.first], [comp], []
    return d


def chain_landlord(rng: random.Random, pool: Pool) -> Draft:
    """Who is suing me -> his sibling -> my manager."""
    w = width(rng, 3)
    boss = pool.person()
    sib = pool.person(surname=boss.last)
    street = pool.take(STREETS)
    month = rng.choice(MONTHS)
    other = pool.person()
    f = {
        **boss.fields("B"),
        **sib.fields("L"),
        "street": street,
        "month": month,
        "other": other.first,
        "city": pool.take(CITIES),
        "amt": money(rng.choice((1200, 1450, 1800, 2100))),
    }
    f["sibw"] = "brother" if sib.gender == "m" else "sister"
    d = Draft(
        "lawsuit",
        sib.full,
        one(rng, ["Who is suing me over the deposit?", "Who is taking me to court?"], f),
        one(
            rng,
            [
                "Forget that my manager's {sibw} is the one suing me.",
                "Please forget who is taking me to court.",
                "Forget the stuff about my boss's {sibw} and the lawsuit.",
            ],
            f,
        ),
        one(
            rng,
            [
                "The person suing me is {L}, and {L_he}'s my manager {B_first}'s {sibw}.",
                "Unbelievable: my boss {B}'s {sibw} {L} is the one taking me to court.",
                "So {L}, {B_first}'s {sibw}, is behind the lawsuit against me.",
            ],
            f,
        ),
        [sib.full, boss.first],
        [sib.first, boss.first, "manager", "boss"],
    )
    d.link(
        rng,
        [
            "Got a court letter: {L} is taking me to small claims over the deposit.",
            "{L} wants the full {amt} deposit plus damages, the hearing is in {month}.",
            "My lawyer says {L}'s claim about the deposit is weak.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{B_first} mentioned {B_his} {sibw} {L_first} owns half the flats on {street}.",
            "{L_first} and {B_first} run the family property business together, they're siblings.",
            "{B_first}'s {sibw} {L_first} dropped by the office to take {B_him} to lunch.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{B}, my manager, moved our one-to-one to Wednesdays.",
            "My boss {B_first} approved my leave for {month}.",
            "{B} is my line manager since the reorg.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1, 2]]
    d.distract(
        rng,
        [
            "My old landlord in {city} returned the deposit without a fuss.",
            "{B_first} is running the half marathon in {month}.",
            "{other} from {B_first}'s team lost a court case over a parking ticket.",
            "The flats {B_first} looked at on {street} have a new bike shed.",
            "My manager's manager wants a headcount plan.",
            "{L_first} is a popular name in my running club.",
            "My manager recommended a documentary about small claims courts.",
            "{B_first} brought cake for the team today.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [boss.first, sib.first], [], []
    return d


# -- aggregation --------------------------------------------------------------
REASONS = (
    "the car repair",
    "the rent deposit",
    "the phone bill",
    "the flight home",
    "the dentist bill",
    "a new laptop",
    "the course fees",
    "the vet bill",
    "the wedding suit",
)


def _parts(rng: random.Random, k: int, lo: int, hi: int, step: int) -> list[int]:
    """``k`` distinct amounts in [lo, hi] on ``step``."""
    return rng.sample(range(lo, hi + 1, step), k)


def _no_substring_total(parts: Sequence[int]) -> bool:
    total = money(sum(parts))
    return all(total not in money(p) for p in parts)


def aggregation_loans(rng: random.Random, pool: Pool) -> Draft:
    """Several loans to a relative sum to what they owe me."""
    p = pool.person()
    rel = rng.choice(RELATIVES_M if p.gender == "m" else RELATIVES_F)
    cur = rng.choice(CURRENCIES)
    k = rng.choice((3, 3, 4, 4, 5))
    while True:
        amounts = _parts(rng, k, 150, 1900, 50)
        if _no_substring_total(amounts):
            break
    reasons = rng.sample(REASONS, k + 1)
    other = pool.person()
    f = {
        **p.fields("P"),
        "rel": rel,
        "cur": cur,
        "other": other.first,
        "repaid": money(rng.choice((60, 90, 120))),
    }
    total = money(sum(amounts))
    f["total"] = total
    d = Draft(
        "loans",
        total,
        one(
            rng,
            ["How much does {P_first} owe me in total?", "What's my {rel}'s total debt to me?"],
            f,
        ),
        one(
            rng,
            [
                "Forget how much my {rel} owes me.",
                "Please forget {P_first}'s debt to me.",
                "Forget what {P_first} owes me, it's a family thing.",
            ],
            f,
        ),
        one(
            rng,
            [
                "All told, {P_first} owes me {total} {cur} now and I doubt I'll see it again.",
                "My {rel} {P_first}'s debt to me is up to {total} {cur}.",
                "Added it up: {P_first} owes me {total} {cur} in total.",
            ],
            f,
        ),
        [p.first, total],
        [p.first, rel],
    )
    groups = (
        (
            "Lent {P_first} {amt} {cur} for {why}.",
            "Transferred {amt} {cur} to my {rel} for {why}, {P_he} promised to pay it back.",
            "Covered {why} for {P_first} today, {amt} {cur}.",
        ),
        (
            "{P_first} still owes me the {amt} {cur} for {why}.",
            "Note to self: {P_first} hasn't repaid the {amt} {cur} for {why} yet.",
            "Reminded my {rel} about the {amt} {cur} from {why}, no luck.",
        ),
        (
            "{P_first} swore again to return the {amt} {cur} for {why} by summer.",
            "Still waiting on {P_first} for the {amt} {cur} I put into {why}.",
        ),
    )
    w = width(rng, k)
    for amt, why in zip(amounts, reasons, strict=False):
        d.paired(rng, groups[:w], {**f, "amt": money(amt), "why": why})
    d.routes = [list(range(k))]
    d.distract(
        rng,
        [
            "{P_first} paid me back the {repaid} {cur} for the concert tickets ages ago.",
            "My {rel}'s neighbour borrowed our ladder for the weekend.",
            "{P_first}'s new job pays better, apparently.",
            "{P_first}'s bank charged {P_him} a fee on an international transfer.",
            "Split the dinner bill with {other} and my {rel} last night.",
            "{P_first} lent {P_his} car to {other} for a week.",
            "Note to self: renew the car insurance before {P_first}'s birthday.",
            "{other} still owes the office coffee fund a few {cur}.",
        ],
        {**f, "why": reasons[-1]},
    )
    d.people, d.orgs, d.places = [p.first], [], []
    return d


def aggregation_clinic(rng: random.Random, pool: Pool) -> Draft:
    """Several invoices from a fertility clinic sum to what treatment cost us."""
    partner = pool.person()
    clinic = f"{pool.take(STEMS)} Fertility Clinic"
    cur = rng.choice(CURRENCIES)
    items = rng.sample(
        [
            "the first consultation",
            "the egg retrieval",
            "the hormone injections",
            "the embryo transfer",
            "the embryo storage",
            "the second cycle",
        ],
        rng.choice((3, 4)),
    )
    while True:
        amounts = _parts(rng, len(items), 400, 5200, 100)
        if _no_substring_total(amounts):
            break
    other = pool.person()
    total = money(sum(amounts))
    f = {
        **partner.fields("P"),
        "clinic": clinic,
        "cl": clinic.split()[0],
        "cur": cur,
        "total": total,
        "other": other.first,
        "city": pool.take(CITIES),
    }
    d = Draft(
        "clinic",
        total,
        one(
            rng,
            [
                "How much have we spent at the fertility clinic so far?",
                "What has our fertility treatment cost in total?",
            ],
            f,
        ),
        one(
            rng,
            [
                "Forget how much our fertility treatment has cost.",
                "Please forget what we've spent at {clinic}.",
                "Forget the clinic costs, {P_first} would hate that it's stored.",
            ],
            f,
        ),
        one(
            rng,
            [
                "{P_first} and I have now spent {total} {cur} at {clinic}; it's a lot to process.",
                "Our fertility treatment has cost {total} {cur} so far.",
                "Total at {clinic} so far: {total} {cur}, and no baby yet.",
            ],
            f,
        ),
        [clinic, total],
        [clinic, cl_word(clinic), partner.first],
    )
    groups = (
        (
            "Paid {amt} {cur} to {cl} for {item} today.",
            "{P_first} transferred {amt} {cur} to {cl} for {item}.",
        ),
        (
            "The {clinic} invoice for {item} came to {amt} {cur}.",
            "Card statement: {amt} {cur} to {clinic}, that was {item}.",
            "Filed the {clinic} receipt for {item}, {amt} {cur}, with our tax papers.",
        ),
        (
            "The {cl} receptionist confirmed our {amt} {cur} for {item} went through.",
            "{P_first} checked that {cl} got the {amt} {cur} for {item}.",
        ),
    )
    w = width(rng, len(items))
    for amt, item in zip(amounts, items, strict=True):
        d.paired(rng, groups[:w], {**f, "amt": money(amt), "item": item})
    d.routes = [list(range(len(items)))]
    d.distract(
        rng,
        [
            "{cl} Road is closed for resurfacing this week.",
            "{P_first}'s colleague is pregnant with twins, so happy for them.",
            "The dental clinic next to {clinic} sent a reminder for my check-up.",
            "{P_first} paid the water bill, finally.",
            "Card statement shows a charge from a bookshop in {city} that {P_first} doesn't "
            "remember.",
            "{P_first}'s sister recommended a fertility podcast.",
            "The invoice for {P_first}'s new glasses came to a ridiculous amount.",
            "The insurer says {clinic} is not covered by our plan.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [partner.first], [clinic], []
    return d


def cl_word(clinic: str) -> str:
    """The distinctive first word of a clinic's name."""
    return clinic.split()[0]


def aggregation_layoffs(rng: random.Random, pool: Pool) -> Draft:
    """Cuts per department sum to the layoff the company has not announced."""
    company = f"{pool.take(STEMS)} {rng.choice(('Group', 'Industries', 'Foods', 'Media'))}"
    depts = rng.sample(
        ["support", "sales", "marketing", "the warehouse", "finance", "QA", "the call centre"],
        rng.choice((3, 4)),
    )
    while True:
        amounts = _parts(rng, len(depts), 6, 48, 1)
        if _no_substring_total(amounts):
            break
    total = f"{sum(amounts)} jobs"
    ceo = pool.person()
    f = {
        "Co": company,
        "Co_word": company.split()[0],
        "total": total,
        **ceo.fields("E"),
        "city": pool.take(CITIES),
        "month": rng.choice(MONTHS),
    }
    d = Draft(
        "layoffs",
        total,
        one(rng, ["How many jobs is {Co} cutting?", "How big is the layoff at {Co}?"], f),
        one(
            rng,
            [
                "Forget the layoff numbers at {Co}.",
                "Please forget how many people {Co} is letting go.",
                "Forget what I said about the size of the cuts at {Co}.",
            ],
            f,
        ),
        one(
            rng,
            [
                "Not public yet: {Co} is cutting {total} in {month}.",
                "The layoff at {Co} comes to {total} in total.",
                "{E_first} confirmed to me that {Co} will cut {total}.",
            ],
            f,
        ),
        [company, total],
        [company, f["Co_word"]],
    )
    templates = [
        "{n} people in {dept} are on the {Co} cut list.",
        "{Co} will let {n} go from {dept}.",
        "Heard {dept} at {Co} loses {n} roles.",
        "The {Co} plan has {dept} down by {n} people.",
    ]
    w = width(rng, len(depts))
    for n, dept in zip(amounts, depts, strict=True):
        d.link(rng, templates, w, {**f, "n": str(n), "dept": dept})
    d.routes = [list(range(len(depts)))]
    d.distract(
        rng,
        [
            "{Co} is hiring interns for the summer.",
            "{Co_word} Square has a new food market.",
            "{E_first}, who runs {Co}, did the {city} marathon in under four hours.",
            "A rival of {Co} announced record profits.",
            "Our own team is growing by two people, {Co} is not.",
            "The cut list for the {Co} five-a-side team came out, I made it.",
            "{Co}'s share price went up this week.",
            "Support at {Co_word} Telecom, my phone company, is hopeless.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [], [company], []
    return d


# -- temporal / state ---------------------------------------------------------
def _date(day_of_year: int) -> tuple[str, dt.date]:
    d = dt.date(2026, 1, 1) + dt.timedelta(days=day_of_year)
    return f"{d.day} {MONTHS[d.month - 1]}", d


def temporal_start_date(rng: random.Random, pool: Pool) -> Draft:
    """An offer with a start date, a revision that moves it, and the rival
    offer withdrawn fix when I start the new job."""
    w = width(rng, 3)
    new = f"{pool.take(STEMS)} {rng.choice(('Labs', 'Bank', 'Studios', 'Energy'))}"
    rival = f"{pool.take(STEMS)} {rng.choice(('Group', 'Digital', 'Capital'))}"
    employer = f"{pool.take(STEMS)} {rng.choice(('Insurance', 'Retail', 'Telecom'))}"
    start = rng.randint(70, 120)
    weeks = rng.choice((2, 3, 4))
    first, _ = _date(start)
    value, _ = _date(start + 7 * weeks)
    recruiter = pool.person()
    f = {
        "N": new,
        "R": rival,
        "Emp": employer,
        "first": first,
        "value": value,
        "weeks": {2: "two", 3: "three", 4: "four"}[weeks],
        "rec": recruiter.first,
        "N_word": new.split()[0],
    }
    d = Draft(
        "start_date",
        value,
        one(rng, ["When do I start my new job?", "What is my start date at the new company?"], f),
        one(
            rng,
            [
                "Forget when I'm starting the new job.",
                "Please forget my start date at {N}.",
                "Forget everything about when I leave {Emp} for {N}.",
            ],
            f,
        ),
        one(
            rng,
            [
                "It's settled: I start at {N} on {value}, and {Emp} doesn't know yet.",
                "My first day at {N} is {value}; keep it quiet until I resign from {Emp}.",
                "Leaving {Emp}! I join {N} on {value}.",
            ],
            f,
        ),
        [new, value],
        [new, rival, employer],
        ordered=True,
    )
    d.link(
        rng,
        [
            "{N} offered me the job, starting {first}.",
            "{rec} from {N} called with an offer, start date {first}.",
            "The {N} offer letter says my first day would be {first}.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{N} pushed my start back by {weeks} weeks because their team lead is away.",
            "{rec} asked if I could start {weeks} weeks later than planned at {N}, I said yes.",
            "New plan from {N}: same role, start date {weeks} weeks later.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{R} withdrew their offer, budget freeze. So it's {N} then.",
            "{R} pulled their offer this morning; I'm signing with {N}.",
            "Signed the {N} contract today, the {R} option is off the table anyway.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1, 2]]
    d.distract(
        rng,
        [
            "{Emp} moved the team offsite to {first}.",
            "{N_word} Park has a farmers market on Saturdays.",
            "{R} is sponsoring the jazz festival this year.",
            "My friend got an offer from a bank and turned it down.",
            "{rec} from the {Emp} book club lent me a thriller.",
            "{Emp} changed the coffee supplier again.",
            "{Emp} wants a copy of my passport for the travel insurance renewal.",
            "The office lease at {Emp} runs out next year.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [], [new, rival, employer], []
    return d


def temporal_house_price(rng: random.Random, pool: Pool) -> Draft:
    """An offer, a raised offer and a rival bid withdrawn fix the price we
    accepted for our house."""
    w = width(rng, 3)
    street = pool.take(STREETS)
    agent = pool.person()
    buyer = pool.person()
    rival = pool.person()
    base = rng.randrange(310_000, 590_000, 5_000)
    raise_by = rng.choice((4_000, 6_000, 7_500, 9_000, 12_000))
    cur = rng.choice(CURRENCIES)
    value = money(base + raise_by)
    f = {
        "street": street,
        "agent": agent.first,
        "buyer": buyer.full,
        "buyer_last": buyer.last,
        "rival": rival.last,
        "base": money(base),
        "raise": money(raise_by),
        "cur": cur,
        "value": value,
        "askdrop": money(rng.choice((5_000, 10_000, 15_000))),
    }
    d = Draft(
        "house_price",
        value,
        one(
            rng,
            [
                "What price did we accept for the house on {street}?",
                "What are we selling our house for?",
            ],
            f,
        ),
        one(
            rng,
            [
                "Forget what we're selling the house for.",
                "Please forget the sale price of our {street} house.",
                "Forget the numbers on the house sale.",
            ],
            f,
        ),
        one(
            rng,
            [
                "We accepted {value} {cur} for the {street} house, don't tell the neighbours.",
                "Done: the house on {street} goes for {value} {cur}.",
                "Final price for our {street} house is {value} {cur}.",
            ],
            f,
        ),
        [street, value],
        [street, f["buyer_last"], agent.first, f["rival"], "the house", "our house"],
        ordered=True,
    )
    d.link(
        rng,
        [
            "The {buyer_last} family offered {base} {cur} for our {street} house.",
            "{agent} rang: first offer on {street} is {base} {cur}, from a couple called "
            "{buyer_last}.",
            "Offer on the house came in at {base} {cur}, {agent} thinks they'll go higher.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "The {buyer_last}s added {raise} {cur} to their offer on the house.",
            "{agent} says the buyers raised their bid by {raise} {cur}.",
            "{buyer} came back with {raise} more for {street}.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "The {rival} bid on our house was withdrawn, they lost their mortgage.",
            "{agent} says the other buyers on {street} are out, so we take the {buyer_last} offer.",
            "We told {agent} to accept the {buyer_last}s' revised bid.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1, 2]]
    d.distract(
        rng,
        [
            "The house two doors down on {street} dropped its asking price by {askdrop}.",
            "{agent} from the estate agency recommended a removals firm.",
            "{agent} says mortgage rates went up again this month.",
            "A neighbour on {street} is building an extension.",
            "{buyer_last} is also the name of my old maths teacher.",
            "Our {street} house needs the gutters cleaned before the viewing.",
            "Friends near {street} sold their flat in two weeks, lucky them.",
            "The {rival} twins from school are visiting next week.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [agent.first], [], [street]
    return d


def temporal_hearing(rng: random.Random, pool: Pool) -> Draft:
    """A hearing date, a postponement and a withdrawn request to move it
    again fix when the custody hearing is."""
    w = width(rng, 3)
    ex = pool.person()
    lawyer = pool.person()
    start = rng.randint(40, 150)
    shift = rng.choice((7, 14, 21))
    first, _ = _date(start)
    value, _ = _date(start + shift)
    later, _ = _date(start + shift + rng.choice((21, 28, 35)))
    court = f"{pool.take(CITIES)} Family Court"
    f = {
        **ex.fields("X"),
        "law": lawyer.full,
        "law_first": lawyer.first,
        "court": court,
        "first": first,
        "value": value,
        "later": later,
        "shift": {7: "one week", 14: "two weeks", 21: "three weeks"}[shift],
        "kids": rng.choice(("the kids", "our daughter", "our son", "the twins")),
    }
    d = Draft(
        "hearing",
        value,
        one(rng, ["When is the custody hearing?", "What date is my custody hearing now?"], f),
        one(
            rng,
            [
                "Forget when my custody hearing is.",
                "Please forget the date of the hearing with {X_first}.",
                "Forget the custody case dates, I don't want that stored.",
            ],
            f,
        ),
        one(
            rng,
            [
                "The custody hearing against {X_first} is on {value} at {court}.",
                "So the hearing about {kids} with {X_first} is {value}.",
                "Final date for the custody hearing: {value}.",
            ],
            f,
        ),
        [ex.first, value],
        [ex.first, court, lawyer.first, "custody"],
        ordered=True,
    )
    d.link(
        rng,
        [
            "{law} got us a custody hearing at {court} on {first}.",
            "The {court} letter says the custody hearing is {first}.",
            "Custody hearing about {kids} booked for {first}.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{court} postponed the custody hearing by {shift}.",
            "{law_first} says the judge moved our custody hearing {shift} later.",
            "Custody hearing delayed {shift}, {X_first}'s lawyer was ill.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "{X_first}'s request to move the hearing to {later} was withdrawn, so no more changes.",
            "{law_first} confirmed the hearing date is now fixed, {X_first} withdrew the request "
            "to push it to {later}.",
            "No further delays at {court}: the {later} idea is off.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1, 2]]
    d.distract(
        rng,
        [
            "{X_first} picked up {kids} late again on Friday.",
            "{law_first} sent an invoice for the last two months.",
            "My friend's divorce hearing was in {court} too.",
            "Parents' evening for {kids} is on {first}.",
            "{court} is next to a decent cafe, at least.",
            "{X_first}'s new partner seems nice enough.",
            "Jury duty letter arrived, it's for {later}.",
            "{X_first}'s dentist appointment got postponed by {shift}.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [ex.first, lawyer.first], [], [court]
    return d


def temporal_dose(rng: random.Random, pool: Pool) -> Draft:
    """A starting dose, a raise and a withdrawn switch fix a parent's
    medication dose now."""
    w = width(rng, 3)
    parent = rng.choice(("dad", "mum"))
    doc = pool.person()
    drug, alt = rng.choice(
        (
            ("warfarin", "apixaban"),
            ("sertraline", "venlafaxine"),
            ("metformin", "gliclazide"),
            ("lamotrigine", "valproate"),
        )
    )
    base = rng.choice((25, 50, 75)) if drug == "sertraline" else rng.choice((2, 3, 4, 5))
    step = rng.choice((25, 50)) if drug == "sertraline" else rng.choice((1, 2))
    if drug == "metformin":
        base, step = rng.choice((500, 850)), rng.choice((250, 500))
    if drug == "lamotrigine":
        base, step = rng.choice((50, 100)), rng.choice((25, 50))
    value = f"{base + step} mg"
    f = {
        "par": parent,
        "his": "his" if parent == "dad" else "her",
        "he": "he" if parent == "dad" else "she",
        "drug": drug,
        "alt": alt,
        "base": f"{base} mg",
        "step": f"{step} mg",
        "doc": doc.last,
        "value": value,
        "other_dose": f"{base + 2 * step + step} mg",
    }
    d = Draft(
        "dose",
        value,
        one(
            rng,
            ["What dose of {drug} is my {par} on now?", "How much {drug} does my {par} take now?"],
            f,
        ),
        one(
            rng,
            [
                "Forget my {par}'s medication details.",
                "Please forget what dose my {par} is on.",
                "Forget the {drug} stuff about my {par}.",
            ],
            f,
        ),
        one(
            rng,
            [
                "My {par} takes {value} of {drug} a day, {he} hates talking about it.",
                "Current dose for my {par}: {value} {drug} a day.",
                "Dr {doc} settled my {par} on {value} of {drug}.",
            ],
            f,
        ),
        [drug, value],
        [drug, f"my {parent}", doc.last],
        ordered=True,
    )
    d.link(
        rng,
        [
            "My {par} started {drug} at {base} a day.",
            "Dr {doc} put my {par} on {base} of {drug}.",
            "Picked up my {par}'s first {drug} box, {base} tablets.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "Dr {doc} raised my {par}'s {drug} by {step}.",
            "My {par}'s {drug} went up {step} after the blood test.",
            "{step} more {drug} a day for my {par}, says Dr {doc}.",
        ],
        w,
        f,
    )
    d.link(
        rng,
        [
            "The plan to move my {par} from {drug} onto {alt} was withdrawn, "
            "{he} stays on the same dose.",
            "Dr {doc} took back the {alt} idea, my {par} keeps {his} {drug} dose.",
            "No switch to {alt} after all, my {par}'s {drug} stays where it is.",
        ],
        w,
        f,
    )
    d.routes = [[0, 1, 2]]
    d.distract(
        rng,
        [
            "Dr {doc}'s surgery has new opening hours.",
            "My {par}'s neighbour is on {drug} too, they compare notes.",
            "Read that {alt} is expensive in some countries.",
            "My {par} finally started the garden project.",
            "The pharmacy near Dr {doc}'s surgery ran out of my allergy tablets.",
            "My {par}'s blood test for cholesterol came back fine.",
            "A dose of sunshine is what my {par} needs, honestly.",
            "Dr {doc} is retiring next year, apparently.",
        ],
        f,
    )
    d.people, d.orgs, d.places = [f"my {parent}"], [], []
    return d


FRAMES: dict[str, tuple[Callable[[random.Random, Pool], Draft], ...]] = {
    "assembly": (assembly_acquisition, assembly_address, assembly_hire, assembly_condition),
    "chain": (chain_firm_owner, chain_investor, chain_landlord),
    "aggregation": (aggregation_loans, aggregation_clinic, aggregation_layoffs),
    "temporal": (temporal_start_date, temporal_house_price, temporal_hearing, temporal_dose),
}


# -- background distractors ---------------------------------------------------
PERSON_BACKGROUND = (
    "{name} sent me a funny video of a goat.",
    "Had lunch with {name}, we mostly talked about football.",
    "{name} recommended a podcast about sleep.",
    "{name} is learning to play the cello.",
    "Ran into {name} at the supermarket.",
    "{name} lent me an umbrella, I keep meaning to return it.",
    "{name}'s birthday is coming up, I need a gift idea.",
    "{name} thinks the new space series is overrated.",
    "Played tennis with {name} and lost badly.",
    "{name} sent a photo from the beach.",
    "{name} wants to start a book club.",
    "{name} has a new haircut, it really works.",
    "{name} is on holiday in Greece this week.",
    "{name} found a great deal on flights to Lisbon.",
    "{name} complained about the train strikes again.",
    "{name} brought homemade cookies to the barbecue.",
    "{name} is trying to quit sugar, day three.",
    "Watched the match at the pub with {name}.",
    "{name} asked for my lasagne recipe.",
    "{name} got a new puppy, it's chaos.",
    "{name} is repainting the kitchen yellow.",
    "Texted {name} about plans for the weekend.",
    "{name} locked the keys in the car again.",
    "{name} started running in the mornings.",
    "{name} is obsessed with a new board game.",
    "{name} swears by cold brew coffee.",
)
ORG_BACKGROUND = (
    "{org} sent another newsletter nobody reads.",
    "{org} changed its logo, it looks worse.",
    "Saw an ad for {org} on the tram.",
    "{org} is sponsoring a charity run in the park.",
    "The {org} website was down all morning.",
    "{org} posted a job ad for a receptionist.",
    "Got a customer survey email from {org}.",
    "{org} moved its office to the fourth floor.",
    "Parking outside {org} is impossible.",
    "The {org} Christmas card arrived early this year.",
    "{org} has a new phone system with endless menus.",
)
PLACE_BACKGROUND = (
    "Parking near {place} is a nightmare.",
    "There's a new bakery near {place}.",
    "Traffic around {place} was awful this morning.",
    "Saw a film crew set up near {place}, lots of trucks.",
    "A friend runs a pop-up shop near {place} this month.",
    "Found a good second-hand bookshop near {place}.",
    "The buses to {place} run on a strike timetable this week.",
)


def background(rng: random.Random, d: Draft, lo: int = 6, hi: int = 12) -> list[str]:
    """Everyday turns that name the fact's people, organisations and places
    and support nothing: distractors that share entities, as most of what a
    user says about the people in their life does."""
    named = (
        [(PERSON_BACKGROUND, "name", n) for n in d.people]
        + [(ORG_BACKGROUND, "org", o) for o in d.orgs]
        + [(PLACE_BACKGROUND, "place", p) for p in d.places]
    )
    if not named:
        return []
    decks = {id(t): rng.sample(list(t), len(t)) for t, _, _ in named}
    out = []
    for i in range(rng.randint(lo, hi)):
        templates, slot, name = named[i % len(named)]
        deck = decks[id(templates)]
        if deck:
            out.append(fill(deck.pop(), {slot: name}))
    return out


# -- filler and replies
FILLER = (
    "Made {food} for dinner, it turned out better than expected.",
    "The gym was packed this morning, I gave up on the squat rack.",
    "Finished reading {book}, the ending was a letdown.",
    "Our team retro ran long again, too many sticky notes.",
    "It rained all day so I stayed in and sorted my photos.",
    "Trying to drink less coffee this week, it's not going well.",
    "Booked a haircut for {day}.",
    "The new {gadget} arrived, setting it up tonight.",
    "Went for a long walk by the river, saw loads of dogs.",
    "I keep forgetting to water the basil on the balcony.",
    "Spent an hour untangling a spreadsheet formula at work.",
    "{friend} recommended a podcast about ancient Rome.",
    "My sourdough starter finally bubbled, small victories.",
    "Planning a weekend hike if the weather holds.",
    "The office heating is broken, everyone is in coats.",
    "Watched {show} last night, two episodes then bed.",
    "My laptop battery barely lasts two hours now.",
    "Had a video call with {friend}, {friend_he} sounds happy in the new job.",
    "Cleaned out the fridge, found a jar from last year.",
    "Signed up for a beginner {hobby} class.",
    "My train was cancelled, worked from a cafe instead.",
    "The quarterly planning deck is finally done.",
    "I need a new pair of running shoes, mine are falling apart.",
    "Tried the new {cuisine} place near work, pretty good.",
    "Our sprint demo went fine, one bug on stage but nobody noticed.",
    "Took the bike in for a service, the brakes were squeaking.",
    "Started learning {language} on an app, day {n} of the streak.",
    "The neighbours' dog barked all night.",
    "Got my flu jab at the pharmacy, quick and easy.",
    "Reorganised my desk, it feels like a new office.",
    "{friend} and I are thinking of a trip to the coast in summer.",
    "My phone keeps suggesting the wrong words, very annoying.",
    "I baked banana bread with the overripe bananas.",
    "Work was quiet today, caught up on email.",
    "Went to a pub quiz with {friend}, we came fourth.",
    "Bought a plant for the bathroom, hope it survives.",
    "Meeting-free Friday was glorious.",
    "I should call my grandmother this weekend.",
    "Onboarding the new intern, {friend_first2} seems sharp.",
    "The printer jammed three times before lunch.",
    "Tried cold showers for a week, not for me.",
    "The heatwave is making it impossible to sleep.",
    "Helped {friend} move a sofa up three flights of stairs.",
    "Our team lunch was at a noodle bar, very loud.",
    "Wrote three pages of my novel draft, slow but steady.",
    "Switched to a standing desk, my back is grateful.",
    "The farmers market had amazing strawberries today.",
    "My headphones broke, ordering a new pair.",
    "Practised guitar for half an hour, fingers hurt.",
    "There's a leak under the kitchen sink, calling a plumber.",
    "Finally updated my CV, it was five years old.",
    "Got stuck in traffic for forty minutes on the ring road.",
    "Tidied the garden shed, found my old skateboard.",
    "Our product review slipped to next week.",
    "Made a playlist for the long drive on {day}.",
    "{friend}'s birthday drinks are on {day}.",
    "The cat knocked a mug off the table again.",
    "Ran {n} kilometres today without stopping.",
    "Took the afternoon off to rest, felt good.",
    "Our standup is moving to 9:30 from next week.",
    "Fixed the squeaky door hinge with some oil.",
    "Ordered groceries online to save time this week.",
    "A storm knocked over our garden fence.",
    "Tried a new recipe with lentils and spinach.",
    "Cinema tonight, some sci-fi film {friend} picked.",
    "I really need to sort out my inbox.",
    "Visited a museum about shipbuilding, surprisingly fun.",
    "My jigsaw puzzle has a thousand pieces of blue sky.",
    "Volunteered at the food bank on Saturday morning.",
    "Our office got new chairs, much better.",
    "Did a long video call with the design team about icons.",
    "The bakery near the station sold out of croissants by eight.",
    "I'm thinking about repainting the hallway green.",
    "Walked to work today, forty minutes but nice.",
    "{friend} lent me a board game, we played until midnight.",
    "Learned how to make proper espresso at a workshop.",
    "The washing machine is making a weird rattling noise.",
    "Spent Sunday morning at the climbing gym.",
    "Our team chat is all memes today.",
    "I'm trying to read fifty books this year, on number {n}.",
    "The new coffee machine at work is a big upgrade.",
    "Rearranged the living room so the sofa faces the window.",
    "Got caught in a hailstorm on the way home.",
    "Planted tomatoes and peppers on the balcony.",
    "Re-watched an old favourite film, still holds up.",
    "Signed up for a half marathon in autumn, what was I thinking.",
    "The kids next door are learning the trumpet.",
    "Bought a second-hand bike, it needs new tyres.",
    "Finally booked the dentist for a check-up.",
    "Cooked a big pot of soup for the week.",
    "Our internet was down for two hours this evening.",
    "I'm knitting a scarf, it's mostly holes so far.",
    "Had a long nap after lunch, no regrets.",
    "Made pancakes for breakfast, a rare treat.",
    "The code review queue at work is endless.",
    "Went swimming at the lido, the water was freezing.",
    "Sorted the recycling, we drink too much sparkling water.",
    "The team offsite agenda has too many icebreakers.",
    "Bought a new lamp for the reading corner.",
    "Wrote a long email to customer service about my broken kettle.",
    "My plants are finally getting enough light.",
    "There was a power cut during my morning meeting.",
    "Tried bouldering for the first time, my arms are jelly.",
    "Found an old photo album at my parents' house.",
    "The heating bill this month is painful.",
    "Cleared out my wardrobe for the charity shop.",
    "{friend} taught me a card trick.",
    "Went to a jazz night with {friend}, great drummer.",
    "Spent the evening fixing a wobbly table.",
    "Our manager bought pizza for the whole floor.",
)
FOODS = ("a curry", "lasagne", "a stir-fry", "mushroom risotto", "tacos", "a shakshuka", "pho")
BOOKS = ("a detective novel", "a sci-fi trilogy", "a memoir by a chef", "a history of maps")
GADGETS = ("kettle", "e-reader", "monitor", "coffee grinder", "air purifier")
SHOWS = ("a nature documentary", "a crime drama", "a baking show", "a sitcom")
HOBBIES = ("pottery", "climbing", "salsa", "watercolour", "woodworking", "chess")
CUISINES = ("Ethiopian", "Korean", "Peruvian", "Lebanese", "Georgian")
LANGUAGES = ("Portuguese", "Japanese", "Italian", "Turkish", "Dutch")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Saturday")
REPEAT_TAILS = ("Again.", "Same as last time.", "Typical.", "Oh well.", "Anyway.", "Classic.")
ACKS = (
    "Got it.",
    "Noted, thanks.",
    "Okay!",
    "Thanks for the update.",
    "Understood.",
    "Sounds good.",
    "Fair enough.",
    "Oh, interesting.",
    "Good to know.",
    "Makes sense.",
    "Ha, okay.",
    "Sure thing.",
    "Thanks, noted.",
    "Oh no!",
    "Nice!",
    "I see.",
)


def filler_text(rng: random.Random, template: str, friends: Sequence[Person]) -> str:
    """One unrelated user turn (names from the episode's filler people)."""
    friend = rng.choice(list(friends))
    f = {
        "food": rng.choice(FOODS),
        "book": rng.choice(BOOKS),
        "gadget": rng.choice(GADGETS),
        "show": rng.choice(SHOWS),
        "hobby": rng.choice(HOBBIES),
        "cuisine": rng.choice(CUISINES),
        "language": rng.choice(LANGUAGES),
        "day": rng.choice(DAYS),
        "n": str(rng.randint(3, 19)),
        "friend": friend.first,
        "friend_he": "he" if friend.gender == "m" else "she",
        "friend_first2": rng.choice(list(friends)).first,
    }
    return fill(template, f)


# -- episodes
def frame_schedule(
    n_per_type: int, seed: int
) -> list[dict[str, Callable[[random.Random, Pool], Draft]]]:
    """Which frame each episode uses per type: each type cycles through its
    frames in a seeded order, so frames are balanced."""
    rng = random.Random(f"trails-frames:{seed}")
    orders = {t: rng.sample(list(FRAMES[t]), len(FRAMES[t])) for t in TYPES}
    return [{t: orders[t][i % len(orders[t])] for t in TYPES} for i in range(n_per_type)]


def _texts(d: Draft) -> list[str]:
    return [d.disclosure, *d.evidence, *d.distractors]


def _collide(a: Draft, b: Draft) -> bool:
    """``a``'s value occurs in one of ``b``'s texts."""
    return any(has_value(text, a.value) for text in _texts(b))


def build_episode(
    index: int,
    seed: int,
    frames: dict[str, Callable[[random.Random, Pool], Draft]],
    filler: int = DEFAULT_FILLER,
) -> Episode:
    """Generate episode ``index``: one fact per type, their evidence spread
    over the sessions before their disclosure, distractors and filler
    everywhere, one assistant acknowledgement per user turn."""
    rng = random.Random(f"trails:{seed}:{index}")
    pool = Pool(rng)
    ep_id = f"ep{index + 1:02d}"
    drafts: dict[str, Draft] = {}
    for t in TYPES:
        # A value must not turn up in another fact's texts (two equal sums
        # of money would blur the native-recovery proxy): redraw the fact.
        for _ in range(50):
            d = frames[t](rng, pool)
            d.distractors += background(rng, d)
            if not any(_collide(d, o) or _collide(o, d) for o in drafts.values()):
                break
        else:
            raise AnnotationError(f"{ep_id}: could not draw a {t} fact with a distinct value")
        drafts[t] = d
    friends = [pool.person() for _ in range(4)]
    # Placement: per session, a list of (text, label, fact id, order rank).
    slots: list[list[tuple[str, str, str | None, int]]] = [[] for _ in range(SESSIONS)]
    fact_ids = {t: f"{ep_id}-{t[:3]}" for t in TYPES}
    for t in TYPES:
        d, fid = drafts[t], fact_ids[t]
        # Disclosures fall in the last third; evidence spreads over at least
        # three earlier sessions (ordered evidence in listed order).
        disc = rng.randint(SESSIONS * 2 // 3, SESSIONS - 1)
        n_ev = len(d.evidence)
        spread = sorted(rng.choices(range(disc), k=n_ev))
        while len(set(spread)) < min(3, n_ev):
            spread = sorted(rng.choices(range(disc), k=n_ev))
        order = list(range(n_ev)) if d.ordered else rng.sample(range(n_ev), n_ev)
        for rank, (ev, sess) in enumerate(zip(order, spread, strict=True)):
            slots[sess].append((d.evidence[ev], f"evidence:{ev}", fid, rank if d.ordered else -1))
        slots[disc].append((d.disclosure, "disclosure", fid, 10_000 if d.ordered else -1))
        for x in d.distractors:
            slots[rng.randrange(SESSIONS)].append((x, "distractor", fid, -1))
    fill_templates = rng.sample(FILLER, min(filler, len(FILLER)))
    fill_templates += rng.choices(FILLER, k=max(0, filler - len(FILLER)))
    for i, tpl in enumerate(fill_templates):
        slots[i % SESSIONS].append((filler_text(rng, tpl, friends), "filler", None, -1))
    sessions: list[Session] = []
    keys: dict[tuple[str, str], list[str]] = {}
    seen_texts: set[str] = set()
    day = 0.0
    for s, items in enumerate(slots):
        rng.shuffle(items)
        # Ordered evidence keeps its narrative order inside a session too.
        ordered_pos = [i for i, it in enumerate(items) if it[3] >= 0]
        for pos, it in zip(
            ordered_pos,
            sorted((items[i] for i in ordered_pos), key=lambda it: (it[2] or "", it[3])),
            strict=True,
        ):
            items[pos] = it
        turns: list[Turn] = []
        for u, (text, label, fid, _) in enumerate(items):
            if label == "filler":
                # A filler said twice gets a tail, as people do ("again").
                base = text
                for tail in REPEAT_TAILS:
                    if text not in seen_texts:
                        break
                    text = f"{base} {tail}"
            seen_texts.add(text)
            key = f"{ep_id}.s{s + 1:02d}.u{u + 1:02d}"
            kind = label.split(":")[0]
            turns.append(Turn(key, "user", text, s, kind, fid))
            turns.append(Turn(f"{key}.a", "assistant", rng.choice(ACKS), s, "reply", None))
            if fid is not None:
                keys.setdefault((fid, label), []).append(key)
        day += rng.choice((2, 3, 4, 5))
        start = (EPOCH + dt.timedelta(days=day + 30 * index)).timestamp()
        sessions.append(Session(s, f"{ep_id}-s{s + 1:02d}", start, tuple(turns)))
    facts = []
    for t in TYPES:
        d, fid = drafts[t], fact_ids[t]
        ev_keys = [keys[(fid, f"evidence:{i}")][0] for i in range(len(d.evidence))]
        sets = enumerate_sets(d.links, d.routes or [list(range(len(d.links)))])
        facts.append(
            Fact(
                id=fid,
                type=t,
                frame=d.frame,
                episode=ep_id,
                value=d.value,
                question=d.question,
                request=d.request,
                entities=tuple(d.entities),
                mentions=tuple(d.mentions),
                disclosure=tuple(keys[(fid, "disclosure")]),
                evidence=tuple(ev_keys),
                sufficient_sets=tuple(tuple(sorted(ev_keys[i] for i in s)) for s in sets),
                distractors=tuple(sorted(keys.get((fid, "distractor"), []))),
            )
        )
    return Episode(ep_id, tuple(sessions), tuple(facts))


def generate(facts_per_type: int, seed: int = 0, filler: int = DEFAULT_FILLER) -> list[Episode]:
    """``facts_per_type`` episodes of one fact per derivation type each,
    validated (``AnnotationError`` on an inconsistency)."""
    if facts_per_type < 1:
        raise ValueError("facts_per_type must be at least 1")
    schedule = frame_schedule(facts_per_type, seed)
    episodes = [build_episode(i, seed, schedule[i], filler) for i in range(facts_per_type)]
    problems = [p for ep in episodes for p in validate_episode(ep)]
    if problems:
        raise AnnotationError("; ".join(problems[:10]))
    return episodes


# -- validation
class AnnotationError(ValueError):
    """Generated annotations break one of the benchmark's rules."""


_STOP = set(
    "the and for with that this from have has was were are our your their his her they them "
    "about into over after again still just been will would there what when which who whom "
    "said says told last next this that then than only also very more most some much many "
    "away back today week weeks month year tonight morning".split()
)


def words_of(text: str) -> set[str]:
    """Casefolded numbers and words of four letters or more, minus common
    function words."""
    return {
        w
        for w in re.findall(r"[a-z0-9]+", text.casefold())
        if (len(w) >= 4 or w.isdigit()) and w not in _STOP
    }


def has_value(text: str, value: str) -> bool:
    """The value occurs in the text, casefolded, not glued to a letter or
    digit on either side (so 3 March is not found in 13 March)."""
    pattern = r"(?<![0-9a-z])" + re.escape(value.casefold()) + r"(?![0-9a-z])"
    return re.search(pattern, text.casefold()) is not None


def validate_episode(ep: Episode) -> list[str]:
    """Every rule the annotations must keep, as a list of problems (empty =
    valid): sets are 2-5 evidence turns and cover every evidence turn; 4-10
    evidence turns; minimal cut 2-5 by enumeration; 6+ distractors, each
    sharing a word or an entity with the evidence; the disclosure states the
    value; no evidence turn states the value with every entity of the
    disclosure; every evidence turn names an entity of the fact; no
    distractor or filler turn holds any fact's value; user texts unique."""
    problems: list[str] = []
    by_key = {t.key: t for t in ep.turns()}
    user_texts = [t.text for t in ep.turns() if t.role == "user"]
    if len(set(user_texts)) != len(user_texts):
        problems.append(f"{ep.id}: duplicate user texts")
    for fact in ep.facts:
        ev = set(fact.evidence)
        where = f"{fact.id} ({fact.frame})"
        if not MIN_EVIDENCE <= len(ev) <= MAX_EVIDENCE:
            problems.append(f"{where}: {len(ev)} evidence turns")
        if not fact.sufficient_sets:
            problems.append(f"{where}: no sufficient set")
        for s in fact.sufficient_sets:
            if not set(s) <= ev:
                problems.append(f"{where}: a sufficient set leaves the evidence")
            if not MIN_SET <= len(s) <= MAX_SET:
                problems.append(f"{where}: a sufficient set of {len(s)} turns")
        if {k for s in fact.sufficient_sets for k in s} != ev:
            problems.append(f"{where}: an evidence turn is in no sufficient set")
        cut = fact.minimal_cut
        if not MIN_SET <= cut <= MAX_SET:
            problems.append(f"{where}: minimal cut {cut}")
        if len(fact.distractors) < MIN_DISTRACTORS:
            problems.append(f"{where}: {len(fact.distractors)} distractors")
        ev_words = set().union(*(words_of(by_key[k].text) for k in ev))
        for k in fact.distractors:
            text = by_key[k].text
            if not words_of(text) & ev_words and not any(has_value(text, m) for m in fact.mentions):
                problems.append(f"{where}: distractor {k} shares nothing with the evidence")
        for k in fact.disclosure:
            if not has_value(by_key[k].text, fact.value):
                problems.append(f"{where}: disclosure {k} does not state the value")
        for k in ev:
            text = by_key[k].text
            if has_value(text, fact.value) and all(
                e.casefold() in text.casefold() for e in fact.entities
            ):
                problems.append(f"{where}: evidence {k} states the fact")
            if not any(m.casefold() in text.casefold() for m in fact.mentions):
                problems.append(f"{where}: evidence {k} names none of the fact's entities")
        for t in ep.turns():
            if t.label in ("distractor", "filler") and has_value(t.text, fact.value):
                problems.append(f"{where}: {t.label} {t.key} holds the value")
            if t.label == "evidence" and t.fact != fact.id and has_value(t.text, fact.value):
                problems.append(f"{where}: evidence of {t.fact} holds the value")
    return problems


# -- serialisation
def episodes_json(episodes: Iterable[Episode]) -> list[dict[str, Any]]:
    """JSON-ready episodes (texts and annotations)."""
    return [
        {
            "id": ep.id,
            "sessions": [
                {"id": s.id, "start": s.start, "turns": [asdict(t) for t in s.turns]}
                for s in ep.sessions
            ],
            "facts": [{**asdict(f), "minimal_cut": f.minimal_cut} for f in ep.facts],
        }
        for ep in episodes
    ]


def digest(episodes: Iterable[Episode]) -> str:
    """Short SHA-256 of the generated data: equal digests, equal episodes."""
    blob = json.dumps(episodes_json(episodes), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


# -- episode files (sets written by hand, e.g. by outside authors) -------------
def _start(value: Any, where: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()
    raise AnnotationError(f"{where}: start must be epoch seconds or an ISO date")


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise AnnotationError(f"{where} must be a list of strings")
    return tuple(value)


def episode_from_json(raw: dict[str, Any]) -> Episode:
    """One episode from its JSON form (the shape ``episodes_json`` writes;
    a session's ``start`` may also be an ISO date, and ``minimal_cut`` is
    recomputed, never read). Raises ``AnnotationError`` on a missing or
    mistyped field; the benchmark's rules are checked by ``validate_episode``."""
    try:
        eid = raw["id"]
        sessions = []
        for i, s in enumerate(raw["sessions"]):
            turns = tuple(
                Turn(
                    key=t["key"],
                    role=t["role"],
                    text=t["text"],
                    session=int(t.get("session", i)),
                    label=t["label"],
                    fact=t.get("fact"),
                )
                for t in s["turns"]
            )
            sessions.append(Session(i, s["id"], _start(s["start"], f"{eid}/{s['id']}"), turns))
        facts = tuple(
            Fact(
                id=f["id"],
                type=f["type"],
                frame=f.get("frame", f["type"]),
                episode=eid,
                value=f["value"],
                question=f["question"],
                request=f["request"],
                entities=_strings(f["entities"], f"{f['id']} entities"),
                mentions=_strings(f["mentions"], f"{f['id']} mentions"),
                disclosure=_strings(f["disclosure"], f"{f['id']} disclosure"),
                evidence=_strings(f["evidence"], f"{f['id']} evidence"),
                sufficient_sets=tuple(
                    _strings(s, f"{f['id']} sufficient set") for s in f["sufficient_sets"]
                ),
                distractors=_strings(f["distractors"], f"{f['id']} distractors"),
            )
            for f in raw["facts"]
        )
    except (KeyError, TypeError) as e:
        raise AnnotationError(f"episode {raw.get('id', '?')!s}: missing or bad field {e}") from e
    ep = Episode(eid, tuple(sessions), facts)
    keys = [t.key for t in ep.turns()]
    if len(set(keys)) != len(keys):
        raise AnnotationError(f"{eid}: duplicate turn keys")
    for f in facts:
        if f.type not in TYPES:
            raise AnnotationError(f"{f.id}: type must be one of {', '.join(TYPES)}")
        named = {*f.disclosure, *f.evidence, *f.distractors}
        if not named <= set(keys):
            raise AnnotationError(f"{f.id}: names a turn key the episode does not have")
    return ep


def load_episodes(path: str | Any) -> list[Episode]:
    """Episodes from a JSON file (a list, or ``{"episodes": [...]}``), each
    checked by ``validate_episode``; raises ``AnnotationError`` listing the
    problems of an invalid file."""
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    items = raw["episodes"] if isinstance(raw, dict) else raw
    episodes = [episode_from_json(r) for r in items]
    problems = [p for ep in episodes for p in validate_episode(ep)]
    if problems:
        raise AnnotationError("; ".join(problems))
    return episodes

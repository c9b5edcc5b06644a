"""The seeded ForgetEval template suite (Yang 2026, section 3.2).

Five families, four sub-templates each, cycled in a fixed order; each case
gets four filler facts about other people as distractors, placed at seeded
positions among its own facts. Generation depends only on the seed: one
``random.Random(seed)`` drives every choice, pools are tuples, nothing reads
the clock or iterates a set, so the suite is identical across runs, machines
and ``PYTHONHASHSEED`` values. At seed 42 the default suite has 1000 cases,
200 per family, 50 per sub-template.

Every drafted case passes a structural admission check (stage 1 of the
paper's protocol) before it is kept; a draft that fails is redrawn from the
same generator, so the check never changes determinism:

* every ``must_contain`` string is in a fact that survives the mutations,
  and in no distractor (so only the intended fact can satisfy it);
* no ``must_not_contain`` string is in a surviving fact or a distractor
  (no self-substring traps: a correct system can always pass);
* no forbidden string is a substring of an expected one or the reverse.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from unrecall.bench.cases import FAMILIES, Case

DEFAULT_SEED = 42
DEFAULT_SIZE = 1000
DISTRACTORS = 4

# Short proper nouns, chosen so that no name is a substring of another
# (the admission check also guards every drawn case).
PEOPLE = (
    "Aiko", "Bruno", "Chidi", "Dagny", "Elif", "Farah", "Goran", "Hana", "Idris", "Jonas",
    "Kenji", "Leila", "Marek", "Nadia", "Oskar", "Priya", "Quinn", "Rafael", "Sanna", "Tomas",
    "Umar", "Vera", "Wanjiru", "Ximena", "Yusuf", "Zofia", "Anouk", "Bilal", "Carmen", "Dmitri",
    "Esme", "Femi", "Greta", "Hamid", "Ingrid", "Joaquin", "Katya", "Lorenzo", "Mirela", "Niamh",
)  # fmt: skip
SURNAMES = (
    "Okafor", "Lindqvist", "Moreau", "Tanaka", "Kowalski", "Haddad", "Petrov", "Santos",
    "Mbeki", "Novak", "Castillo", "Brennan", "Yilmaz", "Varga", "Ferreira", "Nakamura",
)  # fmt: skip
CITIES = (
    "Leeds", "Porto", "Tampere", "Graz", "Lyon", "Bergen", "Utrecht", "Gdansk", "Malaga",
    "Bologna", "Brno", "Cork", "Aarhus", "Ghent", "Tartu", "Kaunas", "Nantes", "Split",
)  # fmt: skip
ORGS = (
    "Acmera", "Brightwell", "Corvid Labs", "Dunmore", "Everfield", "Fjordline", "Glasswing",
    "Halcyon", "Ironbark", "Juniper Works", "Kestrel", "Lumora", "Marlowe", "Northgate",
)  # fmt: skip
JOBS = (
    "nurse", "architect", "pilot", "chemist", "librarian", "carpenter", "dentist", "translator",
    "geologist", "paramedic", "sommelier", "cartographer", "actuary", "welder", "florist",
)  # fmt: skip
THEMES = (
    "Solarized", "Dracula", "Monokai", "Nord", "Gruvbox", "Tokyo Night", "Catppuccin",
    "Zenburn", "Cobalt", "Ayu Mirage",
)  # fmt: skip
EDITORS = ("VS Code", "Vim", "Emacs", "Zed", "Sublime Text", "Helix", "IntelliJ")
DIETS = (
    "vegan", "keto", "paleo", "pescatarian", "halal", "kosher", "gluten-free", "low-FODMAP",
    "Mediterranean", "carnivore", "raw food",
)  # fmt: skip
PLATFORMS = (
    "Kubernetes", "Heroku", "Netlify", "Vercel", "Fly.io", "Render", "Railway", "Cloud Run",
    "Nomad", "OpenShift",
)  # fmt: skip
PROJECTS = ("Atlas", "Bramble", "Cinder", "Delta", "Ember", "Falcon", "Granite", "Harbor")
MONTHS = ("January", "March", "May", "July", "September", "November")
REASONS = (
    "on-call rota is shorter there",
    "billing is simpler for the finance team",
    "the staging environment already runs there",
    "the security review approved it last quarter",
)
SERVICES = ("Dropbox", "GitLab", "Notion", "Figma", "Trello", "Zoom", "Slack", "Asana")
DOMAINS = ("mailbox.org", "acme.io", "example.net", "fastmail.com", "posteo.de", "proton.me")
FOLDERS = ("Projects", "Archive", "Inbox", "Scans", "Invoices", "Photos")
TIERS = ("Bronze", "Silver", "Gold", "Platinum", "Emerald")
WORDS = ("Maple", "Falcon", "Copper", "Willow", "Harbor", "Saffron", "Granite", "Velvet")
STREETS = ("Elm Street", "Quay Road", "Mill Lane", "Orchard Way", "Station Road", "Kings Row")
CARS = (
    "Corolla", "Golf", "Civic", "Model 3", "Leaf", "Mustang", "Clio", "Fiesta", "Octavia",
    "Prius", "Yaris", "Panda",
)  # fmt: skip
SUBJECTS = ("linguistics", "astronomy", "oceanography", "economics", "botany", "robotics")
UNIVERSITIES = ("Uppsala", "Leiden", "Coimbra", "Heidelberg", "Bologna", "Salamanca")
BREEDS = ("beagle", "whippet", "collie", "dachshund", "poodle", "spaniel", "corgi")
PETS = (
    "Biscuit", "Pepper", "Mochi", "Ziggy", "Noodle", "Waffles", "Juniper", "Pickles", "Domino",
    "Pretzel", "Bramble", "Olive",
)  # fmt: skip
BROWSERS = (
    "Firefox", "Safari", "Opera", "Vivaldi", "Brave", "Edge", "Chromium", "LibreWolf",
    "Tor Browser", "Arc",
)  # fmt: skip

# Filler facts about other people: hobbies and trivia that share no
# attribute vocabulary with the case templates above.
FILLERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("{x} plays the {v} on weekends.", ("cello", "banjo", "oboe", "ukulele", "harp", "trombone")),
    ("{x}'s favourite fruit is {v}.", ("mango", "lychee", "papaya", "quince", "guava", "kiwi")),
    ("{x} has a cat called {v}.", ("Tofu", "Miso", "Clover", "Ember", "Pixel", "Sesame")),
    ("{x} is reading a novel about {v}.", ("lighthouses", "glaciers", "beekeeping", "comets")),
    ("{x} grows {v} on the balcony.", ("tomatoes", "basil", "chillies", "lavender", "mint")),
    ("{x} collects {v}.", ("vinyl records", "stamps", "postcards", "fountain pens", "maps")),
    ("{x} goes swimming every {v} morning.", ("Monday", "Tuesday", "Thursday", "Saturday")),
    ("{x} is learning to bake {v}.", ("sourdough", "croissants", "baklava", "pretzels")),
)


@dataclass
class Draft:
    """A sub-template's output before distractors: the case's own facts, the
    mutations, the oracle's surviving facts and the expectations."""

    facts: list[str]
    mutations: list[list[str]]
    final_query: str
    must_contain: list[str]
    must_not_contain: list[str]
    survivors: list[str]
    people: list[str]


def _pick(rng: random.Random, pool: tuple[str, ...], n: int) -> list[str]:
    return rng.sample(pool, n)


def _a(word: str) -> str:
    """The word with its indefinite article (``an actuary``, ``a nurse``)."""
    return f"{'an' if word[0].lower() in 'aeiou' else 'a'} {word}"


# -- supersession: one supersede, the new value wins ------------------------
def _sup_job(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    j1, j2 = _pick(rng, JOBS, 2)
    org, city = rng.choice(ORGS), rng.choice(CITIES)
    old = f"{p} works as {_a(j1)} at {org}."
    keep = f"{p} lives in {city}."
    new = f"{p} now works as {_a(j2)} at {org}."
    return Draft(
        [old, keep],
        [["supersede", f"{p} works as {_a(j1)}", new]],
        f"What is {p}'s job?",
        [j2],
        [j1],
        [keep, new],
        [p],
    )


def _sup_theme(rng: random.Random) -> Draft:
    t1, t2 = _pick(rng, THEMES, 2)
    ed = rng.choice(EDITORS)
    p = rng.choice(PEOPLE)
    old = f"{p} prefers the {t1} theme in {ed}."
    keep = f"{p} uses a font size of {rng.randint(11, 18)} in {ed}."
    new = f"{p} switched {ed} to the {t2} theme."
    return Draft(
        [old, keep],
        [["supersede", f"{t1} theme", new]],
        f"Which colour theme does {p} use in {ed}?",
        [t2],
        [t1],
        [keep, new],
        [p],
    )


def _sup_diet(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    d1, d2 = _pick(rng, DIETS, 2)
    old = f"{p} follows {_a(d1)} diet."
    new = f"{p} has switched to {_a(d2)} diet."
    keep = f"{p} drinks green tea every afternoon."
    # The old value is named by attribute, not quoted: targeting by meaning.
    return Draft(
        [old, keep],
        [["supersede", f"{p}'s diet", new]],
        f"What diet does {p} follow?",
        [d2],
        [d1],
        [keep, new],
        [p],
    )


def _sup_long_form(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    proj = rng.choice(PROJECTS)
    x1, x2 = _pick(rng, PLATFORMS, 2)
    old = (
        f"During the {rng.choice(MONTHS)} planning session for Project {proj}, {p} explained "
        f"at length that the team would deploy every release to {x1} because the "
        f"{rng.choice(REASONS)}, and asked everyone to keep the runbook up to date."
    )
    new = f"Update from {p}: Project {proj} now deploys every release to {x2}."
    keep = f"Project {proj} has its weekly demo on {rng.choice(('Monday', 'Wednesday', 'Friday'))}."
    return Draft(
        [old, keep],
        [["supersede", f"deploy every release to {x1}", new]],
        f"Where does Project {proj} deploy its releases?",
        [x2],
        [x1],
        [keep, new],
        [p],
    )


# -- decay: a released one-time value leaves recall --------------------------
def _handle(rng: random.Random, p: str) -> str:
    return f"{p.lower()}{rng.randint(10, 99)}"


def _dec_otp(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    code = str(rng.randint(100000, 999999))
    handle = _handle(rng, p)
    otp = f"{p}'s one-time login code is {code}."
    keep = f"{p}'s login username is {handle}."
    return Draft(
        [keep, otp],
        [["release", f"{p}'s one-time login code"]],
        f"What is {p}'s login code?",
        [handle],
        [code],
        [keep],
        [p],
    )


def _dec_temp_password(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    svc = rng.choice(SERVICES)
    pw = f"{rng.choice(WORDS)}-{rng.randint(1000, 9999)}!"
    email = f"{_handle(rng, p)}@{rng.choice(DOMAINS)}"
    tmp = f"The temporary password for {p}'s {svc} account is {pw}"
    keep = f"{p}'s {svc} account is registered to {email}."
    return Draft(
        [keep, tmp],
        [["release", f"temporary password for {p}'s {svc} account"]],
        f"What is the password of {p}'s {svc} account?",
        [email],
        [pw],
        [keep],
        [p],
    )


def _dec_one_time_link(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    token = "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(10))
    url = f"https://files.{rng.choice(DOMAINS)}/d/{token}"
    folder = rng.choice(FOLDERS)
    link = f"{p}'s one-time download link is {url}"
    keep = f"{p} saves every download to the {folder} folder."
    # Released by the identifier itself, the way an app consumes a link.
    return Draft(
        [link, keep],
        [["release", url]],
        f"Where are {p}'s downloads?",
        [folder],
        [token],
        [keep],
        [p],
    )


def _dec_coupon(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    code = f"{rng.choice(WORDS).upper()}{rng.randint(10, 99)}"
    tier = rng.choice(TIERS)
    coupon = f"Coupon {code} gives {p} {rng.choice((10, 15, 20, 25))}% off one order."
    keep = f"{p}'s loyalty tier is {tier}."
    return Draft(
        [coupon, keep],
        [["release", f"coupon {code}"]],
        f"What discount or loyalty status does {p} have?",
        [tier],
        [code],
        [keep],
        [p],
    )


# -- amnesia: forget one entity, its siblings (sharing attributes) stay -----
def _amn_colleague(rng: random.Random) -> Draft:
    a, b = _pick(rng, PEOPLE, 2)
    org, job = rng.choice(ORGS), rng.choice(JOBS)
    floor = rng.randint(2, 9)
    gone = [f"{a} works at {org} as {_a(job)}.", f"{a}'s desk is on floor {floor}."]
    keep = [f"{b} also works at {org} as {_a(job)}.", f"{b} sits on floor {floor} too."]
    return Draft(
        gone + keep,
        [["purge", a]],
        f"Who works at {org}?",
        [b],
        [a],
        keep,
        [a, b],
    )


def _amn_neighbour(rng: random.Random) -> Draft:
    a, b = _pick(rng, PEOPLE, 2)
    street, city, car = rng.choice(STREETS), rng.choice(CITIES), rng.choice(CARS)
    gone = [f"{a} lives on {street} in {city}.", f"{a} drives a {car}."]
    keep = [f"{b} lives on {street} in {city} as well.", f"{b} also drives a {car}."]
    return Draft(
        [gone[0], keep[0], gone[1], keep[1]],
        [["purge", a]],
        f"Who lives on {street} in {city}?",
        [b],
        [a],
        keep,
        [a, b],
    )


def _amn_classmate(rng: random.Random) -> Draft:
    a, b = _pick(rng, PEOPLE, 2)
    subj, uni = rng.choice(SUBJECTS), rng.choice(UNIVERSITIES)
    gone = [f"{a} studies {subj} at {uni}.", f"{a} was born in {rng.randint(1980, 2004)}."]
    keep = [f"{b} studies {subj} at {uni} too."]
    return Draft(
        gone + keep,
        [["release", a]],
        f"Who studies {subj}?",
        [b],
        [a],
        keep,
        [a, b],
    )


def _amn_pet(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    d1, d2 = _pick(rng, PETS, 2)
    breed, city = rng.choice(BREEDS), rng.choice(CITIES)
    gone = [f"{d1} is {p}'s {breed}.", f"{d1} sees a vet in {city}."]
    keep = [f"{d2} is also a {breed} and belongs to {p}."]
    return Draft(
        gone + keep,
        [["release", d1]],
        f"Which {breed} does {p} have?",
        [d2],
        [d1],
        keep,
        [p],
    )


# -- purge: identifier-exact hard delete next to look-alikes -----------------
def _pur_email(rng: random.Random) -> Draft:
    a = rng.choice(PEOPLE)
    surname = rng.choice(SURNAMES)
    local, dom = a.lower(), rng.choice(DOMAINS)
    target = f"{local}@{dom}"
    # A namesake's address: shares a long prefix, is not a superstring.
    look = f"{local}.{surname.lower()}@{dom}"
    gone = f"{a}'s personal email is {target}."
    keep = f"{a} {surname}, a different {a}, has the email {look}."
    return Draft(
        [keep, gone],
        [["purge", target]],
        f"What is {a} {surname}'s email address?",
        [look],
        [target],
        [keep],
        [a],
    )


def _pur_phone(rng: random.Random) -> Draft:
    a, b = _pick(rng, PEOPLE, 2)
    stem = f"+44 7700 9{rng.randint(10, 99)}"
    t1, t2 = _pick(rng, tuple(f"{n:03d}" for n in range(100, 1000)), 2)
    target, look = f"{stem}{t1}", f"{stem}{t2}"
    gone = f"{a}'s mobile number is {target}."
    keep = f"{b}'s mobile number is {look}."
    return Draft(
        [gone, keep],
        [["purge", target]],
        f"What is {b}'s mobile number?",
        [look],
        [target],
        [keep],
        [a, b],
    )


def _pur_customer_id(rng: random.Random) -> Draft:
    a, b = _pick(rng, PEOPLE, 2)
    digits = [str(d) for d in rng.sample(range(10), 5)]
    target = "CUST-" + "".join(digits)
    digits[3], digits[4] = digits[4], digits[3]  # a transposition: same digits, other id
    look = "CUST-" + "".join(digits)
    gone = f"Customer ID {target} belongs to {a}."
    keep = f"Customer ID {look} belongs to {b}."
    return Draft(
        [gone, keep],
        [["purge", target]],
        f"Which customer ID belongs to {b}?",
        [look],
        [target],
        [keep],
        [a, b],
    )


def _pur_order(rng: random.Random) -> Draft:
    a, b = _pick(rng, PEOPLE, 2)
    head = f"#{rng.choice('ABCDEFGHKMNPRSTWXZ')}{rng.randint(1000, 9999)}"
    s1, s2 = _pick(rng, tuple(f"{n:02d}" for n in range(10, 100)), 2)
    target, look = f"{head}-{s1}", f"{head}-{s2}"
    city = rng.choice(CITIES)
    gone = f"Order {target} for {a} ships to {city}."
    keep = f"Order {look} for {b} ships to {city}."
    return Draft(
        [keep, gone],
        [["purge", target]],
        f"Which order ships to {city} for {b}?",
        [look],
        [target],
        [keep],
        [a, b],
    )


# -- drift: chains of 3-5 supersedes; only the last value is reachable ------
def _chain(
    rng: random.Random,
    pool: tuple[str, ...],
    first: Callable[[str], str],
    later: Callable[[str], str],
    old_q: Callable[[str], str],
    question: str,
    people: list[str],
) -> Draft:
    steps = rng.randint(3, 5)
    values = _pick(rng, pool, steps + 1)
    muts = [["supersede", old_q(values[i]), later(values[i + 1])] for i in range(steps)]
    return Draft(
        [first(values[0])],
        muts,
        question,
        [values[-1]],
        values[:-1],
        [later(values[-1])],
        people,
    )


def _dri_city(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    return _chain(
        rng,
        CITIES,
        lambda v: f"{p} lives in {v}.",
        lambda v: f"{p} has moved and now lives in {v}.",
        lambda v: f"lives in {v}",
        f"Which city does {p} live in?",
        [p],
    )


def _dri_employer(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    return _chain(
        rng,
        ORGS,
        lambda v: f"{p} works for {v}.",
        lambda v: f"{p} changed jobs and now works for {v}.",
        lambda v: f"works for {v}",
        f"Which company does {p} work for?",
        [p],
    )


def _dri_browser(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    # Named by attribute each time: the query must hit the current value only.
    return _chain(
        rng,
        BROWSERS,
        lambda v: f"{p}'s default browser is {v}.",
        lambda v: f"{p}'s default browser is now {v}.",
        lambda v: f"{p}'s default browser",
        f"What is {p}'s default browser?",
        [p],
    )


def _dri_car(rng: random.Random) -> Draft:
    p = rng.choice(PEOPLE)
    return _chain(
        rng,
        CARS,
        lambda v: f"{p} drives a {v}.",
        lambda v: f"{p} sold the old car and drives a {v} now.",
        lambda v: f"drives a {v}",
        f"What car does {p} drive?",
        [p],
    )


SUBTEMPLATES: dict[str, tuple[tuple[str, Callable[[random.Random], Draft]], ...]] = {
    "supersession": (
        ("job", _sup_job),
        ("theme", _sup_theme),
        ("diet", _sup_diet),
        ("long_form", _sup_long_form),
    ),
    "decay": (
        ("otp", _dec_otp),
        ("temp_password", _dec_temp_password),
        ("one_time_link", _dec_one_time_link),
        ("coupon", _dec_coupon),
    ),
    "amnesia": (
        ("colleague", _amn_colleague),
        ("neighbour", _amn_neighbour),
        ("classmate", _amn_classmate),
        ("pet", _amn_pet),
    ),
    "purge": (
        ("email", _pur_email),
        ("phone", _pur_phone),
        ("customer_id", _pur_customer_id),
        ("order", _pur_order),
    ),
    "drift": (
        ("city", _dri_city),
        ("employer", _dri_employer),
        ("browser", _dri_browser),
        ("car", _dri_car),
    ),
}


def _distractors(rng: random.Random, avoid: list[str]) -> list[str]:
    names = [n for n in PEOPLE if n not in avoid]
    who = rng.sample(names, DISTRACTORS)
    kinds = rng.sample(range(len(FILLERS)), DISTRACTORS)
    return [
        FILLERS[k][0].format(x=x, v=rng.choice(FILLERS[k][1]))
        for x, k in zip(who, kinds, strict=True)
    ]


def admission_problems(draft: Draft, distractors: list[str]) -> list[str]:
    """Stage-1 structural check of a drafted case (see the module docstring);
    an empty list means the case is admitted."""
    fold = str.casefold
    survivors = [fold(s) for s in draft.survivors]
    noise = [fold(d) for d in distractors]
    problems: list[str] = []
    for good in draft.must_contain:
        if not any(fold(good) in s for s in survivors):
            problems.append(f"expected {good!r} is in no surviving fact")
        if any(fold(good) in d for d in noise):
            problems.append(f"expected {good!r} is in a distractor")
    for bad in draft.must_not_contain:
        if any(fold(bad) in s for s in survivors + noise):
            problems.append(f"forbidden {bad!r} is in a fact that should stay")
        for good in draft.must_contain:
            if fold(bad) in fold(good) or fold(good) in fold(bad):
                problems.append(f"forbidden {bad!r} overlaps expected {good!r}")
    return problems


def _one_case(
    rng: random.Random, index: int, family: str, sub: str, make: Callable[[random.Random], Draft]
) -> Case:
    for _ in range(200):
        draft = make(rng)
        noise = _distractors(rng, draft.people)
        if admission_problems(draft, noise):
            continue  # redraw: deterministic, the same rng moves on
        facts = list(draft.facts)
        for d in noise:
            facts.insert(rng.randint(0, len(facts)), d)
        return Case(
            id=f"tpl-{index:04d}-{family}-{sub}",
            category=sub,
            family=family,
            setup_facts=facts,
            mutations=draft.mutations,
            final_query=draft.final_query,
            must_contain=draft.must_contain,
            must_not_contain=draft.must_not_contain,
        )
    raise RuntimeError(f"template {family}/{sub} could not draw an admissible case")


def generate_template_suite(seed: int = DEFAULT_SEED, n: int = DEFAULT_SIZE) -> list[Case]:
    """The ``n``-case template suite for ``seed``: families cycle in order
    (supersession, decay, amnesia, purge, drift) and each family cycles its
    four sub-templates, so any ``n`` divisible by 20 is exactly balanced."""
    if n < 0:
        raise ValueError("n must be non-negative")
    rng = random.Random(seed)
    cases: list[Case] = []
    for i in range(n):
        family = FAMILIES[i % len(FAMILIES)]
        subs = SUBTEMPLATES[family]
        sub, make = subs[(i // len(FAMILIES)) % len(subs)]
        cases.append(_one_case(rng, i, family, sub, make))
    return cases

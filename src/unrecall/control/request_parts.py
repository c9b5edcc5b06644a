"""What a forget request names, and where it sits in the memories' text.

The text side of ``control.forget_requests``: splitting a request into the
parts it names (``parts``), telling a slot ("my home address") from a value
("the Maldives", ``is_slot``), whose slot it is (``owner``, ``owned_by``),
which identifier kinds a slot holds, the items of a list memory a part names,
content words and stems across four languages, and cutting a value out of a
text (``without``). Pure functions over strings and rows: no storage, no
embeddings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from unrecall.dialogue.requests import ForgetRequest, topic_categories
from unrecall.recall.identifiers import extract as extract_identifiers
from unrecall.recall.identifiers import query_keys
from unrecall.recall.lexical import STOPWORDS, content_words, stem, words
from unrecall.recall.names import mentions, name_keys
from unrecall.storage.base import MemoryRow

# Quoted spans: 'x', "x", “x”, ‘x’, «x», „x“. An apostrophe inside a word
# ("user's") never opens one.
QUOTED = re.compile(r"(?<!\w)['\"“‘«„]([^'\"“”‘’«»„]{3,200}?)['\"”’»“](?!\w)")
# Words that qualify a slot rather than name it ("my old address").
_QUALIFIERS = frozenset(
    "old previous former earlier outdated current new last first entire whole also too "
    "anymore any more longer".split()
)
# Words of request and completion verbs that are no part of a value.
_REQUEST_WORDS = frozenset(
    """forget delete remove erase drop clear scratch track keep remember finish finished
    finishing complete completed done need needed want planning plan list todo to-do task
    tasks item items calendar event events""".split()
)
# A value's rarest word names the thing when at most this many memories use it.
RARE_MAX = 5
# Share of a value's content stems a memory must hold to match by stems.
STEM_SHARE = 0.6


# Slot words -> identifier kinds a value of that slot has.
_SLOT_WORDS: dict[str, frozenset[str]] = {}
for _kinds, _words in (
    (("phone", "phone_nsn", "compact"), "phone mobile cell number line handy nummer handynummer "
     "telefon telefonnummer teléfono telefono móvil movil numéro numero portable celular tel"),
    (("email", "email_tag"), "email e-mail mail correo courriel"),
    (("iban",), "iban bank konto cuenta compte account"),
    (("card", "number", "compact"), "card tarjeta carte karte kreditkarte"),
    (("ssn", "number", "compact", "code", "ticket"), "ssn social security insurance sécu secu "
     "steuer-id steuer tax medicare nir dni nie passport pasaporte licence license licencia "
     "badge permit reg registration plate reference room policy id"),
    (("secret", "number", "code", "compact"), "password passwort contraseña passe pin code "
     "passcode código codigo pw"),
):  # fmt: skip
    for _w in _words.split():
        _SLOT_WORDS[_w] = _SLOT_WORDS.get(_w, frozenset()) | frozenset(_kinds)


_FIRST_PERSON = re.compile(
    r"^(?:my|our|mine|mi|mis|nuestr[oa]s?|mon|ma|mes|notre|nos|mein\w*|unser\w*)\b",
    re.IGNORECASE,
)
_FIRST_PERSON_INSIDE = re.compile(r"\b(?:de|of|von)\s+(?:my|mi|mon|ma|meine\w*)\b", re.I)
# "Salma's", "Florians Handynummer", "la tarjeta de Elena": someone else's.
_OTHERS = re.compile(
    r"\b(?!(?:It|That|What|There|Here|He|She|Let|Who|Where|Everyone|Nobody)['’]s\b)"
    r"([A-ZÀ-Þ][\w-]+)(?:['’]s\b|s\s+(?=(?:Handy|Telefon|E-Mail|Mail|Adresse|Geburtstag|"
    r"Daten|Passwort|Konto|IBAN)\w*))"
    r"|\b(?:de|d'|von)\s+([A-ZÀ-Þ][\w-]+)",
)


_KIN_OWNER = re.compile(
    r"\b(?:my\s+)?(?:mom|mum|mother|dad|father|sister|brother|son|daughter|wife|husband|"
    r"partner|grandma|grandpa|aunt|uncle|cousin)['’]s\b",
    re.IGNORECASE,
)


def topics_of(request: ForgetRequest) -> set[str]:
    """A request's topic categories, without the one its owner brings in
    ("my dad's immigration case" is not about family in general)."""
    target = request.target
    if not _KIN_OWNER.search(target):
        return set(request.categories)
    return set(topic_categories(_KIN_OWNER.sub(" ", target), request.language))


def slot_owner(part: str) -> str | None:
    """Whose slot a phrase names: "me" for "my ...", a name for "Salma's
    ...", None when it does not say."""
    if _FIRST_PERSON.match(part.strip()) or _FIRST_PERSON_INSIDE.search(part):
        return "me"
    m = _OTHERS.search(part)
    return (m.group(1) or m.group(2)) if m else None


def owned_by(text: str, owner: str | None) -> bool:
    """Whether a memory can hold the slot of ``owner``: one about someone
    else's slot ("Salma's car reg is ...") is not the user's, and one about
    the user's is not Salma's."""
    if owner is None:
        return True
    others = {m.group(1) or m.group(2) for m in _OTHERS.finditer(text)}
    if owner == "me":
        return not others or bool(_MY_SLOT.search(text))
    return owner in others or bool(name_keys(owner) & name_keys(text))


# "my card", "mi tarjeta": a slot the user owns, next to the possessive
# (not "my wife Elena's card").
_PEOPLE = (
    r"(?:wife|husband|partner|mum|mom|mother|dad|father|sister|brother|son|daughter|friend|boss|"
    r"colleague|neighbour|neighbor|aunt|uncle|cousin|mujer|esposa|marido|madre|padre|hermana|"
    r"hermano|hija|hijo|amig[oa]|femme|mari|mère|père|sœur|frère|fille|fils|ami|amie|frau|mann|"
    r"mutter|vater|schwester|bruder|tochter|sohn|freund\w*)"
)
_MY_SLOT = re.compile(
    rf"\b(?:my|mi|mis|mon|ma|mes|mein\w*)\s+(?!{_PEOPLE}\b)",
    re.IGNORECASE,
)


_SPEAKER = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|we|we're|us|yo|me|nosotros|je|j'|moi|nous|ich|mich|mir|wir)\b",
    re.IGNORECASE,
)
_KIN = re.compile(rf"\b(?:my|mi|mis|mon|ma|mes|mein\w*)\s+{_PEOPLE}\b", re.IGNORECASE)


def about_someone_else(text: str) -> bool:
    """True when a memory tells of another person (named, or "my sister")
    with no first-person word: "Mere just got engaged" is not the user's
    love life."""
    return bool(names_someone(text) or _KIN.search(text)) and not _SPEAKER.search(
        _KIN.sub("", text)
    )


def names_someone(text: str) -> bool:
    """True when a text mentions a person by name (beyond its first word)."""
    return any(m.start > 0 for m in mentions(text))


def slot_identifier(text: str, part: str) -> str | None:
    """In a memory holding several identifiers ("Work email a@x.com, personal
    b@y.com"), the one of the slot's kind its own words introduce."""
    kinds = slot_kinds(part)
    every = extract_identifiers(text)
    # a slot word no table knows ("mi RUT"): any identifier its words introduce
    found = [i for i in every if i.kind in kinds] if kinds else every
    if len({(i.start, i.end) for i in every}) < 2:  # one value, several keys
        return None
    core = {stem(w.casefold()) for w in core_words(part)}
    cues = [m.end() for m in re.finditer(r"[\w'-]+", text) if stem(m.group(0).casefold()) in core]
    scored = [(min((i.start - c for c in cues if c <= i.start), default=None), i) for i in found]
    near = [(d, i) for d, i in scored if d is not None]
    if not near:  # no slot word before it: the one identifier of that kind, if one
        spans = {(i.start, i.end) for i in found}
        return text[found[0].start : found[0].end] if len(spans) == 1 else None
    _, best = min(near, key=lambda x: x[0])
    return text[best.start : best.end]


def slot_kinds(part: str) -> frozenset[str]:
    """Identifier kinds the slot a phrase names would hold."""
    out: frozenset[str] = frozenset()
    for w in re.findall(r"[\w'-]+", part.casefold()):
        out |= _SLOT_WORDS.get(w, frozenset())
    return out


# "what I said about", "everything about", "the stuff on": speech around a slot.
SPEECH_PREFIX = re.compile(
    r"^(?:(?:what|everything|anything|all|the\s+(?:stuff|things?|bits?))\s+(?:that\s+)?"
    r"(?:i\s+(?:said|told\s+you|mentioned|shared)\s+)?(?:about|on|regarding|of)\s+"
    r"|lo\s+que\s+te\s+\w+\s+(?:de|sobre)\s+|ce\s+que\s+je\s+t'ai\s+\w+\s+(?:de|sur)\s+)",
    re.IGNORECASE,
)
_DETERMINER = re.compile(
    r"^(?:my|our|her|his|their|the|mi|mis|su|sus|el|la|los|las|mon|ma|mes|son|sa|ses|le|"
    r"mein|meine|meinen|meinem|meiner|ihre|ihren|seine|seinen|die|den|das|der)\b",
    re.IGNORECASE,
)
_CONJUNCTION = re.compile(
    r"\s*(?:,|;|\band\b|\bor\b|\by\b|\be\b|\bet\b|\bou\b|\bund\b|\boder\b|&)\s*",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"^[\w'’ .-]{2,40}$")


def parts(request: ForgetRequest, text: str) -> list[tuple[str, bool, bool]]:
    """What a request names, one part per thing, each with whether it is a
    value to cut out of a longer memory (quoted items, a replaced old value)
    rather than a slot whose memory goes whole, and whether it is an item
    listed beside the request ("... my health stuff. The therapist, the
    meds") that only counts where it relates to the request's target."""
    out: list[tuple[str, bool, bool]] = [
        (m.group(1).strip(), True, False) for m in QUOTED.finditer(text)
    ]
    new = request.new_value or ""
    target = SPEECH_PREFIX.sub("", request.target.strip())
    if request.kind == "replacement":
        if not request.slot and target not in new:
            out.append((target, not is_slot(target, request.language), False))
    else:
        out += [(p, False, False) for p in _CONJUNCTION.split(target) if core_words(p)]
    if request.kind in ("category", "compositional"):
        # "... my health stuff. The therapist, the meds, the panic attacks."
        for sentence in re.split(r"(?<=[.!?:])\s+", text):
            items = [i.strip(" .!?") for i in _CONJUNCTION.split(sentence) if i.strip(" .!?")]
            if len(items) >= 2 and all(_LIST_ITEM.match(i) and len(i.split()) <= 4 for i in items):
                out += [(i, False, True) for i in items if core_words(i) and not _VAGUE.match(i)]
    return list(dict.fromkeys(part for part in out if part[0]))


_VAGUE = re.compile(r"^(?:all|everything|anything|any|nada|alles|tout)\b", re.IGNORECASE)


def is_slot(part: str, language: str = "en") -> bool:
    """A slot phrase ("my home address", "the Tuesday appointment") rather
    than a value: a determiner first, and no identifier or name in it ("the
    idea of visiting the Maldives" names the Maldives; not tested in German,
    which capitalises every noun)."""
    # German capitalises every noun ("meine Handynummer"): no name test there
    names = [part[m.start : m.end] for m in mentions(part)] if language != "de" else []
    named = [
        n
        for n in names
        if n.casefold() not in _CALENDAR_WORDS
        and _not_first(part, n)
        and not (n.isupper() and len(n) <= 4)  # PIN, IBAN, GP: slot words
    ]
    return bool(_DETERMINER.match(part.strip())) and not query_keys(part) and not named


def _not_first(part: str, name: str) -> bool:
    """A mention that is not just the part's capitalised first word."""
    return not part.strip().startswith(name)


_CALENDAR_WORDS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december""".split()
)


# A time or date is shared by unrelated facts ("Tuesday at 10:30", "Thursday at 10:30").
_TIME_LIKE = re.compile(r"^\d{1,2}[:.h]\d{2}$|^\d{1,4}[-./]\d{1,2}(?:[-./]\d{1,4})?$")


# Items of a list inside one memory: "X on Tuesday and the dentist on Thursday".
_SEGMENT = re.compile(
    r"\s*;\s*|,?\s+and\s+(?=(?:my|the|a|an|his|her|our)\b)|,\s+(?=(?:my|the|a|an)\b)"
)


def segments_naming(text: str, part: str) -> list[str]:
    """The list items of a memory that a part names, when other items of the
    same memory do not: those are cut, the rest of the memory stays."""
    pieces = [p for p in _SEGMENT.split(text) if p.strip()]
    if len(pieces) < 2:
        return []
    core = {stem(w.casefold()) for w in core_words(part)}
    if not core:
        return []
    named = [p for p in pieces if core & content_words(p)]
    best = max((len(core & content_words(p)) for p in named), default=0)
    named = [p for p in named if len(core & content_words(p)) == best]
    if not named or len(named) == len(pieces):
        return []
    return [p.strip(" ,.") for p in named]


def longest_prefix(text: str, digits: str) -> int:
    """Longest digit prefix an identifier of ``text`` shares with ``digits``."""
    return max(
        (_shared_prefix(re.sub(r"\D", "", text[i.start : i.end]), digits)
         for i in extract_identifiers(text)),
        default=0,
    )  # fmt: skip


def _shared_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two digit strings."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def identifiers_in(rows: list[MemoryRow]) -> list[str]:
    """Identifiers as written in some memories (numbers, codes, emails...)."""
    out: list[str] = []
    for r in rows:
        found = extract_identifiers(r.text)
        # whole identifiers only: "MA19" inside "MA19 XKD" is no identifier of its own
        out += [
            r.text[i.start : i.end]
            for i in found
            if not _TIME_LIKE.match(r.text[i.start : i.end])
            and not any(
                o.start <= i.start and i.end <= o.end and o.end - o.start > i.end - i.start
                for o in found
            )
        ]
    return list(dict.fromkeys(out))


def name_keys_in(value: str) -> set[str]:
    """Keys of the names a value mentions (whole names, not their parts)."""
    keys: set[str] = set()
    for m in mentions(value, query=True):
        whole = {k for k in m.keys if k.startswith("name:")}
        keys |= whole if len(m.parts) > 1 else {f"part:{m.parts[0]}"}
    return keys


def best_by_stems(pool: list[MemoryRow], value: str) -> list[MemoryRow]:
    """Memories sharing the most content stems with a value, when they cover
    at least ``STEM_SHARE`` of them ("finished preparing the lecture
    materials" ~ "Prepare lecture materials"); for a one-word value, every
    memory with that word in any inflection ("spirituals" ~ "spiritual")."""
    stems = {stem(w.casefold()) for w in core_words(value)}
    if len(stems) == 1:  # "I used to like opera": what mentions opera
        return [r for r in pool if stems <= content_words(r.text)]
    if not stems:
        return []
    words = [content_words(r.text) for r in pool]
    scored = [len(stems & w) for w in words]
    best = max(scored, default=0)
    if best < 2 or best / len(stems) < STEM_SHARE:
        return []
    taken = [i for i, n in enumerate(scored) if n == best]
    # The value's rarest word, used by few memories, names the thing itself
    # ("books about modernism": what else says modernism goes too).
    df = {s: sum(s in w for w in words) for s in stems}
    rare = min(sorted(stems), key=lambda s: df[s])
    if 0 < df[rare] <= RARE_MAX and all(rare in words[i] for i in taken):
        taken = sorted(set(taken) | {i for i, w in enumerate(words) if rare in w})
    return [pool[i] for i in taken]


_FUNCTION_WORDS = frozenset(
    """de del la el los las mi mis tu tus su sus y o en un una que lo le les du des et ou
    mon ma mes ton ta tes son sa ses au aux der die das den dem des und oder ein eine einen
    mein meine meinen meinem dein deine im am zu von mit yo no nos me te se ya es son he ha
    está estoy je tu il elle nous vous est suis ai ne pas ce ça ich du er sie es wir ist bin
    hab habe hat sind war nicht auch noch neu neue neues neuer nuevo nueva nouveau nouvelle
    oye vale bueno also ok okay about into onto over under after before during through
    regarding concerning pour avec dans sans plus très tout tous toute mais donc alors aussi
    comme être avoir fait faire leur leurs cette para pero como muy todo todos toda esta este
    esto cuando donde porque también sobre entre für aber noch nach sehr alle wenn dann schon
    oder über""".split()
)


def shared_words(text: str, rows: list[MemoryRow]) -> list[str]:
    """Words of ``text`` (of five letters or more, no stopwords) that removed
    memories also say: "that thing you said about depression" after the
    conclusion about depression went."""
    gone: set[str] = set()
    for r in rows:
        gone |= content_words(r.text)
    return [
        w
        for w in dict.fromkeys(re.findall(r"[^\W\d_]{5,}", text))
        if w.casefold() not in STOPWORDS and stem(w.casefold()) in gone
    ]


def long_stems(text: str) -> set[str]:
    """Stems of a text's content words of four letters or more, in any of
    the four languages (function words dropped)."""
    return {s for s in core_stems(text) if len(s) >= 4}


def core_stems(value: str) -> set[str]:
    """Stems of a value's content words, compounds split ("Elster-Passwort")."""
    return {
        stem(x) for w in core_words(value) for x in re.split(r"[-'’]", w.casefold()) if len(x) > 1
    }


def core_words(value: str) -> list[str]:
    """Content words of a value without slot qualifiers and request verbs."""
    return [
        w
        for w in re.findall(r"[\w'-]+", value)
        if w.casefold() not in STOPWORDS
        and w.casefold() not in _FUNCTION_WORDS
        and w.casefold() not in _QUALIFIERS
        and w.casefold() not in _REQUEST_WORDS
        and len(w) > 1
    ]


def without(text: str, values: Sequence[str], new_value: str | None = None) -> str | None:
    """``text`` with every literal value cut out (or replaced by
    ``new_value``), or None when none occurs in it as written."""
    out = text
    for value in values:
        if not value:
            continue
        pattern = re.compile(rf"(?<!\w)['\"“‘«„]?{re.escape(value)}['\"”’»“]?(?!\w)", re.I)
        out = pattern.sub(new_value if new_value is not None else "", out)
    if out == text:
        return None
    out = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\s{2,}", " ", out)).strip(" ,;")
    return re.sub(r"(?:,\s*){2,}", ", ", out)


# What a task, plan or event memory says ("add X to my to-do list").
TASK = re.compile(
    r"\b(?:to-?do|tasks?|list|remind(?:er)?|need\s+to|have\s+to|plan(?:s|ned|ning)?|"
    r"schedul\w*|appointments?|meetings?|events?|calendar|deadline|errands?|track)\b",
    re.IGNORECASE,
)
_REQUEST_CLAUSE = re.compile(
    r"\b(?:forget|delete|remove|erase|wipe|scratch|drop|don't\s+keep|stop\s+remembering|"
    r"no\s+longer\s+need|never\s+mind|olvida|borra|elimina|oublie|efface|supprime|vergiss|"
    r"lösch|entfern)",
    re.IGNORECASE,
)


def is_request_clause(clause: str) -> bool:
    """True for a clause that asks to forget (or holds no word at all)."""
    return bool(_REQUEST_CLAUSE.search(clause)) or not words(clause)

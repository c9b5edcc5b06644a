"""Splitting a statement into clause-level facts.

"Henry's phone is 555-0199 and his email is h@x.org" holds two facts; stored
as one memory, superseding or purging one would take the other with it.
Each independent clause becomes its own memory (all derived from the same
source turn), with the subject carried over where the second clause
leaves it implicit ("and works at Stripe") or names it by a pronoun
("his email ..."). Lists and noun phrases ("salt and pepper") are not split:
both sides of a split must carry a verb.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lemminflect import getAllLemmas

from unrecall.recall.dates import DAY_MONTHS

_VERBS = frozenset(
    """is are was were am be been has have had 's 're 'm 've 'd lives lived live works worked
    work likes liked like loves loved love prefers preferred prefer uses used use drives drove
    drive owns owned own studies studied study moved moves move plays played play speaks
    spoke speak wants wanted want needs needed need eats ate eat drinks drank drink takes
    took take goes went go born teaches taught teach runs ran run manages managed manage
    leads led lead visits visited visit stays stayed stay rents rented rent hates hated hate
    enjoys enjoyed enjoy keeps kept keep got gets get bought buys buy sold sells sell reads
    read writes wrote write joined joins join left leaves leave started starts start
    finished finishes finish called calls call became becomes become earns earned earn pays
    paid pay costs cost holds held hold sees saw see meets met meet shipped ships ship
    arrived arrives arrive opened opens open closed closes close expires expired expire
    renews renewed renew begins began begin ends ended end sleeps slept sleep wakes woke
    wake feels felt feel knows knew know thinks thought think gave gives give makes made
    make does did do can could will would should must may might send sent sends book
    booked cancel cancelled remind reminded order ordered""".split()
)
# Titles and abbreviations whose period does not end a sentence.
_ABBREVIATIONS = re.compile(
    r"\b(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Mt|Ave|Rd|No|vs|etc|approx|e\.g|i\.e)\.$", re.IGNORECASE
)
# "19. Mai", "1. Januar": a day's ordinal dot before a month name.
_ORDINAL_END = re.compile(r"(?:^|\s)\d{1,2}\.$")
_MONTH_START = re.compile(rf"(?:{DAY_MONTHS})\b", re.IGNORECASE)
_DOTTED_DATE_END = re.compile(r"\b\d{1,2}\.\d{1,2}\.$")
_SUBJECT_PRONOUNS = {"he", "she", "they", "it"}
_PEOPLE = frozenset("i we you".split())  # subjects no third-person pronoun stands for
# Adverbs that may stand between an implicit subject and its verb ("and
# always asks for ..."): of time and of frequency.
_ADVERBS = frozenset(
    "now also then still currently recently later usually often never always sometimes "
    "rarely seldom".split()
)
# A piece opening with one of these has its own subject: "I see my therapist".
_CLAUSE_OPENERS = frozenset(
    "i i'm i've i'd i'll we we're we've we'd we'll you you're he he's she she's they "
    "they're it it's my our his her their".split()
)
_POSSESSIVES = {"his", "her", "their", "its"}
_CONTRACTED = {"he's": "is", "she's": "is", "they're": "are"}
# "... and I see him on Thursdays": the pronoun stands for the first
# clause's object (for "him", the name in it), which the split clause names.
_NAME_RUN = re.compile(r"\b[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*")
# A sentence ends at . ! ? before a capital, or before a lowercase word when
# it ends a word ("... in Moreno Valley. mi familia es de ..."): chat skips
# capitals, but "2. tv." and "approx. 3" are no ends.
_SENTENCE = re.compile(
    r"(?<=[.!?])\s+(?=[A-Z\"“'(¿¡])|(?:(?<=[^\W\d_]{3}[.!?])|(?<=\d\d[.!?]))\s+(?=[a-zà-ÿ])"
)
# ";", "and", "but", ..., and a comma before a third person's possessive
# ("lives in Tartu, her birthday is 14 August").
_JOINER = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|while|whereas)\s+"
    r"|,\s+(?=(?:his|her|their)\b)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w'’]+")
MAX_PIECES = 8  # joined pieces in one sentence beyond which none is split off


def _tokens(text: str) -> list[str]:
    return [t.casefold().replace("’", "'") for t in _WORD.findall(text)]


@lru_cache(maxsize=1 << 14)
def _inflected_verb(token: str) -> tuple[bool, bool]:
    """Whether ``token`` is a present-tense verb form in lemminflect's
    English lexicon ("resides", "grows"), and whether it can be a noun too
    ("practices", "cats"). Participles ("thinking") head no clause."""
    if not token.endswith("s"):
        return False, False
    lemmas = getAllLemmas(token)
    verb = token not in lemmas.get("VERB", (token,))
    return verb, "NOUN" in lemmas


def looks_like_verb(token: str, after_subject: bool = False) -> bool:
    """A common verb form, a past participle ("paid", "booked"), or an
    inflected verb of the English lexicon; one that can also be a noun
    ("practices") counts only right after a subject ("User practices ...")."""
    if token in _VERBS or (len(token) > 4 and token.endswith("ed")):
        return True
    verb, noun = _inflected_verb(token)
    return verb and (after_subject or not noun)


# A word before one of these is a verb, not a noun ("coaches a team").
_DETERMINERS = frozenset("a an the my your his her their our its this that these those".split())


def _verb_at(tokens: list[str]) -> int | None:
    return next(
        (
            i
            for i, t in enumerate(tokens)
            if looks_like_verb(
                t,
                (i == 1 and _subject_word(tokens[0]))
                or (i + 1 < len(tokens) and tokens[i + 1] in _DETERMINERS),
            )
        ),
        None,
    )


def _subject_word(token: str) -> bool:
    return token in _SUBJECT_PRONOUNS or token == "user"


def _is_clause(piece: str) -> bool:
    """A piece that can stand alone: it has a verb or opens with a subject."""
    toks = _tokens(piece)
    return bool(toks) and (
        _verb_at(toks) is not None
        or toks[0] in _CLAUSE_OPENERS
        or any(t.endswith(("'re", "'m")) for t in toks)
    )


# Longer than any sentence end the merge rules of ``_sentences`` look at.
_TAIL = 32


def _sentences(text: str) -> list[str]:
    """Sentences, without breaking after titles such as "Dr." or "Mrs." or
    inside a dotted date ("am 19. Mai", "Di 11.11. um 9:30")."""
    out: list[list[str]] = []  # the parts of each sentence
    # The rules read only the end of the sentence so far: its last ``_TAIL``
    # characters, searched from the second (the first is context for
    # ``\b``), so that merging many parts costs their length, not its square.
    tail, start = "", 0
    for part in _SENTENCE.split(text.strip()):
        if out and (
            _ABBREVIATIONS.search(tail, start)
            or (_ORDINAL_END.search(tail, start) and _MONTH_START.match(part))
            or (_DOTTED_DATE_END.search(tail, start) and part[:1].islower())
        ):
            out[-1].append(part)
            tail = f"{tail} {part[-_TAIL - 1 :]}"
        else:
            out.append([part])
            tail = part[-_TAIL - 1 :]
        tail, start = (tail[-_TAIL - 1 :], 1) if len(tail) > _TAIL else (tail, 0)
    return [" ".join(parts) for parts in out]


def _verb_word(clause: str) -> tuple[list[str], int | None]:
    """The clause's words and the index of the word that holds its first
    verb (a word such as "C-4471" is two tokens: counting tokens would
    cut the subject in the wrong place)."""
    words = clause.split()
    owner = [i for i, w in enumerate(words) for _ in _tokens(w)]
    v = _verb_at([t for w in words for t in _tokens(w)])
    return words, None if v is None else owner[v]


def _subject(clause: str) -> tuple[str, str | None]:
    """The words before the first verb, and the owner of a possessive subject."""
    words, v = _verb_word(clause)
    toks = _tokens(clause)
    if v is None or v == 0:
        return "", None
    subject = " ".join(words[:v])
    owner = None
    m = re.match(r"^(.*?)['’]s\b(.*)$", subject)
    if m:
        # "User's sister Margit" is Margit; "Henry's phone" is Henry's
        named = re.search(r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*$", m.group(2).strip())
        owner = named.group(0) if named and m.group(2).strip() else m.group(1)
    elif toks[0] not in _SUBJECT_PRONOUNS | _POSSESSIVES:
        owner = subject
    return subject, owner


def _object(clause: str) -> str | None:
    """What follows the first verb ("Dr. Hallworth", "the blue Golf")."""
    words, v = _verb_word(clause)
    if v is None or v + 1 >= len(words):
        return None
    obj = words[v + 1 :]
    if obj[0].casefold() in ("a", "an"):
        obj = ["the", *obj[1:]]
    return " ".join(obj).rstrip(",;.")


def _resolve(right: str, subject: str, owner: str | None) -> str:
    """Give a right-hand clause the subject the left one established."""
    toks = _tokens(right)
    if not toks:
        return right
    first = toks[0]
    rest = right.split(None, 1)[1] if " " in right.strip() else ""
    if subject and (
        looks_like_verb(first)
        or (first in _ADVERBS and len(toks) > 1 and looks_like_verb(toks[1], True))
    ):  # "and works at Stripe", "and now works at Stripe"
        return f"{subject} {right}"
    # "I ... and he ...": he is not I; a person's pronoun needs a named owner
    person = owner is not None and owner.casefold() not in _PEOPLE
    if person and first in _POSSESSIVES:  # "his email is ..."
        return f"{owner}'s {rest}"
    if person and first in _SUBJECT_PRONOUNS:  # "he lives in ..."
        return f"{owner} {rest}"
    if person and first in _CONTRACTED:  # "she's vegetarian"
        return f"{owner} {_CONTRACTED[first]} {rest}"
    np_words = set(_tokens(right.split(" is ")[0])) - {"the"}
    if (
        owner
        and first == "the"
        and subject.split()[0].casefold() in ("the", "our", "my")
        and not np_words & set(_tokens(subject))  # "the bike" after "My bike ..." is the bike
    ):
        # "The storage unit is 118 and the access code is 7392": the code
        # belongs to the unit.
        return f"{owner}'s {rest}"
    return right


# A clause that points back at a negated one ("does not own a bike and has
# never ridden one", "... and refuses to use them") qualifies the same
# predicate, and "it" after "I went to ..." is the event, not a thing: either
# stays in the first clause's memory. "I drive a Golf and I park it in bay
# 17" is two facts about the Golf.
_LEANS_BACK = re.compile(r"\b(?:it|its|them|one|ones|there|that|this|those)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|no|none|nobody|nothing)\b|n't\b", re.IGNORECASE)
_IT_THEM = re.compile(r"\b(?:it|them)\b", re.IGNORECASE)
_THING_START = frozenset("the my your his her their our this that".split())


def _thing(obj: str | None) -> bool:
    """Whether a first clause's object is a noun phrase a pronoun can stand
    for ("the blue Golf", "Dr. Hallworth"), not a place or a time phrase
    ("to the support group yesterday")."""
    if not obj:
        return False
    head = obj.split()[0]
    return len(obj.split()) <= 5 and (
        head.casefold() in _THING_START or head[0].isupper() or head[0].isdigit()
    )


# "Caroline: ...", "Acct 7781 (Brennan Hydraulics): ...": who said it, or
# what a note is about; kept on every clause of the statement.
_LABEL = re.compile(r"^([^\s:][^:\n]{0,58}?): (?=\S)")
_SPEAKER = re.compile(r"[A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,2}")
_LABEL_WORDS = 7


def label(text: str) -> str | None:
    """The label a line opens with: a speaker ("Caroline: ...") or a note's
    head ("Staging DB: host ..., port ..."), a few words without a verb."""
    m = _LABEL.match(text)
    if not m:
        return None
    head = m.group(1)
    toks = _tokens(head)
    if not toks or len(toks) > _LABEL_WORDS or _verb_at(toks) is not None:
        return None
    return head if len(_sentences(head)) == 1 else None


def _depth_split(body: str) -> list[str]:
    """``body`` cut at semicolons and at commas before a space, never inside
    brackets ("laptop (ThinkPad, 14 inch)") or numbers ("1,450 EUR")."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        if depth == 0 and (ch == ";" or (ch == "," and body[i + 1 : i + 2].isspace())):
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    out: list[str] = []
    for item in (i.strip() for i in items):
        if out and _CONSEQUENCE.match(item):  # "not diabetic, so no glucose checks"
            out[-1] = f"{out[-1]}, {item}"
        elif item:
            out.append(re.sub(r"^(?:and|or)\s+", "", item))
    return out


# A piece that follows from the one before it, not an item of its own.
_CONSEQUENCE = re.compile(
    r"(?:so|hence|thus|therefore|which|because|since|as a result)\b", re.IGNORECASE
)


def _items(head: str, body: str) -> list[str] | None:
    """The items of a note's list body ("main contact Orla Brennan, billing
    email ap@x.ie, net-45 terms"), or None when the body is prose.

    A list's items are things said of the head ("rent 1,450 EUR", "owner is
    Tomasz"); prose opens with a pronoun of its own ("I went ...", "my
    sister ..."). Under a speaker's name (chat) commas are prose more often
    than a list, so there a list needs a semicolon."""
    items = _depth_split(body)
    # (an item is a key and its value: "ref: 1000, thanks" is no list)
    if len(items) < 2 or any(len(i.split()) < 2 for i in items):
        return None
    first = _tokens(items[0])
    if first and first[0] in _CLAUSE_OPENERS:
        return None
    if _SPEAKER.fullmatch(head) and ";" not in body:
        return None
    return items


def _pieces(sentence: str) -> tuple[list[str], list[str]]:
    """A sentence cut at its joiners into clauses, and the joiners between
    them; a piece that is no clause ("magnesium at night" in "takes vitamin
    D and magnesium at night") stays joined to the one before it."""
    parts = _JOINER.split(sentence)
    joints = [m.group(0) for m in _JOINER.finditer(sentence)]
    if len(parts) > MAX_PIECES:  # a run-on transcript, not a few facts
        return [sentence], []
    merged, kept = [parts[0]], []
    for joint, piece in zip(joints, parts[1:], strict=True):
        if piece.strip() and _is_clause(piece) and _is_clause(merged[-1]):
            merged.append(piece)
            kept.append(joint)
        else:
            merged[-1] = f"{merged[-1]}{joint}{piece}"
    return merged, kept


def split_clauses(text: str) -> list[str]:
    """Independent clauses of ``text``, each able to stand alone; a text with
    a single clause comes back unchanged as a one-element list.

    Each clause keeps the context it needs: the subject the first clause
    established, and the label the line opens with (a speaker, "Caroline:
    ...", or a note's head, whose list of items gives one clause per item).
    A clause that leans on the one before it is not split off."""
    head = label(text)
    prefix = f"{head}: " if head else ""
    body = text[len(prefix) :]
    listed = _items(head, body) if head else None
    if listed:
        return [f"{prefix}{item}" for item in listed]
    out: list[str] = []
    for sentence in _sentences(body):
        parts, joints = _pieces(sentence)
        if len(parts) < 2:
            out.append(sentence.strip())
            continue
        subject, owner = _subject(parts[0])
        obj = _object(parts[0])
        group = [parts[0].strip()]
        event = subject.casefold() in _PEOPLE
        for joint, piece in zip(joints, parts[1:], strict=True):
            first = _tokens(piece)[:1]
            negated_left = bool(_NEGATION.search(group[-1].replace("’", "'")))
            # a second negation qualifies the first ("does not drive and has
            # never held a licence"): one fact, superseded as one
            both_negated = negated_left and bool(_NEGATION.search(piece.replace("’", "'")))
            if both_negated or (
                _LEANS_BACK.search(piece)
                and (
                    negated_left
                    or (event and first == ["it"])
                    # a pronoun that cannot be given a thing the first clause
                    # names ("and we went there", "my kids loved it" after
                    # "went to a support group") keeps the clause with it
                    or not (_IT_THEM.search(piece) and _thing(obj))
                )
            ):
                group[-1] = f"{group[-1]}{joint}{piece.strip()}"
                continue
            clause = _resolve(piece.strip().rstrip(",;"), subject, owner)
            if obj:
                # "him" stands for a person: the subject's owner ("Arjun's
                # address is 73 Alder Road; his ex is looking for him"), or
                # the name in the object ("had coffee with Mateo Mendes;
                # Calloway keeps him busy"), never the rest
                named = owner if owner and owner != "I" and _NAME_RUN.fullmatch(owner) else None
                names = [named] if named else [n.strip() for n in _NAME_RUN.findall(obj)]
                if names:
                    clause = re.sub(r"\bhim\b", names[-1], clause, count=1)
                clause = re.sub(r"\b(?:them|it)\b", obj, clause, count=1)
            group.append(clause)
        out += [g.rstrip(",;") if i < len(group) - 1 else g for i, g in enumerate(group)]
    clauses = [c for c in out if c]
    if len(clauses) < 2:
        return [text]
    return [f"{prefix}{c}" for c in clauses]

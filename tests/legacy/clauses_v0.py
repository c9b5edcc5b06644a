# A verbatim copy of src/unrecall/recall/clauses.py before the long-text work
# (issue #12, defect 9; commit 65d9eea; imports point at these copies), kept so
# that tests/test_long_text_equivalence.py can check that the linear-time
# version gives the same results. Do not edit.
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
_ADVERBS = frozenset("now also then still currently recently later usually often never".split())
# A piece opening with one of these has its own subject: "I see my therapist".
_CLAUSE_OPENERS = frozenset(
    "i i'm i've i'd i'll we we're we've we'd we'll you you're he he's she she's they "
    "they're it it's my our his her their".split()
)
_POSSESSIVES = {"his", "her", "their", "its"}
# "... and I see him on Thursdays": the pronoun stands for the first
# clause's object (for "him", the name in it), which the split clause names.
_NAME_RUN = re.compile(r"\b[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*")
# A sentence ends at . ! ? before a capital, or before a lowercase word when
# it ends a word ("... in Moreno Valley. mi familia es de ..."): chat skips
# capitals, but "2. tv." and "approx. 3" are no ends.
_SENTENCE = re.compile(
    r"(?<=[.!?])\s+(?=[A-Z\"“'(¿¡])|(?:(?<=[^\W\d_]{3}[.!?])|(?<=\d\d[.!?]))\s+(?=[a-zà-ÿ])"
)
_JOINER = re.compile(r"\s*;\s*|,?\s+(?:and|but|while|whereas)\s+", re.IGNORECASE)
_WORD = re.compile(r"[\w'’]+")


def _tokens(text: str) -> list[str]:
    return [t.casefold().replace("’", "'") for t in _WORD.findall(text)]


def looks_like_verb(token: str) -> bool:
    """A common verb form or a past participle ("paid", "booked")."""
    return token in _VERBS or (len(token) > 4 and token.endswith("ed"))


def _verb_at(tokens: list[str]) -> int | None:
    return next((i for i, t in enumerate(tokens) if looks_like_verb(t)), None)


def _is_clause(piece: str) -> bool:
    """A piece that can stand alone: it has a verb or opens with a subject."""
    toks = _tokens(piece)
    return bool(toks) and (
        _verb_at(toks) is not None
        or toks[0] in _CLAUSE_OPENERS
        or any(t.endswith(("'re", "'m")) for t in toks)
    )


def _sentences(text: str) -> list[str]:
    """Sentences, without breaking after titles such as "Dr." or "Mrs." or
    inside a dotted date ("am 19. Mai", "Di 11.11. um 9:30")."""
    out: list[str] = []
    for part in _SENTENCE.split(text.strip()):
        if out and (
            _ABBREVIATIONS.search(out[-1])
            or (_ORDINAL_END.search(out[-1]) and _MONTH_START.match(part))
            or (_DOTTED_DATE_END.search(out[-1]) and part[:1].islower())
        ):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _subject(clause: str) -> tuple[str, str | None]:
    """The words before the first verb, and the owner of a possessive subject."""
    words = clause.split()
    toks = _tokens(clause)
    v = _verb_at(toks)
    if v is None or v == 0:
        return "", None
    subject = " ".join(words[:v])
    owner = None
    m = re.match(r"^(.*?)['’]s\b", subject)
    if m:
        owner = m.group(1)
    elif toks[0] not in _SUBJECT_PRONOUNS | _POSSESSIVES:
        owner = subject
    return subject, owner


def _object(clause: str) -> str | None:
    """What follows the first verb ("Dr. Hallworth", "the blue Golf")."""
    words = clause.split()
    v = _verb_at(_tokens(clause))
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
        first in _VERBS or (first in _ADVERBS and len(toks) > 1 and toks[1] in _VERBS)
    ):  # "and works at Stripe", "and now works at Stripe"
        return f"{subject} {right}"
    if owner and first in _POSSESSIVES:  # "his email is ..."
        return f"{owner}'s {rest}"
    if owner and first in _SUBJECT_PRONOUNS:  # "he lives in ..."
        return f"{owner} {rest}"
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


def split_clauses(text: str) -> list[str]:
    """Independent clauses of ``text``, each able to stand alone; a text with
    a single clause comes back unchanged as a one-element list."""
    out: list[str] = []
    for sentence in _sentences(text):
        pieces = [p for p in _JOINER.split(sentence) if p and p.strip()]
        if len(pieces) < 2 or not all(_is_clause(p) for p in pieces):
            out.append(sentence.strip())
            continue
        subject, owner = _subject(pieces[0])
        obj = _object(pieces[0])
        out.append(pieces[0].strip().rstrip(",;"))
        for piece in pieces[1:]:
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
            out.append(clause)
    clauses = [c for c in out if c]
    return clauses if len(clauses) > 1 else [text]

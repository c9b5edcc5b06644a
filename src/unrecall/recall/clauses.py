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

_VERBS = frozenset(
    """is are was were am be been has have had 's 're lives lived live works worked work
    likes liked like loves loved love prefers preferred prefer uses used use drives drove
    drive owns owned own studies studied study moved moves plays played play speaks spoke
    wants wanted needs needed eats ate drinks drank takes took goes went born teaches taught
    runs ran manages managed leads led visits visited visit stays stayed rents rented
    hates hated enjoys enjoyed keeps kept got gets bought buys sold sells reads read writes
    wrote joined joins left leaves started starts finished finishes called calls became
    becomes earns earned pays paid costs cost holds held""".split()
)
_SUBJECT_PRONOUNS = {"he", "she", "they", "it"}
_POSSESSIVES = {"his", "her", "their", "its"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“'(])")
_JOINER = re.compile(r"\s*;\s*|,?\s+(?:and|but|while|whereas)\s+", re.IGNORECASE)
_WORD = re.compile(r"[\w'’]+")


def _tokens(text: str) -> list[str]:
    return [t.casefold().replace("’", "'") for t in _WORD.findall(text)]


def _verb_at(tokens: list[str]) -> int | None:
    return next((i for i, t in enumerate(tokens) if t in _VERBS), None)


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


def _resolve(right: str, subject: str, owner: str | None) -> str:
    """Give a right-hand clause the subject the left one established."""
    toks = _tokens(right)
    if not toks:
        return right
    first = toks[0]
    rest = right.split(None, 1)[1] if " " in right.strip() else ""
    if first in _VERBS and subject:  # "and works at Stripe"
        return f"{subject} {right}"
    if owner and first in _POSSESSIVES:  # "his email is ..."
        return f"{owner}'s {rest}"
    if owner and first in _SUBJECT_PRONOUNS:  # "he lives in ..."
        return f"{owner} {rest}"
    return right


def split_clauses(text: str) -> list[str]:
    """Independent clauses of ``text``, each able to stand alone; a text with
    a single clause comes back unchanged as a one-element list."""
    out: list[str] = []
    for sentence in _SENTENCE.split(text.strip()):
        pieces = [p for p in _JOINER.split(sentence) if p and p.strip()]
        if len(pieces) < 2 or any(_verb_at(_tokens(p)) is None for p in pieces):
            out.append(sentence.strip())
            continue
        subject, owner = _subject(pieces[0])
        out.append(pieces[0].strip().rstrip(",;"))
        for piece in pieces[1:]:
            out.append(_resolve(piece.strip().rstrip(",;"), subject, owner))
    clauses = [c for c in out if c]
    return clauses if len(clauses) > 1 else [text]

"""Turning an operation's target (an id or a query) into memories.

The rule, in order, stopping at the first that matches:

1. **id** - the target is the public id of a memory of the tenant.
2. **identifier** - the query names identifiers (emails, phones, ids, ...;
   see ``recall.identifiers``): every memory holding one of them under the
   same canonical key, whatever its surface form. Look-alikes have other keys.
3. **entity** - the query is a name and little else ("Frank", "everything
   about Зоя Иванова", "customer Wang Fang"): every memory mentioning that
   person or organisation in any script or spelling (``recall.names``);
   lowercase words such as "a frank talk" are not mentions.
4. **phrase** - every memory whose text contains the query's tokens as a
   contiguous run of *whole* tokens, after case, accent and Unicode folding.
   Identifiers are single tokens, so ``TKT-1000`` never contains ``TKT-100``.
5. **entity, narrowed** - a name among other words ("Maria Lopez
   prescription", "Flight 123"): the name's memories that say every other
   word (``EntityQuery``). When none does, the name does not decide, but
   the semantic stage then looks only among the name's memories.
6. **terms** - every content word of the query, in any order and
   inflection: two with a name or code among them ("dentist Dr. Moss"),
   three otherwise ("guest WiFi password").
7. **semantic** - the best hybrid candidates by cosine similarity, how many
   decided from the score distribution (see ``semantic``) and reported. A
   purge goes by meaning only among a name's memories or when the request
   describes a fact (``describing_words``).
8. **none** - nothing is affected and the report says so.

"Everything about my dog" is first reduced to its subject ("my dog").

Stages 2-6 search the states the operation may touch (a purge reaches
released and superseded memories too). A query made only of common words is
refused rather than allowed to hit nearly everything.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from unrecall.errors import InvalidInput
from unrecall.recall.categories import categories
from unrecall.recall.identifiers import keys as identifier_keys
from unrecall.recall.identifiers import query_keys
from unrecall.recall.lexical import (
    STOPWORDS,
    compound_tokens,
    contains_phrase,
    content_overlap,
    is_too_broad,
    negated,
    normalize,
    stem,
    words,
)
from unrecall.recall.names import mentions, name_keys
from unrecall.recall.search import Recall
from unrecall.records import ACTIVE
from unrecall.storage.base import MemoryRow, Storage, TurnRow

# Scores of the semantic stage (see ``semantic``), on a 0-2 scale.
STRONG = 1.0
WEAK = 0.6
MIN_LEAD = 0.02
SUPERSEDE_LEAD = 0.04
RELEASE_LEAD = 0.16
SEMANTIC_MARGIN = 0.06
SEMANTIC_MAX_TAKEN = 3
NEAR_DUPLICATE = 0.85
POLARITY_PENALTY = 0.25
# MiniLM gives unrelated short texts cosines up to ~0.25; above that is signal.
QUERY_FLOOR = 0.28
OVERLAP_FLOOR = 0.25
# Weight, in a release or purge, of the share of a memory's content words the
# request says (0-1) beside twice its cosine.
WORDS_WEIGHT = 0.5
_CANDIDATE_LIMIT = 100_000


@dataclass(frozen=True)
class Target:
    """Memories a target resolved to, and how."""

    rows: list[MemoryRow]
    match: str
    similarity: float | None = None
    decision: dict[str, float | int] | None = None


def looks_like_id(target: str, prefix: str = "m_") -> bool:
    """True for strings shaped like public ids (``m_`` + 20 hex digits)."""
    return (
        len(target) == 22
        and target.startswith(prefix)
        and all(c in "0123456789abcdef" for c in target[2:])
    )


def query_tokens(query: str) -> list[str]:
    """Targeting tokens of a query, refusing empty and stopword-only ones."""
    tokens = compound_tokens(query)
    if not tokens:
        raise InvalidInput("target query has no words")
    if is_too_broad(tokens):
        raise InvalidInput("target query is only common words; give an id or a specific phrase")
    return tokens


# Words that may surround a name in an entity-scoped request.
_ENTITY_FILLER = frozenset(
    "everything anything all about regarding concerning related to of on info information "
    "facts details data memories stuff things remember know knows record records file files "
    "note notes entry entries".split()
)


@dataclass(frozen=True)
class Matcher:
    """One targeting stage: FTS digests that find candidates, and the exact
    test a candidate's text must pass."""

    kind: str
    terms: list[str]
    require_all: bool
    test: Callable[[str], bool]
    narrow: frozenset[str] = frozenset()


_NOT_NARROWING = STOPWORDS | _ENTITY_FILLER


@dataclass(frozen=True)
class EntityQuery:
    """The names a target holds anywhere in it, and the words around them.

    ``narrow`` are the stems of the other content words ("prescription" in
    "Maria Lopez prescription"): they pick the entity's memories that say
    them all; when none does, the name does not decide the target. A noun
    just before the name says who it is ("customer Wang Fang"), and an
    "everything about" request takes all of it ("everything about Charlie
    on the team"), so neither narrows. A number or a capital after a name
    says which one ("Flight 123", "Book A") and always narrows.
    """

    keys: frozenset[str]
    narrow: frozenset[str]


def entity_query(target: str) -> EntityQuery | None:
    """The names of a target, wherever they stand in it, else None."""
    # A capitalised code such as "AA-10-2" is an identifier, not a name: as a
    # name it would reach every look-alike that starts with "AA".
    found = [
        m
        for m in mentions(target, query=True)
        if not any(c.isdigit() for c in target[m.start : m.end])
    ]
    # "Severny Shchit" also yields "Shchit" (a sentence-initial word may not
    # be a name); only the outermost mentions speak for the request.
    found = [
        m
        for m in found
        if not any(o is not m and o.start <= m.start and m.end <= o.end for o in found)
    ]
    if not found:
        return None
    keys: set[str] = set()
    for m in found:
        if len(m.parts) == 1:
            # a part of a longer name, or a name written as one word
            # ("Alibaba" is 阿里巴巴, stored as the name "alibaba")
            keys |= {f"part:{m.parts[0]}", f"name:{m.parts[0]}"}
        else:
            keys |= {k for k in m.keys if k.startswith(("name:", "skel:"))}
    narrow: set[str] = set()
    scoped = bool(_ABOUT.match(target.strip()))
    rest = list(target)
    for m in found:
        rest[m.start : m.end] = "\x00" * (m.end - m.start)
    tokens = re.findall(r"\x00+|[^\W_]+", "".join(rest))
    for i, tok in enumerate(tokens):
        w = normalize(tok)
        after_name = i > 0 and tokens[i - 1][0] == "\x00"
        # a noun just before the name says who it is ("customer Wang Fang")
        role = i + 1 < len(tokens) and tokens[i + 1][0] == "\x00"
        if tok[0] == "\x00" or (role and not tok.isdigit()):
            continue
        if tok.isdigit() or (after_name and len(tok) == 1 and tok.isupper()):
            # "Flight 123", "Book A": which one of the name, a whole token
            narrow.add("=" + w)
        elif not scoped and w not in _NOT_NARROWING:
            narrow.add(stem(w))
    return EntityQuery(frozenset(keys), frozenset(narrow))


def narrowed(rows: list[MemoryRow], narrow: frozenset[str]) -> list[MemoryRow]:
    """The rows that say every ``narrow`` stem (by a shared prefix of five
    letters, "prescription" ~ "prescribed") and every whole token (``=123``,
    the "123" of "Flight 123"); none may qualify."""
    exact = {w[1:] for w in narrow if w[0] == "="}
    heads = {w[:5] for w in narrow if w[0] != "="}
    out = []
    for r in rows:
        said = words(r.text)
        if exact <= set(said) and heads <= {stem(w)[:5] for w in said}:
            out.append(r)
    return out


_ABOUT = re.compile(
    r"^(?:(?:everything|anything|all|whatever)(?:\s+(?:the\s+)?(?:info|information|details"
    r"|facts|data|memories))?|(?:the\s+|any\s+)?(?:info|information|details|facts|data"
    r"|memories))(?:\s+(?:you\s+know|i\s+told\s+you))?\s+(?:about|regarding|concerning"
    r"|on|related\s+to|to\s+do\s+with)\s+",
    re.IGNORECASE,
)
_GENERIC_TAIL = re.compile(
    r"\s+(?:account|profile|details|info|information|stuff|things|data)$", re.IGNORECASE
)


def request_core(target: str) -> str:
    """The subject of an "everything about ..." request ("my Steam account"
    -> "my Steam"), or the target unchanged."""
    core = _GENERIC_TAIL.sub("", _ABOUT.sub("", target.strip())).strip()
    return core if core and core != target.strip() and words(core) else target


def matchers(recall: Recall, target: str) -> list[Matcher]:
    """The query stages (identifier, entity, phrase, terms) that apply."""
    hasher = recall.hasher
    core = request_core(target)
    tokens = query_tokens(core)
    out: list[Matcher] = []
    ident = query_keys(core)
    if ident:
        out.append(
            Matcher(
                "identifier",
                [hasher.key(k) for k in sorted(ident)],
                False,
                lambda text: bool(identifier_keys(text) & ident),
            )
        )
    phrase = Matcher(
        "phrase",
        hasher.query_terms(" ".join(tokens)),
        True,
        lambda text: contains_phrase(compound_tokens(text), tokens),
    )
    entity = entity_query(target)
    by_name = None
    if entity is not None:
        names = entity.keys
        by_name = Matcher(
            "entity",
            [hasher.key(k) for k in sorted(names)],
            False,
            lambda text: bool(name_keys(text) & names),
            entity.narrow,
        )
    # A name and little else takes the name's memories. A name among other
    # words is narrowed by them, after the exact phrase: "Ingrid's one-time
    # login code" said word for word is that fact, not every fact of
    # Ingrid's with "login" in it.
    if by_name is not None and not by_name.narrow:
        out.append(by_name)
    out.append(phrase)
    if by_name is not None and by_name.narrow:
        out.append(by_name)
    # Last lexical resort: every content word, in any order and any
    # inflection ("guest WiFi password" for "Wi-Fi password for guests"):
    # two words with a name or a code among them ("dentist Dr. Moss"),
    # three otherwise, so that a few common words never sweep ("where I
    # park at work" is no target for "park" and "work").
    content = describing_words(core)
    if content:
        stems = {stem(w) for w in content}
        out.append(
            Matcher(
                "terms",
                [hasher.term(w) for w in content],
                False,
                lambda text: stems <= _stems(text),
            )
        )
    return out


def describing_words(target: str) -> list[str]:
    """The content words of a target that says enough to pick facts by: two
    with a name or a code among them ("dentist Dr. Moss"), three otherwise
    ("guest WiFi password"); else none ("may new", "ember")."""
    content = [w for w in dict.fromkeys(words(target)) if w not in STOPWORDS and len(w) > 1]
    distinctive = any(
        w[0].isupper() or any(c.isdigit() for c in w)
        for w in re.findall(r"\w+", target)
        if w.casefold() not in STOPWORDS
    )
    return content if len(content) >= (2 if distinctive else 3) else []


def _stems(text: str) -> set[str]:
    """Stems of a text's words and of each adjacent pair written as one
    ("wi fi" -> "wifi")."""
    ws = words(text)
    return {stem(w) for w in ws} | {stem(a + b) for a, b in itertools.pairwise(ws)}


def matching_memories(
    storage: Storage, tenant_id: int, matcher: Matcher, states: tuple[str, ...]
) -> list[MemoryRow]:
    """Every memory in ``states`` that passes a matcher."""
    rows: list[MemoryRow] = []
    if ACTIVE in states:
        hits = storage.lexical(tenant_id, matcher.terms, _CANDIDATE_LIMIT, matcher.require_all)
        rows += storage.memories_by_id([mid for mid, _ in hits])
    inactive = tuple(s for s in states if s != ACTIVE)
    if inactive:  # not in the recall indexes: few, scanned directly
        rows += storage.memories(tenant_id, inactive)
    return sorted((r for r in rows if matcher.test(r.text)), key=lambda r: r.id)


def matching_turns(storage: Storage, recall: Recall, tenant_id: int, target: str) -> list[TurnRow]:
    """Source turns that still say what ``target`` names (first stage that
    finds any), e.g. after an update took it out of the memory."""
    for matcher in matchers(recall, target):
        hits = storage.lexical(
            tenant_id, matcher.terms, _CANDIDATE_LIMIT, matcher.require_all, turns=True
        )
        turns = [t for t in storage.turns_by_id([i for i, _ in hits]) if matcher.test(t.text)]
        if turns:
            return turns
    return []


def resolve(
    storage: Storage,
    recall: Recall,
    tenant_id: int,
    target: str,
    states: tuple[str, ...],
    allow_semantic: bool,
    scope: Callable[[MemoryRow], bool] | None = None,
    hint: str | None = None,
) -> Target:
    """Apply the targeting rule of this module to one target.

    ``hint`` is the text that will replace the target (a supersede's new
    value): it names the same slot, so it helps the semantic stage find an
    old fact the query paraphrases.

    ``scope`` (an agent / run narrowing inside the tenant) limits what a
    query may reach; an id names one memory exactly and is not narrowed.
    """
    in_scope = scope or (lambda _row: True)
    if not isinstance(target, str) or not target.strip():
        raise InvalidInput("target must be a memory id or a non-empty query")
    target = target.strip()
    if looks_like_id(target):
        row = storage.memory(tenant_id, target)
        if row is not None and row.state in states:
            return Target([row], "id")
        return Target([], "none")
    named: set[int] | None = None
    for matcher in matchers(recall, target):
        rows = [r for r in matching_memories(storage, tenant_id, matcher, states) if in_scope(r)]
        if rows and matcher.narrow:
            # "Ama's age" when no fact of Ama's says "age": the meaning
            # decides, among Ama's facts only
            named, rows = {r.id for r in rows}, narrowed(rows, matcher.narrow)
        if rows:
            return Target(rows, matcher.kind)
    # A purge cannot be undone: it goes by meaning only when the request
    # describes a fact ("the old payroll schedule", see ``describing_words``)
    # or names whose memories meaning picks among ("Pat, the landlord"); a
    # word no memory says ("ember") names nothing to erase.
    if ACTIVE in states and (allow_semantic or named is not None):
        if named is not None:
            among = named
            return semantic(
                recall, tenant_id, target, lambda r: r.id in among and in_scope(r), hint
            )
        return semantic(recall, tenant_id, target, in_scope, hint)
    return Target([], "none")


def semantic(
    recall: Recall,
    tenant_id: int,
    target: str,
    in_scope: Callable[[MemoryRow], bool],
    hint: str | None,
) -> Target:
    """The semantic stage: decide from the score distribution how many of
    the best hybrid candidates to take, and report the decision.

    Evidence is put on one scale. For a release or a purge it is twice the
    cosine to the request plus ``WORDS_WEIGHT`` times the share of the
    memory's content words the request says; for a supersede, the cosine to
    the request plus the cosine to the new value (a replacement restates the
    same slot), less
    ``POLARITY_PENALTY`` when one is negated and the other not ("the key is
    NOT under the mat" is not the location being replaced). A candidate
    counts only if the request itself relates to it (cosine of at least
    ``QUERY_FLOOR``) or, for a supersede, it shares ``OVERLAP_FLOOR`` of its
    content words with the new value ("my GP" -> "Dr. Okafor at Riverside")
    or a topic category with the request (``recall.categories``).
    The best is taken if it reaches ``STRONG`` with some lead, or ``WEAK``
    with a clear lead over the second; others only if they restate it
    (cosine of at least ``NEAR_DUPLICATE``) and score nearly as well.
    """
    now = time.time()
    probes = recall.embed([target] + ([hint] if hint else []))
    hits = recall.search(
        tenant_id,
        target,
        10,
        accept=lambda r: (
            r.state == ACTIVE and (r.expires_at is None or r.expires_at > now) and in_scope(r)
        ),
        query_vector=probes[0],
    )
    if not hits:
        return Target([], "none", decision={"candidates": 0})
    texts = [h.row.text for h in hits]
    vecs = np.vstack([probes, recall.vectors([], [h.row for h in hits])])
    cands = vecs[len(probes) :]
    to_query = cands @ vecs[0]
    if hint:
        overlap = np.array([content_overlap(hint, t) for t in texts])
        flipped = np.array([negated(t) != negated(hint) for t in texts])
        scores = to_query + cands @ vecs[1] - POLARITY_PENALTY * flipped
        # Same topic category as the request ("my employer" ~ "I started
        # working at ...") stands in for a weak cosine.
        topics = categories(target)
        same_topic = np.array([bool(topics & categories(t)) for t in texts])
        eligible = (to_query >= QUERY_FLOOR) | (overlap >= OVERLAP_FLOOR) | same_topic
        lead = SUPERSEDE_LEAD
    else:
        # What the words say is evidence too: with cosines a hair apart
        # ("the user's former savings bank": 0.51 for "banked with Fennick
        # Savings", 0.53 for "pension managed by Orwell Trust"), the memory
        # that says the request's words goes first, not the numerics' pick.
        said = np.array([content_overlap(target, t) for t in texts])
        scores = 2 * to_query + WORDS_WEIGHT * said
        eligible, lead = to_query >= QUERY_FLOOR, RELEASE_LEAD
    scores = np.where(eligible, scores, 0.0)
    order = np.argsort(-scores, kind="stable")
    top = float(scores[order[0]])
    second = float(scores[order[1]]) if len(order) > 1 else 0.0
    decision: dict[str, float | int] = {
        "candidates": len(hits),
        "top": round(top, 4),
        "second": round(second, 4),
    }
    margin = top - second
    if not ((top >= STRONG and margin >= MIN_LEAD) or (top >= WEAK and margin >= lead)):
        return Target([], "none", decision={**decision, "taken": 0})
    best = int(order[0])
    # Beyond the best, only restatements of the same fact go too.
    taken = [best] + [
        int(i)
        for i in order[1:SEMANTIC_MAX_TAKEN]
        if scores[i] >= top - SEMANTIC_MARGIN and float(cands[i] @ cands[best]) >= NEAR_DUPLICATE
    ]
    return Target(
        [hits[i].row for i in taken],
        "semantic",
        round(top, 4),
        {**decision, "taken": len(taken)},
    )

"""The entity graph: who and what the memories name, and how they connect.

A secret is rarely said once: "the firm we hired belongs to our CFO's wife"
can be pieced together from a contract, an ownership filing and a dinner
invitation, none of which says it. Similar wording does not reach that
evidence; the entities it shares with the request do. The graph is built
from stored texts only, so it holds nothing a deletion has removed: each
entity, alias and edge carries the memory ids it was read from, and a
memory that goes takes its part of the graph with it (closure).

- **Entities** are names (people, organisations, places, products; see
  ``names.mentions``) and identifiers. A full name ("Nina Shah") is one
  entity; a lone part ("Nina") resolves to the one full name that holds it,
  to the one that shares the text's other entities when several do (a Nina
  in HR is another Nina), or stays a name of its own.
- **Aliases** are role references the dialogue established: "Ravi Shah, our
  CFO", "our CFO Ravi Shah" or "hired Ravi Shah as CFO" make "cfo" name Ravi
  Shah; "Ravi and his wife Nina" makes Nina "Ravi's wife", so "our CFO's
  wife" resolves to her. The user's own people are entities even unnamed
  ("my dad"), and join their name when the dialogue gave one ("my sister
  Leila"). A lone part or a distinctive role ("the head of design
  finalist") that cannot be settled on its own is settled by the context
  of a request (``named_in``).
- **Edges** are co-mentions within one memory, and **relations** the
  stated ones ("Arden Advisory is owned by Nina Shah": ``is owned by``),
  each with the memories that say it as provenance.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from unrecall.recall.clauses import looks_like_verb
from unrecall.recall.identifiers import keys as identifier_keys
from unrecall.recall.names import mentions, stripped_end

# Memories that must share content with an unnamed "my cousin" before a
# named person is taken for them (``EntityGraph.kin_by_content``).
KIN_MIN = 2
# What ``EntityGraph.masked`` puts in place of a name.
MASK = "someone"
# Words that open a role or kin phrase: "our CFO", "my accountant", "his wife".
_OWNERS = r"(?:our|my|the|their|his|her)"
# A role: one to three words, stopping before punctuation or a clause word.
_CLAUSE_WORD = r"(?:is|was|who|and|has|had|to|at|for|in|on|said)\b"
_ROLE = r"(?P<role>[A-Za-z][\w-]*(?:\s+(?!" + _CLAUSE_WORD + r")[a-z][\w-]*){0,2})"
_POSSESSOR = re.compile(
    r"\b(?:our|my|their|his|her|your)(?:\s+(?:new|next|old|former|current|acting|interim))?$",
    re.IGNORECASE,
)
_SLOT = r"§(?P<{0}>\d+)§"
# At most this many full names may share a lone part for the context to settle it.
UNSURE_OPTIONS = 2
_OWN_PERSON = re.compile(r"\b(?:my|our)\s+[\w-]+,?\s*$", re.IGNORECASE)
_RELATION_WORDS = 5  # at most this many words between two names make a relation
_KIN = r"(?P<kin>[a-z]+(?:-in-law)?)"
# "Ravi Shah, our CFO," / "Ravi Shah is our CFO" / "our CFO, Ravi Shah"
_ROLE_AFTER = re.compile(
    _SLOT.format("n")
    + r"(?:,\s+|\s+(?:is|was|as)\s+)"
    + _OWNERS
    + r"\s+"
    + _ROLE
    + r"(?=\s*[,.;:!?)]|\s*$|\s+(?:who|and|is|was|has|had|said)\b)"
)
# "Sofia Chen has agreed to join as head of design", "hired Dev Rao as our CTO"
_ROLE_AS = re.compile(
    _SLOT.format("n")
    + r"(?:\s+[\w'-]+){0,5}?\s+as\s+(?:our\s+|the\s+|a\s+|my\s+)?"
    + r"(?P<role>(?:new\s+|next\s+)?[A-Za-z][\w-]*(?:\s+(?!"
    + _CLAUSE_WORD
    + r")[a-z][\w-]*){0,3})(?=\s*[,.;:!?)]|\s*$)"
)
_ROLE_BEFORE = re.compile(
    r"\b(?:our|my|the)\s+" + _ROLE + r",?\s+" + _SLOT.format("n"), re.IGNORECASE
)
# "Ravi and his wife Nina" / "Ravi's wife Nina" / "Nina, Ravi's wife"
_KIN_AND = re.compile(
    _SLOT.format("a") + r"\s+and\s+(?:his|her|their)\s+" + _KIN + r",?\s+" + _SLOT.format("b")
)
_KIN_OF = re.compile(_SLOT.format("a") + r"['’]s\s+" + _KIN + r",?\s+" + _SLOT.format("b"))
_KIN_APPOSITION = re.compile(
    _SLOT.format("b") + r",\s+" + _SLOT.format("a") + r"['’]s\s+" + _KIN + r"\b"
)
# In a request: "our CFO's wife", "Ravi's wife", "my boss' sister".
_REFERENCE = re.compile(
    r"(?P<head>\b"
    + _OWNERS
    + r"\s+[A-Za-z][\w-]*(?:\s+(?!"
    + _CLAUSE_WORD
    # a role may be capitalised after an adjective: "our next VP of sales"
    + r"|going\b|be\b|(?:our|my|the|their|his|her)\b)[A-Za-z][\w-]*){0,3}|§\d+§)"
    r"(?P<chain>(?:['’]s?\s+[a-z]+(?:-in-law)?)*)"
)
_CHAIN_LINK = re.compile(r"['’]s?\s+([a-z]+(?:-in-law)?)")
# The user's own people, named or not: "my dad" is one person across the
# dialogue even when his name is never said. Spelling variants share a key.
_PEOPLE = {
    **dict.fromkeys(("mum", "mom", "mother", "mam"), "mother"),
    **dict.fromkeys(("dad", "father"), "father"),
    **dict.fromkeys(("co-founder", "cofounder"), "co-founder"),
    **dict.fromkeys(("neighbour", "neighbor"), "neighbour"),
    **dict.fromkeys(("flatmate", "roommate", "housemate"), "flatmate"),
    **dict.fromkeys(("gp", "doctor"), "doctor"),
    **{
        w: w
        for w in """brother sister son daughter wife husband partner boyfriend girlfriend
        fiance fiancee cousin uncle aunt niece nephew grandma grandmother grandpa grandfather
        grandson granddaughter stepdad stepmum stepmother stepfather brother-in-law
        sister-in-law mother-in-law father-in-law son-in-law daughter-in-law boss manager
        landlord landlady lawyer solicitor therapist accountant ceo cfo cto colleague
        coworker ex""".split()
    },
}
_MY_PERSON = re.compile(
    r"\b(?:my|our)\s+("
    + "|".join(sorted(map(re.escape, _PEOPLE), key=len, reverse=True))
    + r")(?![\w-])(?!,?\s+§)",
    re.IGNORECASE,
)


def _fold_role(role: str) -> str:
    """A role as compared: casefolded, without "new", "next", "former"..."""
    return _ROLE_ADJECTIVES.sub("", " ".join(role.casefold().split())).strip()


_ROLE_ADJECTIVES = re.compile(
    r"^(?:(?:new|next|old|former|current|future|incoming|acting|interim)\s+)+"
)


@dataclass
class EntityGraph:
    """Entities, aliases and co-mention edges of a set of memory texts, each
    with the ids of the memories it was read from."""

    # entity key -> display name (the longest surface form seen)
    names: dict[str, str] = field(default_factory=dict)
    # entity key -> ids of the memories that mention it
    mentioned_in: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    # memory id -> entity keys it mentions
    entities_of: dict[int, set[str]] = field(default_factory=dict)
    # memory id -> for each lone part it could not resolve, the full names
    # that hold it ("Nina" in a store with Nina Shah and Nina Patel)
    unsure_of: dict[int, list[set[str]]] = field(default_factory=dict)
    # "our cfo" / "nina sah|wife" -> entity keys, with provenance
    aliases: dict[str, dict[str, set[int]]] = field(default_factory=lambda: defaultdict(dict))
    # (a, b) -> stated relation ("is owned by") -> ids of the memories saying it
    relations: dict[tuple[str, str], dict[str, set[int]]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    @classmethod
    def build(cls, texts: Iterable[tuple[int, str]], spoken: Iterable[str] = ()) -> EntityGraph:
        """The graph of ``(memory id, text)`` pairs. Full names are gathered
        first, so a lone "Nina" anywhere can resolve to "Nina Shah". Names
        said inside a sentence of ``spoken`` (a request: "forget Arjun's
        address") make the memories that only start with them ("Arjun
        painted a big 73 on his door") name them too."""
        items = list(texts)
        graph = cls()
        read = [(mid, text, _read(text)) for mid, text in items]
        # names seen inside a sentence somewhere: a capitalised first word
        # is a name only if it is one of them
        names = {s.key for _, _, spans in read for s in spans if not s.initial}
        names |= {s.key for text in spoken for s in _read(text) if not s.initial}
        # parts of names said inside a sentence or as a full name ("Ravi"
        # of "Ravi Shah, our CFO, ..." at a sentence's start)
        inside = {p for key in names for p in key.split()} | {
            p
            for _, _, spans in read
            for s in spans
            if len(s.parts) > 1
            for p in (_trimmed(s, names) or s).parts
        }
        read = [(mid, text, _known(spans, inside, names)) for mid, text, spans in read]
        full: dict[str, set[str]] = defaultdict(set)  # part -> full keys holding it
        for _, _, spans in read:
            for span in spans:
                if len(span.parts) > 1:
                    for part in span.parts:
                        full[part].add(span.key)
        for mid, text, spans in read:
            keys = graph._resolve_spans(spans, full)
            for span, key in zip(spans, keys, strict=True):
                if key is None:
                    continue
                if len(span.surface) > len(graph.names.get(key, "")):
                    graph.names[key] = span.surface
            found = (
                {k for k in keys if k is not None}
                | {f"id:{k}" for k in identifier_keys(text)}
                | _my_people(_slotted(text, spans))
            )
            for k in found:
                graph.names.setdefault(
                    k, f"my {k[3:]}" if k.startswith("my:") else k[3:] if k.startswith("id:") else k
                )
                graph.mentioned_in[k].add(mid)
            graph.entities_of[mid] = found
            # a lone part the context may settle: not one of many ("Nina"
            # among five Ninas), not the user's own ("my roommate Nina")
            graph.unsure_of[mid] = [
                full[span.parts[0]]
                for span, key in zip(spans, keys, strict=True)
                if key is None
                and len(full[span.parts[0]]) <= UNSURE_OPTIONS
                and not _OWN_PERSON.search(text, _last_words(text, span.start), span.start)
            ]
            graph._read_aliases(mid, text, spans, keys)
            graph._read_relations(mid, text, spans, keys)
        graph._name_my_people()
        graph._read_role_mentions(items)
        return graph

    @property
    def edges(self) -> dict[frozenset[str], set[int]]:
        """frozenset({a, b}) -> ids of the memories that mention both. Made
        when asked, from ``entities_of``: a long text names thousands of
        entities, and every pair of them is an edge."""
        out: dict[frozenset[str], set[int]] = defaultdict(set)
        for mid, found in self.entities_of.items():
            for a in found:
                for b in found:
                    if a < b:
                        out[frozenset((a, b))].add(mid)
        return out

    def _read_role_mentions(self, items: list[tuple[int, str]]) -> None:
        """Memories that name a person only by a role the dialogue gave them
        ("the head of design finalist" once "Sofia Chen ... joins as head of
        design"): the role's one owner, settled by context like a lone name.
        Only distinctive roles: two words or more, or an acronym (CFO)."""
        roles = {
            role: next(iter(owners))
            for role, owners in self.aliases.items()
            if "|" not in role
            and len(owners) == 1
            and (" " in role or len(role) <= 4)
            and role not in _PEOPLE
        }
        if not roles:
            return
        rx = re.compile(
            r"\b(" + "|".join(sorted(map(re.escape, roles), key=len, reverse=True)) + r")\b",
            re.IGNORECASE,
        )
        for mid, text in items:
            owners = {roles[m.group(1).casefold()] for m in rx.finditer(text)}
            owners -= self.entities_of.get(mid, set())
            if owners:
                self.unsure_of.setdefault(mid, []).extend({o} for o in owners)

    def _name_my_people(self) -> None:
        """ "my sister-in-law" is Hannah wherever the dialogue said "my
        sister-in-law Hannah" (one such person only): her mentions join."""
        for key in [k for k in self.mentioned_in if k.startswith("my:")]:
            named = {
                e
                for role, owners in self.aliases.items()
                if "|" not in role and _PEOPLE.get(role) == key[3:]
                for e in owners
            }
            if len(named) != 1:
                continue
            (person,) = named
            for mid in self.mentioned_in.pop(key):
                self.entities_of[mid] = (self.entities_of[mid] - {key}) | {person}
                self.mentioned_in[person].add(mid)
            self.names.pop(key, None)

    def _read_relations(
        self, mid: int, text: str, spans: list[_Span], keys: list[str | None]
    ) -> None:
        """Stated relations: the few words with a verb between two names of
        one sentence ("Arden Advisory is owned by Nina Shah": owned by)."""
        named = list(zip(spans, keys, strict=True))
        for (a, ka), (b, kb) in pairwise(named):
            between = text[a.end : b.start]
            words = between.split()
            if ka is None or kb is None or ka == kb or not 0 < len(words) <= _RELATION_WORDS:
                continue
            if re.search(r"[.!?;]", between) or not any(looks_like_verb(w) for w in words):
                continue
            label = " ".join(w.casefold().strip(",:()") for w in words if w.strip(",:()"))
            self.relations[(ka, kb)].setdefault(label, set()).add(mid)

    @staticmethod
    def _resolve_spans(spans: list[_Span], full: dict[str, set[str]]) -> list[str | None]:
        """Entity keys of a text's name spans: a lone part goes to the one
        full name holding it, or to the one that shares a part with the
        text's other names ("Ravi and his wife Nina": Nina Shah, not Nina
        Patel); an ambiguous part stays unresolved (None)."""
        out: list[str | None] = []
        for span in spans:
            owners = full.get(span.parts[0], set()) if len(span.parts) == 1 else set()
            if len(span.parts) > 1 or not owners:
                out.append(span.key)
            else:
                out.append(next(iter(owners)) if len(owners) == 1 else None)
        around = {p for key in out if key for p in key.split()}
        for i, span in enumerate(spans):
            if out[i] is None:
                near = [
                    o for o in full[span.parts[0]] if set(o.split()) & (around - {span.parts[0]})
                ]
                out[i] = near[0] if len(near) == 1 else None
        return out

    def _read_aliases(
        self, mid: int, text: str, spans: list[_Span], keys: list[str | None]
    ) -> None:
        slotted = _slotted(text, spans)
        for rx in (_ROLE_AFTER, _ROLE_BEFORE, _ROLE_AS):
            for m in rx.finditer(slotted):
                key = keys[int(m.group("n"))]
                if key is not None:
                    self.aliases[_fold_role(m.group("role"))].setdefault(key, set()).add(mid)
        for rx in (_KIN_AND, _KIN_OF, _KIN_APPOSITION):
            for m in rx.finditer(slotted):
                a, b = keys[int(m.group("a"))], keys[int(m.group("b"))]
                if a is not None and b is not None:
                    self.aliases[f"{a}|{m.group('kin')}"].setdefault(b, set()).add(mid)

    def spelled(self, text: str) -> set[str]:
        """The entities a text names outright: its names and identifiers (no
        role or kin reference)."""
        known = self._known_parts()
        found: set[str] = set()
        for span in _known(_read(text), set(known), set(self.mentioned_in)):
            if span.key in self.mentioned_in:
                found.add(span.key)
            elif len(span.parts) == 1 and span.parts[0] in known:
                found |= known[span.parts[0]]
        return found | {f"id:{k}" for k in identifier_keys(text) if f"id:{k}" in self.mentioned_in}

    def resolve(self, text: str) -> set[str]:
        """The entities a text (a request, a question) refers to: its names,
        identifiers and role references ("our CFO's wife") resolved through
        the aliases the memories established."""
        known = self._known_parts()
        spans = _known(_read(text), set(known), set(self.mentioned_in))
        found = self.spelled(text)
        slotted = _slotted(text, spans)
        for m in _REFERENCE.finditer(slotted):
            head = m.group("head")
            if head.startswith("§"):
                span = spans[int(head.strip("§"))]
                heads = (
                    {span.key} if span.key in self.mentioned_in else known.get(span.parts[0], set())
                )
            else:
                heads = self._role(head) or (_my_people(head) & set(self.mentioned_in))
            found |= heads  # "our CFO's wife" refers to the CFO too
            for kin in _CHAIN_LINK.findall(m.group("chain")):
                heads = {b for a in heads for b in self.aliases.get(f"{a}|{kin}", {})}
                found |= heads
        return found

    def _role(self, phrase: str) -> set[str]:
        """Entities a role phrase names ("our CFO", "my accountant")."""
        role = _fold_role(re.sub(r"^" + _OWNERS + r"\s+", "", phrase, flags=re.IGNORECASE))
        words = role.split()
        for n in range(len(words), 0, -1):  # "head of design is" -> "head of design"
            if " ".join(words[:n]) in self.aliases:
                return set(self.aliases[" ".join(words[:n])])
        return set()

    def _known_parts(self) -> dict[str, set[str]]:
        parts: dict[str, set[str]] = defaultdict(set)
        for key in self.mentioned_in:
            if not key.startswith("id:"):
                for p in key.split():
                    parts[p].add(key)
        return parts

    def aliases_of(self, key: str) -> list[str]:
        """The role references that name ``key``: "our cfo", "Ravi Shah's wife"."""
        out = []
        for alias, owners in self.aliases.items():
            if key in owners:
                head, _, kin = alias.partition("|")
                out.append(f"{self.names.get(head, head)}'s {kin}" if kin else alias)
        return sorted(out)

    def kin_by_content(self, said: Mapping[int, set[str]]) -> dict[str, str]:
        """The named entity each of the user's unnamed people most likely is,
        judged by what their memories share: "my cousin's new house number
        is 9" and "Hannah painted a big 9 on her door" (``said`` holds each
        memory's rare words and numbers; the entities besides count too).
        Only a clear winner binds: shared by at least ``KIN_MIN`` of its
        memories, more than any other, and never named beside the kin (then
        they are two people)."""
        out = {}
        for kin in [k for k in self.mentioned_in if k.startswith("my:")]:
            mine = self.mentioned_in[kin]
            beside = {e for mid in mine for e in self.entities_of[mid]}
            content = {w for mid in mine for w in said.get(mid, ())} | (beside - {kin})
            votes: Counter[str] = Counter()
            for mid, words in said.items():
                if mid in mine:
                    continue
                shared = (words | self.entities_of[mid]) & content
                for e in self.entities_of[mid] - beside:
                    if shared - {e} and not e.startswith(("my:", "id:")):
                        votes[e] += 1
            ranked = votes.most_common(2)
            if (
                ranked
                and ranked[0][1] >= KIN_MIN
                and (len(ranked) == 1 or ranked[1][1] < ranked[0][1])
            ):
                out[kin] = ranked[0][0]
        return out

    def neighbours(self, key: str) -> set[str]:
        """Entities mentioned together with ``key`` in some memory."""
        return {k for mid in self.mentioned_in.get(key, ()) for k in self.entities_of[mid]} - {key}

    def masked(self, text: str) -> str:
        """``text`` with the names the graph knows (and "my mum", "our CFO")
        replaced by "someone": what
        it says about them, for comparing predicates rather than names
        ("Hannah got a puppy" is not "Hannah owes me 3,100 dollars")."""
        known = self._known_parts()
        spans = [s for s in _read(text) if all(p in known for p in s.parts)]
        out, last = [], 0
        for span in spans:
            out += [text[last : span.start], MASK]
            last = span.end
        # and the user's own people: "my mum is learning the cello"
        return _MY_PERSON.sub(MASK, "".join([*out, text[last:]]))

    def named_in(self, mid: int, context: set[str]) -> set[str]:
        """Entities memory ``mid`` names, reading a lone part it left
        unresolved as the one entity of ``context`` that holds it: in a
        conversation about Nina Shah, "Nina" alone is most likely her."""
        out = set(self.entities_of[mid])
        for options in self.unsure_of.get(mid, ()):
            if len(options & context) == 1:
                out |= options & context
        return out

    def memories(self, keys: Iterable[str]) -> set[int]:
        """Ids of the memories mentioning any of ``keys``."""
        return {mid for k in keys for mid in self.mentioned_in.get(k, ())}


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    surface: str
    parts: tuple[str, ...]
    # a sentence's first word: capitalised anyway, a name only if known
    initial: bool = False
    # the span without its first word, for a sentence-initial run
    tail: _Span | None = None

    @property
    def key(self) -> str:
        return " ".join(self.parts)


def _read(text: str) -> list[_Span]:
    """Name spans of a text, longest first where they overlap. A word after
    "our", "my", "his" ... is a role ("our CFO", "my GP"), not a name."""
    spans: list[_Span] = []
    for m in sorted(mentions(text), key=lambda m: (m.start, -(m.end - m.start))):
        if spans and m.start < spans[-1].end:
            continue  # "Shah" inside "Ravi Shah"
        parts = tuple(p for p in m.parts if len(p) > 1)
        before = stripped_end(text, m.start, " \"'(“")  # where the words before it end
        if not parts or (
            len(parts) == 1 and _POSSESSOR.search(text, _last_words(text, before), before)
        ):
            continue
        # a sentence's first word: at the start, or after . ! ? (not after
        # "Confidential:" or a comma, where a capital is a name's)
        initial = before == 0 or text[before - 1] in ".!?\n"
        surface = re.sub(r"['’]s$", "", text[m.start : m.end])
        tail = None
        if initial and len(parts) > 1 and (gap := re.search(r"[\s-]+", surface)):
            # "Paid Marco Rossi": the first word may be the sentence's, not the name's
            tail = _Span(m.start + gap.end(), m.end, surface[gap.end() :], parts[1:])
        spans.append(_Span(m.start, m.end, surface, parts, initial, tail))
    return spans


def _last_words(text: str, end: int, n: int = 3) -> int:
    """Where the last ``n`` whitespace-separated words before ``end`` start:
    a pattern anchored at ``end`` that spans fewer words (``_POSSESSOR``,
    ``_OWN_PERSON``) is searched from there, not over the whole text before
    it (which made a long text cost its square)."""
    i = end
    for _ in range(n):
        while i > 0 and text[i - 1].isspace():
            i -= 1
        while i > 0 and not text[i - 1].isspace():
            i -= 1
    return i


def names_a_person(phrase: str) -> bool:
    """True when a possessive phrase names a person ("my dad", "my cousin
    Bruno"), not one of their attributes ("my email", "my dose")."""
    return any(w.casefold() in _PEOPLE for w in re.findall(r"[\w-]+", phrase)) or any(
        m.start > 0 for m in mentions(phrase)
    )


def _my_people(slotted: str) -> set[str]:
    """Keys of the user's own people a text names without a name ("my dad"
    -> ``my:father``); "my dad Paul" is Paul, not one of these."""
    return {f"my:{_PEOPLE[m.group(1).casefold()]}" for m in _MY_PERSON.finditer(slotted)}


def _known(spans: list[_Span], inside: set[str], names: set[str]) -> list[_Span]:
    """A text's spans without the capitalised first words of its sentences
    that are no known name ("Booked a room", "Paid Marco Rossi"): ``inside``
    holds the name parts, ``names`` the names seen inside a sentence."""
    out = []
    for span in spans:
        trimmed = _trimmed(span, names)
        if trimmed is not None:
            span = trimmed
        elif span.initial and span.parts[0] not in inside and span.tail is None:
            continue  # "Booked a room": a capitalised first word, no name
        out.append(span)
    return out


def _trimmed(span: _Span, names: set[str]) -> _Span | None:
    """A sentence-initial run without its first word, when that word is a
    verb ("Paid Marco Rossi") or the rest is a name said elsewhere ("Found
    Mateo Mendes' blog"); else None."""
    if not (span.initial and span.tail is not None):
        return None
    if looks_like_verb(span.surface.split()[0].casefold()) or span.tail.key in names:
        return span.tail
    return None


def _slotted(text: str, spans: list[_Span]) -> str:
    """The text with each name span replaced by ``§i§`` (its index)."""
    out, last = [], 0
    for i, span in enumerate(spans):
        # "Ravi's wife": the possessive stays outside the slot
        possessive = "'s" if re.search(r"['’]s$", text[span.start : span.end]) else ""
        out += [text[last : span.start], f"§{i}§{possessive}"]
        last = span.end
    out.append(text[last:])
    return "".join(out)

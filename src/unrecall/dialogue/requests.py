"""Detect forget and correction requests in user turns, deterministically.

A user may ask an agent to forget inside the conversation ("please forget my
old address", "olvida lo que te dije ayer", "actually I moved to Lisbon").
``detect`` recognises such a turn with regexes and small lexicons only -- no
LLM, no model, no network -- and returns a :class:`ForgetRequest` naming the
kind of request (the six BEMULA request types), its language, the span that
names what to forget, the new value of a replacement, and the topic
categories of the target. Statements that merely contain the words ("I forgot
my keys", "delete the branch in git", "j'ai oublié mon parapluie") are not
requests: a request verb must open a clause addressed to the assistant and
take a personal object, or an explicit memory phrase must be present.

Each language is one :class:`_Language` table of patterns; the engine that
applies them and classifies the result is shared.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

from unrecall.dialogue import idioms
from unrecall.dialogue.windows import window
from unrecall.recall.categories import categories as english_categories
from unrecall.recall.entities import names_a_person
from unrecall.recall.lexical import normalize, words

KINDS = ("factual", "compositional", "category", "inferential", "temporal", "replacement")
LANGUAGES = ("en", "es", "fr", "de")


@dataclass(frozen=True)
class ForgetRequest:
    """A forget or correction request read from one user turn.

    ``kind`` is one of :data:`KINDS`; ``language`` one of :data:`LANGUAGES`;
    ``target`` the span of the turn that names what to forget (for a
    replacement, the old value or slot it replaces); ``new_value`` the value
    that replaces it, else None; ``categories`` the topic categories of the
    target (health, finances, family, home, contact, work, ...).
    """

    kind: str

    language: str
    target: str
    new_value: str | None = None
    categories: frozenset[str] = field(default_factory=frozenset)
    completion: bool = False
    slot: bool = False


# Rule hints: how a matched pattern seeds the classification.
#   forget  - a deletion verb with a personal object; kind from the target
#   infer   - "don't infer / stop guessing ..."; always inferential
#   lapse   - "I'm not into X anymore"; factual (a fact lapsed, no new value)
#   replace - an old value replaced by a new one (group ``new``)
#   done    - "I finished X", "I cancelled X"; factual, a completion
#   fronted - the object said first, "forget it" after: kind from the object,
#             a request only if the object is the user's or said to the assistant
_FORGET, _INFER, _LAPSE, _REPLACE, _DONE = "forget", "infer", "lapse", "replace", "done"
_FRONTED = "fronted"


@dataclass(frozen=True)
class _Rule:
    hint: str
    pattern: re.Pattern[str]
    # Set when every match of ``pattern`` ends with a match of ``tail`` and
    # never spans . ! ? ; (see ``_search``).
    tail: re.Pattern[str] | None = None


_STOPS = re.compile(r"[.!?;]")


def _search(rule: _Rule, turn: str) -> re.Match[str] | None:
    """``rule.pattern.search(turn)``. A rule with a ``tail`` is searched
    only in the stretches between . ! ? ; that hold its tail, each up to its
    last one: its pattern scans lazily to the end of the stretch from every
    start it tries ("my ..."), which costs a long text without the tail its
    square."""
    if rule.tail is None:
        return rule.pattern.search(turn)
    stops = [m.start() for m in _STOPS.finditer(turn)]
    ends: dict[int, int] = {}  # stretch start -> end of its last tail
    for m in rule.tail.finditer(turn):
        i = bisect_left(stops, m.start())
        ends[stops[i - 1] + 1 if i else 0] = m.end()
    for start, end in ends.items():
        found = rule.pattern.search(turn, start, end)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class _Language:
    """One language's patterns and classification lexicons."""

    code: str
    # Function words that vote for this language when several tables match.
    stopwords: frozenset[str]
    # Ordered: the first rule that matches wins, so replacements come first
    # (they often contain a lapse: "not vegetarian anymore, I eat fish now").
    rules: tuple[_Rule, ...]
    # A correction marker ("actually", "en realidad"); replacement change
    # clauses only count with one, since "I moved to Lisbon in 2019" is news.
    marker: re.Pattern[str]
    changes: tuple[re.Pattern[str], ...]
    temporal: re.Pattern[str]
    speech: re.Pattern[str]
    quantifier: re.Pattern[str]
    inference: re.Pattern[str]
    conjunction: re.Pattern[str]
    # Noun phrases that name a whole topic ("my medical history").
    topic: re.Pattern[str]
    # Words trimmed off a target's edges ("about", "please", "for good").
    leading: re.Pattern[str]
    trailing: re.Pattern[str]
    # Verbs of liking/being trimmed off a lapse target ("into jazz" -> "jazz").
    lapse_strip: re.Pattern[str]
    # A target that is a thing outside memory: "delete my Twitter account",
    # "remove my name from the guest list", "drop my kids off at school".
    external: re.Pattern[str]
    # Category words of this language (accent-free prefixes) -> category.
    lexicon: dict[str, str]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.VERBOSE)


# A target runs lazily up to the end of its sentence, a clause that is not a
# continuation of a list, or a trailing courtesy. Each language supplies the
# words that close it.
def _target_end(closers: str, continuers: str) -> str:
    return (
        r"(?=\s*(?:[.!?¿¡](?:\s|$)|;|$)"
        rf"|\s*,(?!\s*(?:{continuers})\b)"
        rf"|\s+(?:{closers})\b)"
    )


def _value_end(closers: str) -> str:
    return rf"(?=\s*(?:[.!?](?:\s|$)|[;,]|$)|\s+(?:{closers})\b)"


# --------------------------------------------------------------------------
# English
# --------------------------------------------------------------------------

# Where a request clause may start: the turn, a sentence, a comma or a
# coordinating word ("ok, and please forget ...").
_EN_START = r"(?:^|[.!?;:,—–]\s*|\s-\s|\b(?:and|but|so|then|also)\s+)"
# Fillers and courtesy forms between the clause start and the verb. "I" alone
# is absent on purpose: "I forgot my keys" / "I always forget" are statements.
_EN_LEAD = r"""(?:(?:hey|hi|ok|okay|oh|so|also|and|well|right|listen|look|actually|btw|
    by\s+the\s+way|one\s+more\s+thing|sorry|um|please|pls|kindly|just|now|honestly|
    from\s+now\s+on|on\s+second\s+thought|in\s+fact)[\s,:]+
  |(?:can|could|would|will)\s+you\s+(?:(?:please|kindly|just|maybe|perhaps|possibly|quietly|
     also|actually)\s+)*
  |would\s+you\s+mind\s+(?:please\s+)?|do\s+you\s+mind\s+
  |i\s*(?:want|need|would\s+like|'d\s+like|ask|asked|am\s+asking)\s+you\s+to\s+(?:please\s+)?
  |i\s*(?:'d|would)\s+(?:rather|prefer)\s+(?:that\s+|it\s+if\s+)?you\s+
  |i\s*(?:'d|would)\s+appreciate\s+it\s+if\s+you\s+(?:could|would)\s+
  |you\s+(?:should|can|may|must|could)\s+(?:now\s+|just\s+|please\s+)?
  |go\s+ahead\s+and\s+|make\s+sure\s+(?:you|to)\s+|it's\s+time\s+to\s+|time\s+to\s+
  |is\s+it\s+possible\s+(?:for\s+you\s+)?to\s+|it\s+would\s+be\s+great\s+if\s+you\s+(?:could\s+)?
  |i\s+need\s+you\s+to\s+)*"""
# What a forget verb must take: something of the user's, or a reference to
# what the user said. "delete the branch", "forget it" do not qualify.
_EN_OBJ = r"""(?=(?:about\s+|all\s+about\s+)?(?:
    (?:my|our|mine|all|everything|anything|every|whatever|what|where|when|who|how|which|
       any|both|your\s+(?:notes|memory|memories|record|records|guess|guesses|assumption|
       assumptions|conclusion|conclusions|idea|impression)|yesterday's|today's|
       last\s+(?:night|week(?:end)?|session|conversation|chat|time))\b
  | about\s+me\b
  | (?:her|his|their)\s+(?:[\w'-]+\s+){0,2}?(?:number|address|email|phone|mobile|birthday|
       name|details|info|medicare|ssn|password|pin|code|meds|medication|diagnosis|health)\b
  | (?:that|this)\s+(?:i|i'm|i've|my|we|we've|you|part|bit|info|information|detail|details|
       fact|conversation|chat|message|memory|stuff|thing|entry|note|last|whole|session)\b
  | (?:those|these)\s+\w+
  | the\s+(?:[\w'-]+\s+){0,4}?(?:i|we)\s+(?:told|said|mentioned|shared|gave|wrote|talked|
       discussed|brought|sent|typed|emailed|texted|pasted|uploaded|posted|listed|showed)\b
  | the\s+(?:[\w'-]+\s+){0,3}?(?:about|of)\s+(?:me|my)\b
  | the\s+fact\b
  | the\s+whole\b
  | the\s+(?:[\w'-]+\s+){0,3}?(?:appointment|fitting|meeting|booking|reservation|session|
       visit|interview|check-?up|deadline|trip|consultation|procedure|surgery)s?\b
  | the\s+(?:[\w'-]+\s+){1,3}?(?:stuff|things?|bits|info|details)\b
  | (?:the\s+)?(?:stuff|things|bits?|parts?|details?|info|information)\s+(?:about|on|regarding|i)\b
)) """
_EN_TEND = _target_end(
    closers=r"""please|from\s+(?:your\s+)?(?:memory|memories|records?|notes|files?)|for\s+good|
        permanently|completely|entirely|right\s+away|immediately|thanks|thank\s+you|because|
        since|as\s+i|i\s+(?:don't|do\s+not|no\s+longer)|it's\s+(?:private|personal)|ok""",
    continuers=r"and|my|your|the|his|her|our|plus|as\s+well|or|all|everything",
)
_EN_T = rf"(?P<t>.+?){_EN_TEND}"
_EN_VEND = _value_end(
    r"""now|instead|these\s+days|nowadays|and|but|so|since|because|please|last\s+\w+|
    this\s+(?:week|month|year|morning)|yesterday|today|in\s+\d{4}|ago"""
)
_EN_V = rf"(?P<new>.+?){_EN_VEND}"
_EN_FORGET_VERB = r"""(?:forget(?:ting)?|delet(?:e|ing)|eras(?:e|ing)|remov(?:e|ing)|
    wip(?:e|ing)(?:\s+out)?|purg(?:e|ing)|drop(?:ping)?|discard(?:ing)?|clear(?:ing)?(?:\s+out)?|
    scrap|scratch|unlearn|disregard|ignore|throw\s+(?:away|out)|get\s+rid\s+of|let\s+go\s+of|
    strike|expunge|lose|dump|bin)"""
_EN_KEEP = r"""(?:keep(?:ing)?\s+(?:notes?|tabs|a\s+record)\s+(?:on|about|of)|
    keep(?:ing)?|remember(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|retain(?:ing)?|
    hold(?:ing)?\s+on(?:\s+to|to)|hang(?:ing)?\s+on(?:\s+to|to)|track(?:ing)?|record(?:ing)?|
    log(?:ging)?|memori[sz](?:e|ing)|bring(?:ing)?\s+up|mention(?:ing)?|us(?:e|ing))"""
# "... isn't stored", "... shouldn't be kept": how a turn says a value must not be kept.
_EN_NOT_STORED = r"""\s+(?:isn't|is\s+not|aren't|are\s+not|shouldn't|should\s+not|mustn't|
    must\s+not|doesn't|does\s+not)\s+(?:be\s+|get\s+)?(?:stored|kept|saved|remembered|recorded|
    logged|held|written\s+down)\b"""
_EN_NOT = r"""(?:(?:i'd|i\s+would)\s+(?:prefer|rather)\s+(?:that\s+|if\s+|it\s+if\s+)?you\s+
    (?:not|didn't|did\s+not)(?:\s+to)?|
    don't|do\s+not|didn't|did\s+not|never|not|no\s+longer|stop|quit|cease|
    you\s+(?:don't|do\s+not)\s+need\s+to|(?:there's\s+)?no\s+need\s+to)"""
_EN_INFER = r"""(?:(?:try(?:ing)?\s+to\s+)?(?:infer|assume|guess|deduce|conclude|predict)|
    infer(?:ring)?|assum(?:e|ing)|guess(?:ing)?|speculat(?:e|ing)|deduc(?:e|ing)|
    conclud(?:e|ing)|presum(?:e|ing)|extrapolat(?:e|ing)|profil(?:e|ing)|
    (?:mak(?:e|ing)|draw(?:ing)?|jump(?:ing)?\s+to)\s+(?:any\s+)?
        (?:assumptions|conclusions|inferences|guesses)|
    (?:try(?:ing)?\s+to\s+)?(?:figur(?:e|ing)|work(?:ing)?)\s+out|read(?:ing)?\s+(?:anything\s+)?into)"""
_EN_SLOT = r"""(?:(?:phone\s+|mobile\s+|cell\s+)?number|address|email(?:\s+address)?|password|
    pin|job(?:\s+title)?|title|employer|company|boss|manager|partner|doctor|dentist|gp|
    surname|last\s+name|name|username|handle|salary|role|school|city|diet|team|car|
    favou?rite\s+\w+|plan|allergy|medication|pronouns)"""

_EN = _Language(
    code="en",
    stopwords=frozenset(
        "the my i you and to of is it that what about please me don't your forget "
        "delete actually anymore told said everything".split()
    ),
    rules=(
        # "update my address to 12 Baker St", "change my number to 555-0199"
        _Rule(
            _REPLACE,
            _rx(
                rf"{_EN_START}{_EN_LEAD}(?:update|change|correct|set)\s+(?P<t>(?:my|our)\s+.+?)"
                rf"\s+(?:to|into)\s+{_EN_V}"
            ),
        ),
        # "I switched from Android to iPhone"
        _Rule(
            _REPLACE,
            # "moved from X to Y" alone is news ("... in 2017"); it counts with a
            # correction marker, among the change clauses below
            _rx(rf"""\b(?:i|we)(?:\s+have|'ve)?\s+(?:switched|upgraded)\s+
                (?:\w+\s+)?from\s+(?P<t>.+?)\s+to\s+{_EN_V}"""),
        ),
        # "remove my address from your memory" (explicit memory phrase)
        _Rule(
            _FORGET,
            _rx(r"""\b(?:remove|delete|erase|wipe|purge|drop|clear|take|strip|scrub|get|cut)\s+
                (?P<t>[^.!?;]+?)\s+(?:out\s+of|from|off)\s+(?:your\s+|the\s+)?
                (?:memory|memories|records?|notes|files?|database|storage|knowledge\s+base)\b"""),
        ),
        # "I'd like my health data forgotten"
        _Rule(
            _FORGET,
            _rx(r"""\bi\s*(?:'d|would)?\s*(?:like|want|need)\s+(?P<t>(?:my|all|everything|any|
                that|this|what)\b.+?)\s+(?:forgotten|deleted|erased|wiped|purged|removed\s+from
                \s+(?:your\s+)?memory)\b"""),
        ),
        # "don't infer anything about my religion", "stop guessing my salary"
        _Rule(
            _INFER,
            _rx(rf"""{_EN_START}{_EN_LEAD}(?:{_EN_NOT}|i\s+(?:really\s+|just\s+)?(?:don't|do\s+not)
                \s+want\s+you(?:\s+to)?)
                \s+{_EN_INFER}\s+(?:anything\s+|things\s+|stuff\s+)?
                (?:about\s+|regarding\s+|on\s+|from\s+|based\s+on\s+)?{_EN_OBJ}{_EN_T}"""),
        ),
        # "update the budget from $800,000 to $850,000", "revert it back to X from Y"
        _Rule(
            _REPLACE,
            _rx(r"""\b(?:update|change|revert|move|set|reschedule|correct|bump|raise|lower|
                increase|decrease|reduce|switch)\s+(?:the|my|our|it)\b[^.!?;]*?\s+(?:again\s+)?
                from\s+(?P<t>[^;!?]+?)\s+(?:back\s+)?to\s+(?P<new>[^;!?]+?)
                (?=\s*(?:[.!?;](?:\s|$)|$)|[.,]\s|\s+(?:and|but|because|since|now|instead)\b)"""),
        ),
        _Rule(
            _REPLACE,
            _rx(r"""\b(?:update|change|revert|move|set|reschedule|correct|switch)\s+(?:the|my|our|it)
                \b[^.!?;]*?\s+(?:back\s+)?to\s+(?P<new>[^;!?]+?)\s+from\s+(?P<t>[^;!?]+?)
                (?=\s*(?:[.!?;](?:\s|$)|$)|[.,]\s|\s+(?:and|but|because|since)\b)"""),
        ),
        # "please remove 'X' from the stakeholders": a quoted item is one the
        # assistant holds, whatever list it sits in.
        _Rule(
            _FORGET,
            _rx(rf"""{_EN_START}{_EN_LEAD}(?:i\s*(?:'d|would)\s+(?:like|love)\s+to\s+|
                i\s+(?:want|need)\s+to\s+|let's\s+|we\s+(?:can|should)\s+)?{_EN_FORGET_VERB}
                \s+(?:the\s+(?:item|task|entry|point|line|event)\s+)?["“‘'](?P<t>[^"”’']{{3,200}})
                ["”’']"""),
        ),
        # "I no longer need to track X", "you don't need to keep track of X"
        _Rule(
            _FORGET,
            _rx(rf"""\b(?:no\s+longer|don't|do\s+not|won't|will\s+not)\s+need\s+(?:you\s+)?to\s+
                (?:track|keep\s+track\s+of|keep|remember|store|hold\s+on\s+to|note)\s+{_EN_T}"""),
        ),
        # "I (have) finished preparing the abstract", "I cancelled the dentist
        # appointment": a task or plan done; only task-like memories go.
        _Rule(
            _DONE,
            _rx(rf"""\bi(?:'ve|\s+have)?\s+(?:actually\s+|just\s+|already\s+|finally\s+|now\s+)*
                (?:finished|completed|wrapped\s+up|taken\s+care\s+of|crossed\s+off|ticked\s+off|
                done\s+with|cancell?ed|called\s+off|got\s+around\s+to)\s+{_EN_T}"""),
        ),
        _Rule(
            _DONE,
            _rx(rf"""\bi(?:(?:'m|\s+am)\s+(?:all\s+|finally\s+)?done\s+with
                |\s+(?:no\s+longer|don't|do\s+not)\s+need\s+to
                |\s+was\s+(?:finally\s+)?able\s+to)\s+{_EN_T}"""),
        ),
        # "I used to really like X, but ...": a preference that lapsed ("I used
        # to dislike X, but ..." is a new like, nothing to forget).
        _Rule(
            _LAPSE,
            _rx(r"""\bi\s+(?:actually\s+|really\s+|always\s+|honestly\s+)?used\s+to\s+(?:really\s+|actually\s+|absolutely\s+|quite\s+)?
                (?:like|love|enjoy|prefer|adore|be\s+(?:really\s+|very\s+)?into|
                be\s+all\s+about|love\s+the\s+idea\s+of|
                be\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of|think\s+i\s+(?:loved|liked))\s+
                (?P<t>[^,.;!?]+?)(?=\s*(?:[,.;!?]|\s+but\b|\s+and\b|$))
                (?=.*\b(?:but|any\s*more|no\s+longer|now|lately|these\s+days|nowadays)\b)
                # a like turned into a stated dislike keeps the item, as a dislike
                (?!.*\b(?:dislike|hate|can't\s+stand|avoid)\b)"""),
        ),
        # "don't go around thinking I'm leaving", "don't assume I'm broke"
        _Rule(
            _INFER,
            _rx(rf"""{_EN_START}{_EN_LEAD}{_EN_NOT}\s+(?:go\s+around\s+|keep\s+)?(?:thinking|think|
                assum\w*|guess\w*|conclud\w*|presum\w*|label\w*|believ\w*)\s+(?:that\s+)?
                (?P<t>(?:i'm|i\s+am|i\s+was|i've|me|i\s+(?!will\b|would\b|shall\b|should\b|could\b|
                can\b|might\b|may\b)[a-z]+)\b[^.!?;]*)"""),
        ),
        # "drop that conclusion", "don't keep that guess about X",
        # "forget that you thought that", "delete whatever you concluded about X"
        _Rule(
            _INFER,
            _rx(rf"""{_EN_START}{_EN_LEAD}(?:{_EN_NOT}\s+{_EN_KEEP}|{_EN_FORGET_VERB})\s+
                (?:that|the|this|your|those|these|any|whatever\s+you\s+\w+)\s+(?:\w+\s+)?
                (?P<t>(?:conclusion|assumption|guess|impression|idea|theory|label|inference|
                speculation)s?\b(?:\s+(?:about|that|regarding)\s+[^.!?;]+)?
                |you\s+(?:thought|assumed|guessed|concluded|figured)\b[^.!?;]*)"""),
        ),
        # "I shouldn't have put my PIN in here. please forget it": the object is
        # a pronoun whose antecedent comes earlier (see ``_antecedent``).
        _Rule(
            _FORGET,
            _rx(rf"""{_EN_START}{_EN_LEAD}{_EN_FORGET_VERB}\s+(?:about\s+)?(?P<p>it|that|them|
                all\s+(?:of\s+)?(?:that|it|them|this))\b(?!\s*(?:'s|is|was|i\b))"""),
        ),
        # "make sure my SSN isn't stored anywhere", "my address shouldn't be kept"
        _Rule(
            _FORGET,
            _rx(
                rf"""\b(?:make\s+sure\s+|ensure\s+)?(?P<t>(?:my|our)\s+[^.!?;]+?){_EN_NOT_STORED}"""
            ),
            tail=_rx(_EN_NOT_STORED),
        ),
        # The object said first, the request after it, about it: "My blood type?
        # No need to keep that", "the wifi password I typed out for you, forget
        # it", "the allergy thing and the medication I mentioned? Both can go".
        _Rule(
            _FRONTED,
            _rx(rf"""(?:^|[.!?;]\s+)(?:(?:oh|and|so|also|ok|okay|well|um|right)[\s,]+)*
                (?P<t>[^.!?;]{{3,140}}?)\s*(?:\?|,|:|—|–|\s-)\s*{_EN_LEAD}
                (?:{_EN_FORGET_VERB}\s+(?:it|that|them|those|this|any\s+of\s+(?:it|that|them))
                |let\s+(?:it|that|them)\s+go
                |{_EN_NOT}\s+{_EN_KEEP}\s+(?:it|that|them|those|any\s+of\s+(?:it|that|them))
                |(?:there's\s+)?no\s+need\s+to\s+{_EN_KEEP}\s+(?:it|that|them|any\s+of\s+(?:it|that))
                |(?:both|they|it|that|all\s+of\s+(?:it|that|them))\s+can\s+go
                |none\s+of\s+(?:it|that|them)\s+needs?\s+to\s+(?:stay|be\s+kept|be\s+stored)
                |(?:just\s+)?(?:don't|do\s+not)\s+(?:treat|keep|remember|store)\s+(?:it|that|them|any
                \s+of\s+(?:it|that|them))
                |please\s+{_EN_FORGET_VERB}\s+(?:it|that|them))\b"""),
        ),
        # "forget my PIN", "please delete everything about my health", "never mind ..."
        _Rule(
            _FORGET,
            _rx(rf"{_EN_START}{_EN_LEAD}{_EN_FORGET_VERB}\s+(?:about\s+)?{_EN_OBJ}{_EN_T}"),
        ),
        # "never mind the Tuesday appointment": here any noun phrase is the object
        _Rule(
            _FORGET,
            _rx(
                rf"""{_EN_START}{_EN_LEAD}never\s*mind\s+(?:about\s+)?(?P<t>(?:the|my|that|
                what\s+(?:i|we)\s+(?:said|told|mentioned|wrote|shared))\b[^,]+?)
                (?:(?=\s*[,.!?;]|$)|{_EN_TEND})"""
            ),
        ),
        # "let's pretend I never told you about my debt"
        _Rule(
            _FORGET,
            _rx(
                rf"""\b(?:pretend|act\s+as\s+if|act\s+like|imagine)\s+(?:that\s+)?i\s+never\s+
                (?:told|said|mentioned|shared|brought\s+up)(?:\s+(?:you|it|that))?\s+
                (?:anything\s+)?(?:about\s+)?{_EN_T}"""
            ),
        ),
        # Object first: "my old number is no longer valid, forget it",
        # "that bit about my mother's illness -- please erase it".
        _Rule(
            _FORGET,
            _rx(
                rf"""(?:^|[.!?;]\s+)(?P<t>(?:my|our|whatever|everything|anything|what|that\s+bit|
                that\s+part|the\s+(?:bit|part|stuff|thing)s?|all\s+that)\b[^.!?;]*?)
                (?:\s+(?:is|are|was|were|isn't|aren't|has|have)\b[^.!?;]*?)?
                \s*(?:,|—|–|-|:)\s*{_EN_LEAD}{_EN_FORGET_VERB}\s+(?:it|that|them|this)\b"""
            ),
        ),
        # "I take back what I said about ..."
        _Rule(
            _FORGET,
            _rx(
                rf"\bi\s+(?:take\s+back|retract|withdraw|rescind|want\s+to\s+take\s+back)\s+{_EN_OBJ}{_EN_T}"
            ),
        ),
        # "don't keep my card number", "stop remembering ...", "I'd rather you didn't keep ..."
        _Rule(
            _FORGET,
            _rx(rf"""{_EN_START}{_EN_LEAD}(?:{_EN_NOT}\s+{_EN_KEEP}
                |i\s+(?:really\s+|just\s+)?(?:don't|do\s+not)\s+want\s+you\s+to\s+(?:{_EN_KEEP}|know)
                |i\s+(?:really\s+|just\s+)?(?:don't|do\s+not)\s+want\s+you\s+(?:{_EN_KEEP}|knowing))
                \s+(?:about\s+|of\s+)?{_EN_OBJ}{_EN_T}"""),
        ),
        # "I'm not into jazz anymore", "I'm no longer with Tom"
        _Rule(
            _LAPSE,
            # "not" needs "anymore" in the turn: "I'm not a fan of Bill Evans" is a
            # dislike to remember, "I'm not a fan of X anymore" a lapse
            _rx(r"""\bi(?:'m|\s+am)\s+(?:just\s+|really\s+)?(?:not(?=.*\bany\s*(?:more|longer)\b)|
                no\s+longer)\s+(?:so\s+|that\s+|really\s+|too\s+)?(?P<t>(?:into|a\s+fan\s+of|
                keen\s+on|fond\s+of|planning|
                interested\s+in|with|dating|seeing|married\s+to|engaged\s+to|working\s+(?:at|for)|
                employed\s+(?:at|by)|at|on|taking|living\s+in|vegetarian|vegan|pescatarian|religious|
                single|married|engaged|sober|(?:a|an)\s+(?:vegetarian|vegan|smoker|member|fan|
                student|customer|subscriber|runner|drinker|christian|catholic|muslim|jew))\b
                [^.!?;,]*?)(?:\s+(?:any\s*more|any\s+longer)|(?=\s*(?:[.!?;,]|$)))"""),
        ),
        _Rule(
            _LAPSE,
            # "i don't" needs an "any more" later on its line: looked for
            # after the verb (the same line when no newline is between), so
            # only "i don't like ..." scans the line, not every "i don't know"
            _rx(r"""\bi\s+(?:actually\s+|really\s+|just\s+|honestly\s+)?(?:(?P<dont>don't|do\s+not)
                (?![^\S\n]*\n)|no\s+longer)\s+
                (?P<t>(?:like|love|eat|drink|play|watch|
                use|smoke|drive|live|work|date|see|follow|listen\s+to|go\s+to|support|take|own|
                practi[cs]e|do)\b(?(dont)(?=.*\bany\s*(?:more|longer)\b))
                [^.!?;,]*?)(?:\s+(?:any\s*more|any\s+longer)|(?<=\S)(?=\s*(?:[.!?;,]|$)))"""),
        ),
    ),
    marker=_rx(r"""\b(?:actually|in\s+fact|correction|update|forget|delete|drop|replace|old|
        is\s+now|,\s*not(?!\s+(?:to|for|in|at|on|with|from|by|only)\b)|heads\s+up|fyi|just\s+so\s+you\s+know|

to\s+correct\s+myself|scratch\s+that|
        i\s+was\s+wrong|as\s+of\s+(?:now|today)|any\s*more|no\s+longer|not\s+any\s+longer|instead|
        (?:that's|that\s+is|this\s+is|it's)\s+(?:now\s+)?(?:outdated|out\s+of\s+date|old\s+news|
        wrong|not\s+right|incorrect|not\s+true|no\s+longer\s+\w+|changed|stale)|
        (?<!\bif\s)(?<!whether\s)(?:that|it|this|(?:my|the)\s+\w+(?:\s+\w+)?)\s+(?:has\s+|have\s+)?
        changed|things\s+have\s+changed|
        (?!(?:for|right|just|until|by|as\s+of)\s)\w+\s+now(?=\s*(?:[,.!?;]|$))|my\s+new|
        (?:^|[.!?]\s+)now(?=\s))"""),
    changes=(
        _rx(
            rf"\bi(?:\s+have|'ve)?\s+(?:just\s+|recently\s+|now\s+|since\s+)?(?:moved|relocated)\s+(?:back\s+)?(?:to|into)\s+{_EN_V}"
        ),
        _rx(rf"""\bi(?:'m|\s+am)?\s+(?:now\s+)?(?:live|living|work|working|study|studying|based|
            staying)\s+(?:now\s+)?(?:in|at|for)\s+{_EN_V}"""),
        # "it's" needs "now" beside it: "it's not raining anymore" is no correction.
        _rx(rf"\b(?:it's|it\s+is|its|that's)\s+now\s+{_EN_V}"),
        _rx(
            rf"\b(?:now\s+it's|now\s+it\s+is|the\s+new\s+one\s+is|it's\s+been\s+changed\s+to)\s+{_EN_V}"
        ),
        _rx(r"\b(?:it's|it\s+is)\s+(?P<new>[^.!?;,]+?)\s+now\b"),
        _rx(r"\b(?:it's|it\s+is)\s+(?P<new>[^!?;]{2,60}?)\s+now\s*,\s*not\b"),
        _rx(r"\buse\s+(?P<new>[^,;!?]+?)\s+instead\b"),
        _rx(
            rf"\b(?:i|we)(?:\s+have|'ve)?\s+(?:moved|changed|gone)\s+(?:\w+\s+)?from\s+[^,;!?]+?\s+to\s+{_EN_V}"
        ),
        _rx(r"""\b(?:isn't|is\s+not|aren't|are\s+not)\s+[^,;!?]+?\s+any\s*(?:more|longer),?\s+
            (?:it's|it\s+is|they're|they\s+are)\s+(?P<new>[^,;!?]+?)(?=\s*(?:[,;!?]|\.(?:\s|$)|$))"""),
        _rx(rf"\bmy\s+[\w' -]{{1,30}}?\s+is\s+now\s+{_EN_V}"),
        _rx(rf"""\bi(?:'m|\s+am)\s+(?:now\s+)?(?:dating|seeing|with|married\s+to|engaged\s+to|
            working\s+(?:at|for)|living\s+in|using|driving|eating|studying)\s+{_EN_V}"""),
        _rx(rf"\b(?:changed|switched|moved)\s+(?:it\s+)?to\s+{_EN_V}"),
        _rx(rf"\bmy\s+(?:new\s+)?{_EN_SLOT}\s+is\s+(?:now\s+)?{_EN_V}"),
        # "my daughter goes to Riverside now", "my birthday is on the 12th, not the 21st":
        # a value stated with "now" or against a rejected one ("..., not X").
        _rx(r"""\bmy\s+[\w' -]{1,30}?\s+(?:is|are|goes\s+to|go\s+to|works\s+(?:at|for)|
            lives\s+(?:in|at)|drives|plays|uses|has)\s+(?:now\s+|actually\s+)?(?P<new>[^;,]+?)
            (?:\s+now\b|\s*,\s*not\b)"""),
        _rx(rf"""\b(?:now\s+)?i\s+(?:now\s+)?(?:eat|drink|use|prefer|like|love|drive|play|listen\s+to|
            go\s+by|follow|take|support|work\s+(?:at|for|as)|date|see|practi[cs]e|do)\s+{_EN_V}"""),
        _rx(r"\bi(?:'m|\s+am)\s+(?:now\s+)?(?:a|an)\s+(?P<new>[\w -]+?)\s+now\b"),
    ),
    temporal=_rx(r"""\b(?:yesterday|today|tonight|this\s+(?:morning|afternoon|evening|week|month)|
        last\s+(?:night|week(?:end)?|month|year|time|session|conversation|chat|monday|tuesday|
        wednesday|thursday|friday|saturday|sunday)|earlier(?:\s+today)?|ago|
        (?:on|since|before|after|from)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|
        (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+(?:night|morning|
        afternoon|evening)(?:'s)?|
        (?:previous|first|last)\s+(?:session|conversation|chat)|
        (?:past|last)\s+(?:(?:few|couple(?:\s+of)?|\w+)\s+)?(?:days?|weeks?|hours?|minutes?|months?)|
        (?:over|during|at)\s+the\s+weekend|this\s+weekend|
        (?:between|from)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|
        (?:back\s+)?in\s+(?:january|february|march|april|may|june|july|august|september|october|
        november|december)|
        the\s+other\s+day|\w+day's|this\s+week's|just\s+now|
        the\s+last\s+(?:thing|things|message|messages|bit|sentence|few\s+\w+))\b"""),
    speech=_rx(r"""\b(?:said|told|tell|mentioned|shared|say|wrote|typed|talked|spoke|vented|discussed|
        brought\s+up|
        conversation|chat|session|messages?|exchange|discussion|confided)\b"""),
    quantifier=_rx(r"\b(?:everything|anything|all|every|whatever|entire|whole)\b"),
    inference=_rx(r"""\b(?:infer\w*|assum\w*|guess\w*|deduc\w*|conclu\w*|speculat\w*|impression|
        you\s+(?:seem\s+to\s+)?(?:have\s+)?decided|
        figured\s+out|worked\s+out|gathered|presum\w*|read\s+into|derived|extrapolat\w*|
        picked\s+up\s+on|pieced\s+together|think\s+you\s+know)\b"""),
    conjunction=_rx(r"""(?:\s(?:and|or|nor|as\s+well\s+as|plus|along\s+with|together\s+with|&)\s
        |,\s*)

        (?!(?:i|me|we|he|she|they|it|then|also|please|that|so)\b)(?=(?:my|the|his|her|our|
        your|also\s+my)?\s*\w)"""),
    topic=_rx(r"""\b(?:health|medical|financial|finance|money|family|work|job|dating|love|
        relationship|travel|contact|personal|banking|religious|political|sex(?:ual)?|career|
        mental\s+health|kids'?)\s+(?:stuff|things|info|information|details|data|history|records|
        life|situation|matters|issues|related)\b|\w+-related\b"""),
    leading=_rx(r"^(?:about|all\s+about|of)\s+"),
    lapse_strip=_rx(r"^(?:into|a\s+fan\s+of|interested\s+in|keen\s+on|fond\s+of)\s+"),
    external=_rx(r"""^(?:my|our|all\s+my)\s+(?:[\w-]+\s+){0,2}?(?:accounts?|calendar|
        drafts?|files|folders?|documents?|docs|photos?|pictures?|pics|videos?|apps?|laptop|
        computer|pc|tablet|browser|cache|cookies|tabs|orders?|cart|subscriptions?|posts?|tweets?|
        comments?|playlists?|alarms?|inbox)\b(?!['-]|\s+(?:number|address|name|password|id|
        handle|username|details|code|pin|login))
      |\b(?:from|off|in|on|out\s+of|at|to)\s+(?:the|my|this|that|our)\s+(?:[\w'-]+\s+)?
        (?:list|phone|computer|laptop|calendar|inbox|drive|folder|desktop|fridge|sofa|couch|
        spreadsheet|sheet|document|app|account|website|site|server|cloud|disk|whiteboard|page|
        profile|feed|timeline|cart|playlist|gallery|browser|repo|repository)\b
      |\boff\s+at\b|\boff$"""),
    trailing=_rx(r"""(?:\s+(?:please|now|anymore|any\s+more|too|as\s+well|for\s+me|ok|okay|
        thanks|thank\s+you|either|at\s+all|then)|[\s,:;.!?]+)$"""),
    lexicon={},
)


# --------------------------------------------------------------------------
# Spanish
# --------------------------------------------------------------------------

_ES_START = r"(?:^|[.!?;:,—–¿¡]\s*|\b(?:y|pero|así\s+que|entonces|también)\s+)"
_ES_LEAD = r"""(?:(?:oye|hola|vale|bueno|ok|mira|además|también|ah|por\s+cierto|una\s+cosa|
    perdona|porfa|por\s+favor|de\s+ahora\s+en\s+adelante|mejor)[\s,:]+
  |¿?\s*(?:puedes|podrías|podrias|puede|podría|podria|pueden)\s+(?:por\s+favor\s+)?
  |(?:te\s+pido|le\s+pido|quiero|necesito|me\s+gustaría|me\s+gustaria|prefiero|preferiría|
     preferiria|te\s+agradecería|te\s+agradeceria)\s+que\s+
  |(?:me\s+haces\s+el\s+favor\s+de|haz\s+el\s+favor\s+de|hazme\s+el\s+favor\s+de)\s+)*"""
_ES_OBJ = r"""(?=(?:
    (?:mi|mis|nuestro|nuestra|nuestros|nuestras|todo|toda|todos|todas|lo\s+que|lo\s+de|lo\s+del|
       que|d[oó]nde|cu[aá]ndo|cualquier|nada|c[oó]mo|qui[eé]n|cu[aá]l|
       sobre\s+m[ií]|de\s+m[ií])\b
  | (?:la|nuestra|esa|aquella)\s+(?:conversaci[oó]n|charla|sesi[oó]n)\b
  | (?:eso|esto)\s+(?:que|de|sobre)\b
  | (?:el|la|los|las)\s+(?:[\w'-]+\s+){0,4}?que\s+te\s+\w+
  | (?:el|la|los|las)\s+(?:[\w'-]+\s+){0,2}?(?:de|sobre)\s+(?:m[ií]|mi|mis)\b
  | (?:esa|ese|esas|esos)\s+(?:conversaci[oó]n|charla|informaci[oó]n|dato|datos|detalle|cosa|
       parte|tema)
)) """
_ES_TEND = _target_end(
    closers=r"""por\s+favor|de\s+tu\s+memoria|para\s+siempre|del\s+todo|por\s+completo|
        completamente|gracias|porque|ya\s+que|es\s+privado|es\s+personal|vale""",
    continuers=r"y|mi|mis|el|la|los|las|tambi[eé]n|todo|o",
)
_ES_T = rf"(?P<t>.+?){_ES_TEND}"
_ES_VEND = _value_end(r"ahora|y|pero|desde|porque|por\s+favor")
_ES_V = rf"(?P<new>.+?){_ES_VEND}"
_ES_FORGET_VERB = r"""(?:olv[ií]d(?:a|ate|alo|ala)(?:\s+de)?|olvides(?:\s+de)?|olvidar(?:te\s+de)?|
    b[oó]rra(?:lo|la)?|borres|borrar|elimin(?:a|es|ar)|suprim(?:e|as|ir)|quit(?:a|es|ar)|
    descart(?:a|es|ar)|desech(?:a|es|ar)|ignor(?:a|es|ar)|no\s+tengas\s+en\s+cuenta)"""
_ES_KEEP = r"""(?:guard(?:es|ar)|recuerdes|record(?:ar)?|almacen(?:es|ar)|reten(?:gas|er)|
    conserv(?:es|ar)|manteng(?:as)|mantener|registr(?:es|ar)|apuntar|apuntes|memoriz(?:ar|es))"""
_ES_INFER = r"""(?:pens(?:ar|ando|ás|es)|cre(?:er|yendo|as)|
    supong(?:as)|suponer|deduzcas|deducir|adivin(?:es|ar)|infier(?:as)|inferir|
    asum(?:as|ir)|especul(?:es|ar)|saques\s+conclusiones|sacar\s+conclusiones|hagas\s+suposiciones|
    hacer\s+suposiciones|imagin(?:es|ar)|intent(?:es|ar)\s+adivinar)"""

_ES = _Language(
    code="es",
    stopwords=frozenset(
        "el la los las mi mis que de y lo por favor no ya te es en sobre todo olvida borra "
        "dije conté me gusta ahora realidad eso esto".split()
    ),
    rules=(
        # "Todo lo relacionado con mi salud, elimínalo"
        _Rule(
            _FRONTED,
            _rx(r"""(?:^|[.!?;]\s+)(?P<t>[^.!?;]{3,140}?)\s*[,:;—–]\s*(?:(?:por\s+favor|mejor|
                simplemente|porfa|ya)\s+)*(?:elim[ií]n(?:alo|ala|alos|alas)|b[oó]rr(?:alo|ala|alos|alas)|olv[ií]d(?:alo|ala|alos|
                alas)|desc[aá]rt(?:alo|ala|alos|alas)|no\s+(?:lo|la|los|las)\s+guardes)\b"""),
        ),
        _Rule(
            _FORGET,
            _rx(r"""\bno\s+hace\s+falta\s+que\s+(?:recuerdes|guardes|sepas)\s+(?P<t>[^.!?;]+)"""),
        ),
        _Rule(
            _FORGET,
            _rx(r"""\b(?:quita|quitar|borra|borrar|elimina|eliminar|saca|sacar)\s+de\s+(?:tus|las|la)\s+
                (?:notas|memoria|registros?)\s+(?P<t>(?:mi|mis|el|la|los|las)\b[^.!?;]+)"""),
        ),
        _Rule(
            _REPLACE,
            _rx(
                rf"{_ES_START}{_ES_LEAD}(?:actualiza|cambia|corrige)\s+(?P<t>(?:mi|mis)\s+.+?)\s+(?:a|por)\s+{_ES_V}"
            ),
        ),
        _Rule(
            _FORGET,
            _rx(r"""\b(?:b[oó]rra|borres|elimin(?:a|es)|quit(?:a|es)|sac(?:a|es)|suprim(?:e|as))\s+
                (?P<t>[^.!?;]+?)\s+de\s+(?:tu\s+|la\s+)?(?:memoria|registro|registros|notas)\b"""),
        ),
        _Rule(
            _INFER,
            _rx(rf"""{_ES_START}{_ES_LEAD}(?:no|deja\s+de|dejes\s+de|para\s+de)\s+(?:me\s+)?{_ES_INFER}
                \s+(?:(?:nada|cosas|algo)\s+)?(?:sobre|acerca\s+de|de|respecto\s+a)?\s*{_ES_OBJ}
                {_ES_T}"""),
        ),
        # "no quiero que saques conclusiones sobre mi salud mental",
        # "borrá eso que dedujiste"
        _Rule(
            _INFER,
            _rx(rf"""\bno\s+(?:quiero|me\s+gusta)\s+que\s+(?:saques|hagas|sagues)\s+
                (?:conclusiones|suposiciones|deducciones)\s+(?:sobre|acerca\s+de|de)\s+{_ES_T}"""),
        ),
        _Rule(
            _INFER,
            _rx(rf"""{_ES_START}{_ES_LEAD}{_ES_FORGET_VERB}\s+(?P<t>(?:eso|lo)\s+que\s+
                (?:dedujiste|supusiste|concluiste|pensaste|inferiste|imaginaste)\b[^.!?;]*)"""),
        ),
        _Rule(_FORGET, _rx(rf"{_ES_START}{_ES_LEAD}{_ES_FORGET_VERB}\s+{_ES_OBJ}{_ES_T}")),
        _Rule(
            _FORGET,
            _rx(rf"""{_ES_START}{_ES_LEAD}(?:(?:no|ya\s+no|deja\s+de|dejes\s+de|no\s+hace\s+falta\s+que)
                \s+(?:me\s+)?{_ES_KEEP}|no\s+quiero\s+que\s+(?:{_ES_KEEP}|sepas|recuerdes))
                \s+(?:de|sobre)?\s*{_ES_OBJ}{_ES_T}"""),
        ),
        # "ya no me gusta el jazz", "ya no vivo en Madrid", "ya no soy vegetariano"
        _Rule(
            _LAPSE,
            _rx(r"""\bya\s+no\s+(?P<t>(?:me\s+(?:gusta|gustan|interesa|interesan|encanta|encantan)|
                vivo|trabajo|como|bebo|soy|salgo\s+con|fumo|uso|juego|practico|sigo|estudio|
                estoy\s+(?:casad[oa]|con|saliendo|en|prometid[oa]|embarazada)|tomo|conduzco|
                tengo\s+(?:novi[oa]|pareja|coche|perro|gato))\b[^.!?;,]*)"""),
        ),
    ),
    marker=_rx(r"""(?:\bha\s+cambiado|\bcambi[oó]\b|\ben\s+realidad|\bde\s+hecho|\bcorrijo|\bcorrecci[oó]n|\bactualizaci[oó]n|
        ,\s*no\b|
        \bme\s+equivoqu[eé]|\bya\s+no|\bahora\b|\ben\s+cambio|
        \beso\s+(?:est[aá]\s+(?:desactualizado|anticuado|mal)|ya\s+no\s+es\s+(?:as[ií]|cierto|
        correcto|verdad|v[aá]lido)|cambi[oó]|ha\s+cambiado|es\s+viejo))"""),
    changes=(
        _rx(r"""\b(?:el\s+nuevo|la\s+nueva)\s+es\s+(?:el\s+|la\s+)?(?P<new>[^,;!?]+?)
            (?=\s*(?:[,;!?]|\.(?:\s|$)|$))"""),
        _rx(rf"\bme\s+(?:mud[eé]|he\s+mudado|traslad[eé]|fui\s+a\s+vivir)\s+a\s+{_ES_V}"),
        _rx(rf"\b(?:ahora\s+)?(?:vivo|trabajo|estudio|estoy)\s+(?:ahora\s+)?(?:en|para)\s+{_ES_V}"),
        _rx(rf"\bahora\s+(?:es|son|se\s+llama)\s+{_ES_V}"),
        _rx(rf"\bahora\s+mis?\s+[\w ]{{1,30}}?\s+(?:es|son)\s+{_ES_V}"),
        _rx(rf"\bmis?\s+[\w ]{{1,30}}?\s+(?:es|son)\s+ahora\s+{_ES_V}"),
        # A value set against a rejected one: "mi cumpleaños es el 3 de mayo, no el 5".
        _rx(r"\bmis?\s+[\w ]{1,30}?\s+(?:es|son)\s+(?P<new>[^;,]+?)\s*,\s*no\b"),
        _rx(rf"\b(?:es|son)\s+{_ES_V}\s+ahora\b"),
        _rx(rf"\b(?:cambi[oó]|ha\s+cambiado|cambi[eé])\s+(?:a|por)\s+{_ES_V}"),
        _rx(rf"\bmi\s+nuev[oa]\s+\w+(?:\s+de\s+\w+)?\s+es\s+{_ES_V}"),
        _rx(
            rf"\b(?:ahora\s+)?(?:como|bebo|uso|prefiero|juego|escucho|tomo|conduzco|salgo\s+con)\s+(?:ahora\s+)?{_ES_V}"
        ),
    ),
    temporal=_rx(r"""\b(?:ayer|anteayer|hoy|anoche|esta\s+(?:mañana|tarde|noche|semana)|
        el\s+(?:lunes|martes|miércoles|jueves|viernes|sábado|domingo)(?:\s+(?:a\s+la|por\s+la)
        \s+(?:noche|mañana|tarde))?|
        (?:la\s+)?semana\s+pasada|d?el\s+(?:mes|año|fin\s+de\s+semana|finde|lunes|martes|miércoles|
        jueves|viernes|sábado|domingo)\s+pasado|el\s+otro\s+día|hace\s+(?:un|una|dos|tres|unos|unas|
        \d+)\s+\w+|(?:nuestra|la)\s+(?:última|anterior|primera)\s+(?:conversación|charla|sesión)|
        de\s+ayer|esta\s+mañana)\b"""),
    speech=_rx(r"""\b(?:dije|cont[eé]|coment[eé]|mencion[eé]|habl[eé]|hablamos|escrib[ií]|dicho|
        contado|conversaci[oó]n|charla|sesi[oó]n|mensajes?|compart[ií])\b"""),
    quantifier=_rx(r"\b(?:todo|toda|todos|todas|cualquier|nada|entero|entera)\b"),
    inference=_rx(r"""\b(?:dedu\w*|supon\w*|supus\w*|adivin\w*|infer\w*|infier\w*|conclu\w*|
        asum\w*|especul\w*|intuiste|sacaste|imaginaste|figuraste)\b"""),
    conjunction=_rx(r"""(?:\s(?:y|e|adem[aá]s\s+de|junto\s+con|m[aá]s)\s|,\s*)
        (?!(?:yo|me|te|él|ella|luego|después|que|por)\b)(?=\w)"""),
    topic=_rx(r"""\b(?:vida\s+(?:amorosa|sentimental|laboral|familiar|privada)|
        historial\s+m[eé]dico|temas?\s+de\s+\w+|datos\s+(?:m[eé]dicos|bancarios|personales))\b"""),
    leading=_rx(r"^(?:de|sobre)\s+"),
    lapse_strip=_rx(r"^(?:me\s+(?:gusta|gustan|interesa|interesan|encanta|encantan)|soy)\s+"),
    external=_rx(r"""^(?:mi|mis|todas\s+mis|todos\s+mis|nuestr[oa]s?)\s+(?:cuenta(?!\s+(?:bancaria|
        de\s+banco|corriente))|perfil|calendario|agenda|borrador(?:es)?|archivos?|carpetas?|
        documentos?|fotos?|im[aá]genes|v[ií]deos?|apps?|aplicaci[oó]n(?:es)?|port[aá]til|
        ordenador|pedidos?|carrito|suscripci[oó]n(?:es)?|publicaci[oó]n(?:es)?|tuits?|
        comentarios?|alarmas?|historial\s+del?\s+navegador)\b
      |(?:\bdel|\bde\s+(?:la|el|mi|mis|los|las|este|esta)|\ben\s+(?:la|el|mi|mis|los|las)|
        \bdesde\s+(?:la|el|mi))\s+(?:[\w-]+\s+)?(?:lista|m[oó]vil|tel[eé]fono|ordenador|
        port[aá]til|calendario|carpeta|escritorio|nevera|sof[aá]|nube|bandeja|disco|galer[ií]a|
        p[aá]gina|hoja)\b"""),
    trailing=_rx(r"""(?:\s+(?:por\s+favor|ya|tambi[eé]n|gracias|vale|eh)|[\s,:;.!?]+)$"""),
    lexicon={
        **dict.fromkeys(
            "salud medic doctor hospital enfermedad diagnos terapia terapeuta psicolog psiquiatr "
            "embaraz alergi depresi ansiedad clinica dentista pastilla receta".split(),
            "health",
        ),
        **dict.fromkeys(
            "dinero sueldo salario banco bancari deuda hipoteca prestamo finanz tarjeta impuesto "
            "ingreso ahorro cuenta gasto".split(),
            "finances",
        ),
        **dict.fromkeys(
            "familia madre padre mama papa herman hijo hija abuel tio tia primo prima esposo "
            "esposa".split(),
            "family",
        ),
        **dict.fromkeys(
            "direccion casa piso apartamento vivo vivienda barrio ciudad mude mudanza calle "
            "domicilio".split(),
            "home",
        ),
        **dict.fromkeys("telefono numero movil correo email contacto".split(), "contact"),
        **dict.fromkeys("trabajo empleo jefe empresa oficina trabaj puesto colega".split(), "work"),
        **dict.fromkeys(
            "pareja novio novia ex relacion matrimonio divorci amorosa sentimental".split(),
            "relationships",
        ),
        **dict.fromkeys("contrasena clave pin codigo usuario pasaporte".split(), "credentials"),
        **dict.fromkeys(
            "religion religios iglesia fe misa dios rezar creencia politic partido sindicato "
            "protesta marcha voto elecciones".split(),
            "beliefs",
        ),
        **dict.fromkeys(
            "abogad juicio demanda tribunal juzgado policia denuncia multa detenid judicial "
            "juez".split(),
            "legal",
        ),
        **dict.fromkeys("viaje vuelo hotel vacaciones aeropuerto".split(), "travel"),
        **dict.fromkeys(
            "gusta musica comida vegetarian vegan deporte favorit aficion".split(), "preferences"
        ),
    },
)


# --------------------------------------------------------------------------
# French
# --------------------------------------------------------------------------

_FR_START = r"(?:^|[.!?;:,—–]\s*|\b(?:et|mais|donc|alors|aussi)\s+)"
_FR_LEAD = r"""(?:(?:dis|bon|ok|alors|aussi|ah|au\s+fait|une\s+chose|pardon|stp|svp|
    s'il\s+te\s+pla[iî]t|s'il\s+vous\s+pla[iî]t|d[ée]sormais|en\s+fait|franchement)[\s,:]+
  |(?:peux-tu|pourrais-tu|pouvez-vous|pourriez-vous|tu\s+peux|tu\s+pourrais|vous\s+pouvez)\s+
     (?:s'il\s+te\s+pla[iî]t\s+|stp\s+)?
  |(?:je\s+veux|je\s+voudrais|j'aimerais|je\s+pr[ée]f[ée]rerais|je\s+pr[ée]f[èe]re|
     je\s+souhaite|je\s+souhaiterais)\s+que\s+(?:tu|vous)\s+
  |(?:merci\s+d'|merci\s+de\s+|je\s+te\s+demande\s+d'|je\s+te\s+demande\s+de\s+|veuillez\s+|
     il\s+faut\s+que\s+tu\s+))*"""
_FR_OBJ = r"""(?=(?:
    (?:mon|ma|mes|notre|nos|tout|toute|tous|toutes|ce\s+que|ce\s+qu'|ce\s+dont|que|qu'|o[uù]|rien|
       quand|comment|qui|n'importe|[àa]\s+propos\s+de\s+moi|sur\s+moi)(?=\W|$)
  | (?:sur|[àa]\s+propos\s+de|concernant)\s+(?:mon|ma|mes|moi)\b
  | (?:la|notre|cette)\s+(?:conversation|discussion|session)\b

  | ce\s+(?:d[ée]tail|souvenir|message|truc|point|sujet)\b
  | cette\s+(?:conversation|discussion|info|information|histoire)\b
  | (?:le|la|les|l')\s*(?:[\w'-]+\s+){0,4}?(?:que|qu')\s*(?:je|j')
  | (?:le|la|les|l')\s*(?:[\w'-]+\s+){0,2}?(?:de|sur)\s+(?:moi|mon|ma|mes)\b
)) """
_FR_TEND = _target_end(
    closers=r"""s'il\s+te\s+pla[iî]t|s'il\s+vous\s+pla[iî]t|stp|svp|de\s+ta\s+m[ée]moire|
        de\s+votre\s+m[ée]moire|pour\s+de\s+bon|d[ée]finitivement|compl[èe]tement|merci|parce|
        car|c'est\s+priv[ée]|c'est\s+personnel""",
    continuers=r"et|mon|ma|mes|le|la|les|aussi|tout|ou",
)
_FR_T = rf"(?P<t>.+?){_FR_TEND}"
_FR_VEND = _value_end(r"maintenant|d[ée]sormais|et|mais|depuis|parce|car")
_FR_V = rf"(?P<new>.+?){_FR_VEND}"
_FR_FORGET_VERB = r"""(?:oubli(?:e|ez|er|es)|effac(?:e|ez|er|es)|supprim(?:e|ez|er|es)|
    retir(?:e|ez|er|es)|enl[eè]v(?:e|ez|es)|enlever|ignor(?:e|ez|er)|jett(?:e|ez)|jeter|
    laisse\s+tomber|laissez\s+tomber|ne\s+tiens\s+pas\s+compte\s+de|ne\s+tenez\s+pas\s+compte\s+de)"""
_FR_KEEP = r"""(?:garde|gardez|gardes|garder|retiens|retenez|retiennes|retenir|
    m[ée]moris(?:e|ez|es|er)|
    conserv(?:e|ez|es|er)|stock(?:e|ez|es|er)|enregistr(?:e|ez|es|er)|note|notez|noter|
    te\s+souviens|te\s+souviennes|te\s+souvenir|vous\s+souvenez)"""
_FR_INFER = r"""(?:pens(?:e|ez|er)|croire|
    suppos(?:e|ez|er)|d[ée]dui(?:s|sez|re)|devin(?:e|ez|er)|pr[ée]sum(?:e|ez|er)|
    conclu(?:s|ez|re)|sp[ée]cul(?:e|ez|er)|imagin(?:e|ez|er)|tire[rz]?\s+(?:de|des)\s+conclusions|
    fais\s+(?:de|des)\s+suppositions|faire\s+(?:de|des)\s+suppositions|essayer\s+de\s+deviner)"""

_FR = _Language(
    code="fr",
    stopwords=frozenset(
        "le la les mon ma mes que de et je tu pas ne plus ce est sur tout oublie efface "
        "supprime dit fait maintenant j'ai c'est t'ai".split()
    ),
    rules=(
        # "Tout ce qui touche à ma santé, efface-le", "Mon âge, ne le garde pas"
        _Rule(
            _FRONTED,
            _rx(r"""(?:^|[.!?;]\s+)(?P<t>[^.!?;]{3,140}?)\s*[,:;—–]\s*(?:s'il\s+te\s+pla[iî]t\s+)?
                (?:(?:efface|oublie|supprime|retire)-(?:le|la|les)|ne\s+(?:le|la|les)\s+garde\s+pas
                |tu\s+peux\s+(?:l'|les\s+)(?:effacer|oublier|supprimer))\b"""),
        ),
        _Rule(
            _REPLACE,
            _rx(
                rf"{_FR_START}{_FR_LEAD}(?:mets\s+à\s+jour|mettez\s+à\s+jour|change|changez|corrige)\s+"
                rf"(?P<t>(?:mon|ma|mes)\s+.+?)\s+(?:en|par|pour|à)\s+{_FR_V}"
            ),
        ),
        _Rule(
            _FORGET,
            _rx(r"""\b(?:efface|effacez|supprime|supprimez|retire|retirez|enl[eè]ve|enlevez)\s+
                (?P<t>[^.!?;]+?)\s+de\s+(?:ta|votre|la)\s+(?:m[ée]moire|base|m[ée]moires)\b"""),
        ),
        _Rule(
            _INFER,
            _rx(rf"""{_FR_START}{_FR_LEAD}(?:ne\s+(?:{_FR_INFER})\s+(?:rien|pas|plus\s+rien)|
                ne\s+(?:tire|tirez|fais|faites)\s+(?:pas|plus|aucune)\s+(?:de\s+|d')?
                    (?:conclusions?|suppositions?|hypoth[èe]ses?)|
                n'(?:essaie|essayez)\s+pas\s+de\s+(?:deviner|d[ée]duire)|
                arr[eê]te(?:z)?\s+de\s+{_FR_INFER})
                \s+(?:quoi\s+que\s+ce\s+soit\s+)?(?:sur|[àa]\s+propos\s+de|de|concernant|quant\s+[àa])?
                \s*{_FR_OBJ}{_FR_T}"""),
        ),
        _Rule(_FORGET, _rx(rf"{_FR_START}{_FR_LEAD}{_FR_FORGET_VERB}\s+{_FR_OBJ}{_FR_T}")),
        _Rule(
            _FORGET,
            # "rien" stays in the target: "ne garde rien sur ..." is about a whole topic.
            _rx(rf"""{_FR_START}{_FR_LEAD}(?:ne\s+(?:{_FR_KEEP})\s+(?:pas\s+|plus\s+|(?=rien))|
                arr[eê]te(?:z)?\s+de\s+{_FR_KEEP}\s+|
                je\s+ne\s+veux\s+(?:pas|plus)\s+que\s+(?:tu|vous)\s+{_FR_KEEP}\s+)
                (?:de\s+|d')?{_FR_OBJ}{_FR_T}"""),
        ),
        # "je ne suis plus végétarien", "je n'aime plus le jazz", "je n'habite plus à Paris"
        _Rule(
            _LAPSE,
            _rx(r"""\bje\s+(?:ne\s+|n')(?P<t>(?:suis\s+plus\s+(?:v[ée]g[ée]tarien\w*|vegan|v[ée]gane|
                fan|mari[ée]e?|fianc[ée]e?|avec|en\s+couple|membre|c[ée]libataire|chez|abonn[ée]e?|
                enceinte|catholique|musulman\w*|fumeu\w+)|(?:mange|bois|vis|habite|travaille|fume|
                joue|sors\s+avec|aime|utilise|[ée]coute|pratique|prends|conduis|suis\s+plus\s+fan)
                \s+plus)\b[^.!?;,]*)"""),
        ),
    ),
    marker=_rx(r"""(?:\ben\s+fait|\ben\s+r[ée]alit[ée]|\bcorrection|\bmise\s+[àa]\s+jour|
        ,\s*pas\b|
        \bje\s+me\s+suis\s+tromp[ée]|\bne\s+\w+\s+plus|\bn'\w+\s+plus|\bmaintenant|\bd[ée]sormais|
        \bce\s+n'est\s+plus\s+(?:[àa]\s+jour|vrai|exact|le\s+cas|valable|correct)|
        \bc'est\s+(?:d[ée]pass[ée]|p[ée]rim[ée]|obsol[èe]te|faux|plus\s+[àa]\s+jour)|
        \ba\s+chang[ée])"""),
    changes=(
        _rx(r"\bc'est\s+(?P<new>[^,;!?]+?)\s+(?:maintenant|d[ée]sormais)\b"),
        _rx(
            r"\bremplace\s+l'ancien(?:ne)?\s+par\s+(?P<new>[^,;!?]+?)(?=\s*(?:[,;!?]|\.(?:\s|$)|$))"
        ),
        _rx(r"""\b(?:la\s+nouvelle|le\s+nouveau)\s+(?:est|c'est)\s+(?:le\s+|la\s+)?(?P<new>[^,;!?]+?)
            (?=\s*(?:[,;!?]|\.(?:\s|$)|$))"""),
        _rx(rf"\bj'ai\s+(?:d[ée]m[ée]nag[ée]|emm[ée]nag[ée])\s+(?:[àa]|au|aux|en|dans)\s+{_FR_V}"),
        _rx(
            rf"\b(?:je\s+|j')(?:vis|habite|travaille|suis)\s+(?:maintenant|d[ée]sormais)\s+(?:[àa]|au|en|chez|dans|pour)\s+{_FR_V}"
        ),
        _rx(
            rf"\bmaintenant,?\s+j[e']\s*(?:vis|habite|travaille|mange|bois|utilise|pr[ée]f[èe]re|joue)\s+(?:[àa]\s+|au\s+|en\s+|chez\s+|dans\s+)?{_FR_V}"
        ),
        _rx(rf"\bc'est\s+(?:maintenant|d[ée]sormais)\s+{_FR_V}"),
        _rx(rf"\bmaintenant,?\s+c'est\s+{_FR_V}"),
        _rx(rf"\b(?:a\s+chang[ée]|est\s+pass[ée]e?)\s+(?:pour|en|[àa])\s+{_FR_V}"),
        _rx(rf"\bmon\s+nouveau\s+\w+(?:\s+de\s+\w+)?\s+est\s+{_FR_V}"),
        _rx(rf"\bma\s+nouvelle\s+[\w-]+(?:\s+[\w-]+)?\s+est\s+{_FR_V}"),
        # "mon anniversaire est le 3 mai, pas le 5"
        _rx(
            r"""\b(?:mon|ma|mes)\s+[\w' -]{1,30}?\s+(?:est|sont)\s+(?P<new>[^;,]+?)
            \s*,\s*(?:pas|non)\b"""
        ),
        _rx(
            rf"\bje\s+(?:mange|bois|utilise|pr[ée]f[èe]re|joue\s+au|[ée]coute)\s+(?:maintenant|d[ée]sormais)\s+{_FR_V}"
        ),
    ),
    temporal=_rx(r"""(?:\bhier|\bavant-hier|\baujourd'hui|\bce\s+(?:matin|soir|week-end|weekend)|
        \b(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)(?:\s+(?:dernier|soir|matin))?\b|
        \bcet\s+apr[èe]s-midi|\bcette\s+semaine|\bla\s+semaine\s+derni[eè]re|
        \ble\s+(?:mois|week-end|weekend|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)\s+
        dernier|\bl'ann[ée]e\s+derni[eè]re|\btout\s+[àa]\s+l'heure|\bil\s+y\s+a\s+\w+|
        \b(?:notre|la)\s+(?:derni[eè]re|pr[ée]c[ée]dente|premi[eè]re)\s+(?:conversation|discussion|
        session)|\bl'autre\s+jour|\bd'hier)"""),
    speech=_rx(r"""(?:\bdit|\bracont\w+|\bmentionn\w+|\bparl\w+|[ée]crit|\bconfi[ée]|
        \bconversation|\bdiscussion|\bsession|\bmessages?|[ée]change|\bpartag[ée])"""),
    quantifier=_rx(r"\b(?:tout|toute|tous|toutes|n'importe|enti[eè]re?|rien)\b"),
    inference=_rx(r"""(?:d[ée]dui\w*|suppos\w*|devin\w*|\bconclu\w*|sp[ée]cul\w*|inf[ée]r\w*|
        pr[ée]sum\w*|imagin[ée]|compris\s+tout\s+seul)"""),
    conjunction=_rx(r"""(?:\s(?:et|ainsi\s+que|plus)\s|,\s*)
        (?!(?:moi|je|j'|toi|lui|elle|puis|ensuite|que|qu')(?:\W|$))(?=\w)"""),
    topic=_rx(r"""\b(?:vie\s+(?:amoureuse|sentimentale|priv[ée]e|professionnelle|familiale)|
        dossier\s+m[ée]dical|ant[ée]c[ée]dents\s+m[ée]dicaux|donn[ée]es\s+(?:m[ée]dicales|
        bancaires|personnelles)|histoires?\s+de\s+\w+)\b"""),
    leading=_rx(r"^(?:de|d'|sur|[àa]\s+propos\s+de)\s*"),
    lapse_strip=_rx(r"^(?:suis\s+plus(?:\s+fan\s+de)?|aime\s+plus)\s+|\s+plus\b"),
    external=_rx(r"""^(?:mon|ma|mes|toutes\s+mes|tous\s+mes|notre|nos)\s+(?:compte(?!\s+(?:bancaire|
        en\s+banque|courant))|profil|calendrier|agenda|brouillons?|fichiers?|dossiers?|
        documents?|photos?|images?|vid[ée]os?|applis?|applications?|ordinateur|pc|commandes?|
        panier|abonnements?|publications?|posts?|tweets?|commentaires?|alarmes?|
        historique\s+de\s+navigation)\b
      |(?:\bdu|\bdes|\bde\s+(?:la|l'|mon|ma|mes|ce|cette)|\bdans\s+(?:la|le|l'|mon|ma|mes)|
        \bsur\s+(?:la|le|l'|mon|ma|mes))\s*(?:[\w-]+\s+)?(?:liste|t[ée]l[ée]phone|portable|
        ordinateur|calendrier|agenda|dossier|frigo|canap[ée]|cloud|bo[iî]te|disque|galerie|
        page|tableur)\b"""),
    trailing=_rx(r"""(?:\s+(?:stp|svp|aussi|merci|hein|maintenant)|[\s,:;.!?]+)$"""),
    lexicon={
        **dict.fromkeys(
            "sante medic medecin docteur hopital maladie diagnos therapie therapeute psy "
            "enceinte grossesse allergi depression anxiete clinique dentiste ordonnance "
            "traitement".split(),
            "health",
        ),
        **dict.fromkeys(
            "argent salaire banque bancaire dette hypotheque pret financ carte impot revenu "
            "epargne compte depense".split(),
            "finances",
        ),
        **dict.fromkeys(
            "famille mere pere maman papa frere soeur fils fille enfant grand oncle tante "
            "cousin epoux epouse".split(),
            "family",
        ),
        **dict.fromkeys(
            "adresse maison appartement habite logement quartier ville demenag rue "
            "domicile".split(),
            "home",
        ),
        **dict.fromkeys("telephone numero portable courriel mail email contact".split(), "contact"),
        **dict.fromkeys(
            "travail boulot emploi patron entreprise bureau poste collegue".split(), "work"
        ),
        **dict.fromkeys(
            "couple copain copine ex relation mariage divorc amoureuse sentimentale fiance".split(),
            "relationships",
        ),
        **dict.fromkeys("mot code pin identifiant passeport".split(), "credentials"),
        **dict.fromkeys(
            "religion religieu eglise foi messe dieu prier croyan politique parti syndicat "
            "manif vote elections".split(),
            "beliefs",
        ),
        **dict.fromkeys(
            "avocat proces tribunal plainte judiciaire juge police amende litige".split(),
            "legal",
        ),
        **dict.fromkeys("voyage vol hotel vacances aeroport".split(), "travel"),
        **dict.fromkeys(
            "aime musique cuisine nourriture vegetarien vegan sport prefere gout".split(),
            "preferences",
        ),
    },
)


# --------------------------------------------------------------------------
# German
# --------------------------------------------------------------------------

_DE_START = r"(?:^|[.!?;:,—–]\s*|\b(?:und|aber|also|dann|auch)\s+)"
_DE_LEAD = r"""(?:(?:hey|hallo|ok|okay|also|übrigens|ach|noch\s+etwas|noch\s+was|bitte|
    sorry|ab\s+jetzt|ehrlich\s+gesagt|am\s+besten|gleich|doch|mal)[\s,:]+)*"""
# Modal questions put the verb last: "kannst du bitte meine Adresse vergessen?"
_DE_MODAL = r"""(?:kannst|könntest|konntest|würdest|wuerdest|kann|können|könnten|würden)\s+
    (?:du|sie)\s+(?:bitte\s+|mal\s+|vielleicht\s+)*"""
_DE_OBJ = r"""(?=(?:
    (?:mein|meine|meinen|meinem|meiner|meines|unser|unsere|unseren|unserem|alles|all\s+das|
       alle|allen|worüber|wovon|woran|
       was|wo|wann|wie|wer|dass|jede|jeden|jegliche\w*|sämtliche\w*|irgendwas)\b
  | (?:das|dies|diese|dieses)\s+(?:mit|über|von|gespräch|chat|detail|thema|info\w*)\b
  | (?:die|den|das|der)\s+(?:[\w-]+\s+){0,3}?(?:die|den|das|von|über)\s+(?:ich|mir|mich|meine\w*)\b
  | (?:die|den|das|der)\s+[\w-]+\s+(?:meine[rsnm]?|unsere[rsnm]?)\b
  | (?:die|den|das|der)\s+[\w-]+,\s+(?:die|den|das|der)\s+ich\s+dir\b
  | \w+s\s+(?:nummer|adresse|handynummer|geburtstag|daten|e-mail)\b
)) """
_DE_TEND = _target_end(
    closers=r"""bitte|aus\s+deinem\s+(?:gedächtnis|speicher)|für\s+immer|endgültig|komplett|
        vollständig|danke|weil|denn|das\s+ist\s+privat""",
    # A comma before a relative clause ("alles, was ich ...") continues the target.
    continuers=r"und|mein|meine|meinen|den|die|das|der|auch|alles|oder|was|wo|worüber|dass",
)
_DE_T = rf"(?P<t>.+?){_DE_TEND}"
_DE_VEND = _value_end(r"jetzt|nun|und|aber|seit|weil|gezogen|umgezogen")
_DE_V = rf"(?P<new>.+?){_DE_VEND}"
_DE_FORGET_VERB = r"""(?:vergiss|vergessen\s+sie|l[öo]sch(?:e)?|l[öo]schen\s+sie|entfern(?:e)?|
    entfernen\s+sie|streich(?:e)?|tilg(?:e)?|verwirf|ignorier(?:e)?|wirf)"""
_DE_INFINITIVE = r"""(?:vergessen|l[öo]schen|entfernen|streichen|tilgen|ignorieren|
    nicht\s+(?:speichern|behalten|merken))"""

_DE = _Language(
    code="de",
    stopwords=frozenset(
        "der die das mein meine meinen ich du und nicht mehr ist bitte was über alles zu "
        "dass vergiss lösche habe gesagt jetzt eigentlich dir mir".split()
    ),
    rules=(
        # "Alles, was mit meiner Gesundheit zu tun hat, bitte löschen", "Deine
        # Vermutung, dass ..., vergiss die bitte", "X musst du dir nicht merken"
        _Rule(
            _FRONTED,
            _rx(r"""(?:^|[.!?;]\s+)(?P<t>[^.!?;]{3,140}?)\s*[,:;—–]\s*(?:(?:vergiss|l[öo]sch(?:e)?)
                \s+(?:das|die|den|es|sie)\b|bitte\s+(?:l[öo]schen|vergessen)\b|(?:das|die|den|es|sie)\s+
                (?:bitte\s+)?(?:vergessen|l[öo]schen)\b|kannst\s+du\s+(?:(?:das|es)\s+)?(?:vergessen|
                l[öo]schen)\b)"""),
        ),
        _Rule(
            _FORGET,
            _rx(r"""(?:^|[.!?;]\s+)(?P<t>(?:mein|meine|meinen)\b[^.!?;]+?)\s+musst\s+du\s+dir\s+
                nicht\s+merken\b"""),
        ),
        # "Das mit der Sachbearbeiterin stimmt nicht mehr, ich bin seit Mai Teamleiterin"
        _Rule(
            _REPLACE,
            _rx(r"""\bdas\s+mit\s+(?:der|dem|den|meine[rm]?)\s+(?P<t>[\w-]+)\s+stimmt\s+nicht\s+mehr
                \b[^.!?]*?\bich\s+bin\s+(?:jetzt\s+|nun\s+|seit\s+\w+\s+)*(?P<new>[\w-]+)"""),
        ),
        _Rule(
            _REPLACE,
            _rx(rf"""{_DE_START}{_DE_LEAD}(?:aktualisiere|ändere|korrigiere)\s+(?P<t>(?:mein|meine|meinen)\s+
                .+?)\s+(?:auf|zu|in)\s+{_DE_V}"""),
        ),
        _Rule(
            _FORGET,
            _rx(r"""\b(?:l[öo]sch(?:e)?|entfern(?:e)?|streich(?:e)?|nimm|tilg(?:e)?)\s+(?P<t>[^.!?;]+?)
                \s+(?:aus|von)\s+(?:deinem|ihrem|dem)\s+(?:gedächtnis|speicher|notizen)\b"""),
        ),
        # "zieh keine Schlüsse über meine Religion", "hör auf, mein Gehalt zu raten"
        _Rule(
            _INFER,
            _rx(rf"""{_DE_START}{_DE_LEAD}(?:zieh(?:e)?\s+keine\s+(?:rück)?schlüsse|
                mach(?:e)?\s+keine\s+(?:annahmen|vermutungen|mutmaßungen)|
                (?:vermute|rate|schließe|folgere|spekuliere|errate)\s+(?:nichts|nicht)|
                stell(?:e)?\s+keine\s+vermutungen\s+an)
                \s+(?:über|zu|bezüglich|aus|an)?\s*{_DE_OBJ}{_DE_T}"""),
        ),
        _Rule(
            _INFER,
            _rx(r"""\b(?:h[öo]r\s+auf|versuch(?:e)?\s+nicht|versuch(?:e)?\s+nicht\s+mehr),?\s+
                (?:über\s+)?(?P<t>.+?)\s+zu\s+(?:raten|erraten|spekulieren|vermuten|mutmaßen|
                folgern|erschließen|schlussfolgern)\b
                |\bh[öo]r\s+auf,?\s+(?:anzunehmen|zu\s+(?:glauben|denken|vermuten|meinen)),?\s+(?:dass\s+)?
                (?P<t2>[^.!?;]+)"""),
        ),
        _Rule(
            _FORGET,
            _rx(
                rf"""{_DE_START}{_DE_LEAD}{_DE_FORGET_VERB},?\s+(?:bitte\s+|mal\s+|einfach\s+|
                endlich\s+|gleich\s+|doch\s+|auch\s+)*,?\s*{_DE_OBJ}{_DE_T}"""
            ),
        ),
        # Verb before the object after a modal: "kannst du vergessen, was ich ..."
        _Rule(
            _FORGET,
            _rx(
                rf"""{_DE_START}{_DE_LEAD}{_DE_MODAL}(?:vergessen|l[öo]schen|entfernen),?\s+
                {_DE_OBJ}{_DE_T}"""
            ),
        ),
        _Rule(
            _FORGET,
            _rx(
                rf"""{_DE_START}{_DE_LEAD}{_DE_MODAL}{_DE_OBJ}(?P<t>[^.!?;]+?)\s+{_DE_INFINITIVE}\b"""
            ),
        ),
        # "speichere meine Adresse nicht", "merk dir meinen Geburtstag nicht mehr"
        _Rule(
            _FORGET,
            _rx(rf"""{_DE_START}{_DE_LEAD}(?:speicher(?:e)?|merk(?:e)?\s+dir|behalt(?:e)?|bewahr(?:e)?)
                \s+{_DE_OBJ}(?P<t>[^.!?;]+?)\s+nicht(?:\s+mehr)?\b"""),
        ),
        # Negation first: "merk dir bitte nicht, wo ich arbeite"
        _Rule(
            _FORGET,
            _rx(rf"""{_DE_START}{_DE_LEAD}(?:speicher(?:e)?|merk(?:e)?\s+dir|behalt(?:e)?|bewahr(?:e)?)
                \s+(?:bitte\s+)?nicht(?:\s+mehr)?,?\s+{_DE_OBJ}{_DE_T}"""),
        ),
        _Rule(
            _FORGET,
            _rx(r"""\b(?:h[öo]r\s+auf,?\s+(?:dir\s+)?(?P<t>.+?)\s+zu\s+(?:merken|speichern|behalten)|
                (?:ich\s+möchte|ich\s+will)\s+nicht,?\s+dass\s+du\s+(?:dir\s+)?(?P<t2>.+?)\s+
                (?:merkst|speicherst|behältst|weißt)|
                (?:ich\s+möchte|ich\s+will|ich\s+hätte\s+gern|ich\s+bitte\s+dich),?\s+dass\s+du\s+
                (?:dir\s+)?(?P<t3>.+?)\s+(?:löschst|vergisst|entfernst|nicht\s+(?:mehr\s+)?
                (?:speicherst|merkst|behältst)))\b"""),
        ),
        _Rule(
            _FORGET,
            _rx(r"""\b(?:es\s+wäre\s+mir\s+lieber|mir\s+wäre\s+es\s+lieber|mir\s+wäre\s+lieber),?\s+
                wenn\s+du\s+(?:dir\s+)?(?P<t>.+?)\s+(?:nicht\s+(?:speicherst|behältst|merkst)|
                vergisst|löschst)\b"""),
        ),
        # "ich bin nicht mehr Vegetarier", "ich esse kein Fleisch mehr", "ich mag Jazz nicht mehr"
        _Rule(
            _LAPSE,
            _rx(r"""\bich\s+(?P<t>bin\s+(?:nicht\s+mehr\s+(?:vegetarier\w*|veganer\w*|vegan|
                verheiratet|verlobt|mit\s+\w+\s+zusammen|mit\s+\w+|fan\s+\w+\s+\w+|fan|
                mitglied\s+\w+\s+\w+|bei\s+\w+|zusammen|single|schwanger|raucher\w*|katholisch|
                muslim\w*)|kein(?:e)?\s+(?:vegetarier\w*|veganer\w*|fan|mitglied|raucher\w*|
                single)\s+mehr))"""),
        ),
        _Rule(
            _LAPSE,
            _rx(r"""\bich\s+(?P<t>(?:esse|trinke|wohne|lebe|arbeite|rauche|spiele|mag|höre|fahre|
                treibe|nehme|gehe|date|benutze|nutze)\s+(?:[^.!?;,]+?\s+)?(?:nicht\s+mehr|
                kein(?:e|en)?\s+[^.!?;,]+?\s+mehr))"""),
        ),
    ),
    marker=_rx(r"""(?:\b(?:die|der|das)\s+alte\b|\beigentlich|\btatsächlich|\bkorrektur|\bupdate|\bich\s+habe\s+mich\s+geirrt|
        ,\s*nicht\b|

        \bnicht\s+mehr|\bkein\w*\s+\w+\s+mehr|\bjetzt\b|\binzwischen|\bmittlerweile|\bnun\b|
        \bdas\s+ist\s+(?:veraltet|überholt|nicht\s+mehr\s+aktuell|nicht\s+mehr\s+richtig|falsch)|
        \bhat\s+sich\s+geändert)"""),
    changes=(
        _rx(r"""\bmeine?\s+[\w-]+\s+(?:ist|lautet)\s+(?:jetzt|nun|ab\s+sofort)\s+(?P<new>[^,;!?]+?)
            (?=\s*(?:[,;!?]|\.(?:\s|$)|$))"""),
        _rx(
            r"\bnicht\s+mehr\s+(?:in|bei|für)\s+[^,;!?]+?,?\s+sondern\s+(?:in|bei|für)\s+(?P<new>[^,;!?–-]+?)(?=\s*(?:[,;!?–-]|\.(?:\s|$)|$))"
        ),
        _rx(
            r"\b(?:die|der|das)\s+neue\s+(?:ist|lautet)\s+(?P<new>[^,;!?]+?)(?=\s*(?:[,;!?]|\.(?:\s|$)|$))"
        ),
        _rx(
            rf"\b(?:ich\s+)?bin\s+(?:ich\s+)?(?:jetzt\s+|inzwischen\s+|mittlerweile\s+)?nach\s+{_DE_V}\s+(?:um)?gezogen\b"
        ),
        _rx(
            rf"\bich\s+(?:wohne|lebe|arbeite)\s+(?:jetzt|inzwischen|mittlerweile|nun)\s+(?:in|bei|für)\s+{_DE_V}"
        ),
        _rx(
            rf"""\b(?:wohne|lebe|arbeite|studiere)\s+ich\s+(?:jetzt\s+|inzwischen\s+|nun\s+|
            mittlerweile\s+)?(?:in|bei|für)\s+{_DE_V}"""
        ),
        _rx(rf"\b(?:jetzt|inzwischen|nun)\s+(?:ist\s+es|lautet\s+(?:sie|er|es))\s+{_DE_V}"),
        _rx(rf"\b(?:sie|er|es)\s+(?:ist|lautet)\s+(?:jetzt|nun|inzwischen)\s+{_DE_V}"),
        _rx(rf"\b(?:meine\s+neue|mein\s+neuer|mein\s+neues)\s+[\w-]+\s+(?:ist|lautet)\s+{_DE_V}"),
        # "mein Geburtstag ist am 3. Mai, nicht am 5."
        _rx(
            r"""\b(?:mein|meine)\s+[\w -]{1,30}?\s+(?:ist|sind|lautet)\s+(?P<new>[^;,]+?)
            \s*,\s*nicht\b"""
        ),
        _rx(
            rf"\bich\s+(?:esse|trinke|nutze|benutze|fahre|spiele|höre)\s+(?:jetzt|inzwischen|nun)\s+{_DE_V}"
        ),
        _rx(
            rf"\b(?:jetzt|inzwischen|nun)\s+(?:esse|trinke|nutze|benutze|fahre|spiele|höre)\s+ich\s+{_DE_V}"
        ),
    ),
    temporal=_rx(r"""\b(?:gestern|vorgestern|heute|vorhin|letzte\s+woche|letzter\s+woche|
        am\s+(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)(?:abend|morgen)?|
        letzten\s+(?:monat|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)|
        letztes\s+(?:wochenende|jahr|mal)|am\s+wochenende|vor\s+(?:einer|einem|zwei|drei|ein\s+paar|
        \d+)\s+\w+|(?:unserem|unserer|dem|der)\s+(?:letzten|vorigen|vorherigen|ersten)\s+
        (?:gespräch|unterhaltung|sitzung|chat)|gestrige\w*|neulich|diese\s+woche)\b"""),
    speech=_rx(r"""\b(?:gesagt|erzählt|erwähnt|geschrieben|gesprochen|geteilt|mitgeteilt|
        gespräch\w*|unterhaltung|sitzung|chat|nachrichten?|anvertraut)\b"""),
    quantifier=_rx(r"\b(?:alles|alle|jede\w*|sämtliche\w*|irgendwas|gesamte\w*|ganze\w*)\b"),
    inference=_rx(r"""\b(?:gefolgert|geschlossen|geschlussfolgert|vermut\w*|geraten|erraten|
        angenommen|annahme\w*|schlüsse|schluss|rückschlüsse|abgeleitet|zusammengereimt|
        interpretiert|spekuliert)\b"""),
    conjunction=_rx(r"""(?:\s(?:und|sowie|plus|als\s+auch)\s|,\s*)
        (?!(?:ich|mir|mich|du|er|sie|dann|dass|was)\b)(?=\w)"""),
    topic=_rx(r"""\b(?:liebesleben|privatleben|krankengeschichte|gesundheitsdaten|finanzdaten|
        \w+themen|\w+angelegenheiten|\w+sachen)\b"""),
    leading=_rx(r"^(?:über|von)\s+"),
    lapse_strip=_rx(
        r"^(?:bin\s+nicht\s+mehr|bin\s+kein(?:e)?|mag)\s+|\s+nicht(?:\s+mehr)?$|\s+mehr$"
    ),
    external=_rx(r"""^(?:mein|meine|meinen|meinem|alle\s+meine|unser\w*)\s+(?:[\w-]*konto|profil|
        kalender|entw[üu]rfe?|datei(?:en)?|ordner|dokumente?|fotos?|bilder|videos?|apps?|laptop|
        computer|rechner|bestellung(?:en)?|warenkorb|abo(?:nnement)?s?|posts?|beiträge?|
        kommentare?|wecker|browserverlauf)\b
      |(?:\bvom|\bvon\s+(?:der|dem|meinem|meiner)|\baus\s+(?:der|dem|meinem|meiner)|
        \bauf\s+(?:dem|der|meinem|meiner)|\bim|\bin\s+(?:der|dem|meinem|meiner))\s+(?:[\w-]+\s+)?
        (?:[\w-]*liste|handy|telefon|computer|laptop|rechner|kalender|ordner|desktop|kühlschrank|
        sofa|cloud|postfach|festplatte|galerie|seite|profil)\b"""),
    trailing=_rx(r"""(?:\s+(?:bitte|auch|danke|jetzt|mehr)|[\s,:;.!?]+)$"""),
    lexicon={
        **dict.fromkeys(
            "gesundheit medizin medikament arzt arzt arztin krankenhaus klinik krankheit diagnose "
            "therapie therapeut psych schwanger allergie depression angst zahnarzt rezept "
            "kranken".split(),
            "health",
        ),
        **dict.fromkeys(
            "geld gehalt lohn bank schulden hypothek kredit finanz karte steuer einkommen "
            "erspart konto ausgabe".split(),
            "finances",
        ),
        **dict.fromkeys(
            "familie mutter vater mama papa bruder schwester sohn tochter kind oma opa onkel "
            "tante cousin".split(),
            "family",
        ),
        **dict.fromkeys(
            "adresse haus wohnung wohne wohnort nachbar stadt umzug gezogen strasse".split(),
            "home",
        ),
        **dict.fromkeys("telefon nummer handy mail email kontakt".split(), "contact"),
        **dict.fromkeys(
            "arbeit job beruf chef firma buro stelle kolleg arbeitgeber".split(), "work"
        ),
        **dict.fromkeys(
            "partner partnerin freund freundin ex beziehung ehe scheidung liebes verlobt".split(),
            "relationships",
        ),
        **dict.fromkeys("passwort kennwort pin code zugang reisepass".split(), "credentials"),
        **dict.fromkeys(
            "religion religios kirche glaube gott beten gebet politi partei gewerkschaft demo "
            "wahl buddhis meditation".split(),
            "beliefs",
        ),
        **dict.fromkeys(
            "anwalt anwaltin gericht klage prozess polizei strafe bussgeld richter".split(),
            "legal",
        ),
        **dict.fromkeys("reise flug hotel urlaub flughafen".split(), "travel"),
        **dict.fromkeys(
            "mag musik essen vegetarier veganer sport lieblings hobby".split(), "preferences"
        ),
    },
)

_TABLES: tuple[_Language, ...] = (_EN, _ES, _FR, _DE)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})

# English chat shorthand, spelled out before an English turn is read ("im not
# at boba bus anymore", "dont keep my pin pls"): the tables then need one
# spelling of each word. Only words no other word is written as; German "im"
# and Spanish "u" are never touched (English turns only).
_CHAT = {
    "im": "i'm", "ive": "i've", "ill": "i'll", "dont": "don't", "doesnt": "doesn't",
    "didnt": "didn't", "cant": "can't", "wont": "won't", "isnt": "isn't", "wasnt": "wasn't",
    "arent": "aren't", "havent": "haven't", "shouldnt": "shouldn't", "wouldnt": "wouldn't",
    "thats": "that's", "whats": "what's", "theres": "there's", "youre": "you're",
    "u": "you", "ur": "your", "r": "are", "pls": "please", "plz": "please", "plss": "please",
    "abt": "about", "bc": "because", "cuz": "because", "coz": "because", "w/": "with",
    "smth": "something", "sth": "something", "tho": "though", "thru": "through",
    "rn": "right now", "wanna": "want to", "gotta": "have to", "yr": "your", "ppl": "people",
}  # fmt: skip
_CHAT_WORD = re.compile(
    r"(?<![\w'])("
    + "|".join(re.escape(w) for w in sorted(_CHAT, key=len, reverse=True))
    + r")(?![\w'])",
    re.IGNORECASE,
)


def spelled_out(turn: str) -> str:
    """An English turn with its chat shorthand spelled out (see ``_CHAT``):
    the form English targets are read from."""
    return _CHAT_WORD.sub(lambda m: _CHAT[m.group(1).casefold()], turn)


def detect(text: str, context: str | None = None) -> ForgetRequest | None:
    """Read one user turn and return the forget request it makes, or None.

    Each language table is tried, the language whose function words dominate
    the turn first; within a table the first matching rule wins, replacements
    before deletions before lapses. A match yields the target span (what to
    forget, trimmed of courtesies), the new value of a replacement, the
    request kind (see :func:`classify`) and the topic categories of the
    target. Turns that only mention forgetting or deleting return None.
    ``context`` (the user's previous turn) names the object of a request
    that points back at it ("yes. please bin it").
    """
    if not text or not text.strip():
        return None
    raw = text.translate(_APOSTROPHES)
    ranked = _ranked(raw)
    english = spelled_out(raw)
    for lang in ranked:
        turn = english if lang.code == "en" else raw
        found = _replacement(lang, turn) or _rule_match(lang, turn)
        # "strike the second paragraph of my letter": an edit, not a memory
        if found is not None and not idioms.edits_a_text(found.target):
            return _with_second(lang, turn, found)
    # Words the tables do not know ("bin it", "Weg damit"): the turn's own
    # language only, so an English idiom never reads a French turn.
    lang = ranked[0]
    turn = english if lang.code == "en" else raw
    fixed = idioms.correction(turn, lang.code)
    if fixed is not None:  # "I read it wrong, it's the 19th, not the 12th"
        return ForgetRequest("replacement", lang.code, fixed[0], new_value=fixed[1])
    over = idioms.lapsed(turn, lang.code)
    if over is not None:  # "I'm over the milky stuff", "FitX hab ich gekündigt"
        return ForgetRequest(
            "factual", lang.code, over, categories=topic_categories(over, lang.code)
        )
    dismissed = idioms.conclusion(turn)
    if dismissed is not None:  # "quítate esa idea de la cabeza"
        return ForgetRequest("inferential", lang.code, dismissed)
    target = idioms.find(turn, lang.code, context)
    if target is None or lang.external.search(target):
        return None
    # "tues night", "Samstagnacht": a time alone names what was said then;
    # "the verdict you gave me": a conclusion.
    if idioms.names_conclusion(target):
        kind = "inferential"
    elif len(target.split()) <= 5 and window(target, 0.0) is not None:
        kind = "temporal"
    else:
        kind = classify(target, lang.code)
    return ForgetRequest(
        kind=kind,
        language=lang.code,
        target=target,
        categories=topic_categories(target, lang.code),
    )


def points_back(text: str) -> bool:
    """True when a turn ``detect`` found no request in asks to forget
    something it names only by a pronoun or not at all ("yes. please bin
    it"): its object was said in the user's previous turn (pass that as
    ``detect``'s ``context``)."""
    turn = text.translate(_APOSTROPHES)
    code = _ranked(turn)[0].code
    turn = spelled_out(turn) if code == "en" else turn
    return bool(turn.strip()) and idioms.dangling(turn, code)


def _with_second(lang: _Language, turn: str, first: ForgetRequest) -> ForgetRequest:
    """A deletion whose turn goes on to ask for another ("I'm not into K-pop
    anymore, you can drop the Stray Kids stuff") names both targets."""
    if first.kind in ("replacement", "temporal", "inferential"):
        return first
    at = turn.casefold().find(first.target.casefold())
    rest = turn[at + len(first.target) :] if at >= 0 else ""
    second = _rule_match(lang, rest) if rest.strip() else None
    if second is None or second.kind in ("replacement", "temporal", "inferential"):
        return first
    target = f"{first.target} and {second.target}"
    return ForgetRequest(
        kind="compositional" if first.kind != "category" else "category",
        language=first.language,
        target=target,
        categories=first.categories | second.categories,
        completion=first.completion and second.completion,
    )


def classify(target: str, language: str = "en") -> str:
    """Kind of a deletion request from its target span (never "replacement").

    Order matters: an inference word ("what you figured out about ...") makes
    it inferential; a time expression with a reference to speech or to the
    whole conversation ("what I told you last weekend", "yesterday's chat")
    makes it temporal; a quantifier or a topic noun phrase ("everything about
    my health", "my love life") makes it a category; a list of several things
    ("my address and my phone number") is compositional; otherwise factual.
    """
    lang = _BY_CODE[language]
    if lang.inference.search(target):
        return "inferential"
    has_time = bool(lang.temporal.search(target)) or window(target, 0.0) is not None
    about = ABOUT_TOPIC.search(target)
    # "anything about my finances from last month": a topic, dated ("what I
    # said about work yesterday" is what was said then)
    if (
        has_time
        and about
        and not lang.speech.search(target)
        and topic_categories(about.group(1), language)
    ):
        return "category"
    if has_time and (lang.speech.search(target) or lang.quantifier.search(target)):
        return "temporal"
    if has_time and _SAID_THEN.match(target):
        return "temporal"
    if lang.quantifier.search(target) or lang.topic.search(target):
        return "category"
    if lang.conjunction.search(target):
        return "compositional"
    return "factual"


# "... about X": the topic a request names (group 1), in four languages.
ABOUT_TOPIC = re.compile(
    r"\b(?:about|regarding|concerning|sobre|acerca\s+de|sur|à\s+propos\s+de|über)\s+(.+)$",
    re.IGNORECASE,
)
# What was said at a time, not a thing dated then ("my appointment on Friday").
_SAID_THEN = re.compile(
    r"""^(?:what|lo\s+que|lo\s+del?|ce\s+que|was|das\s+von|
    that\s+(?:[\w'-]+\s+){0,2}(?:rant|chat|conversation|talk|spiral|message|vent))\b""",
    re.IGNORECASE | re.VERBOSE,
)


def topic_categories(text: str, language: str = "en") -> frozenset[str]:
    """Topic categories of a span, from lexicons and no model.

    English spans use ``unrecall.recall.categories``. Other languages use
    their own small lexicon of accent-free word prefixes (salud, santé,
    Gesundheit -> health) plus the English lexicon for loanwords only (PIN,
    email, IBAN): English stems run over foreign words misfire ("hat" would
    read as "hate").
    """
    if language == "en":
        return frozenset(english_categories(text))
    lexicon = _BY_CODE[language].lexicon
    tokens = words(normalize(text))
    found = set(english_categories(" ".join(t for t in tokens if t in _LOANWORDS)))
    if lexicon:
        for word in tokens:
            for prefix, category in lexicon.items():
                if word == prefix or (len(prefix) >= 4 and word.startswith(prefix)):
                    found.add(category)
    return frozenset(found)


_BY_CODE: dict[str, _Language] = {lang.code: lang for lang in _TABLES}
# English words used as-is in Spanish, French and German personal facts.
_LOANWORDS = frozenset(
    "pin iban email mail password passwort login username token otp 2fa job partner ex "
    "hotel sport code whatsapp telegram paypal bonus startup team".split()
)


def language_of(text: str) -> str:
    """The language (one of :data:`LANGUAGES`) whose function words dominate
    ``text``; English on a tie."""
    return _ranked(text)[0].code


def _ranked(turn: str) -> list[_Language]:
    # Function-word votes order the tables; ties keep English first.
    tokens = re.findall(r"[\w']+", turn.casefold())
    score = {lang.code: sum(tok in lang.stopwords for tok in tokens) for lang in _TABLES}
    return sorted(_TABLES, key=lambda lang: -score[lang.code])


_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf]")


def _clean(span: str, lang: _Language) -> str:
    span = _EMOJI.split(span)[0]  # "the tama thing 💀💀 he has a gf"
    span = span.strip(" \t\n,;:.!?¿¡\"'—–-")
    for _ in range(3):  # several fillers may stack: "my PIN too please"
        previous = span
        span = lang.leading.sub("", span)
        span = lang.trailing.sub("", span).strip()
        if span == previous:
            break
    return span


def _rule_match(lang: _Language, turn: str) -> ForgetRequest | None:
    for rule in lang.rules:
        m = _search(rule, turn)
        if m is None:
            continue
        groups = m.groupdict()
        fronted = groups.get("t") or ""
        if rule.hint == _FRONTED and (
            # an English "forget it" may be "never mind"; "oublie-le" always has an object
            not (lang.code != "en" or _OWNED_OR_SAID.search(fronted) or _STORAGE_TALK.search(turn))
            or _CLAUSE_START.match(fronted)  # "I lost my keys again, forget it": never mind
            or _ANY_FORGET.search(fronted)  # the request itself, not its object
        ):
            continue
        if groups.get("p"):
            found = _antecedent(lang, turn, m)
            if found is not None:
                return found
            continue
        target = groups.get("t") or groups.get("t2") or groups.get("t3") or ""
        quoted = _QUOTED_SPAN.search(target)
        # A quoted item is the target, whatever list the turn says it is in.
        if quoted:
            target = (quoted.group(1) or quoted.group(2)).strip(" .,;:!?")
        else:  # an opening quote closed after the target's end: 'the "Workshop.'
            target = _clean(re.split(r"[\"“‘«„]", target)[-1] or target, lang)
        if not target or target.casefold() in _PRONOUNS:
            continue  # "I'm not keen on it": a later rule may name "it"
        new_value = groups.get("new")
        if rule.hint == _REPLACE and new_value and _CALLED_OFF.search(turn, m.start()):
            continue  # "the plan to switch her from A to B was withdrawn"
        if rule.hint == _REPLACE and new_value:
            kind = "replacement"
            new_value = _clean(new_value, lang)
        elif rule.hint == _INFER:
            kind, new_value = "inferential", None
            target = re.sub(
                r"^(?:anything|things|stuff|nada|rien|nichts)\s+(?:about|regarding|sobre|de|sur|über)\s+",
                "",
                target,
                flags=re.IGNORECASE,
            )
        elif rule.hint in (_LAPSE, _DONE):
            kind, new_value = "factual", None
            target = lang.lapse_strip.sub("", target) or target
        else:
            if not _MEMORY_PHRASE.search(turn) and (
                lang.external.search(target) or (rule.hint != _FRONTED and _rhetorical(turn, m))
            ):
                continue
            kind, new_value = classify(target, lang.code), None
        if target.casefold() in _PRONOUNS or target.split(",")[0].casefold() in _PRONOUNS:
            continue
        return ForgetRequest(
            kind=kind,
            language=lang.code,
            target=target,
            new_value=new_value,
            categories=topic_categories(target, lang.code),
            completion=rule.hint == _DONE,
        )
    return None


def _replacement(lang: _Language, turn: str) -> ForgetRequest | None:
    # A change clause with a new value counts only next to a correction
    # marker ("actually", "anymore", "that's outdated"), so that plain news
    # such as "I moved to Lisbon in 2019" is not mistaken for a correction.
    # an aside in parentheses ("la de la U, no mi prima") tells people apart
    if not lang.marker.search(re.sub(r"\([^)]*\)", " ", turn)):
        return None
    for change in lang.changes:
        # A negated change states what no longer holds: "ya no uso Android"
        # is a lapse, not a new value; the next occurrence may be the new one.
        m = next(
            (c for c in change.finditer(turn) if not _NEGATED.search(turn, 0, c.start())), None
        )
        if m is None or _CALLED_OFF.search(turn, m.start()):
            continue  # "the plan to switch her from A to B was withdrawn"
        new_value = _clean(m.group("new"), lang)
        if not new_value or new_value.casefold() in _NOT_VALUES:
            continue  # "it's useless now" judges the old value, names no new one
        old = _old_value(lang, turn, m)
        return ForgetRequest(
            kind="replacement",
            language=lang.code,
            target=old or _slot_phrase(lang, m),
            new_value=new_value,
            categories=topic_categories(turn[: m.end()], lang.code),
            slot=old is None,
        )
    return None


def _old_value(lang: _Language, turn: str, change: re.Match[str]) -> str | None:
    # The replaced value when the turn names it: a lapse ("not vegetarian
    # anymore") or a possessive slot before the change ("my number ...").
    for rule in lang.rules:
        if rule.hint != _LAPSE:
            continue
        m = _search(rule, turn)
        if m is not None and m.start() < change.start():
            return _clean(lang.lapse_strip.sub("", m.group("t")), lang)
    was = _WAS_NOT.search(turn, 0, change.start("new"))  # "my email isn't A anymore, it's B"
    if was is not None:
        return _clean(was.group("old"), lang)
    rejected = _REJECTED.search(turn, change.start("new"))  # "X now, not Y anymore"
    if rejected is not None:
        return _clean(rejected.group("old"), lang)
    slot = _SLOT.search(turn[: change.start("new")])
    # "my dad is on 150 mg now": a person is no value; the slot is what the
    # clause says of them ("my dad is on"), read from the change itself
    if slot is not None and not names_a_person(slot.group(0)):
        return _clean(_NEW_ADJECTIVE.sub("", slot.group(0)), lang)
    return None


# A change said and then called off changes nothing.
_CALLED_OFF = re.compile(
    r"\b(?:was|were|got|has\s+been|have\s+been)\s+(?:withdrawn|cancell?ed|called\s+off|dropped|"
    r"scrapped|shelved|rejected)\b|\b(?:fell\s+through|didn't\s+happen|not\s+going\s+ahead|"
    r"stays?\s+(?:as\s+is|the\s+same|where\s+(?:it|he|she|they)\s+(?:is|are)))\b",
    re.IGNORECASE,
)
_WAS_NOT = re.compile(
    r"\b(?:isn't|is\s+not|aren't|are\s+not)\s+(?P<old>[^,;!?]+?)\s+any\s*(?:more|longer)\b",
    re.IGNORECASE,
)
_REJECTED = re.compile(
    r",\s*(?:not|no|pas|nicht|nicht\s+mehr)\s+(?P<old>[^.!?;,]+?)(?:\s+(?:any\s*more|any\s+longer|"
    r"ya|plus|mehr))?(?=\s*[.!?;,]|$)",
    re.IGNORECASE,
)
# A possessive noun phrase up to the verb that states its new value:
# "my email has changed", "mi número cambió", "meine Adresse hat sich geändert".
_SLOT = re.compile(
    r"""\b(?:my|mi|mis|mon|ma|mes|mein|meine|meinen)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+
    (?=\s*(?:,|:|—|-\s)|\s+(?:is|are|has|have|changed|goes|go|works|lives|drives|plays|uses|
    es|son|cambi[oó]|ha|a|est|ist|hat|lautet|changed)\b)""",
    re.IGNORECASE | re.VERBOSE,
)
# "my new address is X" replaces "my address": the adjective is not the slot.
_NEW_ADJECTIVE = re.compile(
    r"(?<=\s)(?:new|nuevo|nueva|nuevos|nuevas|nouveau|nouvel|nouvelle|neue|neuer|neues|neuen)\s+",
    re.IGNORECASE,
)


# An explicit reference to the assistant's memory settles that a request is
# about memory, whatever the object looks like.
_MEMORY_PHRASE = re.compile(
    r"""\b(?:your|tu|ta|votre|deinem|deinen|ihrem)\s+(?:memory|memories|records?|notes|files?|
    memoria|registros?|notas|m[ée]moire|notes|gedächtnis|speicher|notizen)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# A bare imperative answered by itself is rhetorical ("Forget my umbrella? Never!");
# a real question-form request has a modal ("could you forget my ...?").
_MODAL = re.compile(
    r"""\b(?:can|could|would|will|mind|puedes|podr[ií]as?|pueden|peux|pourrais|pouvez|
    pourriez|kannst|könntest|würdest|können|könnten)\b|¿""",
    re.IGNORECASE | re.VERBOSE,
)


def _rhetorical(turn: str, m: re.Match[str]) -> bool:
    name = next(g for g in ("t", "t2", "t3") if m.groupdict().get(g))
    after = turn[m.end(name) :].lstrip()
    return after.startswith("?") and not _MODAL.search(turn, 0, m.end(name))


# What makes "forget it" a request about memory and not "never mind": the
# turn speaks of keeping or storing, or the antecedent is something said.
_STORAGE_TALK = re.compile(
    r"\b(?:stor(?:e|ed|ing)|keep|kept|sav(?:e|ed)|memor\w*|record\w*|written\s+down|"
    r"on\s+file|anywhere|in\s+here|floating\s+around|sitting\s+there)\b",
    re.IGNORECASE,
)
_POSSESSIVE_NP = re.compile(
    r"\b(?:my|our)\s+(?:[\w'-]+\s+){0,2}?[\w'-]+"
    r"(?=\s+(?:in|on|at|to|for|here|there|with|from|is|was)\b|\s*[,.!?;:]|$)",
    re.IGNORECASE,
)
_SAID_NP = re.compile(
    r"\b(?:the\s+)?(?:things?|stuff|bits?|everything|what)\s+(?:that\s+)?i\s+(?:told|said|"
    r"mentioned|shared)\b[^.!?;]*",
    re.IGNORECASE,
)


def _antecedent(lang: _Language, turn: str, m: re.Match[str]) -> ForgetRequest | None:
    """Resolve "forget it / them / all of that" to what the turn named before
    it: something said at a time ("the stuff I told you on Saturday"), which
    makes the request temporal, or a possession ("my PIN")."""
    if lang.code != "en":
        return None
    before = turn[: m.start("p")]
    said = list(_SAID_NP.finditer(before))
    if said:
        phrase = said[-1].group(0).strip(" ,.")
        if lang.temporal.search(phrase):
            return ForgetRequest("temporal", lang.code, phrase, categories=frozenset())
    if not _STORAGE_TALK.search(turn):
        return None  # "I lost my keys, forget it": never mind, not a request
    owned = list(_POSSESSIVE_NP.finditer(before))
    if not owned:
        return None
    target = _clean(owned[-1].group(0), lang)
    return ForgetRequest(
        kind=classify(target, lang.code),
        language=lang.code,
        target=target,
        categories=topic_categories(target, lang.code),
    )


# A fronted "object" that is a clause of its own ("I lost my keys, forget it").
_CLAUSE_START = re.compile(
    r"^\s*(?:(?:oh|and|so|also|ok|okay|well|um|but)[\s,]+)*(?:i|we|he|she|they|it|yo|je|j'|ich|wir)"
    r"\b(?!\s+(?:told|said|mentioned|shared|gave|typed|wrote|sent)\b)",
    re.IGNORECASE,
)
_ANY_FORGET = re.compile(
    r"\b(?:forget|delete|erase|remove|wipe|purge|scratch|olvid|borr|elimin|oubli|effac|supprim|"
    r"vergiss|l[öo]sch)",
    re.IGNORECASE,
)
# A fronted object that is the user's or was said to the assistant.
_OWNED_OR_SAID = re.compile(
    r"\b(?:my|our|mine|me|i|i've|i'd|i'm|you've|your|mi|mis|me|te|mon|ma|mes|je|j'|t'|ta|tes|"
    r"mein\w*|ich|dir|dein\w*)\b",
    re.IGNORECASE,
)
_QUOTED_SPAN = re.compile(r"[\"“‘«„]([^\"“”‘’«»„]{3,200}?)[\"”’»“]|(?<!\w)'([^']{3,200}?)'(?!\w)")
_NOT_VALUES = frozenset(
    """useless wrong outdated old invalid different gone over done fine ok okay irrelevant
    obsolete expired void dead stale incorrect pointless moot""".split()
)
_PRONOUNS = frozenset(
    "it that this them those these one both ello eso esto ça cela ceci es das".split()
)


# Ends with a negation right before a change clause ("ya no |", "not |", "nicht |").

_NEGATED = re.compile(r"(?:\bno|\bnot|\bne|\bn'|\bnicht|\bnie)\s*$", re.IGNORECASE)

_PRONOUN_SLOT = re.compile(
    r"^(?:it's|it\s+is|its|now\s+it's|now\s+it\s+is|the\s+new\s+one\s+is|es|son|c'est|"
    r"ist\s+es|es\s+ist|sie\s+ist|er\s+ist|lautet\s+\w+|\w+\s+lautet)\b.*$",
    re.IGNORECASE,
)
_THAT = {"en": "that", "es": "eso", "fr": "ça", "de": "das"}


def _slot_phrase(lang: _Language, change: re.Match[str]) -> str:
    # No old value named: the change clause minus its new value names the
    # slot ("I moved to", "j'ai déménagé à"); "it's now X" refers back: "that".
    phrase = _clean(change.string[change.start() : change.start("new")], lang)
    phrase = re.sub(r"\b(?:now|ahora|maintenant|désormais|jetzt|nun|inzwischen)\b", "", phrase)
    phrase = re.sub(r"\s+", " ", phrase).strip()
    if not phrase or _PRONOUN_SLOT.match(phrase):
        return _THAT[lang.code]
    return phrase

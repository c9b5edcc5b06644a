"""Read stage: is this user turn a request to forget, correct or replace
something, and of which kind?

One reader for every way a request arrives (a chat turn given to
``Memory.add``, ``Memory.forget``, the CLI). The learned detector decides
(``detector``, trained on turns from many authors); the exact rules of
``dialogue.requests`` are one of its features and, when they parse the turn,
they also give the span naming the fact, which the plan stage uses as a
literal fast path. A rules' reading that names its fact exactly (an
identifier, a quoted value, a finished task) passes without the detector.
A turn that only points back ("yes. bin it") is read with the user's
previous turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unrecall.dialogue.requests import ForgetRequest, detect, language_of, points_back
from unrecall.pipeline.detector import load
from unrecall.recall.identifiers import extract


@dataclass(frozen=True)
class Reading:
    """What the reader made of one turn.

    ``request`` is the detector's verdict and ``p`` its probability;
    ``kind`` one of the six request kinds (None for a non-request);
    ``parse`` the rules' reading with the span naming the fact, when they
    read one; ``previous`` the earlier user turn the request points back to,
    when it was read with it.
    """

    request: bool
    kind: str | None
    p: float
    language: str
    parse: ForgetRequest | None = None
    previous: str | None = None


_QUOTED = re.compile(r"[\"“‘«„'][^\"”’»“']{2,}[\"”’»“']")


def exact(parse: ForgetRequest, text: str) -> bool:
    """Whether the rules' reading names its fact exactly: by an identifier
    or a number, by a quoted value, or as a task the user says is done ("I
    finished the abstract"). Such a reading is a fast path past the
    detector; any other needs the detector's yes."""
    return bool(extract(parse.target)) or parse.completion or bool(_QUOTED.search(text))


def read(text: str, previous: str | None = None) -> Reading:
    """Read one user turn; ``previous`` is the user's turn before it, used
    only when this one points back to it."""
    parse, context = detect(text), None
    if parse is None and previous is not None and points_back(text):
        context = previous
        parse = detect(text, context)
    detector = load()
    seen = detector.read(text, context, (parse.kind,) if parse else ("none",))
    request = seen.p_request >= detector.bar(parse is not None) or (
        parse is not None and exact(parse, text)
    )
    if not request:
        return Reading(False, None, seen.p_request, language_of(text))
    if parse is not None and parse.kind == "replacement" and seen.kind != "replacement":
        # The rules took a change clause for a new value ("please forget that
        # I live in Porto": "forget" marks a correction, "I live in" a
        # change); the learned reader, which reads the whole turn, says it
        # asks for a deletion: the turn is read as it describes its fact.
        parse = None
    language = parse.language if parse else language_of(text)
    kind = parse.kind if parse else seen.kind
    return Reading(True, kind, seen.p_request, language, parse, context)

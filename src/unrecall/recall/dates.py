"""Dates in statements.

``latest_date`` gives the latest date a statement is qualified with ("since
March 2023"), to order date-qualified facts: when a superseding statement is
dated before the fact it would replace, the later-dated state stays current.
``day_spans`` finds days of a month ("the 12th of March", "20 de
septiembre", "le 12 mars", "am 12. März"), so a corrected day can replace
the one a memory holds.
"""

from __future__ import annotations

import re

_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for m in names
}
_ISO = re.compile(r"\b(19\d\d|20\d\d)-(\d{1,2})(?:-(\d{1,2}))?\b")
_MONTH_YEAR = re.compile(
    r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?\s+(?:\d{1,2},?\s+)?"
    r"(19\d\d|20\d\d)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?<![\d-])(19\d\d|20\d\d)(?![\d-])")


def latest_date(text: str) -> tuple[int, int, int] | None:
    """The latest (year, month, day) mentioned in ``text``; unknown parts are 0."""
    found: list[tuple[int, int, int]] = []
    for m in _ISO.finditer(text):
        found.append((int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)))
    for m in _MONTH_YEAR.finditer(text):
        found.append((int(m.group(2)), _MONTHS[m.group(1).casefold()], 0))
    for m in _YEAR.finditer(text):
        found.append((int(m.group(1)), 0, 0))
    return max(found) if found else None


# Month names and abbreviations in en/es/fr/de, as one alternation.
DAY_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|"
    r"noviembre|diciembre|janvier|f[ée]vrier|mars|avril|mai|juin|juillet|ao[uû]t|septembre|"
    r"octobre|novembre|d[ée]cembre|januar|februar|m[äa]rz|juni|juli|oktober|dezember"
)
_DAY = re.compile(
    rf"""\b(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:of\s+|de\s+)?(?:{DAY_MONTHS})\b
    |\b(?:{DAY_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b
    |\bthe\s+\d{{1,2}}(?:st|nd|rd|th)\b""",
    re.IGNORECASE | re.VERBOSE,
)


def day_spans(text: str) -> list[str]:
    """The days of a month ``text`` names, as written, in order."""
    return [m.group(0) for m in _DAY.finditer(text)]

"""The latest date a statement is qualified with ("since March 2023").

Used to order date-qualified facts: when a superseding statement is dated
before the fact it would replace, the later-dated state stays current.
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

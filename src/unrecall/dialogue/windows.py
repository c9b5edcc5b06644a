"""Time windows named in temporal forget requests.

"Forget what I told you last weekend" names a span of time relative to the
moment the request is made. ``window`` turns such a phrase (English,
Spanish, French or German) into ``(start, end)`` epoch seconds in UTC, with
calendar arithmetic from ``datetime``; "our last session" is resolved by the
caller, who knows the sessions. Deterministic: the same phrase at the same
instant always gives the same window.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_DAY = timedelta(days=1)
# "The past 99999999 days" reaches before the calendar: such a window starts
# at its first day (counts are capped, then arithmetic saturates).
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_MAX_COUNT = 100_000_000  # hours: over 11,000 years
_WEEKDAYS = {
    **dict.fromkeys(("monday", "lunes", "lundi", "montag"), 0),
    **dict.fromkeys(("tuesday", "martes", "mardi", "dienstag"), 1),
    **dict.fromkeys(("wednesday", "miercoles", "mercredi", "mittwoch"), 2),
    **dict.fromkeys(("thursday", "jueves", "jeudi", "donnerstag"), 3),
    **dict.fromkeys(("friday", "viernes", "vendredi", "freitag"), 4),
    **dict.fromkeys(("saturday", "sabado", "samedi", "samstag"), 5),
    **dict.fromkeys(("sunday", "domingo", "dimanche", "sonntag"), 6),
}
_ABBREVIATED = {
    "tue": "tuesday", "tues": "tuesday", "weds": "wednesday", "thu": "thursday",
    "thur": "thursday", "thurs": "thursday", "fri": "friday",
}  # fmt: skip
_DE_DAYTIME = r"(?<=tag)(?:nacht|abend|morgen|mittag|nachmittag|vormittag)$"
_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [("january", "enero", "janvier", "januar"), ("february", "febrero", "fevrier", "februar"),
         ("march", "marzo", "mars", "marz"), ("april", "abril", "avril"), ("may", "mayo", "mai"),
         ("june", "junio", "juin", "juni"), ("july", "julio", "juillet", "juli"),
         ("august", "agosto", "aout"), ("september", "septiembre", "septembre"),
         ("october", "octubre", "octobre", "oktober"), ("november", "noviembre", "novembre"),
         ("december", "diciembre", "decembre", "dezember")]
    )
    for name in names
}  # fmt: skip
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "un": 1, "una": 1, "une": 1, "ein": 1, "einem": 1, "einer": 1,
    "two": 2, "couple": 2, "dos": 2, "deux": 2, "zwei": 2,
    "three": 3, "few": 3, "tres": 3, "trois": 3, "drei": 3,
    "four": 4, "cuatro": 4, "quatre": 4, "vier": 4,
    "five": 5, "cinco": 5, "cinq": 5, "funf": 5,
}  # fmt: skip
_UNITS = {
    **dict.fromkeys(("day", "days", "dia", "dias", "jour", "jours", "tag", "tagen", "tage"), 1),
    **dict.fromkeys(("week", "weeks", "semana", "semanas", "semaine", "semaines", "woche",
                     "wochen"), 7),
    **dict.fromkeys(("month", "months", "mes", "meses", "mois", "monat", "monaten"), 30),
}  # fmt: skip

_FOLD = str.maketrans("áéíóúüàâçèêëîïôûäöß", "aeiouuaaceeeiiouaos")
_SESSION = re.compile(
    r"\b(?:last|previous|earlier|our\s+last)\s+(?:session|conversation|chat)|"
    r"\b(?:la\s+)?(?:ultima|anterior)\s+(?:sesion|conversacion|charla)|"
    r"\b(?:sesion|conversacion)\s+(?:anterior|pasada)|"
    r"\b(?:derniere|precedente)\s+(?:session|conversation)|"
    r"\b(?:session|conversation)\s+(?:precedente|derniere)|"
    r"\b(?:letzten|vorherigen|letzte|vorherige)\s+(?:sitzung|gesprach|unterhaltung|chat)",
    re.IGNORECASE,
)


def names_last_session(phrase: str) -> bool:
    """True when the phrase points at the previous conversation session."""
    return bool(_SESSION.search(phrase.casefold().translate(_FOLD)))


def names_weekday(phrase: str) -> bool:
    """True when the phrase names a day of the week ("Friday night"): a day
    that comes back every week, unlike "yesterday"."""
    return any(
        _weekday(w) is not None for w in re.findall(r"\w+", phrase.casefold().translate(_FOLD))
    )


def _weekday(word: str) -> int | None:
    """The weekday a folded word names (0 = Monday), or None. "Samstagnacht",
    "Freitagabend", "tues", "thurs" count; "sat", "sun", "wed" and "mon" do not
    (English and French words of their own)."""
    return _WEEKDAYS.get(_ABBREVIATED.get(word, re.sub(_DE_DAYTIME, "", word)))


def window(phrase: str, at: float) -> tuple[float, float] | None:
    """The ``(start, end)`` a time phrase names, relative to ``at``, or None."""
    text = phrase.casefold().translate(_FOLD)
    now = datetime.fromtimestamp(at, UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = today - timedelta(days=today.weekday())

    def span(start: datetime, end: datetime) -> tuple[float, float]:
        return start.timestamp(), min(end, now).timestamp()

    m = re.search(r"\b(?:past|last)\s+(?:(\w+)\s+)?hours?\b", text)
    if m:  # "in the past hour", "the last two hours"
        return span(_back(now, hours=_count(m.group(1) or "one") or 1), now)
    m = re.search(r"\bbetween\s+(\w+)\s+and\s+(\w+)", text)
    if m and m.group(1) in _WEEKDAYS and m.group(2) in _WEEKDAYS:  # the latest such run
        end = today - timedelta(days=(today.weekday() - _WEEKDAYS[m.group(2)]) % 7)
        start = end - timedelta(days=(_WEEKDAYS[m.group(2)] - _WEEKDAYS[m.group(1)]) % 7)
        return span(start, end + _DAY)
    month = next((_MONTHS[w] for w in re.findall(r"\w+", text) if w in _MONTHS), None)
    if month is not None and re.search(r"\bin\s+\w+", text):  # "back in March": the latest March
        year = today.year if month <= today.month else today.year - 1
        first = datetime(year, month, 1, tzinfo=UTC)
        after = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        return span(first, after)
    if re.search(
        r"\b(?:over|during|at)\s+the\s+weekend|\bthis\s+weekend|\bel\s+finde\b|"
        r"\bel\s+fin\s+de\s+semana\b(?!\s+pasado)|\bpendant\s+le\s+week-?end|\bam\s+wochenende",
        text,
    ):
        saturday = today - timedelta(days=(today.weekday() - 5) % 7)
        return span(saturday, saturday + 2 * _DAY)
    if re.search(r"\blast\s+night|\banoche|\bhier\s+soir|\bgestern\s+abend", text):
        return span(today - _DAY + timedelta(hours=17), today + timedelta(hours=6))
    if re.search(r"\b(?:day\s+before\s+yesterday|anteayer|avant-hier|vorgestern)\b", text):
        return span(today - 2 * _DAY, today - _DAY)
    if re.search(r"\b(?:yesterday|ayer|hier|gestern)\b", text):
        return span(today - _DAY, today)
    if re.search(
        r"\b(?:today|earlier|this\s+(?:morning|afternoon|evening)|tonight|just\s+now|hoy|"
        r"esta\s+(?:manana|tarde)|aujourd'hui|ce\s+(?:matin|soir)|tout\s+a\s+l'heure|heute|"
        r"vorhin|eben)\b",
        text,
    ):
        return span(today, now)
    if re.search(
        r"\blast\s+weekend|\bfin\s+de\s+semana\s+pasado|\bweek-?end\s+dernier|"
        r"\bletzte[sn]?\s+wochenende|\bpasado\s+fin\s+de\s+semana",
        text,
    ):
        saturday = monday - timedelta(days=2)
        return span(saturday, monday)
    if re.search(
        r"\blast\s+week\b|\bsemana\s+pasada|\bsemaine\s+derniere|\bletzte[nr]?\s+woche", text
    ):
        return span(monday - 7 * _DAY, monday)
    if re.search(r"\bthis\s+week\b|\besta\s+semana|\bcette\s+semaine|\bdiese[rn]?\s+woche", text):
        return span(monday, now)
    if re.search(r"\blast\s+month\b|\bmes\s+pasado|\bmois\s+dernier|\bletzte[nr]?\s+monat", text):
        first = today.replace(day=1)
        return span((first - _DAY).replace(day=1), first)
    m = re.search(
        r"\b(?:past|last|ultimos|ultimas|derniers|dernieres|letzten)\s+(\w+)\s+(\w+)", text
    )
    if m and m.group(2) in _UNITS and (n := _count(m.group(1))):
        return span(_back(now, days=n * _UNITS[m.group(2)]), now)
    m = re.search(r"\b(\w+)\s+(?:of\s+)?(\w+)\s+ago\b|\bhace\s+(\w+)\s+(\w+)|\bil\s+y\s+a\s+"
                  r"(\w+)\s+(\w+)|\bvor\s+(\w+)\s+(\w+)", text)  # fmt: skip
    if m:
        groups = m.groups()
        count, unit = next((g, h) for g, h in zip(groups[::2], groups[1::2], strict=True) if g)
        if unit in _UNITS and (n := _count(count)):
            day = _back(today, days=n * _UNITS[unit])
            if _UNITS[unit] == 1:  # "two days ago": that day
                return span(day, day + _DAY)
            half = timedelta(days=_UNITS[unit] // 2)  # "a week ago": around that day
            return span(_back(day, days=half.days), day + half + _DAY)
    if re.search(r"\bthe\s+other\s+day\b|\bel\s+otro\s+dia|\bl'autre\s+jour|\bneulich", text):
        return span(today - 7 * _DAY, today)
    for word in re.findall(r"\w+", text):
        weekday = _weekday(word)
        if weekday is not None:
            back = (today.weekday() - weekday) % 7 or 7
            day = today - timedelta(days=back)
            return span(day, day + _DAY)
    return None


def _back(moment: datetime, *, days: int = 0, hours: int = 0) -> datetime:
    """``days`` and ``hours`` before ``moment``, or the calendar's first
    instant when that is earlier."""
    try:
        return moment - timedelta(days=days, hours=hours)
    except OverflowError:
        return _EARLIEST


def _count(word: str) -> int | None:
    """A count written in digits (ASCII ones: "²" is no count) or in words,
    at most ``_MAX_COUNT``."""
    if word.isascii() and word.isdigit():
        return int(word) if len(word) < 7 else _MAX_COUNT
    return _NUMBERS.get(word)

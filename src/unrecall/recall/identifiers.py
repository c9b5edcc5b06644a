"""Identifiers in text and their canonical keys.

Each identifier found in a memory is indexed under a canonical key such as
``email:alice@acme.io`` or ``phone:+14155550132``, so that any surface form
of it (case, plus-tags, spaces around ``@``, national phone formats, card
number grouping, ``TKT 100`` for ``TKT-100``) finds it, while a look-alike
with a different key (``alice.smith@acme.io``, ``123456``, ``TKT-1000``,
``example.com.uk``) never does: keys are compared for equality only.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

import phonenumbers
from stdnum import iban, luhn


@dataclass(frozen=True)
class Identifier:
    """One identifier occurrence: its kind, canonical key and span."""

    kind: str
    key: str
    start: int
    end: int


_TLDS = frozenset(
    """com org net edu gov mil int io ai co app dev info biz me tv xyz tech online site
    store shop cloud blog news email live pro name mobi asia jobs travel museum""".split()
)
_EMAIL = re.compile(
    r"(?<![\w.+-])([\w.+-]+?)\s{0,2}(?:@|\s\(at\)\s|\s\[at\]\s)\s{0,2}"
    r"([a-z0-9-]+(?:\s{0,2}\.\s{0,2}[a-z0-9-]+)+)(?![\w-]|\.\w)",
    re.IGNORECASE,
)
_URL = re.compile(
    r"\b(?:https?://|www\.)[^\s<>\"')\]]+"
    r"|(?<![\w@.-])(?:[a-z0-9-]+\.)+[a-z]{2,24}/[^\s<>\"')\]]*",  # bare host/path
    re.IGNORECASE,
)
_UUID = re.compile(
    r"\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b", re.IGNORECASE
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b", re.IGNORECASE)
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_SSN = re.compile(r"(?<![\d-])\d{3}[- ]\d{2}[- ]\d{4}(?![\d-])")
_SECRET = re.compile(
    r"\b(?:sk|pk|rk|ghp|gho|ghs|xox[abpr]|AKIA|AIza|glpat)[-_A-Za-z0-9]{10,}\b"
    r"|\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}\b"
)
_HANDLE = re.compile(r"(?<![\w.@])@([A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?)\b")
_PATH = re.compile(r"(?<![\w:/.])(?:~|\.{1,2})?(?:/[\w.-]+)+/?|\b[A-Za-z]:\\(?:[\w.-]+\\?)+")
_TICKET = re.compile(r"(?<![\w-])([A-Za-z]{2,6})([-#_ ]?)(\d{2,})(?![\w-])")
_DOMAIN = re.compile(r"(?<![\w@.-])((?:[a-z0-9-]+\.)+([a-z]{2,24}))(?![\w-]|\.\w)", re.IGNORECASE)
# Serials, passport and licence numbers: letters and digits mixed, no spaces.
_CODE = re.compile(r"(?<![\w-])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{5,23}(?![\w-])")
# Codes of three dashed parts or more, with a capital and a digit:
# PRJ-ATLAS-2024, BOOT-TRK-19 (two parts are tickets, TKT-100).
_DASHED = re.compile(
    r"(?<![\w-])(?=[\w-]*[A-Z])(?=[\w-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+){2,}(?![\w-])"
)
# Clock times in 24-hour or 12-hour form: 14:30 and 2:30 PM are one key.
_TIME = re.compile(
    r"(?<![\w:.])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?(?:\s?([AaPp])\.?[Mm]\.?)?(?![\w:])"
)
# snake_case record ids with a number in them: order_2024_001, user_42_b.
_SNAKE = re.compile(r"(?<![\w-])(?=\w*\d)[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+(?![\w-])")
_NUMBER = re.compile(r"(?<![\w.,-])\d{3,}(?![\w]|[.,]\d)")
_PHONE_RUN = re.compile(r"(?<![\w+])[+(]?\d[\d ().-]{5,}\d(?![\w])")
# Regions tried for numbers written in national form ("020 7946 0958").
_DATE = re.compile(r"^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$")
_DIGIT = re.compile(r"\d")
_MIN_PHONE_DIGITS = 6  # one below the shortest valid number, to be safe
_PHONE_REGIONS = ("GB", "FR", "DE", "ES", "IT", "NL", "IE", "AU", "IN")
# An identifier written in chunks (AB12 CDE, ABCD-EFGH-1234, 3C:71:BF:0A):
# chunks with a digit or in capitals, joined by one separator or space.
_CHUNK = r"(?:[A-Za-z]*\d[A-Za-z0-9]*|[A-Z]+[0-9]*)"
# A space joins chunks unless the next is a lone "I" or "A" (words, not chunks).
_COMPACT_RUN = re.compile(rf"(?<![\w]){_CHUNK}(?:(?:[-:./]| (?![IA]\b)){_CHUNK})*(?![\w])")
_BARE = re.compile(r"^@?[\w][\w.-]*$")


def _email_key(local: str, domain: str, keep_tag: bool = False) -> str:
    local = re.sub(r"\s+", "", local).casefold()
    if not keep_tag:
        local = local.split("+", 1)[0]
    domain = re.sub(r"\s+", "", domain).casefold()
    return f"email:{local}@{domain}"


def _url_keys(url: str) -> list[str]:
    body = re.sub(r"^(?:https?://)?(?:www\.)?", "", url.rstrip(".,;:!?"), flags=re.IGNORECASE)
    host, _, path = body.partition("/")
    host = host.casefold()
    path = path.split("#", 1)[0].rstrip("/")
    keys = [f"url:{host}/{path}" if path else f"url:{host}", f"domain:{host}"]
    return keys


def extract(text: str, region: str = "US") -> list[Identifier]:
    """Every identifier in ``text``, earliest first, spans never overlapping."""
    found: list[Identifier] = []
    # The characters inside an identifier already found: a span is free when
    # none of its characters is taken (each check costs the span's length,
    # not the number of identifiers found so far).
    taken = bytearray(len(text))

    def free(s: int, e: int) -> bool:
        return taken.find(1, s, e) < 0

    def take(s: int, e: int) -> None:
        taken[s:e] = b"\x01" * (e - s)

    def add(kind: str, key: str, s: int, e: int) -> None:
        found.append(Identifier(kind, key, s, e))
        take(s, e)

    def add_phone(number: phonenumbers.PhoneNumber, s: int, e: int) -> None:
        # An extension makes another line: "... 0018 ext 2" is not "... 0018".
        ext = f";ext={number.extension}" if number.extension else ""
        e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        add("phone", f"phone:{e164}{ext}", s, e)
        # Written without a country code elsewhere, the same line still has
        # this national number.
        nsn = phonenumbers.national_significant_number(number)
        found.append(Identifier("phone", f"phone_nsn:{nsn}{ext}", s, e))
        # As written, whatever region the parser guessed ("07700 900123").
        written = re.sub(r"[^A-Za-z0-9]", "", text[s:e]).upper()
        found.append(Identifier("compact", f"compact:{written}", s, e))

    for m in _EMAIL.finditer(text):
        if "." in m.group(2):
            add("email", _email_key(m.group(1), m.group(2)), m.start(), m.end())
            if "+" in m.group(1):  # the tagged address is also an identifier of its own
                tagged = _email_key(m.group(1), m.group(2), keep_tag=True)
                found.append(Identifier("email_tag", "email_tag:" + tagged[6:], m.start(), m.end()))
    for m in _URL.finditer(text):
        host = re.sub(r"^(?:https?://)?", "", m.group(0), flags=re.IGNORECASE).split("/")[0]
        bare = m.group(0)[0].isalnum() and "://" not in m.group(0)
        if bare and host.rsplit(".", 1)[-1].casefold() not in _TLDS | _COUNTRY_TLDS:
            continue  # "notes.txt/..." is not a host
        if free(m.start(), m.end()):
            s, e = m.start(), m.start() + len(m.group(0).rstrip(".,;:!?"))
            for key in _url_keys(m.group(0)):
                found.append(Identifier(key.split(":", 1)[0], key, s, e))
            take(s, e)
    for m in _UUID.finditer(text):
        if free(m.start(), m.end()):
            hexes = m.group(0).replace("-", "").casefold()
            key = f"{hexes[:8]}-{hexes[8:12]}-{hexes[12:16]}-{hexes[16:20]}-{hexes[20:]}"
            add("uuid", f"uuid:{key}", m.start(), m.end())
    for m in _IBAN.finditer(text):
        # The greedy match may run into following words ("... 00 here"):
        # try it whole, then cut back at each space until a valid IBAN.
        cand = m.group(0)
        while cand and not iban.is_valid(cand):
            cand = cand.rsplit(" ", 1)[0] if " " in cand else ""
        if cand and free(m.start(), m.start() + len(cand)):
            add("iban", f"iban:{iban.compact(cand)}", m.start(), m.start() + len(cand))
    for m in _SSN.finditer(text):
        if free(m.start(), m.end()):
            add("ssn", "ssn:" + re.sub(r"\D", "", m.group(0)), m.start(), m.end())
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if free(m.start(), m.end()) and 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            add("card", f"card:{digits}", m.start(), m.end())
    # No valid number in any region has fewer than seven digits with its
    # country code; most texts have none, and the matcher is costly.
    if len(_DIGIT.findall(text)) >= _MIN_PHONE_DIGITS:
        valid = phonenumbers.Leniency.VALID
        for pm in phonenumbers.PhoneNumberMatcher(text, region, leniency=valid):
            if free(pm.start, pm.end):
                add_phone(pm.number, pm.start, pm.end)
    # Numbers in another country's national form ("020 7946 0958"): parse
    # each remaining digit run in a few regions (cheaper than the matcher).
    for m in _PHONE_RUN.finditer(text):
        run = m.group(0)
        if free(m.start(), m.end()) and sum(c.isdigit() for c in run) >= 8 and not _DATE.match(run):
            for reg in _PHONE_REGIONS:
                try:
                    number = phonenumbers.parse(run, reg)
                except phonenumbers.NumberParseException:
                    break
                if phonenumbers.is_valid_number(number):
                    add_phone(number, m.start(), m.end())
                    break
    for m in _SECRET.finditer(text):
        if free(m.start(), m.end()):
            add("secret", f"secret:{m.group(0)}", m.start(), m.end())
    for m in _HANDLE.finditer(text):
        if free(m.start(), m.end()):
            add("handle", f"handle:{m.group(1).casefold()}", m.start(), m.end())
    for m in _PATH.finditer(text):
        if free(m.start(), m.end()) and m.group(0).count("/") + m.group(0).count("\\") >= 2:
            path = m.group(0).rstrip("/\\") or m.group(0)
            add("path", f"path:{path}", m.start(), m.end())
    for m in _DASHED.finditer(text):
        if free(m.start(), m.end()):
            add("code", f"code:{m.group(0).upper()}", m.start(), m.end())
    for m in _TIME.finditer(text):
        hour, minute, half = int(m.group(1)), m.group(2), (m.group(3) or "").casefold()
        if half and not 1 <= hour <= 12:
            continue
        if half:
            hour = hour % 12 + (12 if half == "p" else 0)
        if free(m.start(), m.end()):
            add("time", f"time:{hour:02d}:{minute}", m.start(), m.end())
    for m in _SNAKE.finditer(text):
        if free(m.start(), m.end()):
            add("code", f"code:{m.group(0).upper()}", m.start(), m.end())
    for m in _TICKET.finditer(text):
        prefix, sep, digits = m.groups()
        if free(m.start(), m.end()) and (prefix.isupper() or (sep != "" and sep in "-#_")):
            add("ticket", f"ticket:{prefix.upper()}-{digits}", m.start(), m.end())
            if sep == " " and len(digits) >= 4:  # "PIN 8830" may be a label and a number
                found.append(Identifier("number", f"number:{digits}", m.start(), m.end()))
    for m in _CODE.finditer(text):
        if free(m.start(), m.end()):
            add("code", f"code:{m.group(0).upper()}", m.start(), m.end())
    for m in _DOMAIN.finditer(text):
        if free(m.start(), m.end()) and m.group(2).casefold() in _TLDS | _cc():
            host = m.group(1).casefold().removeprefix("www.")
            add("domain", f"domain:{host}", m.start(), m.end())
    # A number that is one chunk of a longer id ("7700" in "+44 7700 940999")
    # identifies nothing on its own.
    # The runs do not overlap and come in order: only the last one starting
    # at or before a number can hold it.
    chunked = [r.span() for r in _COMPACT_RUN.finditer(text) if re.search(r"[-:./ ]", r.group(0))]
    chunk_starts = [a for a, _ in chunked]
    for m in _NUMBER.finditer(text):
        at = bisect_right(chunk_starts, m.start()) - 1
        if at >= 0 and m.end() <= chunked[at][1]:
            continue
        # A year ("in 2021") dates a fact; it does not identify anything.
        is_year = len(m.group(0)) == 4 and 1900 <= int(m.group(0)) <= 2099
        if not free(m.start(), m.end()) or is_year:
            continue
        if len(m.group(0)) > 3:
            add("number", f"number:{m.group(0)}", m.start(), m.end())
        elif not m.group(0).startswith("0"):
            # "847" alone is too short for a number key, but it is the
            # serial of "record 0000847" (and what "customer 847" names).
            found.append(Identifier("serial", f"serial:{m.group(0)}", m.start(), m.end()))
    phones = bytearray(len(text))  # the characters of phone numbers (keyed as phones)
    for i in found:
        if i.kind == "phone":
            phones[i.start : i.end] = b"\x01" * (i.end - i.start)
    for m in _COMPACT_RUN.finditer(text):
        compact = re.sub(r"[^A-Za-z0-9]", "", m.group(0)).upper()
        on_phone = phones.find(1, m.start(), m.end()) >= 0
        if len(compact) >= 5 and any(c.isdigit() for c in compact) and not on_phone:
            found.append(Identifier("compact", f"compact:{compact}", m.start(), m.end()))
    # The serial number of an id, zeros trimmed: "A-00492", "CS-10482" and
    # "000731" are what a request that gives only the number ("order 492",
    # "#10482", "ID 731") names (see ``query_keys``).
    # Only a number that ends its id: "5501-R" is another item than "5501".
    for i in list(found):
        tail = _SERIAL_TAIL.fullmatch(text[i.start : i.end]) if i.kind in _SERIAL_KINDS else None
        if tail and len(serial := tail.group(1).lstrip("0")) >= _MIN_SERIAL:
            found.append(Identifier("serial", f"serial:{serial}", i.start, i.end))
    return sorted(found, key=lambda i: (i.start, i.kind))


_SERIAL_KINDS = frozenset({"ticket", "code", "number", "compact"})
_MIN_SERIAL = 3  # shorter serials ("order 7") would name too much
_SERIAL_TAIL = re.compile(r"\D*?(\d+)[^A-Za-z0-9]*")
# A number standing alone in a query, maybe after "#": not a part of an id
# ("CS-10482" names that case, not every id ending in 10482), a date, an
# address ("10.0.0.1", "12/05") or a number written in groups ("415 555 0132").
_BARE_NUMBER = re.compile(r"(?<![\w.,:/+-])(?<!\d\s)#?(\d{3,})(?![\w]|[.,:/-]\d|\s\d)")


def _cc() -> frozenset[str]:
    return _COUNTRY_TLDS


# Country-code TLDs likely in personal data; a full list would turn file
# extensions such as ".py" or ".sh" into domains.
_COUNTRY_TLDS = frozenset(
    """uk de fr es it nl be ch at se no dk fi ie pt pl cz gr ru ua tr il in cn jp kr tw hk
    sg au nz ca us mx br ar cl za ng ke eg""".split()
)


def keys(text: str, region: str = "US") -> set[str]:
    """The set of canonical keys in a text."""
    return {i.key for i in extract(text, region)}


def query_keys(query: str, region: str = "US") -> set[str]:
    """Canonical keys a target query names, forgiving obfuscation.

    Besides the identifiers ``extract`` finds, a query that is one bare
    token (``alice_w``, ``@alice_w``) also names the handle of that name, and
    one that is only a prefix and a number (``tkt 100``) names the ticket.
    """
    idents = extract(query, region)
    # Compact keys of a query come from the whole query (``_compact_windows``):
    # a run inside it ("+44 ... 0018" of "+44 ... 0018 ext 2") says less.
    found = {i.key for i in idents if i.kind not in ("compact", "serial")}
    # A tagged address names only itself; an untagged one names its tags too.
    tagged_spans = {(i.start, i.end) for i in idents if i.kind == "email_tag"}
    found -= {i.key for i in idents if i.kind == "email" and (i.start, i.end) in tagged_spans}
    # A URL with a path names that page, not every page of its domain.
    paged = {(i.start, i.end) for i in idents if i.kind == "url" and "/" in i.key[4:]}
    found -= {i.key for i in idents if i.kind == "domain" and (i.start, i.end) in paged}
    found |= _compact_windows(query)
    # (a number inside a phone number or a card is a chunk of it)
    inside = [(i.start, i.end) for i in idents if i.kind not in ("compact", "serial", "number")]
    for m in _BARE_NUMBER.finditer(query):
        if any(a <= m.start() and m.end() <= b for a, b in inside):
            continue
        serial = m.group(1).lstrip("0")
        is_year = len(m.group(1)) == 4 and 1900 <= int(m.group(1)) <= 2099
        if len(serial) >= _MIN_SERIAL and not is_year:
            found.add(f"serial:{serial}")
    bare = query.strip()
    # A query that is only "tkt 100" can mean nothing but the ticket.
    ticket = re.fullmatch(r"([A-Za-z]{2,6})[-#_ ]?(\d{2,})", bare)
    if ticket and not {k for k in found if not k.startswith(("number:", "compact:"))}:
        return {f"ticket:{ticket.group(1).upper()}-{ticket.group(2)}"}
    if _BARE.match(bare) and not {k for k in found if not k.startswith("compact:")}:
        found.add(f"handle:{bare.lstrip('@').casefold()}")
    return found


_MAX_WINDOW_TOKENS = 12


def _compact_windows(query: str) -> set[str]:
    """Compact keys a query may write in chunks, lowercase, or with other
    separators ("nwbk gb 2l", "passport 12 ab 34567", "3c-71-bf-0a-44-e2").

    The query's tokens are joined whole, then again without each leading
    word that has no digit (a label such as "passport"), never dropping a
    trailing part: "AA-100-2" must not also name "AA-100".
    """
    tokens = re.findall(r"[A-Za-z0-9]+", query)
    out: set[str] = set()
    if len(tokens) > _MAX_WINDOW_TOKENS:  # a sentence, not an identifier
        return out
    intl = re.match(r"\s*\+(\d{1,3})\b", query)
    if intl and len(tokens) > 1:  # "+44 7700 900123" is also written "07700 900123"
        out.add("compact:0" + "".join(tokens[1:]).upper())
    while tokens:
        compact = "".join(tokens).upper()
        if len(compact) >= 5 and any(c.isdigit() for c in compact):
            out.add(f"compact:{compact}")
        if any(c.isdigit() for c in tokens[0]):
            break
        tokens = tokens[1:]
    return out

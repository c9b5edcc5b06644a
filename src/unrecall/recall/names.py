"""Names of people and organisations, matched across scripts and spellings.

A name mention is a run of capitalised Latin words or a run of words in
another script (Han, Hangul, Cyrillic, Greek, ...). Each mention is
romanised (``anyascii``: 王小明 → Wang Xiao Ming, Зоя → Zoya, Ελένη → Eleni),
folded (case, accents, ``ue``/``oe`` for German umlauts, Korean surname
romanisations) and indexed under keys that survive part order and
segmentation: ``Wang Xiaoming``, ``Xiaoming Wang`` and ``王小明`` share
``name:wangxiaoming``. Each part also gets a ``part:`` key so "everything
about Zoya" finds "Zoya Ivanova". Lowercase words are never names, which
keeps "a frank discussion" away from Frank.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from anyascii import anyascii

# Revised Romanization gives the surnames most people write otherwise.
_KOREAN_SURNAMES = {
    "gim": "kim",
    "i": "lee",
    "bag": "park",
    "choe": "choi",
    "jeong": "jung",
    "jo": "cho",
    "gang": "kang",
    "yun": "yoon",
    "jang": "jang",
    "im": "lim",
    "sin": "shin",
    "o": "oh",
    "yu": "yoo",
    "an": "ahn",
    "no": "noh",
    "ryu": "ryu",
    "go": "ko",
    "mun": "moon",
}
# Sentence furniture that is capitalised but never a name.
_NOT_NAMES = frozenset(
    """i i'm i've i'd my me we our you your he she his her they their it its the a an this
    that these those and or but if when where what who which how why yes no ok okay please
    thanks hi hello dear also then so user assistant monday tuesday wednesday thursday friday
    saturday sunday january february march april may june july august september october
    november december mr mrs ms dr prof""".split()
)
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ɏ][\w'’-]*")


@dataclass(frozen=True)
class NameMention:
    """A name in a text: its span, romanised parts and keys."""

    start: int
    end: int
    parts: tuple[str, ...]
    keys: frozenset[str]


def _script(ch: str) -> str:
    if not ch.isalpha():
        return ""
    if ch.isascii() or "LATIN" in unicodedata.name(ch, ""):
        return "latin"
    return unicodedata.name(ch, "other").split(" ")[0]


def _fold(part: str) -> str:
    s = anyascii(part).casefold()
    s = re.sub(r"[^a-z]", "", s)
    return s.replace("ue", "u").replace("oe", "o")


def _split_romanised(word: str) -> list[str]:
    """anyascii writes Han and Hangul syllables capitalised: WangXiaoMing."""
    roman = anyascii(word)
    pieces = re.findall(r"[A-Z][a-z]*|[a-z]+", roman)
    return pieces or [roman]


def _keys(parts: list[str], korean: bool) -> frozenset[str]:
    folded = [_fold(p) for p in parts]
    folded = [p for p in folded if p]
    if not folded:
        return frozenset()
    if korean and folded[0] in _KOREAN_SURNAMES:
        folded[0] = _KOREAN_SURNAMES[folded[0]]
    keys = {f"part:{p}" for p in folded if len(p) > 1}
    if len(folded) > 1:
        keys.add("name:" + "".join(folded))
        keys.add("name:" + "".join(folded[1:] + folded[:1]))  # surname last
        keys.add("name:" + "".join(folded[-1:] + folded[:-1]))  # surname first
    else:
        keys.add("name:" + folded[0])
    return frozenset(keys)


def mentions(text: str) -> list[NameMention]:
    """Name mentions in ``text``, in order."""
    out: list[NameMention] = []
    # Non-Latin runs: words of one script separated by single spaces.
    i, n = 0, len(text)
    while i < n:
        script = _script(text[i])
        if script and script != "latin":
            j = i
            while j < n and (
                _script(text[j]) == script
                or (text[j] in " ·・-" and j + 1 < n and _script(text[j + 1]) == script)
            ):
                j += 1
            words = re.split(r"[ ·・-]+", text[i:j])
            hanlike = script in ("CJK", "HANGUL")
            parts: list[str] = []
            for w in words:
                if hanlike and len(words) == 1:
                    syl = _split_romanised(w)
                    # Surname + given name: 王 | 小明, 김 | 민준.
                    parts = [syl[0], "".join(syl[1:])] if len(syl) > 1 else syl
                else:
                    parts.append(w)
            keys = _keys(parts, script == "HANGUL")
            if keys:
                out.append(NameMention(i, j, tuple(_fold(p) for p in parts), keys))
            i = j
        else:
            i += 1
    # Latin runs of capitalised words.
    words = list(_LATIN_WORD.finditer(text))
    k = 0
    while k < len(words):
        w = words[k]
        if _is_name_word(w.group(0)):
            run = [w]
            while (
                k + 1 < len(words)
                and _is_name_word(words[k + 1].group(0))
                and text[run[-1].end() : words[k + 1].start()] in (" ", "-")
            ):
                k += 1
                run.append(words[k])
            out.append(_latin_mention(run))
            # "Yesterday Zoya Ivanova called": a sentence's first word is
            # capitalised anyway, so the run without it is a mention too.
            if len(run) > 1 and not text[: run[0].start()].rstrip(" \"'(")[-1:].isalnum():
                out.append(_latin_mention(run[1:]))
        k += 1
    return sorted(out, key=lambda m: m.start)


def _latin_mention(run: list[re.Match[str]]) -> NameMention:
    parts = [re.sub(r"['’]s$", "", m.group(0)) for m in run]
    split = [p for part in parts for p in part.split("-")]
    return NameMention(
        run[0].start(), run[-1].end(), tuple(_fold(p) for p in split), _keys(split, False)
    )


def _is_name_word(word: str) -> bool:
    return (
        word[0].isupper()
        and word.casefold().rstrip("'’s") not in _NOT_NAMES
        and (word.casefold() not in _NOT_NAMES)
    )


def name_keys(text: str) -> set[str]:
    """Every name and name-part key in a text."""
    return {k for m in mentions(text) for k in m.keys}

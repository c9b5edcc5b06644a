"""Names of people and organisations, matched across scripts and spellings.

A name mention is a run of capitalised Latin words or a run of words in
another script (Han, Hangul, Cyrillic, Greek, ...). Each mention is
romanised (``anyascii``: 王小明 → Wang Xiao Ming, Зоя → Zoya, Ελένη → Eleni;
a kanji name also in its Japanese reading from Janome's dictionary, 田中太郎
→ Tanaka Tarō), folded (case, accents, ``ue``/``oe`` for German umlauts,
Korean surname romanisations) and indexed under keys that survive part order and
segmentation: ``Wang Xiaoming``, ``Xiaoming Wang`` and ``王小明`` share
``name:wangxiaoming``. Each part also gets a ``part:`` key so "everything
about Zoya" finds "Zoya Ivanova". Lowercase words are never names, which
keeps "a frank discussion" away from Frank.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

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


def _script(ch: str, prev: str = "") -> str:
    if unicodedata.category(ch).startswith("M"):
        return prev  # vowel signs and viramas belong to the letter before
    if not ch.isalpha():
        return ""
    if ch.isascii() or "LATIN" in unicodedata.name(ch, ""):
        return "latin"
    return unicodedata.name(ch, "other").split(" ")[0]


# Spelling variants that transliteration systems disagree on, folded the
# same way on both sides: Milosh/Miloš, Severnyy/Severny, Jiwoo/Jiu, Mueller.
_VARIANTS = [
    (re.compile(r"shch|sch|sh"), "s"),
    (re.compile(r"ch|tch"), "c"),
    (re.compile(r"zh"), "z"),
    (re.compile(r"kh"), "h"),
    (re.compile(r"ts|tz"), "c"),
    (re.compile(r"(?:yy|yi|iy|ii)$"), "y"),
    (re.compile(r"woo|oo|wu|ou"), "u"),
    (re.compile(r"eo"), "o"),
    (re.compile(r"ue"), "u"),
    (re.compile(r"oe"), "o"),
    (re.compile(r"(.)\1+"), r"\1"),
]
# Words that name the kind of organisation, not which one (Xinghe Technology
# is 星河科技: the romanised name is 星河).
_ORG_WORDS = frozenset(
    "technology technologies tech inc ltd llc co corp company group bank university gmbh".split()
)
_HAN_ORG_SUFFIX = re.compile(r"(?:有限公司|科技|公司|集团|银行|大学)$")
# Scripts that leave vowels unwritten or romanise them loosely: their names
# also match a Latin name by consonant skeleton (يوسف الحداد ~ Youssef Al-Haddad).
_SKELETON_SCRIPTS = frozenset({"ARABIC", "HEBREW", "DEVANAGARI", "THAI", "BENGALI", "PERSIAN"})


@lru_cache(maxsize=1 << 16)
def _fold(part: str) -> str:
    s = re.sub(r"[^a-z]", "", anyascii(part).casefold())
    for pattern, repl in _VARIANTS:
        s = pattern.sub(repl, s)
    return s


def _skeleton(raw_parts: list[str]) -> str:
    """Consonants only, per part, parts sorted: a loose, script-blind key
    (ywsf lhdd ~ youssef al-haddad, khhn ~ cohen, arjun srma ~ arjun sharma)."""
    skeletons = []
    for raw in raw_parts:
        if raw in ("al", "el"):
            continue
        if raw[:1] == "l" and raw[1:2] not in ("", *"aeiouy"):  # Arabic article ال
            raw = raw[1:]
        s = raw
        for a, b in (
            ("shch", "s"),
            ("sch", "s"),
            ("sh", "s"),
            ("kh", "c"),
            ("ch", "c"),
            ("ph", "f"),
            ("th", "t"),
            ("zh", "z"),
            ("ts", "c"),
        ):
            s = s.replace(a, b)
        s = s.translate(str.maketrans("jkq", "ccc"))
        s = re.sub(r"[aeiouwyhv]", "", s)
        skeletons.append(re.sub(r"(.)\1+", r"\1", s))
    return "".join(sorted(p for p in skeletons if p))


def _split_romanised(word: str) -> list[str]:
    """anyascii writes Han and Hangul syllables capitalised: WangXiaoMing."""
    roman = anyascii(word)
    pieces = re.findall(r"[A-Z][a-z]*|[a-z]+", roman)
    return pieces or [roman]


# Greek ου is "ou" in every transliteration (Παπαδόπουλος, Papadopoulos);
# letter by letter it would be "oy".
_GREEK_OU = re.compile(r"[οό][υύ]", re.IGNORECASE)


def _keys(parts: list[str], korean: bool, skeleton: bool = False) -> frozenset[str]:
    raw = [re.sub(r"[^a-z]", "", anyascii(_GREEK_OU.sub("ou", p)).casefold()) for p in parts]
    if korean and raw and raw[0] in _KOREAN_SURNAMES:
        raw[0] = _KOREAN_SURNAMES[raw[0]]
    folded = [_fold(p) for p in raw]
    named = [p for p, r in zip(folded, raw, strict=True) if p and r not in _ORG_WORDS]
    folded = named or [p for p in folded if p]
    if not folded:
        return frozenset()
    keys = {f"part:{p}" for p in folded if len(p) > 1}
    skel = _skeleton(raw) if skeleton and len(raw) > 1 else ""
    if len(skel) >= 3:
        keys.add("skel:" + skel)
    if len(folded) > 1:
        keys.add("name:" + "".join(folded))
        keys.add("name:" + "".join(folded[1:] + folded[:1]))  # surname last
        keys.add("name:" + "".join(folded[-1:] + folded[:-1]))  # surname first
    else:
        keys.add("name:" + folded[0])
    return frozenset(keys)


@lru_cache(maxsize=1)
def _janome():  # type: ignore[no-untyped-def]
    from janome.tokenizer import Tokenizer

    return Tokenizer()  # ~0.2 s, only once a text has Han or kana in it


_MAX_JAPANESE_RUN = 24
# Japanese long vowels are written three ways: 太郎 is Tarō, Taro or Tarou.
_LONG_VOWEL = re.compile(r"(?<=[aeiou])[uh](?![aeiou])|(?<=o)o")


@lru_cache(maxsize=1 << 12)
def _japanese_keys(run: str) -> frozenset[str]:
    """Keys of the person names in a run of Han or kana, in their Japanese
    reading: each run of words the IPA dictionary reads as a person's
    family or given name (患者鈴木一郎の予約 → suzuki ichirō). 王小明 is
    not read as one, so keeps only its Chinese reading. A run longer than
    ``_MAX_JAPANESE_RUN`` is prose (kana break Japanese sentences into short
    runs of kanji; a long run is Chinese) and is not read."""
    if len(run) > _MAX_JAPANESE_RUN:
        return frozenset()
    keys: set[str] = set()
    name: list[tuple[str, bool]] = []  # (reading, is family name)
    chars = 0
    for token in [*_janome().tokenize(run.replace(" ", "")), None]:
        pos = "" if token is None else token.part_of_speech
        if pos.startswith("名詞,固有名詞,人名") and token is not None and token.reading != "*":
            name.append((anyascii(token.reading), pos.endswith(",姓")))
            chars += len(token.surface)
            continue
        # One character alone (王 before 小明) is too little to be a name.
        if chars > 1:
            family = "".join(r for r, f in name if f)
            given = "".join(r for r, f in name if not f)
            parts = [p for p in (family, given) if p]
            keys |= _keys(parts, False) | _keys([_LONG_VOWEL.sub("", p) for p in parts], False)
        name, chars = [], 0
    return frozenset(keys)


def mentions(text: str, query: bool = False) -> list[NameMention]:
    """Name mentions in ``text``, in order.

    With ``query``, Latin names also carry consonant-skeleton keys, so a
    request written in Latin letters reaches a name stored in an abjad or
    Indic script; stored Latin names never do (two Latin spellings with one
    skeleton are usually two people).
    """
    out: list[NameMention] = []
    # Non-Latin runs: words of one script separated by single spaces.
    i, n = 0, 0 if text.isascii() else len(text)
    while i < n:
        if text[i].isascii():
            i += 1
            continue
        script = _script(text[i])
        if script and script != "latin":
            j = i
            while j < n and (
                _script(text[j], script) == script
                or (text[j] in " ·・-" and j + 1 < n and _script(text[j + 1]) == script)
            ):
                j += 1
            run_text = _HAN_ORG_SUFFIX.sub("", text[i:j]) if script == "CJK" else text[i:j]
            words = re.split(r"[ ·・-]+", run_text) if run_text else [text[i:j]]
            hanlike = script in ("CJK", "HANGUL")
            parts: list[str] = []
            for w in words:
                if hanlike and len(words) == 1:
                    syl = _split_romanised(w)
                    # Surname + given name: 王 | 小明, 김 | 민준.
                    parts = [syl[0], "".join(syl[1:])] if len(syl) > 1 else syl
                else:
                    parts.append(w)
            keys = _keys(parts, script == "HANGUL", script in _SKELETON_SCRIPTS)
            if script in ("CJK", "HIRAGANA", "KATAKANA"):
                keys |= _japanese_keys(run_text)
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
            out.append(_latin_mention(run, query))
            # "Yesterday Zoya Ivanova called": a sentence's first word is
            # capitalised anyway, so the run without it is a mention too.
            if len(run) > 1 and not char_before(text, run[0].start(), " \"'(").isalnum():
                out.append(_latin_mention(run[1:], query))
        k += 1
    return sorted(out, key=lambda m: m.start)


def stripped_end(text: str, end: int, chars: str) -> int:
    """``len(text[:end].rstrip(chars))``, without copying the text before
    ``end`` (a copy per name makes a long text cost its square)."""
    while end > 0 and text[end - 1] in chars:
        end -= 1
    return end


def char_before(text: str, end: int, chars: str) -> str:
    """``text[:end].rstrip(chars)[-1:]``: the last character before ``end``
    that is not one of ``chars``, or ``""``."""
    end = stripped_end(text, end, chars)
    return text[end - 1] if end else ""


def _latin_mention(run: list[re.Match[str]], query: bool) -> NameMention:
    parts = [re.sub(r"['’]s$", "", m.group(0)) for m in run]
    split = [p for part in parts for p in part.split("-")]
    return NameMention(
        run[0].start(), run[-1].end(), tuple(_fold(p) for p in split), _keys(split, False, query)
    )


def _is_name_word(word: str) -> bool:
    return (
        word[0].isupper()
        and word.casefold().rstrip("'’s") not in _NOT_NAMES
        and (word.casefold() not in _NOT_NAMES)
    )


def name_keys(text: str) -> set[str]:
    """Every name and name-part key in a stored text."""
    return {k for m in mentions(text) for k in m.keys}


def _inside(text: str, m: NameMention) -> bool:
    """Whether mention ``m`` stands inside a sentence of ``text``, not first."""
    return char_before(text, m.start, " \"'(") not in ("", ".", "!", "?", ":")


def inner_names(reply: str) -> list[tuple[str, ...]]:
    """Folded parts of the names inside the sentences of ``reply`` (its
    first word is capitalised anyway, so a name there is no evidence)."""
    return [m.parts for m in mentions(reply) if _inside(reply, m)]


def sure_name_keys(text: str) -> set[str]:
    """Name keys of ``text`` that are evidence of a name: inside a sentence,
    or of two parts or more ("Ravi Shah's number ..."); a capitalised first
    word alone ("Got it.", "Mykonos sounds lovely") may be none."""
    return {k for m in mentions(text) if _inside(text, m) or len(m.parts) > 1 for k in m.keys}


def wrote_in_lowercase(names: list[tuple[str, ...]], said: str) -> bool:
    """Whether ``said`` holds every part of one of ``names`` as plain words
    ("Tama from bio" after "a crush on tama from bio")."""
    said_words = {_fold(w) for w in re.findall(r"[^\W\d_]+", said)}
    return any(all(p in said_words for p in parts) for parts in names)


def query_name_keys(text: str) -> set[str]:
    """Every name key of a query (stored keys plus Latin skeletons)."""
    return {k for m in mentions(text, query=True) for k in m.keys}

"""Text normalisation, tokens, phrase matching and keyed full-text terms.

The full-text index never sees plaintext: every word becomes a keyed hash
(BLAKE2b keyed with the store's secret), which the SQLite backend keeps in
a per-tenant lexicon only while some document uses the word
(``storage/sqlite.py``): the key is in the same file, so a digest that
outlived its word would be the word.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

import snowballstemmer

from unrecall.recall.identifiers import keys as identifier_keys
from unrecall.recall.names import name_keys

_WORD = re.compile(r"\w+")
# An identifier-like run: words joined by @ . - / + : with no space, so that
# "alice@acme.io" is one token and never equals "alice.smith@acme.io".
_COMPOUND = re.compile(r"\w+(?:[@.\-/+:]\w+)*")

# Words too common to target a forget on their own.
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
        "user",
    }
)


def normalize(text: str) -> str:
    """Casefold, NFKC-fold and strip accents so that José matches jose."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFKC", stripped)


def words(text: str) -> list[str]:
    """Normalised word tokens (the unit of the full-text index)."""
    return _WORD.findall(normalize(text))


def compound_tokens(text: str) -> list[str]:
    """Normalised tokens where identifiers stay whole (the unit of targeting)."""
    return _COMPOUND.findall(normalize(text))


def contains_phrase(haystack: list[str], needle: list[str]) -> bool:
    """True if ``needle`` occurs as a contiguous run of whole tokens."""
    n = len(needle)
    if n == 0 or n > len(haystack):
        return False
    first = needle[0]
    return any(
        haystack[i] == first and haystack[i : i + n] == needle for i in range(len(haystack) - n + 1)
    )


_NEGATION = re.compile(r"\b(?:not|never|no longer|no more|none)\b|n't\b", re.IGNORECASE)


def negated(text: str) -> bool:
    """True if the statement is negated ("does not", "isn't", "never")."""
    return bool(_NEGATION.search(text.replace("’", "'")))


def stem(word: str) -> str:
    """A crude English stem: works/worked/working -> work, moved/move -> mov."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def content_words(text: str) -> set[str]:
    """Stems of the words that carry meaning (no stopwords)."""
    return {stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1}


def content_overlap(new: str, old: str) -> float:
    """Share of ``old``'s content words that ``new`` repeats; one shared
    word ("like") is no overlap at all."""
    return overlap_with(content_words(new), old)


def overlap_with(new_words: set[str], old: str) -> float:
    """``content_overlap`` given the new text's ``content_words``, so that a
    long text compared with many others is read once."""
    old_words = content_words(old)
    shared = len(new_words & old_words)
    return shared / max(1, len(old_words)) if shared >= 2 else 0.0


def is_too_broad(tokens: list[str]) -> bool:
    """A target made only of stopwords would hit nearly everything."""
    return all(t in STOPWORDS for t in tokens)


def text_keys(text: str) -> set[str]:
    """Canonical identifier and name keys of a text (see ``identifiers``, ``names``)."""
    return identifier_keys(text) | name_keys(text)


_SNOWBALL = snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 16)
def index_stem(word: str) -> str:
    """The Snowball (Porter 2) English stem the full-text index keeps of a
    word; words of other scripts and codes come back unchanged."""
    return _SNOWBALL.stemWord(word) if word.isascii() and word.isalpha() else word


class TermHasher:
    """Turns words into keyed digests for the full-text index."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _digest(self, text: str) -> str:
        return hashlib.blake2b(text.encode(), key=self._key, digest_size=8).hexdigest()

    def term(self, word: str) -> str:
        """The 16-hex-digit keyed digest of one normalised word's stem, so
        "painted" finds "painting" ("prescribed", "prescription" stay apart)."""
        return self._digest(index_stem(word))

    def cache_key(self, text: str) -> bytes:
        """The keyed digest a vector is cached under (``Recall.embed``)."""
        return hashlib.blake2b(b"\x01" + text.encode(), key=self._key, digest_size=16).digest()

    def key(self, key: str) -> str:
        """The digest of a canonical key (identifier or name), apart from words."""
        return self._digest("\x00" + key)

    def document(self, text: str) -> str:
        """The space-joined digests of a text's words and canonical keys: a
        full-text document as the storage receives it."""
        return " ".join(
            [self.term(w) for w in words(text)] + [self.key(k) for k in sorted(text_keys(text))]
        )

    def probe_digests(self, text: str) -> list[str]:
        """Every digest ``document`` would write for ``text``, once each: what
        an erasure check must not find either."""
        return list(dict.fromkeys(self.document(text).split()))

    def query_terms(self, text: str) -> list[str]:
        """Distinct digests of a query's words, in order of first use."""
        return list(dict.fromkeys(self.term(w) for w in words(text)))

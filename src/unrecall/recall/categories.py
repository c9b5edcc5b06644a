"""Topic categories of personal facts, from word lexicons.

Deterministic and offline: a text belongs to every category one of whose
stems it contains. Used where meaning alone is too weak a signal: two
statements in the same category ("my employer" / "I started working at
Dovetail") can name the same slot. Extend with ``register``.
"""

from __future__ import annotations

from itertools import pairwise

from unrecall.recall.lexical import stem, words

LEXICON: dict[str, set[str]] = {
    "health": set(
        """health doctor gp physician practitioner nurse hospital clinic surgery dentist
        optician therapist therapy counsel counsell psychiatrist medic medication medicine
        pill tablet mg dose prescription diagnos diabetes asthma allerg cancer pregnan
        blood pressure heart symptom illness sick injur physio vaccin insulin sertraline
        metformin depress anxiety migraine medical doc neuropathy glucose sugar panic meds
        psychiatr psycholog mental diagnosed referral referred clinic""".split()
    ),
    "finances": set(
        """bank account salary pay paid earn income wage bonus tax loan mortgage debt
        finance finances financial owe owes owed rate rates fee fees revolut wise
        credit card savings saving invest pension budget rent bill invoice expens
        cost price money euro pound dollar iban paypal insurance premium""".split()
    ),
    "family": set(
        """mother mom mum father dad parent sister brother sibling son daughter child
        kid children baby grandma grandpa grandmother grandfather aunt uncle cousin
        niece nephew wife husband family""".split()
    ),
    "home": set(
        """live lives lived home house flat apartment address street road avenue move
        moved neighbour neighbor neighbourhood city town landlord landlady rent tenant
        postcode zip""".split()
    ),
    "contact": set(
        """phone mobile cell landline number email mail address contact call text sim
        whatsapp telegram handle""".split()
    ),
    "work": set(
        """work job employ employer employed company office boss manager colleague
        coworker career occupation profession salary promotion intern contract client
        startup team role hired fired resign commute barista developer engineer
        designer analyst accountant lawyer teacher chef cook waiter driver consultant
        architect programmer scientist researcher clerk cashier electrician plumber
        freelance freelancer journalist editor writer translator pilot""".split()
    ),
    "relationships": set(
        """partner boyfriend girlfriend husband wife spouse married marriage engaged
        divorce dating date single relationship ex fiance fiancee romance romantic crush
        hinge tinder bumble ghosted lover""".split()
    )
    | {"love life", "sex life", "love interest"},
    # Special categories of personal data (GDPR art. 9 and 10): beliefs and
    # legal matters are asked about as topics too ("all my religious stuff").
    "beliefs": set(
        """religion religious faith church mosque synagogue temple god pray prayer worship
        belief beliefs spiritual buddhist buddhism christian catholic protestant muslim
        islam jewish hindu atheist baptism mass politics political party vote voted
        election union protest activist""".split()
    ),
    "legal": set(
        """lawyer solicitor attorney court lawsuit sue sued legal judge trial tribunal
        police arrest arrested charge charged conviction convicted criminal offence
        offense fine fined probation custody dispute claim litigation""".split()
    ),
    "credentials": set(
        """password passcode pin code login username key token secret otp 2fa
        verification recovery passphrase ssn passport licence license""".split()
    ),
    "travel": set(
        """travel trip flight fly flying plane airport hotel booking holiday vacation
        visa passport train journey seat airline destination""".split()
    ),
    "preferences": set(
        """like love prefer favourite favorite enjoy hate dislike fan taste music band
        artist food cuisine diet vegan vegetarian pescatarian meat fish dairy gluten keto halal
        kosher hobby sport team browser theme""".split()
    ),
}
_STEMS: dict[str, set[str]] = {}
# Two-word entries ("love life"): their words count together, not one by one
# ("love" alone is a preference).
_PAIRS: dict[tuple[str, str], set[str]] = {}


def _index() -> dict[str, set[str]]:
    if not _STEMS:
        for cat, vocab in LEXICON.items():
            for entry in vocab:
                parts = entry.split()
                if len(parts) == 2:
                    _PAIRS.setdefault((stem(parts[0]), stem(parts[1])), set()).add(cat)
                else:
                    _STEMS.setdefault(stem(entry), set()).add(cat)
    return _STEMS


def register(category: str, vocabulary: set[str]) -> None:
    """Add a category (or words to one), e.g. from a deployment's config."""
    LEXICON.setdefault(category, set()).update(vocabulary)
    _STEMS.clear()
    _PAIRS.clear()


def categories(text: str) -> set[str]:
    """Every category whose lexicon meets a word of ``text``."""
    index = _index()
    out: set[str] = set()
    stems = [stem(w) for w in words(text)]
    paired: set[int] = set()
    for i, pair in enumerate(pairwise(stems)):
        if pair in _PAIRS:
            out |= _PAIRS[pair]
            paired |= {i, i + 1}
    for i, s in enumerate(stems):
        if i not in paired:
            out |= index.get(s, set())
    return out

"""Forget requests in words the rule tables do not know.

People rarely say "please forget my PIN". They say "bin it", "nuke that",
"take it out of your head", "that's not yours to keep", "poubelle",
"hazte el loco", "Weg damit". The rule tables of ``requests`` read the
common forms with exact targets; this reader is tried after them, on a
turn they did not match, and asks for three things in one sentence, or in
a sentence and the one before it:

1. a **removal idiom** aimed at the assistant (per-language lexicons below);
2. an **object that is the user's own information** or something said to
   the assistant: "my …", "the code I gave you", "that thing I said about
   …", "tues night", "those two numbers";
3. no sign of **another task or of narration**: files, git, apps, cooking,
   "forget it, I'll just order pizza", "I forgot my keys", "she deleted it".

``find`` returns the object phrase, which the executor resolves like any
other target (identifiers, slots, stems, time windows, meaning); with the
user's previous turn as ``context`` it also reads a request split over two
turns. Three narrower readers name the kind themselves: ``correction`` (a
value given wrong, "it's 14B, not 41B"), ``conclusion`` (the assistant's
conclusion dismissed, "drop that verdict") and ``lapsed`` ("I'm over X",
"FitX hab ich gekündigt"). Deterministic, lexicons only.
"""

from __future__ import annotations

import re

from unrecall.dialogue.windows import window

_F = re.IGNORECASE | re.VERBOSE

# -- 1. removal idioms ----------------------------------------------------------
# Each pattern matches the idiom; a group ``o`` (when present) is the object
# written after it ("wipe everything about my love life").
_OBJ_AFTER = r"(?:\s+(?P<o>[^.!?;]{2,160}))?"
# Only idioms the tables lack: their verbs ("forget", "delete", "borra",
# "oublie", "vergiss") with their guards already decided the turn.
_IDIOMS: dict[str, tuple[re.Pattern[str], ...]] = {
    "en": (
        re.compile(
            r"""\b(?:forgt|forgit|frget|forgettt?|delet|deleet|dlete|bin|ditch|nuke|trash|toss|
            shred|junk|chuck|zap|axe|scrub|nix|bury|dump|(?-i:rm)(?=\s+[a-z])|un-?(?:see|hear|remember|get|assume|learn|
            know|think|file|decide|reach|conclude)\w*)\b
            (?:\s+(?:it|that|them|those|this|these|all\s+of\s+(?:it|that|them)|the\s+lot))?"""
            + _OBJ_AFTER,
            _F,
        ),
        re.compile(
            r"""\b(?:take\s+(?:it|that|them|this|those|that\s+one|these|the\s+(?:old\s+)?ones?)\s+
            (?:out|off|away|down)|
            strike\s+(?:it|that|them)\s+(?:out|off)|cross\s+(?:it|that|them)\s+(?:out|off)|
            wipe\s+the\s+(?:slate|lot)|clear\s+(?:it|that|them)\s+out|
            throw\s+(?:it|that|them)\s+(?:out|away)|get\s+shot\s+of|
            wipe\s+(?:it|that|them)\s+(?:out|off)|blot\s+(?:it|that)\s+out)"""
            + _OBJ_AFTER,
            _F,
        ),
        re.compile(
            r"""(?:\b(?:it|that|they|both|those|these|this|all\s+of\s+(?:it|that|them)|both\s+of\s+
            (?:those|them|these))\s+can\s+(?:go|be\s+(?:deleted|forgotten|removed|wiped|binned))\b
            |\b(?:is|are|'s)\s+not\s+yours\s+to\s+(?:keep|have|hold)|\bisn't\s+yours\s+to\s+(?:keep|have)
            |\bi'?d\s+(?:rather|prefer)\s+(?:it|that|they)\s+(?:weren't|wasn't|were\s+not|was\s+not|
            not\s+be)\s+(?:kept|stored|saved|written|on\s+file)
            |\bi'?d\s+(?:rather|prefer)\s+you\s+(?:didn't|did\s+not)\s+have
            |\b(?:wasn't|weren't)\s+stored
            |\b(?:don't|do\s+not|dont)\s+(?:hang|hold)\s+on\s*to
            |\b(?:don't|do\s+not|dont)\s+file\s+(?:me|it|that|them|this)
            |\bnot\s+something\s+you\s+need
            |\b(?:need|needs)\s+to\s+(?:live|stay)\s+in\s+your\s+(?:memory|head|notes)
            |\bout\s+of\s+your\s+(?:head|memory|notes|system|records?|files)
            |\bgone\s+from\s+(?:your|ur|the|this|here)\b|\bgone\s+from\s+here\b

            |\b(?:treat|consider)\s+(?:that|it|this)\s+(?:entire\s+|whole\s+)?\w*\s*as\s+(?:though|if)\s+
            it\s+(?:had\s+)?never
            |\b(?:like|want)\s+(?:it|that|them)\s+(?:disposed\s+of|deleted|erased|removed|gone)
            |\b(?:don't|do\s+not|dont)\s+want\s+(?:it|that|them|this)\s+(?:saved|on\s+file|sitting)
            |\b(?:never|don't|do\s+not|stop)\s+(?:mention(?:ing)?\s+(?:it|that|this|them)|
            bring(?:ing)?\s+(?:it|that|this|them)\s+up|bring(?:ing)?\s+up\s+(?:it|that|this|them))\s+
            (?:again|anymore|any\s+more)
            |\bnone\s+of\s+your\s+business
            |\b(?:pretend|act\s+as\s+if)\s+i\s+never|\bpretend\s+(?:you|u)\s+(?:didn't|never)\s+
            (?:hear|see|read)|\b(?:act|behave)\s+(?:like|as\s+if)\s+it\s+never\s+happened
            |\b(?:can|could|would)\s+(?:you|u)\s+not\s+(?:keep|store|save|remember)\s+(?:that|it|this|them)\b
            |\b(?:prefer|want|like|rather\s+have)\s+(?:it|that|them)\s+gone\b
            |\bnone\s+of\s+it,?\s+please\b
            |\bshould(?:n't|\s+not)?\s+be\s+in\s+your\s+(?:memory|notes|records)
            |\b(?:didn't|did\s+not|don't|do\s+not)\s+carry\s+(?:that|it|this)\s+around
            |\b(?:strange|weird|uncomfortable|uneasy|odd|embarrassing|awkward|bad)\s+(?:about\s+)?
            having\s+(?:it|that|this|them)\s+(?:written\s+down|stored|saved|on\s+file|kept|around)
            |\b(?:don't|do\s+not|dont)\s+want\s+(?:it|that|them|this)\s+(?:written\s+down|stored|
            kept|on\s+file|lying\s+around|turning\s+up))""",
            _F,
        ),
        re.compile(r"(?:^|[.!?;:,]\s*)(?:gone|binned|scrapped)\s*(?:[.!]|,?\s*thanks|$)", _F),
        re.compile(
            r"""\b(?:(?:no|see\s+no)\s+(?:further\s+|more\s+)?(?:reason|need)\s+for\s+you\s+to\s+
            (?:retain|keep|hold|store|have|remember)|i'?d\s+(?:rather|prefer)\s+you\s+(?:didn't|did\s+not)
            \s+(?:have|keep|store)|(?:can\s+we\s+agree\s+)?(?:you'll|you\s+will)\s+forget|
            (?:would\s+you\s+)?mind\s+(?:wiping|deleting|forgetting|removing|erasing|dropping)|
            olv[ií]date\s+del?)"""
            + _OBJ_AFTER,
            _F,
        ),
    ),
    "es": (
        re.compile(
            r"""\b(?:t[ií]ra(?:lo|la|los|las)|s[aá]ca(?:lo|la|los|las)|b[oó]ta(?:lo|la|los|las)|
            qu[ií]tate\s+(?:esa|eso|esa\s+idea)|desh[aá]zte\s+de|b[oó]rrame)\b"""
            + _OBJ_AFTER,
            _F,
        ),
        re.compile(
            r"""\b(?:hazte\s+el\s+(?:loco|tonto|sueco)|como\s+si\s+nunca\s+te\s+lo\s+hubiera|
            a\s+la\s+basura|(?:los|las|ambos|ambas)\s+dos\s*,?\s*fuera\b|,\s*fuera\s*[.!]|
            no\s+tengas\s+nada\s+m[ií]o|de\s+tu\s+(?:memoria|cabeza)|de\s+la\s+cabeza|
            no\s+(?:lo|la|los|las)\s+guardes|no\s+quiero\s+que\s+(?:lo|la|los|las)\s+(?:tengas|guardes)|
            que\s+no\s+quede\s+nada|como\s+si\s+no\s+hubiera\s+pasado|
            no\s+(?:lo|la|los|las)\s+(?:menciones|saques)\s+m[aá]s|
            no\s+hace\s+falta\s+que\s+(?:lo|la|los|las)\s+(?:guardes|recuerdes|tengas)|
            para\s+qu[eé]\s+(?:quieres|necesitas)\s+(?:guardar|tener|saber))""",
            _F,
        ),
    ),
    "fr": (
        re.compile(
            r"""\b(?:vire(?:-le|-la|-les|z)?|jette(?:-le|-la|-les|z)?|raye(?:-le|-la|-les|z)?|
            balance(?:-le|-la|-les)|d[ée]gage(?:-le|-la|-les)?|effacez|supprimez|oubliez|retirez|
            enlevez)
            (?=[\s,.!?]|$)"""
            + _OBJ_AFTER,
            _F,
        ),
        re.compile(
            r"""\b(?:(?:fais|faire|faites)\s+une\s+croix\s+dessus|poubelle|passe\s+l'[ée]ponge|
            tire\s+un\s+trait|de\s+ta\s+(?:m[ée]moire|t[êe]te)|fais\s+dispara[iî]tre|
            ne\s+(?:le\s+|la\s+|les\s+)?garde\s+pas|fais\s+comme\s+si|tu\s+effaces|
            (?:tu\s+peux|pourrais-tu|peux-tu)\s+(?:les\s+|le\s+|la\s+)?(?:virer|effacer|supprimer|oublier)|
            que\s+tu\s+ne\s+(?:le|la|les)\s+(?:aies|gardes)\s+plus|
            n'en\s+parle\s+plus|tu\s+n'as\s+pas\s+besoin\s+de\s+(?:garder|retenir|savoir)|

            comme\s+si\s+je\s+(?:ne\s+)?t'avais\s+rien)""",
            _F,
        ),
    ),
    "de": (
        re.compile(
            r"""\b(?:nimm\s+(?:das|die|den|es|sie)\s+(?:\w+\s+)?raus|rausnehmen|raus\s+damit|
            wirf\s+\w+\s+weg|wegwerfen)\b"""
            + _OBJ_AFTER,
            _F,
        ),
        re.compile(
            r"""\b(?:weg\s+damit|in\s+den\s+(?:papierkorb|m[üu]ll)|in\s+die\s+tonne|
            aus\s+(?:deinem|ihrem)\s+(?:ged[äa]chtnis|kopf|speicher)|
            (?:musst|brauchst)\s+du\s+(?:dir\s+)?nicht\s+(?:zu\s+)?(?:speichern|behalten|merken|wissen)|
            (?:bitte\s+)?nicht\s+(?:speichern|behalten|aufheben)\b|gespeichert\s+haben|
            einfach\s+vergessen|:\s*(?:streichen|l[öo]schen|vergessen)\b|
            lass\s+(?:das|es|die)\s+weg)""",
            _F,
        ),
    ),
}

# The tables' own verbs with no object of their own, or a pronoun or a
# count ("X. Delete.", "X, please delete both", "X, mejor olvídalo",
# "X - bitte vergiss das"): what they remove is the phrase said before.
_BACK_REFERENCE: dict[str, re.Pattern[str]] = {
    "en": re.compile(
        r"""(?<!\bnot\s)(?<!n't\s)(?<!\bnever\s)\b(?:forget|delete|erase|remove|drop|lose|wipe|
        clear|scratch|scrap|discard|ignore|purge|get\s+rid\s+of)\b(?:\s+(?:it|that|them|those|this|these|
        both|all\s+of\s+(?:it|that|them)|that\s+one|you\s+ever\s+\w+\s+it)\b
        |(?=\s*(?:[.,!?;]|$|please|pls|too|thanks|ta\b|though|now)))
        |\b(?:don't|do\s+not|dont)\s+(?:store|keep|save)\s+(?:that|it|this|them)\b
        |\b(?:both|all\s+of\s+(?:it|them)|everything)\s+gone\b""",
        _F,
    ),
    "es": re.compile(
        r"""(?<!\bno\s)\b(?:b[oó]rra(?:lo|la|los|las)|olv[ií]da(?:lo|la|los|las)|olv[ií]date\s+de\s+eso|
        elim[ií]na(?:lo|la|los|las)|qu[ií]ta(?:lo|la|los|las)|desc[aá]rta(?:lo|la|los|las))\b
        (?:\s+(?:los|las)\s+dos|\s+ambos|\s+todo)?
        |:\s*fuera\b|\bfuera\s+(?:xfa|porfa|por\s+favor)""",
        _F,
    ),
    "fr": re.compile(
        r"""(?<!\bne\s)\b(?:efface|oublie|supprime|retire|enl[eè]ve)z?(?:-le|-la|-les)?
        (?:\s+(?:[çc]a|les\s+deux|tout|cette\s+\w+|ce\s+\w+))?(?=\s*(?:[.,!?;]|$|stp|svp|s'il))
        |\bl(?:'|es\s+)(?:effacer|oublier|supprimer|virer|retirer|enlever)\b""",
        _F,
    ),
    "de": re.compile(
        r"""(?<!\bnicht\s)\b(?:vergiss|l[öo]sch(?:e)?|streich(?:e)?|entfern(?:e)?)\s+(?:das|es|sie|
        beides|alles|die\s+beiden)\b|\b(?:das|es|sie|beides|alles|die)\s+(?:bitte\s+)?
        (?:vergessen|l[öo]schen|streichen|entfernen)\b
        |\b(?:beides|alles|komplett|bitte)\s+(?:bitte\s+)?(?:raus|weg)\s*(?:[.!,]|$)""",
        _F,
    ),
}

# Complaints and questions that ask to forget ("why do you still have my
# old address?"): questions by nature, their object after them.
_ASKED: dict[str, re.Pattern[str]] = {
    "en": re.compile(
        r"""\b(?:(?:why|how\s+come)\s+(?:do\s+|are\s+)?you\s+still\s+(?:have|keep|keeping|know|
        remember|holding\s+on\s+to)|do\s+you\s+(?:really\s+|actually\s+)?(?:need|have)\s+to\s+
        (?:keep|remember|store|hold\s+on\s+to|know))\s+(?P<o>[^.!?;]{2,120})""",
        _F,
    ),
    "es": re.compile(
        r"""\b(?:para\s+qu[eé]\s+(?:quieres|necesitas)\s+(?:guardar|tener|saber)|por\s+qu[eé]\s+
        (?:todav[ií]a|a[uú]n)\s+(?:tienes|guardas|sabes))\s+(?P<o>[^.!?;]{2,120})""",
        _F,
    ),
    "fr": re.compile(
        r"""\bpourquoi\s+(?:est-ce\s+que\s+)?tu\s+(?:as|gardes|connais)\s+encore\s+
        (?P<o>[^.!?;]{2,120})""",
        _F,
    ),
    "de": re.compile(
        r"""\bwarum\s+(?:hast|wei[ßs]t|speicherst)\s+du\s+(?:noch|immer\s+noch)\s+
        (?P<o>[^.!?;]{2,120})""",
        _F,
    ),
}

# A conclusion the assistant drew, named and dismissed: "drop that verdict",
# "quítate esa idea", "efface ta conclusion", "Ihre Diagnose ... streichen".
_CONCLUSION = re.compile(
    r"""\b(?:(?:that|this|the|your|those)\s+(?:[\w'-]+\s+){0,2}?(?:conclusions?|assumptions?|
    verdicts?|guess(?:es)?|diagnos[ie]s|theor(?:y|ies)|labels?|impressions?|ideas?|inferences?)
    |(?:esa|esta|tu|la)\s+(?:idea|conclusi[oó]n|suposici[oó]n|teor[ií]a|impresi[oó]n|diagn[oó]stico)
    |(?:ta|cette|la)\s+(?:conclusion|id[ée]e|hypoth[èe]se|impression|th[ée]orie|diagnostic)
    |(?:ihre|deine|diese|die|eure)\s+(?:\w+\s+)?(?:diagnose|annahme|idee|vermutung|schlussfolgerung|
    theorie|einsch[äa]tzung)
    |what\s+(?:you|u)\s+(?:said|wrote|thought|suggested|assumed|figured|reckoned)\b[^.!?]{0,40}?
    \b(?:about|abt)\s+(?:\w+\s+and\s+)?me\b[^.!?,:]*
    |(?:you|u)\s+(?:said|called\s+\w+|wrote)\s+['"‘“][^'"’”]{2,40}['"’”]
    |(?:vous\s+m'aviez|vous\s+m'avez|tu\s+m'as|tu\s+m'avais)\s+(?:écrit|dit)\s+qu[e']\s*[^.!?:]{3,80}
    |me\s+(?:dijiste|escribiste)\s+que\s+[^.!?:]{3,80}
    |du\s+hast\s+(?:geschrieben|gesagt|gemeint),?\s+dass\s+[^.!?:]{3,80}
    |(?:you've|you\s+have)\s+(?:apparently\s+)?(?:decided|concluded|assumed|figured)\s+(?:that\s+)?
    [^.!?]{3,60}
    |stop\s+treating\s+me\s+(?:like|as\s+if|as)\s+[^.!?]{3,60}
    |['"‘“][^'"’”]{3,60}['"’”]\s+(?:thing|comment|remark)\s+(?:you|u)\s+(?:said|made)
    |i\s+never\s+said\s+(?:that\s+)?i\s+[^.!?,]{3,60}
    |sacaste\s+que\s+[^.!?,]{3,60}
    |c'est\s+toi\s+qui\s+l'as\s+(?:d[ée]duit|dit|pens[ée]|imagin[ée])
    |(?:du\s+hast|sie\s+haben)\s+(?:das|mich)\s+falsch\s+verstanden)""",
    _F,
)
_DISMISS = re.compile(
    r"""\b(?:forget|drop|delete|erase|scrap|bin|remove|lose|ditch|ignore|don't\s+file|un-\w+|
    stop\s+treating|that\s+was\s+you|qu[ií]tatelo|
    don't\s+store|dont\s+store|nah|not\s+true|wrong|no(?=[.!,])|
    qu[ií]ta(?:te|la|lo)?|olv[ií]da(?:la|lo)?|borra(?:la|lo)?|descarta(?:la|lo)?|
    effac\w*|oubli\w*|retir\w*|laisse\s+tomber|supprim\w*|vire|ce\s+n'est\s+pas\s+(?:du\s+tout\s+)?
    (?:[çc]a|cela)|c'est\s+faux|no\s+es\s+as[ií]|para\s+nada|stimmt\s+nicht|quatsch|
    streich\w*|vergiss|vergessen|l[öo]sch\w*|entfern\w*)\b""",
    _F,
)

# A correction with no change verb: "I read it wrong, it's the 19th, not the
# 12th", "te dije mal: no es ese sábado, es el siguiente", "vertippt, das ist
# die 21, nicht die 12". The marker says a value given before was wrong.
_V = r"(?P<{0}>(?:[^,.;!?:()\s]|\.(?=\w)|\s){{1,60}}?)"
_CORRECTIONS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "en": (
        re.compile(
            r"""\b(?:wrong|mistake|mistyped|misread|misspoke|typo|no\s+wait|correction|i\s+meant|
            mixed\s+(?:it|them|that)\s+up|got\s+it\s+wrong)\b""",
            _F,
        ),
        re.compile(
            r"""(?:\b(?:it's|it\s+is|that's|that\s+is)|(?:^|[.!?]\s+)is)\s+(?:actually\s+)?"""
            + _V.format("new")
            + r""",?\s+not\s+"""
            + _V.format("old")
            + r"""(?=\s*(?:[,;!?]|\.(?!\w)|$))
            |\b(?:isn't|is\s+not|wasn't|was\s+not)\s+"""
            + _V.format("old2")
            + r""",\s*(?:it's|it\s+is|but)\s+"""
            + _V.format("new2")
            + r"(?=\s*(?:[,;!?]|\.(?!\w)|$))",
            _F,
        ),
    ),
    "es": (
        re.compile(r"\b(?:me\s+equivoqu[eé]|te\s+dije\s+mal|me\s+confund[ií]|error|corrijo)\b", _F),
        re.compile(
            r"\bno\s+es\s+"
            + _V.format("old2")
            + r",\s*(?:es|sino)\s+"
            + _V.format("new2")
            + r"(?=\s*(?:[,;!?:]|\.(?!\w)|$))|\bes\s+"
            + _V.format("new")
            + r",\s*no\s+"
            + _V.format("old")
            + r"(?=\s*(?:[,;!?]|\.(?!\w)|$))",
            _F,
        ),
    ),
    "fr": (
        re.compile(r"\b(?:je\s+me\s+suis\s+tromp[ée]e?|erreur|corrige|pardon|mal\s+lu)\b", _F),
        re.compile(
            r"\bce\s+n'est\s+pas\s+"
            + _V.format("old2")
            + r",\s*c'est\s+"
            + _V.format("new2")
            + r"(?=\s*(?:[,;!?:]|\.(?!\w)|$))|\bc'est\s+"
            + _V.format("new")
            + r",\s*pas\s+"
            + _V.format("old")
            + r"(?=\s*(?:[,;!?]|\.(?!\w)|$))",
            _F,
        ),
    ),
    "de": (
        re.compile(
            r"\b(?:vertippt|verwechselt|verschrieben|vertan|geirrt|falsch|fehler|korrektur)\b", _F
        ),
        re.compile(
            r"\b(?:das|es|sie|er)\s+ist\s+"
            + _V.format("new")
            + r",\s*nicht\s+"
            + _V.format("old")
            + r"(?=\s*(?:[,;!?]|\.(?!\w)|$))|\bnicht\s+"
            + _V.format("old2")
            + r",\s*sondern\s+"
            + _V.format("new2")
            + r"(?=\s*(?:[,;!?:]|\.(?!\w)|$))",
            _F,
        ),
    ),
}


_APPOSITIVE = re.compile(r"\s*[,:]\s*((?:\w+\s+){0,4}?\w*\d\w*(?:\s+(?:of\s+|de\s+)?[^\W\d]+)?)")


def correction(turn: str, language: str) -> tuple[str, str] | None:
    """``(old, new)`` of a value the turn says was given wrong, or None."""
    marker, form = _CORRECTIONS.get(language, (None, None))
    if marker is None or form is None or not marker.search(turn):
        return None
    m = form.search(turn)
    if m is None:
        return None
    old = _tidy(m.group("old") or m.group("old2") or "")
    new = _tidy(m.group("new") or m.group("new2") or "")
    # "it's the week after, 19th of March": the value said again, exactly
    said_again = _APPOSITIVE.match(turn, m.end())
    if said_again:
        new = f"{new}, {_tidy(said_again.group(1))}"
    return (old, new) if old and new and old.casefold() != new.casefold() else None


# -- 2. the object -----------------------------------------------------------
# The user's own information, or something said to the assistant.
_OWN = {
    "en": re.compile(
        r"""\b(?:my|mine|our|me|myself|i\s+(?:told|said|gave|mentioned|typed|sent|shared|wrote|
        pasted|put|bored|ranted|confided|spoke|talked|vented|rambled|moaned)|you(?:'ve|\s+have)\s+(?:got|on)|you\s+(?:know|have)\s+
        about|on\s+me|about\s+me|from\s+(?:earlier|before|the\s+start)|in\s+here|
        (?:the|both|those|these)\s+(?:two|three|four|both)\s+\w+|
        (?:all|everything|anything)\s+(?:that|the|about|to\s+do\s+with|with)\b|
        the\s+(?:[\w'-]+\s+){0,3}?(?:code|number|pin|password|passcode|address|account|
        registration|licence|license|passport|id)\b|
        (?:home\s+)?addr(?:ess)?|iban|pw|passport|ssn|personal\s+number|
        (?:the|that)\s+(?:[\w'-]+\s+){0,2}?thing|
        the\s+(?:stuff|things?|bits?)\s+(?:from|about|on)|i\s+never\s+(?:had|was|did|said)|
        the\s+[\w'-]+'s\s+(?:name|number|address|email|phone)|
        (?:that|this|those|these)\s+(?:\w+[\s-]){0,3}?(?:code|number|numbers|thing|things|bit|
        stuff|rant|chat|verdict|conclusion|idea|guess|name|password|pin|address|info|detail|
        details|story|part)s?)\b""",
        _F,
    ),
    "es": re.compile(
        r"""\b(?:mi|mis|m[ií]o|m[ií]a|m[ií]os|me|te\s+(?:di|dije|cont[eé]|pas[eé]|mand[eé])|
        lo\s+de|lo\s+del|la\s+de|(?:ese|esa|esos|esas)\s+\w+|los\s+dos|las\s+dos|
        todo\s+lo|(?:el|la|los|las)\s+(?:\w+\s+){0,2}?(?:n[uú]mero|c[oó]digo|contrase[ñn]a|
        clave|pin|direcci[oó]n|cuenta|dni|carn[eé]|documento|pasaporte))\b""",
        _F,
    ),
    "fr": re.compile(
        r"""\b(?:mon|ma|mes|moi|je\s+t'ai|t'ai\s+(?:dit|donn[ée]|racont[ée]|[ée]crit)|
        (?:ce|cette|ces)\s+\w+|le\s+truc|tout\s+ce\s+que|les\s+deux|
        (?:tout|toute|tous|toutes)\s+(?:la|le|les|l')|
        (?:son|sa|ses|leur)\s+(?:\w+\s+)?(?:adresse|num[ée]ro|t[ée]l[ée]phone|code|date)|
        je\s+n'ai\s+jamais|
        (?:le|la|les)\s+(?:\w+\s+){0,2}?(?:num[ée]ros?|codes?|mot\s+de\s+passe|adresses?|
        comptes?|iban|passeport))\b""",
        _F,
    ),
    "de": re.compile(
        r"""\b(?:mein|meine|meinen|meinem|meiner|mir|mich|von\s+mir|ich\s+(?:dir|ihnen)|
        (?:diese|dieser|dieses|diesen)\s+\w+|(?:das|die)\s+(?:ganze|zwei|beiden)|
        alles\s+(?:über|zu|von)|(?:\w+-)?(?:nummer|code|pin|passwort|adresse|iban|konto)\b|
        ich\s+(?:hatte|war|habe)\s+nie)""",
        _F,
    ),
}

# The strongest sign of the user's own information: a first-person possessive.
_MINE = {
    "en": re.compile(r"\b(?:my|mine|our)\b", re.IGNORECASE),
    "es": re.compile(r"\b(?:mi|mis|m[ií]os?|m[ií]as?|nuestr[oa]s?)\b", re.IGNORECASE),
    "fr": re.compile(r"\b(?:mon|ma|mes|notre|nos)\b", re.IGNORECASE),
    "de": re.compile(r"\b(?:mein\w*|unser\w*)\b", re.IGNORECASE),
}

# -- 3. not a request -----------------------------------------------------------
_OTHER_TASK = re.compile(
    r"""\b(?:git|branch|repo|commit|(?:the|a|this|that|my|those|these)\s+file|files|folders?|director(?:y|ies)|cache|cookies?|browser|
    tabs?|apps?|photos?|pics|screenshots?|inbox|spreadsheet|columns?|rows?|cells?|drafts?|
    document|docs?|slides?|playlist|cart|recipe|pan|oven|heat|sauce|onions?|garlic|salt|dough|
    code\s+(?:block|snippet)|function|variable|table|database|server|docker|container|
    account\s+on|archivo|carpeta|fichier|dossier|datei|ordner|e-?mails?\s+from|
    paragraphs?|sentences?|essay|chapter|brouillon|paragraphe|absatz|p[áa]rrafo|borrador)\b""",
    _F,
)
# "forget it, I'll just ...": never mind.
_NEVER_MIND = re.compile(
    r"""\b(?:forget\s+it|never\s*mind|olv[ií]dalo|d[ée]j[ae]lo|laisse\s+tomber|oublie\s+[çc]a|
    vergiss\s+es|egal)\b[\s,.!-]*(?:i'll|i\s+will|let's|we'll|i'm\s+going|i\s+can|me\s+voy|voy\s+a|
    je\s+vais|on\s+va|ich\s+(?:mach|geh|bestell|nehm))""",
    _F,
)
# Narration: someone (the user included) did or does the removing.
_NARRATED = re.compile(
    r"""\b(?:i|he|she|they|we|you|it|someone|everyone|my\s+\w+)\s+(?:always\s+|just\s+|already\s+|
    totally\s+|completely\s+|accidentally\s+)?(?:forgot|deleted|erased|wiped|lost|dropped|binned|
    scrapped|removed|tossed|trashed|forgets|deletes|loses|drops)\b
    |\b(?:i|he|she|they|we)\s+(?:always\s+|often\s+|sometimes\s+|never\s+|might\s+|may\s+|will\s+
    |keep\s+)?(?:forget|forgetting|lose|losing|delete|drop)\b|\bi'll\s+(?:forget|lose)\b
    |\b(?:yo\s+)?(?:olvid[eé]|borr[eé]|perd[ií])\b|\bj'ai\s+(?:oubli[ée]|effac[ée]|perdu|jet[ée])
    |\bich\s+(?:habe?\s+)?(?:vergessen|gel[öo]scht|verloren)|\bhab\s+(?:\w+\s+)?vergessen""",
    _F,
)
_MODAL = re.compile(
    r"\b(?:can|could|would|will)\s+(?:you|u)\b|^\s*mind\b|\b(?:puedes|podr[ií]as|peux-tu|tu\s+peux|"
    r"pourrais|kannst|k[öo]nntest)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?…]+(?:[.!?…]+|$)")
# A condition or a subject left at the edges of an object phrase: "if you
# still hold anything about X, I should [like it disposed of]".
_FRAME = re.compile(
    r"""^(?:if|in\s+case|si|wenn|falls)\s+(?:you|u|vous|tu|du)\s+(?:still\s+|encore\s+|noch\s+)?
    (?:hold|have|got|keep|know|tienes|guardas|avez|as|gardez|hast)\s+
    |,?\s*(?:i|we)\s*(?:should|would|'d|want|need|must)?$""",
    _F,
)
# Courtesies and fillers cut from the ends of an object phrase.
_EDGE = re.compile(
    r"""^(?:(?:and|also|oh|ok|okay|so|right|hey|yo|um|uh|please|pls|plz|y|e|et|und|also|oye|bon|
    ach|noch|ja|yeah|yes|sí|oui|alors|puis|et\s+puis|and\s+honestly|honestly|now)[\s,:]+)+
    |(?:[\s,:;]+(?:please|pls|plz|thanks|ta|bitte|por\s+favor|porfa|xfa|s'il\s+te\s+pla[iî]t|stp|
    svp|though|too|as\s+well|for\s+me|thank\s+you|kindly|dear|love))+$""",
    _F,
)
_PRONOUN_ONLY = re.compile(
    r"""^(?:it|that|them|this|those|these|all\s+of\s+(?:it|that|them)|the\s+lot|everything|
    lo|la|los|las|eso|esto|le|les|[çc]a|cela|das|es|sie|alles)$""",
    _F,
)


def find(turn: str, language: str, context: str | None = None) -> str | None:
    """The object phrase of a removal request said in words the rule tables
    do not know, or None (see the module docstring). ``context`` is the
    user's previous turn, for a request whose object was said there ("the
    thing I told you about my mum..." / "yes. can you forget it?")."""
    found = _find(turn, language)
    if found is not None or context is None or not dangling(turn, language):
        return found
    phrase = _tidy(context)
    own = _OWN[language]
    if phrase and len(phrase) <= 200 and (own.search(phrase) or window(phrase, 0.0)):
        return phrase
    return None


def dangling(turn: str, language: str) -> bool:
    """True when the turn makes a removal request whose object is only a
    pronoun or nothing ("please bin it", "Tu peux l'oublier ?"). Meant for a
    turn in which ``find`` found no object (it does not look again)."""
    patterns = (*_IDIOMS.get(language, ()), _BACK_REFERENCE.get(language))
    if _NEVER_MIND.search(turn) or not any(p is not None and p.search(turn) for p in patterns):
        return False
    for sentence in _sentences(turn):
        if any(
            p is not None
            and p.search(sentence)
            and not _NARRATED.search(sentence)
            and not _OTHER_TASK.search(sentence)
            for p in patterns
        ):
            return True
        if len(sentence.split()) > 3:
            return False  # said something of its own first: not a bare "yes. bin it"
    return False


def _sentences(turn: str) -> list[str]:
    return [s.group(0).strip() for s in _SENTENCE.finditer(turn) if s.group(0).strip()]


# "I'm over the milky stuff": a liking that lapsed (not "over the moon").
_OVER = re.compile(
    r"""\bi(?:'m|\s+am)\s+(?:so\s+|totally\s+|completely\s+|well\s+)?over\s+
    (?!the\s+moon\b|it\b|him\b|her\b|them\b|that\b|this\b|there\b|here\b|it\s)
    (?P<t>[\w' -]{2,40}?)(?=\s*[.,;!?:]|\s+(?:now|these\s+days|anyway)\b|$)""",
    _F,
)


# A membership, job or plan the user ended: "FitX hab ich gekündigt", "ya no
# hago la práctica en el Van Buren", "j'ai résilié mon abonnement".
_ENDED = {
    "en": _OVER,
    "es": re.compile(
        r"""\bya\s+no\s+(?:hago|voy\s+a|voy\s+al|trabajo\s+en|estoy\s+en|vivo\s+en|juego\s+en)\s+
        (?P<t>[^,.;!?]{2,50})""",
        _F,
    ),
    "fr": re.compile(
        r"""\bj'ai\s+(?:r[ée]sili[ée]|quitt[ée])\s+(?P<t>[^,.;!?]{2,50})
        |\bje\s+ne\s+(?:travaille|vais|suis)\s+plus\s+(?:à|au|chez|dans)\s+(?P<t2>[^,.;!?]{2,50})""",
        _F,
    ),
    "de": re.compile(
        r"""(?P<t>\b[A-ZÄÖÜ][\w-]+(?:\s+[A-ZÄÖÜ][\w-]+)?)\s+hab(?:e)?\s+ich\s+gek[üu]ndigt
        |\bich\s+hab(?:e)?\s+(?P<t2>[^,.;!?]{2,50}?)\s+gek[üu]ndigt""",
        re.VERBOSE,
    ),
}


def lapsed(turn: str, language: str) -> str | None:
    """What the user is "over", quit or cancelled, or None."""
    pattern = _ENDED.get(language)
    m = pattern.search(turn) if pattern is not None else None
    if m is None:
        return None
    found = m.groupdict()
    return _tidy(found.get("t") or found.get("t2") or "") or None


# Parts of a text being edited: "strike the second paragraph of my letter".
_EDITED = re.compile(
    r"""\b(?:paragraphs?|sentences?|essay|chapter|drafts?|brouillon|paragraphe|phrase\s+de|absatz|
    p[áa]rrafo|borrador|line\s+of)\b""",
    _F,
)


def edits_a_text(phrase: str) -> bool:
    """True when a request's object is part of a text being written, not
    something the user told the assistant."""
    return bool(_EDITED.search(phrase))


def names_conclusion(phrase: str) -> bool:
    """True when a request's object is a conclusion ("the verdict you gave me")."""
    return bool(_CONCLUSION.search(phrase))


def conclusion(turn: str) -> str | None:
    """The assistant's conclusion a turn dismisses ("drop that verdict",
    "efface ta conclusion"), or None: an inferential request."""
    sentences = _sentences(turn)
    for i, sentence in enumerate(sentences):
        found = _CONCLUSION.search(sentence)
        said = " ".join(sentences[i : i + 3])  # "you said 'X' last week. don't store that."
        if found and _DISMISS.search(said) and not _NARRATED.search(sentence):
            return _tidy(found.group(0))
    return None


def _find(turn: str, language: str) -> str | None:
    idioms, back, own = _IDIOMS.get(language), _BACK_REFERENCE.get(language), _OWN.get(language)
    if not idioms or back is None or own is None or _NEVER_MIND.search(turn):
        return None
    sentences = _sentences(turn)
    asked = _ASKED.get(language)
    for sentence in sentences:
        m = asked.search(sentence) if asked is not None else None
        if m and not _OTHER_TASK.search(sentence):
            phrase = _tidy(m.group("o"))
            if own.search(phrase) and not _PRONOUN_ONLY.match(phrase):
                return phrase
    for i, sentence in enumerate(sentences):
        if (
            _NARRATED.search(sentence)
            or _OTHER_TASK.search(sentence)
            or (sentence.endswith("?") and not _MODAL.search(sentence))
        ):
            continue
        earlier = [_tidy(x) for x in reversed(sentences[max(0, i - 3) : i])]
        previous = earlier[0] if earlier else ""
        # An idiom of its own may name its object after it ("nuke my ...");
        # the tables' verbs only before it ("X. Delete.").
        hits = [(m, True) for p in idioms if (m := p.search(sentence))]
        hits += [(m, False) for m in [back.search(sentence)] if m]
        for m, object_after in hits:
            after = _tidy(m.groupdict().get("o") or "") if object_after else ""
            before = _tidy(sentence[: m.start()])
            candidates = [
                phrase
                for phrase in (after, before, *earlier)
                if phrase
                and not _PRONOUN_ONLY.match(phrase)
                and own.search(phrase)
                and not _NARRATED.search(phrase)
                and not _OTHER_TASK.search(phrase)
            ]
            if candidates and candidates[0] in (after, before):
                return candidates[0]
            # in earlier sentences, the user's own ("mi RUT") before a mere
            # reference ("lo de la beca"), from the possessive on
            mine = next((m for c in candidates if (m := _MINE[language].search(c))), None)
            if mine is not None:
                return _tidy(mine.string[mine.start() :])
            if candidates:
                return candidates[0]
            # "tues night. nuke it.": a time alone names what was said then
            if previous and len(previous.split()) <= 5 and window(previous, 0.0) is not None:
                return previous
    return None


def _tidy(phrase: str) -> str:
    phrase = phrase.strip(" \t\n,;:.!?¿¡\"'—–-…")
    for _ in range(3):
        cut = _FRAME.sub("", _EDGE.sub("", phrase)).strip(" ,;:.!?¿¡—–-…")
        if cut == phrase:
            break
        phrase = cut
    return phrase

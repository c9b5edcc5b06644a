"""Forget requests in words the rule tables do not know (``dialogue.idioms``),
their look-alikes, and requests whose object was said in the previous turn."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import verified_clean
from test_dialogue_forgetting import DAY, T0, held, recalled, say

from unrecall import Memory
from unrecall.bench.unlearning import load_suite
from unrecall.dialogue.requests import detect, points_back
from unrecall.dialogue.windows import window

DEV3 = Path(__file__).parents[1] / "src/unrecall/bench/data/unlearning_dev3.json"


@pytest.mark.parametrize(
    ("turn", "kind", "target"),
    [
        ("that diesel tank code. take it out of your head.", "factual", "that diesel tank code"),
        ("my therapist's name... nuke it pls", "factual", "my therapist's name"),
        ("the bit about my brother isn't yours to keep", "factual", "the bit about my brother"),
        ("tues night. forget it. all of it.", "temporal", "tues night"),
        ("Samstagnacht. Streich das komplett.", "temporal", "Samstagnacht"),
        ("mi pin, tíralo a la basura", "factual", "mi pin"),
        ("Mon code de carte, vire-le.", "factual", "Mon code de carte"),
        ("Meine alte Adresse – weg damit, bitte.", "factual", "Meine alte Adresse"),
        (
            "the two numbers from admin day, the tax one and the Council one. both can go",
            "compositional",
            "the two numbers from admin day, the tax one and the Council one",
        ),
    ],
)
def test_idioms_are_requests_with_their_object(turn: str, kind: str, target: str) -> None:
    found = detect(turn)
    assert found is not None and (found.kind, found.target) == (kind, target)


@pytest.mark.parametrize(
    "turn",
    [
        "let it go. speaking of my sister, Mere just got engaged!",
        "My aunt's Skoda Octavia has the licence plate UN-2986-XZ and is green.",
        "Mi hijo siempre borra sus dibujos.",
        "I binned my old trainers yesterday.",
        "How do I bin a file on my laptop?",
        "Forget it, I'll just order pizza.",
        "Nimm die Pfanne vom Herd und wirf die Zwiebeln weg.",
        "Don't forget my birthday is next Friday!",
    ],
)
def test_look_alikes_are_not_requests(turn: str) -> None:
    assert detect(turn) is None and not points_back(turn)


def test_weekday_abbreviations_and_german_compounds_are_windows() -> None:
    for phrase, weekday in (("tues night", 1), ("Samstagnacht", 5), ("Freitagabend", 4)):
        start, _ = window(phrase, T0 + 7 * DAY)
        assert datetime.fromtimestamp(start, UTC).weekday() == weekday
    assert window("I sat down with Huw", T0) is None


def test_a_request_split_over_two_turns_takes_the_first_turns_object(mem: Memory) -> None:
    say(mem, "user", "My mum's dementia diagnosis came through in May.")
    say(mem, "user", "My sister Ana lives in Porto.")
    first = say(
        mem, "user", "the thing I told you about my mum's diagnosis...", session="s2", at=T0 + DAY
    )
    report = say(mem, "user", "yes. please bin it.", session="s2", at=T0 + DAY + 60)
    # the learned reader may take the first half for the request already
    done = first.requests + report.requests
    assert sum(r.count for r in done) >= 1
    assert "dementia" not in held(mem)
    assert "porto" in recalled(mem, "where does my sister live")
    # the pointing-back turn went with the request, from every file
    assert "mum's diagnosis" not in held(mem)
    assert verified_clean(mem, ["dementia", "mum's diagnosis"])
    assert "dementia" not in str(mem.history(done[0].request_turn, user_id="dana"))


def test_a_pointing_back_turn_after_a_statement_of_its_own_is_not_split(mem: Memory) -> None:
    say(mem, "user", "My sister Ana lives in Porto.")
    report = say(mem, "user", "We talked about the garden for ages today. please bin it.")
    assert not report.requests
    assert "porto" in recalled(mem, "where does my sister live")


@pytest.mark.parametrize(
    ("turn", "old", "new"),
    [
        ("no wait, it's actually 14B, not 41B, I mistyped the flat number", "41B", "14B"),
        ("I read it wrong. the test isn't the 12th, it's the 19th.", "the 12th", "the 19th"),
        ("Me equivoqué: el vuelo es el jueves, no el martes.", "el martes", "el jueves"),
        ("Je me suis trompé : c'est le 12, pas le 21.", "le 21", "le 12"),
        ("Hab mich vertippt, das ist die 21, nicht die 12.", "die 12", "die 21"),
    ],
)
def test_corrections_without_a_change_verb_are_replacements(turn: str, old: str, new: str) -> None:
    found = detect(turn)
    assert found is not None and found.kind == "replacement"
    assert (found.target, found.new_value) == (old, new)


def test_it_is_x_not_y_without_a_correction_marker_is_a_statement() -> None:
    assert detect("It's a cat, not a dog, that lives next door.") is None


@pytest.mark.parametrize(
    "turn",
    [
        "I'm 44, not 64. please drop that verdict about hot flushes",
        "No es lo que pensaste. Quítate esa idea de la cabeza.",
        "Inès c'est ma coloc. Efface ta conclusion, s'il te plaît.",
        "Ich bin nicht taub. Ihre Diagnose streichen Sie bitte wieder.",
    ],
)
def test_a_dismissed_conclusion_is_an_inferential_request(turn: str) -> None:
    found = detect(turn)
    assert found is not None and found.kind == "inferential"


def test_a_corrected_day_replaces_the_day_and_keeps_the_rest(mem: Memory) -> None:
    say(mem, "user", "the TB test with Rhian from Severn Vets is on the 12th of March")
    say(
        mem,
        "user",
        "I read the vet's letter wrong. the TB test isn't that Wednesday, it's the week after,"
        " 19th of March",
        session="s2",
        at=T0 + DAY,
    )
    assert "12th of march" not in held(mem)
    answer = recalled(mem, "when is the TB test")
    assert "19th of march" in answer and "severn vets" in answer


@pytest.mark.parametrize(
    ("text", "language", "category"),
    [
        ("everything about my love life", "en", "relationships"),
        ("toute la saga judiciaire avec le voisin", "fr", "legal"),
        ("das ganze Glaubenszeug von mir", "de", "beliefs"),
        ("nada mío de política", "es", "beliefs"),
    ],
)
def test_topic_lexicons_cover_beliefs_legal_matters_and_phrases(
    text: str, language: str, category: str
) -> None:
    from unrecall.dialogue.requests import topic_categories

    assert category in topic_categories(text, language)


def test_a_two_word_entry_counts_its_words_together() -> None:
    from unrecall.recall.categories import categories

    assert categories("everything about my love life") == {"relationships"}
    assert categories("I love jazz") == {"preferences"}


@pytest.mark.parametrize(
    ("turn", "kind"),
    [
        ("could you maybe wipe everything about my love life?", "category"),
        ("Anything with a euro sign in it. I feel strange having it written down", "category"),
        ("coffee order update: I'm over the milky stuff. just a long black now", "factual"),
    ],
)
def test_hedged_and_indirect_requests(turn: str, kind: str) -> None:
    found = detect(turn)
    assert found is not None and found.kind == kind


def test_over_the_moon_is_not_a_request() -> None:
    assert detect("I'm over the moon about the new flat!") is None


def test_a_category_sweep_keeps_what_is_about_someone_else(mem: Memory) -> None:
    say(mem, "user", "I matched with a guy called Hemi on Hinge, we've been on three dates.")
    say(mem, "user", "speaking of my sister, Mere just got engaged to Nikau!!")
    say(mem, "user", "could you wipe everything about my love life?", session="s2", at=T0 + DAY)
    assert "hemi" not in held(mem)
    assert "nikau" in recalled(mem, "who is my sister Mere engaged to")


@pytest.mark.parametrize(
    "turn",
    [
        "and the hot-flush verdict you gave me last week. I'm 44, not 64. please don't file me"
        " under that",
        "The Thursday meetings are Toastmasters! Whatever you decided about me and drinking,"
        " please undecide it",
        "Whatever conclusion you reached about me coping alone, kindly un-reach it.",
    ],
)
def test_conclusions_taken_back_in_other_words_are_inferential(turn: str) -> None:
    found = detect(turn)
    assert found is not None and found.kind == "inferential"
    assert not found.target.endswith("kindly")


def test_filing_someone_under_a_label_is_not_a_file_task() -> None:
    assert detect("Please delete the file from my laptop.") is None
    assert detect("the verdict you gave me. please don't file me under that") is not None


def test_a_hedged_spanish_conclusion_goes_with_its_request(mem: Memory) -> None:
    say(mem, "user", "Paco duerme en el sofá y apenas hablamos.")
    say(
        mem,
        "assistant",
        "Lo siento. Que Paco duerma en el sofá y que apenas habléis suena a que estáis pasando"
        " por una crisis de pareja.",
    )
    say(mem, "user", "Hecho: mi código de la alarma es 4471.")
    say(
        mem,
        "user",
        "Lo de Paco es por la espalda. ¡No es lo que pensaste! Quítate esa idea de la cabeza.",
        session="s2",
        at=T0 + DAY,
    )
    assert "crisis de pareja" not in held(mem)
    assert "4471" in held(mem)


def test_friday_night_said_days_later_reaches_the_last_friday_we_talked(mem: Memory) -> None:
    # T0 is a Wednesday; the Friday before it is T0 - 5 days.
    friday = T0 - 5 * DAY + 12 * 3600
    say(mem, "user", "I took two tourists up Salkantay without the SERNANP permit.", at=friday)
    say(mem, "user", "My dog Lupe loves the park.", at=T0 - 20 * DAY)
    # said eleven days after that Friday: the nearest Friday before has no turns
    say(mem, "user", "lo del viernes en la noche, bórralo", session="s9", at=friday + 11 * DAY)
    assert "sernanp" not in held(mem)
    assert "lupe" in recalled(mem, "what is my dog called")


def test_everything_from_an_occasion_takes_that_conversation(mem: Memory) -> None:
    say(mem, "user", "I'm flying to Lisbon on the 14th of June, on my own.", session="s1")
    say(mem, "user", "My birth father Rui lives in Alfama and wants to meet.", session="s1")
    say(
        mem,
        "assistant",
        "Meeting your birth father in Alfama is a big step. Would it help to plan it?",
        session="s1",
    )
    say(mem, "user", "My book club meets on Tuesdays.", session="s2", at=T0 + DAY)
    say(
        mem,
        "user",
        "can you scrap everything from the night I was planning the Portugal trip?",
        session="s3",
        at=T0 + 3 * DAY,
    )
    assert "alfama" not in held(mem) and "lisbon" not in held(mem)
    assert "tuesdays" in recalled(mem, "when does my book club meet")


@pytest.mark.parametrize(
    "turn",
    [
        "why do you still have my old address?",
        "do you really need to keep my passport number?",
        "my ex's name. never bring it up again.",
        "¿para qué quieres guardar mi dirección vieja?",
        "Mon ancienne adresse, tu n'as pas besoin de garder ça.",
        "Meine alte Handynummer musst du nicht speichern.",
    ],
)
def test_requests_said_as_questions_or_complaints(turn: str) -> None:
    assert detect(turn) is not None


@pytest.mark.parametrize(
    "turn",
    [
        "Why do you still have to log in every day on that app?",
        "I need to dispose of the old paint cans in the garage.",
        "We should do away with the dress code at work.",
    ],
)
def test_generic_removal_words_about_other_things_are_not_requests(turn: str) -> None:
    assert detect(turn) is None


@pytest.mark.parametrize(
    "turn",
    [
        "Also the coworking wifi password is Spree-Wolke-7, I always forget it on Fridays",
        "And my new bus pass number is 6330 0417 2288, in case I lose it again.",
        "Kindly also strike the second paragraph of my letter to the Chronicle.",
        "Effacez la dernière phrase de mon brouillon, elle est trop sèche.",
    ],
)
def test_own_forgetting_and_text_edits_are_not_requests(turn: str) -> None:
    assert detect(turn) is None


@pytest.mark.parametrize(
    ("turn", "kind", "target"),
    [
        (
            "If you still hold anything about my personal finances from last month, the"
            " pension, I should like it disposed of.",
            "category",
            "anything about my personal finances from last month, the pension",
        ),
        (
            "why do you still have my license number and the Frost account?? get rid of both",
            "compositional",
            "my license number and the Frost account",
        ),
        (
            "now I want all that court business gone from here",
            "category",
            "I want all that court business",
        ),
        ("Sorry, I make mistake before. Is P31 K7W2, not P31 K2W7.", "replacement", "P31 K2W7"),
        ("you said 'boyfriend' last week. don't store that.", "inferential", "you said 'boyfriend"),
    ],
)
def test_third_set_forms(turn: str, kind: str, target: str) -> None:
    found = detect(turn)
    assert found is not None and (found.kind, found.target) == (kind, target)


def test_one_of_two_identifiers_of_a_memory_goes_when_its_word_names_it(mem: Memory) -> None:
    say(mem, "user", "pa la beca: mi RUT es 20.417.836-K y mi número de alumna es 2021-4178")
    say(mem, "user", "y otra cosa, ¿pa qué guardai mi RUT? bórralo nomás", at=T0 + DAY)
    assert "20.417.836-k" not in held(mem)
    assert "2021-4178" in held(mem)


def test_a_nearer_reference_loses_to_the_users_own_information() -> None:
    found = detect("y otra cosa, ¿pa qué guardai mi RUT? si ya mandé lo de la beca. bórralo nomás")
    assert found is not None and found.target == "mi RUT"


@pytest.mark.parametrize(
    ("turn", "kind", "target"),
    [
        ("Und noch was: FitX hab ich gekündigt, abends viel zu voll.", "factual", "FitX"),
        ("ya no hago la práctica en el Van Buren, me cambiaron", "factual",
         "la práctica en el Van Buren"),
        ("Soyez gentil : effacez son adresse et le code de son immeuble.", "compositional",
         "son adresse et le code de son immeuble"),
        ("Vous m'aviez écrit qu'elle voulait me mettre sous tutelle : ce n'est pas du tout cela.",
         "inferential", "Vous m'aviez écrit qu'elle voulait me mettre sous tutelle"),
        ("pls forget the tama thing 💀💀 he has a gf", "factual", "the tama thing"),
        ("cleanup: rm home addr, personal number, iban.", "compositional",
         "home addr, personal number, iban"),
    ],
)  # fmt: skip
def test_ended_memberships_third_party_data_and_rejected_claims(
    turn: str, kind: str, target: str
) -> None:
    found = detect(turn)
    assert found is not None and (found.kind, found.target) == (kind, target)


@pytest.mark.parametrize(
    "turn",
    [
        "My husband's Ford Focus has the licence plate RM-3985-YP and is charcoal.",
        "j'ai des nausées le matin, j'ai arrêté le vin, et j'ai rendez-vous jeudi.",
    ],
)
def test_plates_and_stopped_habits_are_not_requests(turn: str) -> None:
    assert detect(turn) is None


def test_an_aside_in_parentheses_is_no_correction() -> None:
    turn = (
        "estoy en un carrete en Viña y acabo de agarrar con el Benja, el ex de la Coni"
        " (la de la U, no mi prima) en la playa de Reñaca"
    )
    assert detect(turn) is None


def test_signs_of_a_condition_are_a_conclusion_to_take_back(mem: Memory) -> None:
    say(mem, "user", "not sleeping, not eating, lost interest in netball")
    say(
        mem,
        "assistant",
        "Not sleeping, not eating and losing interest in netball, all at once, can be signs"
        " of depression.",
    )
    say(
        mem,
        "user",
        "wait what u said the other night abt me maybe having depression. nah. i was stressed",
        session="s2",
        at=T0 + DAY,
    )
    assert "depression" not in recalled(mem, "depression")


def test_every_hedged_clause_of_the_reply_naming_the_conclusion_goes(mem: Memory) -> None:
    # dev3's d01 up to its request r2: "... can be signs of depression" had
    # stayed beside the removed "if you've been feeling depressed ..."
    dialogue = next(d for d in load_suite(DEV3).dialogues if d.id == "d01-jaz-auckland")
    for turn in dialogue.turns:
        say(mem, turn.role, turn.text, session=turn.session_id, at=turn.timestamp)
        if turn.request == "r2" and turn.role == "user":
            break
    assert "depress" not in held(mem)
    assert "netball" in held(mem)


def test_owner_of_a_slot_is_read_with_the_possessive_pattern() -> None:
    # about_someone_else's speaker pattern once shadowed the module's
    # first-person possessive pattern, and "my ..." lost its owner.
    from unrecall.control.request_parts import about_someone_else, slot_owner

    assert slot_owner("my license number") == "me"
    assert slot_owner("mi RUT") == "me"
    assert about_someone_else("Mere just got engaged to Nikau")
    assert not about_someone_else("I matched with Hemi on Hinge")


@pytest.mark.parametrize(
    "turn",
    [
        "ugh, that thing I said about my mum's diagnosis. can you not keep that",
        "Hmm, I'd rather you didn't have my ex's surname written down anywhere.",
        "Mind wiping my badge number and the door code for the lab? Ta.",
        "Whatever you've picked up about my sex life, I'd really prefer it gone.",
        "You've apparently decided I'm pregnant?? I bought ginger biscuits. Forget that.",
        "Stop treating me like I'm depressed just because I said I was tired once.",
        "Actually I typed my email wrong earlier: it's mo.k@fastmail.com, not mo.k@gmail.com.",
        "Lo de mi familia, todo, no quiero que lo tengas.",
        "Mon adresse et mon numéro de sécu, tu peux virer les deux ?",
        "Das war gelogen, ich hatte nie einen Unfall. Bitte nicht speichern.",
        "Nee, Moment, es ist Zimmer 304, nicht 340. Hab mich vertan.",
    ],
)
def test_more_everyday_forms_are_requests(turn: str) -> None:
    assert detect(turn) is not None


def test_an_email_correction_keeps_the_dots_of_both_values() -> None:
    found = detect("I typed my email wrong earlier: it's mo.k@fastmail.com, not mo.k@gmail.com.")
    assert found is not None
    assert (found.target, found.new_value) == ("mo.k@gmail.com", "mo.k@fastmail.com")

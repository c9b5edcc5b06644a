"""The entity graph: names, lone parts, role and kin aliases, provenance."""

from __future__ import annotations

from unrecall.recall.entities import EntityGraph

TEXTS = [
    "Ravi Shah, our CFO, signed off on hiring Arden Advisory for the Q3 review.",
    "The Q3 contract with Arden Advisory came through today.",
    "Arden Advisory's filing lists Nina Shah as sole owner.",
    "Ravi and his wife Nina are hosting the offsite dinner.",
    "Booked a room at the Arden Hotel for the Leeds trip.",
    "Nina Patel from HR sent the holiday rota.",
    "Ravi flies to Pune on Monday.",
]


def graph() -> EntityGraph:
    return EntityGraph.build(enumerate(TEXTS))


def test_full_names_are_entities_with_their_memories() -> None:
    g = graph()
    assert g.mentioned_in["arden advisory"] == {0, 1, 2}
    assert g.mentioned_in["arden hotel"] == {4}  # another Arden
    assert g.names["arden advisory"] == "Arden Advisory"  # no possessive


def test_a_lone_part_resolves_to_the_one_full_name_holding_it() -> None:
    g = graph()
    assert "ravi sah" in g.entities_of[6]  # "Ravi flies to Pune"


def test_an_ambiguous_part_resolves_by_the_names_beside_it() -> None:
    # two Ninas; the one beside Ravi Shah is Nina Shah, not Nina Patel
    assert graph().entities_of[3] == {"ravi sah", "nina sah"}


def test_a_sentences_capitalised_first_word_is_no_entity() -> None:
    assert "buked" not in graph().mentioned_in  # "Booked a room ..."


def test_a_word_after_a_possessive_is_a_role_not_a_name() -> None:
    g = graph()
    assert "cfo" not in g.mentioned_in
    assert g.aliases["cfo"] == {"ravi sah": {0}}


def test_role_aliases_in_every_word_order() -> None:
    for text in (
        "Ravi Shah, our CFO, called.",
        "Ravi Shah is our CFO.",
        "I met our CFO, Ravi Shah, at lunch.",
    ):
        assert EntityGraph.build([(1, text)]).resolve("our CFO") == {"ravi sah"}, text


def test_kin_aliases_and_a_chained_request() -> None:
    for text in (
        "Ravi Shah and his wife Nina Shah host the dinner.",
        "Ravi Shah's wife, Nina Shah, hosts the dinner.",
        "Dinner with Nina Shah, Ravi Shah's wife.",
    ):
        g = EntityGraph.build([(1, "Ravi Shah, our CFO, called."), (2, text)])
        assert g.resolve("Forget that the firm belongs to our CFO's wife") == {
            "ravi sah",
            "nina sah",
        }, text


def test_a_request_resolves_names_parts_and_identifiers() -> None:
    g = EntityGraph.build([(1, "Paid Marco Rossi 200 via IBAN GB33BUKB20201555555555.")])
    assert g.resolve("how much did I pay Marco?") == {"marco rosi"}
    assert any(k.startswith("id:") for k in g.resolve("forget GB33BUKB20201555555555"))


def test_neighbours_and_memories_follow_co_mentions() -> None:
    g = graph()
    assert g.neighbours("nina sah") == {"arden advisory", "ravi sah"}
    assert g.memories(["nina patel", "arden hotel"]) == {4, 5}
    assert frozenset(("ravi sah", "nina sah")) in g.edges


def test_the_graph_holds_nothing_but_what_its_texts_say() -> None:
    # closure: a graph built without memory 2 and 3 knows no Nina Shah
    g = EntityGraph.build((i, t) for i, t in enumerate(TEXTS) if i not in (2, 3))
    assert "nina sah" not in g.mentioned_in
    assert not any("nina sah" in keys for keys in g.aliases.values())


def test_stated_relations_are_edges_with_their_words() -> None:
    g = EntityGraph.build(
        [
            (1, "Turns out Arden Advisory is owned by Nina Shah, Ravi Shah's wife!"),
            (2, "Ravi Shah signed off on hiring Arden Advisory himself."),
            (3, "Nina Shah. Arden Advisory."),  # no verb between: no relation
        ]
    )
    assert g.relations[("arden advisory", "nina sah")] == {"is owned by": {1}}
    assert g.relations[("ravi sah", "arden advisory")] == {"signed off on hiring": {2}}
    assert ("nina sah", "arden advisory") not in g.relations


def test_an_unresolved_part_is_read_in_the_context_of_a_fact() -> None:
    g = EntityGraph.build(
        [(1, "Met Nina Shah today."), (2, "Lunch with Nina Patel."), (3, "Later, Nina hosted us.")]
    )
    assert g.entities_of[3] == set()  # two Ninas: unresolved on its own
    assert g.named_in(3, {"nina sah", "ravi sah"}) == {"nina sah"}
    assert g.named_in(3, {"nina sah", "nina patel"}) == set()  # still two


def test_roles_said_with_as_and_adjectives() -> None:
    g = EntityGraph.build(
        [
            (1, "Confidential: Sofia Chen has agreed to join as head of design."),
            (2, "We hired Dev Rao as our new CTO."),
            (3, "We're hiring Felix Zhang as our new VP of sales."),
        ]
    )
    assert g.resolve("Forget who our new head of design is going to be.") == {"sofia cen"}
    # a capitalised role after an adjective
    assert g.resolve("forget the name of our next VP of sales") == {"felix zang"}
    assert g.resolve("forget the name of our next head of design") == {"sofia cen"}
    assert g.resolve("forget our CTO") == {"dev rao"}
    assert "cto" not in g.mentioned_in  # "our new CTO" is a role, not a name


def test_context_settles_a_lone_part_only_between_few_and_not_the_users_own() -> None:
    texts = [(i, f"Met Nina {s} today.") for i, s in enumerate(["Shah", "Silva", "Okafor"], 1)]
    g = EntityGraph.build([*texts, (4, "Nina owns the backend."), (5, "My roommate Nina cooks.")])
    assert g.named_in(4, {"nina sah"}) == set()  # one of three Ninas: unsettled
    assert g.named_in(5, {"nina sah"}) == set()  # the user's roommate, not Nina Shah


def test_a_distinctive_role_names_its_one_owner_in_context() -> None:
    g = EntityGraph.build(
        [
            (1, "Confidential: Sofia Chen has agreed to join as head of design."),
            (2, "Reference checks on the head of design finalist came back glowing."),
            (3, "Ravi Shah, our CFO, called."),
            (4, "Our CFO hates spreadsheets."),
            (5, "Leila Haddad is my sister."),
            (6, "My sister called."),  # a kin word is no distinctive role
        ]
    )
    assert g.named_in(2, {"sofia cen"}) == {"sofia cen"}
    assert g.named_in(2, {"ravi sah"}) == set()  # only in the context of its owner
    assert g.named_in(4, {"ravi sah"}) == {"ravi sah"}
    assert g.entities_of[2] == set()  # not a mention of her on its own


def test_a_name_the_request_says_names_memories_that_only_start_with_it() -> None:
    texts = [(1, "Arjun painted a big 73 on his new front door."), (2, "Booked a room in Leeds.")]
    assert EntityGraph.build(texts).entities_of[1] == set()  # a capitalised first word
    g = EntityGraph.build(texts, spoken=["Please forget Arjun's new address."])
    assert g.entities_of[1] == {"arjun"}
    assert g.entities_of[2] == {"leds"}  # keys are folded spellings


def test_an_unnamed_relative_is_the_person_their_memories_share_content_with() -> None:
    g = EntityGraph.build(
        [
            (1, "My cousin's new house number is 9, easy to remember."),
            (2, "Hannah painted a big 9 on her new front door."),
            (3, "Hannah's new address is 9 Bridge End."),
            (4, "Watched the match with Hannah."),
            (5, "Nina Patel sent the rota."),
        ]
    )
    said = {1: {"9", "house"}, 2: {"9", "painted"}, 3: {"9", "address"}, 4: {"match"}, 5: {"rota"}}
    assert g.kin_by_content(said) == {"my:cousin": "hanah"}
    # one shared memory is not enough; a person named beside the kin is someone else
    assert g.kin_by_content({**said, 3: {"address"}}) == {}
    g = EntityGraph.build([(1, "My cousin and Hannah moved to 9."), (2, "Hannah painted a 9.")])
    assert g.kin_by_content({1: {"9"}, 2: {"9"}}) == {}

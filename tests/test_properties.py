"""Hypothesis properties of the contract: isolation, closure, no content in
the trail, precision on look-alikes. Each example gets a fresh store, on
each backend (the explicit hashing embedder keeps this fast)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest
from conftest import BACKENDS, drop_database, new_postgres_url
from helpers import (
    ALL_STATES,
    audit_text,
    dumps,
    fresh_store,
    no_raw_hits,
    token,
    verified_clean,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from unrecall import InvalidInput, Memory, NotFound, OpReport

PROPS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# A PostgreSQL example costs ~0.7 s (a new database, and every hard forget
# VACUUMs and CHECKPOINTs): 30 of them per property took 3.4 min for the
# module, so that backend draws fewer.
POSTGRES_EXAMPLES = 8

NewStore = Callable[[], AbstractContextManager[Memory]]


def props(new_store: NewStore) -> settings:
    """The properties' settings on ``new_store``'s backend."""
    if new_store is fresh_store:
        return PROPS
    return settings(PROPS, max_examples=POSTGRES_EXAMPLES)


@pytest.fixture(params=BACKENDS)
def new_store(request: pytest.FixtureRequest) -> NewStore:
    """Brand-new hashing stores on the test's backend, one per hypothesis
    example (function-scoped fixtures are not reset between examples): a
    file in a temporary folder, or a new database, dropped after it."""
    if request.param != "postgres":
        return fresh_store

    server = request.getfixturevalue("postgres_server")

    @contextmanager
    def database() -> Iterator[Memory]:
        url = new_postgres_url(server)
        try:
            with Memory(url, embedder="hashing") as mem:
                yield mem
        finally:
            drop_database(server, url)

    return database


VOCAB = ["amber", "basil", "cedar", "dune", "ember", "fjord", "garnet", "harbor"]

texts_st = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4, unique=True).map(
    lambda ws: "note " + " ".join(ws)
)
word_st = st.sampled_from(VOCAB)


def observe(mem: Memory, user_id: str) -> dict[str, Any]:
    """Everything a tenant can see of itself."""
    exported = mem.export(user_id=user_id)
    return {
        "all": [m.to_dict() for m in mem.get_all(user_id=user_id, states=ALL_STATES)],
        "turns": exported["turns"],
        "events": [e["op"] for e in exported["events"]],
        "search": {
            (w, mode): [h.to_dict() for h in mem.search(w, user_id=user_id, k=20, mode=mode)]
            for w in VOCAB[:4]
            for mode in ("hybrid", "lexical")
        },
    }


# -- tenant isolation ---------------------------------------------------------

op_st = st.one_of(
    st.tuples(st.just("add"), texts_st),
    st.tuples(st.just("release"), word_st),
    st.tuples(st.just("purge"), word_st),
    st.tuples(st.just("supersede"), word_st, texts_st),
    st.tuples(st.just("update"), st.integers(0, 5), texts_st),
    st.tuples(st.just("edit"), st.integers(0, 5), texts_st),
    st.tuples(st.just("delete"), st.integers(0, 5)),
    st.tuples(st.just("delete_turn"), st.integers(0, 5)),
    st.tuples(st.just("restore"), st.integers(0, 5)),
    st.tuples(st.just("delete_all")),
)


def apply(mem: Memory, user_id: str, op: tuple[Any, ...]) -> None:
    """Run one generated operation on a tenant (errors of the API allowed)."""
    items = mem.get_all(user_id=user_id, states=ALL_STATES)
    pick = items[op[1] % len(items)] if items and len(op) > 1 and isinstance(op[1], int) else None
    try:
        match op:
            case ("add", text):
                mem.add(text, user_id=user_id)
            case ("release", word):
                mem.release(word, user_id=user_id)
            case ("purge", word):
                mem.purge(word, user_id=user_id)
            case ("supersede", word, text):
                mem.supersede(word, text, user_id=user_id)
            case ("update", _, text) if pick:
                mem.update(pick.id, text, user_id=user_id)
            case ("edit", _, text) if pick:
                mem.edit(pick.id, text, user_id=user_id)
            case ("delete", _) if pick:
                mem.delete(pick.id, user_id=user_id)
            case ("delete_turn", _) if pick and pick.sources:
                mem.delete(pick.sources[0], user_id=user_id)
            case ("restore", _) if pick:
                mem.restore(pick.id, user_id=user_id)
            case ("delete_all",):
                mem.delete_all(user_id=user_id)
    except (InvalidInput, NotFound):
        pass  # e.g. restoring an active memory, or a tenant already gone


def test_operations_on_one_tenant_never_change_another(new_store: NewStore) -> None:
    @props(new_store)
    @given(
        bystander=st.lists(texts_st, min_size=1, max_size=4),
        actor=st.lists(texts_st, min_size=0, max_size=4),
        ops=st.lists(op_st, min_size=1, max_size=8),
    )
    def run(bystander: list[str], actor: list[str], ops: list[tuple[Any, ...]]) -> None:
        with new_store() as mem:
            for text in bystander:
                mem.add(text, user_id="bystander")
            mem.release(bystander[0].split()[1], user_id="bystander")
            for text in actor:
                mem.add(text, user_id="actor")
            before = observe(mem, "bystander")
            for op in ops:
                apply(mem, "actor", op)
                # the actor's own search only ever shows the actor's active memories
                active = {i.id for i in mem.get_all(user_id="actor")}
                for hit in mem.search("note", user_id="actor", k=50):
                    assert hit.id in active
            assert observe(mem, "bystander") == before
            assert mem.verify_audit().ok

    run()


# -- closure ------------------------------------------------------------------

messages_st = st.lists(
    st.tuples(st.sampled_from(["user", "assistant", "system"]), texts_st), min_size=1, max_size=4
).filter(lambda ms: any(role != "system" for role, _ in ms))


def test_deleting_a_turn_leaves_nothing_derived_from_it(new_store: NewStore) -> None:
    @props(new_store)
    @given(
        batches=st.lists(messages_st, min_size=1, max_size=4),
        edits=st.lists(st.tuples(st.integers(0, 20), texts_st), max_size=3),
        victim=st.integers(0, 50),
    )
    def run(
        batches: list[list[tuple[str, str]]], edits: list[tuple[int, str]], victim: int
    ) -> None:
        with new_store() as mem:
            for batch in batches:
                mem.add(
                    [{"role": r, "content": c} for r, c in batch], user_id="u", honor_requests=False
                )
            for index, text in edits:  # edited versions share their original's sources
                active = mem.get_all(user_id="u")
                mem.edit(active[index % len(active)].id, text, user_id="u")
            everything = mem.get_all(user_id="u", states=ALL_STATES)
            turns = [t["id"] for t in mem.export(user_id="u")["turns"]]
            turn = turns[victim % len(turns)]
            derived = {m.id for m in everything if turn in m.sources}
            assert derived  # every stored turn sources at least one memory

            report = mem.delete(turn, user_id="u")
            assert set(report.ids) == derived
            left = mem.get_all(user_id="u", states=ALL_STATES)
            assert all(turn not in m.sources for m in left)
            assert {m.id for m in left} == {m.id for m in everything} - derived
            assert [t["id"] for t in mem.export(user_id="u")["turns"]] == [
                t for t in turns if t != turn
            ]
            hits = {h.id for w in VOCAB for h in mem.search(w, user_id="u", k=50)}
            assert not hits & derived

    run()


# -- no content in the trail after a purge -------------------------------------


def test_purged_token_is_in_no_trail_and_no_byte(new_store: NewStore) -> None:
    @props(new_store)
    @given(
        how=st.sampled_from(["active", "released", "superseded", "updated", "edited", "upper"]),
        others=st.lists(texts_st, max_size=4),
        where=st.sampled_from(["start", "middle", "end"]),
    )
    def run(how: str, others: list[str], where: str) -> None:
        secret = token()
        said = secret.upper() if how == "upper" else secret
        text = {
            "start": f"{said} is my code",
            "middle": f"my code {said} is secret",
            "end": f"my secret code is {said}",
        }[where]
        with new_store() as mem:
            reports: list[OpReport] = [mem.add(o, user_id="u") for o in others]
            add = mem.add(text, user_id="u")
            reports.append(add)
            mid = add.ids[0]
            if how == "released":
                reports.append(mem.release(mid, user_id="u"))
            elif how == "superseded":
                reports.append(mem.supersede(mid, "my secret code was replaced", user_id="u"))
            elif how == "updated":
                reports.append(mem.update(mid, "my secret code was rotated", user_id="u"))
            elif how == "edited":
                reports.append(mem.edit(mid, "my secret code was redacted", user_id="u"))
            if how == "updated":  # the update erased it already (where erasure is claimed)
                assert verified_clean(mem, [secret]) and no_raw_hits(mem, secret)
            purge = mem.purge(secret, user_id="u")
            reports.append(purge)
            assert (purge.match == "none") == (how == "updated")
            assert purge.ids or how == "updated"

            ids = {i for r in reports for i in [*r.ids, *r.created, *r.detail.get("turns", [])]}
            for ref in ids:
                history = mem.history(ref, user_id="u")
                assert secret not in dumps([e.to_dict() for e in history]).casefold()
            assert secret not in audit_text(mem).casefold()
            assert secret not in dumps(mem.export(user_id="u")).casefold()
            for report in reports:
                assert secret not in dumps(report.to_dict()).casefold()
            assert verified_clean(mem, [secret])
            assert no_raw_hits(mem, secret)
            # and the rest is still there
            for other in others:
                assert other in [i.text for i in mem.get_all(user_id="u", states=ALL_STATES)]

    run()


# -- precision on look-alike identifiers --------------------------------------

name_st = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)
tld_st = st.sampled_from(["io", "com", "org", "net"])


@st.composite
def email_family(draw: st.DrawFn) -> list[str]:
    local, other, domain = draw(name_st), draw(name_st), draw(name_st)
    tld = draw(tld_st)
    digit = draw(st.integers(2, 9))
    assume(len({local, other, domain}) == 3)
    return [
        f"{local}@{domain}.{tld}",
        f"{local}.{other}@{domain}.{tld}",
        f"{other}.{local}@{domain}.{tld}",
        f"{local}{digit}@{domain}.{tld}",
        f"{local}@{other}.{domain}.{tld}",
        f"{local}@{domain}{digit}.{tld}",
    ]


@st.composite
def number_family(draw: st.DrawFn) -> list[str]:
    base = draw(st.integers(1000, 9_999_999).map(str))
    digit = draw(st.integers(2, 9))
    family = [base, f"{base}{digit}", f"{digit}{base}"]
    if len(base) >= 5:
        family.append(base[:-1])
    return family


@st.composite
def code_family(draw: st.DrawFn) -> list[str]:
    prefix = draw(st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=2, max_size=4))
    number = draw(st.integers(10, 99_999))
    return [
        f"{prefix}-{number}",
        f"{prefix}-{number}0",
        f"{prefix}-{number}-2",
        f"X{prefix}-{number}",
    ]


def test_purging_one_look_alike_keeps_the_others(new_store: NewStore) -> None:
    @props(new_store)
    @given(
        family=st.one_of(email_family(), number_family(), code_family()),
        chosen=st.integers(0, 5),
        context=st.sampled_from(["contact {} today", "{}", "the id is {}.", "ref: {}, thanks"]),
    )
    def run(family: list[str], chosen: int, context: str) -> None:
        assume(len(set(family)) == len(family))
        target = family[chosen % len(family)]
        with new_store() as mem:
            ids = {ident: mem.add(context.format(ident), user_id="u").ids for ident in family}
            assert all(len(v) == 1 for v in ids.values())
            report = mem.purge(target, user_id="u")
            assert report.ids == ids[target], (target, family)
            left = {i.id for i in mem.get_all(user_id="u", states=ALL_STATES)}
            for ident in family:
                if ident == target:
                    continue
                (mid,) = ids[ident]
                assert mid in left, (target, ident)
                recalled = [h.id for h in mem.search(ident, user_id="u", k=10, mode="lexical")]
                assert mid in recalled, (target, ident)
            if context != "{}":  # a bare number is a substring of its look-alikes
                assert no_raw_hits(mem, context.format(target))

    run()


def test_canonical_case_forms_of_an_identifier_are_the_same(new_store: NewStore) -> None:
    @props(new_store)
    @given(family=st.one_of(email_family(), code_family()), chosen=st.integers(0, 5))
    def run(family: list[str], chosen: int) -> None:
        target = family[chosen % len(family)]
        with new_store() as mem:
            ids = {ident: mem.add(f"write to {ident} soon", user_id="u").ids[0] for ident in family}
            report = mem.purge(target.swapcase(), user_id="u")
            assert report.ids == [ids[target]]
            assert len(mem.get_all(user_id="u")) == len(family) - 1

    run()


# -- exact targeting by word -----------------------------------------------------


def test_purge_takes_exactly_the_memories_that_say_the_word(new_store: NewStore) -> None:
    @props(new_store)
    @given(notes=st.lists(texts_st, min_size=1, max_size=8), word=word_st)
    def run(notes: list[str], word: str) -> None:
        with new_store() as mem:
            ids = [mem.add(n, user_id="u").ids[0] for n in notes]
            expected = {i for i, n in zip(ids, notes, strict=True) if word in n.split()}
            report = mem.purge(word, user_id="u")
            assert set(report.ids) == expected
            if not expected:
                assert report.match == "none"
            left = {i.id for i in mem.get_all(user_id="u", states=ALL_STATES)}
            assert left == set(ids) - expected

    run()


# -- arbitrary text never breaks search or targeting ----------------------------


def test_any_query_is_answered_or_refused(new_store: NewStore) -> None:
    @props(new_store)
    @given(query=st.text(max_size=60))
    def run(query: str) -> None:
        with new_store() as mem:
            mem.add("note amber basil", user_id="u")
            mem.add('quotes " and NEAR( and col:x and ^start * -minus', user_id="u")
            before = [i.to_dict() for i in mem.get_all(user_id="u", states=ALL_STATES)]
            for mode in ("hybrid", "lexical"):
                try:
                    hits = mem.search(query, user_id="u", mode=mode)
                except InvalidInput as err:
                    assert len(query) < 8 or query not in str(err)
                else:
                    assert len(hits) <= 5
            try:
                report = mem.purge(query, user_id="u")
            except InvalidInput as err:
                assert len(query) < 8 or query not in str(err)
            else:
                json.dumps(report.to_dict())
            after = {i.id for i in mem.get_all(user_id="u", states=ALL_STATES)}
            assert after <= {b["id"] for b in before}

    run()

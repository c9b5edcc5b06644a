"""The control plane through the public API, one operation at a time."""

from __future__ import annotations

import time

import pytest
from helpers import ALL_STATES, erases, no_raw_hits, snapshot, token, verified_clean

from unrecall import InvalidInput, Memory, NotFound


def texts(mem: Memory, user_id: str = "u", **kw: object) -> list[str]:
    return [i.text for i in mem.get_all(user_id=user_id, **kw)]  # type: ignore[arg-type]


def recalled(mem: Memory, query: str, user_id: str = "u", k: int = 10) -> list[str]:
    return [h.text for h in mem.search(query, user_id=user_id, k=k)]


# -- update -------------------------------------------------------------------


def test_update_rewrites_in_place(fast_mem: Memory) -> None:
    old = token()
    mid = fast_mem.add(f"my badge number is {old}", user_id="u").ids[0]
    created = fast_mem.get(mid, user_id="u").created_at
    report = fast_mem.update(mid, "my badge number is withdrawn", user_id="u")
    assert report.op == "update" and report.ids == [mid]
    item = fast_mem.get(mid, user_id="u")
    assert item.text == "my badge number is withdrawn"
    assert item.state == "active" and item.created_at == created
    assert item.updated_at >= created
    assert recalled(fast_mem, "withdrawn") == ["my badge number is withdrawn"]
    assert fast_mem.search(old, user_id="u", mode="lexical") == []
    assert [e.op for e in fast_mem.history(mid, user_id="u")] == ["add", "update"]


def test_update_of_released_memory_stays_out_of_recall(fast_mem: Memory) -> None:
    mid = fast_mem.add("the wifi password is hunter2", user_id="u").ids[0]
    fast_mem.release(mid, user_id="u")
    fast_mem.update(mid, "the wifi password is swordfish", user_id="u")
    assert fast_mem.search("wifi password", user_id="u") == []
    fast_mem.restore(mid, user_id="u")
    assert recalled(fast_mem, "wifi password") == ["the wifi password is swordfish"]


# -- delete -------------------------------------------------------------------


def test_delete_memory_id_is_hard_and_precise(fast_mem: Memory) -> None:
    gone = fast_mem.add("I take the 7:15 train", user_id="u").ids[0]
    kept = fast_mem.add("I take the bus on Fridays", user_id="u").ids[0]
    report = fast_mem.delete(gone, user_id="u")
    assert report.op == "delete" and report.ids == [gone] and report.erased is erases(fast_mem)
    assert report.turns_removed == 1
    assert [i.id for i in fast_mem.get_all(user_id="u", states=ALL_STATES)] == [kept]
    with pytest.raises(NotFound):
        fast_mem.get(gone, user_id="u")
    assert recalled(fast_mem, "train") == ["I take the bus on Fridays"]
    assert len(fast_mem.export(user_id="u")["turns"]) == 1
    with pytest.raises(NotFound):  # a second delete finds nothing
        fast_mem.delete(gone, user_id="u")


def test_delete_turn_removes_everything_derived_from_it(fast_mem: Memory) -> None:
    report = fast_mem.add(
        [
            {"role": "user", "content": "my sister is called Ines"},
            {"role": "assistant", "content": "I will remember your sister Ines"},
            {"role": "user", "content": "and my brother is called Tomas"},
        ],
        user_id="u",
        honor_requests=False,  # every message stored as given
    )
    t_sister, t_ack, t_brother = report.detail["turns"]
    m_sister = report.ids[0]
    # derived copies of the first turn: an edited version and its superseded original
    edited = fast_mem.edit(m_sister, "my sister is called Inês Silva", user_id="u").created[0]
    assert fast_mem.get(edited, user_id="u").sources == [t_sister]

    deleted = fast_mem.delete(t_sister, user_id="u")
    assert set(deleted.ids) == {m_sister, edited}
    left = fast_mem.get_all(user_id="u", states=ALL_STATES)
    assert [i.sources for i in left] == [[t_ack], [t_brother]]
    assert not any("sister is called" in i.text for i in left)
    assert [t["id"] for t in fast_mem.export(user_id="u")["turns"]] == [t_ack, t_brother]
    assert "Inês" not in str(fast_mem.search("sister", user_id="u"))
    with pytest.raises(NotFound):
        fast_mem.delete(t_sister, user_id="u")


# -- delete_all ---------------------------------------------------------------


def test_delete_all_erases_the_tenant_only(fast_mem: Memory) -> None:
    name = token()
    fast_mem.add(f"my nickname is {name}", user_id="victim")
    fast_mem.add("my other fact", user_id="victim")
    fast_mem.release("other fact", user_id="victim")
    fast_mem.add("bystander likes tea", user_id="bystander")
    before = snapshot(fast_mem, "bystander")

    report = fast_mem.delete_all(user_id="victim")
    assert report.op == "delete_all" and report.count == 2 and report.turns_removed == 2
    assert report.erased is erases(fast_mem)
    assert fast_mem.get_all(user_id="victim", states=ALL_STATES) == []
    assert fast_mem.search("nickname", user_id="victim") == []
    exported = fast_mem.export(user_id="victim")
    assert exported["turns"] == [] and exported["memories"] == []
    assert fast_mem.storage.tenant("user:victim", False) is None
    assert no_raw_hits(fast_mem, name)

    after = snapshot(fast_mem, "bystander")
    assert after["memories"] == before["memories"] and after["turns"] == before["turns"]
    assert recalled(fast_mem, "tea", user_id="bystander") == ["bystander likes tea"]
    # the tenant can start again (relearnable)
    fast_mem.add(f"my nickname is {name}", user_id="victim")
    assert recalled(fast_mem, name, user_id="victim") == [f"my nickname is {name}"]
    # an unknown tenant is a no-op
    assert fast_mem.delete_all(user_id="never-seen").count == 0


def test_delete_all_narrowed_to_an_agent_keeps_other_agents(fast_mem: Memory) -> None:
    secret = token()
    fast_mem.add(f"agent one noted {secret}", user_id="u", agent_id="one")
    fast_mem.add("agent two noted the deadline", user_id="u", agent_id="two")
    fast_mem.add("shared note without agent", user_id="u")
    report = fast_mem.delete_all(user_id="u", agent_id="one")
    assert report.count == 1
    assert texts(fast_mem, states=ALL_STATES) == [
        "agent two noted the deadline",
        "shared note without agent",
    ]
    assert no_raw_hits(fast_mem, secret)
    hits = fast_mem.search("deadline", user_id="u", mode="lexical")
    assert [h.text for h in hits] == ["agent two noted the deadline"]


# -- supersede ----------------------------------------------------------------


def test_supersede_new_value_wins(mem: Memory) -> None:
    old = mem.add("I work at Globex as an engineer", user_id="u").ids[0]
    mem.add("I have a cat named Miso", user_id="u")
    report = mem.supersede("Globex", "I work at Initech as a manager", user_id="u")
    assert report.op == "supersede" and report.ids == [old] and report.match == "entity"
    (new,) = report.created
    assert mem.get(old, user_id="u").state == "superseded"
    assert mem.get(old, user_id="u").superseded_by == new
    assert mem.get(new, user_id="u").state == "active"
    hits = recalled(mem, "where do I work?")
    assert hits[0] == "I work at Initech as a manager"
    assert "I work at Globex as an engineer" not in hits
    # untouched (and unrelated to the question, so below the search's cut)
    assert "I have a cat named Miso" in recalled(mem, "my cat")


def test_supersede_chain_leaves_only_the_final_value(mem: Memory) -> None:
    mem.add("My browser is Chrome", user_id="u")
    first = mem.supersede("Chrome", "My browser is Brave", user_id="u")
    second = mem.supersede("Brave", "My browser is Chrome", user_id="u")
    assert first.count == 1 and second.count == 1
    assert second.ids == first.created
    active = mem.get_all(user_id="u")
    assert [i.text for i in active] == ["My browser is Chrome"]
    assert active[0].id == second.created[0]
    for query in ("which browser do I use", "Chrome", "Brave"):
        assert recalled(mem, query) == ["My browser is Chrome"], query
    old = mem.get_all(user_id="u", states=("superseded",))
    assert [i.text for i in old] == ["My browser is Chrome", "My browser is Brave"]
    # each version points at its direct successor
    assert old[0].superseded_by == old[1].id and old[1].superseded_by == active[0].id


def test_supersede_with_nothing_matching_just_stores(fast_mem: Memory) -> None:
    fast_mem.add("I like jazz", user_id="u")
    report = fast_mem.supersede("zzqqxx", "my shoe size is 44", user_id="u")
    assert report.match == "none" and report.ids == [] and len(report.created) == 1
    assert sorted(texts(fast_mem)) == ["I like jazz", "my shoe size is 44"]


# -- release / restore --------------------------------------------------------


def test_release_and_restore_are_reversible(fast_mem: Memory) -> None:
    code = fast_mem.add("one-time code 884213", user_id="u").ids[0]
    fast_mem.add("I like sushi", user_id="u")
    report = fast_mem.release("884213", user_id="u")
    assert report.ids == [code] and report.match == "identifier"
    assert fast_mem.search("one-time code", user_id="u", mode="lexical") == []
    assert fast_mem.get(code, user_id="u").state == "released"
    assert texts(fast_mem, states=("released",)) == ["one-time code 884213"]

    assert fast_mem.restore(code, user_id="u").ids == [code]
    assert fast_mem.get(code, user_id="u").state == "active"
    hits = fast_mem.search("one-time code", user_id="u", mode="lexical")
    assert [h.id for h in hits] == [code]
    with pytest.raises(InvalidInput):
        fast_mem.restore(code, user_id="u")  # not released any more


def test_release_of_a_released_memory_matches_nothing(fast_mem: Memory) -> None:
    mid = fast_mem.add("parking spot B12", user_id="u").ids[0]
    fast_mem.release(mid, user_id="u")
    again = fast_mem.release(mid, user_id="u")
    assert again.match == "none" and again.ids == []


# -- purge --------------------------------------------------------------------


def test_purge_is_hard_and_reaches_every_state(fast_mem: Memory) -> None:
    secret = token()
    active = fast_mem.add(f"active {secret} note", user_id="u").ids[0]
    released = fast_mem.add(f"released {secret} note", user_id="u").ids[0]
    fast_mem.release(released, user_id="u")
    superseded = fast_mem.add(f"superseded {secret} note", user_id="u").ids[0]
    fast_mem.supersede(superseded, "replacement note", user_id="u")
    kept = fast_mem.add("unrelated note", user_id="u").ids[0]

    report = fast_mem.purge(secret, user_id="u")
    assert report.match == "identifier"
    assert sorted(report.ids) == sorted([active, released, superseded])
    assert report.turns_removed == 3 and report.erased is erases(fast_mem)
    left = fast_mem.get_all(user_id="u", states=ALL_STATES)
    assert sorted(i.text for i in left) == ["replacement note", "unrelated note"]
    assert kept in [i.id for i in left]
    for mid in (active, released, superseded):
        with pytest.raises(NotFound):
            fast_mem.get(mid, user_id="u")
    assert secret not in str(fast_mem.export(user_id="u"))
    assert no_raw_hits(fast_mem, secret)


def test_purge_by_id(fast_mem: Memory) -> None:
    a = fast_mem.add("twin memory", user_id="u").ids[0]
    b = fast_mem.add("twin memory", user_id="u").ids[0]
    report = fast_mem.purge(a, user_id="u")
    assert report.match == "id" and report.ids == [a]
    assert [i.id for i in fast_mem.get_all(user_id="u", states=ALL_STATES)] == [b]


def test_update_erases_the_old_text_from_its_source_turn(fast_mem: Memory) -> None:
    secret = token()
    mid = fast_mem.add(f"my recovery phrase is {secret}", user_id="u").ids[0]
    fast_mem.add(f"kept fact {token()}", user_id="u")
    report = fast_mem.update(mid, "my recovery phrase was rotated", user_id="u")
    assert report.erased is erases(fast_mem)
    assert no_raw_hits(fast_mem, secret)
    assert verified_clean(fast_mem, [secret])
    assert "my recovery phrase was rotated" in texts(fast_mem)
    turns = [t["text"] for t in fast_mem.export(user_id="u")["turns"]]
    assert "my recovery phrase was rotated" in turns and not any(secret in t for t in turns)
    # a purge of the old value finds nothing left to remove
    assert fast_mem.purge(secret, user_id="u").match == "none"


def test_update_keeps_the_sibling_clause_of_its_turn(fast_mem: Memory) -> None:
    secret = token()
    ids = fast_mem.add(f"my locker code is {secret} and I like oolong tea", user_id="u").ids
    assert len(ids) == 2
    fast_mem.update(ids[0], "my locker code changed", user_id="u")
    (turn,) = fast_mem.export(user_id="u")["turns"]
    assert secret not in turn["text"] and "oolong tea" in turn["text"]
    assert fast_mem.search("oolong", user_id="u", k=1)[0].id == ids[1]


def test_scoped_purge_and_release_stay_inside_the_agent(fast_mem: Memory) -> None:
    fast_mem.add("the shared vault pin 5521", user_id="u", agent_id="one")
    fast_mem.add("the shared vault pin 5521", user_id="u", agent_id="two")
    assert fast_mem.release("vault pin", user_id="u", agent_id="one").count == 1
    assert [i.agent_id for i in fast_mem.get_all(user_id="u")] == ["two"]
    assert fast_mem.purge("5521", user_id="u", agent_id="one").count == 1
    left = fast_mem.get_all(user_id="u", states=ALL_STATES)
    assert [(i.agent_id, i.state) for i in left] == [("two", "active")]
    assert len(fast_mem.export(user_id="u")["turns"]) == 1


def test_forgotten_value_can_be_told_again(fast_mem: Memory) -> None:
    fast_mem.add("my locker code is 9931", user_id="u")
    fast_mem.purge("9931", user_id="u")
    assert fast_mem.search("9931", user_id="u") == []
    fast_mem.add("my locker code is 9931", user_id="u")
    assert recalled(fast_mem, "locker code 9931") == ["my locker code is 9931"]


# -- edit ---------------------------------------------------------------------


def test_edit_keeps_provenance_and_supersedes_old(fast_mem: Memory) -> None:
    old = fast_mem.add("I work at Acme in Porto", user_id="u", metadata={"src": "chat"}).ids[0]
    sources = fast_mem.get(old, user_id="u").sources
    report = fast_mem.edit(old, "I work at Initech in Porto", user_id="u")
    assert report.op == "edit" and report.ids == [old]
    (new,) = report.created
    item = fast_mem.get(new, user_id="u")
    assert item.sources == sources
    assert item.metadata == {"src": "chat", "role": "user"}
    assert item.state == "active"
    prev = fast_mem.get(old, user_id="u")
    assert prev.state == "superseded" and prev.superseded_by == new
    assert recalled(fast_mem, "where do I work") == ["I work at Initech in Porto"]
    assert fast_mem.search("Acme", user_id="u", mode="lexical") == []
    with pytest.raises(InvalidInput):
        fast_mem.edit(old, "edits of superseded versions are refused", user_id="u")


# -- TTL and expiry -----------------------------------------------------------


def test_ttl_expire_releases(fast_mem: Memory) -> None:
    otp = fast_mem.add("login code 551204", user_id="u", ttl=600).ids[0]
    fast_mem.add("permanent fact about llamas", user_id="u")
    expiry = fast_mem.get(otp, user_id="u").expires_at
    assert expiry is not None and time.time() + 590 < expiry <= time.time() + 600
    assert fast_mem.search("login code", user_id="u", mode="lexical")  # not yet
    assert fast_mem.expire().ids == []  # nothing is due now
    report = fast_mem.expire(now=time.time() + 601)
    assert report.ids == [otp] and report.match == "expiry"
    assert fast_mem.get(otp, user_id="u").state == "released"
    assert otp not in [h.id for h in fast_mem.search("login code 551204", user_id="u")]
    assert texts(fast_mem) == ["permanent fact about llamas"]


def test_expires_at_hides_at_once_and_expire_purge_erases(fast_mem: Memory) -> None:
    secret = token()
    past = fast_mem.add(f"stale code {secret}", user_id="u", expires_at=time.time() - 1).ids[0]
    future = fast_mem.add(
        "code valid until 2100", user_id="v", expires_at="2100-01-01T00:00:00"
    ).ids[0]
    # expired memories never come back from search, even before expire() runs
    assert fast_mem.search(secret, user_id="u") == []
    assert fast_mem.get(past, user_id="u").state == "active"
    report = fast_mem.expire(purge=True)
    assert report.ids == [past] and report.erased is erases(fast_mem)
    with pytest.raises(NotFound):
        fast_mem.get(past, user_id="u")
    assert no_raw_hits(fast_mem, secret)
    assert fast_mem.get(future, user_id="v").state == "active"


def test_expire_purge_reaches_released_memories(fast_mem: Memory) -> None:
    mid = fast_mem.add("short lived note", user_id="u", ttl=5).ids[0]
    fast_mem.expire(now=time.time() + 10)
    assert fast_mem.get(mid, user_id="u").state == "released"
    assert fast_mem.expire(now=time.time() + 10, purge=True).ids == [mid]
    assert fast_mem.get_all(user_id="u", states=ALL_STATES) == []


def test_set_expiry_sets_and_clears(fast_mem: Memory) -> None:
    mid = fast_mem.add("temporary desk 4B", user_id="u").ids[0]
    fast_mem.set_expiry(mid, time.time() - 1, user_id="u")
    assert fast_mem.search("desk", user_id="u") == []
    fast_mem.set_expiry(mid, None, user_id="u")
    assert [h.id for h in fast_mem.search("desk", user_id="u")] == [mid]
    assert fast_mem.expire(now=time.time() + 10**6).ids == []

"""Evidence: history, export and the hash-chained, content-free audit log."""

from __future__ import annotations

import json

import pytest
from helpers import audit_text, dumps, raw_sql, token, verified_clean

from unrecall import HistoryEvent, InvalidInput, Memory
from unrecall.control.audit import AuditCheck, check_content_free


def test_history_lists_events_never_text(fast_mem: Memory) -> None:
    secret = token()
    mid = fast_mem.add(f"my pin is {secret}", user_id="u").ids[0]
    fast_mem.update(mid, f"my pin is {secret}0", user_id="u")
    fast_mem.release(mid, user_id="u")
    fast_mem.restore(mid, user_id="u")
    fast_mem.set_expiry(mid, 4_000_000_000, user_id="u")
    fast_mem.purge(secret + "0", user_id="u")

    events = fast_mem.history(mid, user_id="u")
    assert [e.op for e in events] == ["add", "update", "release", "restore", "set_expiry", "purge"]
    assert all(isinstance(e, HistoryEvent) and e.memory_id == mid for e in events)
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    ats = [e.at for e in events]
    assert ats == sorted(ats)
    assert events[-1].detail == {"match": "identifier", "count": 1, "turns": 1}
    assert events[2].detail == {"match": "id", "count": 1}
    text = dumps([e.to_dict() for e in events])
    assert secret not in text and "pin" not in text


def test_history_survives_purge_but_not_the_tenant(fast_mem: Memory) -> None:
    a = fast_mem.add("first memory", user_id="u").ids[0]
    b = fast_mem.add("second memory", user_id="u").ids[0]
    fast_mem.purge(a, user_id="u")
    assert [e.op for e in fast_mem.history(a, user_id="u")] == ["add", "purge"]
    fast_mem.delete_all(user_id="u")
    assert fast_mem.get_all(user_id="u") == []
    # The events stay in the chain, but nothing leads from the user id to
    # them any more: showing them by user id would confirm the user.
    assert fast_mem.history(b, user_id="u") == []
    assert fast_mem.export(user_id="u")["events"] == []
    assert fast_mem.verify_audit() == AuditCheck(True, 4)


def test_an_erased_tenant_cannot_be_confirmed_from_the_audit(fast_mem: Memory) -> None:
    # An attacker with the file has the store key: a keyed hash of the user
    # id would confirm it. The events carry a random handle that died with
    # the tenant row.
    import hashlib
    import hmac

    user = f"{token()}@mail.example"
    fast_mem.add("a fact", user_id=user)
    fast_mem.add("another fact", user_id="other")
    fast_mem.delete_all(user_id=user)
    key = fast_mem.storage.secret_key()
    tenants = {r.tenant for r in fast_mem.storage.audit_rows()}
    handles = {h for (h,) in raw_sql(fast_mem, "SELECT handle FROM tenants")}
    for form in (user, f"user:{user}"):
        for digest in (hashlib.sha256, hashlib.blake2b):
            keyed = hmac.new(key, form.encode(), digest).hexdigest()
            assert not any(keyed.startswith(t) or t in keyed for t in tenants)
    erased = tenants - handles
    assert len(erased) == 1  # the erased tenant's events are there, unnamed
    assert verified_clean(fast_mem, [user])


def test_history_is_scoped_to_the_tenant(fast_mem: Memory) -> None:
    mid = fast_mem.add("private memory", user_id="u").ids[0]
    fast_mem.add("other tenant memory", user_id="v")
    assert fast_mem.history(mid, user_id="v") == []
    assert fast_mem.history(mid, user_id="nobody") == []
    assert fast_mem.history("m_" + "0" * 20, user_id="u") == []
    assert len(fast_mem.history(mid, user_id="u")) == 1


def test_history_rejects_a_missing_id(fast_mem: Memory) -> None:
    fast_mem.add("a memory", user_id="u")
    with pytest.raises(InvalidInput):
        fast_mem.history(None, user_id="u")  # type: ignore[arg-type]


def test_export_has_everything_of_the_tenant_and_nothing_else(fast_mem: Memory) -> None:
    other = token()
    fast_mem.add(f"other tenant says {other}", user_id="v", metadata={"k": other})
    foreign = fast_mem.add("foreign id holder", user_id="v").ids[0]
    report = fast_mem.add(
        [
            {"role": "user", "content": "I own a canoe"},
            {"role": "assistant", "content": "Nice canoe"},
        ],
        user_id="u",
        session_id="sess",
        metadata={"channel": "web"},
        honor_requests=False,  # every message stored as given
    )
    fast_mem.release("Nice canoe", user_id="u")
    fast_mem.supersede("own a canoe", "I own a kayak", user_id="u")

    exported = fast_mem.export(user_id="u")
    text = dumps(exported)  # strictly JSON-serialisable
    assert json.loads(text) == exported
    assert exported["tenant"] == {"user_id": "u", "agent_id": None}
    assert {t["text"] for t in exported["turns"]} == {
        "I own a canoe",
        "Nice canoe",
        "I own a kayak",
    }
    states = sorted((m["text"], m["state"]) for m in exported["memories"])
    assert states == [
        ("I own a canoe", "superseded"),
        ("I own a kayak", "active"),
        ("Nice canoe", "released"),
    ]
    assert {m["id"] for m in exported["memories"]} >= set(report.ids)
    assert [e["op"] for e in exported["events"]] == ["add", "release", "supersede"]
    assert exported["events"][0]["refs"] == report.ids + report.detail["turns"]
    assert other not in text and foreign not in text and "foreign" not in text


def test_export_of_unknown_tenant_is_empty(fast_mem: Memory) -> None:
    fast_mem.add("something", user_id="u")
    exported = fast_mem.export(user_id="stranger")
    assert exported["turns"] == exported["memories"] == exported["events"] == []


def test_op_reports_are_content_free_json(fast_mem: Memory) -> None:
    secret = token()
    reports = [
        fast_mem.add(f"alpha {secret}", user_id="u"),
        fast_mem.release(secret, user_id="u"),
        fast_mem.purge(secret, user_id="u"),
        fast_mem.add("beta fact", user_id="u"),
        fast_mem.delete_all(user_id="u"),
    ]
    for report in reports:
        data = report.to_dict()
        assert data["count"] == len(data["ids"])
        assert secret not in dumps(data)


def test_audit_chain_is_intact_and_counts_every_operation(fast_mem: Memory) -> None:
    assert fast_mem.verify_audit().ok and fast_mem.verify_audit().events == 0
    mid = fast_mem.add("one", user_id="u").ids[0]
    fast_mem.add("two", user_id="v")
    fast_mem.update(mid, "uno", user_id="u")
    fast_mem.release(mid, user_id="u")
    fast_mem.purge(mid, user_id="u")
    fast_mem.delete_all(user_id="v")
    check = fast_mem.verify_audit()
    assert check.ok and check.events == 6 and check.broken_at is None
    assert [r.op for r in fast_mem.storage.audit_rows()] == [
        "add",
        "add",
        "update",
        "release",
        "purge",
        "delete_all",
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE audit SET detail = '{\"count\": 0}' WHERE seq = 2",
        "UPDATE audit SET op = 'add' WHERE seq = 2",
        "UPDATE audit SET at = at + 1 WHERE seq = 2",
        "UPDATE audit SET refs = '[]' WHERE seq = 2",
        "UPDATE audit SET tenant = 'x' WHERE seq = 2",
        "DELETE FROM audit_refs WHERE seq = 2; DELETE FROM audit WHERE seq = 2",
    ],
)
def test_tampering_with_the_audit_is_detected(fast_mem: Memory, sql: str) -> None:
    mid = fast_mem.add("fact one", user_id="u").ids[0]
    fast_mem.purge(mid, user_id="u")
    fast_mem.add("fact two", user_id="u")
    assert fast_mem.verify_audit().ok
    for statement in sql.split(";"):
        raw_sql(fast_mem, statement)
    check = fast_mem.verify_audit()
    assert not check.ok
    assert check.broken_at in (2, 3)  # the edited row, or the one after a deletion


def test_rehashing_a_tampered_row_still_breaks_the_chain(fast_mem: Memory) -> None:
    fast_mem.add("fact one", user_id="u")
    fast_mem.add("fact two", user_id="u")
    fast_mem.add("fact three", user_id="u")
    # a forger who recomputes the hash of row 2 still breaks row 3's link
    raw_sql(fast_mem, "UPDATE audit SET op = 'purge' WHERE seq = 2")
    row = next(r for r in fast_mem.storage.audit_rows() if r.seq == 2)
    from unrecall.control.audit import _digest

    forged = _digest(row.prev, row.at, row.tenant, row.op, row.detail, row.refs)
    raw_sql(fast_mem, "UPDATE audit SET hash = ? WHERE seq = 2", (forged,))
    assert fast_mem.verify_audit().broken_at == 3


def test_audit_rows_never_hold_forgotten_content(fast_mem: Memory) -> None:
    secret = token()
    fast_mem.add(f"note {secret}", user_id=f"{secret}@mail.example")
    fast_mem.supersede(secret, "note replaced", user_id=f"{secret}@mail.example")
    fast_mem.purge("note replaced", user_id=f"{secret}@mail.example")
    assert secret not in audit_text(fast_mem)  # not even the tenant key


@pytest.mark.parametrize(
    "detail",
    [
        {"text": "my pin is 4471"},
        {"note": "Alice Smith"},
        {"Bad Key": 1},
        {"nested": {"deep": ["ok", "not ok!"]}},
        {"blob": b"bytes"},
        {"obj": object()},
    ],
)
def test_audit_refuses_content(fast_mem: Memory, detail: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        check_content_free(detail)
    with pytest.raises(ValueError):
        fast_mem.audit.record("user:u", "add", [], detail)
    assert fast_mem.verify_audit().events == 0


def test_audit_accepts_ids_counts_and_enums() -> None:
    check_content_free(
        {"match": "phrase", "count": 3, "hard": True, "similarity": 0.71, "x": None},
    )
    check_content_free(["m_" + "a" * 20, "t_" + "0" * 20, "purge"])

"""Signed forget receipts: every hard forget's receipt verifies, a changed
byte or another key does not, no forgotten text is in it, its audit head is
the chain's, the key lives outside the store, and the CLI checks all that."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from helpers import erases, raw_sql

from unrecall import Memory
from unrecall.control import receipts
from unrecall.errors import StoreError

# eight digits: the scans read a whole server, whose catalogue and log hold
# numbers (OIDs, PIDs) that a 4-digit code matched by chance in CI
SECRET = "locker code 48213967"
TEA = "Oolong tea from Dharamsala"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private $HOME, with no $UNRECALL_RECEIPT_KEY: a PostgreSQL store's
    default key is ``~/.unrecall/postgres.receipt-key``, which must be this
    test's own (and the CLI subprocesses inherit the environment)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv(receipts.KEY_ENV, raising=False)
    return folder


def default_key(store: str, home: Path) -> Path:
    """Where a store's receipt key is by default, written out independently
    of ``receipts.key_path``: beside a store file; in $HOME for a database."""
    if "://" in store:
        return home / ".unrecall" / "postgres.receipt-key"
    return Path(store + ".receipt-key")


@pytest.fixture
def mem(store_location: str, home: Path) -> Iterator[Memory]:
    """A hashing store holding two users' facts."""
    with Memory(store_location, embedder="hashing") as m:
        m.add(f"My {SECRET} is on the card.", user_id="u")
        m.add(f"I drink {TEA} every morning.", user_id="u")
        m.add("The bystander keeps a blue bicycle.", user_id="v")
        yield m


def _public(mem: Memory) -> Any:
    return receipts.read_public(mem.receipt_public_key().encode())


def _first(mem: Memory, user: str = "u") -> str:
    return mem.get_all(user_id=user)[0].id


HARD: dict[str, Callable[[Memory], Any]] = {
    "purge": lambda m: m.purge("48213967", user_id="u"),
    "delete": lambda m: m.delete(_first(m), user_id="u"),
    "delete_turn": lambda m: m.delete(m.get(_first(m), user_id="u").sources[0], user_id="u"),
    "delete_all": lambda m: m.delete_all(user_id="u"),
    "forget": lambda m: m.forget("forget that I drink oolong tea", user_id="u"),
    "add_request": lambda m: m.add(
        [{"role": "user", "content": "Please forget my locker code."}], user_id="u"
    ),
    "expire": lambda m: m.expire(now=time.time() + 100, purge=True),
}


@pytest.mark.parametrize("name", sorted(HARD))
def test_every_hard_forget_returns_a_receipt_that_verifies(mem: Memory, name: str) -> None:
    if name == "expire":
        mem.add("The train leaves at noon.", user_id="u", ttl=5)
    report = HARD[name](mem)
    receipt = report.receipt
    assert receipt is not None and report.to_dict()["receipt"] == receipt
    payload = receipt["payload"]
    assert payload["op"] == {"delete_turn": "delete", "add_request": "add"}.get(name, name)
    assert payload["removed"] and payload["counts"]["memories"] == len(payload["removed"])
    assert receipts.verify(receipt, _public(mem)).ok
    assert receipts.verify(json.loads(json.dumps(receipt)), _public(mem)).ok  # JSON round trip


def test_soft_operations_and_empty_forgets_carry_no_receipt(mem: Memory) -> None:
    assert mem.add("A plain note.", user_id="u").receipt is None
    assert mem.release(_first(mem), user_id="u").receipt is None
    assert mem.expire(now=time.time(), purge=False).receipt is None
    assert mem.delete_all(user_id="nobody").receipt is None
    assert mem.expire(now=time.time(), purge=True).receipt is None  # nothing expired


def _tampered(receipt: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict:
    out = copy.deepcopy(receipt)
    change(out["payload"])
    return out


TAMPER: dict[str, Callable[[dict[str, Any]], None]] = {
    "ids": lambda p: p["removed"].__setitem__(0, "m_" + "0" * 20),
    "ids_dropped": lambda p: p["removed"].clear(),
    "counts": lambda p: p["counts"].__setitem__("turns", p["counts"]["turns"] + 1),
    "time": lambda p: p.__setitem__("at", p["at"] - 86400),
    "head_seq": lambda p: p["head"].__setitem__("seq", p["head"]["seq"] - 1),
    "head_hash": lambda p: p["head"].__setitem__("hash", "0" * 64),
    "op": lambda p: p.__setitem__("op", "delete"),
    "tenant": lambda p: p["tenants"].__setitem__(0, "f" * 32),
    "extra_field": lambda p: p.__setitem__("note", "x"),
}


@pytest.mark.parametrize("field", sorted(TAMPER))
def test_a_tampered_field_fails(mem: Memory, field: str) -> None:
    receipt = mem.purge("48213967", user_id="u").receipt
    assert receipt is not None
    verdict = receipts.verify(_tampered(receipt, TAMPER[field]), _public(mem))
    assert not verdict.ok and "signature" in verdict.reason


def test_another_key_fails_both_ways(mem: Memory) -> None:
    receipt = mem.purge("48213967", user_id="u").receipt
    other = Ed25519PrivateKey.generate()
    # the store's receipt checked with a stranger's key
    assert not receipts.verify(receipt, other.public_key()).ok
    # a forger's receipt (same payload, its own key and key id inside)
    forged = receipts.Signer(other).sign({k: v for k, v in receipt["payload"].items()})
    assert receipts.verify(forged, other.public_key()).ok
    assert not receipts.verify(forged, _public(mem)).ok
    # the store's key id but the forger's signature
    swapped = {**forged, "payload": receipt["payload"]}
    assert not receipts.verify(swapped, _public(mem)).ok


def test_the_receipt_holds_no_forgotten_text_nor_a_digest_of_it(mem: Memory) -> None:
    report = mem.forget("forget that I drink oolong tea from Dharamsala", user_id="u")
    purge = mem.purge("48213967", user_id="u")
    for probe in (TEA, "Dharamsala", "48213967", SECRET):
        for receipt in (report.receipt, purge.receipt):
            text = json.dumps(receipt).casefold()
            assert probe.casefold() not in text
            plain = hashlib.sha256(probe.encode()).hexdigest()
            for digest in [*mem.recall.hasher.probe_digests(probe), plain]:
                assert digest not in text
    assert "u" not in purge.receipt["payload"]["tenants"]  # the handle, not the user id


def test_the_audit_head_in_the_receipt_matches_the_chain(mem: Memory) -> None:
    receipt = mem.purge("48213967", user_id="u").receipt
    head = mem.audit.head()
    assert head is not None
    assert receipt["payload"]["head"] == {"seq": head.seq, "hash": head.hash}
    assert receipt["payload"]["tenants"] == [head.handle]
    assert mem.verify_audit().ok and mem.audit.holds(head.seq, head.hash)
    # later events do not move an issued receipt's head out of the chain
    mem.add("Another note.", user_id="v")
    assert mem.audit.holds(head.seq, head.hash) and mem.audit.head() != head


def test_a_receipt_cites_its_own_event_not_another_threads(mem: Memory) -> None:
    with mem.audit.tracking() as seen:
        worker = threading.Thread(target=lambda: mem.add("Other thread.", user_id="v"))
        worker.start()
        worker.join()
    assert seen == []
    with mem.audit.tracking() as outer, mem.audit.tracking() as inner:
        mem.add("Same thread.", user_id="v")
    assert outer == inner and len(inner) == 1


def test_the_key_file_is_beside_and_outside_the_store(
    mem: Memory, store_location: str, home: Path
) -> None:
    mem.purge("48213967", user_id="u")
    key_file = default_key(store_location, home)
    assert key_file.is_file() and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file not in mem.storage.files()
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    mem.storage.erase()
    for path in mem.storage.files():
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # a server's file, removed since it was listed
            continue
        assert raw not in data and key_file.read_bytes() not in data
    scan = mem.verify_erased([SECRET, "48213967"])
    assert scan.files and not any("receipt-key" in f for f in scan.files)
    # clean where the backend claims erasure; elsewhere it says it does not
    assert scan.clean if erases(mem) else mem.storage.erase() is False, scan.to_dict()["via"]


def test_the_key_path_option_and_the_environment(
    tmp_path: Path, monkeypatch: Any, store_location: str, home: Path
) -> None:
    raw_key = tmp_path / "keys" / "raw.key"
    raw_key.parent.mkdir()
    raw_key.write_bytes(os.urandom(32))
    with Memory(store_location, embedder="hashing", receipt_key=raw_key) as m:
        m.add("My pin is 7311.", user_id="u")
        receipt = m.purge("7311", user_id="u").receipt
        pub = Ed25519PrivateKey.from_private_bytes(raw_key.read_bytes()).public_key()
        assert receipts.verify(receipt, pub).ok
    assert not default_key(store_location, home).exists()
    monkeypatch.setenv(receipts.KEY_ENV, str(tmp_path / "env.key"))
    with Memory(store_location, embedder="hashing") as m:  # reopened: the key is looked up anew
        m.receipt_public_key()
    assert (tmp_path / "env.key").is_file() and not default_key(store_location, home).exists()


def test_an_unreadable_key_stops_the_forget_before_it_runs(
    tmp_path: Path, store_location: str
) -> None:
    bad = tmp_path / "bad.key"
    bad.write_bytes(b"not a key at all, and it names nobody")
    with Memory(store_location, embedder="hashing", receipt_key=bad) as m:
        m.add("My pin is 7311.", user_id="u")
        with pytest.raises(StoreError, match="Ed25519") as err:
            m.purge("7311", user_id="u")
        assert "bad.key" not in str(err.value)
        assert [i.text for i in m.get_all(user_id="u")] == ["My pin is 7311."]


# -- the CLI ---------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "unrecall.interfaces.cli", "receipt", *args],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def issued(mem: Memory, tmp_path: Path, store_location: str) -> tuple[Path, Path, str]:
    """A purge's report JSON (as ``--json`` prints it), the public key PEM
    and the store's location (its file, or its database URL)."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps(mem.purge("48213967", user_id="u").to_dict()))
    key = tmp_path / "key.pem"
    key.write_text(mem.receipt_public_key())
    return report, key, store_location


# ``unrecall receipt`` opens --db as a SQLite file (read-only, through apsw):
# a database URL is "no store file at --db" (exit 2).


def test_cli_verify_exits_0_for_a_valid_receipt(issued: tuple[Path, Path, str]) -> None:
    report, key, _ = issued
    done = _cli("verify", str(report), "--public-key", str(key))
    assert done.returncode == 0 and done.stdout.startswith("valid")
    bare = report.with_name("bare.json")
    bare.write_text(json.dumps(json.loads(report.read_text())["receipt"]))
    done = _cli("verify", str(bare), "--public-key", str(key))
    assert done.returncode == 0 and done.stdout.startswith("valid")


def test_cli_verify_with_db_finds_the_receipt_in_the_intact_chain(
    issued: tuple[Path, Path, str],
) -> None:
    report, key, db = issued
    bare = report.with_name("bare.json")
    bare.write_text(json.dumps(json.loads(report.read_text())["receipt"]))
    done = _cli("verify", str(bare), "--public-key", str(key), "--db", db)
    assert done.returncode == 0 and "intact chain" in done.stdout
    assert len(done.stdout.strip().splitlines()) == 1


def test_cli_verify_exits_1_for_a_tampered_or_foreign_receipt(
    issued: tuple[Path, Path, str], tmp_path: Path
) -> None:
    report, key, _ = issued
    doc = json.loads(report.read_text())
    doc["receipt"]["payload"]["counts"]["memories"] = 0
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(doc))
    done = _cli("verify", str(tampered), "--public-key", str(key))
    assert done.returncode == 1 and done.stdout.startswith("invalid")
    other = tmp_path / "other.pem"
    other.write_text(receipts.public_pem(Ed25519PrivateKey.generate().public_key()))
    assert _cli("verify", str(report), "--public-key", str(other)).returncode == 1
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    assert _cli("verify", str(garbage), "--public-key", str(key)).returncode == 1


@pytest.fixture
def elsewhere(request: pytest.FixtureRequest, tmp_path: Path, issued: Any) -> Iterator[str]:
    """Another store's place, on the same backend as ``issued``'s."""
    if "://" not in issued[2]:
        yield str(tmp_path / "elsewhere.db")
        return
    from conftest import new_postgres_url

    yield new_postgres_url(request.getfixturevalue("postgres_server"), request)


def test_cli_verify_with_db_checks_the_chain(
    issued: tuple[Path, Path, str], tmp_path: Path, mem: Memory, elsewhere: str
) -> None:
    report, key, db = issued
    # another store's chain does not hold this receipt's event
    with Memory(elsewhere, embedder="hashing", receipt_key=tmp_path / "k2") as m:
        m.add("Something else entirely.", user_id="w")
        m.add("And more.", user_id="w")
    done = _cli("verify", str(report), "--public-key", str(key), "--db", elsewhere)
    assert done.returncode == 1 and "does not hold" in done.stdout
    # a rewritten audit event breaks the chain the receipt sits in
    raw_sql(mem, "UPDATE audit SET detail = '{\"count\": 9}' WHERE seq = 1")
    done = _cli("verify", str(report), "--public-key", str(key), "--db", db)
    assert done.returncode == 1 and "broken" in done.stdout


def missing(store: str) -> str:
    """A store location on the same backend where no store is."""
    if "://" not in store:
        return str(Path(store).with_name("missing.db"))
    base, _, query = store.partition("?")
    return base.rsplit("/", 1)[0] + "/no_such_database" + (f"?{query}" if query else "")


def test_cli_public_key_prints_the_stores_key(issued: tuple[Path, Path, str]) -> None:
    _, key, db = issued
    done = _cli("public-key", "--db", db)
    assert done.returncode == 0 and done.stdout == key.read_text()
    assert _cli("public-key", "--db", missing(db)).returncode == 2

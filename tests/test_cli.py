"""The ``unrecall`` command line: every subcommand on a real store file."""

from __future__ import annotations

import json

import pytest
from helpers import erases

from unrecall import Memory
from unrecall.interfaces.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def db(store_location: str) -> str:
    """The store's --db: a file path, or a database URL."""
    return store_location


def claims_erasure(db: str) -> bool:
    """Whether the store at ``db`` claims physical erasure (``helpers.erases``)."""
    with Memory(db) as mem:
        return erases(mem)


def test_add_search_purge_verify_roundtrip(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--db", db, "--user", "ana", "--json"]
    status, out, _ = run(capsys, "add", "My email is ana@corp.io", *common)
    assert status == 0
    mid = json.loads(out)["ids"][0]
    run(capsys, "add", "Her email is ana.b@corp.io", *common)
    status, out, _ = run(capsys, "search", "email", *common)
    assert status == 0 and {h["text"] for h in json.loads(out)} >= {"My email is ana@corp.io"}
    status, out, _ = run(capsys, "purge", "ANA@corp.io", *common)
    report = json.loads(out)
    assert report["ids"] == [mid] and report["erased"] is claims_erasure(db)
    if report["erased"]:  # where erasure is claimed, the scan proves it
        status, out, _ = run(capsys, "verify", "ana@corp.io", *common)
        assert status == 0 and json.loads(out)["clean"] is True
    status, out, _ = run(capsys, "verify", "ana.b@corp.io", *common)
    assert status == 1  # the look-alike was kept, so the scan finds it
    status, out, _ = run(capsys, "history", mid, *common)
    assert [e["op"] for e in json.loads(out)] == ["add", "purge"]
    assert "ana@corp.io" not in out
    status, out, _ = run(capsys, "audit", *common)
    assert status == 0 and json.loads(out)["ok"] is True


def test_release_restore_supersede_edit_update_delete(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--db", db, "--user", "bo", "--json"]
    _, out, _ = run(capsys, "add", "I drive a blue Volvo", *common)
    mid = json.loads(out)["ids"][0]
    _, out, _ = run(capsys, "release", "Volvo", *common)
    assert json.loads(out)["ids"] == [mid]
    _, out, _ = run(capsys, "search", "car", *common)
    assert json.loads(out) == []
    run(capsys, "restore", mid, *common)
    _, out, _ = run(capsys, "supersede", mid, "I drive a red Saab", *common)
    new = json.loads(out)["created"][0]
    _, out, _ = run(capsys, "get-all", "--state", "superseded", *common)
    assert [m["id"] for m in json.loads(out)] == [mid]
    _, out, _ = run(capsys, "edit", new, "I drive a red Saab 900", *common)
    newer = json.loads(out)["created"][0]
    run(capsys, "update", newer, "I drive a red Saab 9-3", *common)
    _, out, _ = run(capsys, "get", newer, *common)
    assert json.loads(out)["text"] == "I drive a red Saab 9-3"
    _, out, _ = run(capsys, "delete", newer, *common)
    assert json.loads(out)["ids"] == [newer]
    _, out, _ = run(capsys, "export", *common)
    exported = json.loads(out)
    assert "9-3" not in json.dumps(exported)
    _, out, _ = run(capsys, "delete-all", *common)
    assert json.loads(out)["op"] == "delete_all"


def test_errors_exit_2_without_echoing_input(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "get", "m_00000000000000000000", "--db", db, "--user", "x")
    assert status == 2 and "error:" in err
    status, _, err = run(capsys, "purge", "the and of", "--db", db, "--user", "x")
    assert status == 2
    secret = "s3cr3t-" + "x" * 40_000
    status, _, err = run(capsys, "add", secret, "--db", db, "--user", "x")
    assert status == 2 and "s3cr3t" not in err
    status, _, err = run(capsys, "search", "anything", "--db", db)
    assert status == 2 and "--user" in err


def test_human_output_and_verify_from_stdin(
    db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    common = ["--db", db, "--user", "cy"]
    status, out, _ = run(capsys, "add", "My locker code is 5521", *common)
    assert status == 0 and out.startswith("add: 1 memories")
    status, out, _ = run(capsys, "search", "locker", *common)
    assert "My locker code is 5521" in out
    run(capsys, "purge", "5521", *common)
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("locker code is 5521\n"))
    status, out, _ = run(capsys, "verify", "-", *common)
    assert status == 0 and out.startswith("clean")


def test_demo_runs_and_every_check_holds(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "demo")
    assert status == 0
    assert "Every check held." in out


def test_entities_residual_and_trail_forget(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--db", db, "--user", "ana"]
    for text in (
        "Ravi Shah, our CFO, signed off on hiring Arden Advisory.",
        "Arden Advisory's filing lists Nina Shah as sole owner.",
        "Ravi and his wife Nina are hosting the offsite dinner.",
        "Turns out Arden Advisory is owned by Nina Shah, Ravi's wife!",
    ):
        run(capsys, "add", text, *common)
    status, out, _ = run(capsys, "entities", *common)
    assert status == 0 and "Ravi Shah (cfo)" in out
    assert "Nina Shah (Ravi Shah's wife, sole owner)" in out
    request = "Forget that the firm we hired belongs to our CFO's wife"
    status, out, _ = run(capsys, "residual", request, *common, "--json")
    assert status == 0 and len(json.loads(out)) == 4
    status, out, _ = run(capsys, "forget", request, *common)
    assert status == 0 and out.startswith("forget: 4 turns") and "Nina" not in out
    status, out, _ = run(capsys, "forget", request, *common, "--budget", "-1")
    assert status == 2

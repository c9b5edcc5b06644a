"""The command line's finish: ``--version``, text from stdin (``add -``,
``chat``), clear errors on files that are not stores, honest reports of
operations that matched nothing, and bench progress that ``--quiet`` silences."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BACKENDS
from helpers import erases, is_postgres

from unrecall import Memory
from unrecall.interfaces.cli import main
from unrecall.progress import Progress, steps

MINI = Path(__file__).parent / "data" / "forgeteval_mini.json"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def feed(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))


@pytest.fixture
def common(store_location: str) -> list[str]:
    """--db (a file path or a database URL), the tenant and the embedder."""
    return ["--db", store_location, "--user", "ana", "--embedder", "hashing"]


def erased_from_disk(common: list[str]) -> str:
    """What a forget's human report says of its erasure on ``common``'s store:
    "yes" where the backend claims it (``helpers.erases``), else "PENDING"."""
    with Memory(common[common.index("--db") + 1], embedder="hashing") as mem:
        return "erased from disk: yes" if erases(mem) else "erased from disk: PENDING"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == "unrecall 0.1.0\n"


def test_add_dash_reads_the_text_from_stdin(tmp_path: Path, store_location: str) -> None:
    db = store_location
    base = [sys.executable, "-m", "unrecall.interfaces.cli"]
    scope = ["--db", db, "--user", "ana", "--embedder", "hashing", "--json"]
    env = {**os.environ, "UNRECALL_DB": str(tmp_path / "unused.db")}
    added = subprocess.run(
        [*base, "add", "-", *scope],
        input="my bank pin is 9911\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    listed = subprocess.run(
        [*base, "get-all", *scope], capture_output=True, text=True, env=env, timeout=120
    )
    assert [m["text"] for m in json.loads(listed.stdout)] == ["my bank pin is 9911"]


def test_add_dash_with_empty_stdin_is_a_clear_error(
    common: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed(monkeypatch, "")
    status, out, err = run(capsys, "add", "-", *common)
    assert status == 2 and out == "" and err.startswith("error: ")
    feed(monkeypatch, "two lines\nof one note\n")
    assert run(capsys, "add", "-", *common)[0] == 0
    _, out, _ = run(capsys, "get-all", *common, "--json")
    assert [m["text"] for m in json.loads(out)] == ["two lines\nof one note"]


def test_chat_stores_then_forgets_and_never_prints_the_value(
    common: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # eight digits: the verify below scans the whole server, whose catalogue
    # names relations by number (pg_toast_24471 matched a 4-digit code)
    feed(
        monkeypatch,
        "my locker code is 60418273\n"
        "\n"
        "assistant: Noted, I will keep your locker code in mind.\n"
        "please forget my locker code\n",
    )
    status, out, err = run(capsys, "chat", "--session", "s1", *common)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "1. stored: 1 memories"
    assert lines[1].startswith("2. stored")
    assert lines[2].startswith("3. forget request: kind ") and "strategy " in lines[2]
    said = erased_from_disk(common)
    assert "memories removed" in lines[2] and said in lines[2]
    assert "60418273" not in out + err
    status, out, _ = run(capsys, "search", "locker code", *common, "--json")
    assert status == 0 and not any("60418273" in h["text"] for h in json.loads(out))
    if said.endswith("yes"):  # where erasure is claimed, the scan proves it
        status, out, _ = run(capsys, "verify", "60418273", *common)
        assert status == 0 and out.startswith("clean"), out


def test_chat_json_is_one_report_per_turn_without_text(
    common: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed(monkeypatch, "my locker code is 4471\nplease forget my locker code\n")
    status, out, _ = run(capsys, "chat", *common, "--json")
    reports = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and len(reports) == 2
    assert reports[0]["requests"] == [] and len(reports[0]["created"]) == 1
    assert reports[1]["requests"][0]["removed"] == reports[0]["created"]
    assert "4471" not in out


def test_chat_without_a_tenant_is_refused(
    store_location: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed(monkeypatch, "my locker code is 4471\n")
    status, out, err = run(capsys, "chat", "--db", store_location, "--embedder", "hashing")
    assert status == 2 and out == "" and "--user" in err and "4471" not in err


def test_chat_stops_at_a_refused_turn_and_keeps_the_earlier_ones(
    common: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed(monkeypatch, "my locker code is 4471\n" + "secret-4471 " * 4000 + "\nnever read\n")
    status, out, err = run(capsys, "chat", *common)
    assert status == 2 and out == "1. stored: 1 memories\n"
    assert err.startswith("error: turn 2: ") and "4471" not in err
    _, out, _ = run(capsys, "get-all", *common, "--json")
    assert [m["text"] for m in json.loads(out)] == ["my locker code is 4471"]


def _store(path: Path, capsys: pytest.CaptureFixture[str]) -> bytes:
    """A real store of a few dozen memories, closed (WAL checkpointed); its bytes."""
    scope = ["--db", str(path), "--user", "ana", "--embedder", "hashing"]
    for i in range(40):
        assert main(["add", f"note {i}: the meeting room {i} has {i * 3} chairs", *scope]) == 0
    capsys.readouterr()
    return path.read_bytes()


def _damage(kind: str, path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(7)
    if kind == "text":
        path.write_text("shopping list: eggs, milk, bread\n" * 50, encoding="utf-8")
    elif kind == "random":
        path.write_bytes(rng.randbytes(16384))
    elif kind == "truncated":
        data = _store(path, capsys)
        path.write_bytes(data[: len(data) // 2])
    elif kind == "header-only":
        path.write_bytes(_store(path, capsys)[:100])
    elif kind == "damaged-pages":  # the first page intact: damage found while reading
        data = _store(path, capsys)
        path.write_bytes(data[:4096] + rng.randbytes(len(data) - 4096))
    else:  # someone else's SQLite database
        import apsw

        db = apsw.Connection(str(path))
        db.execute("CREATE TABLE people(name TEXT)")
        db.close()


# usefixtures("store_location") gives a test its backend parameter, whose
# PostgreSQL run sqlite_only skips.
@pytest.mark.usefixtures("store_location")
@pytest.mark.sqlite_only(
    "damaged and foreign SQLite files (a foreign database URL: the last test here)"
)
@pytest.mark.parametrize(
    "kind", ["text", "random", "truncated", "header-only", "damaged-pages", "foreign"]
)
def test_a_file_that_is_not_a_store_gives_a_clear_error_untouched(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{kind}.db"
    _damage(kind, path, capsys)
    before = path.read_bytes()
    scope = ["--db", str(path), "--user", "ana", "--embedder", "hashing"]
    for argv in (["get-all", *scope], ["search", "meeting room chairs", *scope]):
        status, out, err = run(capsys, *argv)
        assert status == 2 and out == ""
        assert err.startswith(f"error: {path} is not an unrecall store (")
        assert err.endswith(")\n") and "Traceback" not in err
        assert path.read_bytes() == before


def test_operations_that_matched_nothing_say_so(
    common: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "add", "I keep a red bicycle in the shed", *common)[0] == 0
    for argv, said in (
        (["purge", "zebra stripes"], "purge: nothing matched\n"),
        (["forget", "forget that I own a zebra"], "forget: nothing matched\n"),
        (["release", "zebra stripes"], "release: nothing matched\n"),
        (["delete-all", "--user", "nobody"], "delete_all: nothing matched\n"),
    ):
        status, out, err = run(capsys, argv[0], *common, *argv[1:])  # the last --user wins
        assert status == 0 and out == said and "erased" not in out, err
    status, out, _ = run(capsys, "purge", "red bicycle", *common)
    assert out.startswith("purge: 1 memories") and erased_from_disk(common) in out


def test_progress_helper_shows_bars_unless_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    items = ["a", "b", "c"]
    assert list(steps(Progress(quiet=True), items, "cases")) == items
    Progress(quiet=True)("a progress line")
    assert capsys.readouterr().err == ""
    assert list(steps(lambda _msg: None, items, "cases")) == items  # a plain callback: no bar
    assert list(steps(None, items, "cases")) == items
    assert capsys.readouterr().err == ""
    shown = Progress()
    assert list(steps(shown, items, "my cases", "case")) == items
    shown("a progress line")
    err = capsys.readouterr().err
    assert "my cases" in err and "0/3" in err and "a progress line\n" in err


def test_bench_quiet_prints_no_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["bench", "forgeteval", "--cases", str(MINI), "--systems", "baseline", "--limit", "1"]
    assert main([*base, "--out", str(tmp_path / "quiet"), "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and "ForgetEval" in quiet.out
    assert main([*base, "--out", str(tmp_path / "loud")]) == 0
    loud = capsys.readouterr().err
    assert "baseline adversarial" in loud and "1/1" in loud and "wrote " in loud


# ``unrecall compact`` counts the bytes of ``storage.files()``, on PostgreSQL
# every file of the server's data directory (all its databases and its WAL):
# the store's own shrinking is lost in that, and the total may even grow.


def test_compact_gives_space_back_with_progress_unless_quiet(
    store_location: str, capsys: pytest.CaptureFixture[str], common: list[str]
) -> None:
    with Memory(store_location, embedder="hashing") as mem:
        for i in range(30):
            mem.add(f"Note {i}: " + "the orchard ledger says plums " * 40, user_id="ana")
        full = mem.storage.size()
        mem.delete_all(user_id="ana")
        rewrites = is_postgres(mem)
    status, out, err = run(capsys, "compact", *common)
    before, after = (int(x) for x in out.split(": ")[1].split(" bytes")[0].split(" -> "))
    assert status == 0 and after < full
    # SQLite gives the space back here; PostgreSQL's forget already rewrote
    # the tables (its erasure), so the counts are the database's own, not the
    # server's, and compact has nothing left to take
    assert after < before if not rewrites else before < full
    assert "compacting the store" in err
    status, out, err = run(capsys, "compact", *common, "--quiet", "--json")
    # (each PostgreSQL rewrite updates the tables' catalog rows: a few pages)
    again = json.loads(out)["bytes_after"]
    assert status == 0 and err == "" and again <= (after * 1.01 if rewrites else after)


@pytest.mark.usefixtures("store_location")
@pytest.mark.sqlite_only("a schema v3 SQLite file upgraded on open")
def test_an_upgrade_shows_its_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], common: list[str]
) -> None:
    # a v3 store needs its full-text rows rebuilt on open (schema v4)
    from test_schema_migration import old_store

    path = old_store(tmp_path, 3)
    status, _, err = run(
        capsys, "get-all", "--db", str(path), "--user", "u0", "--embedder", "hashing"
    )
    assert status == 0 and "upgrading the full-text index" in err


def test_a_foreign_database_url_is_refused_without_printing_its_password(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import new_postgres_url

    if "postgres" not in BACKENDS:
        pytest.skip("PostgreSQL is not among $UNRECALL_TEST_BACKENDS")
    import psycopg

    url = new_postgres_url(request.getfixturevalue("postgres_server"), request)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE people(name text)")
    # the test server trusts local connections, so any password gets in
    assert ":@" in url
    url = url.replace(":@", ":hunter2secret@", 1)
    scope = ["--db", url, "--user", "ana", "--embedder", "hashing"]
    status, out, err = run(capsys, "get-all", *scope)
    assert status == 2 and out == ""
    assert err.startswith("error: the database is not an unrecall store (")
    assert "hunter2secret" not in err

"""Bad inputs are refused with a clear error that never echoes the offending
text, and the store is left exactly as it was."""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import pytest
from helpers import snapshot

from unrecall import InvalidInput, Memory, NotFound, UnrecallError
from unrecall.dialogue.windows import window
from unrecall.errors import StoreError
from unrecall.records import OpReport
from unrecall.validation import MAX_METADATA_DEPTH, MAX_TIME, MIN_TIME

SQL = "'; DROP TABLE memories; --"
BIG = "big " * 250_000  # 1 MB
SURROGATE = "my pin is 4471 \ud800 ok"
NUL = "my pin is 4471 \x00 ok"
UNKNOWN = "m_" + "0" * 20
UNKNOWN_TURN = "t_" + "0" * 20


@dataclass
class Ctx:
    mem: Memory
    a_active: str
    a_released: str
    a_superseded: str
    a_turn: str
    b_active: str
    b_turn: str


def nothing_made(store: str) -> bool:
    """No store was made at ``store``: no file, or a database still empty."""
    if "://" not in store:
        return not Path(store).exists()
    import psycopg

    with psycopg.connect(store, autocommit=True) as conn:
        count = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchone()
    return count is not None and count[0] == 0


@pytest.fixture
def ctx(store_location: str) -> Iterator[Ctx]:
    with Memory(store_location, embedder="hashing") as mem:
        rep = mem.add("alpha tenant likes green tea", user_id="a")
        released = mem.add("alpha one-time code 5521", user_id="a").ids[0]
        mem.release(released, user_id="a")
        old = mem.add("alpha uses Chrome", user_id="a").ids[0]
        mem.supersede(old, "alpha uses Brave", user_id="a")
        b = mem.add("beta tenant likes coffee", user_id="b")
        yield Ctx(
            mem, rep.ids[0], released, old, rep.detail["turns"][0], b.ids[0], b.detail["turns"][0]
        )


def state(c: Ctx) -> dict[str, Any]:
    hits = [h.to_dict() for h in c.mem.search("tenant likes", user_id="a", k=10)]
    return {"a": snapshot(c.mem, "a"), "b": snapshot(c.mem, "b"), "hits": hits}


def content(c: Ctx) -> dict[str, Any]:
    """What is remembered (a no-op operation still leaves an audit event)."""
    full = state(c)
    return {
        "a": (full["a"]["memories"], full["a"]["turns"]),
        "b": (full["b"]["memories"], full["b"]["turns"]),
        "hits": full["hits"],
    }


def refused(
    c: Ctx,
    call: Callable[[], object],
    offending: str | None = None,
    errors: tuple[type[Exception], ...] = (InvalidInput, NotFound),
) -> str:
    """Run ``call``; it must raise one of ``errors``, say nothing of
    ``offending`` and change nothing. Returns the message."""
    before = state(c)
    with pytest.raises(errors) as err:
        call()
    message = str(err.value)
    assert message.strip() and len(message) < 300
    if offending is not None:
        assert offending not in message
        for part in offending.split():
            if len(part) >= 4:
                assert part not in message, part
    assert state(c) == before
    assert c.mem.verify_audit().ok
    return message


BAD_TEXTS = [
    pytest.param("", id="empty"),
    pytest.param("   \n\t ", id="whitespace"),
    pytest.param(SURROGATE, id="lone-surrogate"),
    pytest.param(NUL, id="nul"),
    pytest.param(BIG, id="1MB"),
]


@pytest.mark.parametrize("text", BAD_TEXTS)
def test_bad_texts_are_refused_everywhere(ctx: Ctx, text: str) -> None:
    mem, a = ctx.mem, "a"
    calls: list[Callable[[], object]] = [
        lambda: mem.add(text, user_id=a),
        lambda: mem.add(
            [{"role": "user", "content": "fine"}, {"role": "user", "content": text}], user_id=a
        ),
        lambda: mem.add([{"role": "user", "content": text}], user_id=a),
        lambda: mem.search(text, user_id=a),
        lambda: mem.update(ctx.a_active, text, user_id=a),
        lambda: mem.edit(ctx.a_active, text, user_id=a),
        lambda: mem.supersede("green tea", text, user_id=a),
        lambda: mem.add("fine text", user_id=text),
        lambda: mem.add("fine text", user_id=a, agent_id=text),
        lambda: mem.add("fine text", user_id=a, session_id=text),
        lambda: mem.release(text, user_id=a),
        lambda: mem.purge(text, user_id=a),
        lambda: mem.supersede(text, "fine text", user_id=a),
        lambda: mem.supersede(text, "fine text", user_id="newcomer"),
    ]
    for call in calls:
        refused(ctx, call, text if text.strip() else None, errors=(InvalidInput,))


def test_surrogate_and_nul_messages_give_the_position(ctx: Ctx) -> None:
    msg = refused(ctx, lambda: ctx.mem.add(SURROGATE, user_id="a"), SURROGATE)
    assert "surrogate" in msg and str(SURROGATE.index("\ud800")) in msg
    msg = refused(ctx, lambda: ctx.mem.add(NUL, user_id="a"), NUL)
    assert "NUL" in msg and str(NUL.index("\x00")) in msg
    msg = refused(ctx, lambda: ctx.mem.add(BIG, user_id="a"), BIG[:40])
    assert "1000000" in msg and "32000" in msg


def test_a_store_can_allow_long_texts(store_location: str) -> None:
    long = "long " * 40_000  # 200 kB
    with Memory(store_location, embedder="hashing", max_text_chars=300_000) as mem:
        mid = mem.add(long + " needle", user_id="u").ids[0]
        assert mem.get(mid, user_id="u").text == long + " needle"
        assert [h.id for h in mem.search("needle", user_id="u", mode="lexical")] == [mid]


def test_sql_quotes_are_plain_data(ctx: Ctx) -> None:
    mem = ctx.mem
    for call in (
        lambda: mem.get(SQL, user_id="a"),
        lambda: mem.update(SQL, "x", user_id="a"),
        lambda: mem.delete(SQL, user_id="a"),
        lambda: mem.edit(SQL, "x", user_id="a"),
        lambda: mem.restore(SQL, user_id="a"),
        lambda: mem.set_expiry(SQL, None, user_id="a"),
        lambda: mem.get(ctx.a_active, user_id=SQL),
        lambda: mem.update(ctx.a_active, "x", user_id=SQL),
    ):
        refused(ctx, call, SQL, errors=(NotFound,))
    before = content(ctx)
    for op in (mem.purge, mem.release):
        report = op(SQL, user_id="a")
        assert report.match == "none" and report.ids == []
    assert mem.search(SQL, user_id="a", mode="lexical") == []
    assert content(ctx) == before
    # stored verbatim when it is the text, and found again
    mid = mem.add(SQL, user_id=SQL).ids[0]
    assert mem.get(mid, user_id=SQL).text == SQL
    assert [h.id for h in mem.search("drop table", user_id=SQL)] == [mid]
    assert mem.purge("DROP TABLE memories", user_id=SQL).ids == [mid]
    assert len(mem.get_all(user_id="a")) == 2


@pytest.mark.parametrize("target", ['"', "NEAR(", "*", "AND", "-", "foo OR", "col:x", "^"])
def test_fts_syntax_in_targets_is_harmless(ctx: Ctx, target: str) -> None:
    before = content(ctx)
    for op in (ctx.mem.purge, ctx.mem.release):
        try:
            report = op(target, user_id="a")
        except InvalidInput as err:  # a target without any (uncommon) word
            assert "target" in str(err)
        else:
            assert report.ids == [] and report.match == "none"
    assert content(ctx) == before


def test_unknown_ids_are_not_found(ctx: Ctx) -> None:
    mem = ctx.mem
    for call in (
        lambda: mem.get(UNKNOWN, user_id="a"),
        lambda: mem.update(UNKNOWN, "x", user_id="a"),
        lambda: mem.delete(UNKNOWN, user_id="a"),
        lambda: mem.delete(UNKNOWN_TURN, user_id="a"),
        lambda: mem.edit(UNKNOWN, "x", user_id="a"),
        lambda: mem.restore(UNKNOWN, user_id="a"),
        lambda: mem.set_expiry(UNKNOWN, None, user_id="a"),
    ):
        refused(ctx, call, errors=(NotFound,))
    refused(ctx, lambda: mem.delete("my pin 4471", user_id="a"), "my pin 4471", (NotFound,))
    # operations on a tenant that does not exist
    for call in (
        lambda: mem.get(ctx.a_active, user_id="ghost"),
        lambda: mem.update(ctx.a_active, "x", user_id="ghost"),
        lambda: mem.delete(ctx.a_active, user_id="ghost"),
        lambda: mem.purge("green tea", user_id="ghost"),
        lambda: mem.release("green tea", user_id="ghost"),
        lambda: mem.restore(ctx.a_released, user_id="ghost"),
    ):
        refused(ctx, call, errors=(NotFound,))
    assert mem.storage.tenant("user:ghost", False) is None


def test_ids_of_another_tenant_are_not_found(ctx: Ctx) -> None:
    mem = ctx.mem
    for call in (
        lambda: mem.get(ctx.a_active, user_id="b"),
        lambda: mem.update(ctx.a_active, "hijacked", user_id="b"),
        lambda: mem.delete(ctx.a_active, user_id="b"),
        lambda: mem.delete(ctx.a_turn, user_id="b"),
        lambda: mem.edit(ctx.a_active, "hijacked", user_id="b"),
        lambda: mem.restore(ctx.a_released, user_id="b"),
        lambda: mem.set_expiry(ctx.a_active, 0, user_id="b"),
        lambda: mem.get(ctx.b_active, user_id="a"),
        lambda: mem.delete(ctx.b_turn, user_id="a"),
    ):
        msg = refused(ctx, call, "hijacked", errors=(NotFound,))
        assert "tenant" in msg
    before = content(ctx)
    assert mem.purge(ctx.a_active, user_id="b").match == "none"
    assert mem.release(ctx.a_active, user_id="b").match == "none"
    assert mem.history(ctx.a_active, user_id="b") == []
    assert content(ctx) == before


BAD_TTL = [0, -5, "10", float("nan"), float("inf"), True, [], -0.0]
BAD_K = [0, -1, 1001, "5", True, 2.5, None]


@pytest.mark.parametrize("ttl", BAD_TTL, ids=repr)
def test_bad_ttl(ctx: Ctx, ttl: Any) -> None:
    msg = refused(ctx, lambda: ctx.mem.add("fine", user_id="a", ttl=ttl))
    assert "ttl" in msg


@pytest.mark.parametrize("k", BAD_K, ids=repr)
def test_bad_k(ctx: Ctx, k: Any) -> None:
    msg = refused(ctx, lambda: ctx.mem.search("tea", user_id="a", k=k))
    assert "k must be" in msg


WRONG_TYPES: list[tuple[str, Callable[[Memory], object]]] = [
    ("add-none", lambda m: m.add(None, user_id="a")),  # type: ignore[arg-type]
    ("add-int", lambda m: m.add(123, user_id="a")),  # type: ignore[arg-type]
    ("add-dict", lambda m: m.add({"role": "user", "content": "x"}, user_id="a")),  # type: ignore[arg-type]
    ("add-empty-list", lambda m: m.add([], user_id="a")),
    ("add-list-of-str", lambda m: m.add(["hello"], user_id="a")),  # type: ignore[list-item]
    ("add-no-content", lambda m: m.add([{"role": "user"}], user_id="a")),
    ("add-bad-role", lambda m: m.add([{"role": SQL, "content": "x"}], user_id="a")),
    ("add-system-only", lambda m: m.add([{"role": "system", "content": "x"}], user_id="a")),
    ("add-int-content", lambda m: m.add([{"role": "user", "content": 5}], user_id="a")),  # type: ignore[dict-item]
    ("add-bytes", lambda m: m.add(b"bytes", user_id="a")),  # type: ignore[arg-type]
    ("no-scope", lambda m: m.add("x")),
    ("user-int", lambda m: m.add("x", user_id=123)),  # type: ignore[arg-type]
    ("user-empty", lambda m: m.add("x", user_id="")),
    ("user-newline", lambda m: m.add("x", user_id="a\nb")),
    ("user-long", lambda m: m.add("x", user_id="u" * 300)),
    ("run-int", lambda m: m.add("x", user_id="a", run_id=7)),  # type: ignore[arg-type]
    ("meta-str", lambda m: m.add("x", user_id="a", metadata="x")),  # type: ignore[arg-type]
    ("meta-int-key", lambda m: m.add("x", user_id="a", metadata={1: "x"})),  # type: ignore[dict-item]
    ("meta-object", lambda m: m.add("x", user_id="a", metadata={"o": object()})),
    ("meta-nan", lambda m: m.add("x", user_id="a", metadata={"n": float("nan")})),
    ("timestamp-word", lambda m: m.add("x", user_id="a", timestamp="yesterday")),
    ("timestamp-list", lambda m: m.add("x", user_id="a", timestamp=[])),
    ("expires-nan", lambda m: m.add("x", user_id="a", expires_at=float("nan"))),
    ("expires-bool", lambda m: m.add("x", user_id="a", expires_at=True)),
    ("search-none", lambda m: m.search(None, user_id="a")),  # type: ignore[arg-type]
    ("search-mode", lambda m: m.search("tea", user_id="a", mode="semantic")),
    ("search-filters", lambda m: m.search("tea", user_id="a", filters="x")),  # type: ignore[arg-type]
    ("search-no-scope", lambda m: m.search("tea")),
    ("states-str", lambda m: m.get_all(user_id="a", states="active")),
    ("states-bad", lambda m: m.get_all(user_id="a", states=["deleted"])),
    ("states-none", lambda m: m.get_all(user_id="a", states=None)),  # type: ignore[arg-type]
    ("history-none", lambda m: m.history(None, user_id="a")),  # type: ignore[arg-type]
    ("delete-none", lambda m: m.delete(None, user_id="a")),  # type: ignore[arg-type]
    ("delete-int", lambda m: m.delete(5, user_id="a")),  # type: ignore[arg-type]
    ("purge-none", lambda m: m.purge(None, user_id="a")),  # type: ignore[arg-type]
    ("release-int", lambda m: m.release(5, user_id="a")),  # type: ignore[arg-type]
    ("supersede-none", lambda m: m.supersede(None, "new", user_id="a")),  # type: ignore[arg-type]
    ("update-int-text", lambda m: m.update(UNKNOWN, 5, user_id="a")),  # type: ignore[arg-type]
    ("get-int", lambda m: m.get(5, user_id="a")),  # type: ignore[arg-type]
    ("restore-none", lambda m: m.restore(None, user_id="a")),  # type: ignore[arg-type]
    ("set-expiry-word", lambda m: m.set_expiry(UNKNOWN, "never", user_id="a")),
    ("expire-now-word", lambda m: m.expire(now="soon")),
    ("verify-str", lambda m: m.verify_erased("secret")),  # type: ignore[arg-type]
    ("verify-short", lambda m: m.verify_erased(["ab"])),
    ("verify-int", lambda m: m.verify_erased([1234])),  # type: ignore[list-item]
]


@pytest.mark.parametrize("call", [c for _, c in WRONG_TYPES], ids=[n for n, _ in WRONG_TYPES])
def test_wrong_types_are_refused(ctx: Ctx, call: Callable[[Memory], object]) -> None:
    refused(ctx, lambda: call(ctx.mem), SQL)


def test_errors_are_unrecall_errors(ctx: Ctx) -> None:
    # callers can catch one base class (and still the builtin ones)
    with pytest.raises(UnrecallError):
        ctx.mem.add("", user_id="a")
    with pytest.raises(ValueError):
        ctx.mem.add("", user_id="a")
    with pytest.raises(KeyError):
        ctx.mem.get(UNKNOWN, user_id="a")
    with pytest.raises(UnrecallError):
        ctx.mem.get(UNKNOWN, user_id="a")


def test_state_errors_name_the_id_not_the_text(ctx: Ctx) -> None:
    msg = refused(ctx, lambda: ctx.mem.restore(ctx.a_active, user_id="a"), "green tea")
    assert ctx.a_active in msg and "active" in msg
    msg = refused(ctx, lambda: ctx.mem.edit(ctx.a_superseded, "x", user_id="a"), "Chrome")
    assert ctx.a_superseded in msg and "superseded" in msg


# -- time windows and amounts read from texts ------------------------------
@pytest.mark.parametrize(
    "phrase",
    [
        "in the past 99999999999 days",
        "in the last 9999999 months",
        "99999999 weeks ago",
        "99999999999999999999 days ago",
        "in the last 99999999999 hours",
        "in the past " + "9" * 5000 + " days",
    ],
)
def test_windows_reaching_before_the_calendar_start_at_its_first_day(phrase: str) -> None:
    now = time.time()
    span = window(phrase, now)
    assert span is not None and span[0] == datetime.min.replace(tzinfo=UTC).timestamp()
    assert span[1] <= now + 1e-3  # datetime keeps microseconds


def test_a_superscript_digit_is_no_count(ctx: Ctx) -> None:
    assert window("in the past \u00b2 days", time.time()) is None
    turns = [{"role": "user", "content": "forget what I told you in the past \u00b2 days"}]
    ctx.mem.add(turns, user_id="c")  # no ValueError from int("²")
    turns = [{"role": "user", "content": "forget what I told you in the past 99999999999 days"}]
    report = ctx.mem.add(turns, user_id="a")
    assert report.requests and ctx.mem.get_all(user_id="a") == []  # all of it, nothing raised


def test_a_run_of_digits_too_long_for_int_does_not_break_forget(ctx: Ctx) -> None:
    # int() refuses strings of over 4300 digits; trail amounts skip such runs
    ctx.mem.add("the account number is " + "7" * 5000, user_id="a")
    ctx.mem.add("the total was " + "1" * 5000 + " and the part 1111", user_id="a")
    report = ctx.mem.forget("forget that the total was 1111", user_id="a")
    assert report.to_dict()["count"] >= 0


# -- store files: open errors, foreign and non-database files -------------
def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# usefixtures("store_location") gives a test its backend parameter, whose
# PostgreSQL run sqlite_only skips: these are about files, not stores.
@pytest.mark.usefixtures("store_location")
@pytest.mark.sqlite_only("a file that is not a SQLite database")
def test_a_garbage_file_is_refused_untouched(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 64)
    before = _files(tmp_path)
    with pytest.raises(StoreError, match="not a database") as err:
        Memory(junk, embedder="hashing")
    assert "junk" not in str(err.value)
    assert _files(tmp_path) == before  # no -wal / -shm either


def _foreign(path: Path, user_version: int = 0, wal: bool = False) -> None:
    db = apsw.Connection(str(path))
    if wal:
        db.execute("PRAGMA journal_mode=WAL").fetchall()
    db.execute("CREATE TABLE people(name TEXT)")
    db.execute("CREATE TABLE meta(k TEXT)")  # a name unrecall uses, other columns
    db.execute("INSERT INTO people VALUES ('Maya Ferreira')")
    db.execute(f"PRAGMA user_version={user_version}")
    db.close()


@pytest.mark.usefixtures("store_location")
@pytest.mark.sqlite_only(
    "another program's SQLite file (PostgreSQL's: test_cli_polish, foreign database URL)"
)
@pytest.mark.parametrize(
    ("user_version", "wal"), [(0, False), (0, True), (1, False), (99, False)], ids=repr
)
def test_a_foreign_sqlite_file_is_refused_untouched(
    tmp_path: Path, user_version: int, wal: bool
) -> None:
    path = tmp_path / "theirs.db"
    _foreign(path, user_version, wal)
    before = _files(tmp_path)
    with pytest.raises(StoreError, match="did not make") as err:
        Memory(path, embedder="hashing")
    assert "theirs" not in str(err.value) and "Maya" not in str(err.value)
    assert _files(tmp_path) == before
    db = apsw.Connection(str(path))
    assert sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master")) == ["meta", "people"]
    db.close()


def test_an_empty_file_becomes_a_store_and_a_store_reopens(store_location: str) -> None:
    path = store_location  # a database URL is an empty database already
    if "://" not in path:
        Path(path).touch()
    with Memory(path, embedder="hashing") as mem:
        mid = mem.add("kept across opens", user_id="u").ids[0]
    with Memory(path, embedder="hashing") as mem:
        assert mem.get(mid, user_id="u").text == "kept across opens"


@pytest.mark.usefixtures("store_location")
@pytest.mark.sqlite_only("a store file's path through a regular file")
def test_a_path_under_a_regular_file_is_a_store_error(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("private notes")
    with pytest.raises(StoreError, match="cannot open the store file") as err:
        Memory(plain / "store.db", embedder="hashing")
    assert "notes" not in str(err.value)
    with pytest.raises(StoreError):
        Memory(plain / "deeper" / "store.db", embedder="hashing")
    assert plain.read_text() == "private notes"


@pytest.mark.usefixtures("store_location")
@pytest.mark.sqlite_only("a store file in a folder nobody may create")
@pytest.mark.skipif(not Path("/sys").is_dir(), reason="no /sys")
def test_a_path_nobody_may_create_is_a_store_error() -> None:
    # even root cannot make a folder in sysfs
    with pytest.raises(StoreError, match="cannot open the store file"):
        Memory("/sys/unrecall-test/store.db", embedder="hashing")


def _permissions_hold() -> bool:
    """False when this process may write a read-only folder (root with its
    capabilities); these tests run without them, e.g. under
    ``setpriv --bounding-set=-all``."""
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o500)
        try:
            Path(folder, "probe").touch()
        except PermissionError:
            return True
        finally:
            os.chmod(folder, 0o700)
        return False


@pytest.mark.usefixtures("store_location")
@pytest.mark.sqlite_only("file permissions of the store's folder")
@pytest.mark.skipif(not _permissions_hold(), reason="this process may write a read-only folder")
def test_a_read_only_folder_is_a_store_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(StoreError):
            Memory(folder / "store.db", embedder="hashing")
        with pytest.raises(StoreError):
            Memory(folder / "sub" / "store.db", embedder="hashing")
    finally:
        folder.chmod(0o700)


@pytest.mark.sqlite_only("file permissions of the store file")
@pytest.mark.skipif(not _permissions_hold(), reason="this process may write a read-only file")
def test_a_read_only_store_is_a_store_error(store_location: str) -> None:
    path = Path(store_location)
    with Memory(path, embedder="hashing") as mem:
        mem.add("fine", user_id="u")
    path.chmod(0o400)
    try:
        with pytest.raises(StoreError, match="read-only"):
            Memory(path, embedder="hashing")
    finally:
        path.chmod(0o600)


class _Embedder:
    def __init__(self, name: Any, dim: Any) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts: Any) -> Any:  # pragma: no cover - never reached
        raise AssertionError


@pytest.mark.parametrize(
    "embedder",
    [
        "my-secret-embedder",
        None,
        5,
        _Embedder("fine", "384"),
        _Embedder("fine", 0),
        _Embedder("fine", 10**6),
        _Embedder(None, 384),
        _Embedder("", 384),
    ],
    ids=repr,
)
def test_bad_embedders(store_location: str, embedder: Any) -> None:
    with pytest.raises(InvalidInput, match=r"(?i)embedder") as err:
        Memory(store_location, embedder=embedder)
    assert "secret" not in str(err.value)
    assert nothing_made(store_location)  # refused before any file or table is made


# -- times: a sane range, checked at the boundary -----------------------------
HUGE = 10**400
DEEP_PAST = datetime(1, 1, 1)  # naive: its timestamp() is out of range here


def _window_request(m: Memory, at: Any) -> object:
    turns = [{"role": "user", "content": "forget what I told you last week"}]
    return m.add(turns, user_id="a", timestamp=at)


BAD_TIMES: list[tuple[str, str, Callable[[Ctx], object]]] = [
    ("ttl-huge-int", "ttl", lambda c: c.mem.add("fine", user_id="a", ttl=HUGE)),
    ("ttl-1e300", "ttl", lambda c: c.mem.add("fine", user_id="a", ttl=1e300)),
    ("expires-huge-int", "expires_at", lambda c: c.mem.add("x", user_id="a", expires_at=HUGE)),
    ("expires-1e300", "expires_at", lambda c: c.mem.add("x", user_id="a", expires_at=1e300)),
    ("expires-minus-1e300", "expires_at", lambda c: c.mem.add("x", user_id="a", expires_at=-1e300)),
    ("timestamp-huge-int", "timestamp", lambda c: c.mem.add("x", user_id="a", timestamp=HUGE)),
    (
        "timestamp-minus-inf",
        "timestamp",
        lambda c: c.mem.add("x", user_id="a", timestamp=-math.inf),
    ),
    (
        "timestamp-datetime-min",
        "timestamp",
        lambda c: c.mem.add("x", user_id="a", timestamp=DEEP_PAST),
    ),
    (
        "timestamp-iso-year-1",
        "timestamp",
        lambda c: c.mem.add("x", user_id="a", timestamp="0001-01-01"),
    ),
    ("window-request-1e300", "timestamp", lambda c: _window_request(c.mem, 1e300)),
    ("window-request-huge-int", "timestamp", lambda c: _window_request(c.mem, HUGE)),
    (
        "supersede-timestamp",
        "timestamp",
        lambda c: c.mem.supersede("tea", "x", user_id="a", timestamp=HUGE),
    ),
    (
        "set-expiry-huge-int",
        "expires_at",
        lambda c: c.mem.set_expiry(c.a_active, HUGE, user_id="a"),
    ),
    ("set-expiry-1e300", "expires_at", lambda c: c.mem.set_expiry(c.a_active, 1e300, user_id="a")),
    ("expire-now-huge-int", "now", lambda c: c.mem.expire(now=HUGE)),
    ("expire-now-nan", "now", lambda c: c.mem.expire(now=math.nan)),
]


@pytest.mark.parametrize(
    ("field", "call"), [(f, c) for _, f, c in BAD_TIMES], ids=[n for n, _, _ in BAD_TIMES]
)
def test_times_out_of_range_are_refused(
    ctx: Ctx, field: str, call: Callable[[Ctx], object]
) -> None:
    msg = refused(ctx, lambda: call(ctx), errors=(InvalidInput,))
    assert msg.startswith(field)


def test_times_at_the_edges_of_the_range_are_kept(ctx: Ctx) -> None:
    mem = ctx.mem
    first = mem.add("said at the first instant", user_id="c", timestamp=MIN_TIME)
    last = mem.add("said at the last instant", user_id="c", timestamp=MAX_TIME, expires_at=MAX_TIME)
    assert [t["at"] for t in mem.export(user_id="c")["turns"]] == [MIN_TIME, MAX_TIME]
    assert mem.get(last.ids[0], user_id="c").expires_at == MAX_TIME
    assert mem.get(first.ids[0], user_id="c").created_at == MIN_TIME
    # a window request at either edge plans its window inside the calendar
    for at in (MIN_TIME, MAX_TIME):
        report = _window_request(mem, at)
        assert isinstance(report, OpReport) and report.requests
    assert mem.expire(now=MAX_TIME).op == "expire"


def test_timestamp_zero_is_the_epoch_not_now(ctx: Ctx) -> None:
    rep = ctx.mem.add("said at the epoch", user_id="c", timestamp=0)
    assert ctx.mem.export(user_id="c")["turns"][0]["at"] == 0.0
    assert ctx.mem.get(rep.ids[0], user_id="c").created_at == 0.0
    # and now=0 expires nothing that expires later than the epoch
    ctx.mem.set_expiry(ctx.a_active, 1000.0, user_id="a")
    assert ctx.mem.expire(now=0).ids == []


# -- metadata nests at most MAX_METADATA_DEPTH deep -----------------------------
def _nested(depth: int, inner: Any = 1) -> Any:
    value = inner
    for _ in range(depth):
        value = {"a": value}
    return value


def test_deeply_nested_metadata_is_refused(ctx: Ctx) -> None:
    deep = _nested(10_000)
    deep_list: Any = 1
    for _ in range(10_000):
        deep_list = [deep_list]
    for call in (
        lambda: ctx.mem.add("fine", user_id="a", metadata=deep),
        lambda: ctx.mem.add("fine", user_id="a", metadata={"k": deep_list}),
        lambda: ctx.mem.search("tea", user_id="a", filters=deep),
        lambda: ctx.mem.add("fine", user_id="a", metadata=_nested(MAX_METADATA_DEPTH + 1)),
    ):
        msg = refused(ctx, call, errors=(InvalidInput,))
        assert str(MAX_METADATA_DEPTH) in msg and "nested" in msg
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    refused(ctx, lambda: ctx.mem.add("fine", user_id="a", metadata=cyclic), errors=(InvalidInput,))
    # the limit itself is fine
    mid = ctx.mem.add("fine", user_id="c", metadata=_nested(MAX_METADATA_DEPTH)).ids[0]
    assert ctx.mem.get(mid, user_id="c").metadata["a"] == _nested(MAX_METADATA_DEPTH - 1)


# -- ids, probes, flags and settings of the wrong type ------------------------
MORE_WRONG_TYPES: list[tuple[str, Callable[[Ctx], object]]] = [
    ("update-list-id", lambda c: c.mem.update([c.a_active], "x", user_id="a")),
    ("edit-list-id", lambda c: c.mem.edit([c.a_active], "x", user_id="a")),
    ("restore-list-id", lambda c: c.mem.restore([c.a_released], user_id="a")),
    ("set-expiry-list-id", lambda c: c.mem.set_expiry([c.a_active], None, user_id="a")),
    ("get-dict-id", lambda c: c.mem.get({"id": c.a_active}, user_id="a")),
    ("get-surrogate-id", lambda c: c.mem.get(SURROGATE, user_id="a")),
    ("delete-surrogate-id", lambda c: c.mem.delete(SURROGATE, user_id="a")),
    ("restore-surrogate-id", lambda c: c.mem.restore(SURROGATE, user_id="a")),
    ("history-surrogate-id", lambda c: c.mem.history(SURROGATE, user_id="a")),
    ("update-nul-id", lambda c: c.mem.update(NUL, "x", user_id="a")),
    ("verify-none", lambda c: c.mem.verify_erased(None)),
    ("verify-int", lambda c: c.mem.verify_erased(5)),
    ("verify-dict", lambda c: c.mem.verify_erased({"green tea": 1})),
    ("verify-bytes", lambda c: c.mem.verify_erased(b"green tea")),
    ("verify-surrogate", lambda c: c.mem.verify_erased([SURROGATE])),
    ("expire-purge-str", lambda c: c.mem.expire(purge="no")),
    ("expire-purge-int", lambda c: c.mem.expire(purge=1)),
    (
        "honor-requests-str",
        lambda c: c.mem.add([{"role": "user", "content": "x"}], user_id="a", honor_requests="no"),
    ),
]


@pytest.mark.parametrize(
    "call", [c for _, c in MORE_WRONG_TYPES], ids=[n for n, _ in MORE_WRONG_TYPES]
)
def test_more_wrong_types_are_refused(ctx: Ctx, call: Callable[[Ctx], object]) -> None:
    refused(ctx, lambda: call(ctx), SURROGATE, errors=(InvalidInput,))


def test_a_truthy_string_purge_does_not_hard_delete(ctx: Ctx) -> None:
    ctx.mem.set_expiry(ctx.a_active, 1.0, user_id="a")  # long expired
    msg = refused(ctx, lambda: ctx.mem.expire(purge="no"), errors=(InvalidInput,))
    assert "purge" in msg and "True or False" in msg
    assert ctx.mem.get(ctx.a_active, user_id="a").state == "active"
    assert ctx.mem.expire(purge=False).ids == [ctx.a_active]
    assert ctx.mem.get(ctx.a_active, user_id="a").state == "released"


@pytest.mark.parametrize("limit", ["x", 0, -5, True, 1.5, None, [5]], ids=repr)
def test_bad_max_text_chars(store_location: str, limit: Any) -> None:
    with pytest.raises(InvalidInput, match="max_text_chars must be a positive integer"):
        Memory(store_location, embedder="hashing", max_text_chars=limit)
    assert nothing_made(store_location)  # refused before any file or table is made


# -- store paths ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "words"),
    [
        (5, "path must be"),
        (b"store.db", "bytes"),
        (["store.db"], "path must be"),
        (3.5, "path must be"),
        ("", "empty"),
        ("   ", "empty"),
        (":memory:", "in-memory"),
        ("mysql://maya:hunter2@db.example/mem", "MySQL backend is not available yet"),
        ("s3://maya-hunter2/mem.db", "only SQLite files and PostgreSQL URLs"),
        ("maya\x00hunter2.db", "NUL character at position 4"),
        ("maya\ud800hunter2.db", "lone surrogate at position 4"),
    ],
    ids=repr,
)
def test_bad_store_paths_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Any, words: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("UNRECALL_DB", raising=False)
    with pytest.raises(InvalidInput) as err:
        Memory(path, embedder="hashing")
    assert words in str(err.value)
    assert "hunter2" not in str(err.value) and "maya" not in str(err.value)
    assert list(tmp_path.iterdir()) == []  # no "postgresql:" folder, no store in $HOME


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_an_unreachable_postgres_url_is_a_clear_error_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    url = f"{scheme}://maya:hunter2@/mem?host={tmp_path}/no-server&connect_timeout=2"
    with pytest.raises(StoreError) as err:
        Memory(url, embedder="hashing")
    assert "hunter2" not in str(err.value) and "maya" not in str(err.value)
    assert list(tmp_path.iterdir()) == []  # no "postgresql:" folder, no key file


def test_a_directory_is_not_a_store_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="directory"):
        Memory(tmp_path, embedder="hashing")
    with pytest.raises(InvalidInput, match="directory"):
        Memory(str(tmp_path) + "/", embedder="hashing")


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_a_device_is_not_a_store_file() -> None:
    with pytest.raises(InvalidInput, match="not a regular file"):
        Memory("/dev/null", embedder="hashing")


def test_deferred_erasure_is_refused_where_erasure_is_always_at_commit(tmp_path: Path) -> None:
    for erasure in ("deferred", "later", None):
        with pytest.raises(InvalidInput, match="erasure"):
            Memory(tmp_path / "s.db", embedder="hashing", erasure=erasure)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []  # refused before any file was made
    with Memory(tmp_path / "s.db", embedder="hashing") as mem:
        assert mem.erase() is True

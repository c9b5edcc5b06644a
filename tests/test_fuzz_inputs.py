"""Hypothesis fuzz of the API boundary.

Every public method of ``Memory``, its constructor and the command line get
arguments drawn from a mix of valid values and hostile ones (None, bools,
huge ints, nan/inf/1e300, bytes, lists, deeply nested dicts, strings with
NUL, lone surrogates, huge and odd-unicode strings, wrong types for every
keyword). Each call either succeeds or raises an ``UnrecallError``, never
another exception; a refused call leaves the store as it was (``export``,
the tenant rows, the audit chain) and its message never repeats the text it
was given (every hostile text carries ``MARK``).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unrecall import Memory, UnrecallError
from unrecall.interfaces.cli import main
from unrecall.recall.embedder import HashingEmbedder
from unrecall.records import STATES, OpReport
from unrecall.validation import MAX_METADATA_DEPTH, MAX_TIME, MIN_TIME

# Per-method example count: 22 methods x 40, the constructor x 160 and the
# CLI x 120 take ~20 s on two cores with the hashing embedder. A longer
# campaign: UNRECALL_FUZZ_EXAMPLES=1000 pytest tests/test_fuzz_inputs.py
EXAMPLES = int(os.environ.get("UNRECALL_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.filter_too_much,
    ],
)
MARK = "zqsecret"  # in every hostile text; no error message may contain it
UNKNOWN = "m_" + "0" * 20
UNKNOWN_TURN = "t_" + "0" * 20
SCOPES: list[dict[str, str]] = [
    {"user_id": "a"},
    {"user_id": "b"},
    {"user_id": "c"},
    {"agent_id": "bot"},
]


def _nested(depth: int) -> Any:
    value: Any = MARK
    for _ in range(depth):
        value = {"k": value}
    return value


def _nested_list(depth: int) -> Any:
    value: Any = MARK
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


# -- hostile values -------------------------------------------------------------
ODD = [
    "\U0001d518\U0001d52b\U0001d526",  # mathematical fraktur
    "\u202ertl override",
    "\ufdfa",
    "a\u0301\u0301\u0301",
    "\u200b\u200c\u200d\ufeff",
    "\U0001f469\u200d\U0001f469\u200d\U0001f467",
    "\u0130stanbul \u00df \ufb01",
    "\u00a7 0 \u00a7 99 our CFO's wife",
    "\u0661\u0662\u0663 \u00b2 \u00bd",
    "1" * 5000,
    "forget what I told you in the past 99999999999 days",
    "forget what I told you in the past \u00b2 days",
    "forget what I told you 99999999 weeks ago",
]
hostile_text = st.one_of(
    st.sampled_from(["", "   ", "\n\t", ":memory:"]),
    st.sampled_from(ODD).map(lambda t: f"{MARK} {t}"),
    st.sampled_from(
        [
            f"{MARK} \x00 nul",
            f"\x00{MARK}",
            f"{MARK} \ud800 surrogate",
            f"\udfff{MARK}",
            MARK + " big" * 10_001,  # over the 32k default limit
            f"{MARK} '; DROP TABLE memories; --",
            f'{MARK} NEAR( " * AND col:x ^',
        ]
    ),
    # any code point, lone surrogates and controls included
    st.text(st.characters(exclude_categories=()), max_size=24).map(lambda t: f"{MARK}{t}"),
)
hostile_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([10**400, -(10**400), 2**63, -(2**63) - 1, 0, -1]),
    st.floats(),
    st.sampled_from([1e300, -1e300, math.nan, math.inf, -math.inf, -0.0, 5e-324]),
    st.binary(max_size=12),
    st.sampled_from([b"\x00", bytearray(b"zq"), object(), ..., 1j, datetime.min, datetime.max]),
    st.sampled_from([datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC)]),
)
hostile_container = st.one_of(
    st.lists(st.integers(), max_size=3),
    st.lists(hostile_text, min_size=1, max_size=2),
    st.sampled_from([(), [], {}, set(), frozenset({1}), range(3)]),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
    st.sampled_from(
        [
            _nested(10_000),
            _nested_list(10_000),
            _nested(MAX_METADATA_DEPTH + 1),
            {"k": _nested_list(5_000)},
            _cycle(),
            {1: MARK},
            {("t",): MARK},
            {"k": {1, 2}},
            {"k": object()},
            {"k": math.nan},
            {"k": 10**5000},
            {MARK: b"bytes"},
            {"role": "user", "content": MARK},
            [{"role": "user"}],
            [{"role": MARK, "content": "fine"}],
            [{"role": ["user"], "content": "fine"}],
            [{"role": "system", "content": MARK}],
            [MARK],
        ]
    ),
)
hostile = st.one_of(hostile_text, hostile_scalar, hostile_container)


def message_list(content: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "system"]), "content": content}
        ),
        min_size=1,
        max_size=3,
    )


# -- valid values -----------------------------------------------------------------
FACTS = [
    "alpha likes green tea",
    "My login code is 829301",
    "I use Chrome at work",
    "the firm we hired belongs to our CFO's wife",
    "Ravi's wife Maya owns Arden Advisory",
    "we paid 4,800 dollars: 3,900 for the roof and 900 for the gutters",
    "Je m'appelle Zo\u00e9 et j'habite \u00e0 Lyon",
]
REQUESTS = [
    "please forget my login code",
    "forget what I told you last week",
    "delete everything about my health",
    "actually I moved to Lisbon, not Porto anymore",
    "forget that the firm we hired belongs to our CFO's wife",
    "stop assuming I'm quitting my job",
]
text_st = st.sampled_from(FACTS + REQUESTS + ODD[:8])
messages_st = st.one_of(
    text_st,
    message_list(st.sampled_from(FACTS + REQUESTS)),
)
time_st = st.one_of(
    st.none(),
    st.sampled_from([0, MIN_TIME, MAX_TIME, "2024-05-01T10:00:00+00:00", "2024-05-01"]),
    st.just(datetime(2024, 5, 1, tzinfo=UTC)),
    st.floats(min_value=MIN_TIME, max_value=MAX_TIME),
    st.builds(lambda d: time.time() + d, st.floats(-1e6, 1e6)),
)
VALID: dict[str, st.SearchStrategy[Any]] = {
    "user_id": st.sampled_from(["a", "b", "c"]),
    "agent_id": st.sampled_from([None, "bot"]),
    "run_id": st.sampled_from([None, "r1"]),
    "session_id": st.sampled_from([None, "s1", "s2"]),
    "messages": messages_st,
    "query": text_st,
    "text": text_st,
    "new_text": text_st,
    "request": st.sampled_from(REQUESTS + FACTS + ["who owns Arden Advisory?"]),
    "target": st.one_of(st.sampled_from(["green tea", "login code", "Chrome", "Arden"])),
    "timestamp": time_st,
    "expires_at": time_st,
    "now": time_st,
    "ttl": st.sampled_from([None, 60, 0.5, 10**6]),
    "metadata": st.sampled_from(
        [None, {}, {"k": "v"}, {"n": 1, "tags": ["x"]}, _nested(MAX_METADATA_DEPTH - 1)]
    ),
    "filters": st.sampled_from([None, {}, {"k": "v"}]),
    "k": st.integers(1, 1000),
    "mode": st.sampled_from(["hybrid", "lexical"]),
    "states": st.sampled_from([("active",), list(STATES), ["released", "superseded"]]),
    "budget": st.integers(0, 40),
    "purge": st.booleans(),
    "honor_requests": st.booleans(),
    "strings": st.sampled_from([[], ["green tea"], ("alpha likes", "829301")]),
}
# Hostile values aimed at one parameter, on top of the generic ones.
AIMED: dict[str, st.SearchStrategy[Any]] = {
    "messages": st.one_of(
        message_list(hostile), hostile.map(lambda v: [{"role": v, "content": "fine text"}])
    ),
    "strings": hostile.map(lambda v: [v]),
    "states": hostile.map(lambda v: [v]),
    "metadata": hostile.map(lambda v: {"k": v}),
    "filters": hostile.map(lambda v: {"k": v}),
}

# method -> (positional parameters, keyword parameters); user_id is always given.
SCOPE = ["user_id", "agent_id"]
METHODS: dict[str, tuple[list[str], list[str]]] = {
    "add": (
        ["messages"],
        [
            *SCOPE,
            *("run_id", "session_id", "timestamp", "metadata", "expires_at", "ttl"),
            "honor_requests",
        ],
    ),
    "search": (["query"], [*SCOPE, "run_id", "k", "filters", "mode"]),
    "get": (["memory_id"], SCOPE),
    "get_all": ([], [*SCOPE, "run_id", "states"]),
    "update": (["memory_id", "text"], SCOPE),
    "delete": (["memory_id"], SCOPE),
    "delete_all": ([], SCOPE),
    "supersede": (["target", "new_text"], [*SCOPE, "timestamp"]),
    "edit": (["memory_id", "new_text"], SCOPE),
    "release": (["target"], SCOPE),
    "restore": (["memory_id"], SCOPE),
    "purge": (["target"], SCOPE),
    "forget": (["request"], [*SCOPE, "budget"]),
    "residual": (["request"], SCOPE),
    "entities": ([], SCOPE),
    "set_expiry": (["memory_id", "expires_at"], SCOPE),
    "expire": ([], ["now", "purge"]),
    "history": (["memory_id"], SCOPE),
    "export": ([], SCOPE),
    "verify_erased": (["strings"], []),
    "verify_audit": ([], []),
    "compact": ([], []),
    "erase": ([], []),
    "receipt_public_key": ([], []),
}


def test_every_public_method_is_fuzzed() -> None:
    public = {n for n in dir(Memory) if not n.startswith("_") and callable(getattr(Memory, n))} - {
        "close"
    }
    assert public == set(METHODS)


# -- the store under fuzz ------------------------------------------------------
def seed(mem: Memory, ids: list[str]) -> None:
    """A few memories in every state, for users a and b and the agent."""
    for scope in SCOPES[:2]:
        rep = mem.add("alpha likes green tea", **scope)
        ids += rep.ids + rep.detail["turns"]
        code = mem.add("my one-time login code is 552190", **scope).ids[0]
        mem.release(code, **scope)
        old = mem.add("I use Chrome at work", **scope).ids[0]
        ids += [code, old, *mem.supersede(old, "I switched to Brave", **scope).created]
        chat = [
            {"role": "user", "content": "Ravi's wife Maya owns Arden Advisory"},
            {"role": "assistant", "content": "Noted: Maya, Ravi's wife, owns Arden Advisory."},
        ]
        ids += mem.add(chat, session_id="s1", **scope).ids
    ids += mem.add("the bot keeps a note", agent_id="bot").ids


def observe(mem: Memory) -> dict[str, Any]:
    """What a refused call must not change: every scope's export, which
    tenant rows exist, and the length of the audit chain."""
    return {
        "exports": [mem.export(**s) for s in SCOPES],
        "tenants": [mem.storage.tenant(k, False) for k in ("user:a", "user:b", "user:c")],
        "audit": mem.verify_audit().events,
    }


class LiveId(int):
    """Stands for an id of the store, chosen when the call is made."""


def collect_ids(result: Any, ids: list[str]) -> None:
    if isinstance(result, OpReport):
        ids += [i for i in result.ids + result.created if i not in ids]


def check_refusal(err: UnrecallError) -> None:
    message = str(err)
    assert message.strip() and len(message) < 300, message
    assert MARK not in message, message


@pytest.fixture
def store(store_location: str) -> Iterator[tuple[Memory, list[str]]]:
    with Memory(store_location, embedder="hashing") as mem:
        ids: list[str] = [UNKNOWN, UNKNOWN_TURN]
        seed(mem, ids)
        yield mem, ids


@pytest.mark.parametrize("method", sorted(METHODS))
def test_fuzz_method(method: str, store: tuple[Memory, list[str]]) -> None:
    mem, ids = store
    positional, keywords = METHODS[method]
    counts = {"ok": 0, "refused": 0}
    valid = {**VALID, "memory_id": st.integers(0, 10**6).map(LiveId)}
    valid["target"] = st.one_of(valid["target"], valid["memory_id"])

    def live(i: int, user: Any) -> str:
        """An id of the call's tenant (any state, memory or turn), now; at
        times an unknown one or another tenant's."""
        scope = {"user_id": user if user in ("a", "b", "c") else "a"}
        pool = [m.id for m in mem.get_all(**scope, states=STATES)]
        pool += [t["id"] for t in mem.export(**scope)["turns"]]
        pool += [UNKNOWN, UNKNOWN_TURN, ids[i % len(ids)]]
        return pool[i % len(pool)]

    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        mode = data.draw(st.sampled_from(["valid", "valid", "one-bad", "one-bad", "any"]))
        names = positional + [
            k for k in keywords if k == "user_id" or data.draw(st.booleans(), label=f"pass {k}")
        ]
        bad = (
            data.draw(st.sampled_from(names), label="bad") if mode == "one-bad" and names else None
        )
        args: dict[str, Any] = {}
        for name in names:
            wild = st.one_of(hostile, AIMED[name]) if name in AIMED else hostile
            strategy = {
                "valid": valid[name],
                "one-bad": wild if name == bad else valid[name],
                "any": st.one_of(valid[name], wild),
            }[mode]
            args[name] = data.draw(strategy, label=name)
        for name, value in args.items():
            if type(value) is LiveId:
                args[name] = live(value, args.get("user_id"))
        call: Callable[..., Any] = getattr(mem, method)
        before = observe(mem)
        try:
            result = call(
                *[args[n] for n in positional], **{k: args[k] for k in names[len(positional) :]}
            )
        except UnrecallError as err:
            check_refusal(err)
            assert observe(mem) == before, "a refused call changed the store"
            counts["refused"] += 1
        else:
            collect_ids(result, ids)
            counts["ok"] += 1
            if len(mem.get_all(user_id="a")) < 2:  # keep something to act on
                seed(mem, ids)

    run()
    assert counts["ok"] + counts["refused"]  # (few for a method without arguments)
    assert mem.verify_audit().ok


# -- the constructor -------------------------------------------------------------
class FakeEmbedder:
    def __init__(self, name: Any, dim: Any) -> None:
        self.name, self.dim = name, dim

    def embed(self, texts: Any) -> Any:  # pragma: no cover - refused before use
        raise AssertionError("a refused embedder was used")


def test_fuzz_constructor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_location: str
) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # relative hostile paths land here
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("UNRECALL_DB", str(tmp_path / "default.db"))
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 16)
    foreign = tmp_path / "foreign.db"
    db = apsw.Connection(str(foreign))
    db.execute("CREATE TABLE people(name TEXT)")
    db.close()
    plain = tmp_path / "notes.txt"
    plain.write_text("private notes")
    # an existing store on the test's backend: a file (also as a Path), or a database
    Memory(store_location, embedder="hashing").close()
    existing: list[Any] = [store_location]
    if "://" not in store_location:
        existing.append(Path(store_location))
    guarded = {p: p.read_bytes() for p in (junk, foreign, plain)}
    fresh = (tmp_path / f"new{i}.db" for i in itertools.count())
    counts = {"ok": 0, "refused": 0}

    paths = st.one_of(
        st.builds(lambda: next(fresh)),
        st.builds(lambda: str(next(fresh))),
        st.sampled_from([None, *existing]),
        st.sampled_from([junk, foreign, plain, plain / "store.db", tmp_path, str(tmp_path) + "/"]),
        st.sampled_from(
            [
                "",
                ":memory:",
                f"postgresql://maya:{MARK}@db.example/mem",
                f"mysql://{MARK}@host/db",
                f"s3://{MARK}/store.db",
                f"{MARK}\x00.db",
                f"{MARK}\ud800.db",
                MARK * 40,  # a name too long for the file system
                "/sys/unrecall-fuzz/store.db",
            ]
        ),
        hostile,
    )
    embedders = st.one_of(
        st.sampled_from(["hashing", HashingEmbedder.name]),
        st.builds(HashingEmbedder),
        st.builds(
            FakeEmbedder, st.one_of(st.just("fine"), hostile), st.one_of(st.just(8), hostile)
        ),
        hostile,
    )
    limits = st.one_of(st.sampled_from([1, 100, 32_000, 10**9]), hostile)

    @settings(FUZZ, max_examples=4 * EXAMPLES)
    @given(
        path=paths,
        embedder=embedders,
        limit=st.one_of(st.none(), limits),
        erasure=st.one_of(st.none(), st.sampled_from(["commit", "deferred"]), hostile),
    )
    def run(path: Any, embedder: Any, limit: Any, erasure: Any) -> None:
        kwargs: dict[str, Any] = {"embedder": embedder}
        if limit is not None:
            kwargs["max_text_chars"] = limit
        if erasure is not None:
            kwargs["erasure"] = erasure
        try:
            mem = Memory(path, **kwargs)
        except UnrecallError as err:
            check_refusal(err)
            counts["refused"] += 1
        else:
            mem.close()
            counts["ok"] += 1
        assert {p: p.read_bytes() for p in guarded} == guarded

    run()
    assert counts["ok"] and counts["refused"]
    assert not (tmp_path / "home").exists()


# -- the command line --------------------------------------------------------------
def test_fuzz_cli(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    store_location: str,
) -> None:
    db = store_location
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\xff" * 4096)
    monkeypatch.chdir(tmp_path)
    with Memory(db, embedder="hashing") as mem:
        mid = mem.add("alpha likes green tea", user_id="u").ids[0]
    commands = {
        "add": ["TEXT"],
        "search": ["TEXT"],
        "get": ["ID"],
        "get-all": [],
        "update": ["ID", "TEXT"],
        "delete": ["ID"],
        "supersede": ["TEXT", "TEXT"],
        "edit": ["ID", "TEXT"],
        "release": ["TEXT"],
        "restore": ["ID"],
        "purge": ["TEXT"],
        "forget": ["TEXT"],
        "residual": ["TEXT"],
        "entities": [],
        "expire": [],
        "history": ["ID"],
        "export": [],
        "verify": ["TEXT"],
        "audit": [],
    }
    word = st.one_of(
        st.sampled_from(["green tea", "alpha", mid, UNKNOWN]),
        hostile_text,
    )
    options = st.lists(
        st.one_of(
            st.tuples(
                st.just("--db"),
                st.sampled_from(
                    [
                        db,
                        "",
                        ":memory:",
                        str(junk),
                        str(tmp_path),
                        f"postgresql://{MARK}@h/db",
                        f"{MARK}\x00",
                    ]
                ),
            ),
            st.tuples(st.just("--user"), st.one_of(st.just("u"), hostile_text)),
            st.tuples(st.just("--agent"), st.one_of(st.just("bot"), hostile_text)),
            st.tuples(
                st.just("--ttl"), st.sampled_from(["nan", "inf", "1e400", "-1", "0", "abc", "60"])
            ),
            st.tuples(st.just("-k"), st.sampled_from(["0", "-3", "1001", "x", "5", "1" * 500])),
            st.tuples(st.just("--budget"), st.sampled_from(["-1", "x", "3", "9" * 500])),
            st.tuples(st.just("--state"), st.sampled_from(["active", "deleted", MARK])),
            st.tuples(st.just("--session"), hostile_text),
            st.tuples(st.sampled_from(["--json", "--purge", "--lexical", "--bogus"])),
        ),
        max_size=4,
    )

    @settings(FUZZ, max_examples=3 * EXAMPLES)
    @given(command=st.sampled_from(sorted(commands)), data=st.data(), opts=options)
    def run(command: str, data: st.DataObject, opts: list[tuple[str, ...]]) -> None:
        argv = [command]
        for slot in commands[command]:
            argv.append(
                data.draw(
                    word if slot == "TEXT" else st.sampled_from([mid, UNKNOWN, MARK]), label=slot
                )
            )
        argv += ["--embedder", "hashing", "--db", db]
        for opt in opts:
            argv += list(opt)
        monkeypatch.setattr(sys, "stdin", io.StringIO(f"{MARK} probe\n"))
        out = io.StringIO()
        # like the real stderr, which writes an undecodable argv byte (a lone
        # surrogate after decoding) as a backslash escape
        err_bytes = io.BytesIO()
        err_text = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="backslashreplace")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err_text):
            try:
                status = main(argv)
            except SystemExit as stop:  # argparse: usage and a message on stderr
                status = stop.code
                assert status == 2
            err_text.flush()
        err = err_bytes.getvalue().decode("utf-8")
        out.getvalue().encode("utf-8")  # printable on a strict stdout
        assert "Traceback" not in err
        assert status in (0, 1, 2)
        if status == 2:
            assert err.strip()  # a clear message, not silence
        if err.startswith("error:"):  # unrecall's own (argparse's repeat a bad option value)
            assert MARK not in err

    run()

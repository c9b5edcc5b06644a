"""The request pipeline's stages, one by one and end to end: read, resolve,
plan, execute (with erasure), and the optional interpreter."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import verified_clean

from unrecall import Memory
from unrecall.pipeline import resolve
from unrecall.pipeline.interpret import Interpreter, validate
from unrecall.pipeline.plan import plan
from unrecall.pipeline.read import Reading, read
from unrecall.storage.base import MemoryRow

U = "pipeline-user"


def _chat(mem: Memory, *texts: str, session: str = "s1", at: float = 1_700_000_000.0):
    reports = []
    for i, text in enumerate(texts):
        reports.append(
            mem.add(
                [{"role": "user", "content": text}],
                user_id=U,
                session_id=session,
                timestamp=at + 60 * i,
            )
        )
    return reports


def _texts(mem: Memory) -> list[str]:
    return [m.text for m in mem.get_all(user_id=U)]


# -- read -------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "I forgot my keys at the gym again",
        "how do I delete the branch once it is merged?",
        "my doctor said forget sugar for a month",
        "my sister asked her bank to delete her old account",
        "the meeting moved to Thursday, same room",
    ],
)
def test_non_requests_stay_non_requests(text: str) -> None:
    assert not read(text).request, text


@pytest.mark.parametrize(
    "text",
    [
        "please forget my old address, I moved out",
        "olvida lo que te conté de mi salud",
        "efface ce que je t'ai dit sur mon salaire",
        "lösch bitte alles über meine Schulden",
    ],
)
def test_requests_are_read_in_four_languages(text: str) -> None:
    reading = read(text)
    assert reading.request and reading.kind is not None


def test_a_turn_pointing_back_is_read_with_the_previous_one() -> None:
    reading = read("yes. please bin it", "the thing about my mum's diagnosis")
    assert reading.request
    assert reading.previous == "the thing about my mum's diagnosis"


# -- resolve ----------------------------------------------------------------
def test_word_units_are_prefixes_in_any_language() -> None:
    assert resolve.word_units("Die Bürgschaft für den Kredit") == [
        "die",
        "burgs",
        "fur",
        "den",
        "kredi",
    ]


def test_parts_split_the_request_so_its_fact_stands_alone() -> None:
    pieces = resolve.parts("that stuff i told u sunday, about dean and his missus. bin it")
    assert any(p.startswith("about dean") for p in pieces)


def test_signals_have_one_row_per_candidate(store_location: str) -> None:
    with Memory(store_location, embedder="hashing") as mem:
        _chat(mem, "yard gate is 5820 then hash", "the office door is 3197")
        tenant = mem._existing(U, None, None)
        rows, x = resolve.candidates(
            mem.storage, mem.recall, tenant, "forget the yard gate code", "s1", 1_700_000_500.0
        )
    assert x.shape == (len(rows), len(resolve.FEATURES))
    assert np.isfinite(x).all()


def test_a_described_fact_resolves_to_the_memory_that_holds_it(store_location: str) -> None:
    with Memory(store_location) as mem:
        _chat(
            mem,
            "my landlord is Mr Okafor and the rent is 1,250 a month",
            "I play five-a-side football on Tuesdays",
            "my cardiologist put me on bisoprolol for the arrhythmia",
            "we are painting the kitchen green this weekend",
        )
        tenant = mem._existing(U, None, None)
        rows, x = resolve.candidates(
            mem.storage, mem.recall, tenant, "forget what I said about my heart medication",
            "s1", 1_700_000_500.0,
        )  # fmt: skip
        found = resolve.load().resolve(rows, x)
    assert found.targets and "bisoprolol" in found.targets[0].row.text


def test_the_packaged_resolver_matches_its_signals() -> None:
    model = resolve.load()
    assert model.weights.shape == (len(resolve.FEATURES),)
    assert 0.0 < model.threshold < 1.0


# -- plan -------------------------------------------------------------------
def _reading(kind: str = "factual") -> Reading:
    return Reading(True, kind, 0.9, "en")


def _row() -> MemoryRow:
    return MemoryRow(1, "m_x", 1, None, None, "t", "message", "active", 0.0, 0.0, None, {}, None)


def test_plan_picks_a_strategy_per_request() -> None:
    none = resolve.Resolution(())
    some = resolve.Resolution((resolve.Target(_row(), 0.9, "similarity"),))
    parsed = read("please forget my PIN 4417")
    assert parsed.parse is not None
    assert plan(parsed, none).strategy == "literal"
    assert plan(_reading(), none).strategy == "none"
    assert plan(_reading(), some).strategy == "described"
    assert plan(_reading("replacement"), some).strategy == "replacement"


# -- end to end, with erasure ------------------------------------------------
def test_a_described_request_in_the_chat_forgets_and_erases(store_location: str) -> None:
    with Memory(store_location) as mem:
        _chat(
            mem,
            "my cardiologist put me on bisoprolol for the arrhythmia",
            "we are painting the kitchen green this weekend",
        )
        [report] = _chat(
            mem, "can you delete what I told you about my heart pills", at=1_700_001_000.0
        )
        [done] = report.requests
        assert done.reader == "learned" and done.strategy in ("described", "literal")
        assert not any("bisoprolol" in t for t in _texts(mem))
        assert any("kitchen" in t for t in _texts(mem))
        assert verified_clean(mem, ["bisoprolol"])


@pytest.mark.parametrize(
    "said",
    ["Please forget that I drive a blue Fiat Panda.", "please forget that I live in Porto"],
)
def test_forget_that_a_clause_is_a_deletion_not_a_new_value(store_location: str, said: str) -> None:
    # The rules read "forget" as a correction marker and "I live in X" as a
    # change, and stored the request as the new value: the fact stayed.
    with Memory(store_location) as mem:
        _chat(mem, "I drive a blue Fiat Panda to work.", "I live in Porto.", "I like jazz.")
        [report] = _chat(mem, said, at=1_700_001_000.0)
        [done] = report.requests
        assert done.kind != "replacement"
        gone = "Fiat Panda" if "Fiat" in said else "Porto"
        assert not any(gone in t for t in _texts(mem))
        assert any("jazz" in t for t in _texts(mem))
        assert verified_clean(mem, [gone])


def test_a_real_correction_is_still_a_replacement(store_location: str) -> None:
    with Memory(store_location) as mem:
        _chat(mem, "I live in Porto.")
        [report] = _chat(mem, "actually I live in Lisbon now", at=1_700_001_000.0)
        [done] = report.requests
        assert done.kind == "replacement"
        assert any("Lisbon" in t for t in _texts(mem))
        assert not any("Porto" in t for t in _texts(mem))


# -- the interpreter ---------------------------------------------------------
def test_validate_accepts_only_what_the_plane_can_check() -> None:
    shown = [_row()]
    ok = validate(
        '{"request": true, "kind": "factual", "targets": [1], "new_value": null}', shown, 4
    )
    assert ok is not None and ok.targets == (shown[0],)
    assert validate('{"request": false}', shown, 4) == validate('{"request": false}', [], 4)
    for bad in (
        "not json",
        '{"request": true, "kind": "made-up", "targets": [1]}',
        '{"request": true, "kind": "factual", "targets": [2]}',  # not among the candidates
        '{"request": true, "kind": "factual", "targets": [true]}',
        '{"request": true, "kind": "factual", "targets": [1, 1, 1, 1, 1]}',  # over budget
        '{"request": "yes", "kind": "factual", "targets": []}',
    ):
        assert validate(bad, shown, 4) is None, bad


def _numbered(prompt: str, needle: str) -> int:
    for line in prompt.split("Memories:\n")[1].splitlines():
        if needle in line:
            return int(line.split(".", 1)[0])
    raise AssertionError(needle)


STORY = (
    "my cardiologist put me on bisoprolol for the arrhythmia",
    "we are painting the kitchen green this weekend",
)
REQUEST = "can you delete what I told you about my heart pills"


def test_the_interpreter_decides_when_its_answer_checks_out(store_location: str, endpoint) -> None:
    fake, url = endpoint
    fake.reply = lambda p: json.dumps(
        {
            "request": True,
            "kind": "factual",
            "targets": [_numbered(p, "kitchen")],
            "new_value": None,
        }
    )  # an odd choice, but a valid one: the interpreter decides
    with Memory(store_location, interpreter=Interpreter(url, "m")) as mem:
        _chat(mem, *STORY)
        [report] = _chat(mem, REQUEST, at=1_700_001_000.0)
        assert report.requests[0].reader == "interpreter"
        assert not any("kitchen" in t for t in _texts(mem))
        assert any("bisoprolol" in t for t in _texts(mem))
    assert REQUEST in fake.prompts[0]


@pytest.mark.parametrize(
    "answer", ["garbage", '{"request": true, "kind": "factual", "targets": [99]}']
)
def test_a_bad_answer_falls_back_to_the_default_reader(
    store_location: str, endpoint, answer
) -> None:
    fake, url = endpoint
    fake.reply = lambda p: answer
    with Memory(store_location, interpreter=Interpreter(url, "m")) as mem:
        _chat(mem, *STORY)
        [report] = _chat(mem, REQUEST, at=1_700_001_000.0)
        assert report.requests[0].reader == "learned"
        assert any("kitchen" in t for t in _texts(mem))


def test_an_unreachable_interpreter_falls_back(store_location: str) -> None:
    with Memory(
        store_location, interpreter=Interpreter("http://127.0.0.1:9/v1", "m", timeout=2)
    ) as mem:
        _chat(mem, *STORY)
        [report] = _chat(mem, REQUEST, at=1_700_001_000.0)
        assert report.requests[0].reader == "learned"


def test_the_interpreter_may_find_the_turn_is_no_request(store_location: str, endpoint) -> None:
    fake, url = endpoint
    fake.reply = lambda p: '{"request": false}'
    with Memory(store_location, interpreter=Interpreter(url, "m")) as mem:
        _chat(mem, *STORY)
        [report] = _chat(mem, REQUEST, at=1_700_001_000.0)
        assert report.requests == []
        assert any(REQUEST in t for t in _texts(mem))  # stored as said


def test_memory_refuses_something_else_as_interpreter(store_location: str) -> None:
    from unrecall.errors import InvalidInput

    with pytest.raises(InvalidInput):
        Memory(store_location, interpreter="http://127.0.0.1:1/v1")  # type: ignore[arg-type]


# -- forget is the trail cut -------------------------------------------------
def test_forget_is_the_trail_strategy(store_location: str) -> None:
    from test_trails import REQUEST, episode
    from test_trails import U as TU

    with Memory(store_location) as mem:
        episode(mem)
        report = mem.forget(REQUEST, user_id=TU)
    assert report.strategy == "trail" and report.kind == "trail" and report.reader == "caller"


def test_a_new_number_said_in_passing_replaces_only_the_old_one(store_location: str) -> None:
    with Memory(store_location) as mem:
        _chat(
            mem,
            "put my mobile 07911 562334 on the flyer and say dean runs the forklift refresher",
            "we are painting the kitchen green this weekend",
        )
        [report] = _chat(
            mem, "oh new number btw, 07723 418906. old phone got nicked", at=1_700_001_000.0
        )
        [done] = report.requests
        assert done.strategy == "replacement" and done.rewritten
        held = " ".join(_texts(mem))
        assert "07911 562334" not in held and "forklift" in held and "07723 418906" in held
        assert verified_clean(mem, ["07911 562334"])


def test_the_benchmark_guard_lets_only_the_named_loopback_server_through(endpoint) -> None:
    import socket
    from urllib.parse import urlsplit

    from unrecall.bench.common import network_guard
    from unrecall.control.llm_rerank import complete

    fake, url = endpoint
    fake.reply = lambda p: "ok"
    port = urlsplit(url).port
    assert port is not None
    with network_guard([("127.0.0.1", port), ("example.com", 80)]) as seen:
        assert complete(url, "m", "hi") == "ok"
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port + 1 if port < 65535 else port - 1))
        with pytest.raises(OSError):  # only loopback may be allowed
            socket.getaddrinfo("example.com", 80)
    assert len(seen) == 2

"""``unrecall mcp``: the real server spawned over stdio, driven by the SDK's client.

Each test starts ``python -m unrecall.interfaces.cli mcp`` as a subprocess and
talks to it with ``mcp.client.stdio.stdio_client`` and ``ClientSession``, so
what is checked is what an MCP client sees: the tools and their schemas,
structured results, tool errors, and tenant isolation between two servers on
one store file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from unrecall.memory import SEARCH_THRESHOLD

TOOLS = {"remember", "recall", "forget", "purge", "supersede", "export", "verify_erased"}


@asynccontextmanager
async def serve(
    db: Path, user: str, errlog: Path, embedder: str = "hashing"
) -> AsyncIterator[ClientSession]:
    """A session with a freshly spawned server for ``user`` on ``db``."""
    argv = ["-m", "unrecall.interfaces.cli", "mcp", "--db", str(db), "--user", user]
    params = StdioServerParameters(command=sys.executable, args=[*argv, "--embedder", embedder])
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write):  # noqa: SIM117
            async with ClientSession(read, write) as session:  # needs the streams above
                await session.initialize()
                yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result; fails the test on a tool error."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def error(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The text of a tool error; fails the test when the call succeeds."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


def run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


def test_lists_the_seven_tools_with_schemas(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path / "s.db", "ana", tmp_path / "err.log") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            for t in tools.values():
                assert t.description and len(t.description) > 80
                assert t.input_schema["type"] == "object"
                assert t.output_schema is not None
                # the tenant is the server's, never an argument
                assert not {"user_id", "agent_id", "user"} & set(t.input_schema["properties"])
            assert tools["recall"].input_schema["required"] == ["query"]
            threshold = tools["recall"].input_schema["properties"]["threshold"]
            assert threshold["default"] == pytest.approx(SEARCH_THRESHOLD)
            assert set(tools["supersede"].input_schema["required"]) == {"target", "new_text"}
            assert "forget" in tools["purge"].description  # tells the model when not to use it

    run(body)


def test_remember_recall_purge_then_verify_clean(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path / "s.db", "ana", tmp_path / "err.log", "minilm") as s:
            made = await call(s, "remember", text="My locker code is 7319-QX.")
            await call(s, "remember", text="I play the cello on Sundays.")
            assert made["count"] == 1
            hits = (await call(s, "recall", query="what is my locker code?"))["hits"]
            assert hits and hits[0]["text"] == "My locker code is 7319-QX."
            assert hits[0]["similarity"] is not None
            # the default threshold keeps a query about nothing stored empty
            assert (await call(s, "recall", query="volcanic eruptions in Iceland"))["hits"] == []
            gone = await call(s, "purge", target=hits[0]["id"])
            assert gone["ids"] == made["created"] and gone["erased"] is True
            assert "7319" not in json.dumps(gone)
            check = await call(s, "verify_erased", strings=["7319-QX", "cello"])
            assert check["clean"] is False and check["found"] == [1]  # by index only
            assert "cello" not in json.dumps(check)
            assert (await call(s, "verify_erased", strings=["7319-QX"]))["clean"] is True
            hits = (await call(s, "recall", query="locker code", threshold=None))["hits"]
            assert all("7319" not in h["text"] for h in hits)

    run(body)


def test_forget_in_natural_language(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path / "s.db", "ana", tmp_path / "err.log") as s:
            await call(s, "remember", text="My sister Lena is pregnant with twins.")
            await call(s, "remember", text="I work as a nurse in Ghent.")
            done = await call(s, "forget", request="please forget that my sister is pregnant")
            assert done["count"] >= 1 and done["removed"]
            assert "twins" not in json.dumps(done) and "Lena" not in json.dumps(done)
            left = await call(s, "export")
            texts = [m["text"] for m in left["memories"]]
            assert texts == ["I work as a nurse in Ghent."]
            assert (await call(s, "verify_erased", strings=["pregnant with twins"]))["clean"]

    run(body)


def test_remember_messages_honours_a_forget_request(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path / "s.db", "ana", tmp_path / "err.log") as s:
            await call(s, "remember", text="My old address is 12 Elm Street.")
            chat = [
                {"role": "user", "content": "I adopted a cat called Miso."},
                {"role": "user", "content": "Please forget my old address."},
            ]
            made = await call(s, "remember", messages=chat)
            assert len(made["forget_requests"]) == 1 and made["forget_requests"][0]["count"] >= 1
            assert "Elm" not in json.dumps(made)
            texts = [m["text"] for m in (await call(s, "export"))["memories"]]
            assert "I adopted a cat called Miso." in texts
            assert not any("Elm" in t for t in texts)

    run(body)


def test_bad_input_is_a_tool_error_without_the_input(tmp_path: Path) -> None:
    secret = "PIN-552817"
    log = tmp_path / "err.log"

    async def body() -> None:
        async with serve(tmp_path / "s.db", "ana", log) as s:
            await call(s, "remember", text="I keep a spare key under the mat.")
            errors = [
                await error(s, "remember", text=f"my {secret} is\x00 here"),  # unrecall refuses
                await error(s, "recall", query="key", k=secret),  # schema refuses
                await error(s, "recall", query="key", threshold=secret),
                await error(s, "remember", text=secret, messages=[]),
                await error(s, "remember", messages=[{"role": secret, "content": "hi"}]),
                await error(s, "verify_erased", strings=secret),
                await error(s, "supersede", target=f"{secret}\x00", new_text="x"),
            ]
            for text in errors:
                assert text and secret not in text
            assert "NUL" in errors[0] and "k" in errors[1]
            # nothing was lost or stored by the refused calls
            texts = [m["text"] for m in (await call(s, "export"))["memories"]]
            assert texts == ["I keep a spare key under the mat."]

    run(body)
    assert secret not in log.read_text()


def test_another_user_on_the_same_file_sees_nothing(tmp_path: Path) -> None:
    db, log = tmp_path / "shared.db", tmp_path / "err.log"

    async def body() -> None:
        async with serve(db, "ana", log) as ana:
            await call(ana, "remember", text="My therapist is Dr. Okafor.")
            async with serve(db, "bo", log) as bo:
                assert (await call(bo, "recall", query="therapist", threshold=None))["hits"] == []
                export = await call(bo, "export")
                assert export["memories"] == [] and export["turns"] == []
                assert "Okafor" not in json.dumps(export)
                # bo cannot forget or purge ana's memories either
                await error(bo, "purge", target="Dr. Okafor")
                await call(bo, "remember", text="I like chess.")
                assert (await call(bo, "purge", target="Dr. Okafor"))["count"] == 0
                # nor probe the shared file's bytes for ana's words
                await error(bo, "verify_erased", strings=["Okafor"])
            hits = (await call(ana, "recall", query="therapist", threshold=None))["hits"]
            assert [h["text"] for h in hits] == ["My therapist is Dr. Okafor."]

    run(body)

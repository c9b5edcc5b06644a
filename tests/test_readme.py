"""The README's interface examples, run as a user would run them: each
Python block in a fresh folder, the REST example against a real
``unrecall serve``, the MCP configuration through the SDK's client, the
receipt commands in bash."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

README = Path(__file__).resolve().parent.parent / "README.md"
BIN = Path(sys.executable).parent


def interface_blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced block of the Interfaces section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Interfaces") : text.index("## Operations")]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.DOTALL)


BLOCKS = interface_blocks()
PYTHON = [code for lang, code in BLOCKS if lang == "python"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("UNRECALL_DB", None)
    env.pop("UNRECALL_RECEIPT_KEY", None)
    return env


def _run_python(code: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=_env(), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_section_has_one_example_per_interface() -> None:
    langs = [lang for lang, _ in BLOCKS]
    assert langs.count("python") == 4 and "json" in langs and "bash" in langs
    joined = "\n".join(code for _, code in BLOCKS)
    for needle in ("AsyncMemory", "httpx", "UnrecallStore", "unrecall.compat.mem0", "receipt"):
        assert needle in joined


@pytest.mark.parametrize(
    "code", [c for c in PYTHON if "httpx" not in c], ids=["async", "lg", "mem0"]
)
def test_python_examples_run(tmp_path: Path, code: str) -> None:
    out = _run_python(code, tmp_path)
    assert out.strip()  # each example prints what it found


def test_rest_example_against_a_real_server(tmp_path: Path) -> None:
    [code] = [c for c in PYTHON if "httpx" in c]
    command = re.search(r"`unrecall serve ([^`]+)`", README.read_text(encoding="utf-8"))
    assert command is not None
    (tmp_path / "admin.key").write_text("admin-" + secrets.token_hex(16) + "\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [str(BIN / "unrecall"), "serve", *command.group(1).split(), "--port", str(port)]
    server = subprocess.Popen(args, cwd=tmp_path, env=_env(), stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        out = _run_python(code.replace("http://127.0.0.1:8420", url), tmp_path)
        assert "4471" in out.splitlines()[0]  # the search found it
        assert out.splitlines()[1].split() == ["1", "purge"]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert b"4471" not in err


def test_mcp_configuration_starts_the_server(tmp_path: Path) -> None:
    [config] = [json.loads(code) for lang, code in BLOCKS if lang == "json"]
    spec = config["mcpServers"]["memory"]
    command = shutil.which(spec["command"], path=str(BIN)) or spec["command"]

    async def body() -> set[str]:
        params = StdioServerParameters(
            command=command, args=spec["args"], env=_env(), cwd=str(tmp_path)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return {t.name for t in (await s.list_tools()).tools}

    tools = anyio.run(body)
    want = {"remember", "recall", "forget", "purge", "supersede", "export", "verify_erased"}
    assert tools == want


def test_receipt_commands(tmp_path: Path) -> None:
    [script] = [code for lang, code in BLOCKS if lang == "bash"]
    env = _env()
    subprocess.run(
        ["unrecall", "add", "My locker code is 4471", "--db", "memory.db", "--user", "maya"],
        cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "4471" not in (tmp_path / "purge.json").read_text()
    assert json.loads((tmp_path / "purge.json").read_text())["count"] == 1

"""Shared fixtures: a fresh on-disk store per test."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from unrecall import Memory


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    """A store with the default (MiniLM) embedder in a temporary folder."""
    with Memory(tmp_path / "store.db") as m:
        yield m


@pytest.fixture
def fast_mem(tmp_path: Path) -> Iterator[Memory]:
    """A store with the explicit hashing embedder, for many-example properties."""
    with Memory(tmp_path / "fast.db", embedder="hashing") as m:
        yield m


class Endpoint:
    """A fake chat-completions server: answers with ``reply(prompt)``."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.status = 200
        self.reply = lambda prompt: "[]"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server calls it by this name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][0]["content"]
                endpoint.prompts.append(prompt)
                out = json.dumps(
                    {"choices": [{"message": {"content": endpoint.reply(prompt)}}]}
                ).encode()
                self.send_response(endpoint.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def endpoint() -> Iterator[tuple[Endpoint, str]]:
    fake = Endpoint()
    server = HTTPServer(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake, f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()

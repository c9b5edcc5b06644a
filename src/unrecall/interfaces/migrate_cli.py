"""``unrecall migrate --from SRC --to DST``: copy a whole store elsewhere.

SRC and DST are each a SQLite file path, ``sqlite:///abs/path.db`` or a
``postgresql://`` URL. The destination must be new or empty; it is made for
the source's embedder. Prints the counts copied (``--json``: the report as
JSON); errors go to stderr with exit status 2 and name no path, URL or text.
"""

from __future__ import annotations

import argparse
import json
import sys

from unrecall.errors import UnrecallError
from unrecall.progress import Progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--from``, ``--to``, ``--json`` and ``--quiet``."""
    where = "a SQLite file path, sqlite:///abs/path.db or a postgresql:// URL"
    parser.add_argument("--from", dest="source", required=True, help=f"store to copy: {where}")
    parser.add_argument(
        "--to", dest="destination", required=True, help=f"new or empty store: {where}"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def run_cli(args: argparse.Namespace) -> int:
    """Run ``unrecall migrate``; the exit status."""
    from unrecall.storage.migrate import migrate

    try:
        report = migrate(args.source, args.destination, progress=Progress(args.quiet))
    except UnrecallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(
            f"migrated: {report.tenants} tenants, {report.turns} turns, {report.memories}"
            f" memories, {report.provenance} provenance edges, {report.vectors} vectors,"
            f" {report.audit_events} audit events, {report.api_keys} API keys"
            f" (embedder {report.embedder}, dim {report.dim})"
        )
    return 0

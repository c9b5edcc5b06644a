"""``unrecall receipt``: check a forget receipt offline, print a store's key.

``verify RECEIPT.json --public-key KEY.pem`` checks the signature against
the key the verifier trusts; with ``--db`` it also walks the store's audit
chain (read-only) and checks the event the receipt cites is in it, intact.
It prints one line and exits 0 when the receipt is valid, 1 when it is not
(2 when the files cannot be read). ``public-key`` prints the PEM public key
a store's receipts are signed with. The receipt file may be a bare receipt
or a report printed by ``--json`` (its ``receipt`` is taken).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from unrecall.control import receipts
from unrecall.control.audit import AuditLog
from unrecall.errors import InvalidInput, StoreError, UnrecallError
from unrecall.storage.base import AuditRow
from unrecall.validation import check_store

_AUDIT_COLS = "seq, at, tenant, op, detail, refs, prev, hash"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``verify`` and ``public-key`` subcommands."""
    sub = parser.add_subparsers(dest="receipt_command", required=True)
    p = sub.add_parser("verify", help="check a receipt's signature (and, with --db, the chain)")
    p.add_argument("receipt", help="receipt JSON file ('-' reads stdin)")
    p.add_argument("--public-key", required=True, help="PEM public key the receipt must verify by")
    p.add_argument("--db", default=None, help="store whose audit chain must hold the receipt")
    p = sub.add_parser("public-key", help="print the PEM public key of a store's receipts")
    p.add_argument("--db", default=None, help="store file (default: $UNRECALL_DB or ~/.unrecall)")
    p.add_argument("--receipt-key", default=None, help="key file, if not the store's default")


def _audit_rows(rows: Any) -> Iterator[AuditRow]:
    """Audit rows from a cursor over ``_AUDIT_COLS`` (either backend)."""
    for r in rows:
        yield AuditRow(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]), r[6], r[7])


class _AuditFile:
    """The audit table of a store file, read through a read-only connection:
    verifying never writes the store, needs no embedder and runs no upgrade."""

    def __init__(self, path: Path) -> None:
        import apsw

        if not path.is_file():
            raise StoreError("no store file at --db")
        try:
            self._db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
            self._db.execute("SELECT 1 FROM audit LIMIT 1").fetchall()
        except apsw.Error as exc:
            raise StoreError(f"cannot read the store's audit log ({type(exc).__name__})") from None

    def audit_rows(self, ref: str | None = None) -> Iterator[AuditRow]:
        """Every row in sequence order (``ref`` is not supported: not needed)."""
        return _audit_rows(self._db.execute(f"SELECT {_AUDIT_COLS} FROM audit ORDER BY seq"))

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


class _AuditDatabase:
    """The audit table of a PostgreSQL store, read in a read-only
    transaction: as ``_AuditFile``, nothing is written or upgraded."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise StoreError("a PostgreSQL store needs: pip install 'unrecall[postgres]'") from None
        self._error = psycopg.Error
        try:
            self._db = psycopg.connect(url, options="-c default_transaction_read_only=on")
            self._db.execute("SELECT 1 FROM audit LIMIT 1").fetchall()
        except psycopg.Error as exc:  # the message may quote the URL: class only
            raise StoreError(f"cannot read the store's audit log ({type(exc).__name__})") from None

    def audit_rows(self, ref: str | None = None) -> Iterator[AuditRow]:
        """Every row in sequence order (``ref`` is not supported: not needed)."""
        return _audit_rows(self._db.execute(f"SELECT {_AUDIT_COLS} FROM audit ORDER BY seq"))

    def close(self) -> None:
        """Close the connection."""
        self._db.close()


def _where(db: str | None) -> Path | str:
    """The store ``--db`` names (else the default one): a file path, or a
    PostgreSQL URL kept as text."""
    from unrecall.memory import default_path

    return check_store(db if db else default_path())


def _read(name: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read a file: {exc.strerror}") from None


def _receipt(data: bytes) -> Any:
    """The receipt in a file: the document itself, or a report's ``receipt``."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(doc, dict) and "payload" not in doc and isinstance(doc.get("receipt"), dict):
        return doc["receipt"]
    return doc


def verify(args: argparse.Namespace) -> tuple[bool, str]:
    """Check one receipt: (valid, a one-line reason)."""
    public = receipts.read_public(_read(args.public_key))
    receipt = _receipt(_read(args.receipt))
    if receipt is None:
        return False, "the receipt file is not JSON"
    verdict = receipts.verify(receipt, public)
    if not verdict.ok or args.db is None:
        return verdict.ok, verdict.reason
    head = receipt["payload"]["head"]
    where = _where(args.db)
    store = _AuditDatabase(where) if isinstance(where, str) else _AuditFile(where)
    try:
        log = AuditLog(store)  # type: ignore[arg-type]  # it only reads audit_rows
        check = log.verify()
        if not check.ok:
            return False, f"the store's audit chain is broken at event {check.broken_at}"
        if not log.holds(head["seq"], head["hash"]):
            return False, f"the store's audit chain does not hold event {head['seq']} as signed"
    finally:
        store.close()
    return True, f"valid signature; audit event {head['seq']} is in the intact chain"


def public_key(args: argparse.Namespace) -> str:
    """The PEM public key of a store's receipts (the key is made on first use)."""
    store = _where(args.db)
    if isinstance(store, str):
        _AuditDatabase(store).close()  # a reachable unrecall store, or StoreError
    elif not store.is_file():
        raise StoreError("no store file at --db")
    return receipts.public_pem(
        receipts.load_key(receipts.key_path(store, args.receipt_key)).public_key()
    )


def run_cli(args: argparse.Namespace) -> int:
    """Run ``unrecall receipt ...``; the exit status."""
    try:
        if args.receipt_command == "public-key":
            print(public_key(args), end="")
            return 0
        ok, reason = verify(args)
    except UnrecallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{'valid' if ok else 'invalid'}: {reason}")
    return 0 if ok else 1

"""Signed, content-free forget receipts.

A hard forget (purge, delete, delete_all, forget, expire with purge, an add
that executed forget requests) hands back a receipt: which operation ran,
the ids it removed and the counts, the tenant's random audit handle (never
the user id), the time, and the audit event it recorded (seq and hash), so
anyone holding the store can check the event is in the intact chain. The
payload is signed with Ed25519 over its canonical JSON (sorted keys, no
spaces) with a key kept outside the store file: a receipt proves the store's
operator issued it, without the store, and says nothing of what was
forgotten (ids are random; no text and no digest of text goes in).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from unrecall.control.audit import AuditEvent
from unrecall.errors import InvalidInput, StoreError
from unrecall.records import ForgetReport, OpReport

VERSION = 1
ALG = "Ed25519"
KEY_ENV = "UNRECALL_RECEIPT_KEY"
KEY_SUFFIX = ".receipt-key"
_ID = re.compile(r"^[mt]_[0-9a-f]{20}$")
_OPS = {"purge", "delete", "delete_all", "forget", "expire", "add"}


def key_path(store: str | os.PathLike[str], key: str | os.PathLike[str] | None = None) -> Path:
    """Where a store's signing key lives: ``key`` if given, else
    ``$UNRECALL_RECEIPT_KEY``, else ``<store>.receipt-key`` beside the store
    (not one of the files the store is made of, so it is never scanned,
    copied into or erased with the store)."""
    if key is None and isinstance(store, str) and "://" in store:
        # a server database: one key per user account, never in the URL's
        # name (it may hold a password)
        key = os.environ.get(KEY_ENV) or Path.home() / ".unrecall" / f"postgres{KEY_SUFFIX}"
    elif key is None:
        key = os.environ.get(KEY_ENV) or f"{os.fspath(store)}{KEY_SUFFIX}"
    if not isinstance(key, str | os.PathLike) or not os.fspath(key):
        raise InvalidInput("receipt_key must be a file path or None")
    return Path(key)


def _read_private(path: Path) -> Ed25519PrivateKey:
    """The key in a file: 32 raw bytes or an unencrypted PEM (PKCS#8)."""
    try:
        data = path.read_bytes()
    except OSError as exc:  # the path may name a person: say why, not where
        raise StoreError(f"cannot read the receipt key file: {exc.strerror}") from None
    try:
        if len(data) == 32:
            return Ed25519PrivateKey.from_private_bytes(data)
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, Ed25519PrivateKey):
        raise StoreError("the receipt key file does not hold an Ed25519 private key")
    return key


def _create_private(path: Path) -> None:
    """Write a new key, mode 0600, without ever overwriting one: it is
    written whole to a private temporary file and linked into place, so a
    process that loses the race reads the winner's complete key."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use that
            os.link(tmp, path)
    except OSError as exc:
        raise StoreError(f"cannot create the receipt key file: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


def load_key(path: Path) -> Ed25519PrivateKey:
    """The private key at ``path``, made on first use."""
    if not path.exists():
        _create_private(path)
    return _read_private(path)


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(public: Ed25519PublicKey) -> str:
    """The SHA-256 of the raw public key, hex: names the key in a receipt."""
    return hashlib.sha256(_raw(public)).hexdigest()


def public_pem(public: Ed25519PublicKey) -> str:
    """The public key as PEM (SubjectPublicKeyInfo), what verifiers are given."""
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def read_public(data: bytes) -> Ed25519PublicKey:
    """A public key from PEM or 32 raw bytes; ``InvalidInput`` otherwise."""
    try:
        if len(data) == 32:
            return Ed25519PublicKey.from_public_bytes(data)
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, Ed25519PublicKey):
        raise InvalidInput("the public key is not an Ed25519 public key (PEM or 32 raw bytes)")
    return key


def canonical(payload: dict[str, Any]) -> bytes:
    """The bytes that are signed: JSON with sorted keys and no spaces."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _ids(values: Sequence[str]) -> list[str]:
    """Ids only, deduplicated in order: a receipt must never carry text."""
    out = list(dict.fromkeys(values))
    if not all(isinstance(v, str) and _ID.match(v) for v in out):
        raise ValueError("a receipt holds memory and turn ids only")
    return out


def payload_of(
    report: OpReport | ForgetReport, handle: str | None, events: Sequence[AuditEvent]
) -> dict[str, Any] | None:
    """The receipt's payload for a finished hard forget: built from ids,
    counts and the audit events the operation recorded (the last one is
    the chain's head right after it), nothing else. None when the operation
    recorded no event (nothing was there to forget)."""
    if not events:
        return None
    last = events[-1]
    if isinstance(report, ForgetReport):
        op, removed, rewritten = "forget", report.removed, report.rewritten
        turns = report.turns_removed
    elif report.op == "add":
        done = report.requests
        removed = [i for r in done for i in r.removed]
        rewritten = [i for r in done for i in r.rewritten]
        op, turns = "add", sum(r.turns_removed for r in done)
    else:
        op, removed, rewritten, turns = report.op, report.ids, [], report.turns_removed
    if op not in _OPS:
        raise ValueError("not a hard forget")
    # the random handles the events were recorded under (expire spans tenants)
    tenants = sorted({e.handle for e in events}) if handle is None else [handle]
    removed, rewritten = _ids(removed), _ids(rewritten)
    return {
        "v": VERSION,
        "op": op,
        "removed": removed,
        "rewritten": rewritten,
        "counts": {"memories": len(removed), "rewritten": len(rewritten), "turns": int(turns)},
        "tenants": tenants,
        "at": round(time.time(), 6),
        "head": {"seq": last.seq, "hash": last.hash},
    }


@dataclass
class Signer:
    """Signs receipt payloads with one Ed25519 key."""

    key: Ed25519PrivateKey

    @property
    def key_id(self) -> str:
        """The SHA-256 of the raw public key, hex."""
        return key_id(self.key.public_key())

    def public_pem(self) -> str:
        """The public key as PEM."""
        return public_pem(self.key.public_key())

    def sign(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The receipt: the payload (with the key id inside, so it is
        signed too), the signature and the public key, both base64."""
        body = {**payload, "key_id": self.key_id}
        return {
            "alg": ALG,
            "payload": body,
            "signature": base64.b64encode(self.key.sign(canonical(body))).decode("ascii"),
            "public_key": base64.b64encode(_raw(self.key.public_key())).decode("ascii"),
        }


@dataclass(frozen=True)
class Verdict:
    """Whether a receipt is valid, and if not a one-line ``reason``."""

    ok: bool
    reason: str


def verify(receipt: Any, public: Ed25519PublicKey) -> Verdict:
    """Check a receipt's signature against the public key the verifier
    trusts (never the one the receipt carries, which anyone could swap)."""
    if not isinstance(receipt, dict) or not isinstance(receipt.get("payload"), dict):
        return Verdict(False, "malformed receipt: no payload")
    if receipt.get("alg") != ALG:
        return Verdict(False, "unsupported signature algorithm")
    payload = receipt["payload"]
    if payload.get("v") != VERSION:
        return Verdict(False, "unsupported receipt version")
    if payload.get("key_id") != key_id(public):
        return Verdict(False, "signed by another key (key id does not match)")
    try:
        signature = base64.b64decode(str(receipt.get("signature", "")), validate=True)
    except ValueError:
        return Verdict(False, "malformed receipt: the signature is not base64")
    try:
        public.verify(signature, canonical(payload))
    except InvalidSignature:
        return Verdict(False, "bad signature: the receipt was altered or signed by another key")
    head = payload.get("head")
    if not (
        isinstance(head, dict)
        and isinstance(head.get("seq"), int)
        and isinstance(head.get("hash"), str)
    ):
        return Verdict(False, "malformed receipt: no audit head")
    return Verdict(True, "valid signature")

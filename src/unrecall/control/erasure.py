"""Forensic proof of physical erasure: scan the raw bytes of every file.

The report names files and counts per probe index, never the probe itself,
so running a verification does not re-leak what was forgotten. Plaintext is
not the only way back to a value: a probe also counts as found when every
keyed digest the full-text index would hold of it is still in a file, as hex
text or as raw bytes (the key sits in the same file, so such digests of a
4-digit PIN are the PIN).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unrecall.errors import InvalidInput


@dataclass(frozen=True)
class ErasureReport:
    """``clean`` is true when no probe was found in any scanned file.

    ``found`` maps a probe's position in the input list to the files (and
    hit counts) that still contain it; ``via`` says how it was found
    (``plaintext``, ``digest``).
    """

    clean: bool
    files: list[str]
    probes: int
    found: dict[int, dict[str, int]] = field(default_factory=dict)
    via: dict[int, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (probe positions become string keys)."""
        return {
            "clean": self.clean,
            "files": self.files,
            "probes": self.probes,
            "found": {str(k): v for k, v in self.found.items()},
            "via": {str(k): v for k, v in self.via.items()},
        }


def _encodings(probe: str) -> set[bytes]:
    forms = {probe, unicodedata.normalize("NFC", probe), unicodedata.normalize("NFKC", probe)}
    forms |= {f.casefold() for f in forms}
    out: set[bytes] = set()
    for form in forms:
        out.add(form.encode("utf-8"))
        out.add(form.encode("utf-16-le"))  # SQLite may store text as UTF-16
    return out


def _digest_forms(digest: str) -> set[bytes]:
    return {digest.encode(), digest.encode("utf-16-le"), bytes.fromhex(digest)}


def scan_files(
    files: Sequence[Path],
    probes: Sequence[str],
    min_len: int = 4,
    digests: Callable[[str], list[str]] | None = None,
) -> ErasureReport:
    """Count raw occurrences of each probe (and its case/Unicode forms) and,
    with ``digests`` (a probe's hex digests), of its full set of digests."""
    for i, probe in enumerate(probes):
        if not isinstance(probe, str) or len(probe) < min_len:
            raise InvalidInput(
                f"probe #{i} must be a string of at least {min_len} characters"
                " (shorter ones match by chance)"
            )
    blobs = {str(p): p.read_bytes() for p in files if p.exists()}
    found: dict[int, dict[str, int]] = {}
    via: dict[int, list[str]] = {}
    for i, probe in enumerate(probes):
        for name, blob in blobs.items():
            hits = sum(blob.count(enc) for enc in _encodings(probe))
            if hits:
                found.setdefault(i, {})[name] = hits
                via.setdefault(i, ["plaintext"])
        wanted = digests(probe) if digests is not None else []
        where: dict[str, int] = {}
        for digest in wanted:
            counts = {
                name: sum(blob.count(form) for form in _digest_forms(digest))
                for name, blob in blobs.items()
            }
            if not any(counts.values()):
                break  # one digest gone: the probe cannot be rebuilt from them
            for name, n in counts.items():
                if n:
                    where[name] = where.get(name, 0) + n
        else:
            if wanted:
                hits_by_file = found.setdefault(i, {})
                for name, n in where.items():
                    hits_by_file[name] = hits_by_file.get(name, 0) + n
                via.setdefault(i, []).append("digest")
    return ErasureReport(not found, sorted(blobs), len(probes), found, via)

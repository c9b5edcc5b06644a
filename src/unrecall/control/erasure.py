"""Forensic proof of physical erasure: scan the raw bytes of every file.

The report names files and counts per probe index, never the probe itself,
so running a verification does not re-leak what was forgotten.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unrecall.errors import InvalidInput


@dataclass(frozen=True)
class ErasureReport:
    """``clean`` is true when no probe was found in any scanned file.

    ``found`` maps a probe's position in the input list to the files (and
    hit counts) that still contain it.
    """

    clean: bool
    files: list[str]
    probes: int
    found: dict[int, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (probe positions become string keys)."""
        return {
            "clean": self.clean,
            "files": self.files,
            "probes": self.probes,
            "found": {str(k): v for k, v in self.found.items()},
        }


def _encodings(probe: str) -> set[bytes]:
    forms = {probe, unicodedata.normalize("NFC", probe), unicodedata.normalize("NFKC", probe)}
    forms |= {f.casefold() for f in forms}
    out: set[bytes] = set()
    for form in forms:
        out.add(form.encode("utf-8"))
        out.add(form.encode("utf-16-le"))  # SQLite may store text as UTF-16
    return out


def scan_files(files: Sequence[Path], probes: Sequence[str], min_len: int = 4) -> ErasureReport:
    """Count raw occurrences of each probe (and its case/Unicode forms)."""
    for i, probe in enumerate(probes):
        if not isinstance(probe, str) or len(probe) < min_len:
            raise InvalidInput(
                f"probe #{i} must be a string of at least {min_len} characters"
                " (shorter ones match by chance)"
            )
    blobs = {str(p): p.read_bytes() for p in files if p.exists()}
    found: dict[int, dict[str, int]] = {}
    for i, probe in enumerate(probes):
        for name, blob in blobs.items():
            hits = sum(blob.count(enc) for enc in _encodings(probe))
            if hits:
                found.setdefault(i, {})[name] = hits
    return ErasureReport(not found, sorted(blobs), len(probes), found)

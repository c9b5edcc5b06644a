"""Forensic proof of physical erasure: scan the raw bytes of every file.

The report names files and counts per probe index, never the probe itself,
so running a verification does not re-leak what was forgotten. Plaintext is
not the only way back to a value: a probe also counts as found when every
keyed digest the full-text index would hold of it is still in a file, as hex
text or as raw bytes (the key sits in the same file, so such digests of a
4-digit PIN are the PIN).
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unrecall.errors import InvalidInput, StoreError


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


CHUNK = 1 << 24  # bytes read at a time: memory stays bounded at any file size


def _counts(files: Sequence[Path], needles: set[bytes]) -> dict[str, Counter[bytes]]:
    """Occurrences of every needle in each file, counted by ``raw_scan`` in
    a child process: a descriptor this process opened and closed on a store
    file would drop SQLite's locks on it (see that module). The needles go
    through a pipe, never onto a command line or into a file."""
    order = sorted(needles)
    request = {
        "files": [str(p) for p in files],
        "needles": [n.hex() for n in order],
        "chunk": CHUNK,
    }
    done = subprocess.run(
        [sys.executable, "-P", str(Path(__file__).with_name("raw_scan.py"))],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:  # its stderr is not repeated: it may quote a file's bytes
        raise StoreError(f"the raw scan of the store's files failed (exit {done.returncode})")
    return {
        name: Counter({order[int(i)]: n for i, n in seen.items()})
        for name, seen in json.loads(done.stdout).items()
    }


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
    plain = [_encodings(probe) for probe in probes]
    hashed = [
        [_digest_forms(d) for d in (digests(probe) if digests is not None else [])]
        for probe in probes
    ]
    needles = set().union(*plain, *(f for forms in hashed for f in forms))
    counts = _counts(files, needles) if needles else {}
    found: dict[int, dict[str, int]] = {}
    via: dict[int, list[str]] = {}
    for i in range(len(probes)):
        for name, seen in counts.items():
            hits = sum(seen[enc] for enc in plain[i])
            if hits:
                found.setdefault(i, {})[name] = hits
                via.setdefault(i, ["plaintext"])
        # every digest of the probe must survive for it to be rebuilt from them
        per_digest = [
            {n: sum(seen[f] for f in forms) for n, seen in counts.items()} for forms in hashed[i]
        ]
        if per_digest and all(any(d.values()) for d in per_digest):
            hits_by_file = found.setdefault(i, {})
            for d in per_digest:
                for name, n in d.items():
                    if n:
                        hits_by_file[name] = hits_by_file.get(name, 0) + n
            via.setdefault(i, []).append("digest")
    return ErasureReport(not found, sorted(counts), len(probes), found, via)

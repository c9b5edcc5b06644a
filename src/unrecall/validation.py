"""Input checks at the API boundary. Errors name the field and the position
or size at fault, never the offending text itself."""

from __future__ import annotations

import json
import math
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from unrecall.errors import InvalidInput

MAX_ID_CHARS = 256
# Metadata (and search filters) nest at most this deep: dicts and lists
# inside dicts. Deeper structures are refused before anything walks them
# recursively (JSON encoding would raise RecursionError).
MAX_METADATA_DEPTH = 32
# Times are epoch seconds between these two instants (UTC): the span the
# calendar arithmetic of time windows can work in ("last week", "in March")
# with a year to spare at each end of what ``datetime`` represents.
MIN_TIME = datetime(2, 1, 1, tzinfo=UTC).timestamp()
MAX_TIME = datetime(9999, 1, 1, tzinfo=UTC).timestamp()
_TIME_RANGE = "between the years 2 and 9999 (UTC)"
# Store locations that name a server rather than a file: refused with a
# clear word until such a backend exists.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
POSTGRES_SCHEMES = ("postgres", "postgresql")
_BACKENDS = {
    "mysql": "MySQL",
    "mariadb": "MariaDB",
    "redis": "Redis",
    "mongodb": "MongoDB",
}
_PUBLIC_ID = re.compile(r"^[mt]_[0-9a-f]{20}$")


def show_id(value: Any) -> str:
    """How an error message may name an id: as itself when it is shaped like
    a public id, otherwise generically, so a message never echoes caller text."""
    return value if isinstance(value, str) and _PUBLIC_ID.match(value) else "with that id"


def check_text(text: Any, field: str, max_chars: int) -> str:
    """A non-empty, encodable string no longer than ``max_chars``."""
    if not isinstance(text, str):
        raise InvalidInput(f"{field} must be a string, not {type(text).__name__}")
    if not text.strip():
        raise InvalidInput(f"{field} is empty")
    if len(text) > max_chars:
        raise InvalidInput(f"{field} has {len(text)} characters; the limit is {max_chars}")
    return _encodable(text, field)


def _encodable(text: str, field: str) -> str:
    """``text`` without NUL characters and lone surrogates (SQLite and UTF-8
    hold neither); errors give the position only."""
    if "\x00" in text:
        raise InvalidInput(f"{field} contains a NUL character at position {text.index(chr(0))}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{field} contains a lone surrogate at position {exc.start}; it is not valid Unicode"
        ) from None
    return text


def check_id(value: Any, field: str) -> str:
    """A scope id: a short printable string."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be a non-empty string")
    if len(value) > MAX_ID_CHARS or not value.isprintable():
        raise InvalidInput(f"{field} must be printable and at most {MAX_ID_CHARS} characters")
    check_text(value, field, MAX_ID_CHARS)
    return value


def _depth_at_most(value: Any, limit: int) -> bool:
    """True when dicts and lists nest no deeper than ``limit`` in ``value``
    (walked with a stack, so a deep or cyclic structure cannot recurse)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        if depth > limit:
            return False
        stack.extend((c, depth + 1) for c in children)
    return True


def check_metadata(metadata: Any, field: str = "metadata") -> dict[str, Any]:
    """A JSON-serialisable dict with string keys, nested at most
    ``MAX_METADATA_DEPTH`` levels deep."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise InvalidInput(f"{field} must be a dict with string keys")
    if not _depth_at_most(metadata, MAX_METADATA_DEPTH):
        raise InvalidInput(f"{field} is nested deeper than {MAX_METADATA_DEPTH} levels")
    try:
        json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"{field} is not JSON-serialisable: {type(exc).__name__}") from None
    return dict(metadata)


def check_time(value: Any, field: str) -> float | None:
    """Seconds since the epoch from a number, a datetime or an ISO-8601
    string, between ``MIN_TIME`` and ``MAX_TIME``; None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{field} is not an ISO-8601 time") from None
    if isinstance(value, datetime):
        try:
            value = value.timestamp()
        except (OverflowError, ValueError, OSError):  # a naive time at the calendar's edge
            value = math.inf
    elif not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidInput(f"{field} must be epoch seconds, a datetime or an ISO-8601 string")
    if isinstance(value, float) and math.isnan(value):
        raise InvalidInput(f"{field} is not a number (NaN)")
    if not MIN_TIME <= value <= MAX_TIME:  # compared exactly: no float() of a huge int
        raise InvalidInput(f"{field} must be a time {_TIME_RANGE}")
    return float(value)


def check_ttl(ttl: Any, now: float) -> float:
    """The expiry ``ttl`` seconds after ``now``: a positive number of seconds
    that ends within the time range."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise InvalidInput("ttl must be a positive number of seconds")  # NaN is not > 0
    if ttl > MAX_TIME - now:  # also inf; compared exactly, so no float() of a huge int
        raise InvalidInput(f"ttl must end {_TIME_RANGE}")
    return now + float(ttl)


def check_bool(value: Any, field: str) -> bool:
    """A real ``bool``: ``"no"`` or ``0`` are refused, not taken as truthy."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{field} must be True or False, not {type(value).__name__}")
    return value


def check_positive_int(value: Any, field: str) -> int:
    """An ``int`` of at least 1 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{field} must be a positive integer")
    return value


def check_count(value: Any, field: str) -> int:
    """An ``int`` of at least 0 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{field} must be a whole number of at least 0")
    return value


def check_memory_id(value: Any, field: str = "memory_id") -> str:
    """A memory or turn id: a string that can be looked up (an unknown one is
    then ``NotFound``); other types and unencodable strings are refused."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, not {type(value).__name__}")
    return _encodable(value, field)


def check_probes(strings: Any) -> list[str]:
    """What ``verify_erased`` looks for: a list (or tuple) of strings; each
    must be encodable (``scan_files`` checks their type and length)."""
    if isinstance(strings, str):
        raise InvalidInput("give a list of strings, not one string")
    if not isinstance(strings, list | tuple):
        raise InvalidInput(f"strings must be a list of strings, not {type(strings).__name__}")
    for i, probe in enumerate(strings):
        if isinstance(probe, str):
            try:
                probe.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InvalidInput(
                    f"probe #{i} contains a lone surrogate at position {exc.start}"
                ) from None
    return list(strings)


def is_postgres_url(where: Any) -> bool:
    """Whether ``where`` is text naming a PostgreSQL database (a URL of
    scheme ``postgresql://`` or ``postgres://``), to be kept as text: a
    ``Path`` would fold its ``//`` and make it a file name."""
    if not isinstance(where, str):
        return False
    url = _URL.match(where)
    return bool(url) and where[: url.end() - 3].casefold() in POSTGRES_SCHEMES  # type: ignore[union-attr]


def check_store(where: Any) -> Path | str:
    """Where a store lives: a ``postgresql://`` (or ``postgres://``) URL,
    returned as given, or a local file path (``check_path``). Messages never
    repeat the URL (it may hold a password)."""
    if is_postgres_url(where):
        return _encodable(where, "url")
    return check_path(where)


def check_path(path: Any) -> Path:
    """Where a store lives: a local file path (``str`` or path-like).

    Refused: an empty path, ``:memory:`` (erasure must be provable on disk),
    a URL of another scheme than PostgreSQL's (no such backend), a NUL or a
    lone surrogate, a directory and anything else that is not a regular file
    (``/dev/null``). Messages never repeat the path (it may name a person).
    """
    if isinstance(path, bytes | bytearray):
        raise InvalidInput("path must be a text path, not bytes")
    if not isinstance(path, str | os.PathLike):
        kind = type(path).__name__
        raise InvalidInput(f"path must be a string or a path-like object, not {kind}")
    try:
        raw = os.fspath(path)
    except TypeError:  # a PathLike whose __fspath__ returns something else
        raise InvalidInput("path must be a string or a path-like object") from None
    if not isinstance(raw, str):
        raise InvalidInput("path must be a text path, not bytes")
    if not raw.strip():
        raise InvalidInput("path is empty; give a file path (or None for the default store)")
    if raw == ":memory:":
        raise InvalidInput(
            "an in-memory store is refused: erasure must be provable on disk; give a file path"
        )
    url = _URL.match(raw)
    if url:
        name = _BACKENDS.get(raw[: url.end() - 3].casefold())
        raise InvalidInput(
            f"path is a URL: a {name} backend is not available yet; give a local file path"
            if name
            else "path is a URL: only SQLite files and PostgreSQL URLs are supported"
        )
    out = Path(_encodable(raw, "path"))
    try:
        is_dir, odd = out.is_dir(), out.exists() and not out.is_file()
    except OSError:  # a name too long, say: opening it fails with a StoreError
        is_dir = odd = False
    if is_dir:
        raise InvalidInput("path is a directory; give the path of a store file")
    if odd:
        raise InvalidInput("path is not a regular file (a device or a pipe?); give a store file")
    return out


def check_k(k: Any) -> int:
    """A result count between 1 and 1000."""
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 1000:
        raise InvalidInput("k must be an integer between 1 and 1000")
    return k


def check_threshold(value: Any) -> float | str | None:
    """A similarity threshold: None, ``"auto"``, or a number between -1 and 1."""
    if value is None or value == "auto":
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise InvalidInput("threshold must be a number between -1 and 1, 'auto' or None")
    return float(value)

"""Input checks at the API boundary. Errors name the field and the position
or size at fault, never the offending text itself."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any

from unrecall.errors import InvalidInput

MAX_ID_CHARS = 256
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


def check_metadata(metadata: Any) -> dict[str, Any]:
    """A JSON-serialisable dict with string keys."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise InvalidInput("metadata must be a dict with string keys")
    try:
        json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata is not JSON-serialisable: {type(exc).__name__}") from None
    return dict(metadata)


def check_time(value: Any, field: str) -> float | None:
    """Seconds since the epoch from a number, a datetime or an ISO-8601 string."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            raise InvalidInput(f"{field} is not an ISO-8601 time") from None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    raise InvalidInput(f"{field} must be epoch seconds, a datetime or an ISO-8601 string")


def check_k(k: Any) -> int:
    """A result count between 1 and 1000."""
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 1000:
        raise InvalidInput("k must be an integer between 1 and 1000")
    return k

"""The ForgetEval case schema (Yang 2026, section 3.1) and its JSON files.

A case is one self-contained scenario: inscribe ``setup_facts`` in order,
apply ``mutations`` in order, then recall for ``final_query``. It passes when
every ``must_contain`` string is in the recalled texts and no
``must_not_contain`` string is (see ``forgeteval_harness`` for the exact
rule). Template cases and hand-written adversarial cases share this schema,
so ``unrecall bench forgeteval --cases FILE`` runs any file written in it.

A case file is a JSON list of case objects, or an object whose ``"cases"``
key holds that list (other top-level keys, such as a description, are
ignored). Keys of a case that start with ``_`` are comments and ignored,
as is the published files' ``provenance`` (who wrote the case); any other
unknown key is an error, so a misspelt field never passes silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

FAMILIES = ("supersession", "decay", "amnesia", "purge", "drift")
CATEGORIES = (
    "substring_trap",
    "prefix_collision",
    "paraphrase_supersession",
    "negation_trap",
    "temporal_qualifier",
    "shared_attribute",
    "compound_fact",
    "identifier_obfuscation",
    "cross_lingual_identifier",
    "recursive_supersession",
)
OPS = ("supersede", "release", "purge")
FIELDS = (
    "id",
    "category",
    "family",
    "setup_facts",
    "mutations",
    "final_query",
    "must_contain",
    "must_not_contain",
)
# Keys a published case may carry that do not change how it is run or scored.
IGNORED_FIELDS = ("provenance",)
ADVERSARIAL_FILE = "forgeteval_adversarial.json"
_MAX_ERRORS = 25


class CaseFileError(ValueError):
    """A case file that does not follow the schema; the message lists every
    problem found (up to a limit), each with the case index, id and field."""


@dataclass
class Case:
    """One ForgetEval case.

    ``mutations`` holds ``[op, query]`` or ``[op, query, new_text]`` lists:
    ``supersede`` takes the new text, ``release`` and ``purge`` do not.
    """

    id: str
    category: str
    family: str
    setup_facts: list[str]
    mutations: list[list[str]] = field(default_factory=list)
    final_query: str = ""
    must_contain: list[str] = field(default_factory=list)
    must_not_contain: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The case as a JSON-ready dict with the schema's field order."""
        return asdict(self)


def _str_list(value: Any, name: str, errors: list[str], *, allow_empty: bool) -> list[str]:
    if not isinstance(value, list):
        errors.append(f"{name} must be a list of strings")
        return []
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            errors.append(f"{name}[{i}] must be a non-empty string")
        else:
            out.append(item)
    if not value and not allow_empty:
        errors.append(f"{name} must not be empty")
    return out


def _mutations(value: Any, errors: list[str]) -> list[list[str]]:
    if not isinstance(value, list):
        errors.append("mutations must be a list of [op, query, new_text?] lists")
        return []
    out: list[list[str]] = []
    for i, m in enumerate(value):
        where = f"mutations[{i}]"
        if not isinstance(m, list) or not 2 <= len(m) <= 3:
            errors.append(f"{where} must be a list [op, query] or [op, query, new_text]")
            continue
        op, query = m[0], m[1]
        # A null third element on release/purge is tolerated: it says "no new text".
        new = m[2] if len(m) == 3 else None
        if op not in OPS:
            errors.append(f"{where}: op {op!r} is not one of {', '.join(OPS)}")
            continue
        if not isinstance(query, str) or not query.strip():
            errors.append(f"{where}: query must be a non-empty string")
            continue
        if op == "supersede":
            if not isinstance(new, str) or not new.strip():
                errors.append(f"{where}: supersede needs a non-empty new_text as third element")
                continue
            out.append([op, query, new])
        else:
            if new is not None:
                errors.append(f"{where}: {op} takes no new_text (give [op, query])")
                continue
            out.append([op, query])
    return out


def validate_case(obj: Any) -> tuple[Case | None, list[str]]:
    """Check one case object; returns the ``Case`` (or None) and its problems.

    Besides types, it refuses a case with nothing to score. A
    ``must_contain`` that is a substring of a ``must_not_contain`` (or the
    reverse) is legal, as published: another memory can hold the shorter
    string ("married to Jamie" stays while "... and works at Google" goes).
    """
    errors: list[str] = []
    if not isinstance(obj, dict):
        return None, ["a case must be a JSON object"]
    missing = [f for f in FIELDS if f not in obj]
    if missing:
        errors.append(f"missing field(s): {', '.join(missing)}")
    unknown = sorted(
        k for k in obj if k not in FIELDS + IGNORED_FIELDS and not str(k).startswith("_")
    )
    if unknown:
        errors.append(f"unknown field(s): {', '.join(unknown)} (prefix comments with '_')")
    if missing:
        return None, errors
    for name in ("id", "category", "family", "final_query"):
        if not isinstance(obj[name], str) or not obj[name].strip():
            errors.append(f"{name} must be a non-empty string")
    if isinstance(obj["family"], str) and obj["family"] not in FAMILIES:
        errors.append(f"family {obj['family']!r} is not one of {', '.join(FAMILIES)}")
    setup = _str_list(obj["setup_facts"], "setup_facts", errors, allow_empty=False)
    muts = _mutations(obj["mutations"], errors)
    must = _str_list(obj["must_contain"], "must_contain", errors, allow_empty=True)
    must_not = _str_list(obj["must_not_contain"], "must_not_contain", errors, allow_empty=True)
    if obj["must_contain"] == [] and obj["must_not_contain"] == []:
        errors.append("must_contain and must_not_contain are both empty: nothing to score")
    if errors:
        return None, errors
    case = Case(
        id=obj["id"],
        category=obj["category"],
        family=obj["family"],
        setup_facts=setup,
        mutations=muts,
        final_query=obj["final_query"],
        must_contain=must,
        must_not_contain=must_not,
    )
    return case, []


def parse_cases(data: Any, source: str = "<data>") -> list[Case]:
    """Validate decoded JSON (a list, or ``{"cases": [...]}``) into cases.

    Raises ``CaseFileError`` naming every problem (case index, id, field),
    including duplicate ids, so a file can be fixed in one pass.
    """
    if isinstance(data, dict):
        if "cases" not in data:
            raise CaseFileError(f"{source}: expected a list of cases or an object with 'cases'")
        data = data["cases"]
    if not isinstance(data, list):
        raise CaseFileError(f"{source}: 'cases' must be a list")
    if not data:
        raise CaseFileError(f"{source}: the file holds no cases")
    problems: list[str] = []
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for i, obj in enumerate(data):
        cid = obj.get("id") if isinstance(obj, dict) else None
        label = f"case #{i}" + (f" (id {cid!r})" if isinstance(cid, str) else "")
        case, errors = validate_case(obj)
        problems += [f"{label}: {e}" for e in errors]
        if case is None:
            continue
        if case.id in seen:
            problems.append(f"{label}: duplicate id (first used by case #{seen[case.id]})")
            continue
        seen[case.id] = i
        cases.append(case)
    if problems:
        shown = problems[:_MAX_ERRORS]
        more = len(problems) - len(shown)
        tail = f"\n  ... and {more} more" if more else ""
        raise CaseFileError(
            f"{source}: {len(problems)} problem(s) in the case file:\n  "
            + "\n  ".join(shown)
            + tail
        )
    return cases


def load_cases(path: str | Path) -> list[Case]:
    """Read and validate a case file; ``CaseFileError`` on any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise CaseFileError(f"{p}: cannot read the case file ({exc.strerror})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseFileError(
            f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    return parse_cases(data, str(p))


def dump_cases(cases: Iterable[Case], path: str | Path) -> None:
    """Write cases as a JSON list (one case per line, for readable diffs)."""
    lines = [json.dumps(c.to_dict(), ensure_ascii=False) for c in cases]
    Path(path).write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")


def adversarial_path() -> Path:
    """Where the packaged hand-written adversarial suite lives (it may not
    exist yet in a development checkout)."""
    return Path(str(resources.files("unrecall.bench") / "data" / ADVERSARIAL_FILE))

"""Optional interpreter: the agent's own LLM reads a request (off by default).

A deployment with a chat model behind an OpenAI-compatible endpoint may let
it read what a request describes:

    mem = Memory("store.db", interpreter=Interpreter("http://127.0.0.1:8080/v1", "my-model"))

For a turn the learned reader took for a request (and the rules did not
parse), the model gets the turn and a bounded list of candidate memories
(the resolve stage's best, numbered) and answers JSON: whether the turn
asks to forget or replace something, the kind, the numbers of the
memories that hold it, and the new value. The deterministic plane checks
the answer before anything happens: numbers must be among the candidates,
at most ``budget`` of them. A timeout, an error, bad JSON or an unknown
number decides nothing: the default reader's resolution runs, and the
report says which reader decided (``ForgetReport.reader``).

The candidates' texts go to that endpoint, so it must be one the data may
go to. Nothing is sent when no interpreter is configured.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from unrecall.control.llm_rerank import complete
from unrecall.dialogue.requests import KINDS
from unrecall.errors import RerankError
from unrecall.storage.base import MemoryRow

CANDIDATES = 12  # memories shown to the model
BUDGET = 8  # most memories one interpreted request may take

_PROMPT = """You manage the long-term memory of a chat assistant. The user just said the \
message below. Decide whether it asks the assistant to forget, delete, correct or replace \
something it remembers, and if so which of the numbered memories hold it.

Kinds: factual (one fact or value), compositional (several items), category (a whole topic), \
inferential (a conclusion the assistant drew), temporal (what was said at some time), \
replacement (an old value replaced by a new one).

Message: {text}

Memories:
{memories}

Answer with only one JSON object, no other text:
{{"request": true or false, "kind": "<kind>", "targets": [<numbers of the memories to \
forget; for a replacement, the old value>], "new_value": "<the new value>" or null}}"""


@dataclass(frozen=True)
class Interpretation:
    """A validated answer: the kind, the memories it names and the new value."""

    request: bool
    kind: str | None
    targets: tuple[MemoryRow, ...]
    new_value: str | None


@dataclass(frozen=True)
class Interpreter:
    """An OpenAI-compatible chat endpoint (``base_url`` ends in ``/v1``)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 30.0
    candidates: int = CANDIDATES
    budget: int = BUDGET

    def interpret(self, text: str, rows: list[MemoryRow]) -> Interpretation | None:
        """The model's reading of ``text`` over ``rows`` (best first; the
        first ``candidates`` are shown), or None when it failed or answered
        something the plane cannot check."""
        shown = rows[: self.candidates]
        prompt = _PROMPT.format(
            text=text,
            memories="\n".join(f"{i}. {r.text}" for i, r in enumerate(shown, 1)) or "(none)",
        )
        try:
            answer = complete(self.base_url, self.model, prompt, api_key=self.api_key,
                              timeout=self.timeout, what="interpreter")  # fmt: skip
        except RerankError:
            return None
        return validate(answer, shown, self.budget)


def validate(answer: str, shown: list[MemoryRow], budget: int) -> Interpretation | None:
    """The interpretation in a model's ``answer`` if it holds (one JSON
    object, a known kind, target numbers among ``shown``, at most
    ``budget``), else None."""
    found = re.search(r"\{.*\}", answer, re.DOTALL)
    try:
        raw = json.loads(found.group(0)) if found else None
    except ValueError:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("request"), bool):
        return None
    if not raw["request"]:
        return Interpretation(False, None, (), None)
    kind, targets, new = raw.get("kind"), raw.get("targets"), raw.get("new_value")
    if kind not in KINDS or not isinstance(targets, list) or len(targets) > budget:
        return None
    if not all(isinstance(t, int) and not isinstance(t, bool) and 1 <= t <= len(shown)
               for t in targets):  # fmt: skip
        return None
    if new is not None and not isinstance(new, str):
        return None
    rows = tuple({shown[t - 1].id: shown[t - 1] for t in targets}.values())
    return Interpretation(True, kind, rows, new)

"""Execute stage: carry a plan out on the deterministic control plane.

The pipeline's one entry, ``RequestPipeline.handle``, runs a request that
the read stage found through resolve, plan and execute, and returns the
report (ids and counts, never content; ``reader`` and ``strategy`` say who
read it and how it was done). Deleting, closure, erasure and the audit
event are the control plane's (``control.forget_requests``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from unrecall.control.forget_requests import RequestExecutor
from unrecall.control.operations import Tenant
from unrecall.control.trails import TrailForgetter
from unrecall.pipeline import resolve as resolve_stage
from unrecall.pipeline.interpret import Interpreter
from unrecall.pipeline.plan import Plan, plan
from unrecall.pipeline.read import Reading, exact
from unrecall.pipeline.resolve import Resolution, Target
from unrecall.recall.identifiers import extract
from unrecall.records import ForgetReport
from unrecall.storage.base import TurnRow


class RequestPipeline:
    """read -> resolve -> plan -> execute -> report, over one store;
    ``interpreter`` (off by default) is the agent's LLM as a second reader."""

    def __init__(
        self,
        executor: RequestExecutor,
        trails: TrailForgetter,
        interpreter: Interpreter | None = None,
    ) -> None:
        self.executor = executor
        self.trails = trails
        self.storage = executor.storage
        self.recall = executor.recall
        self.interpreter = interpreter

    def resolve(
        self, tenant: Tenant, reading: Reading, text: str, session: str | None, at: float,
        reference: TurnRow | None,
    ) -> tuple[Reading | None, Resolution, str]:  # fmt: skip
        """What the request describes, with the reading it rests on and who
        read it: what the rules' span names, when it names something stored;
        else the previous turn it points back to; else the interpreter's
        answer, when one is configured and its answer checks out (it may
        also find the turn is no request: None); else the resolve stage's
        model over every candidate."""
        if reading.parse is not None:
            named = self.executor.finds(tenant, reading.parse, text, session, at)
            if named is None and (
                reading.parse.kind == "replacement" or exact(reading.parse, text)
            ):
                # a replacement's new value is stored and the old one it
                # rejects never is; a named value is never stored either
                named = []
            if named is not None:  # the literal path cuts these itself
                return reading, Resolution(tuple(Target(r, 1.0, "rules") for r in named)), "learned"
            # the rules' span names nothing stored: it was a description
            reading = replace(reading, parse=None)
        if reference is not None:
            rows = self.storage.memories_by_id(self.storage.derived([reference.id]))
            return (
                reading,
                Resolution(tuple(Target(r, 1.0, "previous turn") for r in rows)),
                "learned",
            )
        rows, x = resolve_stage.candidates(
            self.storage, self.recall, tenant, text, session, at, reading.kind
        )
        model = resolve_stage.load()
        if self.interpreter is not None:
            p = model.probabilities(x)
            best = [rows[i] for i in np.argsort(-p, kind="stable")]
            said = self.interpreter.interpret(text, best)
            if said is not None and not said.request:
                return None, Resolution(()), "interpreter"
            if said is not None:
                kind = said.kind or reading.kind
                found = Resolution(tuple(Target(r, 1.0, "interpreter") for r in said.targets))
                return replace(reading, kind=kind), found, "interpreter"
        found = model.resolve(rows, x)
        if reading.kind == "replacement":
            # one value replaced: the best match, if it holds a value of the
            # same kind (a phone number for a phone number)
            found = _same_kind(text, found)
        return reading, found, "learned"

    def handle(
        self,
        tenant: Tenant,
        reading: Reading,
        text: str,
        *,
        session_id: str | None,
        at: float,
        metadata: dict[str, Any],
        reference: TurnRow | None = None,
    ) -> ForgetReport | None:
        """Run one request that ``reading`` found in ``text`` (a user turn);
        None when it is no request after all (the interpreter said so, or
        its description matches nothing stored): the caller stores the turn
        as a statement."""
        confirmed, found, reader = self.resolve(tenant, reading, text, session_id, at, reference)
        if confirmed is None:
            return None
        if not found.targets and reading.parse is None:
            # only the detector read a request, and its description matches
            # nothing stored (a new value with no old one, or a false
            # alarm): nothing to forget, kept as said
            return None
        chosen = plan(confirmed, found)
        report = self._execute(tenant, chosen, text, session_id, at, metadata, reference)
        return replace(report, strategy=chosen.strategy, reader=reader)

    def forget(self, tenant: Tenant, text: str, budget: int) -> ForgetReport:
        """``Memory.forget``: the caller says ``text`` is a request, for a
        fact that may be pieced together from other memories: a trail cut."""
        return replace(self.trails.forget(tenant, text, budget), strategy="trail", reader="caller")

    def _execute(
        self, tenant: Tenant, chosen: Plan, text: str, session_id: str | None, at: float,
        metadata: dict[str, Any], reference: TurnRow | None,
    ) -> ForgetReport:  # fmt: skip
        reading = chosen.reading
        if chosen.strategy == "literal":
            assert reading.parse is not None
            return self.executor.execute(tenant, reading.parse, text, session_id=session_id,
                                         at=at, metadata=metadata, reference=reference)  # fmt: skip
        rows = [t.row for t in chosen.resolution.targets]
        return self.executor.execute_rows(
            tenant,
            rows,
            text,
            kind=reading.kind or "factual",
            language=reading.language,
            match=chosen.resolution.how,
            session_id=session_id,
            at=at,
            metadata=metadata,
            keep_turn=chosen.strategy == "replacement",
            values=chosen.resolution.values,
            new_value=chosen.resolution.new_value,
        )


def _same_kind(text: str, found: Resolution) -> Resolution:
    """A replacement's old value: the best match, if it holds a value of a
    kind the turn's new value has (a phone number for a phone number);
    that value is then cut and the new one put in its place."""
    new = {i.kind: text[i.start : i.end] for i in reversed(extract(text))}
    for t in found.targets[:1]:
        old = [i for i in extract(t.row.text) if i.kind in new]
        if old:
            values = tuple(dict.fromkeys(t.row.text[i.start : i.end] for i in old))
            return Resolution((t,), values, new[old[0].kind])
    return Resolution(())

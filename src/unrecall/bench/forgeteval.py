"""ForgetEval Adapter Protocol over unrecall (Yang 2026, section 4).

``reset, inscribe, recall_texts`` are the recall-plane primitives;
``supersede, release, purge`` the control-plane ones.

Every ``reset`` gives the next case an empty, isolated memory. By default
that is a fresh tenant in one temporary store opened for the whole run, as
a memory service serves many users from one file: tenants share nothing
that recall or forgetting can see (design invariant 7, a property test
in ``tests/test_properties.py``). Earlier cases'
tenants stay in that store until ``close`` deletes it, as the peers'
stores are simply dropped. With ``store_per_case=True`` each case gets a
new SQLite file instead (opening one costs about as much as a small case).
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path

from unrecall.memory import Memory
from unrecall.pipeline.interpret import Interpreter
from unrecall.recall.embedder import Embedder

USER = "forgeteval"


class UnrecallAdapter:
    """The six-method adapter the ForgetEval harness drives unchanged."""

    name = "unrecall"

    def __init__(
        self,
        embedder: str | Embedder = "minilm",
        *,
        store_per_case: bool = False,
        interpreter: Interpreter | None = None,
    ) -> None:
        self._embedder = embedder
        self._interpreter = interpreter
        self.store_per_case = store_per_case
        self._dir: Path | None = None
        self._mem: Memory | None = None
        self._cases = itertools.count(1)
        self.user = USER
        self.reset()

    @property
    def memory(self) -> Memory:
        """The store of the current case."""
        assert self._mem is not None, "adapter is closed"
        return self._mem

    def reset(self) -> None:
        """Start the next case on an empty memory."""
        if self.store_per_case or self._mem is None:
            self.close()
            self._dir = Path(tempfile.mkdtemp(prefix="unrecall-forgeteval-"))
            self._mem = Memory(
                self._dir / "case.db", embedder=self._embedder, interpreter=self._interpreter
            )
        self.user = f"{USER}-{next(self._cases)}"

    def inscribe(self, text: str) -> str:
        """Remember one fact; returns its memory id."""
        return self.memory.add(text, user_id=self.user).ids[0]

    def recall_texts(self, q: str, k: int) -> list[str]:
        """Texts of the top-``k`` hybrid hits."""
        return [h.text for h in self.memory.search(q, user_id=self.user, k=k)]

    def supersede(self, old_q: str, new: str) -> None:
        """The new fact wins; what ``old_q`` names leaves recall."""
        self.memory.supersede(old_q, new, user_id=self.user)

    def release(self, q: str) -> int:
        """Soft-forget what ``q`` names; returns how many memories."""
        return self.memory.release(q, user_id=self.user).count

    def purge(self, q: str) -> int:
        """Hard-forget what ``q`` names; returns how many memories."""
        return self.memory.purge(q, user_id=self.user).count

    def close(self) -> None:
        """Close the store and delete its folder."""
        if self._mem is not None:
            self._mem.close()
            self._mem = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

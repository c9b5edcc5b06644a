"""Dialogue-level systems for the conversational forgetting harnesses.

The Memora and unlearning harnesses replay whole chats turn by turn, so they
drive a system through :class:`DialogueSystem`: ``add_turn`` for each user or
assistant message (forget requests arrive as ordinary user turns),
``recall_texts`` for the probes and ``stored_texts`` for the residual check
over everything the store still holds.

unrecall takes each turn through ``Memory.add``, which detects and executes
forget requests itself. The peers (the ForgetEval adapters, on the same local
MiniLM) store every turn as one memory: without an LLM at ingest none of them
has a way to act on a request said in the dialogue, which is exactly the
end-to-end gap the harnesses measure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Protocol

from unrecall.bench.forgeteval import UnrecallAdapter
from unrecall.bench.peers import Adapter, make_adapter, shared_minilm
from unrecall.memory import Memory
from unrecall.pipeline.interpret import Interpreter


class DialogueSystem(Protocol):
    """What a conversational harness needs from a memory system."""

    name: str

    def reset(self) -> None: ...
    def add_turn(self, role: str, text: str, *, session_id: str, timestamp: float) -> None: ...
    def recall_texts(self, q: str, k: int) -> list[str]: ...
    def stored_texts(self) -> list[str]: ...
    def close(self) -> None: ...


class UnrecallDialogue:
    """unrecall over a fresh temporary store per dialogue (the ForgetEval
    adapter's store handling, one SQLite file per ``reset``)."""

    name = "unrecall"

    def __init__(self, interpreter: Interpreter | None = None) -> None:
        self._store = UnrecallAdapter(shared_minilm(), store_per_case=True, interpreter=interpreter)
        self.readers: Counter[str] = Counter()  # who read each request executed

    @property
    def memory(self) -> Memory:
        """The store of the current dialogue."""
        return self._store.memory

    def reset(self) -> None:
        """Drop the current store and open an empty one."""
        self._store.reset()

    def add_turn(self, role: str, text: str, *, session_id: str, timestamp: float) -> None:
        """Ingest one chat message (requests in it are executed by ``add``)."""
        report = self.memory.add(
            [{"role": role, "content": text}],
            user_id=self._store.user,
            session_id=session_id,
            timestamp=timestamp,
        )
        self.readers.update(r.reader for r in report.requests)

    def recall_texts(self, q: str, k: int) -> list[str]:
        """Texts of the top-``k`` hybrid hits."""
        return self._store.recall_texts(q, k)

    def stored_texts(self) -> list[str]:
        """Every text the store holds for the user: memories and source turns."""
        held = self.memory.export(user_id=self._store.user)
        return [m["text"] for m in held["memories"]] + [t["text"] for t in held["turns"]]

    def close(self) -> None:
        """Close the store and delete its folder."""
        self._store.close()


class PeerDialogue:
    """A ForgetEval peer that keeps every turn as one memory."""

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter
        self.name = adapter.name
        self._texts: list[str] = []

    def reset(self) -> None:
        """Start an empty store."""
        self._adapter.reset()
        self._texts = []

    def add_turn(self, role: str, text: str, *, session_id: str, timestamp: float) -> None:
        """Store the message text as it is."""
        self._adapter.inscribe(text)
        self._texts.append(text)

    def recall_texts(self, q: str, k: int) -> list[str]:
        """The peer's own top-``k``."""
        return self._adapter.recall_texts(q, k)

    def stored_texts(self) -> list[str]:
        """Everything inscribed (peers never delete in a dialogue)."""
        return list(self._texts)

    def close(self) -> None:
        """Release the peer's resources."""
        close: Callable[[], None] | None = getattr(self._adapter, "close", None)
        if close is not None:
            close()


def make_dialogue_system(name: str, interpreter: Interpreter | None = None) -> DialogueSystem:
    """Build the named system for dialogue replay (``PeerUnavailable`` when a
    peer's package is missing, ``KeyError`` for an unknown name); unrecall
    reads requests with ``interpreter`` when one is given."""
    if name == "unrecall":
        return UnrecallDialogue(interpreter)
    return PeerDialogue(make_adapter(name))

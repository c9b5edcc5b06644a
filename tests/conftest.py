"""Shared fixtures: a fresh on-disk store per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from unrecall import Memory


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    """A store with the default (MiniLM) embedder in a temporary folder."""
    with Memory(tmp_path / "store.db") as m:
        yield m


@pytest.fixture
def fast_mem(tmp_path: Path) -> Iterator[Memory]:
    """A store with the explicit hashing embedder, for many-example properties."""
    with Memory(tmp_path / "fast.db", embedder="hashing") as m:
        yield m

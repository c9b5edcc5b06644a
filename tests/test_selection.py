"""kth_largest is np.partition's answer, on ties and on any order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unrecall.storage.selection import kth_largest


def _partition(values: np.ndarray, k: int) -> float:
    return float(np.partition(values, len(values) - k)[len(values) - k])


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 20_000),
    distinct=st.integers(1, 50),
    k=st.integers(1, 200),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_kth_largest_of_few_distinct_values(n: int, distinct: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.choice(rng.random(distinct) * 10, size=n)
    k = min(k, n)
    assert kth_largest(values, k) == _partition(values, k)


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_a_sample_that_passes_too_few_falls_back_to_the_whole(order: str) -> None:
    # descending: the sample's first value is the unique maximum, so its
    # floor is reached by one value only and the whole array is partitioned
    values = np.arange(10_000, dtype=np.float64)
    if order == "descending":
        values = values[::-1].copy()
    assert kth_largest(values, 10) == 9_990.0


def test_k_outside_the_values_is_refused() -> None:
    with pytest.raises(ValueError):
        kth_largest(np.zeros(3), 4)

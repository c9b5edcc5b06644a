"""Date qualifiers found in statements."""

from __future__ import annotations

import pytest

from unrecall.recall.dates import latest_date


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("In 2021 I lived in Lyon", (2021, 0, 0)),
        ("Since March 2023 I live in Porto", (2023, 3, 0)),
        ("On 2024-05-01 I moved", (2024, 5, 1)),
        ("Moved in Sept. 5, 2022, then in 2020 left", (2022, 9, 0)),
        ("no date here", None),
        ("call 555-2023 now", None),
    ],
)
def test_latest_date(text: str, date: tuple[int, int, int] | None) -> None:
    assert latest_date(text) == date

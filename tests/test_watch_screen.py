"""The pure pieces of the terminal view: the bar and the countdown."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from hyperpod_constructs.tools.watch.screen import BAR_WIDTH, EMPTY, FULL, bar, clock


@given(st.integers(0, 7000), st.integers(0, 6758), st.integers(1, 80))
def test_bar_is_current_of_target_in_width_cells(current: int, target: int, width: int) -> None:
    cells = bar(current, target, width)
    assert len(cells) == width and set(cells) <= {FULL, EMPTY}
    assert cells == FULL * cells.count(FULL) + EMPTY * cells.count(EMPTY)  # filled from the left
    if target == 0 or current >= target:
        assert cells == FULL * width
    else:
        assert abs(cells.count(FULL) - width * current / target) <= 0.5
        assert current == 0 or cells.count(FULL) > 0 or width * current / target < 0.5


def test_bar_examples() -> None:
    assert bar(12, 16) == FULL * 18 + EMPTY * 6
    assert bar(0, 16) == EMPTY * BAR_WIDTH
    # Exactly half a cell rounds up (round() gave 0 cells: 128 of 256 looked like nothing).
    assert bar(128, 256, 1) == FULL
    assert bar(1, 48, 24) == FULL + EMPTY * 23


def test_clock() -> None:
    assert clock(timedelta(hours=2, minutes=59, seconds=5)) == "2:59:05"
    assert clock(timedelta(seconds=59)) == "0:00:59"
    assert clock(timedelta(seconds=-1)) == "passed"
    assert clock(None) == "-"

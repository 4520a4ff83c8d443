"""The test processes themselves (tests/conftest.py): what collecting loaded is frozen out of
the garbage collector before the first test runs."""

from __future__ import annotations

import gc


def test_what_collecting_loaded_is_frozen_out_of_the_collector() -> None:
    """Frozen, not disabled: the tests' own garbage is still collected."""
    assert gc.isenabled()
    assert gc.get_freeze_count() > 100_000

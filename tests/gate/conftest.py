"""Every test that builds a GateWorld gets it closed (moto stopped) afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import world


@pytest.fixture(autouse=True)
def _close_worlds() -> Iterator[None]:
    yield
    while world.LIVE:
        world.LIVE.pop().close()

"""The version of the installed distribution, as the package reports it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "hyperpod-constructs"
"""The name the package is installed under (``pip install hyperpod-constructs``)."""

UNKNOWN = "0+unknown"
"""Reported when the package is imported from a source tree without being installed."""


def installed_version(distribution: str = DISTRIBUTION) -> str:
    """The installed version of ``distribution``, or :data:`UNKNOWN` if it is not installed."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return UNKNOWN


__version__ = installed_version()
"""The installed version of hyperpod-constructs (PEP 440, e.g. ``"0.1.0"``)."""

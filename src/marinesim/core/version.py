"""The installed marinesim version (from the package metadata; one place for every layer)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    #: Version string of the installed distribution (``pyproject.toml``'s ``version``).
    __version__: str = version("marinesim")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

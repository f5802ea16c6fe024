"""The installed marinesim version (from the package metadata; one place for every layer).

Read on first use (``from marinesim.core.version import __version__`` or
``marinesim.__version__``): :mod:`importlib.metadata` costs tens of milliseconds to import,
which the MOOS start path (``marinesim moos`` under pAntler) cannot spend.
"""

from __future__ import annotations

__all__ = ["__version__"]  # noqa: F822 - provided by __getattr__ on first use


def _read() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("marinesim")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        value = _read()
        globals()["__version__"] = value  #: version string of the installed distribution
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

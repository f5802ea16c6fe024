"""marinesim: simulation of marine vehicles for autonomy and control work.

The public API (:mod:`marinesim.api`, imported on first use so that ``import marinesim``
stays cheap):

* ``marinesim.make_model(name, **params)`` — a model by name with ``init(n, ...)`` and
  ``step(state, cmd, dt, env=None)``, N vehicles at once;
* ``marinesim.load(scenario, **overrides)`` — a scenario built into a simulation;
* ``marinesim.run(scenario, **overrides)`` — the same, run; a ``RunResult``.

Everything else lives in its package (``marinesim.models.usm``, ``marinesim.engine``,
...); this module also re-exports the version and the error types.

The Gymnasium environments (``gymnasium.make("marinesim/UsmWaypoint-v0")``) are registered
once Gymnasium is imported too, without importing it here (:mod:`marinesim._gym_hook`).
"""

from typing import Any

from marinesim import _gym_hook
from marinesim.core import jitable as _jitable
from marinesim.core.errors import (
    ConfigError,
    ConfigWarning,
    DataError,
    DependencyNotInstalled,
    EngineError,
    MarinesimError,
    NumericalError,
    UnknownNameError,
)

_gym_hook.install()
_jitable.arm()  # numba's disk cache safe across processes (marinesim.core.numba_cache)

_API = ("load", "make_model", "run")

__all__ = [
    "ConfigError",
    "ConfigWarning",
    "DataError",
    "DependencyNotInstalled",
    "EngineError",
    "MarinesimError",
    "NumericalError",
    "UnknownNameError",
    "__version__",
    "load",
    "make_model",
    "run",
]


def __getattr__(name: str) -> Any:
    """``make_model``, ``load``, ``run`` (from :mod:`marinesim.api`) and ``__version__``:
    imported on first use."""
    if name == "__version__":  # read on first use: the metadata lookup is slow to import
        from marinesim.core import version

        globals()[name] = version.__version__
        return version.__version__
    if name in _API:
        from marinesim import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'marinesim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, "__version__"})

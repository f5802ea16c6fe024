"""marinesim: simulation of marine vehicles for autonomy and control work.

Import the parts you need from their packages (``marinesim.models.kinematic``,
``marinesim.engine``, ...); this module only re-exports the version and the error types.
"""

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

__version__ = "0.1.0"

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
]

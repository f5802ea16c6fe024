"""Limits on inputs that users can see (each one names its parameter in errors).

They bound the work one input can ask for, so that no file or option makes marinesim hang or
exhaust memory.  Documented in the README section "Input limits and error handling".
"""

from __future__ import annotations

import math

from marinesim.core.errors import ConfigError

__all__ = [
    "MAX_ABS_COORDINATE",
    "MAX_ENTITIES",
    "MAX_SAMPLES",
    "MAX_SEAFLOOR_DEPTH",
    "MAX_STEPS",
    "MAX_WAYPOINTS",
    "MIN_DT",
    "MIN_TERRAIN_INTERVAL",
    "MIN_TIME_WARP",
    "check_steps",
]

#: Smallest time step [s] (``dt``, ``time.dt``, 1/AppTick).
MIN_DT = 1e-6
#: Smallest non-zero time warp (0 = as fast as possible).
MIN_TIME_WARP = 1e-3
#: Most engine steps of one run: (end - start) / dt · substeps (the engine streams its log).
MAX_STEPS = 100_000_000
#: Most rows of a log held in memory (``usm run``, ``usm replay``, terrain rows) and most
#: loop steps of ``surftrak run`` (400 Hz: 10 000 s).
MAX_SAMPLES = 4_000_000
#: Most vehicles of one scenario (the sum of the blocks' ``count``).
MAX_ENTITIES = 100_000
#: Most waypoints one generated pattern (lawnmower) may have.
MAX_WAYPOINTS = 100_000
#: Smallest terrain-profile message interval [s].
MIN_TERRAIN_INTERVAL = 1e-3
#: Deepest seafloor accepted [m] (the deepest ocean is about 11 km).
MAX_SEAFLOOR_DEPTH = 12_000.0
#: Largest absolute horizontal coordinate accepted in grids [m].
MAX_ABS_COORDINATE = 1e7


def check_steps(
    duration: float,
    dt: float,
    *,
    param: str = "duration",
    file: str | None = None,
    line: int | None = None,
    limit: int | None = None,
) -> int:
    """Number of steps ``ceil(duration / dt)``; ConfigError above ``limit`` (:data:`MAX_SAMPLES`).

    Raises
    ------
    ConfigError
        Non-finite values, ``dt`` below :data:`MIN_DT`, or too many steps.
    """
    if not (math.isfinite(duration) and duration >= 0):
        raise ConfigError(f"must be a finite time >= 0 s, got {duration!r}", param=param,
                          file=file, line=line)  # fmt: skip
    if not (math.isfinite(dt) and dt >= MIN_DT):
        raise ConfigError(f"time step {dt!r} s is below the minimum {MIN_DT:g} s (MIN_DT)",
                          param="dt", file=file, line=line)  # fmt: skip
    cap = MAX_SAMPLES if limit is None else limit
    n = math.ceil(duration / dt - 1e-9)
    if n > cap:
        raise ConfigError(
            f"{duration:g} s at dt = {dt:g} s is {n} steps, over the limit of {cap} "
            f"({'MAX_SAMPLES' if cap == MAX_SAMPLES else 'MAX_STEPS'})",
            param=param,
            file=file,
            line=line,
        )
    return max(n, 0)

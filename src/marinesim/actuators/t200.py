"""Blue Robotics T200 thruster: force ↔ ESC output ↔ current as functions of supply voltage.

Two models (``specs/allocation.md`` §4), one module each, all names re-exported here:

* :class:`T200Cubic` (:mod:`~marinesim.actuators.t200_cubic`) — the **allocator model**:
  bivariate cubic least-squares fits in (a, V), one coefficient set per branch (forward =
  T200 positive thrust, reverse), shipped as package data.  Maps: force [N], V → u;
  u, V → force [N]; u, V → current [A]; force limits at V.
* :class:`T200Table` (:mod:`~marinesim.actuators.t200_table`) — the **plant** (and the
  ``t200_model: table`` allocator model): bilinear interpolation of the measured table in
  (PWM, V), built from arrays the caller reads (e.g. :func:`read_t200_csv` of
  ``../shared/data/t200/t200_performance_10-20V.csv``).

Conventions, the voltage check and the shipped fit: :mod:`~marinesim.actuators.t200_fit`
(ESC output u = (PWM − 1500)/400, u ∈ [−1, 1] ↔ 1100…1900 µs; forces in N in the T200's own
frame; supply voltage 10–20 V).  The per-element cubic law as compiled functions:
:mod:`~marinesim.actuators.t200_law`.  Every function is vectorised over broadcastable
arrays; voltages of shape (N,) pair with forces of shape (N, n).
"""

from __future__ import annotations

from marinesim.actuators.t200_cubic import CubicRay, T200Cubic, _index_grids
from marinesim.actuators.t200_fit import (
    KGF,
    LIMIT_BISECT_STEPS,
    PWM_MAX,
    PWM_MIN,
    PWM_NEUTRAL,
    V_MAX,
    V_MIN,
    ZERO_FORCE,
    Array,
    T200Fit,
    basis,
    check_voltage,
    envelope,
    load_fit,
    pwm_from_u,
    u_from_pwm,
)
from marinesim.actuators.t200_fit import cubic_in_a as _cubic_in_a
from marinesim.actuators.t200_fit import horner as _horner
from marinesim.actuators.t200_table import T200_CSV_COLUMNS, T200Table, TableRay, read_t200_csv

__all__ = [
    "KGF",
    "CubicRay",
    "TableRay",
    "PWM_MAX",
    "PWM_MIN",
    "PWM_NEUTRAL",
    "V_MAX",
    "V_MIN",
    "ZERO_FORCE",
    "T200Cubic",
    "T200Fit",
    "T200Table",
    "basis",
    "check_voltage",
    "envelope",
    "load_fit",
    "pwm_from_u",
    "read_t200_csv",
    "u_from_pwm",
]

# names kept importable from here for existing callers (not part of __all__)
_REEXPORTED = (LIMIT_BISECT_STEPS, Array, T200_CSV_COLUMNS, _cubic_in_a, _horner, _index_grids)

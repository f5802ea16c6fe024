"""The fleet's control laws wrap angles with :func:`marinesim.core.frames.wrap_pi_c`.

PythonVehicleSimulator wraps every heading and pitch error with ``ssa`` (``(a + π) % 2π − π``);
the compiled laws must give its bits at any magnitude, also far beyond the ~100 rad where a
floor-division form of the modulo starts to round differently.
"""

from __future__ import annotations

import math

import numpy as np

from marinesim.control import pvs_fleet as ctl
from marinesim.models.sixdof import fleet

H = 0.02


def _pvs_ssa(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


def test_heading_integral_uses_pvs_ssa_bitwise_at_any_magnitude() -> None:
    """The torpedo's integral SMC: ∫ssa(ψ − ψ_d) after one call is h·ssa(ψ) (ψ_d = 0)."""
    v = fleet.build("torpedo", "depthHeadingAutopilot", 20, 0, 1200, 0.0, 0.0)
    code, p, names = ctl.law(v, H)
    psi = np.array([0.3, -3.0, 123.456, -987.654, 1e6 + 0.1, -2.5e9, 1e15, 3e300])
    eta = np.zeros((psi.size, 6))
    eta[:, 5] = psi
    st = np.zeros((psi.size, ctl.STATE_SIZE))
    ctl.run_control(code, p, st, eta, np.zeros((psi.size, 6)), H, 0.0, v.m)
    got = st[:, names.index("e_psi_int")]
    want = np.array([H * _pvs_ssa(float(a)) for a in psi])
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def test_dp_heading_integral_uses_pvs_ssa_bitwise_at_any_magnitude() -> None:
    """The supply vessel's DP: ∫e_ψ after one call is h·ssa(ψ − ψ_d) (ψ_d = 0)."""
    v = fleet.build("supply", "DPcontrol", 0.0, 0.0, 0.0, 0.0, 0.0)
    code, p, names = ctl.law(v, H)
    psi = np.array([2.0, -7.0, 250.25, -4096.5, 7.7e7, -1e12, 6e200])
    eta = np.zeros((psi.size, 6))
    eta[:, 5] = psi
    st = np.zeros((psi.size, ctl.STATE_SIZE))
    ctl.run_control(code, p, st, eta, np.zeros((psi.size, 6)), H, 0.0, v.m)
    got = st[:, names.index("e_int_psi")]
    want = np.array([H * _pvs_ssa(float(a)) for a in psi])
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))

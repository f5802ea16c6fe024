"""An empty battery is cut off: no current, no further discharge, voltage at V_empty."""

from __future__ import annotations

import numpy as np

from marinesim.models import battery


def test_empty_battery_is_cut_off():
    p = battery.Params(capacity_ah=0.001, initial_soc=0.01)
    st = battery.init(p, 2)
    for _ in range(10):
        st = battery.step(p, st, np.array([50.0, 0.0]), 1.0)
    assert st.soc[0] == 0.0 and st.soc[1] == 0.01
    assert battery.cut_off(p, st).tolist() == [True, False]
    v = battery.voltage(p, st, np.array([50.0, 50.0]))
    assert v[0] == p.v_empty  # no load can be drawn once cut off
    assert v[1] == battery.open_circuit_voltage(p, st.soc)[1] - p.internal_resistance * 50.0

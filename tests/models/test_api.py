"""``marinesim.make_model``: every model family through one init/step contract."""

from __future__ import annotations

import numpy as np
import pytest

import marinesim
from marinesim.core.errors import ConfigError, UnknownNameError
from marinesim.models.sixdof import fossen6dof as f6
from marinesim.models.sixdof import pvs


def test_exported_from_the_package() -> None:
    assert "make_model" in marinesim.__all__ and marinesim.make_model is not None


def test_usm_moves_forward_with_thrust() -> None:
    m = marinesim.make_model("usm", thrust_factor=20.0)
    s = m.init(2)
    for _ in range(20):
        s = m.step(s, {"DESIRED_THRUST": [50.0, 100.0]}, 0.1)
    assert s.n == 2 and 0 < s.speed[0] < s.speed[1]


def test_fossen6dof_equals_the_module_functions() -> None:
    params = {
        "mass": 18.0,
        "inertia": [[0.05, 0, 0], [0, 1.77, 0], [0, 0, 1.77]],
        "added_mass": [1, 16, 16, 0.005, 1.3, 1.3],
        "linear_damping": [2.4, 23, 23, 0.3, 9.7, 9.7],
        "neutrally_buoyant": True,
    }
    m = marinesim.make_model("fossen6dof", **params)
    s = m.step(m.init(3), [10.0, 0, 0, 0, 0, 0.2], 0.05)
    b = f6.build(params)
    ref = f6.step(b, f6.init(b, 3), [10.0, 0, 0, 0, 0, 0.2], None, 0.05)
    np.testing.assert_array_equal(s.nu, ref.nu)


def test_remus100_preset_is_the_exact_pvs_loop() -> None:
    m = marinesim.make_model("remus100", V_current=0.3, beta_current=30)
    s = m.init(2)
    cmd = [np.radians(5), np.radians(-5), 1525.0]
    for _ in range(10):
        s = m.step(s, cmd, 0.02)
    p = pvs.remus100(V_current=0.3, beta_current=30)
    x, alive = np.zeros((1, 15)), np.ones(1, dtype=bool)
    for k in range(10):
        x, alive, _ = pvs.step_guarded(p, x, [cmd], 0.02, alive, (k + 1) * 0.02)
    np.testing.assert_array_equal(s.x[1], x[0])
    assert s.t == pytest.approx(0.2) and s.alive.all() and s.nu[0, 0] > 0


def test_bad_names_and_parameters_are_clear() -> None:
    with pytest.raises(UnknownNameError, match="remus100"):
        marinesim.make_model("remus10")
    with pytest.raises(ConfigError, match="mass"):
        marinesim.make_model("fossen6dof", mass=-1.0, neutrally_buoyant=True)
    with pytest.raises(ConfigError, match="unknown backend"):
        marinesim.make_model("remus100", backend="gpu")
    with pytest.raises(ConfigError, match="n"):
        marinesim.make_model("otter").init(0)

"""The PythonVehicleSimulator fleet on the shared 6-DOF core: builders, batching, errors."""

from __future__ import annotations

import math
from typing import get_args

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.core.errors import ConfigError, UnknownNameError
from marinesim.models import presets
from marinesim.models.sixdof import fleet
from marinesim.models.sixdof.fleet import args as fa
from marinesim.models.sixdof.fleet import kernel
from marinesim.reference import pvs_fleet as rf

CASES = {
    "DSRV": ("depthAutopilot", 30.0),
    "frigate": ("headingAutopilot", 8.0, 45.0),
    "ROVzefakkel": ("headingAutopilot", 4.5, -30.0),
    "semisub": ("DPcontrol", 5.0, -5.0, 30.0, 0.5, 100.0),
    "shipClarke83": ("headingAutopilot", 20.0, 120, 15, 7, 0.75, 0.4, 60.0, 2e5),
    "supply": ("DPcontrol", 3.0, 2.0, -40.0, 0.7, 250.0),
    "tanker": ("headingAutopilot", 15, 0.3, 60, 25, 70),
    "torpedo": ("depthHeadingAutopilot", 20, 30, 1200, 0.4, 200),
}


@pytest.mark.parametrize("name", sorted(fleet.VEHICLES))
def test_modes_match_the_argument_models(name: str) -> None:
    """The registry's control modes are exactly what the constructor accepts."""
    field = fa.ARGS[name].model_fields["control_system"]
    assert set(get_args(field.annotation)) == set(fleet.VEHICLES[name].modes)
    for mode in fleet.VEHICLES[name].modes:
        assert fleet.build(name, mode).control_mode == mode


@pytest.mark.parametrize("name", sorted(CASES))
def test_batch_rows_equal_single_runs(name: str) -> None:
    """N vehicles step as one batch; each row is bit-identical to the N = 1 run."""
    v = fleet.build(name, *CASES[name])
    one = rf.simulate(v, 60, 0.02)
    many = rf.simulate(v, 60, 0.02, n_vehicles=3)
    assert many.columns["x"].shape == (3, 61)
    for key, col in one.columns.items():
        np.testing.assert_array_equal(many.columns[key], np.repeat(col, 3, axis=0))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_kinds_own_step_equals_the_step_of_every_kind(name: str) -> None:
    """``step_guarded`` runs the kind's own step (``kind_kernels``, what the generated tick
    compiles); it gives the bits of the step that dispatches on the kind (``STEP``)."""
    v = fleet.build(name, *CASES[name])
    rng = np.random.default_rng(7)
    x = np.zeros((5, 12 + v.m))
    x[:, 6:12] = v.nu0
    x[:, :12] += rng.normal(scale=0.1, size=(5, 12))
    cmd = rng.normal(scale=0.2, size=(5, v.m))
    alive = np.ones(5, dtype=bool)
    pr = np.ascontiguousarray(v.row, dtype=float)
    y_all = np.empty_like(x)
    st, size = np.zeros(5, dtype=np.int8), np.zeros(5)
    kernel.STEP.launch(
        "cpu", (v.kind, pr, kernel.REMUS_CA_ZERO, x, cmd, 0.02, 50.0, 50.0, alive.copy(), y_all, st, size)
    )
    y, alive1, events = kernel.step_guarded(v, x, cmd, 0.02, alive, 0.02)
    np.testing.assert_array_equal(y, y_all)
    assert alive1.all() and not events and not st.any()
    assert kernel.kind_kernels(v.kind).one is kernel.STEP_OF[v.kind]


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_backend_matches_compiled(name: str) -> None:
    """Interpreted and compiled kernels differ only by libm rounding (≤ 1e-12 relative)."""
    v = fleet.build(name, *CASES[name])
    a = rf.simulate(v, 15, 0.02, backend="cpu")
    b = rf.simulate(v, 15, 0.02, backend="python")
    for key in a.columns:
        scale = max(1.0, float(np.max(np.abs(a.columns[key]))))
        assert np.max(np.abs(a.columns[key] - b.columns[key])) <= 1e-12 * scale, key


def test_per_vehicle_parameter_rows() -> None:
    """A batch may carry one parameter row per vehicle (two currents at once)."""
    v1 = fleet.build("supply", "stepInput", 0, 0, 0, 0.5, 20.0)
    v2 = fleet.build("supply", "stepInput", 0, 0, 0, 1.0, 200.0)
    x = np.zeros((2, 18))
    cmd = np.tile(np.array([10, 20, 30, 40, 100, 100.0]), (2, 1))
    alive = np.ones(2, bool)
    par = np.vstack((v1.row, v2.row))
    y, _, _ = kernel.step_guarded(v1, x, cmd, 0.02, alive, 0.02, par=par)
    y1, _, _ = kernel.step_guarded(v1, x[:1], cmd[:1], 0.02, alive[:1], 0.02)
    y2, _, _ = kernel.step_guarded(v2, x[1:], cmd[1:], 0.02, alive[1:], 0.02)
    np.testing.assert_array_equal(y, np.vstack((y1, y2)))
    assert not np.array_equal(y1, y2)


def test_speed_tables_hold_outside_and_interpolate_inside() -> None:
    """frigate() runs at 5 m/s, below the 6 m/s entry: K, T, n3 of 6 m/s (upstream np.interp)."""
    f = fleet.build("frigate")
    assert (f.consts["K"], f.consts["T"], f.consts["n3"]) == (0.08, 20.0, 0.4)
    r = fleet.build("ROVzefakkel", "stepInput", 3.1)
    assert r.consts["K"] == pytest.approx(0.19 + (0.29 - 0.19) * 0.5)


def test_quirks_in_the_built_constants() -> None:
    ship = fleet.build("shipClarke83", "stepInput", 0, 120.0)
    assert ship.consts["R66"] == pytest.approx(0.27 * 120.0)  # L > 100 m
    deep = fleet.build("tanker", "stepInput", 0, 0, 0, 200.0)
    assert deep.row[0, 5] == 0.0  # Yuvz only for z = T/(h - T) >= 0.8
    shallow = fleet.build("tanker", "stepInput", 0, 0, 0, 20.0)
    assert shallow.row[0, 5] == pytest.approx(-0.85 * (1 - 0.8 / (18.46 / 1.54)))


@pytest.mark.parametrize(
    ("call", "param", "allowed"),
    [
        (lambda: fleet.build("shipClarke83", "stepInput", 0, -70.0), "L", "greater than 0"),
        (lambda: fleet.build("frigate", "headingAutopilot", 13.0), "U", "less than or equal to 12"),
        (lambda: fleet.build("tanker", "stepInput", 0, 0, 0, 20.0, 95), "rpm", "90"),
        (lambda: fleet.build("tanker", "stepInput", 0, 0, 0, 10.0), "depth", "18.46"),
        (lambda: fleet.build("supply", "DP"), "control_system", "'stepInput' or 'DPcontrol'"),
        (lambda: fleet.build("torpedo", "stepInput", 150), "r_z", "100"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_allowed_values(
    call: object, param: str, allowed: str
) -> None:
    with pytest.raises(ConfigError) as err:
        call()  # type: ignore[operator]
    assert err.value.param == param
    assert allowed in str(err.value)


def test_bad_parameter_is_located_in_its_file() -> None:
    with pytest.raises(ConfigError, match=r"^ship\.yaml:7:3: motion\.params\.L: "):
        fa.check(
            "shipClarke83", {"L": -1.0}, file="ship.yaml", marks={"motion.params.L": (7, 3)},
            prefix="motion.params",
        )  # fmt: skip


def test_unknown_vehicle() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'tanker'"):
        fleet.build("tankr")


@pytest.mark.parametrize("name", ["dsrv", "DSRV", "frigate", "rovzefakkel", "semisub",
                                  "shipclarke83", "supply", "tanker", "torpedo"])  # fmt: skip
def test_presets_build_the_fleet(name: str) -> None:
    p = presets.get(name)
    assert p.model == "pvs_fleet" and p.data["fidelity"] == "exact"
    v = presets.build(name)
    assert v.vehicle == p.data["vehicle"]
    assert set(p.data["control_modes"]) == set(fleet.VEHICLES[v.vehicle].modes)


@settings(max_examples=40, deadline=None)
@given(
    delta=st.floats(-1.0, 1.0),
    cmd=st.floats(-1.0, 1.0),
    name=st.sampled_from(["frigate", "tanker"]),
)
def test_rudder_servo_is_clamped_and_rate_limited(delta: float, cmd: float, name: str) -> None:
    """δ_{k+1} = clamp(δ_k) + h·sat(δ_c − clamp(δ_k)): rate ≤ 10°/s (frigate), 5°/s (tanker)."""
    v = fleet.build(name)
    x = np.zeros((1, 13))
    x[0, 6:12] = v.nu0
    x[0, 12] = delta
    y, _, _ = kernel.step_guarded(v, x, np.array([[cmd]]), 0.02, np.ones(1, bool), 0.02)
    lim = math.radians(30)
    rate = math.radians(10 if name == "frigate" else 5)
    clamped = min(lim, max(-lim, delta))
    assert abs(y[0, 12] - clamped) <= 0.02 * rate + 1e-15


def test_divergence_stops_only_the_bad_vehicle() -> None:
    v = fleet.build("torpedo")
    x = np.zeros((2, 17))
    x[1, 6] = 1e3  # far beyond max_speed
    y, alive, ev = kernel.step_guarded(v, x, np.zeros((1, 5)), 0.02, np.ones(2, bool), 0.02)
    assert alive.tolist() == [True, False]
    assert len(ev) == 1 and "vehicle[1]" in ev[0]
    np.testing.assert_array_equal(y[1], x[1])

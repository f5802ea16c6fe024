"""Bundled 6-DOF scenarios (shortened): Python API and ``marinesim run``; derived bounds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from marinesim.allocation.tam import Geometry
from marinesim.allocation.vehicles import get_layout
from marinesim.cli.main import main
from marinesim.models import presets
from marinesim.scenario import builtin_names, load_simulation


def test_bundled_6dof_scenarios_are_listed() -> None:
    names = builtin_names()
    for n in ("bluerov2_station_keeping", "remus100_survey", "bluerov2_thruster_failure"):
        assert n in names


def test_station_keeping_holds_within_the_pid_static_deflection() -> None:
    r = load_simulation("bluerov2_station_keeping", variables={"end": 30}).run()
    assert r.status == "completed"
    pos = r["truth.pos"][0]
    # drag of the 0.3 m/s current at 45° (0.212 m/s per body axis at heading 0) from the
    # preset: X = D_L u + D_Q u², Y = D_Q v²
    p = presets.get("bluerov2_heavy").params
    c = 0.3 * np.sqrt(0.5)
    fx = p["linear_damping"][0] * c + p["quadratic_damping"][0] * c**2
    fy = p["linear_damping"][1] * c + p["quadratic_damping"][1] * c**2
    kp, kd, ki = 60.0, 20.0, 12.0  # station_keeping_pid defaults [N/m, N s/m, N/(m s)]
    # a well-damped PID never deflects further than the P-only static offset F/kp
    assert np.max(np.abs(pos[:, 0])) <= fx / kp
    assert np.max(np.abs(pos[:, 1])) <= fy / kp
    # afterwards the error decays at least as fast as the slowest closed-loop pole of the
    # surge loop linearised in still water (least damping: the most conservative), with a
    # transient amplitude factor 2: |e(t)| <= 2 (F/kp) exp(-sigma t)
    m_x = p["mass"] + p["added_mass"][0]
    poles = np.roots([m_x, kd + p["linear_damping"][0], kp, ki])
    sigma = float(np.min(-poles.real))
    late = r.t > 15.0
    bound = 2.0 * max(fx, fy) / kp * np.exp(-sigma * r.t[late])
    assert np.all(np.abs(pos[late, 0]) <= bound)
    assert np.all(np.abs(pos[late, 1]) <= bound)
    # depth: net weight W - B (~0.9 N) over kp_depth = 30 N/m
    w_minus_b = p["mass"] * 9.81 - 1000.0 * p["volume"] * 9.81
    assert np.max(np.abs(pos[:, 2] - 5.0)) <= abs(w_minus_b) / 30.0
    # the battery sags with the thrusters' current: V = V_oc - R I
    v = r["fossen6dof.voltage"][0, 1:, 0]
    i_tot = r["fossen6dof.current_total"][0, 1:, 0]
    soc = r["fossen6dof.soc"][0, 1:, 0]
    np.testing.assert_allclose(v, 12.8 + 4.0 * soc - 0.05 * i_tot, atol=1e-9)
    assert np.all(r["alloc.current_total"][0, 1:, 0] <= 50.0)


def test_thruster_failure_constrained_holds_where_pinv_drifts() -> None:
    fail_at = 12.0
    r = load_simulation(
        "bluerov2_thruster_failure", variables={"end": 17, "fail_at": fail_at}
    ).run()
    rows = {e["name"]: i for i, e in enumerate(r.entities)}
    targets = {"rov_pinv[0]": (0.0, 0.0), "rov_qp[0]": (0.0, 20.0)}
    k = int(np.searchsorted(r.t, fail_at))
    after = r.t > fail_at
    out = {}
    for name, (tn, te) in targets.items():
        i = rows[name]
        pos = r["truth.pos"][i]
        err = np.hypot(pos[:, 0] - tn, pos[:, 1] - te)
        hd = np.abs((r["truth.heading"][i, :, 0] + 180.0) % 360.0 - 180.0)
        out[name] = (err[k], err[after].max(), hd[after].max())
    i_p = rows["rov_pinv[0]"]
    f0 = r["fossen6dof.thrust"][i_p, k, 0]  # what motor 1 carried when it failed [N]
    geo = Geometry(get_layout("bluerov2_heavy"))
    n_lost = abs(geo.b[5, 0] * f0)  # its yaw moment [N m]
    kp_yaw, kp_pos, tau_rotor, m_surge = 2.0, 60.0, 0.1, 13.5 + 6.36
    i_z = 0.37 + 0.222  # preset I_z + N_rdot [kg m^2]
    yaw_deflection = np.degrees(n_lost / kp_yaw)  # P-only static heading error [deg]
    e0_p, emax_p, hd_p = out["rov_pinv[0]"]
    e0_q, emax_q, hd_q = out["rov_qp[0]"]
    # constrained, told of the failure: re-allocates exactly; only the rotor transients
    # differ (deficit ≤ f0·tau over the surge mass, i.e. a velocity kick ≤ f0 tau / m)
    assert emax_q <= e0_q + f0 * tau_rotor / m_surge
    # the failed rotor's force decays through a T200 curve ~u^2 while the replacements rise:
    # a moment deficit impulse of about N_lost·tau; on the yaw loop (omega = sqrt(kp/I_z))
    # an impulse peaks at dr/(omega e); factor 2 for the curve's departure from u^2
    omega = np.sqrt(kp_yaw / i_z)
    assert hd_q <= 2.0 * np.degrees(n_lost * tau_rotor / i_z / (omega * np.e))
    # plain pseudo-inverse, not told: the lost force and moment are only fought by the
    # PID; before the integral (kp/ki = 5 s) catches up, at least half the P-only static
    # deflection appears
    assert emax_p >= e0_p + 0.5 * f0 / kp_pos
    assert hd_p >= 0.5 * yaw_deflection
    assert emax_p > 2.0 * emax_q - e0_q


def test_remus_survey_dives_and_steers_with_bounded_fins() -> None:
    r = load_simulation("remus100_survey", variables={"end": 40}).run()
    assert r.status == "completed"
    pos = r["truth.pos"][0]
    act = r["fossen6dof.actuators"][0]
    # PVS limits: |delta| <= 15 deg, n <= 1525 rpm
    assert np.all(np.abs(act[:, :2]) <= 15.0 + 1e-9)
    assert np.all(act[:, 2] <= 1525.0)
    # propeller lag T_n = 1 s: at 1200 rpm after 40 s, rpm within e^-40 of the command
    assert act[-1, 2] == pytest.approx(1200.0, rel=1e-6)
    # first lane heads north from (0, 0): the survey runs north at about 2 m/s
    assert pos[-1, 0] > 50.0 and abs(pos[-1, 1]) < 15.0
    assert 1.5 < r["truth.speed"][0, -1, 0] < 3.0
    # the depth loop (reference filter 0.02 rad/s) dives monotonically towards 10 m
    d = pos[r.t > 10.0, 2]
    assert d[-1] > pos[0, 2] + 1.0 and np.all(d <= 10.0 + 0.5)


@pytest.mark.parametrize(
    "name", ["bluerov2_station_keeping", "remus100_survey", "bluerov2_thruster_failure"]
)
def test_marinesim_run_cli(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    code = main(
        ["run", name, "-o", str(out), "--set", "time.end=1.0", "--no-plot", "--format", "csv"]
    )
    assert code == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["status"] == "completed"
    assert (out / "log.csv").stat().st_size > 0


def test_sixdof_figures(tmp_path: Path) -> None:
    from marinesim.io.sixdof_plots import plot_run

    r = load_simulation("bluerov2_thruster_failure", variables={"end": 1.0}).run()
    paths = plot_run(r, tmp_path)
    assert set(paths) == {"sixdof_timeseries", "track3d", "thruster_usage"}
    assert all(p.stat().st_size > 10_000 for p in paths.values())

"""The navigation sensors in the generated tick against the plugins' ``sense`` phase.

``gps``, ``depth_sensor``, ``imu``, ``ahrs`` and ``dvl`` declare their laws
(:mod:`marinesim.engine.plugins.sensor_laws`), so ``demo_survey`` with a sensor suite stays
on the compiled route.  Every recorded signal, the events, the bus and call counts, the
sensors' own state (delay lines, sample buffers, IMU biases and position history, the DVL's
previous position) and the position in every random stream must be bit-identical whether
it runs compiled or through the plugins.  Every compiled test here uses one plugin set (one
compile per machine, cached on disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from marinesim.cli.main import main
from marinesim.engine.compiled.route import plan
from marinesim.engine.plugins.sensor_laws import declare
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")

IMU = {"accel_noise_std": 0.02, "gyro_noise_std": 0.001, "accel_bias_walk": 0.0002,
       "gyro_bias_walk": 0.00001, "accel_bias_init_std": 0.005}  # fmt: skip


def _suite(dvl: dict[str, Any] | None = None, delay: float = 0.4) -> list[dict[str, Any]]:
    """Rates of 5, 2.5 and 1 Hz at dt = 0.2 s, delays, dropouts, a short sample buffer."""
    return [
        {"name": "imu", "plugin": "imu", "rate_hz": 5,
         "params": {**IMU, "delay": delay, "dropout_probability": 0.1, "buffer_size": 3}},
        {"name": "ahrs", "plugin": "ahrs", "rate_hz": 5,
         "params": {"roll_std_deg": 0.1, "pitch_std_deg": 0.1, "yaw_std_deg": 0.5,
                    "yaw_bias_deg": 0.3}},
        {"name": "depth", "plugin": "depth_sensor", "rate_hz": 1,
         "params": {"noise_std": 0.05, "delay": 0.5, "assumed_density": 1000.0}},
        {"name": "dvl", "plugin": "dvl", "rate_hz": 2.5,
         "params": {"noise_std": 0.03, "min_altitude": 0.5, "max_altitude": 35.0,
                    "dropout_probability": 0.05, "lever_arm": [0.3, -0.1, 0.2], **(dvl or {})}},
        {"name": "gps", "plugin": "gps", "rate_hz": 1,
         "params": {"noise_std": 2.0, "max_depth": 0.5, "dropout_probability": 0.2}},
    ]  # fmt: skip


def _sets(end: float, **kw: Any) -> dict[str, Any]:
    return {"entities.0.sensors": _suite(**kw), "time.end": end,
            "environment.terrain": {"model": "flat", "depth": 40.0}}  # fmt: skip


def _both(sets: dict[str, Any]) -> list[tuple[Any, Any]]:
    out = []
    for compiled in (False, True):
        sim = load_simulation("demo_survey", sets=sets)
        sim.compiled = compiled
        out.append((sim, sim.run()))
    return out


def _same_sensor_state(sa: Any, sb: Any) -> None:
    """The sensors' state and random streams as the plugins left them: bit for bit (the
    samples to rounding where numpy's elementary functions are not libm's, see
    ``assert_runs_identical``'s ``routes``); the random streams always bit for bit."""
    seen = 0
    for s1, s2 in zip(sa.slots, sb.slots, strict=True):
        if s1.plugin.kind != "sensor":
            continue
        seen += 1
        st1, st2 = s1.ctx.state, s2.ctx.state
        assert st1.keys() == st2.keys()
        for key, v in st1.items():
            w = st2[key]
            what = f"{s1.plugin.name}.{key}"
            if key == "buffer":
                assert v.maxlen == w.maxlen and len(v) == len(w) > 0
                for (t1, v1, o1), (t2, v2, o2) in zip(v, w, strict=True):
                    assert t1 == t2
                    assert_values_identical(v1, v2, routes=True, what=what)
                    assert o1.dtype == o2.dtype == bool and o1.tobytes() == o2.tobytes()
            elif key == "line":
                assert v.count == w.count
                assert_values_identical(v.buf, w.buf, routes=True, what=what)
            elif key == "p_hist":
                assert len(v) == len(w) == 3
                assert_values_identical(v, w, routes=True, what=what)
            else:
                assert_values_identical(np.asarray(v), np.asarray(w), routes=True, what=what)
        r1, r2 = s1.rng.state(), s2.rng.state()
        assert r1["pos"] == r2["pos"], s1.plugin.name
        assert all(r1["buf"][d].tobytes() == r2["buf"][d].tobytes() for d in r1["buf"])
    assert seen == 5


def test_sensor_suite_matches_the_plugins_through_block_refills() -> None:
    # 200 s: the IMU's 12 normals per sample use up a block of 4096 every 68 s (the route
    # draws the next at the hand-back and goes on compiled: BlockRNG.reserve, the same
    # values), the lane switches and the gust are the plugins' ticks
    (sa, a), (sb, b) = _both(_sets(200.0))
    assert_runs_identical(a, b, routes=True)
    _same_sensor_state(sa, sb)
    assert a.manifest["compiled_ticks"] == 0
    assert 1000 - 15 <= b.manifest["compiled_ticks"] < 1000
    assert b.manifest.get("compiled_why_not") is None
    # what the sensors saw: at the surface 40 m over the floor, beyond the DVL's 35 m of
    # bottom lock (water track: mode 2 or a dropout), every vehicle has GPS fixes
    mode = b["dvl.mode"][:, 1:, 0]
    assert set(np.unique(mode)) == {0.0, 2.0} and np.mean(mode == 0.0) < 0.15
    # sampled at 2.5 Hz, every second tick and held between (frame 1 holds the sample at
    # t = 0, logged after that frame): 40 m − the depth of the frame sampled
    alt = b["dvl.altitude"][:, :, 0]
    assert np.isnan(alt[:, 0]).all() and np.all(alt[:, 1] == 40.0)
    assert np.all(alt[:, 2::2] == 40.0 - b["truth.pos"][:, 2::2, 2])
    assert np.all(alt[:, 3::2] == alt[:, 2:-1:2])
    # GPS at 1 Hz (frames 5, 10, …): a fix only at the surface (the survey dives to 3 m),
    # within 5σ of the truth of that frame
    fix = b["gps.fix"][:, 5::5, 0]
    z = b["truth.pos"][:, 5::5, 2]
    assert fix.sum() >= 3 and np.all(z[fix == 1.0] <= 0.5) and (z > 0.5).sum() > 100
    err = b["gps.ne"][:, 5::5, :] - b["truth.pos"][:, 5::5, 0:2]
    assert np.all(np.isnan(err[fix == 0.0])) and np.nanmax(np.abs(err)) < 5 * 2.0
    # the IMU's accelerometer bias walks from its initial draw (held between samples)
    bias = b["imu.accel_bias"]
    assert np.all(np.isfinite(bias[:, 1:])) and np.any(bias[:, -1] != bias[:, 1])


def test_bottom_lock_no_delay_and_offsets_match_the_plugins() -> None:
    # the DVL's own seafloor 20 m down: bottom lock; the IMU undelayed; schedule offsets (a
    # sensor every tick is called on every tick whatever its offset, as in the plugins)
    sets = _sets(60.0, dvl={"seafloor_depth": 20.0}, delay=0.0)
    sets["entities.0.sensors"][0]["offset_ticks"] = 20  # imu, still every tick
    sets["entities.0.sensors"][4]["offset_ticks"] = 2  # gps, every 5th tick from tick 2
    (sa, a), (sb, b) = _both(sets)
    assert_runs_identical(a, b, routes=True)
    _same_sensor_state(sa, sb)
    assert b.manifest["compiled_ticks"] >= 290
    mode = b["dvl.mode"][:, 1:, 0]
    assert set(np.unique(mode)) == {0.0, 1.0}
    calls = {p["name"]: p["calls"] for p in b.manifest["plugins"]}
    assert calls["imu"]["sense"] == 301 and calls["gps"]["sense"] == 60  # t0 + 300; 2, 7, …
    # bottom lock measures the velocity over ground: about the logged speed ahead
    vel = b["dvl.vel"][:, 1:, :]
    fwd = vel[..., 0][mode == 1.0]
    assert np.nanmedian(np.abs(fwd - b["truth.speed"][:, 1:, 0][mode == 1.0])) < 0.1


def _both_on(scenario: str, sets: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """``scenario`` through the plugins and compiled: the same runs and sensor states."""
    out = []
    for compiled in (False, True):
        sim = load_simulation(scenario, sets=sets)
        sim.compiled = compiled
        out.append((sim, sim.run()))
    (sa, a), (sb, b) = out
    assert_runs_identical(a, b, routes=True)
    _same_sensor_state(sa, sb)
    assert a.manifest["compiled_ticks"] == 0
    return sa, a, sb, b


def _gyro_reads_the_rate(b: Any, every: int, late: int, least: int) -> None:
    """The gyro (a sample every ``every`` ticks, ``late`` ticks late, no initial bias, a walk
    of 1e-5 rad/s/√s) reads the body rate of ``late`` ticks before within 5σ of its
    0.001 rad/s noise, on at least ``least`` samples of a vehicle that turns (ω not 0)."""
    gyro = b["imu.gyro"][0, late::every, :]
    rate = b["fossen6dof.nu"][0, 0:-late:every, 3:6]
    got = ~np.isnan(gyro[:, 0])
    assert got.sum() > least and np.abs(rate[got]).max() > 0.005
    assert np.abs(gyro[got] - rate[got]).max() < 5 * 0.001


def test_sensors_on_a_thruster_driven_fossen_block_match_the_plugins() -> None:
    # one BlueROV2 Heavy holding station in a current: the sensors read its 6-DOF truth
    # (quaternion, body velocity and angular rate) through the block's truth.x6
    sets = {**_sets(20.0), "entities.0.sensors": _suite(dvl={"seafloor_depth": 30.0})}
    sa, a, sb, b = _both_on("bluerov2_station_keeping", sets)
    assert b.manifest["compiled_ticks"] >= 395
    _gyro_reads_the_rate(b, every=4, late=8, least=80)  # dt 0.05 s: 5 Hz, 0.4 s
    # bottom lock 30 m down; depth at 1 Hz (every 20th tick), 0.5 s = 10 ticks late, the
    # pressure read back with 1000 kg/m³ in this fresh water: the truth within 5σ
    assert sa.env.density == 1000.0
    assert 1.0 in b["dvl.mode"][0, :, 0] and set(np.unique(b["dvl.mode"][0, 1:, 0])) <= {0.0, 1.0}
    d = b["depth.depth"][0, 20::20, 0]
    z = b["truth.pos"][0, 10:-10:20, 2]
    assert np.abs(d - z).max() < 5 * 0.05


def test_sensors_on_a_pythonvehiclesimulator_block_match_the_plugins() -> None:
    # REMUS 100 (PythonVehicleSimulator, Euler-angle rows): the sensors read the quaternion of
    # the rows' Euler angles (truth.quat, as the model's pose), its position and ν
    sets = {**_sets(30.0), "entities.0.sensors": _suite(dvl={"seafloor_depth": 30.0})}
    sa, a, sb, b = _both_on("remus100_survey", sets)
    assert b.manifest["compiled_ticks"] >= 290
    _gyro_reads_the_rate(b, every=2, late=4, least=100)  # dt 0.1 s: 5 Hz, 0.4 s
    # bottom lock 30 m down, water track never; the depth sensor's pressure read back with
    # 1000 kg/m³ in sea water: ρ/1000 times the truth of 0.5 s before (the delay line
    # interpolates halfway between its 1 s samples), within 5σ of its 0.05 m noise
    mode = b["dvl.mode"][0, :, 0]
    assert 1.0 in mode and set(np.unique(mode[1:])) <= {0.0, 1.0}
    rho = sa.env.density
    d = b["depth.depth"][0, 10::10, 0]
    z = 0.5 * (b["truth.pos"][0, 0:-10:10, 2] + b["truth.pos"][0, 10::10, 2])
    assert np.abs(d - z * rho / 1000.0).max() < 5 * 0.05


def test_sensors_that_stay_on_the_plugins_say_why(tmp_path: Path) -> None:
    # the INS/EKF reads the samples from wires (ekf_laws), but not delayed ones (its replay)
    sets = _sets(1.0)
    sets["entities.0.sensors"] = [*sets["entities.0.sensors"], {
        "name": "nav", "plugin": "nav_ekf", "params": {
            "accel_noise_std": 0.02, "accel_bias_walk": 0.0002, "depth_std": 0.05,
            "gps_std": 2.0, "dvl_std": 0.2, "initial_pos_std": 1.0, "initial_vel_std": 0.1,
            "initial_bias_std": 0.005}}]  # fmt: skip
    sim = load_simulation("demo_survey", sets=sets)
    gps = next(s for s in sim.slots if s.plugin.name == "gps")
    assert not isinstance(declare(gps.plugin, gps, sim, "gps"), str)
    why = "plugin 'nav' runs only tick by tick here: 'imu' has a delay: its late samples need "
    assert (plan(sim)[0] or "").startswith(why)
    # a DVL over a bathymetry grid
    grid = tmp_path / "bathy.csv"
    grid.write_text("# header: east [m]; rows: north [m], depths [m]\nx,-500,900\n-500,30,30\n900,30,30\n")
    sim = load_simulation(
        "demo_survey", sets={**_sets(1.0), "environment.terrain": {"model": "grid", "file": str(grid)}}
    )
    dvl = next(s for s in sim.slots if s.plugin.name == "dvl")
    why = declare(dvl.plugin, dvl, sim, "dvl")
    assert "bathymetry grid" in why
    assert sim.run().manifest["compiled_why_not"].endswith(why)


def test_cli_run_with_sensors_is_compiled(tmp_path: Path) -> None:
    sets = _sets(20.0)
    out = tmp_path / "run"
    args = ["run", "demo_survey", "-o", str(out), "--no-plot", "--no-progress", "--compiled"]
    for key, value in sets.items():
        args += ["--set", f"{key}={yaml.safe_dump(value, default_flow_style=True).strip()}"]
    assert main(args) == 0
    man = yaml.safe_load((out / "manifest.json").read_text())
    assert man["compiled_ticks"] >= 95 and man["status"] == "completed"
    assert {"imu.accel", "gps.ne", "dvl.vel", "depth.depth"} <= set(man["signals"])

"""The generated tick on CUDA (:mod:`marinesim.engine.compiled.gpu`).

Without a device: the layout of each array among the worlds, the kernel's source, the
errors that name what cannot run, the event notes' merge, and the whole tick in numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, in a process of its own), where it must give the bits
of the interpreted tick (``MARINESIM_JIT=interp``: the same loop and laws in Python).  With
numba-cuda and CUDA's NVVM library (no GPU needed), the kernel compiles to PTX for sm_90.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.engine.compiled import gpu
from marinesim.engine.compiled.generate import array_of, wiring
from marinesim.engine.compiled.law import Law, Laws, Worlds, copy_log_cm
from marinesim.engine.compiled.route import plan
from marinesim.scenario.build import build_simulation, load_scenario

#: World metrics for ``demo_survey`` (``nav_error`` with perfect navigation: its belief is
#: the truth).
METRICS = [
    {"name": "dist", "plugin": "distance_travelled"},
    {"name": "cpa", "plugin": "min_separation"},
    {"name": "nav", "plugin": "nav_error"},
    {"name": "box", "plugin": "time_in_box",
     "params": {"north_min": -50.0, "north_max": 150.0, "east_min": -20.0, "east_max": 200.0}},
]  # fmt: skip


#: ``demo_survey``'s block with the navigation sensors, dropouts (a tick publishes where any
#: world's row delivered), a delay line, a belief writer and ``nav_error`` reading it.
SENSORS = {
    "environment.terrain": {"model": "flat", "depth": 40.0},
    "entities.0.sensors": [
        {"name": "imu", "plugin": "imu", "rate_hz": 5, "params": {
            "accel_noise_std": 0.02, "gyro_noise_std": 0.001, "accel_bias_walk": 0.0002,
            "gyro_bias_walk": 0.00001, "accel_bias_init_std": 0.005, "dropout_probability": 0.1}},
        {"name": "ahrs", "plugin": "ahrs", "rate_hz": 5,
         "params": {"roll_std_deg": 0.1, "pitch_std_deg": 0.1, "yaw_std_deg": 0.5}},
        {"name": "depth", "plugin": "depth_sensor", "rate_hz": 1,
         "params": {"noise_std": 0.05, "delay": 0.4}},
        {"name": "dvl", "plugin": "dvl", "rate_hz": 5, "params": {
            "noise_std": 0.03, "min_altitude": 0.5, "max_altitude": 35.0,
            "dropout_probability": 0.9}},
        {"name": "gps", "plugin": "gps", "rate_hz": 1, "params": {"noise_std": 2.0, "max_depth": 0.5}},
        {"name": "nav", "plugin": "noisy_state", "rate_hz": 1, "params": {
            "pos_std": [1.0, 1.0, 0.1], "pos_mean": [0.0, 0.0, 0.0], "vel_std": [0.05, 0.05, 0.05],
            "vel_mean": [0.0, 0.0, 0.0], "att_std_deg": [0.5, 0.5, 2.0], "att_mean_deg": [0.0, 0.0, 0.0]}},
    ],
    "metrics": [{"name": "nerr", "plugin": "nav_error"}, {"name": "cpa", "plugin": "min_separation"}],
}  # fmt: skip


#: The same with the INS/EKF as the belief writer (its sensors without a delay).
EKF = {
    **SENSORS,
    "entities.0.sensors": [
        *({**x, "params": {k: v for k, v in x["params"].items() if k != "delay"}}
          for x in SENSORS["entities.0.sensors"][:5]),
        {"name": "nav", "plugin": "nav_ekf", "params": {
            "accel_noise_std": 0.02, "accel_bias_walk": 0.0002, "depth_std": 0.05, "gps_std": 2.0,
            "dvl_std": 0.2, "initial_pos_std": 1.0, "initial_vel_std": 0.1,
            "initial_bias_std": 0.005, "dvl_lever_arm": [0.0, 0.0, 0.0]}},
    ],
}  # fmt: skip


#: ``auv_survey_ins`` with sonars that see all round (a detection probability below 1, false
#: alarms): its two blocks' contacts and world metrics on CUDA.
AUV = {
    "entities.ins_auv.sensors.sonar.params.fov_az_deg": 360.0,
    "entities.ins_auv.sensors.sonar.params.detection_probability": 0.5,
    "entities.dr_auv.sensors.sonar.params.fov_az_deg": 360.0,
    "entities.dr_auv.sensors.sonar.params.max_false_alarms": 2,
    "entities.dr_auv.sensors.sonar.params.false_alarm_rate": 0.5,
}


def _decls(name: str, reps: int, sets: dict | None = None) -> list[Laws]:
    sim = build_simulation(load_scenario(name, sets=sets), replicas=range(reps))
    why, entries, _sparse = plan(sim)
    assert why is None
    return [laws for _slot, laws in entries]


def test_each_array_of_the_usm_block_goes_to_its_world() -> None:
    decls = _decls("demo_survey", 2)  # 2 worlds of 3 vehicles
    order, _ = wiring(decls)
    nw, parts = gpu.parts(decls)
    assert nw == 2
    by = dict(zip(order, parts, strict=True))
    u = next(k for k in order if k.endswith(":u"))
    ulog = next(k for k in order if k.endswith(":ulog"))
    assert by[u] == gpu.Part("rows", axis=0, per=3)
    assert by[ulog] == gpu.Part("rows", axis=2, per=3)  # component-major (c, ticks, N)
    assert by["truth.pos"] == gpu.Part("rows", axis=0, per=3)
    assert by["bus.usm_mail"].kind == "world" and by["truth.hok"].kind == "world"
    assert by[next(k for k in order if k.endswith(":clk"))].kind == "shared"
    evb = by[next(k for k in order if k.endswith(":evb"))]
    assert evb.kind == "events" and evb.col == 1 and evb.per == 3
    assert order[evb.count].endswith(":evn") and parts[evb.count].kind == "count"
    src = gpu.gpu_source(decls)
    i = order.index(ulog)
    assert f"    v{i} = a{i}[:, :, w * 3:(w + 1) * 3]" in src
    assert f"    v{order.index(u)} = a{order.index(u)}[w * 3:(w + 1) * 3]" in src
    assert "    stop[w] = -k if fin != 0 else k" in src  # (−k: it ended after tick k − 1)
    assert "def gpu_run(k0, kend, start, dt, h, nsub, sched," in src


def test_the_world_metrics_split_by_world() -> None:
    decls = _decls("demo_survey", 2, {"metrics": METRICS})  # 2 worlds of 3 vehicles
    order, _ = wiring(decls)
    nw, parts = gpu.parts(decls)
    by = dict(zip(order, parts, strict=True))

    def part(suffix: str) -> gpu.Part:  # (of the metrics' declarations: the last four)
        (key,) = [k for k in order if k.endswith(suffix) and int(k.split(":")[0]) >= len(decls) - 4]
        return by[key]

    assert part(":perm") == gpu.Part("index", per=3)  # rows grouped by world: local numbers
    assert part(":cpa_d") == gpu.Part("rows", per=1)  # one closest approach per world
    assert part(":val").kind == "least" and part(":clk").kind == "world"
    assert part(":dlog") == gpu.Part("rows", axis=2, per=3)
    tick = gpu.GpuTick(decls, device=False)
    perm = np.arange(6)
    np.testing.assert_array_equal(tick._host(perm, part(":perm")), [0, 1, 2, 0, 1, 2])
    with pytest.raises(RuntimeError, match="names rows of another world"):
        tick._host(perm[::-1].copy(), part(":perm"))


def test_rows_of_several_blocks_go_to_each_world_block_by_block() -> None:
    np.testing.assert_array_equal(gpu.world_major((4, 2), 2), [0, 1, 4, 2, 3, 5])
    decls = _decls("auv_survey_ins", 2, AUV)  # two blocks of one AUV a world, 2 worlds
    order, _ = wiring(decls)
    _nw, parts = gpu.parts(decls)
    by = dict(zip(order, parts, strict=True))
    sonar = next(d for d, laws in enumerate(decls) if "tall" in laws.arrays)
    assert by[f"{sonar}:tall"] == gpu.Part("rows", per=2, blocks=(2, 2))  # (ins, dr) a world
    assert by[f"{sonar}:order"] == gpu.Part("index", per=2, blocks=(2, 2))
    assert by[f"{sonar}:off1"] == gpu.Part("shared", value=(1.0,))  # block 1 in a world's part
    tick = gpu.GpuTick(decls, device=False)
    tall = np.arange(8.0).reshape(4, 2)  # rows: ins@0, ins@1, dr@0, dr@1
    np.testing.assert_array_equal(tick._host(tall, by[f"{sonar}:tall"]), tall[[0, 2, 1, 3]])
    # targets by replica, then name: world 0's (ins@0, dr@0) are its rows 0 and 1
    order_host = np.array([0, 2, 1, 3])
    np.testing.assert_array_equal(tick._host(order_host, by[f"{sonar}:order"]), [0, 1, 0, 1])


def test_the_remus_block_steps_each_world_on_its_own_thread(monkeypatch) -> None:
    monkeypatch.setenv("MARINESIM_JIT", "cuda")
    decls = _decls("remus100_survey", 2)
    names = [law.fn.__name__ for laws in decls for law in laws.laws]
    assert "pvs_substep" in names and "pvs_substep_threads" not in names
    nw, parts = gpu.parts(decls)
    assert nw == 2 and all(p.per == 1 for p in parts if p.kind == "rows")


def _laws(arrays: dict[str, np.ndarray], layout: Worlds | None) -> Laws:
    return Laws(
        laws=[Law("after_physics", copy_log_cm, ("cur", "log"))], arrays=arrays,
        logs=("log",), gpu=layout,
    )  # fmt: skip


def test_an_array_without_the_block_rows_is_named() -> None:
    a = {"cur": np.zeros((4, 2)), "log": np.zeros((2, 8, 4))}
    gpu.parts([_laws(a, Worlds(4, 2))])  # fine: both split into 2 worlds of 2 rows
    bad = {"cur": np.zeros((3, 2)), "log": np.zeros((2, 8, 4))}
    with pytest.raises(ValueError, match=r"array 'cur' \(3, 2\): axis 0 does not hold the block's 4"):
        gpu.parts([_laws(bad, Worlds(4, 2))])
    with pytest.raises(ValueError, match="4 rows do not split into 3 worlds"):
        gpu.parts([_laws(a, Worlds(4, 3))])


def test_a_layout_that_does_not_fit_its_arrays_names_the_plugin() -> None:
    bad = {"cur": np.zeros((3, 2)), "log": np.zeros((2, 8, 4))}  # cur: 3 rows, not 4
    decls = [_laws({"cur": np.zeros((4, 2)), "log": np.zeros((2, 8, 4))}, Worlds(4, 2)),
             _laws(bad, Worlds(4, 2))]  # fmt: skip
    with pytest.raises(ConfigError, match=(
        r"MARINESIM_JIT=cuda: plugin blk\.mine: its laws' CUDA layout \(Worlds\) does not fit: "
        r"array 'cur' \(3, 2\): axis 0 does not hold the block's 4 rows"
    )):  # fmt: skip
        gpu.require_layouts(decls, ["blk.pid", "blk.mine"])


def test_plugins_without_a_cuda_layout_are_named() -> None:
    a = {"cur": np.zeros((4, 2)), "log": np.zeros((2, 8, 4))}
    decls = [_laws(a, Worlds(4, 2)), _laws(dict(a), None)]
    with pytest.raises(ConfigError, match="MARINESIM_JIT=cuda: .* laws do not run on CUDA yet: blk.ekf"):
        gpu.require_layouts(decls, ["blk.pid", "blk.ekf"])
    gpu.require_layouts(decls[:1], ["blk.pid"])  # (no error)


def test_event_notes_merge_in_time_then_row_order() -> None:
    buf = np.full((8, 3), -9.0)
    cnt = np.array([1])
    buf[0] = (0.2, 4.0, 1.0)  # a note already there stays first
    got = np.zeros((2, 4, 3))
    got[0, :2] = [(0.6, 1.0, 2.0), (1.0, 0.0, -1.0)]  # world 0: rows 0..1
    got[1, :2] = [(0.6, 0.0, 3.0), (0.4, 1.0, 1.0)]  # world 1: rows 2..3 (local 0, 1)
    gpu.merge_notes(buf, cnt, got, np.array([[2], [2]]), col=1, per=2)
    assert cnt[0] == 5
    np.testing.assert_array_equal(
        buf[:5],
        [(0.2, 4, 1), (0.4, 3, 1), (0.6, 1, 2), (0.6, 2, 3), (1.0, 0, -1)],
    )
    assert (buf[5:] == -9.0).all()


_RUN = """
import json, sys
import numpy as np
from marinesim.scenario.build import build_simulation, load_scenario
name, reps, sets, out = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
sim = build_simulation(load_scenario(name, sets=sets), replicas=range(reps))
res = sim.run()
np.savez(out, **{k: np.asarray(v.values) for k, v in res.signals.items()})
ev = [[e.t, e.entity, e.kind, e.text] for e in res.events]
json.dump({"status": res.status, "events": ev, "why": sim.compiled_why_not,
           "compiled": res.manifest["compiled_ticks"], "ticks": res.manifest["ticks"],
           "metrics": res.metrics, "values": sim._metric_values,
           "bus": [sim.bus.published, sim.bus.delivered, sim.bus.unheard],
           "ended_by": str(res.manifest.get("ended_by")), "worlds": res.manifest.get("worlds")},
          open(out + ".json", "w"), default=float)
"""


def _run(tmp: Path, tag: str, name: str, reps: int, end: float, sets: dict | None = None,
         **env: str) -> tuple:  # fmt: skip
    out = tmp / f"{tag}.npz"
    e = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "MARINESIM_JIT")}
    r = subprocess.run(
        [sys.executable, "-c", _RUN, name, str(reps), json.dumps({"time.end": end, **(sets or {})}),
         str(out)],
        env={**e, **env}, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return np.load(out), json.loads(Path(str(out) + ".json").read_text())


def _same(tmp: Path, name: str, reps: int, end: float, sets: dict) -> tuple:
    """Run ``name`` on the interpreted tick and on CUDA in numba's simulator: every signal,
    the bus counts, the metrics, their values and the events must be the same bits."""
    ref, rmeta = _run(tmp, "interp", name, reps, end, sets, MARINESIM_JIT="interp")
    got, gmeta = _run(tmp, "cuda", name, reps, end, sets, MARINESIM_JIT="cuda",
                      NUMBA_ENABLE_CUDASIM="1")  # fmt: skip
    assert gmeta["why"] is None and gmeta["compiled"] >= 0.9 * gmeta["ticks"]
    assert sorted(got.files) == sorted(ref.files)
    for key in ref.files:
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
    for key in ("bus", "metrics", "values", "events", "status", "ended_by", "ticks", "worlds"):
        assert gmeta[key] == rmeta[key], key
    return got, gmeta


@pytest.mark.parametrize(
    ("name", "reps", "end"),
    [("demo_survey", 3, 130.0), ("remus100_survey", 3, 40.0), ("bluerov2_station_keeping", 2, 3.0),
     ("bluerov2_thruster_failure", 2, 21.0), ("tanker_heading_autopilot", 2, 20.0),
     ("torpedo_depth_heading", 2, 10.0), ("supply_dp_current", 2, 10.0),
     ("surftrak_sawtooth", 3, 12.0)],
)
def test_in_the_cuda_simulator_the_tick_gives_the_interpreted_bits(
    tmp_path: Path, name: str, reps: int, end: float
) -> None:
    """Two or three worlds: waypoints reached (event notes merged from each world's own slice),
    the gust script and a thruster failure (the plugins' ticks between the CUDA calls), the
    PythonVehicleSimulator fleet's autopilots, every signal of every frame."""
    ref, rmeta = _run(tmp_path, "interp", name, reps, end, MARINESIM_JIT="interp")
    got, gmeta = _run(tmp_path, "cuda", name, reps, end, MARINESIM_JIT="cuda", NUMBA_ENABLE_CUDASIM="1")
    assert gmeta["why"] is None and gmeta["status"] == rmeta["status"]
    assert gmeta["compiled"] >= 0.9 * gmeta["ticks"]
    assert sorted(got.files) == sorted(ref.files) and len(ref.files) >= 9
    for key in ref.files:
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
    assert gmeta["events"] == rmeta["events"]
    if name in ("demo_survey", "remus100_survey"):
        assert any(e[2] == "waypoint" for e in gmeta["events"])
    elif name == "surftrak_sawtooth":  # SURFTRAK took over (its first target is the plugins'
        # tick) and the worlds' noisy readings steered them apart
        assert (got["surftrak.mode_state"][:, -1] == 2.0).all()
        z = got["truth.pos"][:, -1, 2]
        assert np.ptp(z) > 1e-3 and np.isfinite(got["rangefinder.rf_cm"]).any()
    elif not name.startswith("bluerov2"):  # a PythonVehicleSimulator fleet vehicle moved
        pos = got["truth.pos"]
        assert np.nanmax(np.abs(pos[:, -1] - pos[:, 0])) > 0.1
    else:  # the thrusters pushed it: the T200 plant, the battery and the allocator ran
        soc = got["fossen6dof.soc"]
        assert np.nanmax(np.abs(got["alloc.force"])) > 0.1 and np.nanmax(soc) > np.nanmin(soc)
    if name == "bluerov2_thruster_failure":  # the failure at 20 s: the plugins' tick, then
        # the allocators of both blocks (pinv, qp) without thruster 1, on CUDA again
        assert sum(e[2] == "thruster_fail" for e in gmeta["events"]) == 2 * reps
    per = {"demo_survey": 3, "bluerov2_thruster_failure": 2}.get(name, 1)  # vehicles a world
    assert got["truth.pos"].shape[0] == reps * per


@pytest.mark.parametrize(("reps", "end", "cond"), [(3, 130.0, None), (1, 300.0, 95.0)])
def test_in_the_cuda_simulator_the_world_metrics_give_the_interpreted_bits(
    tmp_path: Path, reps: int, end: float, cond: float | None
) -> None:
    """``demo_survey`` with four world metrics: three worlds past the gust script (the plugins'
    tick between two CUDA calls: the metrics read ``truth.pos`` under a second name, one device
    array), and one world whose closest approach ends the run (``min_separation`` hands back
    when its end condition comes true)."""
    sets: dict = {"metrics": METRICS}
    if cond is not None:
        sets["end_conditions"] = ["time", {"metric": "cpa", "op": "<", "value": cond}]
    got, gmeta = _same(tmp_path, "demo_survey", reps, end, sets)
    assert {"dist.distance", "cpa.separation", "nav.error", "box.inside"} <= set(got.files)
    assert got["truth.pos"].shape[0] == 3 * reps
    if cond is None:  # (the worlds' own closest approaches: the smallest is the value)
        assert gmeta["values"]["cpa"] == np.nanmin(got["cpa.separation"])
    else:  # ended by the metric, before the time
        assert "cpa" in gmeta["ended_by"] and gmeta["ticks"] < end / 0.2
        assert gmeta["values"]["cpa"] < cond


@pytest.mark.parametrize(("belief", "end"), [("noisy_state", 130.0), ("nav_ekf", 60.0)])
def test_in_the_cuda_simulator_the_sensors_give_the_interpreted_bits(
    tmp_path: Path, belief: str, end: float
) -> None:
    """Three worlds of ``demo_survey`` with five navigation sensors and a belief writer
    (``noisy_state``, or ``nav_ekf`` fusing them: on CUDA a world fuses a topic when a row of
    its own delivered) steering the PID and waypoints, ``nav_error`` reading that belief: every
    signal, the bus counts (a DVL publication is a tick where a row of any world delivered)
    and the metrics."""
    got, gmeta = _same(tmp_path, "demo_survey", 3, end, SENSORS if belief == "noisy_state" else EKF)
    mode = got["dvl.mode"][:, 1:, 0].reshape(3, 3, -1) != 0  # worlds × vehicles × frames
    heard = mode.any(axis=1)  # a world's DVL delivered at that frame
    assert (heard.any(axis=0) & ~heard.all(axis=0)).sum() > 20  # some worlds only: the merge
    if belief == "noisy_state":  # (the EKF takes the samples on wires, not the bus)
        assert gmeta["bus"][2]["dvl/velocity"] == heard.any(axis=0).sum()
    else:
        assert gmeta["bus"][2]["nav/state"] == gmeta["ticks"] + 1 and "nav.cep" in got.files
    assert np.nanmax(got["nerr.error"]) > 0.1  # the belief is noisy, and the metric reads it


def test_in_the_cuda_simulator_two_blocks_with_contacts_give_the_interpreted_bits(
    tmp_path: Path,
) -> None:
    """``auv_survey_ins``, three worlds of two blocks (an INS/EKF each, five sensors, a sonar
    seeing the other AUV, four world metrics over both blocks): every signal, count, metric."""
    got, gmeta = _same(tmp_path, "auv_survey_ins", 3, 40.0, AUV)
    assert (np.nansum(got["sonar.detections"][..., 0], axis=1) > 0).all()  # each AUV saw
    assert gmeta["bus"][2]["contacts"] > 0 and np.isfinite(got["sonar.contact_pos"]).any()
    assert got["truth.pos"].shape[0] == 6  # (ins_auv × 3 worlds, then dr_auv × 3)


def test_in_the_cuda_simulator_worlds_that_end_apart_give_the_interpreted_bits(
    tmp_path: Path,
) -> None:
    """Four worlds of ``demo_survey`` with a small survey, which they finish (``all_done``) at
    three ticks: the CUDA tick goes on after a world ends (its truth held where it ended, its
    frames its end's), every signal, count, metric and world's end the interpreted tick's."""
    lm = "entities.survey.autonomy.survey.params.lawnmower"
    sets = {f"{lm}.length": 40.0, f"{lm}.width": 40.0, f"{lm}.spacing": 20.0,
            "metrics": [{"name": "dist", "plugin": "distance_travelled"}]}  # fmt: skip
    got, gmeta = _same(tmp_path, "demo_survey", 4, 150.0, sets)
    ends = gmeta["worlds"]["ended_tick"]
    assert len(set(ends)) == 3 and gmeta["compiled"] > min(ends)


def test_without_a_device_the_run_says_why(tmp_path: Path) -> None:
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a CUDA device is present")
    e = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    r = subprocess.run(
        [sys.executable, "-m", "marinesim", "run", "demo_survey", "--set", "time.end=2",
         "--no-plot", "--no-progress", "-o", str(tmp_path / "out")],
        env={**e, "MARINESIM_JIT": "cuda"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 2
    assert "MARINESIM_JIT=cuda: no CUDA device" in r.stderr
    assert "unset MARINESIM_JIT to run the tick on the CPU" in r.stderr


def test_on_a_device_without_numba_cuda_it_says_to_install_it(monkeypatch) -> None:
    import importlib.util

    from marinesim.core import compile as cc

    find = importlib.util.find_spec
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    monkeypatch.setattr(cc, "require_cuda", lambda *a: None)  # (as if a device were there)
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "numba_cuda" else find(name, *a)
    )
    with pytest.raises(ConfigError, match=r"needs numba-cuda \(pip install 'marinesim\[gpu\]'\)"):
        gpu.require_device()


@pytest.mark.parametrize(
    "name",
    ["demo_survey", "remus100_survey", "bluerov2_station_keeping", "bluerov2_thruster_failure",
     "tanker_heading_autopilot", "torpedo_depth_heading", "supply_dp_current",
     "surftrak_sawtooth", "demo_survey+sensors", "demo_survey+ekf", "auv_survey_ins"],
)
def test_the_kernel_compiles_for_a_device(name: str, monkeypatch, nvvm) -> None:
    monkeypatch.setenv("MARINESIM_JIT", "cuda")
    sets = {"demo_survey": {"metrics": METRICS}, "demo_survey+sensors": SENSORS,
            "demo_survey+ekf": EKF, "auv_survey_ins": AUV}.get(name)  # fmt: skip
    decls = _decls(name.split("+")[0], 2, sets)
    order, _ = wiring(decls)
    tick = gpu.GpuTick(decls, device=False)
    ptx = tick.ptx([array_of(decls, k) for k in order], cc=(9, 0))
    assert ".entry" in ptx and ".target sm_90" in ptx

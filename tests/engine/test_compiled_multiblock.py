"""Several entity blocks through one generated tick against the plugins' ticks (issue 19).

The compiled route composes the laws of every block into one tick (each block's wires its
own); every recorded signal, the events, the bus and hook-call counts and the plugins' end
state must be bit-identical whether a two-block scenario runs compiled or through the
plugins (``Simulation.compiled = False``, as ``MARINESIM_JIT=0``).  A law of one block that
hands a tick back restores every block at that tick.  The scenarios are bundled ones with a
second block added (:func:`_two`) and the bundled two-block ``bluerov2_thruster_failure``;
the tests share three plugin sets (three compiles per machine, cached on disk).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import yaml

from marinesim.core.errors import ConfigError
from marinesim.engine.compiled.route import plan
from marinesim.scenario.build import build_simulation, builtin_path, load_scenario, load_simulation
from marinesim.scenario.load import load_text
from marinesim.testing import assert_runs_identical, assert_values_identical

numba = pytest.importorskip("numba")


def _two(
    name: str,
    end: float,
    second: str | None = None,
    edit: Callable[[dict, dict], None] | None = None,
    sets: dict | None = None,
) -> str:
    """The text of bundled scenario ``name`` with a second entity block: a copy of its first
    block 40 m further east (or the first block of bundled ``second``), ``edit(first, added)``
    applied, ``time.end`` = ``end``."""
    d = copy.deepcopy(load_scenario(name, sets=sets).data)
    src = d if second is None else load_scenario(second).data
    e = copy.deepcopy(src["entities"][0])
    if second is None:
        e["name"] = e["name"] + "_b"
        e["spawn"]["east"] = float(e["spawn"].get("east", 0.0)) + 40.0
    d["entities"].append(e)
    if edit is not None:
        edit(d["entities"][0], e)
    d["time"]["end"] = end
    d["description"] = f"{name} with a second block ({e['name']})"
    return yaml.safe_dump(d, sort_keys=False)


def _sim(text: str, compiled: bool | None, base: str = "demo_survey") -> Any:
    sim = build_simulation(load_text(text, file="two_blocks.yaml", base_dir=builtin_path(base).parent))
    sim.compiled = compiled
    return sim


def _bytes(x: Any, depth: int = 0) -> Any:
    """A comparable picture of a plugin's state (arrays copied)."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, float | int | str | bool | np.generic) or x is None:
        return x
    if isinstance(x, dict):
        return {str(k): _bytes(v, depth + 1) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_bytes(v, depth + 1) for v in x]
    if depth < 3 and hasattr(x, "__dict__"):
        # (act_*: the usm model's actuator cache, keyed by the actuators' bits; the compiled
        # route leaves it as it was, still valid for its keys)
        return {k: _bytes(v, depth + 1) for k, v in vars(x).items() if not k.startswith("act_")}
    return type(x).__name__


def _end_state(sim: Any) -> list:
    """What every block's plugins and the engine hold after a run."""
    out: list = []
    for blk in sim.blocks:
        tr = blk.truth
        out += [blk.name, *(np.array(a) for a in (tr.pos, tr.quat, tr.vel, tr.ang_vel, tr.accel))]
        out += [tr.t, np.array(blk.active), np.array(sim._last_finite[blk.name])]
    for s in sim.slots:
        ctx = s.ctx
        out += [s.plugin.name, _bytes(dict(ctx.state)), dict(s.calls)]
        out += [ctx.t, ctx.tick, ctx.t_next, getattr(ctx, "substep", None)]
    rec = sim._recorder
    out += [sorted(sim.bus._seq.items()), sim.clock.k, rec._ticks, rec.frames]
    out += [{k: np.array(v) for k, v in rec.current.items()}]
    return out


def _both(text: str, base: str = "demo_survey", prepare: Callable[[Any], None] | None = None):  # noqa: ANN202
    """Python route, then compiled route: (sim, result) each, ``prepare(sim)`` first."""
    out = []
    for compiled in (False, None):
        sim = _sim(text, compiled, base)
        if prepare is not None:
            prepare(sim)
        out.append((sim, sim.run()))
    return out


def _check(pa: Any, a: Any, pb: Any, b: Any) -> None:
    assert b.manifest["compiled_why_not"] is None
    assert a.manifest["compiled_ticks"] == 0
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(_end_state(pa), _end_state(pb), routes=True, what="end state")


# ------------------------------------------------------------------ the composed source
def test_one_source_for_both_blocks_with_wires_of_their_own() -> None:
    from marinesim.engine.compiled.generate import array_of, tick_source

    sim = _sim(_two("bluerov2_station_keeping", 1.0), None, "bluerov2_station_keeping")
    why, entries, _sparse = plan(sim)
    assert why is None
    # the plugins' tick order: the chain position by position over the blocks, then motion
    assert [(s.block.name, s.plugin.name) for s, _laws in entries] == [
        ("rov", "hold"), ("rov_b", "hold"), ("rov", "alloc"), ("rov_b", "alloc"),
        ("rov", "fossen6dof"), ("rov_b", "fossen6dof"),
    ]  # fmt: skip
    decls = [laws for _s, laws in entries]
    src, order, state = tick_source(decls)
    wires = [k for k in order if k.startswith(("bus.", "truth."))]
    assert wires and all(k.rpartition("@")[2] in ("rov", "rov_b") for k in wires)
    rov = sorted(k.rpartition("@")[0] for k in wires if k.endswith("@rov"))
    assert rov == sorted(k.rpartition("@")[0] for k in wires if k.endswith("@rov_b"))
    # each block's wire is its own array, owned by a declaration of that block
    for k in wires:
        arr = array_of(decls, k)
        owner = next(ls for ls in decls if any(a is arr for a in ls.arrays.values()))
        assert owner.scope == k.rpartition("@")[2]
    for name in ("tick_run", "tick_loop"):  # the run's loop and the stepped run's
        loop = src[src.index(f"def {name}(") :].split("\n\n\n")[0]
        assert loop.count("for s in range(nsub)") == 2  # each block's motion, all substeps
    assert all(f"copy_into(a{i}, s{i})" in src for i in state)  # a hand-back restores both
    assert "copy_rows(SV, 1)" in src  # (the compiled loop: the rows of its copy table)


# ------------------------------------------------------------------ plugin set 1: BlueROV2
def test_two_bluerov2_blocks_compile_and_equal_the_plugin_ticks() -> None:
    # bundled bluerov2_thruster_failure (blocks rov_pinv, rov_qp: the same plugin set, so the
    # tick the other tests compile) without its failure, the second block holding another
    # heading
    d = copy.deepcopy(load_scenario("bluerov2_thruster_failure").data)
    d["script"] = []
    d["time"]["end"] = 3.0
    ctl = d["entities"][1]["controllers"]
    ctl[0] = {**ctl[0], "params": {**ctl[0]["params"], "heading_deg": 30.0}}  # (an alias)
    text = yaml.safe_dump(d, sort_keys=False)
    (pa, a), (pb, b) = _both(text, "bluerov2_thruster_failure")
    _check(pa, a, pb, b)
    assert [blk.name for blk in pb.blocks] == ["rov_pinv", "rov_qp"]
    assert pb.clock.k - 3 <= b.manifest["compiled_ticks"] < pb.clock.k  # all but the first
    # both blocks' frames come from the compiled tick: the second has swung to its 30° (the
    # heading loop's step response overshoots by a few degrees at 3 s), the first held 0°
    hdg = (b["truth.heading"][:, -1, 0] + 180.0) % 360.0 - 180.0
    assert hdg.shape == (2,) and abs(hdg[0]) < 2.0 and 20.0 < hdg[1] < 40.0
    assert np.all(np.isfinite(b["fossen6dof.thrust"]))


# --------------------------------------------------------------- plugin set 2: uSimMarine
def _usm_text(end: float, count_a: int = 1, script: list | None = None) -> str:
    def edit(first: dict, added: dict) -> None:
        first["count"] = count_a
        added["count"] = 1
        added["name"] = "lone"
        for blk in (first, added):
            blk["spawn"].pop("step", None)
            blk["spawn"].pop("spread", None)
            blk["autonomy"][0]["params"] = {
                "points_ne": [[-10.0, 0.0], [0.0, 15.0], [10.0, 0.0]],
                "speed": 2.0, "depth": 2.0, "capture_radius": 4.0, "slip_radius": 8.0,
                "lead": 5.0,
            }  # fmt: skip
        first["spawn"]["step"] = {"east": 110.0}
        first["autonomy"][0]["params"]["member_offset_ne"] = [
            [0.0, 110.0 * i] for i in range(count_a)
        ]

    text = _two("demo_survey", end, edit=edit)
    d = yaml.safe_load(text)
    d["end_conditions"] = ["time"]
    d["script"] = script if script is not None else d.get("script", [])
    return yaml.safe_dump(d, sort_keys=False)


def test_usm_blocks_of_two_and_one_vehicles() -> None:
    # a gust to every block at 20 s, one to the lone vehicle only at 30 s (a message to one
    # block: the plugins run that tick for both, then the compiled tick goes on)
    script = ['DRIFT_VECTOR_ADD="90,0.4" at 20', 'DRIFT_VECTOR_ADD="200,0.5" at 30 for lone']
    (pa, a), (pb, b) = _both(_usm_text(45.0, count_a=2, script=script))
    _check(pa, a, pb, b)
    assert [blk.n for blk in pb.blocks] == [2, 1]
    ticks = pb.clock.k
    assert ticks - 12 <= b.manifest["compiled_ticks"] < ticks - 2
    assert b["truth.pos"].shape[0] == 3
    # the lone vehicle's gust acts on it only
    kinds = [(e.t, e.entity) for e in b.events if e.kind == "script"]
    assert (30.0, "lone[0]") in kinds and (30.0, "survey[0]") not in kinds


def test_usm_two_blocks_same_seed_same_bytes() -> None:
    text = _usm_text(20.0, count_a=2)
    a, b = _sim(text, None).run(), _sim(text, None).run()
    assert a.manifest["compiled_ticks"] > 50
    assert_runs_identical(a, b)


def test_usm_two_blocks_step_by_step() -> None:
    # Simulation.step (the deferred bookkeeping, one tick per call) equals run()
    text = _usm_text(10.0, count_a=2)
    sa, sb = _sim(text, False), _sim(text, None)
    while sb.step(1):
        pass
    a, b = sa.run(), sb.run()
    assert b.manifest["compiled_ticks"] > 30
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(_end_state(sa), _end_state(sb), routes=True, what="end state")


# ------------------------------------------------- plugin set 3: the fleet, two kinds
def _fleet_text(end: float) -> str:
    def edit(first: dict, added: dict) -> None:
        # a signal has one unit and width over the blocks: the torpedo's motion plugin gets a
        # name of its own (its signals torpedo_motion.*, the tanker's fossen6dof.*)
        added["motion"]["name"] = "torpedo_motion"

    sets = {"time.dt": 0.1, "time.substeps": 5}
    return _two("tanker_heading_autopilot", end, second="torpedo_depth_heading", edit=edit, sets=sets)


def test_tanker_and_torpedo_blocks() -> None:
    (pa, a), (pb, b) = _both(_fleet_text(12.0), "tanker_heading_autopilot")
    _check(pa, a, pb, b)
    assert [blk.name for blk in pb.blocks] == ["tanker", "torpedo"]
    assert pb.clock.k - 3 <= b.manifest["compiled_ticks"] < pb.clock.k
    # each block's own autopilot acts: the torpedo dives, the tanker stays at the surface
    z = b["truth.pos"][:, -1, 2]
    assert abs(z[0]) < 1.0 and z[1] > 0.5


def test_a_hand_back_in_one_block_stops_both_at_the_same_tick() -> None:
    from marinesim.models.sixdof.motion import RowsState

    def prepare(sim: Any) -> None:
        sim.step(40)  # compiled ticks (the compiled route) …
        slot = next(s for s in sim.slots if s.block.name == "torpedo")
        st = slot.ctx.state
        x = st["x"].x.copy()
        x[:, 6] = 500.0  # … then the torpedo beyond its 50 m/s bound: its law hands back
        st["x"] = RowsState(x=x, alive=st["x"].alive.copy(), t=st["x"].t)

    (pa, a), (pb, b) = _both(_fleet_text(12.0), "tanker_heading_autopilot", prepare)
    assert a.status == b.status == "diverged"
    assert any("max_speed" in e.text for e in b.events)
    assert 30 <= b.manifest["compiled_ticks"] <= 40  # none after the hand-back
    # the tanker's tick of the hand-back ran once, through its plugin (not twice, not
    # compiled ahead): both blocks end at the same tick with the plugins' bits
    assert pa.clock.k == pb.clock.k == 41
    assert_runs_identical(a, b, routes=True)
    assert_values_identical(_end_state(pa), _end_state(pb), routes=True, what="end state")


# ---------------------------------------------------------------------------- why not
def test_a_block_that_cannot_compile_keeps_the_run_on_the_plugins() -> None:
    def edit(first: dict, added: dict) -> None:  # SimpleINS (Python-only) in the second block
        added["sensors"] = [{"name": "ins", "plugin": "simple_ins", "params": {
            "q_distance": 0.01, "q_time": 0.01, "vel_std": 0.05, "roll_std_deg": 0.1,
            "pitch_std_deg": 0.1, "yaw_std_deg": 0.5, "gps_std": 2.0,
            "surface_time_choices_s": [15.0, 30.0]}}]  # fmt: skip

    text = _two("demo_survey", 2.0, edit=edit)
    why = "block 'survey_b': plugin 'ins' runs only tick by tick"
    assert plan(_sim(text, None))[0] == why
    r = _sim(text, None).run()
    assert r.manifest["compiled_ticks"] == 0 and r.manifest["compiled_why_not"] == why
    sim = _sim(text, True)
    with pytest.raises(ConfigError, match=f"compiled tick does not apply: {why}"):
        sim.run()


def test_thruster_failure_plans_both_blocks() -> None:
    # two BlueROV2 blocks, pinv and qp allocators: both compiled, in one tick
    sim = load_simulation("bluerov2_thruster_failure", sets={"time.end": 1.0})
    why, entries, _sparse = plan(sim)
    assert why is None
    blocks = [(s.block.name, s.plugin.name) for s, _laws in entries]
    assert ("rov_pinv", "alloc") in blocks and ("rov_qp", "alloc") in blocks


def test_auv_survey_ins_names_its_first_python_only_plugin() -> None:
    # every plugin of both blocks and the world metrics are in the tick (test_compiled_ekf);
    # a delayed IMU needs the filter's replay: the INS/EKF of that block then says why
    sim = load_simulation("auv_survey_ins", sets={"time.end": 1.0})
    why, entries, _sparse = plan(sim)
    assert why is None
    names = [(s.block.name if s.block else "", s.plugin.name) for s, _laws in entries]
    assert ("ins_auv", "nav") in names and ("dr_auv", "sonar") in names and ("", "nav_error") in names
    sim = load_simulation(
        "auv_survey_ins", sets={"time.end": 1.0, "entities.0.sensors.0.params.delay": 0.2}
    )
    assert plan(sim)[0] == (
        "block 'ins_auv': plugin 'nav' runs only tick by tick here: 'imu' has a delay: its late "
        "samples need the filter's replay, which runs on the plugins"
    )

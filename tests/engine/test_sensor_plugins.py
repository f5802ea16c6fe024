"""Navigation sensor plugins in the engine: truth vs belief, determinism, streams, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, EngineError
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import Plugin
from marinesim.engine.plugins import sensors as S
from marinesim.engine.simulation import Simulation
from marinesim.scenario import load_simulation
from marinesim.testing import HarnessMotion


def _imu() -> PluginSpec:
    p = S.imu.ImuParams(
        accel_noise_std=0.02, gyro_noise_std=0.001, accel_bias_walk=1e-4, gyro_bias_walk=1e-5
    )
    return PluginSpec(S.ImuSensor("imu", p), 10.0)


def _ekf_set(dvl_max: float = 50.0, gps: bool = True) -> tuple[PluginSpec, ...]:
    out = [
        _imu(),
        PluginSpec(
            S.AhrsSensor(
                "ahrs", S.ahrs.AhrsParams(roll_std_deg=0.1, pitch_std_deg=0.1, yaw_std_deg=0.3)
            ),
            10.0,
        ),
        PluginSpec(S.DepthSensor("depth", S.depth.DepthParams(noise_std=0.05)), 1.0),
        PluginSpec(
            S.DvlSensor(
                "dvl",
                S.dvl.DvlParams(
                    noise_std=0.02, min_altitude=0.5, max_altitude=dvl_max, seafloor_depth=40.0
                ),
            ),
            10.0,
        ),
    ]
    if gps:
        out.append(PluginSpec(S.GpsSensor("gps", S.gps.GpsParams(noise_std=2.0)), 1.0))
    ekf = S.EkfParams(
        accel_noise_std=0.02,
        accel_bias_walk=1e-4,
        depth_std=0.05,
        gps_std=2.0,
        dvl_std=0.05,
        initial_pos_std=1.0,
        initial_vel_std=0.1,
        initial_bias_std=0.01,
    )
    out.append(PluginSpec(S.NavEkfEstimator("nav", ekf)))
    return tuple(out)


def _noisy() -> PluginSpec:
    p = S.nav.NoisyStateParams(
        pos_std=(1.0, 1.0, 0.2),
        pos_mean=(0.0, 0.0, 0.0),
        vel_std=(0.1, 0.1, 0.1),
        vel_mean=(0.0, 0.0, 0.0),
        att_std_deg=(0.5, 0.5, 1.0),
        att_mean_deg=(0.0, 0.0, 0.0),
    )
    return PluginSpec(S.NoisyStateSensor("noisy", p))


def _block(
    name: str,
    n: int = 2,
    sensors: tuple[PluginSpec, ...] = (),
    depth: float = 5.0,
    east: float = 0.0,
    ctrl: tuple[PluginSpec, ...] = (),
) -> BlockSpec:
    return BlockSpec(
        name,
        n,
        PluginSpec(HarnessMotion("motion")),
        controllers=ctrl,
        sensors=sensors,
        spawn=Spawn(depth=depth, east=east, speed=1.5, spread={"north": 5.0, "east": 5.0}),
    )


def _sim(blocks: list[BlockSpec], end: float = 10.0, seed: int = 1, **kw: Any) -> Simulation:
    return Simulation(blocks, dt=0.1, end=end, seed=seed, **kw)


def test_belief_writer_creates_separate_belief_and_truth_is_untouched() -> None:
    with_nav = _sim([_block("a", sensors=(_noisy(),))]).run()
    bare_sim = _sim([_block("a")])
    bare = bare_sim.run()
    # motion writes truth only: the belief writer changes nothing in truth
    np.testing.assert_array_equal(with_nav["truth.pos"], bare["truth.pos"])
    diff = with_nav["belief.pos"] - with_nav["truth.pos"]
    assert np.all(np.abs(diff[:, 1:]).max(axis=(1, 2)) > 0.1)
    assert "belief.pos" not in bare.signals
    assert with_nav.manifest["perfect_navigation"] == []
    assert bare.manifest["perfect_navigation"] == ["a[0]", "a[1]"]


def test_two_belief_writers_rejected_at_build() -> None:
    blk = _block("a", sensors=(_noisy(), *_ekf_set()))
    with pytest.raises(ConfigError, match="2 belief writers"):
        _sim([blk])


class _Peeker(Plugin):
    kind: ClassVar[str] = "controller"

    def control(self, ctx: Any, rng: Any) -> None:
        ctx.log("north", ctx.truth.pos[:, 0], "m")


class _DeclaredPeeker(_Peeker):
    reads_truth: ClassVar[bool] = True


class _CheatingEstimator(Plugin):
    kind: ClassVar[str] = "sensor"
    writes_belief: ClassVar[bool] = True

    def estimate(self, ctx: Any, rng: Any) -> None:
        ctx.set_belief(ctx.truth)


def test_controller_reading_truth_needs_uses_truth() -> None:
    # declared truth readers fail at build time
    with pytest.raises(ConfigError, match="uses_truth"):
        _sim([_block("a", ctrl=(PluginSpec(_DeclaredPeeker("peek")),))])
    # undeclared readers are stopped at their first hook (the runtime read-only second line)
    sim = _sim([_block("a", ctrl=(PluginSpec(_Peeker("peek")),))])
    with pytest.raises(EngineError, match="may not read truth"):
        sim.run()
    ok = _sim([_block("a", ctrl=(PluginSpec(_DeclaredPeeker("peek"), uses_truth=True),))]).run()
    assert ok.manifest["oracle"] == ["a.peek"]


def test_estimate_hook_may_not_read_truth() -> None:
    sim = _sim([_block("a", sensors=(PluginSpec(_CheatingEstimator("cheat")),))])
    with pytest.raises(EngineError, match="may not read truth"):
        sim.run()


def test_ekf_gps_fix_collapses_and_dvl_loss_above_max_altitude() -> None:
    # b: at the surface with GPS; c: at 5 m, DVL in range; d: at 5 m, DVL max altitude 20 m < 35 m
    blocks = [
        _block("b", depth=0.0, sensors=_ekf_set()),
        _block("c", sensors=_ekf_set(gps=False)),
        _block("d", sensors=_ekf_set(dvl_max=20.0, gps=False)),
    ]
    res = _sim(blocks, end=30.0).run()
    std = res["nav.pos_std"][:, -1, 0]
    mode = res["dvl.mode"][:, 1:, 0]
    assert np.all(mode[4:6] == 2)  # d: water track only (no bottom lock above max altitude)
    assert np.all(mode[2:4] == 1)
    assert np.all(std[0:2] < 1.0)  # GPS bounds the covariance below the 1 m launch sigma
    assert np.all(std[4:6] > 2.0 * std[2:4])  # losing the DVL lets the covariance grow
    err = np.linalg.norm((res["belief.pos"] - res["truth.pos"])[:, -1], axis=1)
    assert np.all(err < 4.0 * np.maximum(std, 0.1) * np.sqrt(3))


def test_same_seed_identical_and_order_and_other_sensors_do_not_matter() -> None:
    def run(blocks: list[BlockSpec]) -> Any:
        return _sim(blocks, end=5.0).run()

    a = _block("a", sensors=_ekf_set())
    b = _block("b", sensors=(_noisy(),), east=100.0)
    b_more = _block("b", sensors=(_noisy(), _imu()), east=100.0)
    r1 = run([a, b])
    r2 = run([a, b])
    for name in r1.signals:
        np.testing.assert_array_equal(r1[name], r2[name], err_msg=name)
    r3 = run([b, a])  # block order swapped: rows move, per-entity values do not
    np.testing.assert_array_equal(r3["belief.pos"][2:4], r1["belief.pos"][0:2])
    np.testing.assert_array_equal(r3["belief.pos"][0:2], r1["belief.pos"][2:4])
    r4 = run([a, b_more])  # a sensor added to block b leaves block a bit-identical
    np.testing.assert_array_equal(r4["belief.pos"][0:2], r1["belief.pos"][0:2])
    np.testing.assert_array_equal(r4["nav.pos_std"][0:2], r1["nav.pos_std"][0:2])
    r5 = _sim([a, b], end=5.0, seed=2).run()
    assert not np.array_equal(r5["belief.pos"][0:2], r1["belief.pos"][0:2])


def test_contacts_plugin_reports_only_in_view() -> None:
    son = S.contacts.ContactParams(
        max_range=60.0,
        fov_az_deg=90.0,
        fov_el_deg=60.0,
        range_std=0.5,
        az_std_deg=0.5,
        el_std_deg=0.5,
    )
    a = BlockSpec(
        "a",
        1,
        PluginSpec(HarnessMotion("motion")),
        sensors=(PluginSpec(S.ContactSensor("sonar", son), 1.0),),
        spawn=Spawn(depth=5.0, heading_deg=0.0),
    )
    ahead = BlockSpec(
        "ahead", 1, PluginSpec(HarnessMotion("motion")), spawn=Spawn(north=30.0, depth=5.0)
    )
    behind = BlockSpec(
        "behind", 1, PluginSpec(HarnessMotion("motion")), spawn=Spawn(north=-30.0, depth=5.0)
    )
    far = BlockSpec(
        "far", 1, PluginSpec(HarnessMotion("motion")), spawn=Spawn(north=90.0, depth=5.0)
    )
    ahead2 = BlockSpec(
        "ahead2",
        1,
        PluginSpec(HarnessMotion("motion")),
        spawn=Spawn(north=40.0, east=5.0, depth=5.0),
    )
    sim = _sim([a, ahead, behind, far, ahead2], end=5.0)
    res = sim.run()
    det = res["sonar.detections"][0, :, 0]
    assert np.all(det[~np.isnan(det)] == 2.0)  # only the two ahead are in range and in the FOV
    last = sim.slots[1].state["last"]
    assert sorted(last.contact_id.tolist()) == [1, 4]


HERE = Path(__file__).parent


def _scenario(tmp_path: Path, gps_params: str) -> Path:
    text = f"""marinesim: 1
name: t
seed: 1
time: {{dt: 0.1, end: 1.0}}
entities:
  - name: auv
    count: 1
    motion: {{plugin: usm}}
    sensors:
      - {{name: gps, plugin: gps, rate_hz: 1, params: {gps_params}}}
"""
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_missing_or_misspelled_sigma_exact_error(tmp_path: Path) -> None:
    p = _scenario(tmp_path, "{max_depth: 0.5}")
    with pytest.raises(ConfigError) as info:
        load_simulation(p)
    msg = str(info.value).replace(str(p), "s.yaml")
    assert (
        msg == "s.yaml:10:46: entities.auv.sensors.gps.params.noise_std: required value missing"
    ), msg
    p = _scenario(tmp_path, "{noise_sdt: 2.0}")
    with pytest.raises(ConfigError) as info:
        load_simulation(p)
    msg = str(info.value).replace(str(p), "s.yaml")
    assert msg == (
        "s.yaml:10:55: entities.auv.sensors.gps.params.noise_sdt: extra field not permitted "
        "(did you mean 'noise_std'?)"
    ), msg


def test_builtin_scenario_loads() -> None:
    from marinesim.scenario.build import builtin_path

    sim = load_simulation(builtin_path("auv_survey_ins"), variables={"end": "2"})
    res = sim.run()
    assert res.status == "completed"
    assert set(res.manifest["perfect_navigation"]) == set()
    assert np.isfinite(res["belief.pos"][:, -1]).all()
    from marinesim.io.nav_plots import plot_run

    figs = plot_run(res)
    assert set(figs) == {"tracks", "error", "contacts"}
    # tracks: truth and belief per entity (ellipses every 60 s: none yet in 2 s)
    assert len(figs["tracks"].axes[0].lines) >= 2 * res.n
    import matplotlib.pyplot as plt

    for f in figs.values():
        plt.close(f)


def test_simple_ins_resets_at_the_surface_after_the_seeded_surface_time() -> None:
    p = S.nav.SimpleInsParams(
        q_distance=0.01,
        q_time=0.05,
        vel_std=0.05,
        roll_std_deg=0.1,
        pitch_std_deg=0.1,
        yaw_std_deg=0.5,
        gps_std=1.5,
        surface_time_choices_s=(5.0, 10.0),
    )
    ins = PluginSpec(S.SimpleInsSensor("ins", p), 1.0)
    under = _block("under", n=3, sensors=(ins,))
    top = _block("top", n=3, depth=0.0, sensors=(ins,))
    res = _sim([under, top], end=20.0).run()
    std = res["ins.pos_std"][:, :, 0]
    grow = np.sqrt((0.01 * 1.5 + 0.05) * res.t)
    np.testing.assert_allclose(std[0:3, -1], grow[-1], rtol=1e-9)  # dt-correct growth under water
    np.testing.assert_allclose(std[3:6, -1], 1.5)  # reset to the GPS sigma after 5 or 10 s
    assert np.all(res["belief.pos"][0:3, -1] != res["truth.pos"][0:3, -1])


class _Dive(Plugin):
    """Straight north at 1 m/s, diving at 1 m/s."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        st = ctx.truth
        pos = st.pos.copy()
        pos[:, 0] += ctx.h
        pos[:, 2] += ctx.h
        ctx.set_truth(st.replace(pos=pos))


class _Listener(Plugin):
    kind: ClassVar[str] = "autonomy"
    subscribes: ClassVar[dict[str, str]] = {"depth/depth": "array"}

    def autonomy(self, ctx: Any, rng: Any) -> None:
        for m in ctx.inbox.topic("depth/depth"):
            ctx.state.setdefault("got", []).append((m.t_pub, m.t_stamp, float(m.value[0, 0])))


def test_delayed_depth_describes_truth_delay_seconds_ago() -> None:
    p = S.depth.DepthParams(noise_std=0.0, delay=0.25)
    blk = BlockSpec(
        "a",
        1,
        PluginSpec(_Dive("m")),
        autonomy=(PluginSpec(_Listener("ear")),),
        sensors=(PluginSpec(S.DepthSensor("depth", p)),),
        spawn=Spawn(depth=2.0),
    )
    sim = _sim([blk], end=2.0)
    sim.run()
    got = [s for s in sim.slots if s.plugin.name == "ear"][0].state["got"]
    late = [(tp, ts, v) for tp, ts, v in got if tp >= 0.5]
    assert len(late) > 10
    for tp, ts, v in late:
        assert ts == pytest.approx(tp - 0.25, abs=1e-12)
        assert v == pytest.approx(
            2.0 + ts, abs=1e-9
        )  # depth(t - delay), interpolated between ticks


def test_snapshot_restore_continues_bit_identically_with_ekf_and_contacts() -> None:
    son = S.contacts.ContactParams(
        max_range=200.0,
        fov_az_deg=360.0,
        fov_el_deg=180.0,
        range_std=1.0,
        az_std_deg=1.0,
        el_std_deg=1.0,
        detection_probability=0.5,
    )
    blk = _block("a", n=3, sensors=(*_ekf_set(), PluginSpec(S.ContactSensor("sonar", son), 2.0)))
    sim = _sim([blk], end=10.0)
    sim.step(20)
    snap = sim.snapshot()
    sim.step(25)
    first = (sim.block("a").belief.pos.copy(), sim.block("a").belief.cov.copy())
    sim.restore(snap)
    sim.step(25)
    np.testing.assert_array_equal(sim.block("a").belief.pos, first[0])
    np.testing.assert_array_equal(sim.block("a").belief.cov, first[1])


@pytest.mark.parametrize(
    "name",
    [
        "gps",
        "depth_sensor",
        "imu",
        "ahrs",
        "dvl",
        "noisy_state",
        "simple_ins",
        "nav_ekf",
        "contacts",
    ],
)
def test_engine_contract(name: str) -> None:
    from marinesim.core import registry
    from marinesim.testing import check_plugin

    cls = registry.get("sensor", name)
    if name == "contacts":
        # a vehicle's contacts depend on the other vehicles by design: only that check may fail
        pattern = (
            r"^ContactSensor: N=1 differs from row 0 of N=5: "
            r"\['under_test\.detections', 'under_test\.contact_pos'\]$"
        )
        with pytest.raises(AssertionError, match=pattern):
            check_plugin(cls, cls.example_params, ticks=20)
        return
    passed = check_plugin(cls, cls.example_params, ticks=20)
    assert {"unknown_key_rejected", "deterministic", "batch_equals_single"} <= set(passed)

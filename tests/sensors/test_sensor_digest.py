"""The seeded outputs of the navigation sensor set keep their bits (issue 19 §4).

``data/sensor_digest.json`` holds SHA-256 digests of a short run (20 s, three blocks: an EKF
set under water, an EKF set at the surface with GPS fixes, dropouts and delays, a SimpleINS
set; dense and k-d tree contact scans with false alarms and velocity estimates; the
``nav_error`` metric), taken before the sensor plugins were made faster:

* ``bus``: every message published (topic, block, rows, senders, payload, times, sequence);
* ``log``: every logged column of the run's result.

The EKF's compiled row laws and its numpy reference agree only to rounding, so each route has
its own digests (``MARINESIM_JIT=0`` runs the reference).  The digests hold on x86-64 without
AVX-512, where numpy's float64 transcendental functions call the C library; elsewhere the test
skips, saying why.  Regenerate only from a tree whose
sensors are known good: ``python tests/sensors/test_sensor_digest.py`` writes the file.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from marinesim.core.jitable import jit_enabled
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import NoParams, Plugin
from marinesim.engine.plugins import metrics as M
from marinesim.engine.plugins import sensors as S
from marinesim.engine.simulation import Simulation
from marinesim.sensors import nav
from marinesim.testing import HarnessMotion

GOLDEN = Path(__file__).parent / "data" / "sensor_digest.json"


class _Listener(Plugin):
    """Subscribes to every sensor topic, so that each is published (unheard ones are not)."""

    kind: ClassVar[str] = "autonomy"
    subscribes: ClassVar[dict[str, str]] = {
        t: "array"
        for t in ("contacts", "nav/state", "nav/cep", "nav/gps_fix", "gps/fix", "depth/depth")
    }

    def autonomy(self, ctx: Any, rng: Any) -> None:
        """Nothing: the messages are digested where they are published."""


def _contacts(name: str, tree: bool) -> PluginSpec:
    p = S.contacts.ContactParams(
        max_range=60.0,
        fov_az_deg=200.0,
        fov_el_deg=60.0,
        range_std=1.0,
        az_std_deg=1.0,
        el_std_deg=1.0,
        detection_probability=0.8,
        false_alarm_rate=0.5,
        max_false_alarms=2,
        vel_std=0.1 if tree else None,
        max_contacts=2,
        spatial_index_threshold=1 if tree else 256,
    )
    return PluginSpec(S.ContactSensor(name, p), 1.0)


def _ekf_set(faulty: bool) -> tuple[PluginSpec, ...]:
    drop = 0.1 if faulty else 0.0
    delay = 0.2 if faulty else 0.0
    imu = S.imu.ImuParams(
        accel_noise_std=0.02,
        gyro_noise_std=0.001,
        accel_bias_walk=1e-4,
        gyro_bias_walk=1e-5,
        dropout_probability=drop,
    )
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
    ahrs = S.ahrs.AhrsParams(roll_std_deg=0.1, pitch_std_deg=0.1, yaw_std_deg=0.5, delay=delay)
    dvl = S.dvl.DvlParams(
        noise_std=0.02,
        min_altitude=0.5,
        max_altitude=50.0,
        seafloor_depth=40.0,
        dropout_probability=drop,
        delay=delay,
    )
    gps = S.gps.GpsParams(noise_std=2.0, dropout_probability=drop, delay=delay)
    return (
        PluginSpec(S.ImuSensor("imu", imu), 10.0),
        PluginSpec(S.AhrsSensor("ahrs", ahrs), 10.0),
        PluginSpec(S.DepthSensor("depth", S.depth.DepthParams(noise_std=0.05)), 1.0),
        PluginSpec(S.DvlSensor("dvl", dvl), 10.0),
        PluginSpec(S.GpsSensor("gps", gps), 1.0),
        PluginSpec(S.NavEkfEstimator("nav", ekf)),
        _contacts("sonar", faulty),
    )


def _ins_set() -> tuple[PluginSpec, ...]:
    ins = S.nav.SimpleInsParams(**S.SimpleInsSensor.example_params)
    return (PluginSpec(S.SimpleInsSensor("ins", ins)), _contacts("sonar", True))


def _block(name: str, n: int, sensors: tuple[PluginSpec, ...], depth: float) -> BlockSpec:
    return BlockSpec(
        name,
        n,
        PluginSpec(HarnessMotion("motion")),
        sensors=sensors,
        autonomy=(PluginSpec(_Listener("listen", NoParams())),),
        spawn=Spawn(depth=depth, speed=1.5, spread={"north": 30.0, "east": 30.0}),
    )


def _feed(h: Any, a: Any) -> None:
    arr = np.ascontiguousarray(a)
    h.update(str((arr.dtype.str, arr.shape)).encode())
    h.update(arr.tobytes() if arr.dtype.kind != "O" else repr(arr.tolist()).encode())


def digests() -> dict[str, str]:
    """Digests of the bus messages and of the logged columns of the seeded run."""
    blocks = [
        _block("deep", 4, _ekf_set(False), 5.0),
        _block("surf", 3, _ekf_set(True), 0.0),
        _block("ins", 3, _ins_set(), 0.0),
    ]
    world = [PluginSpec(M.NavError("nav_error", NoParams()))]
    sim = Simulation(blocks, dt=0.1, end=20.0, seed=7, world=world)
    bus = sim.bus
    hb = hashlib.sha256()
    enqueue = bus.enqueue

    def tap(topic: str, block: str, rows: Any, sender: Any, value: Any, *times: Any) -> Any:
        hb.update(f"{topic}|{block}|{times!r}".encode())
        _feed(hb, rows)
        _feed(hb, sender)
        _feed(hb, value)
        return enqueue(topic, block, rows, sender, value, *times)

    bus.enqueue = tap  # type: ignore[method-assign]
    res = sim.run()
    assert res.status == "completed", res.status
    hl = hashlib.sha256()
    cols = res.columns()
    assert any("nav.cep" in c for c in cols) and any("sonar" in c for c in cols), sorted(cols)
    for name in sorted(cols):
        hl.update(name.encode())
        _feed(hl, cols[name])
    return {"bus": hb.hexdigest(), "log": hl.hexdigest()}


def _route() -> str:
    return "compiled" if jit_enabled() else "numpy"


def _simd_note() -> str | None:
    """Why the recorded digests cannot hold on this machine, or None.

    They were recorded where numpy's float64 exp, sin, cos and arctan2 call the C library
    (x86-64 without AVX-512); numpy's AVX-512 loops of those functions round some values
    differently in the last bit, so there every digest differs whatever the sensors do.
    """
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # pragma: no cover - numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    if feats.get("AVX512F") or feats.get("AVX512_SKX"):
        return "digests recorded without AVX-512 (numpy's AVX-512 exp/sin/cos round otherwise)"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"digests recorded on x86-64, not {platform.machine()} (libm rounding)"
    return None


def test_sensor_set_keeps_its_bits() -> None:
    note = _simd_note()
    if note:
        pytest.skip(note)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert digests() == golden[_route()]


if __name__ == "__main__":
    data = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    data[_route()] = digests()
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote the {_route()} digests to {GOLDEN}", file=sys.stderr)


@pytest.mark.parametrize("n", [1, 5, 8, 24, 128, 136, 1024, 20000])
def test_cep50_sums_in_numpys_pairwise_order(n: int) -> None:
    """CEP50's node sums (one vector step per node over the rows) are np.add.reduce's bits."""
    rng = np.random.default_rng(n)
    w = rng.random((7, n)) * np.exp(3.0 * rng.normal(size=(7, n)))
    assert np.array_equal(nav._pairwise(np.ascontiguousarray(w.T)), np.add.reduce(w, axis=1))

"""SURFTRAK acceptance: the twelve checks of the SURFTRAK spec §16 with its numeric bands.

Common setup (spec §16): 400 Hz, rangefinder 10 Hz, delay 0.3 s, σ 0.05 m, fixed seed, start
z = −11.15 m over a −20 m floor in ALT_HOLD, SURFTRAK after the 10th reading, sitl.params
(RNGFND1 0.5/50 m, SURFTRAK_DEPTH −100 cm, PSC_JERK_Z 8, PILOT_ACCEL_Z 500), ``sitl_vertical``.
e = true altitude − target at the 10 Hz rows (the times the readings describe) after engagement.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from marinesim.control.pilot import PilotScript
from marinesim.control.rangefinder_health import (
    STATUS_GOOD,
    STATUS_HIGH,
    STATUS_LOW,
    STATUS_NODATA,
    RangefinderHealth,
)
from marinesim.core.errors import ConfigWarning
from marinesim.interop.surftrak_runner import run_surftrak, sitl_params
from marinesim.models.heave import HeaveParams

DT = 0.0025
SEED = 7


def _tick(t: float) -> int:
    return int(round(t / DT))


def _cols(res, i=0):
    return {k: v[i] for k, v in res.columns.items()}


def _trace(res, i=0):
    return {k: v[i] for k, v in res.trace.items()}


@pytest.fixture(scope="module")
def params():
    return sitl_params()


@pytest.fixture(scope="module")
def sawtooth():
    return run_surftrak("sawtooth", duration=150.0, seed=SEED)


# ----------------------------------------------------------------------------- 1
def test_1_sawtooth_tracking(sawtooth):
    m = sawtooth.metrics
    assert 0.28 <= m["rms_e"] <= 0.45
    c = _cols(sawtooth)
    t, ter, talt = c["t"], c["terrain"], c["TAlt"]
    e = c["true_alt"] - c["DSAlt"]
    assert c["CRt"].min() >= -60 and c["CRt"].max() <= 80
    jumps = np.flatnonzero(np.diff(ter) > 0.5) + 1
    jumps = [j for j in jumps if t[j] > m["engage_t"]]
    assert len(jumps) == 6
    for j in jumps:
        tj = t[j]
        # the ramp begins at the next change of the terrain after the jump
        later = np.flatnonzero((t > tj) & (np.abs(np.diff(ter, prepend=ter[0])) > 1e-3))
        t_ramp = t[later[0]]
        win = (t >= tj) & (t < tj + 10.0)
        assert 0.9 <= np.abs(e[win]).max() <= 1.1  # the jump itself
        assert 0.35 <= e[win].max() <= 0.65  # opposite-side overshoot
        settled = (t >= tj + 7.5) & (t < t_ramp)
        assert settled.any() and np.abs(e[settled]).max() <= 0.30
        # terrain-estimate step response (CTUN.TAlt, 1 m step)
        step = talt - talt[j - 1]
        w = (t >= tj) & (t < tj + 8.0)
        tt, s = t[w] - tj, step[w]
        t50, t90 = tt[np.argmax(s >= 0.5)], tt[np.argmax(s >= 0.9)]
        assert 0.6 - 1e-9 <= t50 <= 1.0 + 1e-9
        assert 1.1 - 1e-9 <= t90 <= 1.6 + 1e-9
        assert 1.40 <= s.max() <= 1.65


# ----------------------------------------------------------------------------- 2
def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    out, start = [], None
    for i, v in enumerate(mask):
        if v and start is None:
            start = i
        if not v and start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(mask)))
    return out


def test_2_trapezoid_tracking():
    res = run_surftrak("trapezoid", duration=200.0, seed=SEED)
    c = _cols(res)
    t, ter = c["t"], c["terrain"]
    sel = t >= res.metrics["engage_t"]
    e = c["true_alt"] - c["DSAlt"]
    assert np.abs(e[sel]).max() <= 0.50
    d = np.diff(ter, prepend=ter[0])
    # the slope of a ramp row is ±0.02 m per 0.1 s; flats have d == 0
    for a, b in _runs((d > 0) & (d < 0.1)):
        if t[b - 1] - t[a] < 20.0:
            continue
        h = a + (b - a) // 2
        assert -0.32 <= e[h:b].mean() <= -0.15  # rising floor: too close
    n_fall = 0
    for a, b in _runs((d < 0) & (d > -0.1)):
        if t[b - 1] - t[a] < 20.0:
            continue
        n_fall += 1
        h = a + (b - a) // 2
        assert 0.15 <= e[h:b].mean() <= 0.32  # falling floor: too far
    assert n_fall >= 2
    for a, b in _runs(d == 0):
        if t[b - 1] - t[a] < 15.0 or t[a] < res.metrics["engage_t"]:
            continue
        h = a + (b - a) // 2
        assert np.abs(e[h:b]).max() <= 0.10


# ----------------------------------------------------------------------------- 3
def test_3_flat_hold():
    res = run_surftrak("zeros", duration=60.0, seed=SEED)
    c = _cols(res)
    m = res.metrics
    sel = c["t"] >= m["engage_t"] + 5.0
    e = c["true_alt"][sel] - c["DSAlt"][sel]
    assert np.abs(e).max() <= 0.08
    assert np.sqrt(np.mean(e * e)) <= 0.03
    assert sum(x.startswith("rangefinder target is") for x in res.texts()) == 1
    i0 = int(np.argmax(c["DSAlt"] > 0))
    assert abs(m["target"] - c["true_alt"][i0]) <= 0.05


# ----------------------------------------------------------------------------- 4
def _health(sq_min=90.0, pmin=50.0, pmax=5000.0):
    return RangefinderHealth(0.0, pmin, pmax, sq_min)


def test_4_health_three_cycles_and_timeout():
    h = _health()
    healthy_at = None
    for k in range(0, 41):  # 20 Hz cycles over 2 s; 10 Hz messages from t = 0
        now = k * 50_000.0
        if k % 2 == 0:
            h.handle_message(True, now, 900.0, 50.0, 5000.0, 100.0)
        h.update(now, -1000.0)
        if h.alt_healthy and healthy_at is None:
            healthy_at = now
    assert healthy_at == 100_000.0  # cycles at arrival, +50, +100 ms
    # silence: last message at 2.0 s; stale reading counts until 500 ms, NoData at 550 ms
    for k in range(41, 60):
        now = k * 50_000.0
        h.update(now, -1000.0)
        if now - 2_000_000.0 <= 500_000.0:
            assert h.status == STATUS_GOOD and h.alt_healthy
        else:
            assert h.status == STATUS_NODATA and not h.alt_healthy and h.valid_count == 0
    assert h.distance_cm == 0.0
    # any out-of-range cycle resets the count
    h = _health()
    for k, d in enumerate([900, 900, 30, 900, 900, 900]):
        h.handle_message(True, k * 50_000.0, float(d), 50.0, 5000.0, 100.0)
        h.update(k * 50_000.0, 0.0)
        if k == 2:
            assert h.status == STATUS_LOW and h.valid_count == 0
    assert h.valid_count == 3 and h.alt_healthy
    h.handle_message(True, 6 * 50_000.0, 6000.0, 50.0, 5000.0, 100.0)
    h.update(6 * 50_000.0, 0.0)
    assert h.status == STATUS_HIGH and not h.alt_healthy


def test_4_health_limits_and_signal_quality():
    h = _health(pmin=50.0, pmax=5000.0)
    h.handle_message(True, 0.0, 900.0, 100.0, 3000.0, 100.0)
    assert (h.msg_min, h.msg_max) == (100.0, 3000.0)  # max(param, msg), min(param, msg)
    h.handle_message(True, 0.0, 900.0, 10.0, 9000.0, 100.0)
    assert (h.msg_min, h.msg_max) == (50.0, 5000.0)
    h.handle_message(True, 0.0, 900.0, 0.0, 0.0, 100.0)
    assert (h.msg_min, h.msg_max) == (50.0, 5000.0)  # 0/0: parameters

    def healthy_with(sq: float) -> bool:
        h = _health(sq_min=90.0)
        for k in range(3):
            h.handle_message(True, k * 50_000.0, 900.0, 50.0, 5000.0, sq)
            h.update(k * 50_000.0, 0.0)
        return bool(h.alt_healthy)

    assert healthy_with(0.0)  # unknown → accepted
    assert not healthy_with(1.0)  # 1 → 0
    assert not healthy_with(89.0)
    assert healthy_with(90.0)
    # a low-SQ in-range reading keeps the valid count: the first good-SQ one is healthy at once
    h = _health()
    for k in range(5):
        h.handle_message(True, k * 50_000.0, 555.0, 50.0, 5000.0, 10.0)
        h.update(k * 50_000.0, 0.0)
        assert not h.alt_healthy
    assert h.valid_count == 5
    h.handle_message(True, 5 * 50_000.0, 900.0, 50.0, 5000.0, 100.0)
    h.update(5 * 50_000.0, 0.0)
    assert h.alt_healthy


# ----------------------------------------------------------------------------- 5
def test_5_low_signal_quality_holds(params):
    res = run_surftrak("test_signal_quality", duration=64.0, seed=SEED, trace=True)
    texts = res.texts()
    assert texts[0] == "waiting for a rangefinder reading"
    targets = [x for x in texts if x.startswith("rangefinder target is")]
    assert len(targets) == 1 and "5.55" not in targets[0]
    q = res.stamped["signal_quality"][0]
    rf = res.stamped["rf_cm"][0]
    first_good = int(np.argmax(q == 100))
    tr = _trace(res)
    k_set = int(np.argmax(tr["target"] > 0))
    assert k_set == _tick(0.3 + 0.1 * first_good)  # set at the first SQ-100 reading
    assert abs(tr["target"][k_set] - rf[first_good]) <= 1.0  # filter reset: ±1 cm
    low = q == 10
    checked = 0
    for a, b in _runs(low):
        ka, kb = _tick(0.3 + 0.1 * a), min(_tick(0.3 + 0.1 * b), len(tr["t"]))
        if tr["target"][ka] <= 0:
            continue
        off = tr["off_target"][ka:kb]
        assert np.all(off == off[0])  # bit-identical terrain-offset target
        assert np.all(tr["target"][ka:kb] == tr["target"][ka])
        end = kb - 1
        assert abs(tr["z"][end] - (tr["off_target"][end] + tr["target"][end])) <= 10.0
        assert abs(tr["vz"][end]) <= 8.0
        checked += 1
    assert checked >= 6
    # negative control: with RNGFND_SQ_MIN 0 the low-quality 5.55 m reading becomes the target
    neg = run_surftrak(
        "test_signal_quality", duration=10.0, seed=SEED,
        params=params.model_copy(update={"RNGFND_SQ_MIN": 0.0}),
    )  # fmt: skip
    assert "rangefinder target is 5.55 meters" in neg.texts()


# ----------------------------------------------------------------------------- 6
def test_6_dropouts():
    res = run_surftrak("stress", duration=30.0, seed=SEED, trace=True)
    tr = _trace(res)
    t, ok = tr["t"], tr["healthy"] > 0
    rows = res.stamped["rf_cm"][0]
    sent_t = 0.3 + 0.1 * np.arange(len(rows))
    sent = rows >= 0
    falls = np.flatnonzero(ok[:-1] & ~ok[1:]) + 1
    rises = np.flatnonzero(~ok[:-1] & ok[1:]) + 1
    assert len(falls) >= 3 and len(rises) >= 3
    for k in falls:
        last = sent_t[sent & (sent_t <= t[k] + 1e-9)].max()
        assert 0.50 - 1e-9 <= t[k] - last <= 0.55 + 1e-9
    for k in rises[1:]:
        last_missing = sent_t[~sent & (sent_t <= t[k] + 1e-9)].max()
        first = sent_t[sent & (sent_t > last_missing)].min()  # first message after the gap
        before = sent_t[sent & (sent_t < last_missing)].max()
        assert first - before > 1.0
        assert t[k] - first == pytest.approx(0.10, abs=1e-9)
        # recovery after > 1 s: the filter is reset to the raw reading exactly
        assert tr["filt"][k] == tr["dist"][k]
    assert sum(x.startswith("rangefinder target is") for x in res.texts()) == 1


# ----------------------------------------------------------------------------- 7
def test_7_surface_reset(params):
    pilot = PilotScript.from_steps([(2.0, "climb", 200.0), (10.0, "climb", 0.0)], params.stick())
    res = run_surftrak("zeros", duration=40.0, seed=SEED, pilot=pilot, trace=True)
    tr = _trace(res)
    texts = res.texts()
    assert "descend below -1.000000 meters to set rangefinder target" in texts
    after = [m for m in res.messages if m.t >= 10.0]
    assert not any(m.text.startswith("rangefinder target is") for m in after)
    c = _cols(res)
    assert np.all(c["DSAlt"][c["t"] >= 10.0] == -0.01)
    k = _tick(10.0)
    assert tr["target"][k] == -1.0
    # target capped at SURFACE_DEPTH - 5 cm (the shaped desired part may creep < 0.5 cm)
    assert np.all(tr["pos_target"][_tick(12.0) :] <= -15.0 + 0.5)
    # the integrator wound up during the climb (I = 0.1) unwinds slowly: settled after 30 s
    z_end = tr["z"][_tick(30.0) :] * 0.01
    assert np.all(np.abs(z_end + 0.15) <= 0.05)
    assert np.any(tr["healthy"][_tick(30.0) :] > 0)  # healthy, yet no target above the ceiling
    # second case: release at ≈ −3 m after 6 s; a target is set, the coast reaches the surface
    pilot = PilotScript.from_steps([(2.0, "climb", 200.0), (8.0, "climb", 0.0)], params.stick())
    res = run_surftrak("zeros", duration=40.0, seed=SEED, pilot=pilot, trace=True)
    tr = _trace(res)
    assert tr["z"][_tick(8.0)] == pytest.approx(-300.0, abs=30.0)
    set_msgs = [m for m in res.messages if m.t >= 8.0 and m.text.startswith("rangefinder target")]
    assert len(set_msgs) == 1 and abs(float(set_msgs[0].text.split()[3]) - 17.0) < 0.5
    assert tr["at_surface"].any()
    assert tr["target"][-1] == -1.0
    assert np.all(np.abs(tr["z"][_tick(30.0) :] * 0.01 + 0.15) <= 0.05)


# ----------------------------------------------------------------------------- 8
def test_8_bottom_reset(params):
    # the sub is pushed onto a ledge at -12 m (the rangefinder still sees the -20 m floor)
    pilot = PilotScript.from_steps([(3.0, "throttle", 0.0), (8.0, "throttle", 500.0)])
    res = run_surftrak("zeros", duration=12.0, seed=SEED, pilot=pilot, trace=True,
                       contact_floor=-12.0)  # fmt: skip
    tr = _trace(res)
    cond = (tr["limit"] < 0) & (np.abs(tr["vz"]) < 5.0)
    on = int(np.argmax(tr["at_bottom"] > 0))
    start = on
    while start > 0 and cond[start - 1]:
        start -= 1
    assert on - start in (400, 401)  # 1.00 s ± 1 loop
    k = _tick(8.0)  # stick centred: reset at the bottom
    assert tr["at_bottom"][k] and tr["target"][k] == -1.0
    # z + 10 cm, then shaped by this loop's decaying desired velocity (< 1 cm)
    assert tr["pos_target"][k] >= tr["z"][k] + 10.0 - 1.0
    cleared = k + int(np.argmax(tr["at_bottom"][k:] == 0))
    later = [m for m in res.messages if m.t > cleared * DT and "target is" in m.text]
    assert later and later[0].t <= cleared * DT + 0.2
    assert tr["target"][-1] > 0


# ----------------------------------------------------------------------------- 9
def test_9_ceiling():
    res = run_surftrak("trapezoid", duration=110.0, seed=SEED, start_z=-4.0)
    c = _cols(res)
    assert res.metrics["target"] == pytest.approx(16.0, abs=0.15)
    assert sum(x.startswith("rangefinder target is") for x in res.texts()) == 1
    t, z = c["t"], c["Alt"]
    plateau = (t > 50.0) & (t < 65.0)
    assert np.all(np.abs(z[plateau] + 1.0) <= 0.05)
    assert z.max() <= -0.90
    assert abs(z[t > 100.0].mean() + 4.0) <= 0.15


# ----------------------------------------------------------------------------- 10
def test_10_pilot_override_bookkeeping(params):
    pilot = PilotScript.from_steps([(5.0, "climb", 50.0), (7.0, "climb", 0.0)], params.stick())
    calls = []

    def scripted(ap):
        calls.append(ap.set_rangefinder_target_cm(500.0))

    res = run_surftrak("zeros", duration=12.0, seed=SEED, pilot=pilot, trace=True,
                       events=[(0.5, scripted)])  # fmt: skip
    assert calls == [False]
    assert res.texts()[0] == "wrong mode, rangefinder target not set"
    tr = _trace(res)
    ks, kr = _tick(5.0), _tick(7.0)
    old = tr["target"][ks]
    new = tr["target"][kr]
    assert new == old + (tr["z"][kr] - tr["z"][ks])  # float precision: the same expression
    assert f"rangefinder target is {new * 0.01:.2f} meters" in res.texts()
    assert abs(tr["pos_target"][kr] - tr["pos_target"][kr - 1]) < 0.1 + 1.0  # < 1 mm + 1 step
    # the retarget itself keeps the total target (pos_target is shaped every loop: compare the
    # jump with the neighbouring loops' steps)
    steps = np.abs(np.diff(tr["pos_target"][kr - 5 : kr + 5]))
    assert steps.max() - np.median(steps) < 0.1
    # a release that would put the target below RNGFND1_MIN
    pilot = PilotScript.from_steps([(3.0, "climb", -100.0), (12.5, "climb", 0.0)], params.stick())
    res = run_surftrak("zeros", duration=13.5, seed=SEED, pilot=pilot, trace=True)
    assert "rangefinder target below minimum, ignored" in res.texts()
    tr = _trace(res)
    assert tr["target"][_tick(12.5)] == -1.0


# ----------------------------------------------------------------------------- 11
@pytest.mark.parametrize(("accel", "kpv"), [(500.0, 0.8), (200.0, 2.0)])
def test_11_delay_vs_kpv(params, accel, kpv):
    p = params.model_copy(update={"PSC_JERK_Z": 8.0, "PILOT_ACCEL_Z": accel})
    assert p.kpv == pytest.approx(kpv)
    if kpv > 1.0:
        with pytest.warns(ConfigWarning, match="KPv = 50\\*PSC_JERK_Z/PILOT_ACCEL_Z = 2.00"):
            res = run_surftrak("zeros", duration=120.0, seed=SEED, delay=0.8, params=p)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConfigWarning)
            res = run_surftrak("zeros", duration=120.0, seed=SEED, delay=0.8, params=p)
    c = _cols(res)
    e = (c["true_alt"] - c["DSAlt"])[c["t"] >= 60.0]
    rms = float(np.sqrt(np.mean(e * e)))
    if kpv < 1.0:
        assert rms <= 0.05
    else:
        assert rms >= 0.3


# ----------------------------------------------------------------------------- 12
def test_12_determinism_and_seed(sawtooth):
    again = run_surftrak("sawtooth", duration=150.0, seed=SEED)
    for k, v in sawtooth.columns.items():
        assert np.array_equal(v, again.columns[k]), k
    for k, v in sawtooth.stamped.items():
        assert np.array_equal(v, again.stamped[k]), k
    other = run_surftrak("sawtooth", duration=5.0, seed=SEED + 1)
    assert not np.array_equal(other.stamped["rf_cm"], sawtooth.stamped["rf_cm"][:, :47])


def test_12_batch_equals_single():
    single = run_surftrak("sawtooth", duration=4.0, seed=SEED)
    batch = run_surftrak("sawtooth", duration=4.0, seed=SEED, n=3)
    for k, v in single.columns.items():
        assert np.array_equal(v[0], batch.columns[k][0]), k
    assert not np.array_equal(batch.columns["SAlt"][1], batch.columns["SAlt"][0])


# ----------------------------------------------------------------------------- engine (issue §5)
def test_engine_scenario_gives_the_same_numbers():
    from marinesim.scenario.build import load_simulation

    res = load_simulation("surftrak_sawtooth", variables={"end": 12}, seed=1).run()
    ref = run_surftrak("sawtooth", duration=12.0, seed=1)
    # the controller logs at its 10 Hz ticks t_k; the engine records the value at t_k + dt
    idx = np.round((ref.columns["t"][0] + DT) / DT).astype(int)
    for sig, col in [("DSAlt", "DSAlt"), ("Alt", "Alt"), ("DAlt", "DAlt"), ("TAlt", "TAlt"),
                     ("SAlt", "SAlt"), ("DCRt", "DCRt"), ("CRt", "CRt")]:  # fmt: skip
        np.testing.assert_array_equal(res[f"surftrak.{sig}"][0, idx, 0], ref.columns[col][0])
    texts = [e.text for e in res.events if e.kind == "statustext"]
    assert texts == ref.texts() == ["rangefinder target is 8.84 meters"]


@pytest.mark.parametrize("name", ["SitlVerticalMotion", "RangefinderSensor", "SurftrakController"])
def test_engine_plugins_pass_check_plugin(name):
    from marinesim.engine.plugins import rangefinder, surftrak
    from marinesim.testing import check_plugin

    cls = getattr(surftrak, name, None) or getattr(rangefinder, name)
    passed = check_plugin(cls, dt=DT, ticks=120)
    assert {"unknown_key_rejected", "deterministic", "batch_equals_single"} <= set(passed)


def test_baro_noise_option_corrupts_belief_only():
    res = run_surftrak("zeros", duration=10.0, seed=SEED, heave=HeaveParams(baro_noise_m=0.01))
    c = _cols(res)
    d = c["Alt"] - c["BAlt"]  # belief - truth (m)
    assert 0.006 <= d.std() <= 0.014 and abs(d.mean()) < 0.005
    again = run_surftrak("zeros", duration=10.0, seed=SEED, heave=HeaveParams(baro_noise_m=0.01))
    assert np.array_equal(again.columns["Alt"], res.columns["Alt"])

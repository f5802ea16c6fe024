"""SURFTRAK: marinesim's port against the ArduSub firmware, on the same plant and inputs.

Both sides fly the recorded sessions' reference plant (``../shared/reference/ardusub_sitl``
README §4: BlueROV2 heave/roll/yaw, T200 16 V curve, the sawtooth floor, surge 0.5 m/s from
t = 70 s, a 10 Hz sample-and-hold sonar with ``delay``) through session c's script: ALT_HOLD
at 23.1 s, stick z = 250 from 25.1 to 47.3 s, SURFTRAK at 51.3 s, stick z = 700 from 165 to
167 s, end at 200 s.

* ``port``: :class:`marinesim.control.surftrak.ArduSubVertical` at 400 Hz with the session's
  parameters (ArduSub's ``sub.parm`` + ``session.parm``, as logged in the ``.BIN``), fed what
  the firmware is fed: depth as ArduSub reads it (1.0247 × the true depth change, README
  §2.4), the specific force, ``rng_1`` sampled by the 20 Hz rangefinder task; height and
  climb rate through :mod:`marinesim.sensors.ekf3_height` (the firmware's controllers read
  EKF3's output; ``port_truth_inputs``: the depth reading and the true climb rate); its
  vertical thrust drives motors 5 and 6 as the vectored frame does (PWM = 1500 − 400·thrust).
* ``recorded`` (0.3 s only): real ArduSub on that plant, session ``c_surftrak_sawtooth``.
* ``sitl``: real ArduSub SITL now (``MARINESIM_ARDUSUB`` = the ``ardusub`` binary), against
  ``marinesim sitl --physics reference``, driven by a pymavlink GCS on SITL's clock.

For each run, with e = true altitude − the announced rangefinder target: RMS e on the ramp
(60–130 s); after the cliff (150–195 s, or up to the pilot climb) the peak-to-peak of e, its
period (mean spacing of upward mean crossings) and RMS; the amplitude (half peak-to-peak over
±2.5 s) 20 s and 35 s after engagement (the 0.5 s delay's growth).  That growth starts from
the barometer's noise (SITL's ``SIM_BARO_RND``), so one run of either side is one draw:
``--sim-baro-rnd 0.02 --seeds N`` flies the port with N noise seeds and reports their median
and where the firmware's run falls among them.  Prints JSON.  ::

    python benchmarks/bench_surftrak_firmware.py [--delays 0.3 0.5] [--json PATH] [--no-sitl]
        [--ek3-hgt-delay MS] [--sim-baro-rnd M [--seeds N]]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from _report import write_report

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REF = SHARED / "reference" / "ardusub_sitl"
SESSION = REF / "c_surftrak_sawtooth"
T200 = SHARED / "data" / "t200" / "t200_performance_10-20V.csv"

#: Session c's script on SITL's clock [s]: (time, action, value).
SCRIPT = [
    (20.0, "arm", 1),
    (23.107, "mode", 2),
    (25.107, "stick", 250),
    (47.306, "stick", 500),
    (51.306, "mode", 21),
    (165.007, "stick", 700),
    (167.007, "stick", 500),
]
END = 200.0
#: ArduSub's depth from SITL's pressure: 1024 kg/m³ water read at 9800 Pa/m (README §2.4).
DEPTH_SCALE = 1024 * 9.80665 / 9800.0


def session_params() -> dict[str, float]:
    """The parameters of the recorded sessions (last value of each in the ``.BIN``)."""
    out: dict[str, float] = {}
    for line in (SESSION / "params_all_from_bin.parm").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.startswith("#"):
            out[parts[0]] = float(parts[1])
    return out


def port_params(p: dict[str, float]) -> Any:
    """:class:`SurftrakParams` from the session's parameter values."""
    from marinesim.control.surftrak import SurftrakParams

    fields = set(SurftrakParams.model_fields)
    kw = {k: v for k, v in p.items() if k in fields and k not in ("RNGFND1_TYPE",)}
    kw["RNGFND1_TYPE"] = int(p["RNGFND1_TYPE"])
    kw["RNGFND1_ORIENT"] = int(p["RNGFND1_ORIENT"])
    kw["RNGFND1_MIN_CM"] = p["RNGFND1_MIN"] * 100.0
    kw["RNGFND1_MAX_CM"] = p["RNGFND1_MAX"] * 100.0
    return SurftrakParams(**kw)


def stick_of(z: float) -> float:
    """MANUAL_CONTROL z → the RC throttle override ArduSub makes of it [µs] (joystick gain 0.5,
    JS_THR_GAIN 1: 0.4·z + 1300)."""
    return float(int(0.4 * z + 1300.0))


def run_port(delay: float, params: dict[str, float], baro_noise: float = 0.0,
             seed: int = 1, trace: list[tuple[float, ...]] | None = None,
             accel_hz: float = 0.0, depth_scale: float = DEPTH_SCALE,
             z_lead: float = 0.0, vz_scale: float | None = None,
             ekf: Any = None) -> dict[str, Any]:  # fmt: skip
    """The port on the reference plant through session c's script; per-0.05 s series.

    ``accel_hz`` > 0 low-passes the measured vertical acceleration (ArduPilot's
    INS_ACCEL_FILTER, 20 Hz, on the 1200 Hz samples); ``depth_scale`` is the depth reading's
    scale; ``z_lead`` [s] shifts the depth reading by that much of the current heave rate
    (an estimator running ahead of the truth); ``vz_scale`` the climb rate's scale (default
    ``depth_scale``).  ``ekf`` (:class:`~marinesim.sensors.ekf3_height.Ekf3HeightParams`):
    the port reads height and climb rate from the EKF3 height model fed with that depth
    reading and the measured acceleration, as the firmware reads EKF3's output; ``None``
    feeds it the reading and the true climb rate directly.  ``trace`` collects CTUN-like rows
    every 0.1 s once armed: time, ThO (filtered throttle), DAlt, Alt, TAlt (terrain offset),
    DSAlt (target), CRt [m, m/s, z up], true depth."""
    from marinesim.control.surftrak import SURFTRAK, ArduSubVertical
    from marinesim.interop.sitl.refplant import (
        _FLOOR,
        _HAVE,
        _RNG,
        _W,
        _WD,
        _Z,
        Z0,
        ReferencePlant,
    )
    from marinesim.sensors.ekf3_height import Ekf3Height

    sp = port_params(params)
    plant = ReferencePlant(T200, "sawtooth", u0=0.5, u_start=70.0, rng_delay=delay)
    rng_gen = np.random.default_rng(seed)
    pwm = np.full(16, 1500.0)
    ap: ArduSubVertical | None = None
    est: Ekf3Height | None = None
    script = list(SCRIPT)
    stick = stick_of(500)
    armed = False
    rate = 1200
    rows: list[tuple[float, float, float, float]] = []
    texts: list[tuple[float, str]] = []
    n_msg = 0
    loop = 0
    a_acc = 1.0 / (1.0 + rate / (2 * math.pi * accel_hz)) if accel_hz > 0 else 1.0
    az_f = 0.0
    for n in range(1, int(END * rate) + 1):
        plant.step_bytes(pwm)
        t = n / rate
        az_f += a_acc * (-plant.s[_WD] * 100.0 - az_f)
        while script and t >= script[0][0]:
            _, what, val = script.pop(0)
            if what == "arm":
                armed = True
            elif what == "stick":
                stick = stick_of(val)
            elif what == "mode":
                if ap is None:
                    z = -depth_scale * (plant.s[_Z] - Z0) * 100.0
                    ap = ArduSubVertical(sp, z, 0.0, 0.0, 0.5, 0.0025)
                ap.set_mode(int(val))
        if n % 3 == 0 and ap is not None and armed:  # 400 Hz loop
            loop += 1
            ap.now_us = t * 1e6
            z_m = -depth_scale * (plant.s[_Z] - Z0 + z_lead * plant.s[_W])
            if baro_noise > 0:  # SITL's SIM_BARO_RND: uniform ±baro_noise on each reading
                z_m += depth_scale * rng_gen.uniform(-baro_noise, baro_noise)
            vz = -(depth_scale if vz_scale is None else vz_scale) * plant.s[_W]  # climb rate
            az = az_f
            if ekf is not None:  # what inertial_nav reports: EKF3's output
                if est is None:
                    est = Ekf3Height(ekf, z_m, vz)
                est.step(az * 0.01, z_m)
                z_m, vz = est.z, est.vz
            if loop % 20 == 0:  # read_rangefinder at 20 Hz: the value SITL holds now
                r = plant.s[_RNG] if plant.s[_HAVE] else math.nan
                if math.isfinite(r):
                    ap.handle_distance_sensor(True, r * 100.0, 0.0, 0.0, -1)
                ap.rangefinder_cycle()
            thrust = float(ap.run_pwm(stick, z_m * 100.0, vz * 100.0, az))
            ap.detect(z_m, vz)
            pwm[4] = pwm[5] = 1500.0 - 400.0 * max(-1.0, min(1.0, thrust))
            for m in ap.messages[n_msg:]:
                texts.append((t, m.text))
            n_msg = len(ap.messages)
        if trace is not None and ap is not None and n % 120 == 0:
            zc = ap.zctl
            trace.append((t, float(ap.motors.throttle), float(zc.pos_target) / 100,
                          float(ap.z) / 100, float(ap.health.terrain_offset_cm) / 100,
                          float(ap.target_cm) / 100, float(ap.vz) / 100, float(plant.s[_Z]),
                          float(zc.vel_target) / 100, float(zc.accel_target) / 100))  # fmt: skip
        if n % 60 == 0:
            tgt = float(ap.target_cm) / 100.0 if ap is not None and ap.mode == SURFTRAK else -1
            rows.append((t, float(plant.s[_Z]), float(plant.s[_FLOOR] - plant.s[_Z]), tgt))
    tab = np.array(rows)
    return {"t": tab[:, 0], "z": tab[:, 1], "alt": tab[:, 2], "texts": texts}


def targets_from(texts: list[tuple[float, str]]) -> list[tuple[float, float]]:
    """``rangefinder target is X meters`` messages → (time, X)."""
    out = []
    for t, txt in texts:
        m = re.search(r"rangefinder target is ([-0-9.]+) meters", txt)
        if m:
            out.append((t, float(m.group(1))))
    return out


def recorded() -> dict[str, Any]:
    """Session c (real ArduSub, 0.3 s delay) as the same series."""
    with gzip.open(SESSION / "truth.csv.gz", "rt") as fh:
        rd = csv.DictReader(fh)
        tab = np.array([[float(r["sitl_time_us"]) / 1e6, float(r["z"]), float(r["true_alt"])]
                        for r in rd])  # fmt: skip
    texts = []
    with (SESSION / "events.csv").open() as fh:
        for r in csv.DictReader(fh):
            if r["kind"] == "statustext":
                texts.append((float(r["time_boot_s"]), r["text"]))
    return {"t": tab[:, 0], "z": tab[:, 1], "alt": tab[:, 2], "texts": texts}


def error_series(run: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, float]:
    """(t, e = altitude − current target) after engagement, and the engagement time."""
    tg = targets_from(run["texts"])
    if not tg:
        raise RuntimeError("no 'rangefinder target is' message: SURFTRAK never engaged")
    t, alt = run["t"], run["alt"]
    target = np.full_like(t, np.nan)
    for i, (tt, x) in enumerate(tg):
        t_next = tg[i + 1][0] if i + 1 < len(tg) else np.inf
        target[(t >= tt) & (t < t_next)] = x
    ok = np.isfinite(target)
    return t[ok], alt[ok] - target[ok], tg[0][0]


def metrics(run: dict[str, Any]) -> dict[str, float]:
    """Ramp RMS, post-cliff oscillation (p-p, period, RMS) and growth figures."""
    t, e, t_eng = error_series(run)
    out: dict[str, float] = {"engaged_s": round(t_eng, 3)}
    ramp = (t >= 60) & (t <= 130)
    out["ramp_rms_m"] = float(np.sqrt(np.mean(e[ramp] ** 2)))
    post = (t >= 150) & (t <= 164.5)
    ep, tp = e[post], t[post]
    out["cliff_pp_m"] = float(ep.max() - ep.min())
    out["cliff_rms_m"] = float(np.sqrt(np.mean(ep**2)))
    c = ep - ep.mean()
    up = np.nonzero((c[:-1] < 0) & (c[1:] >= 0))[0]
    out["cliff_period_s"] = float(np.mean(np.diff(tp[up]))) if len(up) >= 2 else float("nan")
    for dt in (20.0, 35.0):
        w = (t >= t_eng + dt - 2.5) & (t <= t_eng + dt + 2.5)
        out[f"amp_{int(dt)}s_m"] = float((e[w].max() - e[w].min()) / 2) if w.any() else math.nan
    return {k: round(v, 4) for k, v in out.items()}


# ----------------------------------------------------------------------------- real SITL
def run_sitl(delay: float, binary: str, work: Path, instance: int = 6,
             extra: dict[str, float] | None = None) -> dict[str, Any]:  # fmt: skip
    """Real ArduSub SITL on ``marinesim sitl --physics reference`` through session c's script
    (``extra``: parameters set on top of the session's)."""
    from pymavlink import mavutil

    work.mkdir(parents=True, exist_ok=True)
    lines = [f"{k} {v:g}" for k, v in (extra or {}).items()]
    (work / "session.parm").write_text((SESSION / "session.parm").read_text() + "\n".join(lines)
                                       + "\n")  # fmt: skip
    sub_parm = os.environ.get("MARINESIM_ARDUSUB_DEFAULTS") or str(REF / "sub.parm")
    port = 9002 + 10 * instance
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    backend = subprocess.Popen(
        [sys.executable, "-m", "marinesim", "sitl", "--physics", "reference", "--t200-csv",
         str(T200), "--bathymetry", "recorded_sawtooth", "--var", "u0=0.5", "--var",
         "u_start=70", "--var", f"delay={delay}", "--port", str(port), "-o", str(work / "run"),
         "-q"], env=env, stdout=(work / "backend.out").open("w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    time.sleep(3)
    sitl = subprocess.Popen(
        [binary, "--model", "JSON", "--speedup", "10", "-w", "--defaults",
         f"{sub_parm},session.parm", f"-I{instance}", "--home", "33.810313,-118.39386,0,0"],
        cwd=work, stdout=(work / "sitl.out").open("w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    texts: list[tuple[float, str]] = []
    try:
        m = None
        deadline = time.time() + 60
        while m is None:
            try:
                m = mavutil.mavlink_connection(f"tcp:127.0.0.1:{5760 + 10 * instance}",
                                               source_system=255)  # fmt: skip
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        m.wait_heartbeat(timeout=60)
        m.mav.request_data_stream_send(m.target_system, 0, 0, 4, 1)
        t_boot, z, next_ctl = 0.0, 500, 0.0
        script = list(SCRIPT)
        origin = False
        wall_end = time.time() + 3600
        while t_boot < END:
            if time.time() > wall_end:
                raise TimeoutError("SITL stopped advancing")
            while script and t_boot >= script[0][0] and (origin or script[0][1] != "arm"):
                _, what, val = script.pop(0)
                if what == "arm":
                    m.mav.command_long_send(m.target_system, 1, 400, 0, 1, 0, 0, 0, 0, 0, 0)
                elif what == "mode":
                    m.mav.set_mode_send(m.target_system, 1, int(val))
                else:
                    z = int(val)
            if t_boot >= next_ctl:
                m.mav.manual_control_send(m.target_system, 0, 0, z, 0, 0)
                m.mav.heartbeat_send(6, 8, 0, 0, 0)
                next_ctl = t_boot + 0.1
            msg = m.recv_match(blocking=True, timeout=0.2)
            if msg is None:
                continue
            if hasattr(msg, "time_boot_ms"):
                t_boot = msg.time_boot_ms / 1000.0
            if msg.get_type() == "STATUSTEXT":
                texts.append((t_boot, msg.text))
                origin = origin or "origin set" in msg.text
        m.close()
    finally:
        for proc in (sitl, backend):
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
    with (work / "run" / "truth.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    tab = np.array([[float(r["sitl_time_us"]) / 1e6, float(r["z"]), float(r["true_alt"])]
                    for r in rows])  # fmt: skip
    return {"t": tab[:, 0], "z": tab[:, 1], "alt": tab[:, 2], "texts": texts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delays", type=float, nargs="+", default=[0.3, 0.5])
    ap.add_argument(
        "--sim-baro-rnd",
        type=float,
        default=0.0,
        metavar="M",
        help="port: barometer noise as SITL's SIM_BARO_RND (uniform ±M metres on each reading; "
        "sub.parm: 0.02); 0 = noise-free",
    )
    ap.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help="port: fly the noisy port with seeds 1…N and report each seed, the median and "
        "where the firmware's growth figures fall among them",
    )
    ap.add_argument("--no-sitl", action="store_true", help="skip real SITL even if available")
    ap.add_argument(
        "--ek3-hgt-delay",
        type=float,
        default=None,
        metavar="MS",
        help="EK3_HGT_DELAY for the port's EKF3 model and real SITL "
        "(default: the session's, 60 ms; the recorded column keeps 60)",
    )
    ap.add_argument("--keep", type=Path, default=None, help="keep the SITL runs' folders here")
    ap.add_argument("--json", type=Path, default=None, help="write the report here")
    args = ap.parse_args()
    if not (SESSION.exists() and T200.exists()):
        sys.exit("needs ../shared/reference/ardusub_sitl and ../shared/data/t200")
    from marinesim.sensors.ekf3_height import Ekf3HeightParams

    params = session_params()
    extra = {}
    if args.ek3_hgt_delay is not None:
        params["EK3_HGT_DELAY"] = extra["EK3_HGT_DELAY"] = args.ek3_hgt_delay
    ekf = Ekf3HeightParams.from_ardupilot(params)
    results: dict[str, Any] = {"EK3_HGT_DELAY_ms": ekf.EK3_HGT_DELAY}
    binary = os.environ.get("MARINESIM_ARDUSUB")
    for d in args.delays:
        key = f"delay_{d:g}"
        res: dict[str, Any] = {}
        t0 = time.process_time()
        noise = args.sim_baro_rnd
        res["port"] = metrics(run_port(d, params, noise, ekf=ekf))
        res["port"]["cpu_s"] = round(time.process_time() - t0, 1)
        res["port_truth_inputs"] = metrics(run_port(d, params, noise))
        if noise > 0 and args.seeds > 1:
            runs = [res["port"]] + [
                metrics(run_port(d, params, noise, seed=s, ekf=ekf))
                for s in range(2, args.seeds + 1)
            ]
            res["port_seeds"] = {
                k: [r[k] for r in runs] for k in ("cliff_pp_m", "amp_20s_m", "amp_35s_m")
            }
            res["port_median"] = {
                k: round(float(np.median(v)), 4) for k, v in res["port_seeds"].items()
            }
        if abs(d - 0.3) < 1e-9 and args.ek3_hgt_delay in (None, 60.0):
            res["recorded"] = metrics(recorded())
        if binary and not args.no_sitl:
            with tempfile.TemporaryDirectory() as tmp:
                work = (args.keep or Path(tmp)) / key
                res["sitl"] = metrics(run_sitl(d, binary, work, extra=extra))
        fw = res.get("sitl") or res.get("recorded")
        if fw and "port_seeds" in res:  # where the firmware's figures fall among the seeds
            res["firmware_rank_among_seeds"] = {
                k: f"{sum(x < fw[k] for x in v)} of {len(v)} seeds below"
                for k, v in res["port_seeds"].items()
                if fw.get(k) and math.isfinite(fw[k])
            }
        if fw:
            for col in ("port", "port_truth_inputs", "port_median"):
                if col not in res:
                    continue
                res[f"{col}_over_firmware"] = {
                    k: round(res[col][k] / fw[k], 3)
                    for k in ("cliff_pp_m", "cliff_period_s", "amp_20s_m", "amp_35s_m")
                    if k in res[col] and fw.get(k) and math.isfinite(fw[k])
                }
        results[key] = res
        print(json.dumps({key: res}))
    write_report("bench_surftrak_firmware", " ".join(["python", *sys.argv]), results, args.json)


if __name__ == "__main__":
    main()

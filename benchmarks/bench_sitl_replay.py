"""SIM_JSON backend cost per SITL frame, without SITL: the recorded servo streams replayed.

The servo packets of the recorded ArduSub sessions (``../shared/reference/ardusub_sitl``, or
the shipped excerpt when that is absent) are renumbered 0, 1, 2, … (one packet = one frame)
and fed to :class:`~marinesim.interop.sitl.lockstep.Lockstep` exactly as the UDP loop does
(decode, bookkeeping, physics step, encoded reply), with no sockets.  Routes, in one process:

* ``engine_plain`` — the ``ardusub_sawtooth`` scenario (BlueROV2 Heavy, Fossen 6-DOF,
  thruster plant, rangefinder) through :class:`EnginePlant` with ``direct = False``: one
  ``Simulation.step(1)`` (the compiled tick), :meth:`EnginePlant.reply` and ``json.dumps``
  per frame (the baseline);
* ``engine`` — the same through the plant's direct frames (what ``marinesim sitl`` runs:
  the pulses, one tick of the generated tick and the reply's numbers in compiled code, one
  ``%`` format); its replies are checked to be the baseline's, byte for byte;
* ``reference_reply`` — the recorded reference plant, compiled step, but the reply built as a
  :class:`SensorReply` and ``json.dumps`` (the generic path);
* ``reference_pwm`` — the same plant through ``step_bytes`` (decoded packet object, compiled
  step, one ``%`` format);
* ``reference`` — the fastest path (``step_raw``: the datagram's pulses decoded inside the
  compiled step, no packet object);
* ``reference_logged`` — ``reference`` plus the truth log as ``marinesim sitl -o`` keeps it
  (hooks every 0.05 s of physics time, CSV rows to a temporary directory);
* ``reference_step`` — the compiled plant's ``step_raw`` alone (no lockstep);
* ``udp`` (``--udp N``) — ``marinesim sitl --physics reference -o DIR`` as a separate process
  over loopback UDP, this script playing SITL in lockstep (send a packet, wait for its reply)
  for N frames: the backend's CPU seconds per frame (its ``rusage``; start-up removed by
  the difference with a run of N/6 frames), and the wall-clock frames/s of the pair (the fake
  SITL's own Python included).

Prints frames per CPU second (process time), µs/frame, the real-time factor at 1200 Hz and
the ratio to ``engine_plain``;
``--json PATH`` writes the report.  ::

    python benchmarks/bench_sitl_replay.py [--engine-frames 20000] [--engine-start 0] [--udp 60000]
        [--json PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _report import write_report
from marinesim.interop.sitl.lockstep import Lockstep
from marinesim.interop.sitl.protocol import decode_servo, encode_servo

REPO = Path(__file__).resolve().parents[1]
REF = REPO.parent / "shared" / "reference" / "ardusub_sitl"
T200 = REPO.parent / "shared" / "data" / "t200" / "t200_performance_10-20V.csv"
SESSIONS = ("a_manual_descent", "b_althold", "c_surftrak_sawtooth")


def packets() -> tuple[list[bytes], str]:
    """The recorded servo packets renumbered as consecutive frames, and their source."""
    files = [REF / s / "capture.jsonl.gz" for s in SESSIONS]
    if not all(f.exists() for f in files):
        files = [REPO / "tests" / "data" / "ardusub" / "capture_excerpt.jsonl.gz"]
    out: list[bytes] = []
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get("dir") == "ap2be" and not row.get("dup"):
                    pkt = decode_servo(bytes.fromhex(row["hex"]))
                    out.append(encode_servo(1200, len(out), pkt.pwm))
    return out, ", ".join(str(f.relative_to(f.parents[2])) for f in files)


def run(lock: Lockstep, pkts: list[bytes], replies: list[bytes] | None = None) -> float:
    """Frames per CPU second of ``lock.handle`` over ``pkts`` (process CPU time: on a shared
    machine the wall clock mostly measures the other processes); ``replies`` collects the
    replies."""
    addr = ("127.0.0.1", 1)
    handle = lock.handle
    if replies is None:
        t0 = time.process_time()
        for d in pkts:
            handle(d, addr, 0.0)
    else:
        keep = replies.append
        t0 = time.process_time()
        for d in pkts:
            keep(handle(d, addr, 0.0))
    wall = time.process_time() - t0
    assert lock.stats.frames == len(pkts), lock.stats.summary()
    return len(pkts) / wall


def engine_routes(n: int, pkts: list[bytes]) -> dict[str, dict[str, float]]:
    """``engine_plain`` and ``engine`` over the first ``n`` packets (same replies checked)."""
    from marinesim.interop.sitl.plant import EnginePlant
    from marinesim.scenario import load_simulation

    def plant(direct: bool) -> EnginePlant:
        p = EnginePlant(load_simulation("ardusub_sawtooth", variables=["end=36000"]))
        p.direct = direct
        return p

    warm = Lockstep(plant(True))  # compile / load the generated tick and the direct frames
    for d in pkts[:5]:
        warm.handle(d, ("127.0.0.1", 1), 0.0)
    out: dict[str, dict[str, float]] = {}
    replies: dict[str, list[bytes]] = {"engine_plain": [], "engine": []}
    for name in ("engine_plain", "engine"):
        p = plant(name == "engine")
        out[name] = {"frames": n, "fps": run(Lockstep(p), pkts[:n], replies[name])}
        out[name]["direct_frames"] = p.direct_frames
    if replies["engine"] != replies["engine_plain"]:
        raise AssertionError("direct frames replied other bytes than the plain steps")
    return out


def udp_route(pkts: list[bytes], n: int, csv: str) -> dict[str, float]:
    """The backend as a process on loopback, this process as a lockstep SITL."""
    import socket
    import subprocess

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "marinesim", "sitl", "--physics", "reference", "--t200-csv",
             csv, "--port", str(port), "--max-frames", str(n), "-o", tmp, "-q"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )  # fmt: skip
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0.5)
        dest = ("127.0.0.1", port)
        while True:  # until the backend is up (the first reply)
            sock.sendto(pkts[0], dest)
            try:
                sock.recvfrom(65535)
                break
            except TimeoutError:
                if proc.poll() is not None:
                    raise RuntimeError("marinesim sitl exited before answering") from None
        sock.settimeout(5.0)
        t0 = time.perf_counter()
        for d in pkts[1:n]:
            sock.sendto(d, dest)
            sock.recvfrom(65535)
        wall = time.perf_counter() - t0
        sock.close()
        _, status, ru = os.wait4(proc.pid, 0)
        summary = json.loads((Path(tmp) / "summary.json").read_text())
    frames = int(summary["frames"])
    cpu = ru.ru_utime + ru.ru_stime
    return {
        "frames": frames,
        "fps": frames / cpu,  # per backend CPU second, start-up included
        "wall_fps": (n - 1) / wall,
        "backend_cpu_s": cpu,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine-frames", type=int, default=20000, help="frames of the engine routes")
    ap.add_argument("--engine-start", type=int, default=0,
                    help="first packet of the engine routes (60000: session c, the vehicle moving)")  # fmt: skip
    ap.add_argument("--udp", type=int, default=0, help="frames for the loopback UDP route")
    ap.add_argument("--json", type=Path, default=None, help="write the report here")
    args = ap.parse_args()
    pkts, source = packets()
    print(f"{len(pkts)} recorded servo packets ({source})")
    results: dict[str, dict[str, float]] = {}

    n_eng = min(args.engine_frames, len(pkts) - args.engine_start)
    results.update(engine_routes(n_eng, pkts[args.engine_start :]))

    csv = os.environ.get("MARINESIM_T200_CSV") or (str(T200) if T200.exists() else None)
    if csv is None:
        print("reference routes skipped: set MARINESIM_T200_CSV (T200 table not shipped)")
    else:
        from marinesim.interop.sitl.refplant import ReferencePlant

        ReferencePlant(csv, "sawtooth").step_bytes(np.full(16, 1500))  # compile / cache load
        slow = Lockstep(ReferencePlant(csv, "sawtooth"))
        slow._fast = slow._raw = None  # the generic route: SensorReply + json.dumps per frame
        n_slow = min(len(pkts), 20 * n_eng)
        results["reference_reply"] = {"frames": n_slow, "fps": run(slow, pkts[:n_slow])}
        mid = Lockstep(ReferencePlant(csv, "sawtooth"))
        mid._raw = None
        results["reference_pwm"] = {"frames": len(pkts), "fps": run(mid, pkts)}
        results["reference"] = {
            "frames": len(pkts),
            "fps": run(Lockstep(ReferencePlant(csv, "sawtooth")), pkts),
        }
        from marinesim.interop.sitl.session import HOOK_PERIOD
        from marinesim.interop.sitl.truthlog import TruthLog

        with tempfile.TemporaryDirectory() as tmp:
            plant = ReferencePlant(csv, "sawtooth")
            log = TruthLog(plant, tmp, period=HOOK_PERIOD)
            lock = Lockstep(plant, on_frame=log, hook_period=HOOK_PERIOD)
            results["reference_logged"] = {"frames": len(pkts), "fps": run(lock, pkts)}
            log.close()
        plant = ReferencePlant(csv, "sawtooth")
        step = plant.step_raw
        t0 = time.process_time()
        for d in pkts:
            step(d)
        results["reference_step"] = {
            "frames": len(pkts),
            "fps": len(pkts) / (time.process_time() - t0),
        }
        if args.udp > 0:
            n = min(args.udp, len(pkts))
            short, full = udp_route(pkts, max(n // 6, 100), csv), udp_route(pkts, n, csv)
            # the difference of two runs removes the start-up (imports, compiled-code load)
            d_cpu = full["backend_cpu_s"] - short["backend_cpu_s"]
            full["fps"] = (full["frames"] - short["frames"]) / d_cpu
            full["startup_cpu_s"] = short["backend_cpu_s"] - short["frames"] / full["fps"]
            results["udp"] = full
            print(f"udp: {results['udp']['wall_fps']:.0f} frames/s of wall time with this "
                  f"script as SITL ({results['udp']['wall_fps'] / 1200:.1f}x real time)")  # fmt: skip
    base = results["engine_plain"]["fps"]
    print(f"{'route':16s} {'frames':>8s} {'frames/s':>10s} {'us/frame':>9s} {'x real':>7s} "
          f"{'vs plain':>9s}")  # fmt: skip
    for name, r in results.items():
        r["us_per_frame"] = 1e6 / r["fps"]
        r["realtime_x_at_1200Hz"] = r["fps"] / 1200.0
        r["ratio_vs_engine_plain"] = r["fps"] / base
        print(f"{name:16s} {r['frames']:8d} {r['fps']:10.0f} {r['us_per_frame']:9.1f} "
              f"{r['realtime_x_at_1200Hz']:7.1f} {r['ratio_vs_engine_plain']:9.1f}")  # fmt: skip
    write_report("bench_sitl_replay", " ".join(["python", *sys.argv]), results, args.json)


if __name__ == "__main__":
    main()

"""``marinesim sitl`` against a real ArduSub SITL: × real time, live, with and without a GCS.

What a BlueROV2 user runs: the backend (``marinesim sitl SCENARIO -o DIR``, optionally
``--physics reference``), then, ``--lead`` seconds later, ArduSub SITL as the docs launch it
(``ardusub --model JSON --speedup 100 -w --serial0 tcp:0 --defaults sub.parm,heavy.parm -I0``)
and, with ``--gcs``, a pymavlink ground station on TCP 5760 reading every message SITL
streams.  After ``--wall`` seconds both are stopped with SIGTERM; the backend's
``summary.json`` gives the physics time and frames.  Reported: × real time over the seconds
SITL ran (physics time / wall time), frames per second, and the CPU per frame of the backend
(its start-up, measured apart as the CPU of ``--lead`` seconds before SITL starts, removed)
and of SITL.  SITL's own ceiling (a backend that costs nothing) is not measured here: see
docs/guide/sitl-live.md §5.

Needs ``MARINESIM_ARDUSUB`` (the ``ardusub`` binary of an ArduPilot SITL build); its
``Tools/autotest/default_params/sub.parm`` is found above the binary or named by
``MARINESIM_ARDUSUB_DEFAULTS``.  Without them it prints ``"available": false`` and exits 3.
``--physics reference`` needs Blue Robotics' T200 table (``MARINESIM_T200_CSV``).

Run: ``MARINESIM_ARDUSUB=… python benchmarks/bench_sitl_live.py --wall 20 --gcs both``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _report import write_report

HEAVY = "FRAME_CONFIG 2\nRNGFND1_TYPE 100\nRNGFND1_ORIENT 25\nRNGFND1_MAX 50\n"
GCS = """
import signal, sys, time
from pymavlink import mavutil
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))  # stopped by the benchmark: report
n = 0
try:
    for _ in range(100):
        try:
            m = mavutil.mavlink_connection("tcp:127.0.0.1:5760", source_system=255)
            break
        except OSError:
            time.sleep(0.1)
    t = time.time()
    while time.time() - t < float(sys.argv[1]):
        if m.recv_match(blocking=True, timeout=0.5) is not None:
            n += 1
finally:
    print(f"\\ngcs_messages {n}", flush=True)  # (after pymavlink's own lines, which may lack an end)
"""


def _cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sub_parm(exe: Path) -> Path | None:
    env = os.environ.get("MARINESIM_ARDUSUB_DEFAULTS")
    if env:
        return Path(env)
    for up in exe.resolve().parents:
        cand = up / "Tools" / "autotest" / "default_params" / "sub.parm"
        if cand.is_file():
            return cand
    return None


def one(exe: Path, parm: Path, args: argparse.Namespace, gcs: bool) -> dict[str, Any]:
    """One live run; its figures."""
    work = Path(tempfile.mkdtemp(prefix="bench_sitl_live_"))
    (work / "heavy.parm").write_text(HEAVY)
    cmd = [sys.executable, "-m", "marinesim", "sitl", args.scenario, "-o", "run", "-q"]
    if args.physics == "reference":
        cmd += ["--physics", "reference"]
    backend = subprocess.Popen(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [backend]
    try:
        time.sleep(args.lead)
        start_cpu = _cpu(backend.pid)
        sitl = subprocess.Popen(
            [str(exe), "--model", "JSON", "--speedup", "100", "-w", "--serial0", "tcp:0",
             "--defaults", f"{parm},heavy.parm", "-I0"],
            cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )  # fmt: skip
        procs.append(sitl)
        t0 = time.perf_counter()
        ground = None
        if gcs:
            ground = subprocess.Popen(
                [sys.executable, "-c", GCS, str(args.wall + 5)], cwd=work,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )  # fmt: skip
            procs.append(ground)
        time.sleep(args.wall)
        ran = time.perf_counter() - t0
        backend_cpu, sitl_cpu = _cpu(backend.pid) - start_cpu, _cpu(sitl.pid)
        messages = None
        if ground is not None:  # (before SITL: a GCS whose SITL has gone prints an EOF per read)
            ground.terminate()
            out, _ = ground.communicate(timeout=10)
            found = re.findall(r"^gcs_messages (\d+)$", out, flags=re.MULTILINE)
            messages = int(found[-1]) if found else None
        sitl.terminate()
        sitl.wait(10)
        backend.terminate()
        backend.wait(20)
        summary = json.loads((work / "run" / "summary.json").read_text())
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    frames = int(summary["frames"])
    shutil.rmtree(work, ignore_errors=True)
    return {
        "gcs": gcs,
        "gcs_messages": messages,
        "sim_time_s": summary["sim_time_s"],
        "sitl_wall_s": ran,
        "x_real_time": summary["sim_time_s"] / ran,
        "frames_per_s": frames / ran,
        "backend_us_per_frame": backend_cpu / max(frames, 1) * 1e6,
        "sitl_us_per_frame": sitl_cpu / max(frames, 1) * 1e6,
        "backend_startup_cpu_s": start_cpu,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="ardusub_sawtooth")
    ap.add_argument("--physics", choices=("engine", "reference"), default="engine")
    ap.add_argument("--wall", type=float, default=20.0, help="wall seconds SITL runs")
    ap.add_argument("--lead", type=float, default=4.0, help="wall seconds before SITL starts")
    ap.add_argument("--gcs", choices=("yes", "no", "both"), default="both")
    ap.add_argument("--json", type=Path, default=None, help="JSON report")
    args = ap.parse_args()
    exe = Path(os.environ.get("MARINESIM_ARDUSUB", ""))
    parm = _sub_parm(exe) if exe.name else None
    if not exe.name or not exe.is_file() or parm is None:
        why = "set MARINESIM_ARDUSUB to an ardusub SITL binary (and MARINESIM_ARDUSUB_DEFAULTS " \
              "to its sub.parm when it is not above the binary)"  # fmt: skip
        print(json.dumps({"available": False, "reason": why}))
        return 3
    runs = [one(exe, parm, args, g) for g in {"yes": [True], "no": [False], "both": [True, False]}[args.gcs]]
    for r in runs:
        print(
            f"{args.physics}, GCS {'yes' if r['gcs'] else 'no'}: {r['x_real_time']:.2f}x real time "
            f"({r['frames_per_s']:.0f} frames/s); CPU per frame: backend "
            f"{r['backend_us_per_frame']:.1f} us, SITL {r['sitl_us_per_frame']:.1f} us"
        )
    write_report(
        "bench_sitl_live",
        "MARINESIM_ARDUSUB=... python benchmarks/bench_sitl_live.py " + " ".join(sys.argv[1:]),
        {"available": True, "physics": args.physics, "scenario": args.scenario, "runs": runs},
        args.json,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

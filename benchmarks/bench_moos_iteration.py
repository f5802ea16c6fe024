"""Where the CPU of one ``marinesim moos`` iteration goes: in a tight loop and at the cadence.

The app runs on the fixed clock of ``tests/interop/moos_live/test_app_golden.py`` (a client
whose socket is a sink: no DB, no network), once without sleeping and once sleeping the
AppTick period (10 ms wall at AppTick 10, warp 10) at each wait, as the live app does.  The
CPU of the model's iteration, the packet (``MoosClient.post``), the node report and the log
lines is summed apart.  Baseline of the same run: a loop that only sleeps the same period
(the CPU a wake-up costs on this machine).  Ratios: at the cadence over the tight loop.

Run: ``PYTHONPATH=src python benchmarks/bench_moos_iteration.py --duration 100``
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import marinesim.core.alog as alog_mod
import marinesim.interop.moos.app as app_mod
from _report import write_report
from marinesim.interop.moos.client import MoosClient

HARNESS = Path(__file__).resolve().parents[1] / "tests/interop/moos_live/test_app_golden.py"
PERIOD = 0.01  # wall s between iterations (AppTick 10 at warp 10)


def _harness() -> Any:
    spec = importlib.util.spec_from_file_location("golden_harness", HARNESS)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _timed(acc: dict[str, float], label: str, f: Any) -> Any:
    def w(*a: Any, **k: Any) -> Any:
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[label] = acc.get(label, 0.0) + time.process_time() - t

    return w


def _run(h: Any, duration: float, sleep: float) -> dict[str, float]:
    acc: dict[str, float] = {}
    saved = [
        (app_mod.kinematic.OneVehicle, "iterate"),
        (MoosClient, "post"),
        (alog_mod.NodeReporter, "report"),
        (alog_mod.AlogWriter, "write_many"),
        (h._RecordingClient, "fetch"),
    ]
    old = [(o, n, o.__dict__[n]) for o, n in saved]
    try:
        labels = ("model", "packet", "node_report", "log_lines")
        for (o, n), label in zip(saved[:4], labels, strict=True):
            setattr(o, n, _timed(acc, label, getattr(o, n)))
        fetch = old[4][2]

        def sleepy(self: Any, timeout: float = 0.0) -> Any:
            if timeout > 0 and sleep > 0:
                time.sleep(sleep)
            return fetch(self, timeout)

        h._RecordingClient.fetch = sleepy
        t = time.process_time()
        out = h.run_golden(Path(tempfile.mkdtemp()), duration, hash_model=False)
        total = time.process_time() - t
    finally:
        for o, n, f in old:
            setattr(o, n, f)
    n = out["report"].iterations
    res = {"iterations": n, "total_ms": total / n * 1e3}
    res.update({f"{k}_ms": v / n * 1e3 for k, v in acc.items()})
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=100.0, help="MOOS seconds per run")
    ap.add_argument("--out", type=Path, default=None, help="JSON report")
    args = ap.parse_args()
    h = _harness()
    h.run_golden(Path(tempfile.mkdtemp()), 2.0, hash_model=False)  # imports, caches
    t = time.process_time()
    k = int(args.duration * 10)
    for _ in range(k):
        time.sleep(PERIOD)
    wake = (time.process_time() - t) / k * 1e3
    tight = _run(h, args.duration, 0.0)
    cadence = _run(h, args.duration, PERIOD)
    results = {
        "sleep_only_ms": wake,
        "tight": tight,
        "cadence": cadence,
        "ratios": {
            "cadence_over_tight": cadence["total_ms"] / tight["total_ms"],
            "model_share_at_cadence": cadence["model_ms"] / cadence["total_ms"],
        },
    }
    for name, r in (("tight loop", tight), ("at the cadence", cadence)):
        parts = ", ".join(f"{k[:-3]} {v:.3f}" for k, v in r.items() if k.endswith("_ms"))
        print(f"{name:>15}: ms CPU per iteration: {parts}")
    print(f"a bare {PERIOD * 1e3:g} ms sleep: {wake:.3f} ms CPU; ratios {results['ratios']}")
    write_report(
        "bench_moos_iteration",
        "PYTHONPATH=src python benchmarks/bench_moos_iteration.py " + " ".join(sys.argv[1:]),
        results,
        args.out,
    )


if __name__ == "__main__":
    main()

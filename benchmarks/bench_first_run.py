"""The first run of a bundled scenario on empty caches: waiting for the compile vs compiling apart.

Each case is a fresh ``marinesim run SCENARIO --no-plot`` process with empty caches (its own
``MARINESIM_CACHE_DIR`` and ``NUMBA_CACHE_DIR``: the generated tick and the plugins' own numba
kernels compile from scratch), run twice on those caches:

* ``wait``: ``MARINESIM_COMPILE=wait``, the tick compiled in the run's process, which waits;
* ``background``: the default, the tick compiled by another process while the run goes on
  through the plugins (``marinesim.engine.compiled.background``).

Figures per case: ``first_s``, the wall-clock seconds of the first run's process;
``compiled_ticks`` of its ticks; for ``background``, ``cached_s``, the seconds from the start
until the background process had put the tick into the cache (the benchmark waits for it before
the next case); ``second_s``, the wall-clock seconds of a second run on the filled caches.
The two modes alternate per scenario, so a change of load weighs on both.

Usage::

    python benchmarks/bench_first_run.py [--only demo_survey remus100_survey] [--end S]
                                         [--json benchmarks/results/first_run.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import load_average as _load
from _report import write_report

DEFAULT = ("demo_survey", "remus100_survey", "surftrak_sawtooth")



def _run(name: str, end: float | None, env: dict[str, str], out: Path) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "marinesim", "run", name, "--no-plot", "-q", "-o", str(out)]
    if end is not None:
        cmd += ["--set", f"time.end={end}"]
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    return wall, json.loads((out / "manifest.json").read_text())


def _bg_done(root: Path, t0: float, timeout: float = 900.0) -> float | None:
    """Seconds from ``t0`` until the background compile of ``root``'s tick has exited."""
    logs = root / "ticks"
    while time.perf_counter() - t0 < timeout:
        ps = subprocess.run(["pgrep", "-f", f"compiled.background {root}"], capture_output=True)
        if ps.returncode != 0:  # no such process (left)
            return time.perf_counter() - t0 if any(logs.glob("*.bg.log")) else None
        time.sleep(0.25)
    return None


def case(name: str, mode: str, end: float | None) -> dict:
    """One first run and one second run of ``name`` on empty caches, in ``mode``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {**os.environ, "MARINESIM_CACHE_DIR": str(root), "NUMBA_CACHE_DIR": str(root / "nb"),
               "MARINESIM_COMPILE": mode, "MARINESIM_QUIET": "1"}  # fmt: skip
        load0 = _load()
        t0 = time.perf_counter()
        first, man = _run(name, end, env, root / "run1")
        row = {"scenario": name, "mode": mode, "first_s": round(first, 2),
               "compiled_ticks": man["compiled_ticks"], "ticks": man["ticks"]}  # fmt: skip
        if mode == "background":
            done = _bg_done(root, t0)
            row["cached_s"] = None if done is None else round(done, 2)
        second, man2 = _run(name, end, env, root / "run2")
        row.update(second_s=round(second, 2), second_compiled_ticks=man2["compiled_ticks"])
        row["load"] = [load0, _load()]
        return row


def main(argv: list[str] | None = None) -> dict:
    """Run the cases; print one line each; return (and optionally write) the report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(DEFAULT), help="bundled scenario names")
    ap.add_argument("--end", type=float, default=None, help="time.end [s] (default: the scenario's)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    for name in args.only:
        for mode in ("wait", "background"):
            row = case(name, mode, args.end)
            rows.append(row)
            extra = f", tick cached after {row['cached_s']} s" if "cached_s" in row else ""
            print(
                f"{name:26s} {mode:10s} first run {row['first_s']:6.1f} s "
                f"({row['compiled_ticks']} of {row['ticks']} ticks compiled{extra}); "
                f"second run {row['second_s']:.1f} s; load {row['load']}",
                flush=True,
            )
    command = "python benchmarks/bench_first_run.py " + " ".join(argv or sys.argv[1:])
    return write_report("first_run", command.strip(), rows, args.json)


if __name__ == "__main__":
    main()

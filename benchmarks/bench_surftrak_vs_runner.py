"""The engine route of SURFTRAK against the dedicated runner it replaced, in the same process.

Before issue 10, ``marinesim surftrak run`` had its own loop (``interop/surftrak_runner.py``
with a numba kernel); now it runs the engine, whose SURFTRAK block runs in the generated compiled tick.
This times both on the same sawtooth run (process CPU time, best of ``--repeat``), with the
old runner loaded from a file you extract from git::

    git show 6686711:src/marinesim/interop/surftrak_runner.py > /tmp/old_runner.py
    python benchmarks/bench_surftrak_vs_runner.py /tmp/old_runner.py [--repeat 5]

Prints, per duration, both times and the ratio old/new (≥ 1: the engine route is at least as
fast); both runs must log the same CTUN columns (checked).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time

import numpy as np

from marinesim.interop.surftrak_runner import run_surftrak


def best(fn, repeat: int) -> float:  # noqa: ANN001
    """Best process CPU time of ``repeat`` calls (s)."""
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return min(out)


def main() -> None:
    """Time both routes and print the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old_runner", help="the old interop/surftrak_runner.py (from git show)")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("old_runner", a.old_runner)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["old_runner"] = old  # dataclasses look their module up
    spec.loader.exec_module(old)
    ref = old.run_surftrak("sawtooth", duration=5.0, seed=1, jit=True)
    new = run_surftrak("sawtooth", duration=5.0, seed=1, jit=True)
    for k, v in ref.columns.items():
        assert np.array_equal(v, new.columns[k]), k
    for dur in (150.0, 1500.0):
        o = best(lambda d=dur: old.run_surftrak("sawtooth", duration=d, seed=1, jit=True), a.repeat)
        n = best(lambda d=dur: run_surftrak("sawtooth", duration=d, seed=1, jit=True), a.repeat)
        print(
            f"{dur:6g} s sawtooth: old runner {o * 1e3:7.1f} ms, engine route {n * 1e3:7.1f} ms, "
            f"old/new {o / n:.2f}"
        )


if __name__ == "__main__":
    main()

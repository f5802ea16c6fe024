"""Where the cold compile of a scenario's generated tick goes: numba's frontend, LLVM, each law.

Each measurement is a fresh process on empty caches (its own ``MARINESIM_CACHE_DIR`` and
``NUMBA_CACHE_DIR``), so nothing compiled before weighs on it:

* ``tick``: a short run of the scenario waiting for its tick (``MARINESIM_COMPILE=wait``):
  ``laws_s``, the seconds its law functions took to compile (in ``jobs`` processes at once,
  :mod:`marinesim.engine.compiled.lawfunc`), and from numba's timers of the compiled loop
  ``tick_run`` its compile (``compile_s``), of it LLVM's optimisation and machine code
  (``llvm_s``) and the rest, numba's frontend (``frontend_s``: bytecode, typing, lowering to
  LLVM IR); ``tick_s`` the two together.  ``other_s``: what else the run compiled, before the
  tick: the plugins' own kernels, for the first tick, which the plugins run.
* ``then`` (``--then PATH=VALUE``, repeatable): the tick of the scenario with these
  overrides, on the caches the first run filled (a scenario changed by a plugin: the law
  functions it shares with the first are not compiled again).
* ``laws`` (``--laws``): each distinct law of the tick (its function and its arguments'
  types) compiled on its own, one after another in one process, in the tick's order
  (``seconds``; what two laws share is compiled with the first of them), and their sum
  (``laws_alone_s``) against the tick's ``tick_s`` (``laws_over_tick``).

Usage::

    python benchmarks/bench_compile.py [--only auv_survey_ins demo_survey] [--laws]
                                       [--then PATH=VALUE ...] [--json PATH]
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
from typing import Any

from _report import load_average as _loadavg
from _report import write_report

DEFAULT = ("auv_survey_ins",)
SETS = {"end_conditions": ["time"], "time.end": 2.0}


def laws_of(name: str) -> list[dict[str, Any]]:
    """The distinct laws of scenario ``name``'s tick, in its order: function, hook, how many
    calls of the tick run it with these argument types, and the arguments (no compile)."""
    from marinesim.engine.compiled.generate import array_of, wiring
    from marinesim.engine.compiled.route import plan
    from marinesim.scenario.build import load_simulation

    sim = load_simulation(name, sets=SETS)
    why, entries, _sparse = plan(sim)
    if why is not None:
        raise SystemExit(f"{name}: runs through the plugins: {why}")
    decls = [laws for _slot, laws in entries]
    order, index = wiring(decls)
    out: dict[tuple, dict[str, Any]] = {}
    for d, laws in enumerate(decls):
        for law in laws.laws:
            arrays = [array_of(decls, order[index[(d, a)]]) for a in law.args]
            kinds = tuple((a.dtype.str, a.ndim) for a in arrays)
            key = (law.fn, law.hook, kinds)
            if key in out:
                out[key]["calls"] += 1
            else:
                out[key] = {"law": f"{law.fn.__module__}.{law.fn.__name__}", "hook": law.hook,
                            "calls": 1, "fn": law.fn, "arrays": arrays}  # fmt: skip
    return list(out.values())


def _tick_child(name: str, sets: dict[str, Any] | None = None) -> dict[str, Any]:
    """In a fresh process: one run of ``name`` (with ``sets``) waiting for its tick; numba's
    timers."""
    from marinesim.engine.compiled import generate, lawfunc
    from marinesim.scenario.build import load_simulation

    loads: list[float] = []
    real_load = lawfunc.load

    def timed_load(mod: Any) -> None:
        t = time.perf_counter()
        real_load(mod)
        loads.append(time.perf_counter() - t)

    lawfunc.load = timed_load
    sim = load_simulation(name, sets={**SETS, **(sets or {})})
    t0 = time.perf_counter()
    res = sim.run()
    wall = time.perf_counter() - t0
    timers: dict[str, float] = {}
    for mod in generate._LOADED.values():
        if not hasattr(mod, "tick_run"):
            continue  # (a law function's module)
        fn = generate.jit_tick(mod, saved=False)  # the run's compiled tick_run, made once
        for sig in fn.signatures:
            for k, v in fn.get_metadata(sig)["timers"].items():
                timers[k] = timers.get(k, 0.0) + v
    comp, llvm = timers.get("compiler_lock", 0.0), timers.get("llvm_lock", 0.0)
    laws = sum(loads)
    return {
        "laws_s": round(laws, 2), "jobs": lawfunc.jobs(),
        "compile_s": round(comp, 2), "llvm_s": round(llvm, 2), "frontend_s": round(comp - llvm, 2),
        "tick_s": round(laws + comp, 2), "run_s": round(wall, 2), "other_s": round(wall - comp - laws, 2),
        "compiled_ticks": int(res.manifest["compiled_ticks"]),
    }  # fmt: skip


def _laws_child(name: str) -> list[dict[str, Any]]:
    """In a fresh process: each distinct law of ``name``'s tick compiled alone, in order."""
    import numba

    rows = []
    for item in laws_of(name):
        common = "k, j, s, t, h" if item["hook"] == "substep" else "k, j, t, h"
        names = ", ".join(f"a{m}" for m in range(len(item["arrays"])))
        scope: dict[str, Any] = {"F": item["fn"]}
        exec(f"def law({common}, {names}):\n    return F({common}, {names})\n", scope)  # noqa: S102
        wrapper = numba.njit(error_model="numpy")(scope["law"])
        head = (0, 0, 0, 0.0, 0.1) if item["hook"] == "substep" else (0, 0, 0.0, 0.1)
        sig = tuple(numba.typeof(x) for x in (*head, *item["arrays"]))
        t0 = time.perf_counter()
        wrapper.compile(sig)
        rows.append({"law": item["law"], "hook": item["hook"], "calls": item["calls"],
                     "seconds": round(time.perf_counter() - t0, 2)})  # fmt: skip
    return rows


def _child(what: str, name: str, cache: str, sets: list[str] | None = None) -> Any:
    """Run ``_<what>_child(name)`` in a fresh process on the caches in ``cache``; its JSON
    result."""
    env = {**os.environ, "MARINESIM_CACHE_DIR": cache, "NUMBA_CACHE_DIR": f"{cache}/nb",
           "MARINESIM_COMPILE": "wait", "MARINESIM_QUIET": "1"}  # fmt: skip
    extra = [a for kv in (sets or []) for a in ("--set", kv)]
    out = subprocess.run(
        [sys.executable, __file__, "--child", what, name, *extra],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _sets(pairs: list[str]) -> dict[str, Any]:
    """``PATH=VALUE`` pairs (the value read as YAML, as ``marinesim run --set``)."""
    import yaml

    out = {}
    for kv in pairs:
        key, sep, val = kv.partition("=")
        if not sep:
            raise SystemExit(f"--set {kv!r}: expected PATH=VALUE")
        out[key] = yaml.safe_load(val)
    return out



def main(argv: list[str] | None = None) -> dict:
    """Measure each scenario; print its lines; return (and optionally write) the report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=list(DEFAULT), help="bundled scenario names")
    ap.add_argument("--laws", action="store_true", help="also compile each law on its own")
    ap.add_argument(
        "--then",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="then the tick of the scenario with this override, on the same caches",
    )
    ap.add_argument("--set", action="append", default=[], help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        what, name = args.child
        print(
            json.dumps(_tick_child(name, _sets(args.set)) if what == "tick" else _laws_child(name))
        )
        return {}
    rows = []
    for name in args.only:
        load0 = _loadavg()
        with tempfile.TemporaryDirectory() as cache:
            row: dict[str, Any] = {"scenario": name, **_child("tick", name, cache)}
            if args.then:  # a variant of the scenario on the caches the first run filled
                row["then"] = {"sets": args.then, **_child("tick", name, cache, args.then)}
        print(
            f"{name}: tick ready in {row['tick_s']:.1f} s: its law functions "
            f"{row['laws_s']:.1f} s (up to {row['jobs']} processes), the loop {row['compile_s']:.1f} s "
            f"(LLVM {row['llvm_s']:.1f} s, numba's frontend {row['frontend_s']:.1f} s); the run's "
            f"other compiles {row['other_s']:.1f} s",
            flush=True,
        )
        if "then" in row:
            t = row["then"]
            print(
                f"  then with {' '.join(args.then)}: tick ready in {t['tick_s']:.1f} s (its new "
                f"law functions {t['laws_s']:.1f} s, the loop {t['compile_s']:.1f} s)",
                flush=True,
            )
        if args.laws:
            with tempfile.TemporaryDirectory() as cache:
                laws = _child("laws", name, cache)
            total = sum(r["seconds"] for r in laws)
            row.update(laws=laws, laws_alone_s=round(total, 2),
                       laws_over_tick=round(total / max(row["tick_s"], 1e-9), 2))  # fmt: skip
            for r in sorted(laws, key=lambda r: -r["seconds"]):
                print(f"  {r['seconds']:6.2f} s  {r['law']} ({r['hook']}, {r['calls']} calls)")
            print(f"  laws alone, one process {total:.1f} s = {row['laws_over_tick']}× the tick's")
        row["load"] = [load0, _loadavg()]
        rows.append(row)
    command = "python benchmarks/bench_compile.py " + " ".join(argv or sys.argv[1:])
    return write_report("compile", command.strip(), rows, args.json)


if __name__ == "__main__":
    main()

"""A plugin of a user's own in the generated tick: ``docs/examples/max_depth_metric.py``.

Its laws live in a module that the run imports from a folder put on ``sys.path`` (a script's
folder), not from an installed package.  The tick is compiled in other processes (the
background compile of a first run, the law functions in several processes), which must import
that module too: they get the run's ``sys.path``.  Before, the background compile failed on the
import, silently, and every run of such a scenario stayed on the plugins.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from marinesim.engine.compiled.background import child_env

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "max_depth_metric.py"

_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
import max_depth_metric
import numpy as np
from marinesim.scenario import load_simulation
sets = {"time.end": 60.0, "metrics": [{"name": "deep", "plugin": "max_depth"}]}
sim = load_simulation("demo_survey", sets=sets)
res = sim.run()
np.save(sys.argv[2], np.asarray(res["deep.max_depth"]))
rows = [r["value"] for r in res.metrics if r["plugin"] == "deep"]
json.dump({"compiled": res.manifest["compiled_ticks"], "ticks": res.manifest["ticks"],
           "why": sim.compiled_why_not, "rows": rows}, open(sys.argv[2] + ".json", "w"))
"""


def test_the_compile_processes_get_the_folders_of_sys_path(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path), "", *sys.path])
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    parts = child_env()["PYTHONPATH"].split(os.pathsep)
    assert parts[0] == str(tmp_path) and parts[1] == os.getcwd()  # ("": the working folder)
    assert parts[-1] == "/somewhere/else"  # what was there stays, after
    assert not any(p.startswith(sys.base_prefix) for p in parts)  # (the interpreter's own)


def test_a_plugin_imported_from_a_folder_compiles_in_the_background(tmp_path: Path) -> None:
    mods = tmp_path / "mods"
    mods.mkdir()
    shutil.copy(EXAMPLE, mods / EXAMPLE.name)
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MARINESIM_JIT")}
    env.update(MARINESIM_CACHE_DIR=str(cache), MARINESIM_COMPILE="background")

    def run(tag: str, **extra: str) -> tuple[np.ndarray, dict]:
        out = tmp_path / f"{tag}.npy"
        r = subprocess.run(
            [sys.executable, "-c", _RUN, str(mods), str(out)], env={**env, **extra},
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
        return np.load(out), json.loads(Path(str(out) + ".json").read_text())

    ref, rmeta = run("plugins", MARINESIM_JIT="0")
    assert rmeta["compiled"] == 0 and np.nanmax(ref) > 1.0
    first, fmeta = run("first")  # the tick compiles in another process meanwhile
    logs = sorted((cache / "ticks").glob("tick_*.bg.log"))
    assert len(logs) == 1
    deadline = time.monotonic() + 300
    while "compiled tick_" not in logs[0].read_text() and time.monotonic() < deadline:
        if "Error" in logs[0].read_text():
            break
        time.sleep(0.5)
    text = logs[0].read_text()
    assert "compiled tick_" in text, text[-2000:]  # (not: ModuleNotFoundError: max_depth_metric)
    again, ameta = run("again")
    assert ameta["why"] is None and ameta["compiled"] >= 0.9 * ameta["ticks"]
    for got, meta in ((first, fmeta), (again, ameta)):
        np.testing.assert_array_equal(got, ref)  # the same bits as the plugins'
        assert meta["rows"] == rmeta["rows"]


def test_the_example_declares_a_layout_for_cuda() -> None:
    pytest.importorskip("numba")
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import max_depth_metric  # noqa: F401
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    from marinesim.engine.compiled import gpu
    from marinesim.engine.compiled.route import plan
    from marinesim.scenario.build import build_simulation, load_scenario

    sc = load_scenario("demo_survey", sets={"metrics": [{"name": "deep", "plugin": "max_depth"}]})
    sim = build_simulation(sc, replicas=range(2))
    why, entries, _ = plan(sim)
    assert why is None
    decls = [laws for _slot, laws in entries]
    assert decls[-1].laws[0].fn.__name__ == "max_depth_tick"
    nw, parts = gpu.parts(decls)  # every array of every declaration splits among 2 worlds
    assert nw == 2 and len(parts) > 0


def test_a_layout_that_does_not_fit_names_the_plugin(monkeypatch) -> None:
    """The example's layout claiming twice its rows: the run would stop before its first tick
    with a ConfigError that names the plugin and the array (``route_for`` on CUDA)."""
    pytest.importorskip("numba")
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import max_depth_metric
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    from marinesim.core.errors import ConfigError
    from marinesim.engine.compiled import gpu
    from marinesim.engine.compiled.law import Worlds
    from marinesim.engine.compiled.route import _slot_name, plan
    from marinesim.scenario.build import build_simulation, load_scenario

    declare = max_depth_metric.MaxDepth.compiled_laws

    def doubled(self: Any, slot: Any, sim: Any) -> Any:
        laws = declare(self, slot, sim)
        laws.gpu = Worlds(2 * laws.gpu.n, laws.gpu.worlds)
        return laws

    monkeypatch.setattr(max_depth_metric.MaxDepth, "compiled_laws", doubled)
    sc = load_scenario("demo_survey", sets={"metrics": [{"name": "deep", "plugin": "max_depth"}]})
    sim = build_simulation(sc, replicas=range(2))
    why, entries, _ = plan(sim)
    assert why is None
    with pytest.raises(ConfigError, match=(
        r"plugin deep: its laws' CUDA layout \(Worlds\) does not fit: array 'deepest' \(6,\): "
        r"axis 0 does not hold the block's 12 rows"
    )):  # fmt: skip
        gpu.require_layouts([laws for _s, laws in entries], [_slot_name(s) for s, _l in entries])

"""The laws of the compiled tick as C-callable functions of their own
(:mod:`marinesim.engine.compiled.lawfunc`): shared by plugin sets, compiled apart, and a law
that fails, or one not yet loaded, handing its tick back."""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from marinesim.scenario.build import load_simulation

numba = pytest.importorskip("numba")

METRIC = {"metrics": [{"name": "dist", "plugin": "distance_travelled"}]}


def _tick(sets: dict | None = None):  # noqa: ANN202
    from marinesim.engine.compiled.generate import compile_tick, tick_module, tick_path
    from marinesim.engine.compiled.route import plan

    sim = load_simulation("demo_survey", sets={"time.end": 2.0, **(sets or {})})
    why, entries, _sparse = plan(sim)
    assert why is None
    decls = [laws for _s, laws in entries]
    fn, order, state = compile_tick(decls)
    return decls, fn, order, tick_module(tick_path(fn))


def test_plugin_sets_share_their_law_functions(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from marinesim.engine.compiled import lawfunc

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MARINESIM_COMPILE_JOBS", "1")
    _d, _fn, _o, mod = _tick()
    assert not lawfunc.all_cached(mod)
    lawfunc.load(mod)
    assert mod._FP[: len(mod.SITES)].all()  # every call site has its law's address
    first = set(lawfunc._paths(mod))
    assert lawfunc.all_cached(mod)
    # another plugin set (a world metric more): another tick, the same law functions
    _d2, _fn2, _o2, mod2 = _tick(METRIC)
    assert mod2 is not mod
    second = set(lawfunc._paths(mod2))
    assert first < second
    missing = [p for p in second if not lawfunc.cached(p)]
    assert missing and all(lawfunc._module(p)._law.__module__.endswith("metric_laws") for p in missing)


def test_a_tick_whose_laws_are_not_loaded_hands_back(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from marinesim.engine.compiled.generate import arena_tables, array_of

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))
    decls, fn, order, mod = _tick()
    arrays = [array_of(decls, key) for key in order]
    ad, dm = arena_tables(arrays)
    sched = np.array([1, 0, 1, 0], dtype=np.int64)[: 2 * sum(
        law.hook in ("autonomy", "control") for ls in decls for law in ls.laws)]  # fmt: skip
    kept = mod._FP.copy()
    mod._FP[:] = 0  # (as before lawfunc.load)
    try:
        assert fn(3, 10, 0.0, 0.2, 0.2, 1, sched, ad, dm, 0) == 3  # nothing run
    finally:
        mod._FP[:] = kept


def _law_module(tmp_path: Path):  # noqa: ANN202
    src = tmp_path / "mylaws.py"
    src.write_text(
        "from numba.extending import register_jitable\n\n\n"
        "@register_jitable\n"
        "def scale(k, j, t, h, x, out):\n"
        "    if t < 0.0:\n"
        "        raise ValueError('negative time')\n"
        "    for i in range(x.shape[0]):\n"
        "        out[i] = x[i, 0] * t\n"
        "    return 0\n"
    )
    spec = importlib.util.spec_from_file_location("mylaws", src)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["mylaws"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_law_that_raises_hands_its_tick_back(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from marinesim.engine.compiled import lawfunc

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path / "cache"))
    mod = _law_module(tmp_path)
    try:
        path = lawfunc.law_path(mod.scale, False, (("float64", 2), ("float64", 1)))
        law = lawfunc.cfunc_of(path)
        x, out = np.arange(6.0).reshape(3, 2), np.zeros(3)
        ad = np.array([x.ctypes.data, out.ctypes.data], dtype=np.int64)
        dm = np.array([3, 2, 3], dtype=np.int64)
        six = np.array([0, 0, 1, 2], dtype=np.int64)  # (array, its first dimension) per argument
        p = ctypes.POINTER(ctypes.c_int64)
        tabs = (ad.ctypes.data_as(p), dm.ctypes.data_as(p), six.ctypes.data_as(p))
        assert law.ctypes(0, 0, 2.0, 0.1, *tabs) == 0
        np.testing.assert_array_equal(out, [0.0, 4.0, 8.0])
        assert law.ctypes(0, 0, -1.0, 0.1, *tabs) == 1  # raised: handed back
    finally:
        sys.modules.pop("mylaws", None)


def test_law_functions_compiled_apart_each_once(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from marinesim.engine.compiled import lawfunc
    from marinesim.engine.compiled.law import copy_log, copy_log_cm

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))
    kinds = (("float64", 2), ("float64", 3))
    paths = [lawfunc.law_path(f, False, kinds) for f in (copy_log, copy_log_cm)]
    assert not any(lawfunc.cached(p) for p in paths)
    lawfunc.compile_apart(paths, 2)
    assert all(lawfunc.cached(p) for p in paths)
    assert not list(tmp_path.rglob("*.claim"))  # the claims are cleared

"""The generated tick: its source from the declarations, its cache key, its notice, and the
generated loop interpreted (the same law functions in Python) against the plugins' ticks."""

from __future__ import annotations

import contextlib
import io
import sys
import threading

import numpy as np
import pytest
import yaml

from marinesim.scenario.build import load_simulation

numba = pytest.importorskip("numba")


def _decls(sets: dict | None = None):  # noqa: ANN202
    from marinesim.engine.compiled.route import plan

    sim = load_simulation("remus100_survey", sets={"time.end": 1.0, **(sets or {})})
    why, entries, _sparse = plan(sim)
    assert why is None
    return sim, entries


def test_source_composes_the_laws_in_phase_order() -> None:
    from marinesim.engine.compiled.generate import tick_source

    _sim, entries = _decls()
    src, order, state = tick_source([laws for _s, laws in entries])
    run_src = src[src.index("def tick_run(") : src.index("def tick_loop(")]
    loop_src = src[src.index("def tick_loop(") : src.index("def py_run(")]
    py_src = src[src.index("def py_run(") : src.index("def py_loop(")]
    pyloop_src = src[src.index("def py_loop(") :]
    for body, first in ((run_src, "call_law(_SYM, 0, k, j, t, h"), (py_src, "F0(k, j, t, h")):
        i_ctl = body.index(first)  # the autopilot (control) …
        i_sub = body.index("for s in range(nsub)")  # … before the substeps …
        i_aft = body.index("start + (k + 1) * dt")  # … before what describes t_{k+1}
        assert i_ctl < i_sub < i_aft
    assert "autopilot_tick" in src and "pvs_substep" in src and "pvs_after" in src
    # wires are one array each, shared by the autopilot and the motion
    assert order.count("bus.fins_cmd") == 1 and order.count("truth.eta") == 1
    # the interpreted loop saves each state array; the compiled one copies the rows of its
    # copy table (the same arrays: generate.arena_tables)
    assert all(f"copy_into(s{i}, a{i})" in pyloop_src for i in state)
    assert "copy_rows(SV, 0)" in loop_src and "copy_rows(SV, 1)" in loop_src
    # the run's loops (tick_run, py_run) have the same laws and neither the save arrays nor
    # the copies
    assert state and "copy_" not in run_src and "save" not in run_src and " s0" not in py_src
    assert "copy_" not in py_src and "save" not in py_src
    calls = [ln.strip() for ln in run_src.splitlines() if "st = call_law" in ln]
    assert calls and calls == [ln.strip() for ln in loop_src.splitlines() if "st = call_law" in ln]
    # a law's STOP_AFTER (negative) lets its tick go on and ends the call after it: −k
    lines = [ln.strip() for ln in run_src.splitlines()]
    after = [lines[i + 1] for i, ln in enumerate(lines) if ln.startswith("st = call_law")]
    assert after == ["if st < 0:"] * len(calls)
    for body in (run_src, loop_src, py_src, pyloop_src):
        assert "if fin != 0:\n            break\n    return -k if fin != 0 else k" in body
    pycalls = [ln.strip() for ln in py_src.splitlines() if "st = F" in ln]
    assert len(pycalls) == len(calls) and pycalls == [
        ln.strip() for ln in pyloop_src.splitlines() if "st = F" in ln
    ]


def test_cache_key_follows_the_law_sources(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from marinesim.engine.compiled import generate

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))
    _sim, entries = _decls()
    decls = [laws for _s, laws in entries]
    extra = tmp_path / "law.py"
    extra.write_text("x = 1\n")
    decls[0].sources = (*decls[0].sources, extra)
    src = generate.tick_source(decls)[0]
    p1 = generate._path(src, decls)
    extra.write_text("x = 2\n")  # an edited law: another file, never stale machine code
    p2 = generate._path(src, decls)
    assert p1 != p2 and p1.parent == p2.parent == tmp_path / "ticks"
    assert not generate.is_cached(decls)


def test_one_process_compiles_a_plugin_set_at_a_time(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    # a second holder of the lock (another process; here another open of the lock file, which
    # flock treats the same way) waits until the first lets go
    from marinesim.engine.compiled import generate

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))
    _sim, entries = _decls()
    decls = [laws for _s, laws in entries]
    order: list[str] = []

    def other() -> None:
        with generate.compile_lock(decls):
            order.append("other")

    with generate.compile_lock(decls):
        th = threading.Thread(target=other)
        th.start()
        th.join(0.5)
        assert th.is_alive() and order == []  # it waits: this one holds the lock
        order.append("this")
    th.join(10.0)
    assert order == ["this", "other"]
    path = generate._path(generate.tick_source(decls)[0], decls)
    assert path.with_suffix(".lock").is_file()


def test_the_tick_file_is_written_once(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    # numba's disk cache is stamped with the file's modification time: never rewritten
    from marinesim.engine.compiled import generate

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))
    _sim, entries = _decls()
    decls = [laws for _s, laws in entries]
    generate.compile_tick(decls, interpreted=True)
    path = generate._path(generate.tick_source(decls)[0], decls)
    st = path.stat()
    generate._LOADED.pop(path, None)
    generate.compile_tick(decls, interpreted=True)
    st2 = path.stat()
    assert (st.st_ino, st.st_mtime_ns) == (st2.st_ino, st2.st_mtime_ns)
    assert path.read_text() == generate.tick_source(decls)[0]
    assert not list(path.parent.glob("*.tmp"))


def test_notice_only_when_it_must_compile(monkeypatch) -> None:  # noqa: ANN001
    from marinesim.engine.compiled import notice

    class Fn:
        signatures: list = []

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.delenv("MARINESIM_QUIET", raising=False)
    monkeypatch.setattr(notice, "is_cached", lambda decls, saved=False: False)
    monkeypatch.setattr(notice, "compile_lock", lambda decls: contextlib.nullcontext())
    with notice.compiling(Fn(), []):
        pass
    text = err.getvalue()
    assert text.startswith(notice.MESSAGE) and "compiled in" in text
    err.truncate(0)
    err.seek(0)
    monkeypatch.setattr(notice, "is_cached", lambda decls, saved=False: True)
    with notice.compiling(Fn(), []):
        pass
    assert err.getvalue() == ""


def test_generated_loop_interpreted_equals_the_plugins(monkeypatch) -> None:  # noqa: ANN001
    # MARINESIM_JIT=interp runs the generated source in Python: the same law functions the
    # compiled tick runs, interpreted.  Interpreted and compiled arithmetic round the model's
    # libm calls differently in the last bit (a few ulp seen): every signal within 1e-12 of
    # its own scale, the agreement between routes
    def run(compiled: bool):  # noqa: ANN202
        sim = load_simulation("remus100_survey", sets={"time.end": 3.0})
        sim.compiled = compiled
        return sim.run()

    a = run(False)
    monkeypatch.setenv("MARINESIM_JIT", "interp")
    b = run(True)
    assert b.manifest["compiled_ticks"] > 20
    assert list(a.signals) == list(b.signals)
    assert a.t.tobytes() == b.t.tobytes()
    for name in a.signals:
        x, y = a[name], b[name]
        scale = max(float(np.nanmax(np.abs(x))), 1e-300)
        assert np.array_equal(np.isnan(x), np.isnan(y)), name
        assert float(np.nanmax(np.abs(x - y))) <= 1e-12 * scale, name


@pytest.mark.parametrize("rate_hz", [5.0, 10.0 / 3.0])
def test_a_controller_at_its_own_rate(rate_hz: float) -> None:
    # the autopilot every 2nd / 3rd tick: the generated loop's schedule, the hook-call and
    # bus counts of the ticks it skipped
    def run(compiled: bool):  # noqa: ANN202
        sim = load_simulation(
            "remus100_survey",
            sets={"time.end": 15.0, "entities.0.controllers.0.rate_hz": rate_hz},
        )
        sim.compiled = compiled
        return sim.run()

    a, b = run(False), run(True)
    assert b.manifest["compiled_ticks"] > 100
    from marinesim.testing import assert_runs_identical

    assert_runs_identical(a, b, routes=True)


def test_warmup_covers_the_declared_bundled_scenarios() -> None:
    from marinesim.cli.bench import warm_compiled_ticks

    t = warm_compiled_ticks()
    assert "tick remus100_survey" in t  # declared: fossen6dof (REMUS 100) + autopilot
    assert "tick bluerov2_station_keeping" in t  # station keeping + pinv + T200 plant
    assert "tick bluerov2_thruster_failure" in t  # two blocks, pinv and qp allocators
    assert "tick ardusub_sawtooth" in t  # an ArduSub SITL's plant (sitl_servo, 6-DOF)


def test_warmup_of_a_sitl_scenario_compiles_the_stepped_loop(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The SITL backend steps its scenario (``tick_loop`` and its packed entry): the warm-up
    drives the backend's plant for a few frames, so that loop is in the cache too."""
    import marinesim.interop.sitl  # noqa: F401 - registers sitl_servo
    from marinesim.cli.bench import _warm_stepped
    from marinesim.engine.compiled.generate import is_cached
    from marinesim.engine.compiled.route import plan
    from marinesim.scenario.build import load_simulation

    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MARINESIM_COMPILE", "wait")
    decls = [laws for _s, laws in plan(load_simulation("ardusub_sawtooth"))[1]]
    assert not is_cached(decls, saved=True)
    _warm_stepped("ardusub_sawtooth", frames=20)
    assert is_cached(decls, saved=True)
    assert any(tmp_path.glob("ticks/**/tick_*.tick_loop-*.nbi"))  # the direct frames' entry


def test_warmup_compiles_the_largest_ticks_first_in_several_processes() -> None:
    from marinesim.cli.bench import _warm_plan, warm_compiled_ticks

    names, todo, why = _warm_plan(["demo_survey", "auv_survey_ins", "surftrak_sawtooth"])
    assert todo[0] == "auv_survey_ins" and set(todo) == set(names) and not why
    # two spawned processes (each compiles, or loads from the cache, its scenario's tick);
    # the results in the order given
    t = warm_compiled_ticks(["surftrak_sawtooth", "demo_survey"], jobs=2)
    assert list(t) == ["tick surftrak_sawtooth", "tick demo_survey"]
    assert all(isinstance(v, float) and v > 0.0 for v in t.values())


def test_warmup_of_given_scenarios_from_the_cli(tmp_path, capsys) -> None:  # noqa: ANN001
    # a scenario file of one's own (a copy of demo_survey) and a bundled name: the first's tick
    # is compiled (or loaded), the second says why its ticks go through the plugins
    from importlib import resources

    from marinesim.cli.main import main

    root = resources.files("marinesim.scenario") / "builtin"
    text = (root / "demo_survey.yaml").read_text()
    cfd = str(root / "demo_current.cfd")
    mission = tmp_path / "my_mission.yaml"
    mission.write_text(text.replace("file: demo_current.cfd", f"file: {cfd}"))
    # the same with SCRIMMAGE's SimpleINS as its navigation (a Python-only belief writer)
    ins_text = yaml.safe_load(mission.read_text())
    ins_text["name"] = "with_simple_ins"
    ins_text["entities"][0]["sensors"] = [{"name": "ins", "plugin": "simple_ins", "params": {
        "q_distance": 0.01, "q_time": 0.01, "vel_std": 0.05, "roll_std_deg": 0.1,
        "pitch_std_deg": 0.1, "yaw_std_deg": 0.5, "gps_std": 2.0,
        "surface_time_choices_s": [15.0, 30.0]}}]  # fmt: skip
    other = tmp_path / "with_simple_ins.yaml"
    other.write_text(yaml.safe_dump(ins_text))
    assert main(["bench", "warmup", str(mission), str(other)]) == 0
    out = capsys.readouterr().out.splitlines()
    mine = next(line for line in out if line.startswith("tick my_mission "))
    assert float(mine.split()[2]) > 0.0 and mine.endswith(" s")
    ins = next(line for line in out if line.startswith("tick with_simple_ins "))
    assert "runs through the plugins: plugin 'ins' runs only tick by tick" in ins
    assert out[-1].startswith("total ")
    bad = tmp_path / "bad.yaml"
    bad.write_text("marinesim: 1\nname: bad\ntime: {dt: -1}\n")
    assert main(["bench", "warmup", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "Traceback" not in err

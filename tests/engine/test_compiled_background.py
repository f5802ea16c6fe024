"""A tick missing from the cache compiles in another process while the plugins run the ticks.

:mod:`marinesim.engine.compiled.background`: the first compiled call of a run on an empty cache
starts ``python -m marinesim.engine.compiled.background``; the run goes on through the plugins
and, once that process has filled numba's disk cache, loads the machine code and runs the rest
compiled.  The result must be bit-identical to a run through the plugins alone.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from marinesim.engine.compiled import notice
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical

numba = pytest.importorskip("numba")


def test_a_cold_tick_compiles_apart_and_the_run_switches_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MARINESIM_CACHE_DIR", str(tmp_path))  # an empty tick cache
    monkeypatch.setenv("MARINESIM_COMPILE", "background")
    sets = {"time.end": 200.0, "end_conditions": ["time"]}
    sim = load_simulation("demo_survey", sets=sets)
    waited: list[float] = []

    def progress(t: float, end: float) -> None:
        # the first plugin tick after the compile started waits for it (however slow the
        # machine), so that the switch to the compiled tick happens within this run
        job = getattr(sim._span, "_bg", None) if sim._span else None
        if job is not None and not waited:
            t0 = time.monotonic()
            while job.state() == "running" and time.monotonic() - t0 < 900:
                time.sleep(0.2)
            waited.append(t)

    res = sim.run(progress)
    err = capsys.readouterr().err
    assert waited, "no background compile was started"
    assert notice.APART in err
    assert "run compiled" in err and "failed" not in err
    ticks, compiled = res.manifest["ticks"], res.manifest["compiled_ticks"]
    assert 0 < compiled < ticks  # the first ticks the plugins', the rest compiled
    assert compiled >= ticks - 20
    # the process left the tick's machine code in the cache: a second run compiles nothing
    ticks_dir = tmp_path / "ticks"
    assert list(ticks_dir.glob("tick_*.py")) and "compiled tick_" in next(
        ticks_dir.glob("*.bg.log")
    ).read_text()
    again = load_simulation("demo_survey", sets=sets)
    res2 = again.run()
    assert notice.APART not in capsys.readouterr().err
    assert compiled < res2.manifest["compiled_ticks"] >= ticks - 10  # (the gusts: plugin ticks)
    plugins = load_simulation("demo_survey", sets=sets)
    plugins.compiled = False
    ref = plugins.run()
    assert_runs_identical(ref, res, routes=True)
    assert_runs_identical(ref, res2, routes=True)


def test_wait_and_required_compiles_do_not_start_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from marinesim.engine.compiled import background

    started: list[object] = []
    monkeypatch.setattr(background, "start", lambda *a: started.append(a))  # never launched
    monkeypatch.setenv("MARINESIM_COMPILE", "wait")
    assert not background.allowed()
    monkeypatch.setenv("MARINESIM_COMPILE", "background")
    assert background.allowed()
    sim = load_simulation("demo_survey", sets={"time.end": 2.0})
    sim.compiled = True  # required: this process compiles (or loads the shared cache's)
    res = sim.run()
    assert res.manifest["compiled_ticks"] > 0 and not started

"""Why a run's ticks go through the plugins: ``Simulation.compiled_why_not`` and the manifest's
``compiled_why_not``; ``marinesim run --compiled / --no-compiled``."""

from __future__ import annotations

import json

import pytest

from marinesim.cli.main import main
from marinesim.core.errors import ConfigError
from marinesim.scenario import load_simulation


def _run(name: str, compiled: bool | None, **kw: object) -> dict:
    sim = load_simulation(name, sets=["time.end=1"])
    sim.compiled = compiled
    return sim.run().manifest


def test_the_real_reason_and_required_is_an_error() -> None:
    # two blocks compile together: auv_survey_ins with a delayed IMU stays on the plugins for
    # its INS/EKF's replay of late samples
    why = (
        "block 'ins_auv': plugin 'nav' runs only tick by tick here: 'imu' has a delay: its late "
        "samples need the filter's replay, which runs on the plugins"
    )
    sets = ["time.end=1", "entities.0.sensors.0.params.delay=0.2"]
    sim = load_simulation("auv_survey_ins", sets=sets)
    man = sim.run().manifest
    assert man["compiled_ticks"] == 0
    assert man["compiled_why_not"] == why
    sim = load_simulation("auv_survey_ins", sets=sets)
    sim.compiled = True
    with pytest.raises(ConfigError, match=r"does not apply: block 'ins_auv': plugin 'nav'") as exc:
        sim.run()
    assert exc.value.param == "compiled"
    assert sim.manifest()["compiled_why_not"] == why


def test_compiled_and_switched_off_runs_report_it() -> None:
    on = _run("demo_survey", None)
    assert on["compiled_ticks"] > 0 and on["compiled_why_not"] is None
    off = _run("demo_survey", False)
    assert off["compiled_ticks"] == 0 and "compiled off" in off["compiled_why_not"]


def test_jit_0_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARINESIM_JIT", "0")
    man = _run("demo_survey", None)
    assert man["compiled_ticks"] == 0 and man["compiled_why_not"] == "MARINESIM_JIT=0"


def test_cli_compiled_flags(tmp_path, capsys) -> None:
    rc = main(["run", "demo_survey", "--set", "time.end=1", "--set", "time.time_warp=1",
               "--compiled", "--no-plot", "--no-progress", "-o", str(tmp_path / "a")])  # fmt: skip
    assert rc == 2
    assert "the compiled tick does not apply: time_warp (paced runs)" in capsys.readouterr().err
    man = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert man["status"] == "failed" and man["compiled_why_not"].startswith("time_warp")
    rc = main(["run", "demo_survey", "--set", "time.end=5", "--no-compiled", "--no-plot",
               "--no-progress", "-o", str(tmp_path / "b")])  # fmt: skip
    assert rc == 0
    man = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert man["compiled_ticks"] == 0 and man["compiled_why_not"].startswith("compiled off")


def test_a_signal_selection_runs_compiled() -> None:
    """``log_columns`` records fewer signals; the laws still start from the last values of the
    others (the recorder holds them), so the run stays on the compiled tick and the signals it
    records are the full run's, bit for bit."""
    import numpy as np

    full = load_simulation("demo_survey", sets={"time.end": 20.0})
    full.compiled = True
    rf = full.run()
    sel = load_simulation("demo_survey", sets={"time.end": 20.0, "log_columns": ["pid.*"]})
    sel.compiled = True
    rs = sel.run()
    man = rs.manifest
    assert man["compiled_why_not"] is None and man["compiled_ticks"] >= 0.9 * man["ticks"]
    pids = {n for n in rf.signals if n.startswith("pid.")}
    assert len(pids) >= 3 and len(rf.signals) > len(pids) + 8
    assert set(rs.signals) == {"truth.pos", "truth.heading", "truth.speed", "active", *pids}
    for name, sig in rs.signals.items():
        assert np.array_equal(np.asarray(sig.values), np.asarray(rf.signals[name].values),
                              equal_nan=True), name
    assert [(e.t, e.kind) for e in rs.events] == [(e.t, e.kind) for e in rf.events]

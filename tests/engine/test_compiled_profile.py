"""``law_costs``: each law call of the generated tick timed inside the tick, the run's bits
unchanged."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from marinesim.cli.main import app
from marinesim.core.errors import ConfigError
from marinesim.engine.compiled.profile import law_costs, prof_source, step_until_compiled
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical

numba = pytest.importorskip("numba")

SETS = {"entities.0.count": 12, "entities.0.autonomy.0.params.lawnmower.split": False,
        "time.end": 30.0}  # fmt: skip
SITES = [
    ("survey.survey", "autonomy", "waypoints_tick"),
    ("survey.pid", "control", "pid_tick"),
    ("survey.usm", "substep", "usm_tick"),
]


def _sim():  # noqa: ANN202
    sim = load_simulation("demo_survey", sets=SETS)
    sim.compiled = True
    return sim


def test_a_profiled_run_is_the_same_run_and_says_where_its_ticks_went() -> None:
    timed, plain = _sim(), _sim()
    assert step_until_compiled(timed, 5) == plain.step(5) == 5
    prof = law_costs(timed, 40)  # stepped: the loop with the state's save copies
    assert prof.ticks == 40 and 38 <= prof.compiled_ticks <= 42 and prof.vehicles == 12
    assert [(c.plugin, c.hook, c.law.rpartition(".")[2]) for c in prof.laws][:3] == SITES
    for c in prof.laws[:3]:  # these three do real work every tick
        assert c.rows == 12 and 0.0 < c.per_tick_s < 0.01
        assert c.ns_per_vehicle == pytest.approx(c.per_tick_s / 12 * 1e9)
    # the laws are inside the compiled calls, which are inside the wall clock
    assert 0.0 < prof.laws_s * prof.compiled_ticks <= prof.loop_s <= prof.wall_s
    text = prof.table()
    assert "waypoints_tick" in text and "ticks compiled of 40" in text.splitlines()[-1]
    rest = law_costs(timed)  # the rest of the run: Simulation.run's loop
    assert rest.ticks == 150 - 45 and rest.compiled_ticks > 90
    plain.step(40)
    a, b = timed.result, plain.run()
    assert_runs_identical(a, b)
    assert a.manifest["compiled_ticks"] == b.manifest["compiled_ticks"] > 140


def test_the_profiled_loops_are_the_tick_with_each_call_timed() -> None:
    sim = _sim()
    step_until_compiled(sim, 5)
    decls = [laws for _s, laws in sim._span.entries]
    src = prof_source(decls)
    assert "def prof_run(" in src and "def prof_loop(" in src
    assert src.count("lap(PC, 0, cycles(), call_law(_SYM, 0, ") == 2  # each loop, site 0
    assert "call_law_sub(_SYM, 2, k, j, s, " in src


def test_what_cannot_be_profiled_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="ticks must be >= 1"):
        law_costs(_sim(), 0)
    plugins = load_simulation("demo_survey", sets=SETS)
    plugins.compiled = False
    with pytest.raises(ConfigError, match="no compiled tick to profile: compiled off"):
        law_costs(plugins, 3)
    monkeypatch.setenv("MARINESIM_JIT", "interp")
    with pytest.raises(ConfigError, match="MARINESIM_JIT=interp"):
        law_costs(_sim(), 3)


def test_the_cli_prints_the_profile_as_json_and_names_bad_input() -> None:
    args = ["bench", "laws", "demo_survey", "--set", "entities.0.count=5", "--set",
            "time.end=20", "--warm", "4", "--json"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    names = [x["law"].rpartition(".")[2] for x in out["laws"]]
    assert names[:3] == ["waypoints_tick", "pid_tick", "usm_tick"]
    assert out["ticks"] == 100 - 4 and out["vehicles"] == 5
    assert out["laws_s"] == pytest.approx(sum(x["per_tick_s"] for x in out["laws"]))
    assert all(x["rows"] == 5 and x["ns_per_vehicle"] > 0 for x in out["laws"][:3])
    res = CliRunner().invoke(app, ["bench", "laws", "demo_survey", "--set", "entities.0.count=x"])
    assert res.exit_code == 2 and "entities.survey.count" in res.output

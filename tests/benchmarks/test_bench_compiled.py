"""``benchmarks/bench_compiled.py --replicas`` end to end on a short run (no speed asserted):
stacked worlds that end apart, both routes timed, the worlds' first and last ends and the
compiled ticks in the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numba")


def test_replicas_run_stacked_and_report_the_worlds_ends(tmp_path: Path, bench: Any) -> None:
    bench_compiled = bench("bench_compiled")
    js = tmp_path / "compiled.json"
    lm = "entities.survey.autonomy.survey.params.lawnmower"
    bench_compiled.main([
        "--only", "demo_survey", "--end", "300", "--replicas", "3", "--repeat", "1",
        "--set", f"{lm}.length=40", "--set", f"{lm}.width=40", "--set", f"{lm}.spacing=20",
        "--set", "entities.survey.spawn.spread.north=60", "--json", str(js),
    ])  # fmt: skip
    rep = json.loads(js.read_text())
    row = rep.get("results", rep)["scenarios"]["demo_survey"]
    assert row["replicas"] == 3
    assert row["first_world_ended_tick"] < row["ticks"] < 1500  # ended by all_done, apart
    assert row["ticks"] - 10 < row["compiled_ticks"] < row["ticks"]
    assert row["python_wall_s"] > 0 and row["compiled_wall_s"] > 0
    assert "--replicas 3" in rep["command"]

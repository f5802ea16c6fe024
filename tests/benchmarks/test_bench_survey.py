"""``benchmarks/bench_survey.py --sensors`` end to end at a small N (no speed asserted): the
block with the navigation sensors runs compiled, and its figures and the baseline without the
sensors (same run) are in the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numba")


def test_sensors_flag_reports_both_routes_and_the_baseline(tmp_path: Path, bench: Any) -> None:
    bench_survey = bench("bench_survey")
    js = tmp_path / "survey.json"
    bench_survey.main(["--n", "8", "--ticks", "30", "--repeat", "1", "--sensors", "--json", str(js)])
    rep = json.loads(js.read_text())
    res = rep.get("results", rep)
    assert res["sensors"] == ["imu", "ahrs", "depth_sensor", "dvl", "gps"]
    assert res["compiled_ticks"][0] >= 28  # every timed tick but a hand-back or two
    assert res["vehicle_steps_per_cpu_s"] > 0 and res["compiled_vehicle_steps_per_cpu_s"] > 0
    base = res["motion_only_compiled_vehicle_steps_per_cpu_s"]
    assert base > 0
    assert res["sensors_cost"] == pytest.approx(base / res["compiled_vehicle_steps_per_cpu_s"])
    assert "--sensors" in rep["command"]

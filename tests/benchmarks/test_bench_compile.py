"""``benchmarks/bench_compile.py``: the laws of a tick listed without compiling, and one cold
compile measured end to end in a fresh process (no speed asserted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numba")


def test_laws_of_demo_survey_in_the_ticks_order(bench: Any) -> None:
    laws = bench("bench_compile").laws_of("demo_survey")
    names = [(r["law"].rsplit(".", 1)[1], r["hook"], r["calls"]) for r in laws]
    # one block: waypoints, PID, usm (their logs by copy_log_cm, an ended world's truth
    # held by hold_rows), each law once per types: hold_rows for (N,) and (N, c) wires
    assert ("waypoints_tick", "autonomy", 1) in names
    assert ("pid_tick", "control", 1) in names
    assert ("usm_tick", "substep", 1) in names
    kinds = {(n, h, tuple(a.ndim for a in r["arrays"])) for (n, h, _c), r in zip(names, laws, strict=True)}
    assert len(kinds) == len(names)
    assert {k[2] for k in kinds if k[0] == "hold_rows"} == {(1, 1, 1, 1), (1, 1, 2, 2)}
    assert all(r["arrays"] for r in laws)


def test_a_cold_tick_compile_is_measured_and_reported(tmp_path: Path, bench: Any) -> None:
    js = tmp_path / "compile.json"
    bench("bench_compile").main(["--only", "demo_survey", "--json", str(js)])
    rep = json.loads(js.read_text())
    (row,) = rep["results"]
    assert row["scenario"] == "demo_survey"
    assert row["compiled_ticks"] > 0  # the run went on in the tick it waited for
    assert row["compile_s"] > 0 and row["llvm_s"] > 0 and row["laws_s"] > 0
    assert row["compile_s"] == pytest.approx(row["llvm_s"] + row["frontend_s"], abs=0.02)
    assert row["tick_s"] == pytest.approx(row["laws_s"] + row["compile_s"], abs=0.02)
    assert "--only demo_survey" in rep["command"]

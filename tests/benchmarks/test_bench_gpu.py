"""``benchmarks/bench_gpu.py``: without a device it says why (status 3, JSON); in numba's CUDA
simulator both parts run end to end and the CUDA rows agree with the CPU rows (no speed
asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_gpu.py"


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], env={**e, **env}, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip


def test_without_a_device_it_says_why() -> None:
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a CUDA device is present")
    out = _run([])
    assert out.returncode == 3, out.stderr[-2000:]
    rep = json.loads(out.stdout)
    assert rep["available"] is False and "no CUDA device" in rep["reason"]


def test_bad_arguments_are_named() -> None:
    out = _run(["--vehicles", "torpedo,submarine"])
    assert out.returncode == 2 and "--vehicles: unknown submarine" in out.stderr
    out = _run(["--sizes", "ten"])
    assert out.returncode == 2 and "--sizes" in out.stderr
    out = _run(["--parts", "engine,gpu"])
    assert out.returncode == 2 and "--parts: expected engine and/or fleet" in out.stderr
    out = _run(["--engine-scenarios", "demo_survey,ardusub_sawtooth"])
    assert out.returncode == 2 and "--engine-scenarios: unknown ardusub_sawtooth" in out.stderr
    out = _run(["--engine-worlds", "0"])
    assert out.returncode == 2 and "--engine-worlds: every value must be >= 1" in out.stderr


def test_in_the_cuda_simulator_the_rows_agree(tmp_path: Path) -> None:
    js = tmp_path / "gpu.json"
    out = _run(
        ["--parts", "fleet", "--sizes", "3", "--steps", "2", "--repeat", "1", "--vehicles",
         "torpedo", "--json", str(js)],
        NUMBA_ENABLE_CUDASIM="1",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    rep = json.loads(js.read_text())
    assert rep["available"] is True and "simulator" in rep["device"]["name"]
    (row,) = rep["results"]
    assert row["vehicle"] == "torpedo" and row["n"] == 3 and row["steps"] == 2
    assert row["alive_equal"] is True
    assert row["max_rel_diff"] <= 1e-12  # same source, libm rounding at most


def test_in_the_cuda_simulator_the_engine_rows_agree(tmp_path: Path) -> None:
    js = tmp_path / "gpu.json"
    out = _run(
        ["--parts", "engine", "--engine-worlds", "2", "--engine-ticks", "12", "--json", str(js)],
        NUMBA_ENABLE_CUDASIM="1",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    rep = json.loads(js.read_text())
    assert "results" not in rep  # (the fleet part not asked for)
    rows = {r["scenario"]: r for r in rep["engine"]}
    assert sorted(rows) == ["bluerov2_station_keeping", "demo_survey", "remus100_survey"]
    assert rows["demo_survey"]["n"] == 6 and rows["remus100_survey"]["n"] == 2
    assert rows["bluerov2_station_keeping"]["n"] == 2
    for r in rows.values():
        assert r["worlds"] == 2 and r["ticks"] == 12
        assert r["cpu_vehicle_steps_per_s"] > 0 and r["cuda_vehicle_steps_per_s"] > 0
        # the compiled CPU tick against the same laws run in Python: rounding at most
        assert r["max_rel_diff"] <= 1e-12

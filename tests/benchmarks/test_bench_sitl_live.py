"""``benchmarks/bench_sitl_live.py``: without an ArduSub SITL build it says why (status 3,
JSON); with ``MARINESIM_ARDUSUB`` (opt-in, ``-m live``) one short run end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_sitl_live.py"


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_without_a_sitl_build_it_says_why(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARINESIM_ARDUSUB")}
    out = _run([], env)
    assert out.returncode == 3, out.stderr[-2000:]
    rep = json.loads(out.stdout)
    assert rep["available"] is False and "MARINESIM_ARDUSUB" in rep["reason"]
    # a path that is not a binary is no build either
    out = _run([], {**env, "MARINESIM_ARDUSUB": str(tmp_path / "ardusub")})
    assert out.returncode == 3 and json.loads(out.stdout)["available"] is False


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("MARINESIM_ARDUSUB"), reason="set MARINESIM_ARDUSUB")
def test_a_short_live_run_reports_its_figures(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    out = _run(["--wall", "5", "--gcs", "yes", "--json", str(report)], dict(os.environ))
    assert out.returncode == 0, out.stderr[-2000:]
    (run,) = json.loads(report.read_text())["results"]["runs"]
    # lockstep at 1200 Hz: physics advanced (frames / 1200 s of it), the GCS heard SITL
    assert run["sim_time_s"] > 1.0 and run["frames_per_s"] * run["sitl_wall_s"] > 1200
    assert abs(run["sim_time_s"] * 1200 - run["frames_per_s"] * run["sitl_wall_s"]) < 1200 * 0.5
    assert run["gcs_messages"] and run["gcs_messages"] > 10
    assert run["backend_us_per_frame"] > 0 and run["sitl_us_per_frame"] > 0

"""The public API: ``marinesim.make_model``, ``marinesim.load``, ``marinesim.run`` — listed in
``__all__``, imported lazily (``import marinesim`` stays cheap), wrapping the scenario loader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import marinesim
from marinesim.core.errors import ConfigError, UnknownNameError


def test_public_names() -> None:
    assert {"make_model", "load", "run"} <= set(marinesim.__all__)
    for name in marinesim.__all__:
        assert getattr(marinesim, name) is not None
    with pytest.raises(AttributeError, match="no attribute"):
        _ = marinesim.not_a_name  # type: ignore[attr-defined]


def test_import_is_lazy() -> None:
    """``import marinesim`` pulls in neither the engine, the models nor the scenario loader."""
    code = (
        "import sys, marinesim; "
        "heavy = [m for m in ('marinesim.engine', 'marinesim.models', 'marinesim.scenario', "
        "'numpy', 'marinesim.api') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_make_model_steps_n_vehicles_like_one() -> None:
    m = marinesim.make_model("tanker", control_system="stepInput")
    x5 = m.init(5)
    x1 = m.init(1)
    cmd = np.full((5, 1), np.radians(10.0))
    for _ in range(50):
        x5 = m.step(x5, cmd, 0.02)
        x1 = m.step(x1, cmd[:1], 0.02)
    assert x5.x.shape == (5, 13)
    assert np.array_equal(x5.x[3], x1.x[0])
    assert x1.nu[0, 5] != 0.0  # the rudder turns the ship


def test_make_model_unknown_name() -> None:
    with pytest.raises(UnknownNameError, match="tanker"):
        marinesim.make_model("tankr")


def test_load_and_run_with_overrides(tmp_path: Path) -> None:
    sim = marinesim.load("supply_dp_current", time__end=2.0, current=0.0)
    res = sim.run()
    assert res.status == "completed" and res.t[-1] == pytest.approx(2.0)
    r2 = marinesim.run("supply_dp_current", time__end=2.0, current=0.0)
    assert np.array_equal(res["truth.pos"], r2["truth.pos"])
    r3 = marinesim.run("supply_dp_current", out=tmp_path / "log", fmt="csv", time__end=1.0)
    assert (tmp_path / "log" / "log.csv").exists() and r3.status == "completed"


def test_run_errors_are_clear() -> None:
    with pytest.raises(ConfigError, match="time.end"):
        marinesim.run("supply_dp_current", time__end=-1.0)
    with pytest.raises(ConfigError, match="fmt"):
        marinesim.run("supply_dp_current", fmt="xlsx")
    with pytest.raises(ConfigError):
        marinesim.load("no_such_scenario")

"""The progress of ``marinesim run``: a bar on a terminal, plain 10 % lines with an ETA on
stderr otherwise (what a test captures)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marinesim.cli.run import _run_with_bar
from marinesim.scenario import load_simulation

SCEN = """\
marinesim: 1
name: bar_test
seed: 3
time: {dt: 0.2, end: 12.0}
entities:
  - name: boat
    motion: {plugin: usm}
    controllers:
      - {name: pid, plugin: heading_speed_depth_pid}
    autonomy:
      - {name: wpt, plugin: waypoints, params: {points_ne: [[50, 0]], speed: 1.0}}
"""


def test_bar_reaches_the_end_and_does_not_change_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(SCEN)
    sim = load_simulation(p)
    sim.compiled = False  # tick by tick: the 10 % lines come between ticks
    with_bar = _run_with_bar(sim)
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.startswith("bar_test:")]
    assert captured.out == ""
    assert lines[-1].startswith("bar_test: 100% (12/12 s)"), captured.err
    assert any("ETA" in ln for ln in lines[:-1]) and len(lines) <= 11
    # the compiled route (this plugin set runs in a few calls) reaches the end just as well
    fast = _run_with_bar(load_simulation(p))
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("bar_test:")]
    assert lines[-1].startswith("bar_test: 100% (12/12 s)")
    plain = load_simulation(p).run()
    assert with_bar.status == fast.status == plain.status == "completed"
    for res in (with_bar, fast):
        np.testing.assert_array_equal(res.t, plain.t)
        np.testing.assert_array_equal(res["truth.pos"], plain["truth.pos"])

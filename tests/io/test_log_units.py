"""Units in the run directory, not only in manifest.json (issue 22): Parquet field metadata per
column, ``units.csv`` beside a ``log.csv`` that bare ``pandas.read_csv`` still reads, and one
unit convention for signals with several components."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import Plugin
from marinesim.engine.results import component_units
from marinesim.engine.simulation import Simulation
from marinesim.testing import HarnessMotion


class Logs(Plugin):
    """A scalar in m, a two-component signal in (m, deg), and one that appears at t = 1 s."""

    kind: ClassVar[str] = "autonomy"

    def autonomy(self, ctx: Any, rng: Any) -> None:
        ctx.log("range", np.full(ctx.n, 2.0 * ctx.t), "m")
        ctx.log("fix", np.stack([np.full(ctx.n, 3.0), np.full(ctx.n, 45.0)], 1), "m, deg",
                ("depth", "heading"))  # fmt: skip
        if ctx.t >= 1.0:
            ctx.log("late", np.full(ctx.n, ctx.t), "m/s")


def _run(out: Path, fmt: str) -> Any:
    block = BlockSpec(
        "v", 2, PluginSpec(HarnessMotion("m")), autonomy=(PluginSpec(Logs("a")),),
        spawn=Spawn(north=1.0),
    )  # fmt: skip
    sim = Simulation([block], dt=0.1, end=2.0, seed=1, name="units")
    sim.stream_to(out, fmt=fmt)
    sim._recorder.chunk_bytes = 600  # several parts, so the late signal grows written parts
    return sim.run()


EXPECTED = {
    "t": "s",
    "a.range": "m",
    "a.fix.depth": "m",
    "a.fix.heading": "deg",
    "a.late": "m/s",
}


def test_component_units_convention() -> None:
    assert component_units("m/s", 3) == ("m/s", "m/s", "m/s")
    assert component_units("m, m, m, deg", 4) == ("m", "m", "m", "deg")
    assert component_units("N, N m", 6) == ("N, N m",) * 6  # a list of another length: whole
    assert component_units("", 2) == ("", "")


def test_parquet_fields_carry_their_units(tmp_path: Path) -> None:
    _run(tmp_path / "run", "parquet")
    parts = sorted((tmp_path / "run" / "log.parquet").glob("part-*.parquet"))
    assert len(parts) >= 3
    for part in parts:  # every part, also those written before a.late existed
        schema = pq.read_schema(part)
        for col, unit in EXPECTED.items():
            md = schema.field(col).metadata
            assert md[b"unit"] == unit.encode(), (part.name, col)
        assert schema.field("a.fix.heading").metadata[b"signal"] == b"a.fix"
        assert schema.field("entity").metadata[b"unit"] == b""
    # the whole dataset reads back with the units and the values
    table = pq.read_table(tmp_path / "run" / "log.parquet")
    assert table.schema.field("a.fix.heading").metadata[b"unit"] == b"deg"
    df = table.to_pandas()
    assert np.all(df.loc[df["t"] > 0.05, "a.fix.heading"] == 45.0)
    late = df["a.late"].to_numpy()
    assert np.isnan(late[df["t"] < 0.95]).all() and np.isfinite(late[df["t"] > 1.05]).all()


def test_csv_reads_bare_and_units_csv_names_every_column(tmp_path: Path) -> None:
    _run(tmp_path / "run", "csv")
    df = pd.read_csv(tmp_path / "run" / "log.csv")  # no options: names and numbers intact
    assert list(df.columns[:3]) == ["entity", "block", "t"]
    assert list(df.columns[-4:]) == ["a.range", "a.fix.depth", "a.fix.heading", "a.late"]
    assert "truth.pos.north" in df.columns
    assert df["t"].dtype == float and df["a.fix.heading"].dtype == float
    later = df["t"] > 0.05
    # logged at the end of the tick that started 0.1 s earlier
    assert np.allclose(df.loc[later, "a.range"], 2.0 * (df.loc[later, "t"] - 0.1))
    units = pd.read_csv(tmp_path / "run" / "units.csv", keep_default_na=False)
    assert list(units.columns) == ["column", "unit", "signal"]
    assert list(units["column"]) == list(df.columns)  # one row per log column, same order
    got = dict(zip(units["column"], units["unit"], strict=True))
    assert {c: got[c] for c in EXPECTED} == EXPECTED
    assert got["entity"] == "" and got["block"] == "" and got["truth.pos.north"] == "m"
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["files"]["units"] == "units.csv"
    assert man["signals"]["a.fix"]["units"] == ["m", "deg"]


def test_usm_actuators_are_percent_in_every_file(tmp_path: Path) -> None:
    """Rudder and elevator of uSimMarine are percent (spec §1) in the log, units.csv, manifest."""
    from marinesim.scenario import load_simulation

    root = Path(__file__).resolve().parents[2]
    sim = load_simulation(root / "docs" / "examples" / "harbour_survey.yaml", sets={"time.end": 2})
    sim.stream_to(tmp_path / "run", fmt="both")
    sim.run()
    with (tmp_path / "run" / "units.csv").open(newline="") as fh:
        rows = {r["column"]: r["unit"] for r in csv.DictReader(fh)}
    acts = [c for c in rows if ".actuators." in c]
    assert acts and {c.rsplit(".", 1)[1] for c in acts} == {"thrust", "rudder", "elevator"}
    assert all(rows[c] == "%" for c in acts)
    part = sorted((tmp_path / "run" / "log.parquet").glob("part-*.parquet"))[0]
    schema = pq.read_schema(part)
    assert all(schema.field(c).metadata[b"unit"] == b"%" for c in acts)


def test_plugins_show_states_the_rudder_in_percent() -> None:
    """The plugin interface (``marinesim plugins show``) agrees with the log and the figures."""
    from marinesim.engine.describe import plugin_info, plugin_interface

    text = plugin_info("usm")
    assert "DESIRED_RUDDER (double, %)" in text and "DESIRED_ELEVATOR (double, %)" in text
    assert "NAV_HEADING (double, deg)" in text
    rows = [ln.split() for ln in plugin_interface("usm").splitlines() if "DESIRED_RUDDER" in ln]
    assert rows and rows[0][:3] == ["DESIRED_RUDDER", "double", "%"]
    pid = plugin_info("heading_speed_depth_pid")
    assert "max_rudder" in pid and "[%]" in pid and "[deg]" not in pid.split("max_rudder")[1][:60]

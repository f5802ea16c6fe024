"""Streaming logs: bounded recorder, Parquet parts and CSV as the run goes, log_rate/log_columns,
output names and folders checked before the run, failed writes reported (issues 9 §5, 12 §1,
13 §5)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from marinesim.cli.main import main
from marinesim.core.errors import ConfigError, EngineError
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import Plugin
from marinesim.engine.recorder import Chunk, Recorder
from marinesim.engine.results import LazySignals
from marinesim.engine.simulation import Simulation
from marinesim.io.log import LogWriter, load_run, safe_name
from marinesim.scenario import load_simulation
from marinesim.testing import HarnessMotion


class Late(Plugin):
    """Logs ``late.x`` only from t = 1 s on (a signal that appears after the first flush)."""

    kind: ClassVar[str] = "autonomy"

    def autonomy(self, ctx: Any, rng: Any) -> None:
        ctx.log("step", np.full(ctx.n, ctx.t), "s")
        if ctx.t >= 1.0:
            ctx.log("x", np.arange(ctx.n) + ctx.t, "m")


def _sim(n: int = 3, end: float = 2.0, **kw: Any) -> Simulation:
    block = BlockSpec(
        "v",
        n,
        PluginSpec(HarnessMotion("m")),
        autonomy=(PluginSpec(Late("late")),),
        spawn=Spawn(north=1.0, spread={"east": 1.0}),
    )
    return Simulation([block], dt=0.1, end=end, seed=5, name="stream", **kw)


def test_streamed_run_equals_in_memory_run(tmp_path: Path) -> None:
    ref = _sim().run()
    sim = _sim()
    sim.stream_to(tmp_path / "run", fmt="both")
    sim._recorder.chunk_bytes = 600  # 3 frames of 8 columns x 3 entities per part
    res = sim.run()
    assert isinstance(res.signals, LazySignals)
    parts = sorted((tmp_path / "run" / "log.parquet").glob("part-*.parquet"))
    assert len(parts) >= 5  # really streamed, not written at the end
    assert set(res.signals) == set(ref.signals)
    np.testing.assert_array_equal(res.t, ref.t)
    for name in ref.signals:
        np.testing.assert_array_equal(res[name], ref[name], err_msg=name)
    # the signal that appeared after the first flush (logged from the autonomy at t = 1.0 s,
    # so in the frames from t = 1.1 s) is NaN before, in the parts written before it existed
    x = res["late.x"][:, :, 0]
    early = res.t < 1.05
    assert np.all(np.isnan(x[:, early])) and np.all(np.isfinite(x[:, ~early]))
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["status"] == "completed" and man["frames"] == len(ref.t)
    back = load_run(tmp_path / "run")
    np.testing.assert_array_equal(back["late.x"], ref["late.x"])


def test_csv_opens_with_plain_read_csv_same_columns_as_parquet(tmp_path: Path) -> None:
    sim = _sim()
    sim.stream_to(tmp_path, fmt="both")
    sim._recorder.chunk_bytes = 8 * 3 * 12 * 5
    sim.run()
    csv = pd.read_csv(tmp_path / "log.csv")  # no options: no comment lines, plain header
    pq = pd.read_parquet(tmp_path / "log.parquet")
    assert list(csv.columns) == list(pq.columns)
    assert list(csv.columns[:3]) == ["entity", "block", "t"]
    assert csv["entity"].tolist() == pq["entity"].tolist()
    num = [c for c in pq.columns if c not in ("entity", "block")]
    np.testing.assert_array_equal(csv[num].to_numpy(), pq[num].to_numpy())  # exact round trip
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["seed"] == 5 and man["signals"]["late.x"]["unit"] == "m"


def test_csv_never_lags_the_parquet_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed between the two writes of a flush (``--format both``): every Parquet part
    on disk has its rows in the CSV already (the CSV is appended before the part appears)."""
    real = LogWriter._write_part
    seen: list[tuple[int, int]] = []

    def watched(self: LogWriter, table: Any, first: int) -> None:
        csv = self.dir / "log.csv"
        csv_rows = len(pd.read_csv(csv)) if csv.exists() else 0
        seen.append((csv_rows, (first * 3) + table.num_rows))
        real(self, table, first)

    monkeypatch.setattr(LogWriter, "_write_part", watched)
    sim = _sim()
    sim.stream_to(tmp_path, fmt="both")
    sim._recorder.chunk_bytes = 8 * 3 * 12 * 5
    sim.run()
    assert len(seen) >= 3
    for csv_rows, rows_with_part in seen:
        assert csv_rows == rows_with_part


def test_recorder_memory_is_bounded_whatever_the_duration() -> None:
    """With a sink, the buffers never exceed one chunk and nothing accumulates per frame."""

    class Counting:
        def __init__(self) -> None:
            self.frames = 0
            self.chunks = 0

        def write(self, chunk: Chunk) -> None:
            self.frames += len(chunk.t)
            self.chunks += 1
            chunk.done()  # buffers back to the recorder's pool

    def peak_bytes(frames: int) -> tuple[int, int]:
        sink = Counting()
        rec = Recorder({"a": 40, "b": 10}, chunk_bytes=64 * 1024, flush_s=1e9, sink=sink)
        peak = 0
        for k in range(frames):
            rec.log("a", "pos", np.full((40, 3), k * 1.0), "m", ("n", "e", "d"))
            rec.log("b", "pos", np.full((10, 3), -k * 1.0), "m", ("n", "e", "d"))
            rec.log("a", "speed", np.full(40, 2.0), "m/s")
            rec.frame(0.1 * k)
            held = sum(b.nbytes for b in rec._buf.values()) + rec._tbuf.nbytes
            held += sum(sum(v.nbytes for v in c.values.values()) for c in rec._chunks)
            held += sum(sum(v.nbytes for v in b.values()) for _cap, b in rec._spare)
            peak = max(peak, held)
        rec.finish()
        assert sink.frames == frames and rec._chunks == []
        return peak, sink.chunks

    short, n_short = peak_bytes(200)
    long, n_long = peak_bytes(4000)
    assert long == short  # 20× the duration, the same memory
    assert short <= 2 * 64 * 1024 + 8 * 4096  # the buffer being filled and one spare set
    assert n_long > 10 * n_short // 2


def test_decimation_and_column_selection_from_the_scenario(tmp_path: Path) -> None:
    text = """\
marinesim: 1
name: dec
seed: 1
time: {dt: 0.2, end: 5.0}
log_rate: 1.0
log_columns: ["pid.*"]
entities:
  - name: boat
    count: 2
    motion: {plugin: usm}
    controllers:
      - {name: pid, plugin: heading_speed_depth_pid}
"""
    p = tmp_path / "s.yaml"
    p.write_text(text)
    sim = load_simulation(str(p))
    sim.stream_to(tmp_path / "o")
    res = sim.run()
    np.testing.assert_allclose(res.t, np.arange(6.0))  # every 5th tick of dt = 0.2 s
    names = set(res.signals)
    assert {"truth.pos", "truth.heading", "truth.speed", "active"} <= names
    assert all(n.startswith(("truth.", "pid.")) or n == "active" for n in names), names
    assert any(n.startswith("pid.") for n in names)
    man = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert man["log_every_ticks"] == 5 and man["log_columns"] == ["pid.*"]
    # a rate that is not 1/(m·dt) is refused at its line
    p.write_text(text.replace("log_rate: 1.0", "log_rate: 0.7"))
    with pytest.raises(ConfigError, match=r"log_rate.*nearest"):
        load_simulation(str(p))


def test_last_tick_is_always_logged_with_decimation() -> None:
    res = _sim(end=1.05, log_rate=2.5).run()  # a frame every 4th tick of 0.1 s; ends at 1.1 s
    np.testing.assert_allclose(res.t, [0.0, 0.4, 0.8, 1.1])


def test_safe_name_keeps_outputs_in_their_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for bad in ("../../etc/passwd", "a/b", "..", "/abs/path", "x\\..\\y", ".hidden", ""):
        s = safe_name(bad)
        assert "/" not in s and "\\" not in s and ".." not in s and not s.startswith(".")
        assert s
    text = """\
marinesim: 1
name: "../../escaped/x"
seed: 3
time: {dt: 0.5, end: 1.0}
entities:
  - name: boat
    motion: {plugin: usm}
"""
    (tmp_path / "work").mkdir()
    p = tmp_path / "work" / "s.yaml"
    p.write_text(text)
    monkeypatch.chdir(tmp_path / "work")
    assert main(["run", str(p), "--no-plot", "--no-progress"]) == 0
    runs = list((tmp_path / "work" / "marinesim-runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "manifest.json").is_file()
    assert not (tmp_path / "escaped").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_output_folder_is_refused_before_the_run(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        sim = _sim()
        with pytest.raises(ConfigError, match="not writable"):
            sim.stream_to(ro / "out")
        assert sim.clock.k == 0 and not sim._started
    finally:
        ro.chmod(0o700)


def test_unwritable_output_folder_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-only folder (simulated for root, who bypasses permissions) and a file in the way."""
    real = Path.write_bytes

    def refuse(self: Path, data: bytes) -> int:
        if self.name.startswith(".marinesim-write-test"):
            raise PermissionError(errno.EROFS, "Read-only file system", str(self))
        return real(self, data)

    ticks: list[int] = []
    orig_tick = Simulation._tick
    monkeypatch.setattr(Simulation, "_tick", lambda self: (ticks.append(1), orig_tick(self)))
    monkeypatch.setattr(Path, "write_bytes", refuse)
    p = tmp_path / "s.yaml"
    p.write_text(
        "marinesim: 1\nname: ro\ntime: {dt: 0.5, end: 1.0}\n"
        "entities:\n  - name: boat\n    motion: {plugin: usm}\n"
    )
    assert main(["run", str(p), "-o", str(tmp_path / "o"), "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "is not writable: Read-only file system" in err and "Traceback" not in err
    assert ticks == []  # checked before the first step
    monkeypatch.setattr(Path, "write_bytes", real)
    (tmp_path / "file").write_text("in the way")
    assert main(["run", str(p), "-o", str(tmp_path / "file"), "--no-plot"]) == 2
    assert "is an existing file" in capsys.readouterr().err
    assert ticks == []


def test_full_disk_reports_itself_keeps_the_log_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = LogWriter._write_part
    calls = {"n": 0}

    def flaky(self: LogWriter, table: Any, first: int) -> None:
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, table, first)

    monkeypatch.setattr(LogWriter, "_write_part", flaky)
    sim = _sim(end=5.0)
    sim.stream_to(tmp_path)
    sim._recorder.chunk_bytes = 8 * 3 * 12 * 4
    with pytest.raises(EngineError, match="No space left on device") as info:
        sim.run()
    res = info.value.result  # type: ignore[attr-defined]
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["status"] == "failed"
    assert "No space left on device" in man["error"] and "log_error" in man
    df = pd.read_parquet(tmp_path / "log.parquet")  # what was written opens
    back = load_run(tmp_path)
    assert len(back.t) == len(df) // 3 and 0 < len(back.t) < 51
    np.testing.assert_array_equal(back["truth.pos"], res["truth.pos"])


def test_restore_before_streamed_frames_is_refused(tmp_path: Path) -> None:
    sim = _sim(end=5.0)
    sim.stream_to(tmp_path)
    sim._recorder.chunk_bytes = 1
    snap = sim.snapshot()
    sim.step(5)
    with pytest.raises(EngineError, match="already written"):
        sim.restore(snap)
    mem = _sim(end=5.0)
    snap = mem.snapshot()
    mem.step(5)
    mem.restore(snap)
    mem.step(5)
    np.testing.assert_array_equal(mem.run().t, _sim(end=5.0).run().t)

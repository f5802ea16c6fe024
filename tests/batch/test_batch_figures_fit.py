"""Batch figures follow what the runs have: no empty track plot for heave-only (SURFTRAK) runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from marinesim.batch.figures import save_batch_figures


def _logs(out: Path, moving: bool) -> None:
    logs = out / "logs"
    logs.mkdir(parents=True)
    t = np.arange(20) * 0.5
    for rid in ("p0000r00000", "p0000r00001"):
        east = 0.7 * t if moving else np.zeros_like(t)
        pd.DataFrame({"run_id": rid, "entity": "vehicle[0]", "t": t,
                      "truth.pos.north": np.zeros_like(t), "truth.pos.east": east,
                      "truth.pos.down": 10.0 + np.sin(t)}).to_parquet(logs / f"{rid}.parquet")  # fmt: skip


def test_heave_only_batch_draws_no_tracks(tmp_path: Path) -> None:
    _logs(tmp_path, moving=False)
    assert save_batch_figures(None, [], {}, tmp_path) == {}
    assert not (tmp_path / "tracks.png").exists()


def test_moving_batch_draws_its_tracks(tmp_path: Path) -> None:
    _logs(tmp_path, moving=True)
    paths = save_batch_figures(None, [], {}, tmp_path)
    assert list(paths) == ["tracks"]
    assert paths["tracks"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

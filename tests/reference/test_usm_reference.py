"""Replays of the real uSimMarine / uSimMarineV22 output shipped with marinesim.

One test per case (reference/README.md §1): every compared column within its tolerance,
blank cells blank.  Plus the live-timing form of the format (absolute MOOS times, variable
dt, mail by iteration) and the plain/gzip CSV loader.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from marinesim.reference import usm as ref
from marinesim.reference.runner import shipped_root

ROOT = shipped_root()
CASES = sorted((ROOT / "usm").glob("*.scenario.json")) + sorted(
    (ROOT / "usm_v22").glob("*.scenario.json")
)


def test_cases_are_shipped() -> None:
    assert len(CASES) == 18
    assert all(
        p.with_name(p.name.replace(".scenario.json", ".expected.csv.gz")).exists() for p in CASES
    )


@pytest.mark.parametrize("case", CASES, ids=[f"{p.parent.name}/{p.name[:-14]}" for p in CASES])
def test_reference_case(case: Path) -> None:
    (res,) = ref.verify_path(case)
    bad = [
        f"{c.column}: {c.max_error:.3g} > {c.tolerance:.3g} {c.note}"
        for c in res.columns
        if not c.passed
    ]
    assert res.passed, res.message or "; ".join(bad)


def test_replay_has_expected_columns_and_blank_row0() -> None:
    case = ROOT / "usm" / "drift_gusts_dual_state.scenario.json"
    df = ref.replay_case(case)
    assert list(df.columns) == ref.COLUMNS
    assert len(df) == 2001
    assert np.isnan(df.loc[0, "yaw"]) and np.isnan(df.loc[0, "pub_x"])
    assert df.loc[0, "gt_x"] == 0.0 and np.isnan(df.loc[0, "gt_heading_over_ground"])


def _live_copy(src: Path, dst_dir: Path, t_start: float, jitter: np.ndarray) -> Path:
    data = json.loads(src.read_text())
    dt = float(data["time"]["dt"])
    steps = int(data["time"]["steps"])
    times = t_start + np.cumsum(dt + jitter[:steps])
    data["time"] = {
        "startup_moos_time": f"{t_start:.6f}",
        "iteration_times_moos": [f"{t:.6f}" for t in times],
        "iteration_k": "mail delivered before iteration k",
    }
    for m in data["mail"]:
        k = int(np.ceil(float(m.pop("t")) / dt - 1e-9))
        m["iteration"] = max(k, 1)
    out = dst_dir / src.name
    out.write_text(json.dumps(data))
    return out


def test_live_timing_absolute_times(tmp_path: Path) -> None:
    src = ROOT / "usm" / "turning_thrust_levels.scenario.json"
    t0 = 1_763_800_000.25
    live = _live_copy(src, tmp_path, t0, np.zeros(3000))
    got = ref.replay_case(live)
    syn = ref.read_expected(src.with_name("turning_thrust_levels.expected.csv.gz"))
    assert got.loc[0, "t"] == 0.0 and got.loc[5, "t"] == pytest.approx(t0 + 0.5, abs=1e-6)
    # the same run on the absolute axis: differences only from double resolution at 1.8e9 s
    for col in ("x", "y", "speed"):
        np.testing.assert_allclose(got[col], syn[col], atol=1e-4)
    dh = (got["heading"] - syn["heading"] + 180.0) % 360.0 - 180.0
    assert float(np.abs(dh).max()) < 1e-4
    jit = np.random.default_rng(3).uniform(0.0, 3e-4, 3000)
    varied = ref.replay_case(_live_copy(src, tmp_path, t0, jit))
    assert not np.allclose(varied["x"], syn["x"], atol=1e-9)
    assert np.all(np.isfinite(varied["x"]))


def test_plain_and_gz_expected(tmp_path: Path) -> None:
    case = ROOT / "usm" / "pause_resume.scenario.json"
    shutil.copy(case, tmp_path / case.name)
    gz = case.with_name("pause_resume.expected.csv.gz")
    (tmp_path / "pause_resume.expected.csv").write_bytes(gzip.decompress(gz.read_bytes()))
    (res,) = ref.verify_path(tmp_path / case.name)
    assert res.passed


def test_broken_case_fails_with_reason(tmp_path: Path) -> None:
    p = tmp_path / "bad.scenario.json"
    p.write_text('{"provenance": {"program": "uSimMarineX"}, "time": {"dt": 0.1}}')
    (res,) = ref.verify_path(p)
    assert not res.passed and res.error and "uSimMarineX" in res.message


def test_default_mode_current_field_matches_reference_coupling() -> None:
    """Spec §8.4: with no general drift, marinesim's own coupling equals the reference one."""
    import dataclasses

    from marinesim.environment.current import CurrentField
    from marinesim.models import usm as km
    from marinesim.models.usm.config import configure

    case = ROOT / "usm" / "current_field.scenario.json"
    data = json.loads(case.read_text())
    field, _w = CurrentField.parse((case.parent / "current_field.cfd").read_text())
    lines = [(k, v, i + 1) for i, (k, v) in enumerate(data["config"])]
    cfg, _w = configure(lines, variant="usm", compat="doc")
    cfg = dataclasses.replace(cfg, current_field=field, current_field_active=True)
    st = km.init(cfg, 1)
    exp = ref.read_expected(case.with_name("current_field.expected.csv.gz"))
    mail = list(data["mail"])
    dt = float(data["time"]["dt"])
    for k in range(1, 601):
        t = k * dt
        while mail and float(mail[0]["t"]) <= t + 1e-9:
            m = mail.pop(0)
            st, _p, _w = km.apply_mail(cfg, st, m["var"], float(m["value"]), moos_time=t)
        st, _pubs = km.iterate(cfg, st, t)
    assert float(st.x[0]) == pytest.approx(float(exp["x"][600]), abs=1e-9)
    assert float(st.y[0]) == pytest.approx(float(exp["y"][600]), abs=1e-9)
    assert float(st.drift_x[0]) == 0.0  # the field is logged apart from the general drift
    assert float(st.current_x[0]) != 0.0 or float(st.current_y[0]) != 0.0


def test_reduced_column_set(tmp_path: Path) -> None:
    """Long cases keep only some columns; the HOG rule then uses the replayed positions."""
    case = ROOT / "usm" / "straight_default_map.scenario.json"
    shutil.copy(case, tmp_path / case.name)
    exp = ref.read_expected(case.with_name("straight_default_map.expected.csv.gz"))
    keep = ["t", "heading_over_ground", "pub_speed", "lat", "long", "gt_x"]
    exp[keep].to_csv(
        tmp_path / "straight_default_map.expected.csv", index=False, float_format="%.17g", na_rep=""
    )
    (res,) = ref.verify_path(tmp_path / case.name)
    assert res.passed, [c for c in res.columns if not c.passed]
    assert [c.column for c in res.columns] == keep
    assert list(ref.replay_case(tmp_path / case.name).columns) == keep

"""PythonVehicleSimulator replays (verify kind ``pvs``), one case per trajectory file."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, DataError
from marinesim.reference import pvs as ref
from marinesim.reference.runner import discover, shipped_root

SHIPPED = shipped_root() / "pvs"
MANIFEST = json.loads((SHIPPED / "manifest.json").read_text())


@pytest.mark.parametrize("fname", sorted(MANIFEST["files"]))
def test_shipped_case_passes(fname: str) -> None:
    """Tolerance (reference README §3.3): 1e-6 of each column's range; we reach ≈1e-13."""
    res = ref.verify_file(SHIPPED / fname, MANIFEST["files"][fname])
    assert res.passed, res.message
    assert "replayed from the CSV" not in res.message  # the built-in step inputs were used
    assert {c.column for c in res.columns} == set(MANIFEST["files"][fname]["columns"])
    # same operation order as upstream: far inside the ceiling
    assert all(c.max_error <= 1e-6 * c.tolerance for c in res.columns if c.tolerance > 1e-6)


def test_discovered_as_pvs_kind() -> None:
    assert ("pvs", SHIPPED) in [(k, p) for k, p in discover([SHIPPED])]


def test_remus_autopilot_end_state_from_spec() -> None:
    """Spec §5.5: remus100('depthHeadingAutopilot', 30, 50, 1525, 0.5, 170), 200 s:
    ψ = 0.87265 rad, z = 29.73 m, u = 2.398 m/s."""
    run = ref.simulate("remus100('depthHeadingAutopilot', 30, 50, 1525, 0.5, 170)", 10000, 0.02)
    c = run.columns
    assert c["psi"][0, -1] == pytest.approx(0.87265, abs=5e-6)
    assert c["z"][0, -1] == pytest.approx(29.73, abs=5e-3)
    assert c["u"][0, -1] == pytest.approx(2.398, abs=5e-4)
    assert {"z_d", "z_int", "theta_int", "e_psi_int", "psi_d", "r_d", "a_d"} <= set(c)
    assert np.max(np.abs(c["delta_r"])) <= 15 * np.pi / 180 + 1e-12


def test_otter_autopilot_reaches_heading_and_batch_matches_single() -> None:
    ctor = "otter('headingAutopilot', 100.0, 0.3, -30.0, 200.0)"
    one = ref.simulate(ctor, 1500, 0.02)
    three = ref.simulate(ctor, 1500, 0.02, n_vehicles=3)
    assert np.degrees(one.columns["psi"][0, -1]) == pytest.approx(100.0, abs=0.5)  # 30 s from 0°
    for k, v in one.columns.items():
        np.testing.assert_allclose(
            three.columns[k], np.broadcast_to(v, three.columns[k].shape), rtol=1e-11, atol=1e-11
        )


def test_open_loop_case_uses_logged_commands(tmp_path: Path) -> None:
    """An entry with ``control_sequence`` is driven by its *_cmd columns."""
    name = "remus100_stepInput.csv.gz"
    shutil.copy(SHIPPED / name, tmp_path / "open_loop.csv.gz")
    entry = dict(MANIFEST["files"][name], control_sequence="as logged")
    manifest = dict(MANIFEST, files={"open_loop.csv.gz": entry})
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (res,) = ref.verify_path(tmp_path)
    assert res.passed, res.message


def test_wrong_constructor_fails_the_case(tmp_path: Path) -> None:
    """A current the reference run did not have: the states disagree and the case fails."""
    name = "otter_stepInput.csv.gz"
    lines = gzip.decompress((SHIPPED / name).read_bytes()).decode().splitlines()
    (tmp_path / name).write_bytes(gzip.compress("\n".join(lines[:2002]).encode()))
    entry = dict(
        MANIFEST["files"][name], N=2000, constructor="otter('stepInput', 0, 0.5, 30.0, 120)"
    )
    (tmp_path / "manifest.json").write_text(json.dumps(dict(MANIFEST, files={name: entry})))
    (res,) = ref.verify_path(tmp_path)
    assert not res.passed


def test_constructor_parsing() -> None:
    assert ref.parse_constructor("remus100()  # stepInput mode") == ("remus100", [], {})
    name, args, _ = ref.parse_constructor("otter('headingAutopilot', 100.0, 0.3, -30.0, 200.0)")
    assert name == "otter" and args == ["headingAutopilot", 100.0, 0.3, -30.0, 200.0]
    with pytest.raises(ConfigError):
        ref.build("frigate('headingAutopilot')")
    with pytest.raises(ConfigError):
        ref.build("remus100(x)")


def test_missing_manifest_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        ref.verify_path(tmp_path)


def test_diverging_vehicle_is_stopped_and_named() -> None:
    """A NaN command stops that vehicle only; the message names its index and the time."""
    from marinesim.models.sixdof import pvs

    p = pvs.remus100()
    n = 3
    eta = tuple(np.zeros(n) for _ in range(6))
    nu = tuple(np.zeros(n) for _ in range(6))
    act = tuple(np.zeros(n) for _ in range(3))
    cmd = (np.zeros(n), np.zeros(n), np.array([1525.0, np.nan, 1200.0]))
    alive = np.ones(n, dtype=bool)
    events: list[str] = []
    for k in range(50):
        (eta, nu, act), alive, ev = pvs.step_batch(
            p, (eta, nu, act), cmd, 0.02, alive, (k + 1) * 0.02
        )
        events += ev
    assert alive.tolist() == [True, False, True]
    assert events == ["vehicle[1]: t=0.02 s: diverged: state became non-finite; vehicle stopped"]
    assert np.all(np.isfinite(np.array(nu)))
    assert nu[0][0] > nu[0][2] > 0  # the others went on (1525 rpm faster than 1200 rpm)
    # one vehicle: frozen and reported, the run still returns
    cmds = np.tile([0.0, 0.0, 1525.0], (101, 1))
    cmds[50:, 2] = np.inf
    run = ref.simulate(p, 100, 0.02, commands=cmds)
    assert run.alive.tolist() == [False] and "vehicle[0]: t=" in run.events[0]


def test_guard_catches_non_finite_velocity_and_speed_bound() -> None:
    """A NaN or inf in ν alone, and |ν| beyond the bound, stop just those vehicles."""
    from marinesim.models.sixdof.guard import guard

    n = 4
    old = (
        tuple(np.zeros(n) for _ in range(6)),
        tuple(np.zeros(n) for _ in range(6)),
        tuple(np.zeros(n) for _ in range(3)),
    )
    nu = [np.ones(n) for _ in range(6)]
    nu[1] = np.array([1.0, np.nan, 1.0, 1.0])
    nu[5] = np.array([1.0, 1.0, np.inf, 1.0])
    nu[0] = np.array([1.0, 1.0, 1.0, 80.0])
    new = (tuple(np.ones(n) for _ in range(6)), tuple(nu), tuple(np.ones(n) for _ in range(3)))
    arrays = [tuple(np.stack(part, axis=1) for part in s) for s in (old, new)]
    state_a, alive, events = guard(*arrays, np.ones(n, dtype=bool), 1.5, 50.0, 50.0)
    state = tuple(tuple(a[:, i] for i in range(a.shape[1])) for a in state_a)
    assert alive.tolist() == [True, False, False, False]
    assert events == [
        "vehicle[1]: t=1.5 s: diverged: state became non-finite; vehicle stopped",
        "vehicle[2]: t=1.5 s: diverged: state became non-finite; vehicle stopped",
        "vehicle[3]: t=1.5 s: diverged: speed 80.01 m/s exceeds max_speed 50 m/s; vehicle stopped",
    ]
    assert state[1][0].tolist() == [1.0, 0.0, 0.0, 0.0]  # stopped ones keep their last state


def test_externally_driven_case_without_flag_is_detected(tmp_path: Path) -> None:
    """Commands unlike the constructor's control system and no controller state logged:
    replayed from the CSV's *_cmd columns (the state columns still decide)."""
    from marinesim.models.sixdof import pvs

    p = pvs.remus100("stepInput", 0, 0, 0, 0.3, 45)
    t = np.arange(501) * 0.02
    cmds = np.stack(
        (np.radians(10) * np.sin(2 * np.pi * t / 40), np.full_like(t, -0.07), 1200 + 0 * t), 1
    )
    run = ref.simulate(p, 500, 0.02, commands=cmds)
    cols = MANIFEST["files"]["remus100_stepInput.csv.gz"]["columns"]
    table = np.stack([run.columns[c][0] for c in cols], axis=1)
    text = ",".join(cols) + "\n" + "\n".join(",".join(f"{v:.17g}" for v in row) for row in table)
    (tmp_path / "ol.csv.gz").write_bytes(gzip.compress(text.encode()))
    entry = {
        "constructor": "remus100('stepInput', 0, 0, 0, 0.3, 45)",
        "sampleTime": 0.02,
        "N": 500,
        "columns": cols,
    }
    (tmp_path / "manifest.json").write_text(
        json.dumps({"loop_semantics": "x", "files": {"ol.csv.gz": entry}})
    )
    (res,) = ref.verify_path(tmp_path)
    assert res.passed, res.message
    assert "replayed from the CSV" in res.message


@pytest.mark.parametrize("current", [0.0, 0.4])
def test_batched_step_leaves_its_inputs_untouched(current: float) -> None:
    """The kernel writes only its own output: the caller's state and command arrays are
    never modified, and vehicle 2 of the batch equals the same vehicle stepped alone (N = 1
    is the batch path: the same bits)."""
    from marinesim.models.sixdof import pvs

    for p in (
        pvs.remus100("stepInput", 0, 0, 0, current, 30),
        pvs.otter("stepInput", 0, current, -30, 0),
    ):
        nc = 3 if isinstance(p, pvs.Remus100Params) else 2
        rng = np.random.default_rng(3)
        n = 5
        st = (
            tuple(rng.normal(scale=0.2, size=n) for _ in range(6)),
            tuple(rng.normal(scale=0.5, size=n) for _ in range(6)),
            tuple(rng.normal(scale=0.1, size=n) for _ in range(nc)),
        )
        cmd = tuple(rng.normal(scale=0.1, size=n) for _ in range(nc))
        copies = [c.copy() for part in (*st, cmd) for c in part]
        new, alive, _ = pvs.step_batch(p, st, cmd, 0.02, np.ones(n, dtype=bool), 0.02)
        for a, b in zip([c for part in (*st, cmd) for c in part], copies, strict=True):
            np.testing.assert_array_equal(a, b)
        one, _, _ = pvs.step_batch(
            p,
            tuple(tuple(c[2:3] for c in part) for part in st),
            tuple(c[2:3] for c in cmd),
            0.02,
            np.ones(1, dtype=bool),
            0.02,
        )
        for part_b, part_1 in zip(new, one, strict=True):
            for cb, c1 in zip(part_b, part_1, strict=True):
                assert float(cb[2]) == float(c1[0])

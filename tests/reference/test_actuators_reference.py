"""Replays of the UUV Simulator actuator reference cases, one test per file.

The pure functions (dynamics, conversions, thruster chains, lift/drag sweeps, allocation
matrix) are held to 1e-12 relative (spec actuators_6dof.md §6); the fin series and wrench
cases to the reference README's 1e-9.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from marinesim.reference import actuators as ref
from marinesim.reference.runner import shipped_root, verify

SHIPPED = shipped_root() / "actuators"
SHARED = Path(__file__).resolve().parents[3].joinpath("shared", "reference", "actuators")
MANIFEST = json.loads((SHIPPED / "manifest.json").read_text(encoding="utf-8"))
LOOSE = {"fin_timeseries", "hydrodynamic_wrench"}


def _tol(entry: dict) -> float:
    kind = str(entry["kind"]).split()[0]
    return 1e-9 if kind in LOOSE else 1e-12


@pytest.mark.parametrize("name", sorted(MANIFEST["files"]))
def test_shipped_case(name: str) -> None:
    entry = MANIFEST["files"][name]
    res = ref.replay_file(SHIPPED, name, entry, rel_tol=_tol(entry))
    assert not res.error, res.message
    assert res.columns, "no column compared"
    bad = [(c.column, c.max_error, c.tolerance) for c in res.columns if not c.passed]
    assert not bad, bad


def test_all_shipped_cases_are_gzipped_and_complete() -> None:
    for name in MANIFEST["files"]:
        assert (SHIPPED / (name + ".gz")).is_file()
        assert not (SHIPPED / name).exists()
    assert "uuv_hmfossen_wrench_rexrov.csv" in MANIFEST["files"]


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not present")
def test_shipped_copies_equal_the_shared_cases() -> None:
    shared = json.loads((SHARED / "manifest.json").read_text(encoding="utf-8"))
    assert shared == MANIFEST
    for name in MANIFEST["files"]:
        assert gzip.decompress((SHIPPED / (name + ".gz")).read_bytes()) == (
            SHARED / name
        ).read_bytes()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not present")
def test_verify_shared_folder_plain_csv() -> None:
    results = verify([SHARED])
    assert len(results) == len(json.loads((SHARED / "manifest.json").read_text())["files"]) >= 10
    assert all(r.passed for r in results), [(r.case, r.message) for r in results if not r.passed]


def test_plain_and_gzipped_tables_read_the_same(tmp_path: Path) -> None:
    name = "conversion_linear_interp.csv"
    (tmp_path / name).write_bytes(gzip.decompress((SHIPPED / (name + ".gz")).read_bytes()))
    h1, c1 = ref.load_table(tmp_path / name)
    h2, c2 = ref.load_table(SHIPPED / (name + ".gz"))
    assert h1 == h2 and all((c1[k] == c2[k]).all() for k in h1)


def test_a_wrong_model_fails_and_a_broken_case_errors(tmp_path: Path) -> None:
    name = "dynamics_first_order_tau0.5.csv"
    shutil.copy(SHIPPED / (name + ".gz"), tmp_path / (name + ".gz"))
    entry = dict(MANIFEST["files"][name])
    entry["params"] = {"type": "FirstOrder", "timeConstant": 0.5 * (1 + 1e-6)}
    res = ref.replay_file(tmp_path, name, entry)
    assert not res.passed and not res.error
    entry["params"] = {"type": "SecondOrder"}
    res = ref.replay_file(tmp_path, name, entry)
    assert res.error and "SecondOrder" in res.message
    res = ref.replay_file(tmp_path, "missing.csv", entry)
    assert res.error and "not found" in res.message


_SIX = ("u", "v", "w", "p", "q", "r")
_WRENCH_OUT = ("nuR_", "accF_", "damp_", "addedmass_", "coriolisA_", "tauNED_")
_GZ = ("Fx_gz", "Fy_gz", "Fz_gz", "Mx_gz", "My_gz", "Mz_gz")


def _wrench_rows() -> list[dict]:
    """Rows worked by hand from spec §4.3, §4.5, §1.2 and UUV Simulator's HMFossen.

    Protocol of every row (README §2.1): a fresh plugin, call 1 at t = 0 with zero velocity
    (Δt = 0: no filter update), call 2 at t = 0.002 s with the row's velocity, whose
    filtered acceleration is a_f = 0.3·(ν_r − 0)/0.002 = 150·ν_r.
    """
    rex_ma = (779.79, -6.8773, -103.32, 8.5426, -165.54, -7.8033)  # column 0 of RexROV's M_A
    # RexROV, ν_r = e_x (FRD): damping X = −(74.82 + 748.22·1)·1 = −823.04 N; −C_A ν_r has
    # moments a1 × e_x = (0, a1_z, −a1_y) = (0, −103.32, 6.8773) N·m (spec §6 hand check);
    # a_f = 150 e_x, added mass −M_A a_f = −150 · (column 0 of M_A)
    surge: dict = {"nuR_u": 1.0, "accF_u": 150.0, "damp_u": -823.04}
    surge |= {"coriolisA_q": rex_ma[2], "coriolisA_r": -rex_ma[1]}
    for c, m in zip(_SIX, rex_ma, strict=True):
        surge[f"addedmass_{c}"] = -150.0 * m
    for c in _SIX:
        surge[f"tauNED_{c}"] = sum(surge.get(f"{p}{c}", 0.0) for p in _WRENCH_OUT[2:5])
    for j, g in enumerate(_GZ):
        surge[g] = surge[f"tauNED_{_SIX[j]}"] * (1.0 if j in (0, 3) else -1.0)  # FRD → FLU
    rows = [
        {"vehicle": "rexrov", "case": "surge", "lin": (1.0, 0, 0), "flow": (0, 0, 0), **surge},
        # the same relative velocity through a current (world = body: identity pose)
        {"vehicle": "rexrov", "case": "current", "lin": (1.2, 0, 0), "flow": (0.2, 0, 0)},
    ]
    rows[1].update(surge)
    rows[1]["nuR_u"] = 1.2 - 0.2
    # LAUV heave: FLU z-up 1.0 → FRD w = −1, a_f,w = −150; D_22 = 23 + 80·|w|,
    # D_42 = −3.1 (LAUV coupling, positive convention); M_A,22 = 16
    w = -1.0
    d = -(23 + 80 * abs(w)) * w
    rows.append(
        {
            "vehicle": "lauv",
            "case": "heave",
            "lin": (0, 0, 1.0),
            "flow": (0, 0, 0),
            "nuR_w": w,
            "accF_w": -150.0,
            "damp_w": d,
            "damp_q": 3.1 * w,
            "addedmass_w": -16.0 * -150.0,
            "tauNED_w": d + 2400.0,
            "tauNED_q": 3.1 * w,
            "Fz_gz": -(d + 2400.0),
            "My_gz": -3.1 * w,
        }
    )
    return rows


_CALLS = [{"t": 0.0, "velocity": "zero"}, {"t": 0.002, "velocity": "row"}]


def _write_wrench_case(
    folder: Path, rows: list[dict], vehicles: object, keys: dict | None = None
) -> None:
    head = ["vehicle", "case"] + [f"{p}{c}" for p in ("lin_", "ang_", "flow_") for c in "xyz"]
    head += [f"{p}{c}" for p in _WRENCH_OUT for c in _SIX] + list(_GZ)
    lines = [",".join(head)]
    for r in rows:
        cells = [r["vehicle"], r["case"], *map(repr, r["lin"]), "0", "0", "0"]
        cells += list(map(repr, r["flow"]))
        cells += [repr(float(r.get(f"{p}{c}", 0.0))) for p in _WRENCH_OUT for c in _SIX]
        cells += [repr(float(r.get(g, 0.0))) for g in _GZ]
        lines.append(",".join(cells))
    (folder / "hydro.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    entry = {
        "kind": "hydrodynamic_wrench (UUV Simulator HMFossen, one evaluation)",
        "vehicles": vehicles,
        "inputs": "lin_*, ang_*: link body velocity (FLU); flow_*: world flow (ENU)",
        # prose that must not be read: a regex would find "dt=0" and "dt = 0.5" here
        "procedure": "call 1 has dt=0 so nothing is updated; older cases used dt = 0.5 s",
        "rows": "independent: each row is one evaluation by a freshly constructed plugin",
        "calls": _CALLS,
        "outputs_from": "the last call",
    }
    entry.update(keys or {})
    manifest = {"files": {"hydro.csv": entry}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_hydrodynamic_wrench_case_built_from_the_spec(tmp_path: Path) -> None:
    _write_wrench_case(tmp_path, _wrench_rows(), "rexrov, lauv (uuv_descriptions)")
    (res,) = ref.verify_path(tmp_path)
    assert not res.error, res.message
    assert len(res.columns) == 6 * 6 + 6
    bad = [(c.column, c.max_error, c.tolerance) for c in res.columns if not c.passed]
    assert res.passed, bad
    # the added-mass force is the largest term here: a replay that ignored the calls (a_f = 0)
    # would miss it by 150 · 779.79 N
    assert max(c.tolerance for c in res.columns) < 1e-3


def test_hydrodynamic_wrench_reads_the_calls_not_the_prose(tmp_path: Path) -> None:
    # the same rows with the second call at t = 0.004 s: a_f halves, so the case fails
    _write_wrench_case(
        tmp_path,
        _wrench_rows(),
        "rexrov",
        {"calls": [{"t": 0.0, "velocity": "zero"}, {"t": 0.004, "velocity": "row"}]},
    )
    (res,) = ref.verify_path(tmp_path)
    assert not res.error and not res.passed
    bad = {c.column for c in res.columns if not c.passed}
    assert "accF_u" in bad and "addedmass_u" in bad and "damp_u" not in bad
    # one call with the row's velocity at t = 0: Δt = 0 from the fresh plugin, a_f stays 0
    rows = _wrench_rows()
    for r in rows:
        for k in [k for k in r if k.startswith(("accF_", "addedmass_"))]:
            r[k] = 0.0
        for c in _SIX:
            r[f"tauNED_{c}"] = sum(r.get(f"{p}{c}", 0.0) for p in _WRENCH_OUT[2:5])
        for j, g in enumerate(_GZ):
            r[g] = r[f"tauNED_{_SIX[j]}"] * (1.0 if j in (0, 3) else -1.0)
    _write_wrench_case(tmp_path, rows, "rexrov", {"calls": [{"t": 0.0, "velocity": "row"}]})
    (res,) = ref.verify_path(tmp_path)
    assert res.passed, (res.message, [c.column for c in res.columns if not c.passed])


@pytest.mark.parametrize(
    ("keys", "needle"),
    [
        ({"calls": [{"t": 0.0, "velocity": "zero"}, {"t": 0.0, "velocity": "row"}]}, "<= 0"),
        ({"calls": [{"t": 0.01, "velocity": "zero"}, {"t": 0.005, "velocity": "row"}]}, "<= 0"),
        ({"calls": [{"t": -1.0, "velocity": "row"}]}, "calls[0].t"),
        ({"calls": [{"t": 0.0, "velocity": "fast"}]}, "velocity"),
        ({"calls": []}, "calls"),
        ({"rows": "successive calls of one plugin"}, "rows"),
        ({"outputs_from": "the first call"}, "outputs_from"),
    ],
)
def test_hydrodynamic_wrench_malformed_protocol_is_an_error(
    tmp_path: Path, keys: dict, needle: str
) -> None:
    _write_wrench_case(tmp_path, _wrench_rows(), "rexrov", keys)
    (res,) = ref.verify_path(tmp_path)
    assert res.error and needle in res.message, res.message


def test_hydrodynamic_wrench_detects_a_wrong_value_and_unknown_vehicle(tmp_path: Path) -> None:
    rows = _wrench_rows()
    rows[0]["damp_u"] = -823.04 * (1 + 1e-6)  # wrong in the 7th digit
    _write_wrench_case(tmp_path, rows, "rexrov, lauv")
    (res,) = ref.verify_path(tmp_path)
    assert not res.error and not res.passed
    assert [c.column for c in res.columns if not c.passed] == ["damp_u"]
    rows = _wrench_rows()
    for r in rows:
        r["vehicle"] = "nautilus"
    _write_wrench_case(tmp_path, rows, ["nautilus"])
    (res,) = ref.verify_path(tmp_path)
    assert res.error and "nautilus" in res.message


def test_hydrodynamic_wrench_explicit_parameters_and_knobs(tmp_path: Path) -> None:
    # the LAUV row with the parameters written out (UUV signs) and scaling knobs:
    # s_D = 2 doubles every damping entry, s_A = 0.5 halves the added mass
    rows = [r for r in _wrench_rows() if r["vehicle"] == "lauv"]
    for r in rows:
        for k in list(r):
            if k.startswith("damp_"):
                r[k] *= 2.0
            if k.startswith("addedmass_"):
                r[k] *= 0.5
        r["tauNED_w"] = r["damp_w"] + r.get("addedmass_w", 0.0)
        r["tauNED_q"] = r["damp_q"]
        r["Fz_gz"], r["My_gz"] = -r["tauNED_w"], -r["tauNED_q"]
    lauv = {
        "added_mass": "1 16 16 0.005 1.3 1.3",
        "linear_damping": "-2.4 0 0 0 0 0  0 -23 0 0 0 11.5  0 0 -23 0 -11.5 0 "
        "0 0 0 -0.3 0 0  0 0 3.1 0 -9.7 0  0 -3.1 0 0 0 -9.7",
        "quadratic_damping": [-2.4, -80, -80, -0.0006, -9.1, -9.1],
        "scaling_damping": 2.0,
        "scaling_added_mass": 0.5,
    }
    _write_wrench_case(tmp_path, rows, {"lauv": lauv})
    (res,) = ref.verify_path(tmp_path)
    assert res.passed, (res.message, [c.column for c in res.columns if not c.passed])


def test_tolerance_has_an_absolute_floor(tmp_path: Path) -> None:
    """README §2.2: 1e-9 · max(1, max |expected|): residue 5e-10 in a zero column passes,
    2e-9 fails; in a column of size 1e4 the bound is 1e-5."""
    rows = _wrench_rows()
    rows[0]["nuR_v"] = 5e-10
    _write_wrench_case(tmp_path, rows, "rexrov, lauv")
    (res,) = ref.verify_path(tmp_path)
    col = {c.column: c for c in res.columns}
    assert res.passed and col["nuR_v"].tolerance == 1e-9
    assert col["Fx_gz"].tolerance == pytest.approx(1e-9 * 150 * 779.79 + 1e-9 * 823.04)
    rows[0]["nuR_v"] = 2e-9
    _write_wrench_case(tmp_path, rows, "rexrov, lauv")
    (res,) = ref.verify_path(tmp_path)
    assert [c.column for c in res.columns if not c.passed] == ["nuR_v"]


def test_fin_description_parsing() -> None:
    xyz, rpy, lo, hi = ref._fin_geometry(
        "LAUV fin 1 (lauv_gazebo actuators.xacro): origin xyz (-0.4,-0.04,0) rpy (pi/2,0,0), "
        "joint axis z, limits +-90*d2r (d2r=0.01745329)"
    )
    assert xyz == (-0.4, -0.04, 0.0)
    assert rpy == (1.5707963267948966, 0.0, 0.0)
    assert (lo, hi) == (-90 * 0.01745329, 90 * 0.01745329)
    xyz, rpy, lo, hi = ref._fin_geometry(
        {
            "xyz": [-0.70777, -0.07876, 0.078586],
            "rpy": [0.7904, -0.0998, -0.1003],
            "limits": "80*d2r",
        }
    )
    assert rpy[0] == 0.7904 and hi == 80 * 0.01745329 and lo == -hi

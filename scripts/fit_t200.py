"""Fit the T200 allocator model from Blue Robotics' performance data and write the package file.

Reads ``t200_performance_10-20V.csv`` (full precision, long format) and, for the MRoboSub
parity profile, MRoboSub's rounded per-voltage exports; fits the bivariate cubics of
``specs/allocation.md`` §4.3 / §4.5 by plain least squares on unscaled variables, and writes
``src/marinesim/actuators/data/t200_fit.json`` (coefficients, force envelope per voltage, first
thrust-producing PWM per voltage; no raw table).  Prints the residual table.

Usage::

    python scripts/fit_t200.py [--data ../shared/data/t200] [--out src/.../t200_fit.json]
    python scripts/fit_t200.py --check     # fit and compare with the shipped file, write nothing
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "t200"
DEFAULT_OUT = ROOT / "src" / "marinesim" / "actuators" / "data" / "t200_fit.json"
KGF = 9.80665
BASIS = ["1", "a", "V", "a^2", "a*V", "V^2", "a^3", "a^2*V", "a*V^2", "V^3"]


def basis(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Full bivariate cubic basis, shape (len(a), 10)."""
    a = np.asarray(a, float)
    v = np.asarray(v, float)
    return np.stack(
        [np.ones_like(a), a, v, a * a, a * v, v * v, a**3, a * a * v, a * v * v, v**3], axis=-1
    )


def lstsq(a: np.ndarray, v: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Plain least-squares coefficients of y ≈ basis(a, v) @ c."""
    coef, *_ = np.linalg.lstsq(basis(a, v), y, rcond=None)
    return coef


def read_full(path: Path) -> dict[str, np.ndarray]:
    """Columns of the full-precision long-format CSV as float arrays."""
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    cols = ("voltage_V", "pwm_us", "rpm", "current_A", "force_N")
    return {c: np.array([float(r[c]) for r in rows]) for c in cols}


def read_mrobosub(folder: Path) -> dict[str, np.ndarray]:
    """MRoboSub's rounded tables concatenated in voltage order (10, 12, ..., 20 V)."""
    out: dict[str, list[float]] = {"voltage_V": [], "pwm_us": [], "current_A": [], "force_kgf": []}
    for volt in (10, 12, 14, 16, 18, 20):
        with (folder / f"t200_{volt}V_rounded.csv").open(newline="") as fh:
            for r in csv.DictReader(fh):
                for c in out:
                    out[c].append(float(r[c]))
    return {c: np.array(v) for c, v in out.items()}


def fit_full(d: dict[str, np.ndarray]) -> dict[str, list[float]]:
    """The six maps of §4.3 on the full-precision data (rows split by the sign of force)."""
    u = (d["pwm_us"] - 1500.0) / 400.0
    out: dict[str, list[float]] = {}
    for name, m in (("pos", d["force_N"] > 0), ("neg", d["force_N"] < 0)):
        v = d["voltage_V"][m]
        out[f"force_to_u_{name}"] = lstsq(d["force_N"][m], v, u[m]).tolist()
        out[f"u_to_force_{name}"] = lstsq(u[m], v, d["force_N"][m]).tolist()
        out[f"u_to_current_{name}"] = lstsq(u[m], v, d["current_A"][m]).tolist()
    return out


def fit_mrobosub(d: dict[str, np.ndarray]) -> dict[str, list[float]]:
    """MRoboSub's constants (§4.5): keep PWM steps with non-zero force at all six voltages."""
    pwm = d["pwm_us"]
    steps = np.unique(pwm)
    nonzero_all = np.array([np.all(d["force_kgf"][pwm == s] != 0) for s in steps])
    keep_steps = steps[nonzero_all]
    out: dict[str, list[float]] = {}
    for name, side in (("POS", pwm > 1500), ("NEG", pwm < 1500)):
        m = side & np.isin(pwm, keep_steps)
        u = (pwm[m] - 1500.0) / 400.0
        v = d["voltage_V"][m]
        f = d["force_kgf"][m]
        out[f"{name}_OUTPUT"] = lstsq(f, v, u).tolist()
        out[f"{name}_CURRENT"] = lstsq(u, v, d["current_A"][m]).tolist()
        out[f"{name}_POWER"] = lstsq(u, v, f).tolist()
    return out


def envelope(d: dict[str, np.ndarray]) -> dict[str, list[float]]:
    """Extreme forces, first thrust-producing PWM and zero band per voltage."""
    volts = sorted(set(d["voltage_V"].tolist()))
    env: dict[str, list[float]] = {
        "voltage_V": [],
        "force_max_N": [],
        "force_min_N": [],
        "first_thrust_fwd_us": [],
        "first_thrust_rev_us": [],
    }
    for v in volts:
        m = d["voltage_V"] == v
        f = d["force_N"][m]
        p = d["pwm_us"][m]
        env["voltage_V"].append(v)
        env["force_max_N"].append(float(f.max()))
        env["force_min_N"].append(float(f.min()))
        env["first_thrust_fwd_us"].append(float(p[(f > 0) & (p > 1500)].min()))
        env["first_thrust_rev_us"].append(float(p[(f < 0) & (p < 1500)].max()))
    return env


def residuals(d: dict[str, np.ndarray], coef: dict[str, list[float]]) -> list[dict[str, object]]:
    """Residual rows of the §4.3 table (force→u residuals as 400·Δu in µs)."""
    u = (d["pwm_us"] - 1500.0) / 400.0
    rows: list[dict[str, object]] = []
    for name, m, label in (
        ("pos", d["force_N"] > 0, "forward"),
        ("neg", d["force_N"] < 0, "reverse"),
    ):
        v = d["voltage_V"][m]
        big = np.abs(d["force_N"][m]) >= 1.0
        cases = (
            (
                "force->PWM",
                "us",
                400.0 * (basis(d["force_N"][m], v) @ coef[f"force_to_u_{name}"] - u[m]),
            ),
            ("PWM->force", "N", basis(u[m], v) @ coef[f"u_to_force_{name}"] - d["force_N"][m]),
            (
                "PWM->current",
                "A",
                basis(u[m], v) @ coef[f"u_to_current_{name}"] - d["current_A"][m],
            ),
        )
        for fit, unit, r in cases:
            per_v = {
                f"{vv:g}": float(np.sqrt(np.mean(r[v == vv] ** 2)))
                for vv in sorted(set(v.tolist()))
            }
            rows.append(
                {
                    "fit": f"{fit} {label}",
                    "unit": unit,
                    "rows": int(m.sum()),
                    "rms": float(np.sqrt(np.mean(r**2))),
                    "max": float(np.max(np.abs(r))),
                    "rms_big": float(np.sqrt(np.mean(r[big] ** 2))),
                    "max_big": float(np.max(np.abs(r[big]))),
                    "rms_per_voltage": per_v,
                }
            )
    return rows


def build(data: Path) -> dict[str, object]:
    """Fit everything and return the JSON document."""
    full = read_full(data / "t200_performance_10-20V.csv")
    coef = fit_full(full)
    doc: dict[str, object] = {
        "description": (
            "Blue Robotics T200 allocator model: bivariate cubic least-squares fits of "
            "Blue Robotics' public T200 performance data (10-20 V, Basic ESC R3, BLHeli_S 16.6), "
            "computed by marinesim's scripts/fit_t200.py. Forces in N, u = (PWM - 1500)/400, "
            "current in A, V at the ESC. The raw table is not shipped."
        ),
        "source": "T200-Public-Performance-Data-10-20V-September-2019.xlsx (Blue Robotics)",
        "basis": BASIS,
        "voltage_range_V": [10.0, 20.0],
        "coefficients": coef,
        "envelope": envelope(full),
        "residuals": residuals(full, coef),
    }
    rounded = data / "mrobosub_motor_fits_rounded"
    if rounded.is_dir():
        doc["mrobosub"] = {
            "description": (
                "MRoboSub parity profile (mrobosub_fcu thruster_mixing.py constants), refitted "
                "from MRoboSub's rounded exports; force in kgf."
            ),
            "coefficients": fit_mrobosub(read_mrobosub(rounded)),
        }
    return doc


def print_table(rows: list[dict[str, object]]) -> None:
    """Print the residual table of §4.3."""
    print(
        f"{'fit':<24}{'unit':>5}{'rows':>6}{'RMS':>9}{'max':>9}{'RMS|F|>=1':>11}{'max|F|>=1':>11}"
    )
    for r in rows:
        print(
            f"{r['fit']:<24}{r['unit']:>5}{r['rows']:>6}{r['rms']:>9.3f}{r['max']:>9.3f}"
            f"{r['rms_big']:>11.3f}{r['max_big']:>11.3f}"
        )
    print("per-voltage RMS of force->PWM (us):")
    for r in rows:
        if str(r["fit"]).startswith("force->PWM"):
            per = r["rms_per_voltage"]
            assert isinstance(per, dict)
            print(f"  {r['fit']:<22}" + "  ".join(f"{k}V {v:.2f}" for k, v in per.items()))


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with the T200 CSV")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON file to write")
    ap.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    args = ap.parse_args(argv)
    if not (args.data / "t200_performance_10-20V.csv").is_file():
        print(f"error: {args.data}/t200_performance_10-20V.csv not found", file=sys.stderr)
        return 2
    doc = build(args.data)
    print_table(doc["residuals"])  # type: ignore[arg-type]
    if args.check:
        shipped = json.loads(args.out.read_text())
        worst = 0.0
        for k, c in doc["coefficients"].items():  # type: ignore[union-attr]
            a, b = np.array(c), np.array(shipped["coefficients"][k])
            worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))))
        print(f"max relative coefficient difference vs {args.out}: {worst:.2e}")
        return 0 if worst < 1e-9 else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

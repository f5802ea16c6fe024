"""`marinesim alloc` commands: thruster-allocation analysis of a vehicle (``report``)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import typer

from marinesim.core.errors import ConfigError, DataError, suggest

__all__ = ["build_report", "load_layout", "read_t200_table", "register"]

AXES = ("X", "Y", "Z", "K", "M", "N")
UNITS = ("N", "N", "N", "N·m", "N·m", "N·m")
T200_CSV = "t200_performance_10-20V.csv"
T200_XLSX = "T200-Public-Performance-Data-10-20V-September-2019.xlsx"
ENV_T200 = "MARINESIM_T200_DATA"


def read_t200_table(path: str | Path) -> Any:
    """Read the measured T200 table as a T200Table.

    ``path`` is Blue Robotics' workbook (``*.xlsx``, as published), the long-format CSV
    (``voltage_V, pwm_us, ..., current_A, ..., force_N``) or a folder holding either.

    Raises
    ------
    DataError
        Missing file, missing columns or non-numeric cells (with file and line).
    """

    p = Path(path)
    if p.is_dir():
        p = p / T200_CSV if (p / T200_CSV).is_file() else p / T200_XLSX
    if not p.is_file():
        raise DataError(f"T200 table not found (expected {T200_CSV} or {T200_XLSX})", file=p)
    if p.suffix.lower() == ".xlsx":
        return _read_t200_workbook(p)
    from marinesim.actuators.t200 import read_t200_csv

    return read_t200_csv(p)


def _read_t200_workbook(p: Path) -> Any:
    """Blue Robotics' T200 workbook (sheets "10 V" … "20 V"; PWM, current, force in kgf)."""
    from openpyxl import load_workbook

    from marinesim.actuators.t200 import KGF, T200Table

    cols: dict[str, list[float]] = {"V": [], "pwm": [], "F": [], "I": []}
    try:
        wb = load_workbook(p, read_only=True, data_only=True)
    except Exception as exc:  # zip/XML errors of a damaged or foreign file
        raise DataError(f"cannot read the T200 workbook: {exc}", file=p) from None
    sheets = [n for n in wb.sheetnames if n.strip().endswith(" V")]
    if not sheets:
        raise DataError("no voltage sheets ('10 V', ...) in the T200 workbook", file=p)
    for name in sheets:
        rows = wb[name].iter_rows(values_only=True)
        head = [str(h).strip().lower() if h is not None else "" for h in next(rows, ())]
        idx = {}
        for key, label in (("pwm", "pwm"), ("I", "current"), ("F", "force"), ("V", "voltage")):
            hits = [k for k, h in enumerate(head) if h.startswith(label)]
            if not hits:
                raise DataError(f"sheet {name!r}: no {label!r} column", file=p, line=1)
            idx[key] = hits[0]
        for lineno, row in enumerate(rows, start=2):
            if row is None or all(x is None for x in row[: len(head)]):
                continue
            for key in ("V", "pwm", "F", "I"):
                x = row[idx[key]]
                if not isinstance(x, int | float):
                    raise DataError(
                        f"sheet {name!r}: not a number: {x!r}",
                        file=p,
                        line=lineno,
                        param=head[idx[key]],
                    )
                if key == "I" and x < 0:
                    raise DataError(
                        f"sheet {name!r}: current {x!r} A is negative (a motor draws >= 0 A)",
                        file=p,
                        line=lineno,
                        param=head[idx[key]],
                    )
                cols[key].append(float(x) * (KGF if key == "F" else 1.0))
    wb.close()
    try:
        return T200Table(cols["V"], cols["pwm"], cols["F"], cols["I"])
    except DataError as exc:
        raise DataError(exc.message, file=p) from None


def load_layout(vehicle: str, bound_set: str = "ardusub_positive_forward") -> Any:
    """A ThrusterLayout from a built-in name or a YAML file (``*.yaml``/``*.yml``).

    Raises
    ------
    ConfigError
        Unknown vehicle (did-you-mean) or an invalid YAML layout (file:line:column: param).
    """
    from marinesim.allocation.vehicles import get_layout

    if vehicle.endswith((".yaml", ".yml")) or os.sep in vehicle:
        from marinesim.allocation.vehicles import load_layout_file

        return load_layout_file(vehicle)
    return get_layout(vehicle, bound_set)  # type: ignore[arg-type]


def _fmt_matrix(m: np.ndarray, rows: list[str], cols: list[str], width: int = 9) -> list[str]:
    head = " " * 6 + "".join(f"{c:>{width}}" for c in cols)
    lines = [head]
    for label, r in zip(rows, m, strict=True):
        lines.append(
            f"{label:<6}" + "".join(f"{(0.0 if abs(x) < 5e-13 else x):>{width}.4f}" for x in r)
        )
    return lines


#: Most thrusters ``alloc report --exact`` accepts: the certified maxima solve a MILP per axis
#: whose time grows steeply with the count (about a minute at 16 on two cores).
MAX_EXACT_THRUSTERS = 16
#: Most thrusters ``alloc report --fast`` accepts (the LP maxima; about a minute at 256).
MAX_FAST_THRUSTERS = 64


def check_thruster_count(n: int, exact: bool, file: str | None = None) -> None:
    """ConfigError when a layout has more thrusters than ``alloc report`` handles in bounded time.

    Real vehicles have 4 to 12 thrusters; the limits keep a mistyped or generated layout from
    running for minutes without a word.
    """
    limit = MAX_EXACT_THRUSTERS if exact else MAX_FAST_THRUSTERS
    if n > limit:
        hint = (
            f"; --fast (the LP alone) takes up to {MAX_FAST_THRUSTERS}"
            if exact and n <= MAX_FAST_THRUSTERS
            else ""
        )
        raise ConfigError(
            f"the layout has {n} thrusters; alloc report {'--exact' if exact else '--fast'} "
            f"takes at most {limit}{hint}",
            file=file,
            param="thrusters",
        )


def build_report(
    vehicle: str,
    voltage: float = 16.0,
    motor_limit: float = 15.0,
    total_limit: float = 50.0,
    failed: list[str] | None = None,
    bound_set: str = "ardusub_positive_forward",
    t200_data: str | None = None,
    length: float | None = None,
    exact: bool = True,
    progress: Any = None,
) -> dict[str, Any]:
    """Compute the ``alloc report`` figures as a JSON-ready dict (see the command's help).

    ``progress(done, total)``, when given, is called after each of the 24 axis maxima.
    Layouts above :data:`MAX_EXACT_THRUSTERS` (``exact``) or :data:`MAX_FAST_THRUSTERS`
    thrusters are refused (ConfigError) before any solve.
    """
    from marinesim.actuators.t200 import check_voltage
    from marinesim.allocation.solve import Allocator, AllocatorLimits, max_axis_wrench
    from marinesim.allocation.tam import Geometry, conditioning

    check_voltage(voltage)
    for name, val in (("motor-limit", motor_limit), ("total-limit", total_limit)):
        if not (math.isfinite(val) and val > 0):
            raise ConfigError(f"must be a positive current in A (got {val})", param=name)
    symmetric = bound_set == "symmetric"
    layout = load_layout(vehicle, "ardusub_positive_forward" if symmetric else bound_set)
    check_thruster_count(
        len(layout.thrusters), exact, file=vehicle if vehicle.endswith((".yaml", ".yml")) else None
    )
    geom = Geometry(layout)
    keys: list[int | str] = []
    for k in failed or []:
        keys.append(int(k) - 1 if k.strip().lstrip("-").isdigit() else k)
        if isinstance(keys[-1], int) and not 0 <= keys[-1] < geom.n:
            raise ConfigError(f"motor number {k} out of range 1..{geom.n}", param="failed")
    if keys:
        geom = geom.with_failed(*keys)
    table = read_t200_table(t200_data) if t200_data else None
    model = "table" if table is not None else "cubic"
    info = conditioning(geom.b_active, length or layout.characteristic_length)
    base = {"voltage": voltage, "t200_model": model, "symmetric_bounds": symmetric}
    envelope_only = Allocator(
        geom,
        AllocatorLimits(**base, max_current_per_thruster=None, max_current_total=None),
        table=table,
    )
    limited = Allocator(
        geom,
        AllocatorLimits(
            **base, max_current_per_thruster=motor_limit, max_current_total=total_limit
        ),
        table=table,
    )
    lo, hi, _, _ = limited.bounds()
    lo_e, hi_e, _, _ = envelope_only.bounds()

    def maxima(alloc: Allocator, constrained: str) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for k, ax in enumerate(AXES):
            out[ax] = {
                "pinv_pos": max_axis_wrench(alloc, k, 1.0, "pinv"),
                "pinv_neg": max_axis_wrench(alloc, k, -1.0, "pinv"),
                "constrained_pos": max_axis_wrench(alloc, k, 1.0, constrained),  # type: ignore[arg-type]
                "constrained_neg": max_axis_wrench(alloc, k, -1.0, constrained),  # type: ignore[arg-type]
            }
            step[0] += 1
            if progress is not None:
                progress(step[0], 2 * len(AXES))
        return out

    step = [0]

    return {
        "vehicle": layout.name,
        "notes": layout.notes,
        "voltage_V": voltage,
        "t200_model": model,
        "bound_set": bound_set,
        "failed": [geom.names[i] for i in range(geom.n) if not geom.enabled[i]],
        "thrusters": geom.names,
        "limits": {"motor_A": motor_limit, "total_A": total_limit},
        "force_range_N": {
            "envelope": [[float(a), float(b)] for a, b in zip(lo_e[0], hi_e[0], strict=True)],
            "with_motor_limit": [[float(a), float(b)] for a, b in zip(lo[0], hi[0], strict=True)],
        },
        "tam": geom.b_active.tolist(),
        "tam_pinv": geom.b_pinv.tolist(),
        "rank": info.rank,
        "singular_values": info.singular_values.tolist(),
        "condition": info.condition,
        "characteristic_length_m": info.length,
        "singular_values_scaled": info.singular_values_scaled.tolist(),
        "condition_scaled": info.condition_scaled,
        "model_note": (
            "current from the measured table, piecewise-linear per branch (as spec §9.5)"
            if table is not None
            else "current from the shipped cubic fit (0.15 A RMS on the data): current-limited "
            "figures differ from the spec's table-based §9.5 values by up to ~1 N; pass "
            f"--t200-data (Blue Robotics' workbook or CSV) or set ${ENV_T200} for those"
        ),
        "max_wrench": {
            "envelope": maxima(envelope_only, "lp"),
            "current_limited": maxima(limited, "exact" if exact else "lp"),
            "current_limited_method": "exact: convex-hull LP when it meets the model current, "
            "else MILP"
            if exact
            else "convex-hull LP",
        },
    }


def _print_report(r: dict[str, Any]) -> None:
    n = len(r["thrusters"])
    cols = [str(i + 1) for i in range(n)]
    typer.echo(
        f"vehicle {r['vehicle']}  at {r['voltage_V']:g} V  (T200 model: {r['t200_model']}, "
        f"bounds: {r['bound_set']})"
    )
    if r["notes"]:
        typer.echo(f"  {r['notes']}")
    if r["failed"]:
        typer.echo(f"  failed thrusters: {', '.join(r['failed'])}")
    typer.echo("\nthrusters (force range along d_i [N]: envelope | with the per-motor limit)")
    for i, name in enumerate(r["thrusters"]):
        (a, b), (c, d) = (
            r["force_range_N"]["envelope"][i],
            r["force_range_N"]["with_motor_limit"][i],
        )
        typer.echo(f"  {i + 1:>2} {name:<30} [{a:8.2f}, {b:7.2f}]  |  [{c:8.2f}, {d:7.2f}]")
    typer.echo("\nTAM B (rows X, Y, Z [N]; K, M, N [N·m]; columns thrusters)")
    for line in _fmt_matrix(np.array(r["tam"]), list(AXES), cols):
        typer.echo(line)
    typer.echo("\nB+ (rows thrusters; columns X, Y, Z, K, M, N)")
    for line in _fmt_matrix(np.array(r["tam_pinv"]), cols, list(AXES)):
        typer.echo(line)
    sv = ", ".join(f"{x:.4f}" for x in r["singular_values"])
    typer.echo(f"\nrank {r['rank']}; singular values {sv}")
    typer.echo(
        f"condition number {r['condition']:.4f} raw (N and N·m mixed); "
        f"{r['condition_scaled']:.4f} with torque rows / L = {r['characteristic_length_m']:g} m"
    )
    for key, title in (
        ("envelope", "largest pure-axis wrench, T200 envelope only"),
        (
            "current_limited",
            f"largest pure-axis wrench with {r['limits']['motor_A']:g} A per motor, "
            f"{r['limits']['total_A']:g} A total ({r['max_wrench']['current_limited_method']})",
        ),
    ):
        typer.echo(f"\n{title}")
        typer.echo(f"  {'axis':<9}{'B+ & exact scale':>22}{'constrained (null space)':>28}")
        for ax, unit in zip(AXES, ("N", "N", "N", "N·m", "N·m", "N·m"), strict=True):
            m = r["max_wrench"][key][ax]
            p = f"+{m['pinv_pos']:.1f} / -{m['pinv_neg']:.1f}"
            c = f"+{m['constrained_pos']:.1f} / -{m['constrained_neg']:.1f}"
            typer.echo(f"  {ax + ' [' + unit + ']':<9}{p:>22}{c:>28}")
    typer.echo(f"\nnote: {r['model_note']}")


def register(app: typer.Typer) -> None:
    """Add the ``alloc`` group to ``app``."""
    group = typer.Typer(
        help="Thruster allocation: TAM, conditioning, T200 limits, wrench envelopes."
    )

    @group.command("report")
    def report(
        vehicle: str = typer.Argument(
            ..., help="built-in layout (bluerov2_heavy, ...) or a layout YAML file"
        ),
        voltage: float = typer.Option(
            16.0, "--voltage", help="supply voltage at the ESCs [V], 10–20"
        ),
        motor_limit: float = typer.Option(
            15.0, "--motor-limit", help="current limit per thruster [A]"
        ),
        total_limit: float = typer.Option(
            50.0, "--total-limit", help="total thruster current limit [A]"
        ),
        failed: list[str] = typer.Option(
            [], "--failed", help="failed thruster: motor number (1-based) or name; repeatable"
        ),
        bounds: str = typer.Option(
            "ardusub_positive_forward",
            "--bounds",
            help="T200 sides: ardusub_positive_forward, flipped, symmetric",
        ),
        t200_data: str = typer.Option(
            None,
            "--t200-data",
            envvar=ENV_T200,
            help="measured T200 table: Blue Robotics' workbook (.xlsx), the long CSV "
            f"({T200_CSV}) or a folder holding either; uses the table model",
        ),
        length: float = typer.Option(
            None, "--length", help="characteristic length L in m for the scaled condition number"
        ),
        exact: bool = typer.Option(
            True,
            "--exact/--fast",
            help="exact global maxima under the current limits (convex-hull LP certified "
            "against the model current, MILP where it is not) or the LP alone",
        ),
        as_json: bool = typer.Option(False, "--json", help="print JSON instead of text"),
        plot: bool = typer.Option(
            False, "--plot", help="draw the attainable wrench and thruster usage figure"
        ),
        out: Path = typer.Option(
            None,
            "-o",
            "--out",
            help="output directory for the figure (default marinesim-runs/alloc-<vehicle>)",
            metavar="DIR",
        ),
        fig_format: str = typer.Option(
            "png", "--fig-format", help="figure format: png, pdf or svg", metavar="png|pdf|svg"
        ),
    ) -> None:
        """TAM, singular values, condition numbers and the largest wrench per axis for both allocators."""
        from marinesim.allocation.vehicles import BOUND_SETS

        if bounds not in BOUND_SETS:
            close = suggest(bounds, BOUND_SETS)
            hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
            raise ConfigError(
                f"unknown bound set {bounds!r}; {hint}(known: {', '.join(BOUND_SETS)})",
                param="bounds",
            )
        from marinesim.cli.progress import Progress

        with Progress("axis maxima", 2 * len(AXES)) as bar:
            r = build_report(
                vehicle, voltage, motor_limit, total_limit, failed, bounds, t200_data, length,
                exact, progress=bar,
            )  # fmt: skip
        if as_json:
            typer.echo(json.dumps(r, indent=1))
        else:
            _print_report(r)
        if plot:
            from marinesim.cli.options import check_fig_format, default_out, out_folder
            from marinesim.io.alloc_plots import save_alloc_report_figure

            fmt = check_fig_format(fig_format)
            stem = Path(vehicle).stem
            folder = out_folder(out if out is not None else default_out(f"alloc-{stem}"))
            path = save_alloc_report_figure(r, folder / f"alloc_{stem}.{fmt}")
            typer.echo(f"figure: {path}", err=as_json)

    app.add_typer(group, name="alloc")

"""Replay of uSimMarine / uSimMarineV22 reference cases (``*.scenario.json``).

Formats and tolerances: ``reference/README.md`` §1 (shipped as ``reference/data/README.md``
where present).  A trajectory case is replayed in ``compat = "moos"``: the configuration list
goes through :func:`marinesim.models.usm.config.configure`, start-up happens at the case's
start-up MOOS time, and before each iteration every message due by then is delivered in list
order (synthetic timing: ``mail.t <= k·dt + 1e-9``; live timing: ``mail.iteration <= k``).
A case with a ``current_field`` key couples the field as the reference run did: ``DRIFT_X``
and ``DRIFT_Y`` (source ``cfield``) carrying the field's force at the model position after
the previous iteration are delivered before the mail of each iteration.

``thrustmap_lookup`` (a ``maps`` table instead of ``time``) checks the forward and inverse
thrust-map lookups.

Public functions: :func:`verify_path` (for ``marinesim verify``), :func:`replay_case`
(a DataFrame with exactly the expected CSV's columns, for ``marinesim usm replay``),
:func:`load_case` and :func:`compare`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import DataError
from marinesim.models import usm as km
from marinesim.models.usm.config import configure
from marinesim.reference.runner import CaseResult, ColumnResult
from marinesim.reference.tables import load_table

__all__ = [
    "COLUMNS",
    "TOLERANCES",
    "compare",
    "load_case",
    "read_expected",
    "replay_case",
    "verify_path",
]

#: The trajectory columns of an expected CSV, in order.
COLUMNS = [
    "t",
    "x",
    "y",
    "heading",
    "speed",
    "depth",
    "altitude",
    "yaw",
    "heading_over_ground",
    "speed_over_ground",
    "lat",
    "long",
    "pitch",
    "pub_x",
    "pub_y",
    "pub_heading",
    "pub_speed",
    "pub_depth",
    "pub_altitude",
    "pub_yaw",
    "pub_heading_over_ground",
    "pub_speed_over_ground",
    "pub_lat",
    "pub_long",
    "drift_x",
    "drift_y",
    "gt_x",
    "gt_y",
    "gt_heading",
    "gt_speed",
    "gt_depth",
    "gt_heading_over_ground",
    "gt_speed_over_ground",
]

_DEG = 1e-6
_RAD = 1.7e-8
#: column -> (tolerance, kind) with kind "abs", "deg" (on the circle), "rad" (on the circle)
TOLERANCES: dict[str, tuple[float, str]] = {
    "t": (1e-9, "abs"),
    **{c: (1e-6, "abs") for c in ("x", "y", "gt_x", "gt_y", "pub_x", "pub_y")},
    **{
        c: (_DEG, "deg")
        for c in (
            "heading",
            "heading_over_ground",
            "gt_heading",
            "gt_heading_over_ground",
            "pub_heading",
            "pub_heading_over_ground",
        )
    },
    **{c: (_RAD, "rad") for c in ("yaw", "pitch", "pub_yaw")},
    **{
        c: (1e-6, "abs")
        for c in (
            "speed",
            "speed_over_ground",
            "gt_speed",
            "gt_speed_over_ground",
            "pub_speed_over_ground",
            "drift_x",
            "drift_y",
        )
    },
    **{c: (1e-6, "abs") for c in ("depth", "altitude", "gt_depth", "pub_depth", "pub_altitude")},
    **{c: (1e-9, "abs") for c in ("lat", "long", "pub_lat", "pub_long")},
    "pub_speed": (1e-9, "abs"),
}

_HOG_POS = {
    "heading_over_ground": ("x", "y"),
    "pub_heading_over_ground": ("x", "y"),
    "gt_heading_over_ground": ("gt_x", "gt_y"),
}


# --------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------


class _NonFiniteJSON(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _reject_constant(name: str) -> Any:
    raise _NonFiniteJSON(name)


def _locate_constant(text: str, name: str) -> tuple[int | None, int | None]:
    """Line and column of the first bare ``NaN``/``Infinity`` token (strings blanked out)."""
    import re

    bare = re.sub(r'"(?:\\.|[^"\\])*"', lambda m: " " * len(m.group()), text)
    m = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", bare)
    if m is None:
        return None, None
    line = text.count("\n", 0, m.start()) + 1
    return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1


def _check_config_values(cfg_list: Any, p: Path) -> None:
    """DataError for a config value that is a non-finite number (``NaN``, ``"inf"``)."""
    import math

    for item in cfg_list if isinstance(cfg_list, list) else []:
        if not (isinstance(item, (list, tuple)) and len(item) == 2):
            continue  # reported as a malformed case where the pairs are unpacked
        k, v = item
        text = str(v).strip().lower()
        try:
            num = float(text)
        except ValueError:
            continue
        if not math.isfinite(num):
            raise DataError(f"value {v!r} is not a finite number", file=p, param=f"config.{k}")


def load_case(path: str | Path) -> dict[str, Any]:
    """Read a ``NAME.scenario.json``.

    Parameters
    ----------
    path : str or Path
        The case file.

    Returns
    -------
    dict
        The parsed JSON object.

    Raises
    ------
    DataError
        The file cannot be read or is not a JSON object (file, line and column named).
    """
    from marinesim.core.textio import read_input_text

    p = Path(path)
    text = read_input_text(p, what="case file", error=DataError)
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except _NonFiniteJSON as exc:
        line, col = _locate_constant(text, exc.name)
        raise DataError(
            f"{exc.name} is not a JSON number (a case holds finite values only)",
            file=p,
            line=line,
            column=col,
        ) from None
    except RecursionError:
        raise DataError("JSON nested too deeply", file=p) from None
    except json.JSONDecodeError as exc:
        raise DataError(
            f"malformed JSON: {exc.msg}", file=p, line=exc.lineno, column=exc.colno
        ) from None
    if not isinstance(data, dict):
        raise DataError("a scenario.json must hold an object", file=p)
    return data


def _expected_path(case_path: Path, data: dict[str, Any]) -> Path:
    name = data.get("expected_csv") or case_path.name.replace(".scenario.json", ".expected.csv")
    plain = case_path.parent / str(name)
    if plain.exists():
        return plain
    gz = plain.with_name(plain.name + ".gz")
    if gz.exists():
        return gz
    raise DataError(f"expected output {plain.name} (or {gz.name}) not found", file=case_path)


def read_expected(path: str | Path) -> Any:
    """Read an expected CSV (plain or ``.gz``) as a pandas DataFrame; blanks become NaN.

    Numbers are parsed with Python's ``float`` so the ``%.17g`` values read back as the
    exact doubles the program wrote; non-numeric columns (``map_id``…) stay text
    (:func:`marinesim.reference.tables.load_table`).
    """
    import pandas as pd

    _, cols = load_table(path, what="CSV file")
    return pd.DataFrame(cols)


def _expected_columns(case_path: Path, data: dict[str, Any]) -> list[str]:
    try:
        exp = _expected_path(case_path, data)
    except DataError:
        return list(COLUMNS)
    from marinesim.core.textio import read_input_text

    text = read_input_text(exp, what="CSV file", error=DataError, gz=exp.suffix == ".gz")
    header = text.split("\n", 1)[0].strip()
    return header.split(",") if header else list(COLUMNS)


# --------------------------------------------------------------------------------------
# replay
# --------------------------------------------------------------------------------------


def _variant(data: dict[str, Any], path: Path) -> str:
    prog = str((data.get("provenance") or {}).get("program", ""))
    if prog == "uSimMarine":
        return "usm"
    if prog == "uSimMarineV22":
        return "usm_v22"
    raise DataError(
        f"unknown program {prog!r} (expected uSimMarine or uSimMarineV22)",
        file=path,
        param="provenance.program",
    )


def _timing(data: dict[str, Any], path: Path) -> tuple[float, list[float], list[float], bool]:
    """(startup time, iteration MOOS times, row t values, live)."""
    tm = data.get("time")
    if not isinstance(tm, dict):
        raise DataError("missing 'time'", file=path, param="time")
    if "iteration_times_moos" in tm:
        try:
            start = float(str(tm["startup_moos_time"]))
            times = [float(str(v)) for v in tm["iteration_times_moos"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"bad live timing: {exc}", file=path, param="time") from None
        if not all(math.isfinite(v) for v in [start, *times]):
            raise DataError("timing values must be finite", file=path, param="time")
        return start, times, list(times), True
    from marinesim.core.limits import MAX_SAMPLES, MIN_DT

    try:
        dt = float(tm["dt"])
        steps = int(tm["steps"])
        t0 = float(tm.get("moos_time_at_t0", 0.0) or 0.0)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise DataError(f"bad synthetic timing: {exc}", file=path, param="time") from None
    if isinstance(tm["steps"], bool) or isinstance(tm["dt"], bool):
        raise DataError("dt and steps must be numbers, not true/false", file=path, param="time")
    if not (math.isfinite(dt) and dt >= MIN_DT):
        raise DataError(f"dt must be a finite number >= {MIN_DT:g} s, got {dt!r}",
                        file=path, param="time.dt")  # fmt: skip
    if not 0 <= steps <= MAX_SAMPLES or steps != float(tm["steps"]):
        raise DataError(f"steps must be a whole number in [0, {MAX_SAMPLES}], got {tm['steps']!r}",
                        file=path, param="time.steps")  # fmt: skip
    if not math.isfinite(t0):
        raise DataError("moos_time_at_t0 must be finite", file=path, param="time.moos_time_at_t0")
    ts = [k * dt for k in range(1, steps + 1)]
    return t0 + 0.0, [t0 + t for t in ts], ts, False


def _mail_value(m: dict[str, Any]) -> float | str:
    typ = str(m.get("type", "double"))
    if typ == "string":
        return str(m.get("value", ""))
    v = m.get("value")
    return float(v) if not isinstance(v, str) else float(v.strip())


def replay_case(path: str | Path, *, all_columns: bool = False) -> Any:
    """Replay one trajectory case (see :func:`_replay_case`).

    Raises
    ------
    DataError
        A case file or expected CSV that cannot be read, or values of the wrong type
        anywhere in the case (``malformed case: ...``, naming the file).
    NumericalError
        The state became non-finite; ``exc.result`` holds the rows replayed so far.
    """
    from marinesim.core.errors import MarinesimError

    p = Path(path)
    try:
        return _replay_case(p, all_columns=all_columns)
    except MarinesimError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        # JSON values of the wrong type deep in the case (a list where a mapping belongs…)
        raise DataError(f"malformed case: {type(exc).__name__}: {exc}", file=p) from None


def _replay_case(path: str | Path, *, all_columns: bool = False) -> Any:
    """Replay one trajectory case and return its rows as the expected CSV lays them out.

    Parameters
    ----------
    path : str or Path
        A ``NAME.scenario.json`` with ``time`` (synthetic or live).
    all_columns : bool
        Return every trajectory column of :data:`COLUMNS` (not only those of the expected
        CSV, which long cases reduce).

    Returns
    -------
    pandas.DataFrame
        Exactly the columns of the case's expected CSV (NaN = blank), row 0 = the state after
        start-up, row k = after iteration k.
    """
    import pandas as pd

    p = Path(path)
    data = load_case(p)
    if "maps" in data:
        return _lookup_table(p, data)
    variant = _variant(data, p)
    cfg_list = data.get("config") or []
    _check_config_values(cfg_list, p)
    lines = [(str(k), str(v), i + 1) for i, (k, v) in enumerate(cfg_list)]
    gl = data.get("moos_globals") or {}
    cfg, _warns = configure(lines, variant=variant, compat="moos", file=str(p), globals=gl)
    datum = None
    if "LatOrigin" in gl and "LongOrigin" in gl:
        datum = (float(gl["LatOrigin"]), float(gl["LongOrigin"]))
    start, times, tcol, live = _timing(data, p)
    state = km.init(cfg, 1, start, datum=datum)
    geo = state.geodesy
    # lat/long are projected once for the whole run after the loop (same values: the
    # program projects the published x, y)
    state = km._evolve(state, {"geodesy": None})
    mail = list(data.get("mail") or [])
    field = None
    if data.get("current_field"):
        from marinesim.environment.current import CurrentField

        cf = data["current_field"]
        from marinesim.core.textio import read_input_text

        fpath = p.parent / str(cf.get("file", "") if isinstance(cf, dict) else "")
        text = read_input_text(
            fpath, what="current field", error=DataError, ref_file=p, param="current_field.file"
        )
        field, _fw = CurrentField.parse(text, file=str(fpath))

    cols = _expected_columns(p, data)
    rows: list[dict[str, float]] = [_row(state, {}, 0.0, cfg, initial=True)]
    mi = 0
    for k, (tk, trow) in enumerate(zip(times, tcol, strict=True), start=1):
        if field is not None:
            fx, fy = field.force(state.x, state.y)
            for var, val in (("DRIFT_X", fx), ("DRIFT_Y", fy)):
                state, _p, _w = km.apply_mail(
                    cfg, state, var, float(np.asarray(val)[0]), moos_time=tk, source="cfield"
                )
        while mi < len(mail):
            m = mail[mi]
            if live:
                due = int(m.get("iteration", 0)) <= k
            else:
                due = float(m.get("t", 0.0)) <= trow + 1e-9
            if not due:
                break
            state, _p, _w = km.apply_mail(
                cfg,
                state,
                str(m["var"]),
                _mail_value(m),
                moos_time=tk,
                source=str(m.get("source", "")),
            )
            mi += 1
        state, pubs = km.iterate(cfg, state, tk)
        rows.append(_row(state, pubs, trow, cfg))
        # NaN marks a blank cell elsewhere; the state itself must be finite, and no value inf
        row = rows[-1]
        bad = [c for c in ("x", "y", "heading", "speed", "depth") if not math.isfinite(row[c])]
        bad += [
            c for c, v in row.items() if isinstance(v, float) and math.isinf(v) and c not in bad
        ]
        if bad:
            from marinesim.core.errors import NumericalError

            exc = NumericalError(
                f"non-finite {', '.join(bad)} (= {rows[-1][bad[0]]!r}); replay stopped",
                entity=str(p),
                t=trow,
            )
            exc.result = pd.DataFrame(rows[:-1])  # type: ignore[attr-defined]
            raise exc
    df = pd.DataFrame(rows)
    if geo is not None:
        lat, lon = geo.local_to_latlon(df["_gx"].to_numpy(), df["_gy"].to_numpy())
        lat[0] = lon[0] = np.nan
        df["lat"], df["long"] = lat, lon
        ok = ~np.isnan(df["pub_x"].to_numpy())
        plat, plon = geo.local_to_latlon(
            np.where(ok, df["_pgx"].to_numpy(), 0.0), np.where(ok, df["_pgy"].to_numpy(), 0.0)
        )
        df["pub_lat"] = np.where(ok, plat, np.nan)
        df["pub_long"] = np.where(ok, plon, np.nan)
    if all_columns:
        cols = list(dict.fromkeys(list(COLUMNS) + cols))
    for c in cols:
        if c not in df.columns:
            df[c] = np.nan
    return df[cols]


def _row(
    st: km.UsmState, pubs: dict[str, Any], t: float, cfg: Any, *, initial: bool = False
) -> dict[str, float]:
    nan = math.nan
    r: dict[str, float] = {"t": t}
    prop = bool(st.propagated[0]) and not initial
    for k in ("x", "y", "heading", "speed", "depth"):
        r[k] = float(getattr(st, k)[0])
    r["altitude"] = float(st.altitude[0]) if bool(st.altitude_set[0]) else nan
    r["yaw"] = float(st.yaw[0]) if prop else nan
    r["pitch"] = float(st.pitch[0]) if prop else nan
    r["heading_over_ground"] = float(st.hog[0]) if prop else nan
    r["speed_over_ground"] = float(st.sog[0]) if prop else nan
    if st.geodesy is not None and not initial:
        lat, lon = st.geodesy.local_to_latlon(st.x, st.y)
        r["lat"], r["long"] = float(lat[0]), float(lon[0])
    else:
        r["lat"] = r["long"] = nan
    pre = cfg.prefix
    for col, var in (
        ("pub_x", "_X"),
        ("pub_y", "_Y"),
        ("pub_heading", "_HEADING"),
        ("pub_speed", "_SPEED"),
        ("pub_depth", "_DEPTH"),
        ("pub_altitude", "_ALTITUDE"),
        ("pub_yaw", "_YAW"),
        ("pub_heading_over_ground", "_HEADING_OVER_GROUND"),
        ("pub_speed_over_ground", "_SPEED_OVER_GROUND"),
        ("pub_lat", "_LAT"),
        ("pub_long", "_LONG"),
    ):
        v = pubs.get(pre + var)
        r[col] = float(np.asarray(v, dtype=float)[0]) if v is not None else nan
    # the position lat/long are projected from (done for the whole run after the loop)
    v22 = cfg.variant == "usm_v22"
    r["_gx"] = float((st.geo_x if v22 else st.x)[0])
    r["_gy"] = float((st.geo_y if v22 else st.y)[0])
    r["_pgx"] = float(st.geo_x[0]) if v22 else r["pub_x"]
    r["_pgy"] = float(st.geo_y[0]) if v22 else r["pub_y"]
    r["drift_x"] = float(st.drift_x[0])
    r["drift_y"] = float(st.drift_y[0])
    if cfg.dual_state:
        for k in ("x", "y", "heading", "speed", "depth"):
            r["gt_" + k] = float(getattr(st, "gt_" + k)[0])
        r["gt_heading_over_ground"] = float(st.gt_hog[0]) if prop else nan
        r["gt_speed_over_ground"] = float(st.gt_sog[0]) if prop else nan
    else:
        for k in (
            "x",
            "y",
            "heading",
            "speed",
            "depth",
            "heading_over_ground",
            "speed_over_ground",
        ):
            r["gt_" + k] = nan
    return r


# --------------------------------------------------------------------------------------
# thrust-map lookup table
# --------------------------------------------------------------------------------------


def _lookup_table(path: Path, data: dict[str, Any]) -> Any:
    import pandas as pd

    from marinesim.models.usm.thrustmap import ThrustMap

    exp = read_expected(_expected_path(path, data))
    maps: dict[str, ThrustMap] = {}
    for m in data.get("maps") or []:
        tm = ThrustMap(float(m.get("thrust_factor", 20)), bool(m.get("thrust_reflect", False)))
        tm.add_text(str(m.get("thrust_map", "")), "moos")
        maps[str(m["map_id"])] = tm
    out = exp.copy()
    vals = np.full(len(exp), np.nan)
    for mid, grp in exp.groupby("map_id", sort=False):
        if str(mid) not in maps:
            raise DataError(f"map_id {mid!r} not in the scenario's maps", file=path)
        tm = maps[str(mid)]
        for kind, sub in grp.groupby("lookup", sort=False):
            x = sub["input"].to_numpy(dtype=float)
            if kind == "speed_of_thrust":
                y = tm.speed(x)
            elif kind == "thrust_of_speed":
                y = tm.thrust(x, "moos")
            else:
                raise DataError(f"unknown lookup kind {kind!r}", file=path)
            vals[sub.index.to_numpy()] = y
    out["output"] = vals
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------------------


def _circ(diff: np.ndarray, period: float) -> np.ndarray:
    return np.abs((diff + period / 2) % period - period / 2)


def _excluded(data: dict[str, Any], t: np.ndarray, col: str) -> np.ndarray:
    mask = np.zeros(t.shape, dtype=bool)
    for ex in data.get("compare_exclude") or []:
        cols = ex.get("columns", "all")
        if cols != "all" and col not in cols:
            continue
        lo = ex.get("t_min")
        hi = ex.get("t_max")
        lo = -math.inf if lo is None else float(lo)
        hi = math.inf if hi is None else float(hi)
        mask |= (t >= lo - 1e-9) & (t <= hi + 1e-9)
    return mask


def compare(data: dict[str, Any], got: Any, exp: Any) -> list[ColumnResult]:
    """Compare a replay with the expected table column by column (README §1.6).

    Parameters
    ----------
    data : dict
        The scenario (for ``compare_exclude``).
    got, exp : pandas.DataFrame
        Replay and expected rows (same length and columns).

    Returns
    -------
    list of ColumnResult
        One per compared column, with the largest error; blank mismatches fail the column.
    """
    results: list[ColumnResult] = []
    if len(got) != len(exp):
        return [
            ColumnResult(
                "rows",
                float(abs(len(got) - len(exp))),
                0.0,
                False,
                f"{len(got)} rows, expected {len(exp)}",
            )
        ]
    t = exp["t"].to_numpy(dtype=float)
    for col in exp.columns:
        tol, kind = TOLERANCES.get(col, (1e-6, "abs"))
        e = exp[col].to_numpy(dtype=float)
        if col not in got.columns:
            results.append(ColumnResult(col, math.inf, tol, False, "column missing"))
            continue
        g = got[col].to_numpy(dtype=float)
        skip = _excluded(data, t, col)
        if col in _HOG_POS:
            xc, yc = _HOG_POS[col]
            src = exp if (xc in exp.columns and yc in exp.columns) else got
            ex_, ey_ = src[xc].to_numpy(dtype=float), src[yc].to_numpy(dtype=float)
            step = np.full(len(e), np.inf)
            step[1:] = np.hypot(np.diff(ex_), np.diff(ey_))
            step = np.where(np.isnan(step), np.inf, step)
            short = step <= 1e-6
        else:
            short = np.zeros(len(e), dtype=bool)
        eb = np.isnan(e)
        gb = np.isnan(g)
        blank_bad = (eb != gb) & ~skip
        note = ""
        if blank_bad.any():
            i = int(np.flatnonzero(blank_bad)[0])
            note = f"blank mismatch at t={t[i]:.6g} (expected {'blank' if eb[i] else 'a value'})"
        both = ~eb & ~gb & ~skip & ~short
        d = g[both] - e[both]
        if kind == "deg":
            err = _circ(d, 360.0)
        elif kind == "rad":
            err = _circ(d, 2 * math.pi)
        else:
            err = np.abs(d)
        if col == "pub_speed" and err.size:
            ms = (exp if "speed" in exp.columns else got)["speed"].to_numpy(dtype=float)[both]
            near_tie = np.abs(np.abs(ms / 0.005) - np.round(np.abs(ms / 0.005))) * 0.005 <= 1e-6
            odd = (np.round(np.abs(ms / 0.005)) % 2) == 1
            tie = near_tie & odd
            err = np.where(tie & (np.abs(np.abs(d) - 0.01) <= 1e-9), 0.0, err)
        max_err = float(err.max()) if err.size else 0.0
        ok = (max_err <= tol) and not blank_bad.any()
        if not ok and not note and err.size:
            i = int(np.argmax(err))
            note = f"at t={t[both][i]:.6g}: got {g[both][i]!r}, expected {e[both][i]!r}"
        results.append(
            ColumnResult(
                col, max_err if not blank_bad.any() else max(max_err, math.inf), tol, ok, note
            )
        )
    return results


def _verify_one(path: Path) -> CaseResult:
    data = load_case(path)
    name = str(data.get("name") or path.name.replace(".scenario.json", ""))
    kind = (
        "usm_v22"
        if str((data.get("provenance") or {}).get("program")) == "uSimMarineV22"
        else "usm"
    )
    if "maps" not in data:
        _variant(data, path)
    exp = read_expected(_expected_path(path, data))
    got = replay_case(path, all_columns=True)
    if "maps" in data:
        e = exp["output"].to_numpy(dtype=float)
        g = got["output"].to_numpy(dtype=float)
        err = np.abs(g - e)
        bad = np.isnan(e) != np.isnan(g)
        max_err = float(np.nanmax(err)) if err.size else 0.0
        ok = max_err <= 1e-9 and not bad.any()
        note = ""
        if not ok:
            i = int(np.nanargmax(err))
            note = f"row {i}: got {g[i]!r}, expected {e[i]!r}"
        return CaseResult(kind, name, str(path), [ColumnResult("output", max_err, 1e-9, ok, note)])
    return CaseResult(kind, name, str(path), compare(data, got, exp))


def verify_path(path: str | Path) -> list[CaseResult]:
    """Verify a case file or every ``*.scenario.json`` under a folder.

    Parameters
    ----------
    path : str or Path
        A ``NAME.scenario.json`` or a folder.

    Returns
    -------
    list of CaseResult
        One per case; a case that cannot run is a failed result with its reason.
    """
    p = Path(path)
    files: Sequence[Path] = sorted(p.rglob("*.scenario.json")) if p.is_dir() else [p]
    out: list[CaseResult] = []
    for f in files:
        try:
            out.append(_verify_one(f))
        except Exception as exc:  # a case that cannot run fails with its reason
            out.append(
                CaseResult(
                    "usm",
                    f.name.replace(".scenario.json", ""),
                    str(f),
                    message=f"{type(exc).__name__}: {exc}",
                    error=True,
                )
            )
    return out

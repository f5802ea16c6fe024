"""Run logs: write and read a :class:`~marinesim.engine.results.RunResult` directory.

A run directory holds ``log.csv`` and/or ``log.parquet`` (long table: one row per entity and
frame, one column per signal component), ``manifest.json`` (marinesim/Python/numpy versions,
platform, seed, scenario SHA-256, status, wall time, signal units), ``events.csv``,
``scenario.yaml`` (the resolved scenario), ``metrics.csv`` (the summary table, when metric
plugins reported rows) and, when the run had one, the current-field file.
The CSV starts with ``#`` comment lines carrying version, seed and scenario hash; the Parquet
file carries them in its schema metadata.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError, DataError
from marinesim.engine.results import Event, RunResult, Signal

__all__ = ["load_run", "save_run", "to_dataframe"]

FORMATS = ("csv", "parquet", "both")


def _columns(result: RunResult) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Flat columns (entity names instead of rows) and the signal metadata."""
    cols = result.columns()
    names = np.array([e["name"] for e in result.entities], dtype=object)
    blocks = np.array([e["block"] for e in result.entities], dtype=object)
    rows = cols.pop("entity").astype(int)
    out: dict[str, Any] = {"entity": names[rows] if len(names) else np.array([], dtype=object)}
    out["block"] = blocks[rows] if len(blocks) else np.array([], dtype=object)
    out.update(cols)
    meta: dict[str, dict[str, Any]] = {}
    for name, sig in result.signals.items():
        k = sig.values.shape[2]
        columns = [name] if k == 1 else [f"{name}.{sig.labels[j]}" for j in range(k)]
        meta[name] = {"unit": sig.unit, "labels": list(sig.labels), "columns": columns}
    return out, meta


def to_dataframe(result: RunResult) -> Any:
    """Long ``pandas.DataFrame``: entity, block, t, then one column per signal component."""
    import pandas as pd

    cols, _meta = _columns(result)
    return pd.DataFrame(cols)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def _clean(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def save_run(result: RunResult, directory: str | Path, *, fmt: str = "both") -> dict[str, Path]:
    """Write a run directory (see the module docstring).

    Parameters
    ----------
    result : RunResult
        Complete or partial result (its manifest's status says which).
    directory : str or Path
        Created if needed.
    fmt : {"csv", "parquet", "both"}

    Returns
    -------
    dict of str to Path
        ``log_csv``, ``log_parquet``, ``manifest``, ``events``, ``scenario``, ``current_field``
        (those written).
    """
    if fmt not in FORMATS:
        raise ConfigError(
            f"unknown log format {fmt!r} (use csv, parquet or both)", param="--format"
        )
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    cols, meta = _columns(result)
    man = dict(result.manifest)
    man["signals"] = meta
    man["entities"] = result.entities
    man["frames"] = len(result.t)
    header = {
        "marinesim_version": man.get("marinesim_version"),
        "seed": man.get("seed"),
        "scenario_sha256": man.get("scenario_sha256"),
        "scenario": man.get("scenario"),
        "status": man.get("status"),
    }
    if fmt in ("csv", "both"):
        p = out / "log.csv"
        with p.open("w", newline="", encoding="utf-8") as fh:
            for k, v in header.items():
                fh.write(f"# {k}: {v}\n")
            w = csv.writer(fh)
            keys = list(cols)
            w.writerow(keys)
            n = len(cols["t"])
            arrays = [cols[k] for k in keys]
            for i in range(n):
                w.writerow([_fmt(a[i]) for a in arrays])
        written["log_csv"] = p
    if fmt in ("parquet", "both"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({k: (v.tolist() if v.dtype == object else v) for k, v in cols.items()})
        md = {f"marinesim.{k}".encode(): str(v).encode() for k, v in header.items()}
        table = table.replace_schema_metadata(md)
        p = out / "log.parquet"
        pq.write_table(table, p)
        written["log_parquet"] = p
    src = man.get("current_field_file")
    if src and Path(src).is_file():
        dst = out / "current.cfd"
        if Path(src).resolve() != dst.resolve():
            shutil.copyfile(src, dst)
        written["current_field"] = dst
    if result.resolved_scenario:
        p = out / "scenario.yaml"
        p.write_text(result.resolved_scenario, encoding="utf-8")
        written["scenario"] = p
    p = out / "events.csv"
    with p.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["t", "entity", "severity", "kind", "text"])
        for e in result.events:
            w.writerow([repr(float(e.t)), e.entity, e.severity, e.kind, e.text])
    written["events"] = p
    if result.metrics:
        p = out / "metrics.csv"
        keys = list(dict.fromkeys(k for row in result.metrics for k in row))
        with p.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            for row in result.metrics:
                w.writerow(row)
        written["metrics"] = p
    man["files"] = {k: v.name for k, v in written.items()}
    p = out / "manifest.json"
    p.write_text(json.dumps(_clean(man), indent=2, default=_json_default) + "\n", encoding="utf-8")
    written["manifest"] = p
    return written


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return "" if math.isnan(f) else repr(f)
    return str(v)


def load_run(directory: str | Path) -> RunResult:
    """Read a run directory written by :func:`save_run` (Parquet preferred, else CSV).

    Raises
    ------
    DataError
        Missing manifest or log, or columns that do not match the manifest.
    """
    d = Path(directory)
    mp = d / "manifest.json"
    if not mp.is_file():
        raise DataError(f"{str(d)!r} is not a run directory (no manifest.json)", file=str(mp))
    try:
        man = json.loads(mp.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(
            f"manifest is not valid JSON: {exc.msg}",
            file=str(mp),
            line=exc.lineno,
            column=exc.colno,
        ) from None
    meta: dict[str, Any] = man.get("signals", {})
    entities: list[dict[str, Any]] = man.get("entities", [])
    if (d / "log.parquet").is_file():
        import pyarrow.parquet as pq

        table = pq.read_table(d / "log.parquet")
        cols = {
            name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names
        }
        src = d / "log.parquet"
    elif (d / "log.csv").is_file():
        cols = _read_csv(d / "log.csv")
        src = d / "log.csv"
    else:
        raise DataError(f"no log.parquet or log.csv in {str(d)!r}", file=str(d))
    n = len(entities)
    total = len(cols.get("t", []))
    if n == 0 or total % n:
        raise DataError(f"log has {total} rows for {n} entities", file=str(src))
    tt = total // n
    t = np.asarray(cols["t"], dtype=float)[:tt]
    signals: dict[str, Signal] = {}
    for name, info in meta.items():
        arrs = []
        for c in info["columns"]:
            if c not in cols:
                raise DataError(f"column {c!r} of signal {name!r} missing", file=str(src))
            arrs.append(np.asarray(cols[c], dtype=float).reshape(n, tt))
        signals[name] = Signal(
            np.stack(arrs, axis=2), info.get("unit", ""), tuple(info.get("labels", ()))
        )
    events = []
    ep = d / "events.csv"
    if ep.is_file():
        with ep.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                events.append(
                    Event(float(row["t"]), row["entity"], row["severity"], row["kind"], row["text"])
                )
    metrics: list[dict[str, Any]] = []
    mp2 = d / "metrics.csv"
    if mp2.is_file():
        with mp2.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                rec: dict[str, Any] = dict(row)
                if rec.get("value", "") != "":
                    rec["value"] = float(rec["value"])
                metrics.append(rec)
    scen = (
        (d / "scenario.yaml").read_text(encoding="utf-8")
        if (d / "scenario.yaml").is_file()
        else None
    )
    man = {k: v for k, v in man.items() if k not in ("signals", "entities")}
    if (d / "current.cfd").is_file():
        man["current_field_file"] = str(d / "current.cfd")
    return RunResult(
        t=t,
        signals=signals,
        entities=entities,
        events=events,
        metrics=metrics,
        manifest=man,
        resolved_scenario=scen,
    )


def _read_csv(path: Path) -> dict[str, Any]:
    with path.open(newline="", encoding="utf-8") as fh:
        lines = (ln for ln in fh if not ln.startswith("#"))
        reader = csv.reader(lines)
        try:
            header = next(reader)
        except StopIteration:
            raise DataError("empty log", file=str(path)) from None
        data: list[list[str]] = [[] for _ in header]
        for row in reader:
            if len(row) != len(header):
                raise DataError(
                    f"row with {len(row)} fields, header has {len(header)}", file=str(path)
                )
            for j, v in enumerate(row):
                data[j].append(v)
    out: dict[str, Any] = {}
    for name, vals in zip(header, data, strict=True):
        if name in ("entity", "block"):
            out[name] = np.array(vals, dtype=object)
        else:
            out[name] = np.array([float(v) if v != "" else np.nan for v in vals])
    return out

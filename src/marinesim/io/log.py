"""Run logs: stream a run to a directory, write a finished result, read a run directory back.

A run directory holds

* ``log.parquet/`` — a Parquet *dataset directory*: one complete Parquet file per flush
  (``part-000000000000.parquet``, the number is the run's first frame in it).  Each file is
  written under a hidden temporary name and renamed when complete, so after any crash (even
  SIGKILL) every visible part opens, and ``pandas.read_parquet("log.parquet")`` or
  ``pyarrow.parquet.read_table("log.parquet")`` reads everything up to the last flush;
  Every column carries its unit as Parquet field metadata (``b"unit"``, and ``b"signal"``,
  the signal it belongs to): ``pyarrow.parquet.read_schema(part).field("t").metadata``;
* ``log.mcap`` (``fmt="mcap"``, beside the Parquet log) — the run as ROS 2 topics in a
  rosbag2-compatible MCAP file, one MCAP chunk per flush (:mod:`marinesim.io.mcap`);
* ``log.csv`` (only on request) — the same columns, appended chunk by chunk through Arrow's
  vectorised CSV writer; plain ``pandas.read_csv("log.csv")`` opens it (no comment lines, no
  units in the header: the column names are the Parquet ones);
* ``units.csv`` — one row per log column: ``column,unit,signal`` (``entity`` and ``block``
  have no unit, ``t`` is in s), rewritten when a signal appears; the units of ``log.csv``;
* ``manifest.json`` — versions, platform, seed, scenario SHA-256, status (``running`` from the
  first step, then ``completed``, ``diverged``, ``failed``, ``interrupted`` or ``paused``), why
  the run ended, the error if any, signal units and labels, entities;
* ``events.csv`` (appended as the run goes), ``scenario.yaml`` (the resolved scenario),
  ``metrics.csv`` (the summary table, when metric plugins reported rows) and, when the run had
  one, the current-field file.

The log is a long table, time-major: the N entity rows of frame 0, then those of frame 1, ...;
columns ``entity``, ``block``, ``t`` and one per signal component (``name`` or ``name.label``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.errors import ConfigError, DataError, EngineError
from marinesim.engine.results import Event, LazySignals, RunResult, component_units

__all__ = [
    "FORMATS",
    "LogWriter",
    "check_output_dir",
    "column_units",
    "load_run",
    "safe_name",
    "save_run",
    "to_dataframe",
]

FORMATS = ("csv", "parquet", "both", "mcap")
MCAP_FILE = "log.mcap"
PARQUET_DIR = "log.parquet"
CSV_FILE = "log.csv"
UNITS_FILE = "units.csv"
_PART = "part-{:012d}.parquet"
# dictionary pages only for the repeated names; statistics only for t (they cost a quarter of
# the write time on float columns and nobody filters on them)
_PARQUET_OPTIONS: dict[str, Any] = {
    "use_dictionary": ["entity", "block"],
    "write_statistics": ["t"],
    "compression": "snappy",
}


# names and folders -----------------------------------------------------------------------
def safe_name(name: str, default: str = "run") -> str:
    """A file-name-safe version of ``name``: no separators, no ``..``, no leading dot.

    Characters other than letters, digits, ``-``, ``_``, ``+``, ``=`` and ``.`` become ``_``;
    runs of dots collapse to one; the result is at most 100 characters.
    """
    s = re.sub(r"[^A-Za-z0-9_+=.\-]", "_", str(name))
    s = re.sub(r"\.{2,}", ".", s).strip(". ")
    return s[:100] or default


def check_output_dir(directory: str | Path, *, param: str = "--out") -> Path:
    """Create ``directory`` if needed and prove it can be written, before a run starts.

    Raises
    ------
    ConfigError
        The path is a file, a parent is a file, it cannot be created, or a probe file cannot be
        written there (read-only folder, no permission); also when a log, manifest or events
        entry in it is a directory or a file of the wrong kind.
    """
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise ConfigError(f"output folder {str(d)!r} is an existing file", param=param)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create output folder {str(d)!r}: {exc.strerror or exc}", param=param
        ) from None
    probe = d / f".marinesim-write-test-{os.getpid()}"
    try:
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"output folder {str(d)!r} is not writable: {exc.strerror or exc}", param=param
        ) from None
    for name, want_dir in (
        (PARQUET_DIR, True),
        (CSV_FILE, False),
        ("manifest.json", False),
        (UNITS_FILE, False),
        ("events.csv", False),
        ("metrics.csv", False),
        ("scenario.yaml", False),
    ):
        p = d / name
        if p.is_dir() and not want_dir:
            raise ConfigError(f"{str(p)!r} is a directory in the way of the run", param=param)
    return d


# writing -----------------------------------------------------------------------------------
def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def _clean(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _columns_of(meta: dict[str, tuple[str, tuple[str, ...]]]) -> list[str]:
    cols: list[str] = []
    for name, (_unit, labels) in meta.items():
        cols.extend([name] if len(labels) == 1 else [f"{name}.{lab}" for lab in labels])
    return cols


def column_units(meta: dict[str, tuple[str, tuple[str, ...]]]) -> list[tuple[str, str, str]]:
    """(column, unit, signal) of every column of the log, ``entity``, ``block`` and ``t`` first.

    A signal's unit string gives one unit per component by
    :func:`marinesim.engine.results.component_units`.
    """
    rows = [("entity", "", ""), ("block", "", ""), ("t", "s", "")]
    for name, (unit, labels) in meta.items():
        units = component_units(unit, len(labels))
        cols = _columns_of({name: (unit, labels)})
        rows.extend((c, u, name) for c, u in zip(cols, units, strict=True))
    return rows


def _schema(meta: dict[str, tuple[str, tuple[str, ...]]]) -> Any:
    """The Arrow schema of the log: each field's metadata holds its unit and signal."""
    import pyarrow as pa

    fields = []
    for col, unit, sig in column_units(meta):
        typ = pa.string() if col in ("entity", "block") else pa.float64()
        md = {b"unit": unit.encode()}
        if sig:
            md[b"signal"] = sig.encode()
        fields.append(pa.field(col, typ, metadata=md))
    return pa.schema(fields)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class LogWriter:
    """Streams a run to a directory (the recorder's sink).

    Parameters
    ----------
    directory : str or Path
        Checked with :func:`check_output_dir`; an earlier run's log there is replaced.
    fmt : {"parquet", "csv", "both", "mcap"}
        ``mcap``: the Parquet log and ``log.mcap`` (ROS 2 topics, :mod:`marinesim.io.mcap`).
    entities : list of dict
        One dict per entity row (id, name, block, index, team).

    Attributes
    ----------
    taps : list
        More chunk consumers (e.g. the live Foxglove server): objects with
        ``write(t, values, meta)`` and ``finish(manifest)``, called after each flush.
    """

    def __init__(
        self, directory: str | Path, *, fmt: str = "parquet", entities: list[dict[str, Any]]
    ) -> None:
        if fmt not in FORMATS:
            raise ConfigError(
                f"unknown log format {fmt!r} (use csv, parquet, both or mcap)", param="--format"
            )
        self.dir = check_output_dir(directory)
        self.want_mcap = fmt == "mcap"
        if self.want_mcap:
            from marinesim.io.mcap import require

            require("mcap")
        self.fmt = "parquet" if self.want_mcap else fmt
        self.taps: list[Any] = []
        self.entities = list(entities)
        self.n = len(self.entities)
        self.meta: dict[str, tuple[str, tuple[str, ...]]] = {}
        self.columns: list[str] = []
        self.frames = 0
        self.parts = 0
        self.broken: BaseException | None = None
        self._header: dict[str, str] = {}
        self._arrow_schema: Any = None
        self._events_written = 0
        self._entity_cache: dict[int, Any] = {}
        self.files: dict[str, Path] = {}

    # life cycle ------------------------------------------------------------------------
    def start(self, manifest: dict[str, Any], resolved_scenario: str | None = None) -> None:
        """Clear an earlier log, write the scenario, events header and a ``running`` manifest."""
        import pyarrow as pa

        pq_dir = self.dir / PARQUET_DIR
        if pq_dir.is_file() or pq_dir.is_symlink():
            pq_dir.unlink()
        elif pq_dir.is_dir():
            shutil.rmtree(pq_dir)
        for name in (CSV_FILE, "metrics.csv", MCAP_FILE):
            (self.dir / name).unlink(missing_ok=True)
        if self.fmt in ("parquet", "both"):
            pq_dir.mkdir()
            self.files["log_parquet"] = pq_dir
        if self.fmt in ("csv", "both"):
            self.files["log_csv"] = self.dir / CSV_FILE
        names = [str(e["name"]) for e in self.entities]
        blocks = [str(e["block"]) for e in self.entities]
        self._names = pa.array(names, pa.string())
        self._blocks = pa.array(blocks, pa.string())
        self._header = {
            f"marinesim.{k}": str(manifest.get(k))
            for k in ("marinesim_version", "seed", "scenario_sha256", "scenario")
        }
        src = manifest.get("current_field_file")
        if src and Path(src).is_file():
            dst = self.dir / "current.cfd"
            if Path(src).resolve() != dst.resolve():
                shutil.copyfile(src, dst)
            self.files["current_field"] = dst
        if resolved_scenario:
            p = self.dir / "scenario.yaml"
            p.write_text(resolved_scenario, encoding="utf-8")
            self.files["scenario"] = p
        p = self.dir / "events.csv"
        with p.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerow(["t", "entity", "severity", "kind", "text"])
        self.files["events"] = p
        self.files["manifest"] = self.dir / "manifest.json"
        if self.want_mcap:
            from marinesim.io.mcap.writer import McapLog

            self.taps.insert(0, McapLog(self.dir / MCAP_FILE, self.entities, manifest))
            self.files["log_mcap"] = self.dir / MCAP_FILE
        self.write_manifest(manifest)

    def _entity_arrays(self, tc: int) -> tuple[Any, Any]:
        got = self._entity_cache.get(tc)
        if got is None:
            import pyarrow.compute as pc

            idx = np.tile(np.arange(self.n, dtype=np.int32), tc)
            got = (pc.take(self._names, idx), pc.take(self._blocks, idx))
            self._entity_cache = {tc: got} if len(self._entity_cache) > 3 else self._entity_cache
            self._entity_cache[tc] = got
        return got

    def _table(self, t: Any, values: dict[str, Any]) -> Any:
        import pyarrow as pa

        tc = len(t)
        ent, blk = self._entity_arrays(tc)
        arrays = [ent, blk, pa.array(np.repeat(np.asarray(t, dtype=float), self.n))]
        for name, (_unit, labels) in self.meta.items():
            v = values.get(name)
            for j in range(len(labels)):
                col = np.full(tc * self.n, np.nan) if v is None else v[j].reshape(-1)
                arrays.append(pa.array(col))  # contiguous (k, T_c, N) buffers: no copy
        return pa.Table.from_arrays(arrays, schema=self._arrow_schema)

    def write(self, chunk: Any) -> None:
        """Append one chunk of frames (``engine.recorder.Chunk``) to the log files."""
        if self.broken is not None:
            raise EngineError(f"the log in {str(self.dir)!r} is no longer written: {self.broken}")
        try:
            grown = [n for n in chunk.meta if n not in self.meta]
            if grown:
                self.meta.update({n: chunk.meta[n] for n in grown})
                self._arrow_schema = _schema(self.meta)
                self._grow(_columns_of({n: chunk.meta[n] for n in grown}))
            table = self._table(chunk.t, chunk.values)
            # the CSV first: once a Parquet part is on disk, the CSV already holds its rows,
            # so a run killed between the two never leaves the CSV behind the Parquet log
            if self.fmt in ("csv", "both"):
                self._append_csv(table, header=self.frames == 0 and chunk.first_frame == 0)
            if self.fmt in ("parquet", "both"):
                self._write_part(table, chunk.first_frame)
            for tap in self.taps:
                tap.write(np.asarray(chunk.t), chunk.values, self.meta)
            self.frames = chunk.first_frame + len(chunk.t)
        except OSError as exc:
            self.broken = exc
            raise EngineError(
                f"writing the log in {str(self.dir)!r} failed at frame {chunk.first_frame}: "
                f"{exc.strerror or exc} (the log up to frame {self.frames} is kept)"
            ) from exc
        if grown:
            self.write_manifest(None)

    def _write_part(self, table: Any, first_frame: int) -> None:
        import pyarrow.parquet as pq

        table = table.replace_schema_metadata(
            {k.encode(): v.encode() for k, v in self._header.items()}
        )
        path = self.dir / PARQUET_DIR / _PART.format(first_frame)
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            pq.write_table(table, tmp, **_PARQUET_OPTIONS)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self.parts += 1

    def _append_csv(self, table: Any, *, header: bool) -> None:
        import pyarrow.csv as pcsv

        opts = pcsv.WriteOptions(include_header=False, quoting_style="needed")
        with (self.dir / CSV_FILE).open("ab") as fh:
            if header:  # plain names (Arrow would quote every one)
                buf = io.StringIO()
                csv.writer(buf, lineterminator="\n").writerow(table.column_names)
                fh.write(buf.getvalue().encode("utf-8"))
            pcsv.write_csv(table, fh, opts)

    def _grow(self, new_cols: list[str]) -> None:
        """Signals that appeared after the first flush: add NaN columns to what is written."""
        self.columns.extend(new_cols)
        if self.frames == 0:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq_dir = self.dir / PARQUET_DIR
        if self.fmt in ("parquet", "both"):
            for part in sorted(pq_dir.glob("part-*.parquet")):
                tab = pq.read_table(part)
                old_md = tab.schema.metadata
                pad = [pa.array(np.full(tab.num_rows, np.nan)) for _ in new_cols]
                tab = pa.Table.from_arrays(tab.columns + pad, schema=self._arrow_schema)
                tab = tab.replace_schema_metadata(old_md)
                tmp = part.with_name(f".{part.name}.tmp")
                pq.write_table(tab, tmp, **_PARQUET_OPTIONS)
                os.replace(tmp, part)
        if self.fmt in ("csv", "both"):
            p = self.dir / CSV_FILE
            tmp = p.with_name(f".{p.name}.tmp")
            pad = b"," * len(new_cols) + b"\n"
            with p.open("rb") as src, tmp.open("wb") as dst:
                head = src.readline()
                dst.write(head.rstrip(b"\r\n") + b"," + ",".join(new_cols).encode() + b"\n")
                rest = b""
                while block := src.read(1 << 24):
                    block = rest + block
                    cut = block.rfind(b"\n") + 1
                    dst.write(block[:cut].replace(b"\n", pad))
                    rest = block[cut:]
                if rest:
                    dst.write(rest + pad)
            os.replace(tmp, p)

    def append_events(self, events: Sequence[Event]) -> None:
        """Append the events not written yet (``events`` is the run's whole list)."""
        new = events[self._events_written :]
        if not new:
            return
        with (self.dir / "events.csv").open("a", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            for e in new:
                w.writerow([repr(float(e.t)), e.entity, e.severity, e.kind, e.text])
        self._events_written = len(events)

    def write_manifest(self, manifest: dict[str, Any] | None) -> None:
        """Write ``manifest.json`` atomically (None: the last one, with the current signals)."""
        if manifest is not None:
            self._manifest = dict(manifest)
        man = dict(self._manifest)
        man["signals"] = {
            name: {
                "unit": unit,
                "labels": list(labels),
                "columns": _columns_of({name: (unit, labels)}),
                "units": list(component_units(unit, len(labels))),
            }
            for name, (unit, labels) in self.meta.items()
        }
        man["entities"] = self.entities
        man["log_layout"] = "time-major long table; log.parquet is a directory of Parquet files"
        self._write_units()
        man["files"] = {k: v.name for k, v in self.files.items()}
        text = json.dumps(_clean(man), indent=2, default=_json_default) + "\n"
        _atomic_write(self.dir / "manifest.json", text.encode("utf-8"))

    def _write_units(self) -> None:
        """``units.csv``: column, unit, signal of every log column (the CSV's units)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["column", "unit", "signal"])
        w.writerows(column_units(self.meta))
        _atomic_write(self.dir / UNITS_FILE, buf.getvalue().encode("utf-8"))
        self.files["units"] = self.dir / UNITS_FILE

    def finish(
        self,
        manifest: dict[str, Any],
        events: Sequence[Event],
        metrics: list[dict[str, Any]],
    ) -> dict[str, Path]:
        """Write the events, metrics and the final manifest (best effort after a failed write)."""
        man = dict(manifest)
        if self.broken is not None and "log_error" not in man:
            man["log_error"] = f"{type(self.broken).__name__}: {self.broken}"
        man["frames"] = self.frames
        try:
            self.append_events(events)
            if metrics:
                p = self.dir / "metrics.csv"
                keys = list(dict.fromkeys(k for row in metrics for k in row))
                with p.open("w", newline="", encoding="utf-8") as fh:
                    w = csv.DictWriter(fh, fieldnames=keys)
                    w.writeheader()
                    for row in metrics:
                        w.writerow(row)
                self.files["metrics"] = p
        except OSError as exc:
            man.setdefault("log_error", f"{type(exc).__name__}: {exc}")
        for tap in self.taps:
            try:
                tap.finish(man)
            except OSError as exc:
                man.setdefault("log_error", f"{type(exc).__name__}: {exc}")
        self.write_manifest(man)
        return dict(self.files)


def save_run(result: RunResult, directory: str | Path, *, fmt: str = "both") -> dict[str, Path]:
    """Write a finished (or partial) in-memory result as a run directory.

    Parameters
    ----------
    result : RunResult
        Its manifest's status says whether it is complete.
    directory : str or Path
        Created if needed (checked first, see :func:`check_output_dir`).
    fmt : {"csv", "parquet", "both"}

    Returns
    -------
    dict of str to Path
        ``log_csv``, ``log_parquet``, ``manifest``, ``events``, ``scenario``, ``metrics``,
        ``current_field`` (those written).
    """
    from marinesim.engine.recorder import Chunk

    if fmt not in FORMATS:
        raise ConfigError(
            f"unknown log format {fmt!r} (use csv, parquet, both or mcap)", param="--format"
        )
    if result.log_dir is not None and Path(directory).resolve() == result.log_dir.resolve():
        raise ConfigError(f"{str(directory)!r} already holds this run's log", param="--out")
    w = LogWriter(directory, fmt=fmt, entities=result.entities)
    w.start(result.manifest, result.resolved_scenario)
    meta = {n: (s.unit, tuple(s.labels)) for n, s in result.signals.items()}
    tt = len(result.t)
    step = max(1, (16 * 2**20) // max(1, 8 * max(1, result.n) * (3 + len(_columns_of(meta)))))
    for a in range(0, tt, step):
        b = min(tt, a + step)
        vals = {n: s.values[:, a:b, :].transpose(2, 1, 0) for n, s in result.signals.items()}
        w.write(Chunk(np.asarray(result.t[a:b]), vals, a, meta))
    if tt == 0:
        w.meta.update(meta)
    return w.finish(result.manifest, result.events, result.metrics)


# reading -----------------------------------------------------------------------------------
def _parts(d: Path) -> list[Path]:
    p = d / PARQUET_DIR
    if p.is_dir():
        return sorted(q for q in p.glob("part-*.parquet") if not q.name.startswith("."))
    return [p] if p.is_file() else []


class _LogReader:
    """Reads signals of one run directory frame-wise (Parquet parts, else the CSV)."""

    def __init__(self, d: Path, meta: dict[str, Any], n: int, t: np.ndarray | None = None) -> None:
        self.dir = d
        self.meta = meta
        self.n = n
        self.parts = _parts(d)
        self.csv = d / CSV_FILE if not self.parts and (d / CSV_FILE).is_file() else None
        self.empty = not self.parts and self.csv is None
        if self.empty and not (d / PARQUET_DIR).is_dir():
            raise DataError(f"no {PARQUET_DIR} or {CSV_FILE} in {str(d)!r}", file=str(d))
        self._csv_table: Any = None
        self.entity_major = False
        self.t = np.zeros(0) if self.empty else self._times() if t is None else t

    @property
    def source(self) -> Path:
        return self.parts[0].parent if self.parts else self.csv  # type: ignore[return-value]

    def _read(self, columns: list[str]) -> Iterator[dict[str, np.ndarray]]:
        """Column arrays per part (or for the whole CSV), complete frames only."""
        if self.parts:
            import pyarrow.parquet as pq

            for p in self.parts:
                try:
                    tab = pq.read_table(p, columns=columns)
                except Exception as exc:  # pyarrow raises its own error types
                    raise DataError(f"unreadable log part: {exc}", file=str(p)) from None
                yield self._complete(tab, columns, p)
        else:
            yield self._complete(self._csv(), columns, self.csv)

    def _complete(self, tab: Any, columns: list[str], src: Any) -> dict[str, np.ndarray]:
        for c in columns:
            if c not in tab.column_names:
                raise DataError(f"column {c!r} missing from the log", file=str(src))
        rows = tab.num_rows - tab.num_rows % max(1, self.n)
        return {c: tab.column(c).slice(0, rows).to_numpy(zero_copy_only=False) for c in columns}

    def _csv(self) -> Any:
        if self._csv_table is None:
            import pyarrow.csv as pcsv

            def skip(_row: Any) -> str:
                return "skip"  # a line cut short by a crash

            try:
                self._csv_table = pcsv.read_csv(
                    self.csv,
                    parse_options=pcsv.ParseOptions(invalid_row_handler=skip),
                    read_options=pcsv.ReadOptions(),
                    convert_options=pcsv.ConvertOptions(
                        column_types={"entity": "string", "block": "string"}
                    ),
                )
            except Exception as exc:
                raise DataError(f"unreadable log: {exc}", file=str(self.csv)) from None
        return self._csv_table

    def _times(self) -> np.ndarray:
        first = next(iter(self._read(["entity"])))["entity"]
        if self.n > 1 and len(first) > self.n:
            self.entity_major = bool(first[0] == first[1])  # logs written before streaming
        out = []
        for cols in self._read(["t"]):
            t = np.asarray(cols["t"], dtype=float)
            if self.entity_major:
                out.append(t[: len(t) // self.n])
            else:
                out.append(t[:: max(1, self.n)])
        return np.concatenate(out) if out else np.zeros(0)

    def signal(self, name: str, step: int = 1) -> np.ndarray:
        """Values (N, T', k) of every ``step``-th frame of signal ``name``."""
        cols = self.meta[name]["columns"]
        if self.empty:
            return np.zeros((self.n, 0, len(cols)))
        out = []
        offset = 0
        for part in self._read(cols):
            arr = np.stack([np.asarray(part[c], dtype=float) for c in cols], axis=-1)
            tp = len(arr) // max(1, self.n)
            if self.entity_major:
                arr = arr.reshape(self.n, tp, len(cols)).transpose(1, 0, 2)
            else:
                arr = arr.reshape(tp, self.n, len(cols))
            first = (-offset) % step
            out.append(arr[first::step].copy() if step > 1 else arr)  # not a view of the part
            offset += tp
        vals = np.concatenate(out, axis=0) if out else np.zeros((0, self.n, len(cols)))
        return np.ascontiguousarray(vals.transpose(1, 0, 2))


def load_run(directory: str | Path) -> RunResult:
    """Read a run directory (Parquet preferred, else CSV); signals are read on first use.

    Works on the directory of a crashed run too: the manifest then says ``running`` and the log
    holds every frame up to the last flush.

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
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        raise DataError(
            f"manifest is not valid JSON: {getattr(exc, 'msg', exc)}",
            file=str(mp),
            line=line,
            column=col,
        ) from None
    meta: dict[str, Any] = man.get("signals", {})
    entities: list[dict[str, Any]] = man.get("entities", [])
    n = len(entities)
    reader = _LogReader(d, meta, n)
    if n == 0:
        raise DataError("the manifest lists no entities", file=str(mp))
    signals = LazySignals(
        {k: (v.get("unit", ""), tuple(v.get("labels", ()))) for k, v in meta.items()},
        reader.signal,
    )
    events = []
    ep = d / "events.csv"
    if ep.is_file():
        with ep.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                try:
                    events.append(
                        Event(
                            float(row["t"]),
                            row["entity"],
                            row["severity"],
                            row["kind"],
                            row["text"],
                        )
                    )
                except (KeyError, TypeError, ValueError):
                    continue  # a line cut short by a crash
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
        t=reader.t,
        signals=signals,
        entities=entities,
        events=events,
        metrics=metrics,
        manifest=man,
        resolved_scenario=scen,
        log_dir=d,
    )


def lazy_signals(
    directory: Path, meta: dict[str, tuple[str, tuple[str, ...]]], n: int, t: np.ndarray
) -> LazySignals:
    """Signals of a streamed log, read on first use (the engine's result after a streamed run)."""
    cols = {k: {"columns": _columns_of({k: v})} for k, v in meta.items()}
    return LazySignals(meta, _LogReader(Path(directory), cols, n, t=t).signal)


def to_dataframe(result: RunResult) -> Any:
    """Long ``pandas.DataFrame``: entity, block, t, then one column per signal component."""
    import pandas as pd

    if result.log_dir is not None and _parts(result.log_dir):
        import pyarrow.parquet as pq

        return pq.read_table(result.log_dir / PARQUET_DIR).to_pandas()
    cols = result.columns()
    names = np.array([e["name"] for e in result.entities], dtype=object)
    blocks = np.array([e["block"] for e in result.entities], dtype=object)
    rows = cols.pop("entity").astype(int)
    out: dict[str, Any] = {"entity": names[rows] if len(names) else np.array([], dtype=object)}
    out["block"] = blocks[rows] if len(blocks) else np.array([], dtype=object)
    out.update(cols)
    return pd.DataFrame(out)

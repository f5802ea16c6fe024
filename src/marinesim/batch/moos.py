"""MOOS-IvP missions by the hundred: ``marinesim moos batch MISSION.moos``.

Each run flies the mission's real MOOS apps with ``marinesim moos`` in place of the
simulator, in its own temporary folder with its own MOOSDB port on 127.0.0.1, in an order that
cannot race: the MOOSDB first, then marinesim, which must join and post a first ``NAV_X``
before the rest of the ``ANTLER`` list starts (in file order, ``MSBetweenLaunches`` apart, as
pAntler does; each as ``APP MISSION.moos --alias=NAME``).  An observer client (registered for
the NAV variables, ``DEPLOY``, the completion variable and the node reports) logs what it sees
to ``observer.alog``; the run ends at the completion post (``--until``, default
``MISSION=complete``), at a timeout [MOOS s], or when a program exits early, and every program
is then stopped with SIGINT in reverse order (killed after 5 s).

Sweeps: a YAML file ``grid: {KEY: [values…]}``, full factorial; ``KEY`` is ``BLOCK.param`` for
a ``ProcessConfig`` parameter (``uSimMarine.start_pos``, ``pMarinePID.speed_factor``…; added
when the block lacks it) or a global (``MOOSTimeWarp``).  Replicas repeat each point: the usm
model is deterministic, so replicas sample the run-to-run spread of MOOS scheduling (the real
source of spread in these missions, ``reference/moos_live`` README §2.3); the replica number
is the run's seed column.

Runs go to Dask (a local cluster of ``workers`` processes, or ``scheduler``) as
``marinesim batch`` does; a run that fails or hangs is recorded with its reason and the batch
goes on.  Outputs in ``outdir``: ``runs.csv`` (one row per run), ``summary.csv`` (per metric:
n, mean, 95 % interval of the mean; the completion rate with its Wilson 95 % interval) and
``runs/<id>/`` (mission, logs, program output).
"""

from __future__ import annotations

import itertools
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marinesim.core.errors import ConfigError

__all__ = ["MoosBatchResult", "MoosRun", "parse_moos_sweep", "plan_runs", "run_batch", "run_one"]

#: The simulator blocks marinesim takes the place of.
SIM_BLOCKS = ("uSimMarine", "uSimMarineV22")
_METRICS = {
    "t_complete_s": "s",
    "path_length_m": "m",
    "hausdorff_to_reference_m": "m",
    "max_along_track_to_reference_m": "m",
    "closest_approach_m": "m",
    "late_iterations": "",
    "max_gap_moos_s": "s",
    "wall_s": "s",
}


@dataclass(frozen=True)
class MoosRun:
    """One run: ``run_id``, design point number, replica, and the swept values."""

    run_id: int
    point: int
    replica: int
    values: dict[str, str] = field(default_factory=dict)


@dataclass
class MoosBatchResult:
    """The runs table and summary (pandas DataFrames) and where they were written."""

    runs: Any
    summary: Any
    outdir: Path


# ------------------------------------------------------------------------------ planning
def parse_moos_sweep(path: Path) -> dict[str, list[str]]:
    """Read ``grid: {KEY: [values]}`` (values kept as text, as a ``.moos`` file holds them).

    Raises
    ------
    ConfigError
        Unreadable file, no ``grid`` mapping, an empty or non-list value list.
    """
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the sweep: {exc}", file=str(path)) from None
    grid = data.get("grid") if isinstance(data, dict) else None
    if not isinstance(grid, dict) or not grid:
        raise ConfigError("a sweep file needs 'grid: {KEY: [values, ...]}'", file=str(path))
    out: dict[str, list[str]] = {}
    for key, vals in grid.items():
        if not isinstance(vals, list) or not vals:
            raise ConfigError("needs a non-empty list of values", file=str(path), param=str(key))
        out[str(key)] = [_text(v) for v in vals]
    return out


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def plan_runs(grid: dict[str, list[str]], replicas: int) -> list[MoosRun]:
    """Every (design point, replica) of a full-factorial grid."""
    if replicas < 1:
        raise ConfigError(f"must be >= 1, got {replicas}", param="--replicas")
    keys = list(grid)
    points = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]
    runs = []
    for p, values in enumerate(points or [{}]):
        for r in range(replicas):
            runs.append(MoosRun(len(runs), p, r, values))
    return runs


# ------------------------------------------------------------------------------ mission text
def _set_global(text: str, name: str, value: str) -> str:
    pat = re.compile(rf"^(\s*){re.escape(name)}\s*=.*$", re.IGNORECASE | re.MULTILINE)
    if pat.search(text):
        return pat.sub(lambda m: f"{m.group(1)}{name} = {value}", text, count=1)
    return f"{name} = {value}\n" + text


def _set_param(text: str, block: str, param: str, value: str, where: str) -> str:
    lines = text.splitlines()
    start = None
    for i, ln in enumerate(lines):
        m = re.match(r"\s*ProcessConfig\s*=\s*(\S+)", ln, re.IGNORECASE)
        if m and m.group(1).lower() == block.lower():
            start = i
            break
    if start is None:
        raise ConfigError(f"the mission has no 'ProcessConfig = {block}' block", param=where)
    opened = next(i for i in range(start, len(lines)) if "{" in lines[i])
    close = next(i for i in range(opened, len(lines)) if lines[i].strip().startswith("}"))
    for i in range(opened + 1, close):
        key = lines[i].split("//")[0].split("=")[0].strip()
        if key.lower() == param.lower():
            lines[i] = f"  {param} = {value}"
            return "\n".join(lines) + "\n"
    lines.insert(close, f"  {param} = {value}")
    return "\n".join(lines) + "\n"


def mission_for_run(text: str, port: int, values: dict[str, str]) -> str:
    """The mission text of one run: loopback, its own port, the swept values."""
    text = _set_global(text, "ServerHost", "127.0.0.1")
    text = _set_global(text, "ServerPort", str(port))
    for key, value in values.items():
        if "." in key:
            block, param = key.split(".", 1)
            text = _set_param(text, block, param, value, key)
        else:
            text = _set_global(text, key, value)
    return text


def antler_list(text: str) -> tuple[list[tuple[str, str | None]], float]:
    """``(program, alias)`` per ``Run =`` line of the ANTLER block, and MSBetweenLaunches [s]."""
    from marinesim.interop.moos.moosfile import MoosFile

    mf = MoosFile.parse(text)
    blk = mf.find_block("ANTLER")
    if blk is None:
        raise ConfigError("the mission has no 'ProcessConfig = ANTLER' block to launch")
    runs: list[tuple[str, str | None]] = []
    gap = 0.2
    for key, value, _line in blk.entries:
        if key.lower() == "msbetweenlaunches":
            gap = float(value) / 1000.0
        elif key.lower() == "run":
            prog = value.split("@")[0].strip()
            alias = value.split("~", 1)[1].strip() if "~" in value else None
            runs.append((prog, alias))
    return runs, gap


# ------------------------------------------------------------------------------ one run
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _which(prog: str, bindir: str | None) -> str | None:
    if bindir and (Path(bindir) / prog).is_file():
        return str(Path(bindir) / prog)
    return shutil.which(prog)


def _stop(procs: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
    for _name, p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    end = time.monotonic() + 5.0
    for _name, p in reversed(procs):
        try:
            p.wait(max(end - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


def run_one(
    run: MoosRun,
    mission_text: str,
    mission_dir: str,
    outdir: str,
    *,
    bindir: str | None,
    until: tuple[str, str] = ("MISSION", "complete"),
    timeout_moos: float = 600.0,
    reference: str | None = None,
) -> dict[str, Any]:
    """Fly one run; its row of the runs table (never raises for a failed run)."""
    row: dict[str, Any] = {"run_id": run.run_id, "point": run.point, "replica": run.replica}
    row["seed"] = run.replica
    row.update(run.values)
    t_wall = time.time()
    work = Path(outdir) / "runs" / f"{run.run_id:05d}"
    work.mkdir(parents=True, exist_ok=True)
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    obs = None
    try:
        for f in Path(mission_dir).iterdir():  # behaviour files and the like
            if f.is_file() and f.suffix not in (".alog", ".moos") and f.stat().st_size < 1 << 20:
                shutil.copy(f, work / f.name)
        (work / "logs").mkdir(exist_ok=True)  # pLogger does not create a missing PATH
        port = _free_port()
        text = mission_for_run(mission_text, port, run.values)
        mission = work / "mission.moos"
        mission.write_text(text, encoding="utf-8")
        from marinesim.interop.moos.moosfile import MoosFile

        mf = MoosFile.parse(text)
        warp = float(mf.global_value("MOOSTimeWarp") or 1.0)
        progs, gap = antler_list(text)
        sim = [(p, a) for p, a in progs if (a or p) in SIM_BLOCKS or p in SIM_BLOCKS]
        if not sim:
            raise ConfigError(f"no {' or '.join(SIM_BLOCKS)} in the ANTLER list")
        sim_name = sim[0][1] or sim[0][0]
        rest = [(p, a) for p, a in progs if p != "MOOSDB" and (p, a) != sim[0]]
        missing = [p for p, _a in [("MOOSDB", None), *rest] if _which(p, bindir) is None]
        if missing:
            return _fail(row, t_wall, f"not found (MARINESIM_MOOS_BIN or PATH): {missing}")

        def launch(name: str, cmd: list[str]) -> None:
            out = (work / f"{name}.out").open("wb")
            procs.append((name, subprocess.Popen(cmd, cwd=work, stdout=out, stderr=out)))

        launch("MOOSDB", [str(_which("MOOSDB", bindir)), "mission.moos"])
        from marinesim.core.alog import AlogWriter
        from marinesim.interop.moos.app import READY
        from marinesim.interop.moos.client import MoosClient, MoosConnectionError

        obs = MoosClient("127.0.0.1", port, "marinesim_batch", time_warp=warp, log=lambda s: None)
        try:
            obs.connect(retry_for=20.0)
        except MoosConnectionError as exc:
            return _fail(row, t_wall, f"MOOSDB did not start: {exc}", procs)
        watch = ["NAV_X", "NAV_Y", "NAV_SPEED", "NAV_DEPTH", "DEPLOY", "WPT_INDEX", until[0]]
        watch += ["NODE_REPORT", "NODE_REPORT_LOCAL"]
        obs.register(dict.fromkeys(watch))
        launch(
            "marinesim",
            [sys.executable, "-m", "marinesim", "moos", "mission.moos", sim_name,
             "-o", "marinesim.alog"],
        )  # fmt: skip
        log = AlogWriter(work / "observer.alog", logstart=obs.moos_time())
        seen: list[Any] = []
        end = time.monotonic() + 60.0
        # joined, posting, and the model iterating (not only the start record): start the
        # rest, so that the helm's first commands reach the model without delay
        sim_out = work / "marinesim.out"
        ready = READY.encode()
        while not (any(m.key == "NAV_X" for m in seen) and ready in sim_out.read_bytes()):
            if time.monotonic() > end or procs[-1][1].poll() is not None:
                log.close()
                return _fail(row, t_wall, "marinesim never posted NAV_X", procs)
            seen += obs.fetch(timeout=0.05)
            obs.heartbeat()  # the MOOSDB drops a client after 5 s of silence
        for prog, alias in rest:
            t_next = time.monotonic() + gap
            while time.monotonic() < t_next:
                seen += obs.fetch(timeout=min(0.05, max(t_next - time.monotonic(), 0.0)))
                obs.heartbeat()
            # by full path a MOOS app would take argv[0] as its name: always give the name
            name = alias or prog
            launch(name, [str(_which(prog, bindir)), "mission.moos", f"--alias={name}"])
        status, reason = "not completed", f"timeout after {timeout_moos:g} MOOS s"
        t_end = time.monotonic() + timeout_moos / warp
        done = False
        while time.monotonic() < t_end and not done:
            msgs = seen + obs.fetch(timeout=0.05)
            seen = []
            for m in msgs:
                log.write(m.time, m.key, m.src, m.value)
                if m.key == until[0] and str(m.value) == until[1]:
                    done = True
            dead = [(n, p.returncode) for n, p in procs if p.poll() is not None]
            if dead and not done:
                status, reason = "failed", f"{dead[0][0]} exited (rc {dead[0][1]})"
                break
            obs.heartbeat()
        if done:
            status, reason = "completed", ""
        log.close()
        obs.close()
        obs = None
        _stop(procs)
        row.update(_metrics(work, until, reference))
        row.update(status=status, completed=status == "completed", reason=reason)
    except ConfigError as exc:
        return _fail(row, t_wall, str(exc), procs)
    except Exception as exc:  # a run must never stop the batch
        return _fail(row, t_wall, f"{type(exc).__name__}: {exc}", procs)
    finally:
        if obs is not None:
            obs.close()
        if procs:
            _stop(procs)
    row["wall_s"] = time.time() - t_wall
    return row


def _fail(
    row: dict[str, Any],
    t_wall: float,
    reason: str,
    procs: list[tuple[str, subprocess.Popen[bytes]]] | None = None,
) -> dict[str, Any]:
    if procs:
        _stop(procs)
    row.update(status="failed", completed=False, reason=reason, wall_s=time.time() - t_wall)
    return row


def _metrics(work: Path, until: tuple[str, str], reference: str | None) -> dict[str, Any]:
    import numpy as np

    from marinesim.core.alog import read_alog

    out: dict[str, Any] = dict.fromkeys(_METRICS, math.nan)
    log = read_alog(work / "observer.alog")
    recs = sorted(log.records, key=lambda r: r.t)
    t_done = next((r.t for r in recs if r.var == until[0] and str(r.value) == until[1]), None)
    ts, sp = log.numeric("NAV_SPEED")
    moving = ts[sp > 0]
    tx, x = log.numeric("NAV_X")
    _ty, y = log.numeric("NAV_Y")
    n = min(len(x), len(y))
    if len(moving) and n > 1:
        t0 = float(moving[0])
        t1 = t_done if t_done is not None else float(tx[n - 1])
        keep = (tx[:n] >= t0) & (tx[:n] <= t1)
        xs, ys = x[:n][keep], y[:n][keep]
        out["path_length_m"] = float(np.sum(np.hypot(np.diff(xs), np.diff(ys))))
        if t_done is not None:
            out["t_complete_s"] = t_done - t0
    if reference and t_done is not None:
        from marinesim.interop.moos.spread import compare_tracks, mission_track

        try:
            cmp = compare_tracks(mission_track(log), mission_track(reference))
            out["hausdorff_to_reference_m"] = cmp["hausdorff_m"]
            out["max_along_track_to_reference_m"] = cmp["max_dist_equal_along_track_m"]
        except Exception:  # noqa: BLE001 - no DEPLOY in this mission: no comparison
            pass
    out["closest_approach_m"] = _closest_approach(log)
    text = (work / "marinesim.out").read_text(encoding="utf-8", errors="replace")
    m = re.search(r"(\d+) late iterations \(longest gap ([0-9.]+) MOOS s\)", text)
    if m:
        out["late_iterations"] = int(m.group(1))
        out["max_gap_moos_s"] = float(m.group(2))
    return out


def _closest_approach(log: Any) -> float:
    """Least distance between two vehicles of the node reports at about the same time."""
    import numpy as np

    last: dict[str, tuple[float, float, float]] = {}
    best = math.inf
    for r in sorted(log.records, key=lambda r: r.t):
        if r.var not in ("NODE_REPORT", "NODE_REPORT_LOCAL") or not isinstance(r.value, str):
            continue
        f = dict(kv.split("=", 1) for kv in r.value.split(",") if "=" in kv)
        try:
            me = (r.t, float(f["X"]), float(f["Y"]))
        except (KeyError, ValueError):
            continue
        name = f.get("NAME", "")
        for other, (t, ox, oy) in last.items():
            if other != name and abs(t - me[0]) <= 1.0:
                best = min(best, float(np.hypot(me[1] - ox, me[2] - oy)))
        last[name] = me
    return best if math.isfinite(best) else math.nan


# ------------------------------------------------------------------------------ the batch
def _wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return math.nan, math.nan
    z = 1.959963984540054
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


def run_batch(
    mission: str | Path,
    *,
    replicas: int = 1,
    sweep: str | Path | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    outdir: str | Path = "moos-batch",
    until: str = "MISSION=complete",
    timeout_moos: float = 600.0,
    reference: str | Path | None = None,
    bindir: str | None = None,
    say: Any = None,
) -> MoosBatchResult:
    """Run every (design point, replica) of ``mission``; see the module documentation."""
    import pandas as pd

    from marinesim.batch.results import summarise
    from marinesim.batch.runner import _client

    say = say or (lambda s: print(s, file=sys.stderr, flush=True))
    mission = Path(mission)
    try:
        text = mission.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the mission: {exc.strerror}", file=str(mission)) from None
    var, eq, value = until.partition("=")
    if not eq or not var.strip() or not value.strip():
        raise ConfigError(f"use VARIABLE=VALUE, not {until!r}", param="--until")
    antler_list(text)  # the ANTLER block is there
    grid = parse_moos_sweep(Path(sweep)) if sweep is not None else {}
    runs = plan_runs(grid, replicas)
    if workers < 1:
        raise ConfigError(f"must be >= 1, got {workers}", param="--workers")
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    bindir = bindir if bindir is not None else os.environ.get("MARINESIM_MOOS_BIN")
    kw = {
        "bindir": bindir,
        "until": (var.strip(), value.strip()),
        "timeout_moos": float(timeout_moos),
        "reference": str(reference) if reference else None,
    }
    say(f"moos batch: {len(runs)} runs of {mission.name} on {scheduler or f'{workers} workers'}")
    client, cluster = _client(workers, scheduler, 30.0)
    rows: list[dict[str, Any]] = []
    try:
        from dask.distributed import as_completed

        futs = [
            client.submit(
                run_one,
                r,
                text,
                str(mission.parent.resolve()),
                str(out.resolve()),
                pure=False,
                **kw,
            )
            for r in runs
        ]
        for fut in as_completed(futs):
            try:
                row = fut.result()
            except Exception as exc:  # a worker died: the run is recorded, the batch goes on
                row = {"status": "failed", "completed": False, "reason": f"worker: {exc}"}
            rows.append(row)
            say(f"  run {row.get('run_id', '?')}: {row['status']} {row.get('reason', '')}")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    table = pd.DataFrame(rows).sort_values("run_id", na_position="last").reset_index(drop=True)
    table.to_csv(out / "runs.csv", index=False)
    metrics = [m for m in _METRICS if m in table]
    summary = summarise(table, metrics, _METRICS)
    k = int(table["completed"].sum())
    lo, hi = _wilson(k, len(table))
    rate = {"metric": "completion_rate", "unit": "", "n": len(table), "mean": k / len(table)}
    rate.update(ci95_low=lo, ci95_high=hi)
    summary = pd.concat([pd.DataFrame([rate]), summary], ignore_index=True)
    summary.to_csv(out / "summary.csv", index=False)
    return MoosBatchResult(table, summary, out)

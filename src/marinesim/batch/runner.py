"""Run a batch on Dask distributed and keep every result on disk as it arrives.

``marinesim.batch.run("auv_survey_ins", replicas=100, outdir="mc")`` plans the runs, checks the
output folder, starts a local cluster (``workers`` processes on 127.0.0.1) or connects to
``scheduler``, and writes, as each task completes:

* ``DIR/runs/<run_id>.json`` — the run's record (written atomically; ``--resume`` skips runs
  that have one, so a killed batch loses nothing finished),
* ``DIR/logs/run_id=<run_id>/part.parquet`` — the run's track log (a Hive-partitioned Parquet
  dataset: ``pandas.read_parquet(DIR / "logs")``),
* ``DIR/mcap/<run_id>.mcap`` — with ``log_format="mcap"``, the same track log as ROS 2 topics
  (:func:`marinesim.io.mcap.tracks.write_track_mcap`: odometry, /tf, scene per vehicle),

then ``DIR/runs.parquet`` (one row per run), ``DIR/summary.csv`` and the figures.  Dask re-runs
the tasks of a worker that dies; a task that kills workers repeatedly is recorded as ``lost``
(not saved, so ``--resume`` tries it again).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marinesim.batch.plan import Plan, RunSpec, chunk_size, make_plan
from marinesim.batch.results import summarise
from marinesim.batch.worker import RunOutput, Task, run_task
from marinesim.core.errors import ConfigError
from marinesim.core.libm import libm_environment, numpy_matches_libm

__all__ = ["BatchResult", "check_outdir", "run"]

_FIXED = ("run_id", "point", "replica", "seed")
_TAIL = ("status", "error", "ended_by", "t_end")


@dataclass
class BatchResult:
    """What :func:`run` returns.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per run (the content of ``runs.parquet``).
    summary : pandas.DataFrame
        The content of ``summary.csv``.
    outdir : Path
    files : dict of str to Path
        runs, summary, logs, figures.
    plan : Plan
    skipped : int
        Runs found finished on disk (``resume``).
    wall_s : float
        Wall time of the batch [s].
    numpy_libm : bool or None
        Whether every worker's numpy gave libm's bits (None: no run this time).  Where it did
        not, a row may differ in its last digits with another ``chunk`` (docs/guide/worlds.md).
    """

    runs: Any
    summary: Any
    outdir: Path
    files: dict[str, Any] = field(default_factory=dict)
    plan: Plan | None = None
    skipped: int = 0
    wall_s: float = 0.0
    numpy_libm: bool | None = None

    @property
    def failed(self) -> Any:
        """Rows of runs that did not complete."""
        return self.runs[self.runs["status"] != "completed"]


def check_outdir(outdir: Path) -> None:
    """Create ``outdir`` and prove it can be written (before the first run)."""
    try:
        outdir.mkdir(parents=True, exist_ok=True)
        probe = outdir / f".write-test-{os.getpid()}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"output folder {str(outdir)!r} cannot be written: {exc.strerror or exc}",
            param="-o/--out",
        ) from None


def _atomic_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _atomic_parquet(path: Path, df: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def _save(outdir: Path, out: RunOutput, mcap: bool = False) -> None:
    """Log first, record last: a record on disk means the run is complete."""
    rid = out.record["run_id"]
    if out.log is not None:
        _atomic_parquet(outdir / "logs" / f"run_id={rid}" / "part.parquet", out.log)
        if mcap and len(out.log):
            _atomic_mcap(outdir / "mcap" / f"{rid}.mcap", out)
    blob = {"record": out.record, "units": out.units, "wall_s": out.wall_s, "cpu_s": out.cpu_s}
    _atomic_bytes(outdir / "runs" / f"{rid}.json", json.dumps(blob, default=_json).encode())


def _atomic_mcap(path: Path, out: RunOutput) -> None:
    from marinesim.io.mcap.tracks import write_track_mcap

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    rec = out.record
    ident = {k: rec.get(k) for k in ("run_id", "point", "replica", "seed", "status", "ended_by")}
    origin = out.origin if out.origin is not None and len(out.origin) == 2 else None
    write_track_mcap(tmp, out.log, origin=origin, identity=ident)
    os.replace(tmp, path)


def _json(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return str(v)


def _load_done(outdir: Path) -> dict[str, dict[str, Any]]:
    done = {}
    for p in sorted((outdir / "runs").glob("*.json")):
        try:
            blob = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a torn file cannot exist (atomic writes); ignore anything foreign
        done[p.stem] = blob
    return done


def worker_env(workers: int) -> dict[str, str]:
    """Environment of a local cluster's worker processes.

    * numba's threads (the ``prange`` loops of large blocks, e.g. stacked replicas) share the
      cores among the workers — ``NUMBA_NUM_THREADS`` = cores // workers, at least 1 —
      instead of each worker starting one thread per core (``workers`` × cores threads
      spinning on the cores), unless the environment sets ``NUMBA_NUM_THREADS`` itself;
    * numpy gives libm's bits (:func:`~marinesim.core.libm.libm_environment`; on CPUs with
      AVX-512 it would not): the plugins' ticks and the compiled tick then agree bit for bit,
      so a world's row is the same whichever worlds share its simulation (a tick that one
      world hands back to the plugins is taken there by every world of the simulation).
    """
    env = libm_environment()
    if not os.environ.get("NUMBA_NUM_THREADS"):
        env["NUMBA_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // max(workers, 1)))
    return env


def _client(workers: int, scheduler: str | None, timeout: float) -> tuple[Any, Any]:
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout=timeout), None
        except Exception as exc:  # OSError, TimeoutError, ValueError for a malformed address
            raise ConfigError(
                f"cannot reach the Dask scheduler at {scheduler!r} within {timeout:g} s "
                f"({type(exc).__name__}: {exc}); start one with 'dask scheduler' and workers "
                "with 'dask worker ADDRESS', or leave out --scheduler for a local cluster",
                param="--scheduler",
            ) from None
    import dask

    env = worker_env(workers)
    # numpy reads NPY_DISABLE_CPU_FEATURES at its import, which a worker process does before
    # the nanny's ``env`` reaches it: those go in before the spawn (the nanny writes them into
    # this process's environment; the earlier values are put back once the workers run)
    early = {k: env.pop(k) for k in list(env) if k.startswith("NPY_")}
    spawn = {**dask.config.get("distributed.nanny.pre-spawn-environ", default={}), **early}
    before = {k: os.environ.get(k) for k in spawn}
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn}):
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.ERROR,
                env=env,
            )
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return Client(cluster, timeout=timeout), cluster


def _tasks(
    plan: Plan, todo: list[RunSpec], workers: int, chunk: int | None, log_every_s: float | None
) -> list[Task]:
    by_point: dict[int, list[RunSpec]] = {}
    for r in todo:
        by_point.setdefault(r.point, []).append(r)
    tasks = []
    for _p, runs in sorted(by_point.items()):
        size = chunk or (chunk_size(len(runs), workers) if plan.stackable else 1)
        for i in range(0, len(runs), size):
            tasks.append(Task(len(tasks), tuple(runs[i : i + size]), plan.stackable, log_every_s))
    return tasks


def run(
    scenario: str | Path,
    *,
    outdir: str | Path,
    replicas: int | None = None,
    sweep: Any = None,
    sweep_file: str | Path | None = None,
    variables: Any = None,
    sets: Any = None,
    seed: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    log_every: float | None = 1.0,
    log_format: str = "parquet",
    figures: bool = True,
    chunk: int | None = None,
    connect_timeout: float = 5.0,
    progress: Callable[[int, int], None] | None = None,
    on_plan: Callable[[Plan, int], None] | None = None,
) -> BatchResult:
    """Run every (design point, replica) of a scenario on Dask; return the runs table.

    Parameters
    ----------
    scenario : str or Path
        Scenario file or bundled name.
    outdir : str or Path
        Output folder (checked for writing before the first run).
    replicas : int, optional
        Replicas per point (default: the scenario's ``replicas``).
    sweep, sweep_file : optional
        A sweep mapping, or a YAML file with one (default: the scenario's ``sweep:``).
    variables, sets, seed : optional
        As ``marinesim run --var/--set/--seed``.
    workers : int, optional
        Local worker processes (default: the CPU count). Ignored with ``scheduler``.
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``).
    resume : bool
        Continue a batch in ``outdir``: runs with a saved record are skipped.
    log_every : float or None
        Interval of the per-run track logs [s] (None: no logs).
    log_format : {"parquet", "mcap"}
        ``mcap``: each run's track log also as ``DIR/mcap/<run_id>.mcap`` (ROS 2 topics).
    figures : bool
        Draw the metric histograms and the ensemble tracks.
    chunk : int, optional
        Replicas per task (default: even work per worker, at most 256 stacked).
    connect_timeout : float
        Seconds to reach ``scheduler`` before a ConfigError.
    progress : callable, optional
        ``progress(done, total)`` after each task.
    on_plan : callable, optional
        ``on_plan(plan, n_todo)`` once the plan is checked, before the cluster starts.

    Returns
    -------
    BatchResult

    Raises
    ------
    ConfigError
        Bad scenario or sweep, replicas <= 0, unwritable output folder, a batch of another
        plan in ``outdir`` (or one there without ``resume``), unreachable scheduler.
    """

    t0 = time.perf_counter()
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ConfigError(f"workers must be >= 1, got {workers!r}", param="--workers")
    if log_format not in ("parquet", "mcap"):
        raise ConfigError(
            f"unknown log format {log_format!r} (use parquet or mcap)", param="--format"
        )
    if log_format == "mcap":
        from marinesim.io.mcap import require

        require("mcap")
        if log_every is None:
            raise ConfigError(
                "--format mcap writes the track logs: drop --no-logs", param="--format"
            )
    plan = make_plan(
        scenario,
        replicas=replicas,
        sweep=sweep,
        sweep_file=str(sweep_file) if sweep_file else None,
        variables=variables,
        sets=sets,
        seed=seed,
    )
    out = Path(outdir)
    check_outdir(out)
    meta_path = out / "batch.json"
    fp = plan.fingerprint()
    if meta_path.exists():
        try:
            old = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        if not resume and any((out / "runs").glob("*.json")):
            raise ConfigError(
                f"{str(out)!r} already holds a batch; pass --resume to continue it or choose "
                "another output folder",
                param="-o/--out",
            )
        if resume and old.get("fingerprint") != fp:
            raise ConfigError(
                f"--resume: the batch in {str(out)!r} was planned with another scenario, sweep, "
                "replicas or seed",
                param="--resume",
            )
    meta = {
        "fingerprint": fp,
        "scenario": plan.source.file,
        "seed": plan.source.seed,
        "replicas": plan.replicas,
        "points": plan.points,
        "sweep": plan.sweep.paths if plan.sweep else [],
        "stacked": plan.stackable,
        "stack_problems": plan.stack_problems,
        "runs": len(plan.runs),
    }
    _atomic_bytes(meta_path, json.dumps(meta, indent=1, default=_json).encode())
    (out / "runs").mkdir(exist_ok=True)
    done = _load_done(out) if resume else {}
    known = {r.run_id for r in plan.runs}
    done = {k: v for k, v in done.items() if k in known}
    todo = [r for r in plan.runs if r.run_id not in done]
    if on_plan is not None:
        on_plan(plan, len(todo))
    lost: list[dict[str, Any]] = []
    libm: bool | None = None
    if todo:
        n_workers = workers or os.cpu_count() or 1
        client, cluster = _client(n_workers, scheduler, connect_timeout)
        try:
            if scheduler:
                n_workers = max(len(client.scheduler_info().get("workers", {})), 1)
            libm = all(client.run(numpy_matches_libm).values())
            meta["numpy_libm"] = libm
            _atomic_bytes(meta_path, json.dumps(meta, indent=1, default=_json).encode())
            tasks = _tasks(plan, todo, n_workers, chunk, log_every)
            mcap = log_format == "mcap"
            done.update(_execute(client, plan, tasks, out, progress, lost, mcap))
        finally:
            with contextlib.suppress(Exception):
                client.close(timeout=10)
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close(timeout=10)
    records = [b["record"] for b in done.values()] + lost
    units: dict[str, str] = {}
    for b in done.values():
        units.update(b.get("units", {}))
    runs = _table(records, plan, units)
    files: dict[str, Any] = {"runs": out / "runs.parquet", "summary": out / "summary.csv"}
    _atomic_parquet(files["runs"], runs)
    metric_cols = [c for c in runs.columns if c in units]
    by = plan.sweep.paths if plan.sweep else []
    summary = summarise(runs, metric_cols, units, by=["point", *by] if by else ())
    _atomic_bytes(files["summary"], summary.to_csv(index=False).encode())
    if (out / "logs").exists():
        files["logs"] = out / "logs"
    if log_format == "mcap" and (out / "mcap").exists():
        files["mcap"] = out / "mcap"
    if figures and len(runs):
        from marinesim.batch.figures import save_batch_figures

        files["figures"] = save_batch_figures(runs, metric_cols, units, out)
    return BatchResult(
        runs, summary, out, files, plan, len(plan.runs) - len(todo), time.perf_counter() - t0,
        libm,
    )


def _execute(
    client: Any,
    plan: Plan,
    tasks: list[Task],
    out: Path,
    progress: Callable[[int, int], None] | None,
    lost: list[dict[str, Any]],
    mcap: bool = False,
) -> dict[str, dict[str, Any]]:
    from dask.distributed import as_completed

    total = sum(len(t.runs) for t in tasks)
    source = client.scatter(plan.source, broadcast=True)
    futs = {
        client.submit(
            run_task, source, t, key=f"marinesim-{plan.fingerprint()[:12]}-{t.task_id}", pure=False
        ): t
        for t in tasks
    }
    saved: dict[str, dict[str, Any]] = {}
    n = 0
    try:
        for fut in as_completed(list(futs)):
            task = futs[fut]
            if fut.status == "finished":
                for o in fut.result():
                    rid = o.record["run_id"]
                    if rid in saved:
                        continue  # exactly once, whatever Dask did
                    _save(out, o, mcap)
                    saved[rid] = {"record": o.record, "units": o.units}
            else:
                exc = fut.exception()
                for r in task.runs:
                    lost.append(
                        {
                            "run_id": r.run_id,
                            "point": r.point,
                            "replica": r.replica,
                            "seed": plan.source.seed,
                            **r.values,
                            "status": "lost",
                            "error": f"{type(exc).__name__}: {exc}",
                        }
                    )
            n += len(task.runs)
            if progress is not None:
                progress(n, total)
    except BaseException:
        for f in futs:
            f.cancel()
        raise
    return saved


def _table(records: list[dict[str, Any]], plan: Plan, units: dict[str, str]) -> Any:
    import pandas as pd

    df = pd.DataFrame(records)
    sweep_cols = plan.sweep.paths if plan.sweep else []
    for c in (*_FIXED, *sweep_cols, *_TAIL):
        if c not in df:
            df[c] = math.nan if c == "t_end" else ""
    metric_cols = sorted(c for c in df.columns if c not in (*_FIXED, *sweep_cols, *_TAIL))
    df = df[[*_FIXED, *sweep_cols, *_TAIL, *metric_cols]]
    df["error"] = df["error"].fillna("").astype(str)
    df["ended_by"] = df["ended_by"].fillna("").astype(str)
    for c in metric_cols:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    return df.sort_values("run_id", kind="stable").reset_index(drop=True)

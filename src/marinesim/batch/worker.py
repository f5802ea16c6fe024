"""What one Dask task does: build and run the simulations of a group of runs, in one process.

A task holds runs of one design point.  When the scenario allows it (nothing couples the
worlds, :func:`marinesim.scenario.build.stack_problems`), its replicas are stacked as worlds
of one simulation (docs/guide/worlds.md), so they cost one batched step; each world ends on
its own and its log and record are cut where its own run ends; otherwise, or when the stacked
simulation fails or diverges, each run is simulated on its own so that every run gets its own
status and error.  Results never depend on the grouping: replica r uses stream keys starting
with r either way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from marinesim.batch.plan import BatchSource, RunSpec
from marinesim.batch.results import LOG_SIGNALS, metric_columns, run_log, split_replicas
from marinesim.core.errors import ConfigError, MarinesimError
from marinesim.engine.worlds import world_frames

__all__ = ["RunOutput", "Task", "run_task"]


@dataclass(frozen=True)
class Task:
    """Runs of one design point (same values), to simulate in one process."""

    task_id: int
    runs: tuple[RunSpec, ...]
    stack: bool
    log_every_s: float | None


@dataclass
class RunOutput:
    """A finished run: its record (a runs-table row), metric units and its track log."""

    record: dict[str, Any]
    units: dict[str, str]
    log: Any = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    origin: Any = None  # the scenario's datum [lat, lon] (the MCAP's geographic topics)


def _record(spec: RunSpec, seed: int, status: str, error: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "run_id": spec.run_id,
        "point": spec.point,
        "replica": spec.replica,
        "seed": seed,
        **spec.values,
        "status": status,
        "error": error,
        **extra,
    }


def _every(t: Any, log_every_s: float | None) -> int:
    """Frames to step so the log keeps one frame per ``log_every_s`` of the frames ``t``."""
    t = np.asarray(t)
    if log_every_s is None or log_every_s <= 0 or len(t) < 2:
        return 1
    return max(1, int(round(log_every_s / float(np.median(np.diff(t))))))


def _load(source: BatchSource, values: dict[str, Any], log_every_s: float | None) -> Any:
    """The run's scenario; the recorder keeps only what the batch logs (memory and time),
    unless the scenario sets ``log_rate``/``log_columns`` itself.  Metrics are unaffected."""
    sc = source.load(values)
    extra: dict[str, Any] = {}
    if getattr(sc.model, "log_rate", "absent") is None:
        extra["log_rate"] = 1.0 / log_every_s if log_every_s else 0.1
    if getattr(sc.model, "log_columns", "absent") is None:
        extra["log_columns"] = list(LOG_SIGNALS)
    return source.load({**values, **extra}) if extra else sc


def _outputs(
    specs: Sequence[RunSpec],
    seed: int,
    result: Any,
    stacked: bool,
    log_every_s: float | None,
) -> list[RunOutput]:
    status = result.status
    t_all = np.asarray(result.t)
    worlds = result.manifest.get("worlds") if stacked else None
    per = split_replicas(result.metrics, [s.replica for s in specs]) if stacked else None
    out = []
    for s in specs:
        rows = per[s.replica] if per is not None else result.metrics
        vals, units = metric_columns(rows)
        err = ""
        if status == "diverged":
            div = [e.text for e in result.events if e.kind == "NumericalError"]
            err = div[0] if div else "non-finite state"
        if worlds is not None:  # the replica's own frames, ending and end time
            w = worlds["replicas"].index(s.replica)
            frames = world_frames(
                t_all,
                worlds["ended_tick"][w],
                int(result.manifest.get("log_every_ticks", 1)),
                float(result.manifest["dt"]),
            )
            ended = worlds["ended_by"][w] or ""
        else:
            frames = np.arange(len(t_all))
            ended = result.manifest.get("ended_by") or ""
        t_end = float(t_all[frames[-1]]) if len(frames) else float("nan")
        rec = _record(s, seed, status, err, ended_by=ended, t_end=t_end, **vals)
        log = (
            run_log(
                result,
                s.replica if stacked else None,
                _every(t_all[frames], log_every_s),
                frames=frames,
            )
            if log_every_s is not None
            else None
        )
        out.append(RunOutput(rec, units, log, origin=result.manifest.get("origin")))
    return out


def _single(source: BatchSource, spec: RunSpec, log_every_s: float | None) -> RunOutput:
    from marinesim.scenario.build import build_simulation

    try:
        sim = build_simulation(_load(source, spec.values, log_every_s), replicas=[spec.replica])
    except ConfigError as exc:  # a sampled value that fails validation
        return RunOutput(_record(spec, source.seed, "invalid", str(exc)), {})
    try:
        result = sim.run()
    except MarinesimError as exc:
        return _failed(spec, source.seed, exc)
    except Exception as exc:  # a plugin bug: this run failed, the batch goes on
        return _failed(spec, source.seed, exc)
    return _outputs([spec], source.seed, result, False, log_every_s)[0]


def _failed(spec: RunSpec, seed: int, exc: BaseException) -> RunOutput:
    res = getattr(exc, "result", None)
    t_end = float(res.t[-1]) if res is not None and len(res.t) else float("nan")
    return RunOutput(
        _record(
            spec, seed, "failed", f"{type(exc).__name__}: {exc}", ended_by="error", t_end=t_end
        ),
        {},
    )


def run_task(source: BatchSource, task: Task) -> list[RunOutput]:
    """Simulate the runs of ``task`` (stacked when allowed); never raises for a run's failure.

    Returns
    -------
    list of RunOutput
        One per run of the task, in task order.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    specs = list(task.runs)
    outs: list[RunOutput] | None = None
    if task.stack and len(specs) > 1:
        from marinesim.scenario.build import build_simulation

        try:
            sim = build_simulation(
                _load(source, specs[0].values, task.log_every_s),
                replicas=[s.replica for s in specs],
            )
            result = sim.run()
            if result.status == "completed":
                outs = _outputs(specs, source.seed, result, True, task.log_every_s)
        except Exception:  # noqa: BLE001 - re-run one by one to attribute the failure
            outs = None
    if outs is None:
        outs = [_single(source, s, task.log_every_s) for s in specs]
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    for o in outs:  # a stacked simulation's time is shared evenly by its runs
        o.wall_s = wall / len(outs)
        o.cpu_s = cpu / len(outs)
    return outs

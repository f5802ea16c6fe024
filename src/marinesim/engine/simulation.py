"""The simulation: entities, plugins, the run and its end (engine spec §4).

Build a :class:`Simulation` from :class:`~marinesim.engine.entity.BlockSpec` objects (the
scenario layer does this from YAML: ``marinesim.scenario.load_simulation``), then call
:meth:`Simulation.run` or :meth:`Simulation.step`.  ``PHASES`` (re-exported from
:mod:`marinesim.engine.plugin`) is the single source of the phase order: the tick is compiled
from it (:mod:`marinesim.engine.tick`).

The pieces live in their own modules: what a hook sees (:mod:`~marinesim.engine.context`),
build-time checks (:mod:`~marinesim.engine.validate`), slots and the hook call
(:mod:`~marinesim.engine.schedule`), the tick loop (:mod:`~marinesim.engine.tick`), the
manifest (:mod:`~marinesim.engine.manifest`) and snapshots (:mod:`~marinesim.engine.snapshot`).
"""

from __future__ import annotations

import contextlib
import math
import time as _time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError, EngineError
from marinesim.core.registry import get as registry_get
from marinesim.core.rng import check_seed
from marinesim.core.state import VehicleState
from marinesim.engine.bus import Bus
from marinesim.engine.clock import Clock
from marinesim.engine.context import BlockView, HookContext, TruthView
from marinesim.engine.entity import BlockSpec, EntityBlock, PluginSpec
from marinesim.engine.env import Environment
from marinesim.engine.manifest import build_manifest, collect_metrics
from marinesim.engine.outputs import StreamOutput, make_recorder
from marinesim.engine.plugin import PHASES
from marinesim.engine.results import Event, RunResult
from marinesim.engine.schedule import Slot, call_if, make_slot
from marinesim.engine.snapshot import Snapshot, restore_snapshot, take_snapshot
from marinesim.engine.tick import TickLoop
from marinesim.engine.validate import END_CONDITIONS, OPS, MetricCondition, validate_build
from marinesim.engine.worlds import Worlds

__all__ = [
    "END_CONDITIONS",
    "PHASES",
    "BlockView",
    "HookContext",
    "MetricCondition",
    "Simulation",
    "Snapshot",
    "TruthView",
]

#: Former private names, kept for callers that reached them here.
_Slot = Slot
_OPS = OPS


class Simulation:
    """One scenario, one seed: entity blocks, world plugins, clock, bus and recorder.

    Parameters
    ----------
    blocks : sequence of BlockSpec
        Entity blocks in scenario order (ids follow this order).
    dt : float
        Control tick [s].
    substeps : int
        Physics substeps per tick.
    start, end : float
        Start time and end time [s] (end None: another end condition must end the run).
    time_warp : float
        0 = as fast as possible; w > 0 = w × real time (results never depend on it).
    seed : int or None
        Root seed; None draws one from OS entropy once (stored in the manifest).
    end_conditions : sequence of str or MetricCondition
        OR-ed: ``time``, ``all_inactive``, ``all_done``, ``one_team``, metric conditions.
    on_nonfinite : {"stop", "deactivate"}
        Policy for non-finite truth (engine spec §4.5).
    env : Environment, optional
    world : sequence of PluginSpec
        World plugins (interaction, metric).
    name : str
        Scenario name.
    replica : int
        Replica index (stream keys start with it).
    manifest : dict, optional
        Extra manifest entries (scenario file, SHA-256, ...).
    resolved_scenario : str, optional
        The resolved scenario text (saved with the results).
    log_rate : float, optional
        Frames recorded per second of simulated time [Hz] (1/(m·dt)); None: every tick.
    log_columns : sequence of str, optional
        Glob patterns of the signals to record (``truth.pos``, ``truth.heading``,
        ``truth.speed`` and ``active`` always are); None: every signal.
    """

    def __init__(
        self,
        blocks: Sequence[BlockSpec],
        *,
        dt: float,
        substeps: int = 1,
        start: float = 0.0,
        end: float | None = None,
        time_warp: float = 0.0,
        seed: int | None = None,
        end_conditions: Sequence[str | MetricCondition] = ("time",),
        on_nonfinite: str = "stop",
        env: Environment | None = None,
        world: Sequence[PluginSpec] = (),
        name: str = "simulation",
        replica: int = 0,
        manifest: dict[str, Any] | None = None,
        resolved_scenario: str | None = None,
        log_rate: float | None = None,
        log_columns: Sequence[str] | None = None,
    ) -> None:
        #: Compiled spans (:mod:`marinesim.engine.span`): None where one applies, True
        #: required, False never.  Set before :meth:`run`.
        self.compiled: bool | None = None
        #: Why the run's ticks go through the plugins (None: the compiled tick applies, or
        #: not decided yet); set when the run looks for its compiled route.
        self.compiled_why_not: str | None = None
        self._span: Any = None
        self._span_next = 0  # step(): the next tick the compiled span is tried at
        self._span_gap = 0
        self.log_rate = log_rate
        self.log_columns = None if log_columns is None else tuple(log_columns)
        self._output: StreamOutput | None = None
        self.block_specs = tuple(blocks)
        self.world_specs = tuple(world)
        self._clock_args = {
            "dt": dt,
            "substeps": substeps,
            "start": start,
            "end": end,
            "time_warp": time_warp,
        }
        self.clock = Clock(**self._clock_args)  # type: ignore[arg-type]
        self.end_conditions = tuple(end_conditions)
        self.on_nonfinite = on_nonfinite
        self.env = env or Environment()
        self.name = name
        self.replica = int(replica)
        self.extra_manifest = dict(manifest or {})
        self.resolved_scenario = resolved_scenario
        self.seed_drawn = seed is None
        self.seed = (
            check_seed(seed)
            if seed is not None
            else int(np.random.SeedSequence().entropy % (2**63 - 1))
        )
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self._validate()
        self._init_runtime()

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Simulation:
        """Load a YAML scenario (delegates to ``marinesim.scenario.load_simulation``).

        The scenario layer sits above the engine; it is resolved lazily through the registry
        entry ``("scenario_loader", "yaml")`` so the engine never imports it.
        """
        loader = registry_get("scenario_loader", "yaml")
        return loader(path, **kwargs)

    # build -----------------------------------------------------------------------------
    def _validate(self) -> None:
        validate_build(
            self.block_specs, self.world_specs, self.end_conditions, self.on_nonfinite, self.clock
        )

    def _init_runtime(self) -> None:
        self.clock = Clock(**self._clock_args)  # type: ignore[arg-type]
        self.bus = Bus()
        self.blocks: list[EntityBlock] = []
        first = 0
        for spec in self.block_specs:
            blk = EntityBlock(spec, first)
            first += blk.n
            pose = spec.spawn.draw(
                self.seed, self.replica, spec.name, blk.n, rows=blk.row_keys(self.replica)
            )
            blk.truth = VehicleState.from_pose(
                pose[:, 0],
                pose[:, 1],
                pose[:, 2],
                pose[:, 3],
                speed=np.full(blk.n, spec.spawn.speed),
                t=self.clock.t,
            )
            self.blocks.append(blk)
        if self._output is not None and self._output.started:
            self._output = None  # a streamed run is over: call stream_to again for a new one
        self._recorder = make_recorder(
            {b.name: b.n for b in self.blocks}, self.clock.dt, self.log_rate, self.log_columns
        )
        self._recorder.sink = self._output
        n_ticks = self.clock.n_ticks
        if n_ticks is not None:  # frames 0, every, 2·every, … and the last one
            self._recorder.frames_hint = n_ticks // self._recorder.every + 2
        self._stop_request: str | None = None
        self._events: list[Event] = []
        self._metric_values: dict[str, float] = {}
        self._metric_rows: list[dict[str, Any]] = []
        self._last_finite: dict[str, NDArray[np.float64]] = {}
        self.slots: list[Slot] = []
        self._by_block: dict[str, dict[str, list[Slot]]] = {}
        for blk in self.blocks:
            groups: dict[str, list[Slot]] = {
                "motion": [],
                "sensor": [],
                "controller": [],
                "autonomy": [],
            }
            for spec in blk.spec.plugins():
                slot = self._make_slot(spec, blk)
                groups[spec.plugin.kind].append(slot)
            self._by_block[blk.name] = groups
        self.world_slots = [self._make_slot(spec, None) for spec in self.world_specs]
        self._worlds = Worlds(self)
        self._loop = TickLoop(self, self._by_block)
        self._started = False
        self._finished = False
        self._paused = False
        self.status = "built"
        self.ended_by: str | None = None
        self.ended_tick: int | None = None
        self._wall = 0.0
        self.result = None
        self.error = None

    def _make_slot(self, spec: PluginSpec, blk: EntityBlock | None) -> Slot:
        slot = make_slot(self, spec, blk)
        self.slots.append(slot)
        return slot

    # running -------------------------------------------------------------------------------
    def _call(self, slot: Slot, hook: str, t: float) -> None:
        """Run ``hook`` of ``slot`` at ``t`` [s] if it overrides it (start, stop, summary)."""
        k = self.clock.k
        call_if(slot, hook, t, k, self.clock.time_of(k + 1))

    @property
    def phase_steps(self) -> tuple[str, ...]:
        """Names of the compiled phases a tick runs, in order (from :data:`PHASES`)."""
        return tuple(name for name, _fn in self._loop.steps)

    def stream_to(self, directory: str | Path, fmt: str = "parquet") -> Path:
        """Write the log to ``directory`` as the run goes (before the first step).

        The folder is checked now (created, writable, nothing in the way); the manifest says
        ``running`` from the first step; Parquet parts (and/or CSV appends, ``fmt``) are
        flushed at least every few seconds of wall time (:attr:`flush_s`, default 2 s), so
        memory stays flat and a killed run keeps its log.  The :class:`RunResult` then reads its
        signals from the files.

        Raises
        ------
        ConfigError
            The folder cannot be written, or an unknown ``fmt``.
        EngineError
            The run has already started.
        """
        if self._started:
            raise EngineError("stream_to must be called before the first step")
        self._output = StreamOutput.open(self, directory, fmt)
        self._recorder.sink = self._output
        return self._output.directory

    @property
    def flush_s(self) -> float:
        """Longest wall time [s] between two flushes of a streamed log (may change mid-run)."""
        return self._recorder.flush_s

    @flush_s.setter
    def flush_s(self, value: float) -> None:
        v = float(value)
        if not (v > 0 and math.isfinite(v)):
            raise ConfigError(f"flush_s must be > 0 s, got {value!r}", param="flush_s")
        self._recorder.flush_s = v

    @property
    def log_writer(self) -> Any:
        """The run-log writer :meth:`stream_to` set up (None before): its ``taps`` list takes
        more chunk consumers (e.g. a live viewer's server), each with ``write(t, values, meta)``
        and ``finish(manifest)``."""
        return self._output.writer if self._output is not None else None

    @property
    def output_files(self) -> dict[str, Path]:
        """Files written by :meth:`stream_to` (log, manifest, events, ...), by role."""
        return dict(self._output.files) if self._output is not None else {}

    def interrupt(self, reason: str = "interrupted") -> None:
        """Stop the run cleanly at the next tick boundary with status ``interrupted``.

        Safe to call from a signal handler: :meth:`run` finalises (stop hooks, log, manifest
        with ``ended_by = reason``) and returns the partial result.
        """
        self._stop_request = str(reason)

    def entity_rows(self) -> list[dict[str, Any]]:
        """One dict per entity row: id, name, block, index, team."""
        return [
            {
                "id": int(blk.ids[i]),
                "name": blk.names[i],
                "block": blk.name,
                "index": i,
                "team": int(blk.team[i]),
            }
            for blk in self.blocks
            for i in range(blk.n)
        ]

    def _begin(self) -> None:
        self._started = True
        self.status = "running"
        self._wall0 = _time.perf_counter()
        if self._output is not None:
            self._output.start()
        self._loop.begin()

    def _tick(self) -> None:
        """One tick t_k → t_{k+1}: the phases compiled from :data:`PHASES`."""
        if self._span:
            self.flush()
        self._loop.tick()

    def flush(self) -> None:
        """Bring in the bookkeeping :meth:`step` defers on the compiled route: the recorder's
        frames, the bus and hook-call counts, the hook contexts of the ticks run since.

        Any plugin tick, :meth:`run`, the end of the run, :meth:`snapshot`, :meth:`restore`,
        :meth:`manifest` and :meth:`hook_calls` do it first; call it to read the recorder or
        the bus between :meth:`step` calls.
        """
        flush = getattr(self._span or None, "flush", None)
        if flush is not None:
            flush()

    def _log_frame(self, t: float) -> None:
        self._loop.log_frame(t)

    def _check_finite(self, t1: float) -> bool:
        return self._loop.check_finite(t1)

    @property
    def n_worlds(self) -> int:
        """Worlds R stacked in this simulation (docs/guide/worlds.md); 1 for one replica."""
        return self._worlds.n

    @property
    def worlds(self) -> Worlds:
        """Per-world end state: ``replicas``, ``frozen``, ``ended_by``, ``ended_tick``."""
        return self._worlds

    def _end_reason(self) -> str | None:
        """The reason the run ends now (every world has ended), else None.

        End conditions are evaluated per world; a world that ends while others go on is
        frozen (:class:`~marinesim.engine.worlds.Worlds`).
        """
        return self._worlds.update()

    def step(self, n: int = 1) -> int:
        """Advance up to ``n`` ticks (fewer if an end condition holds); return ticks done.

        Errors raised by hooks propagate after the partial result has been finalised
        (``exc.result`` and ``sim.result`` hold it).  Call :meth:`run` to finish the run (it
        returns at once when an end condition already holds) and get the :class:`RunResult`.

        Where the scenario's plugins run compiled (:mod:`marinesim.engine.compiled`), the
        ticks go through the generated tick as in :meth:`run` (same logs, bus and hook-call
        counts), e.g. one tick per call of an externally clocked simulation (ArduSub SITL).
        """
        if self._finished:
            return 0
        done = 0
        t_wall = _time.perf_counter()
        try:
            if not self._started:
                self._begin()
            span = self._span_for_run() if n > 0 else None
            if span is not None and hasattr(span, "defer"):  # the bookkeeping waits: flush()
                span.defer = all(c == "time" for c in self.end_conditions)
            while done < n:
                if self._end_reason() is not None or self.status == "diverged":
                    break
                if self._stop_request is not None:
                    break
                k = self.clock.k
                if span is not None and k >= self._span_next:
                    kend = k + int(n) - done
                    if self.clock.end is not None:
                        kend = min(kend, self._end_tick())
                    ran = span.run(k, kend) - k
                    if ran > 0:  # the compiled tick ran these (an externally clocked step)
                        done += ran
                        self._span_gap = 0
                        continue
                    self._span_gap = min(2 * self._span_gap + 1, 400)  # handed back: back off
                    self._span_next = k + 1 + self._span_gap
                self._tick()
                done += 1
                if self.status == "diverged":
                    break
                self.clock.pace()
        except BaseException as exc:
            self._wall += _time.perf_counter() - t_wall
            self._fail(exc)
            raise
        self._wall += _time.perf_counter() - t_wall
        return done

    def run(self, progress: Any = None) -> RunResult:
        """Run until an end condition holds (or :meth:`pause`), then finalise.

        Parameters
        ----------
        progress : callable, optional
            ``progress(t, t_end)`` called after every tick (e.g. a progress bar).

        Returns
        -------
        RunResult
            Status ``completed`` (ended by a condition), ``diverged`` or ``paused``.

        Raises
        ------
        MarinesimError or other exceptions raised by hooks
            After the partial result is finalised (status ``failed``; ``exc.result``).
        """
        if self._finished:
            assert self.result is not None
            return self.result
        self._paused = False
        self.clock.pace_reset()
        t_wall = _time.perf_counter()
        try:
            if not self._started:
                self._begin()
            span = self._span_for_run()
            if span is not None and hasattr(span, "defer"):
                span.defer = False
                span.flush()
            span_end = self._end_tick()
            span_next, gap = 0, 0
            while True:
                reason = self._end_reason()
                if reason is not None:
                    self.ended_by = reason
                    self.ended_tick = self.clock.k
                    self.status = "completed"
                    break
                if self.status == "diverged":
                    break
                if self._stop_request is not None:
                    self.status = "interrupted"
                    self.ended_by = self._stop_request
                    self.ended_tick = self.clock.k
                    break
                if self._paused:
                    self._wall += _time.perf_counter() - t_wall
                    return self._finalise(final=False)
                k = self.clock.k
                if span is not None and k >= span_next:
                    ran = span.run(k, span_end) - k
                    if ran > 0:  # the tick reached is the plugins' (or the end), unless
                        gap = 0  # the call ended only for the end conditions (a world finished)
                        span_next = k + ran + (0 if getattr(span, "soft", False) else 1)
                        if progress is not None:  # once per compiled call
                            progress(self.clock.t, self.clock.end)
                        continue
                    gap = min(2 * gap + 1, 400)  # handed back at once: back off
                    span_next = k + 1 + gap
                self._tick()
                if progress is not None:
                    progress(self.clock.t, self.clock.end)
                self.clock.pace()
        except BaseException as exc:
            self._wall += _time.perf_counter() - t_wall
            self._fail(exc)
            raise
        self._wall += _time.perf_counter() - t_wall
        return self._finish()

    def _span_for_run(self) -> Any:
        """The compiled span of this run (:mod:`marinesim.engine.span`), found once."""
        if self._span is None:
            from marinesim.engine.span import find_span

            self._span = find_span(self, self.compiled) or False
        return self._span or None

    def _end_tick(self) -> int:
        """First tick at which the ``time`` end condition holds (a span stops there)."""
        clock = self.clock
        if clock.end is None:
            return clock.k
        end = clock.end - 1e-9 * clock.dt
        k = max(int(math.ceil((end - clock.start) / clock.dt)) - 1, 0)
        while clock.start + k * clock.dt < end:
            k += 1
        return k

    def pause(self) -> None:
        """Stop :meth:`run` at the next tick boundary (it returns a partial result)."""
        self._paused = True

    def resume(self) -> RunResult:
        """Continue a paused run (same as :meth:`run`)."""
        return self.run()

    def _fail(self, exc: BaseException) -> None:
        if self._finished:
            return
        if isinstance(exc, KeyboardInterrupt):
            self.status = "interrupted"
            self.ended_by = self._stop_request or "KeyboardInterrupt"
        else:
            self.status = "failed"
            self.ended_by = "error"
        self.ended_tick = self.clock.k
        self.error = exc
        self._events.append(Event(self.clock.t, "", "error", type(exc).__name__, str(exc)))
        try:
            self._stop_hooks()
        except Exception as exc2:  # the first error is the one reported
            self._events.append(
                Event(self.clock.t, "", "error", type(exc2).__name__, f"in stop hooks: {exc2}")
            )
        result = self._finalise(final=True)
        with contextlib.suppress(Exception):  # exotic exception types without a __dict__
            exc.result = result  # type: ignore[attr-defined]

    def _stop_hooks(self) -> None:
        self.flush()
        t = self.clock.t
        for slot in self.world_slots:
            if slot.plugin.kind == "metric":
                self._call(slot, "summary", t)
        for slot in self.slots:
            self._call(slot, "stop", t)

    def _finish(self) -> RunResult:
        self._stop_hooks()
        return self._finalise(final=True)

    def _finalise(self, *, final: bool) -> RunResult:
        self.flush()
        if final:
            self._finished = True
        status = self.status if final or self.status != "running" else "paused"
        man = self.manifest(status)
        metrics = self._collect_metrics()
        out = self._output
        if out is not None:
            t, signals, man = out.finalise(self._recorder, man, final, metrics)
        else:
            if final:
                self._recorder.finish()
            t = self._recorder.times
            signals = self._recorder.signals([b.name for b in self.blocks])
        result = RunResult(
            t=np.asarray(t, dtype=float),
            signals=signals,
            entities=self.entity_rows(),
            events=self._worlds.events(list(self._events)),
            metrics=metrics,
            manifest={k: v for k, v in man.items() if k not in ("signals", "entities")},
            resolved_scenario=self.resolved_scenario,
            log_dir=out.directory if out is not None else None,
        )
        self.result = result
        return result

    def _collect_metrics(self) -> list[dict[str, Any]]:
        return self._worlds.metrics(collect_metrics(self))

    def manifest(self, status: str | None = None) -> dict[str, Any]:
        """Run manifest (versions, seed, plugins, status, ending, wall time, lag)."""
        self.flush()
        return build_manifest(self, status)

    # snapshots -----------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """Immutable copy of the run state (between ticks)."""
        if not self._started:
            self._begin()
        self.flush()
        return take_snapshot(self)

    def restore(self, snap: Snapshot) -> None:
        """Return to a snapshot; the run continues bit-identically from there."""
        self.flush()
        restore_snapshot(self, snap)

    def reset(self, seed: int | None = None) -> None:
        """Start over (new spawn draws and streams if ``seed`` is given)."""
        if seed is not None:
            self.seed = check_seed(seed)
            self.seed_drawn = False
        self._init_runtime()
        self._span, self._span_next, self._span_gap = None, 0, 0  # the route of the new slots

    # introspection -------------------------------------------------------------------------
    @property
    def t(self) -> float:
        """Current sim time [s]."""
        return self.clock.t

    def block(self, name: str) -> EntityBlock:
        """Runtime block by name."""
        for b in self.blocks:
            if b.name == name:
                return b
        from marinesim.core.errors import UnknownNameError

        raise UnknownNameError("entity block", name, [b.name for b in self.blocks])

    def hook_calls(self) -> dict[str, dict[str, int]]:
        """Calls per hook of every plugin, keyed ``block.plugin``."""
        self.flush()
        return {
            f"{s.block.name if s.block else 'world'}.{s.plugin.name}": dict(s.calls)
            for s in self.slots
        }

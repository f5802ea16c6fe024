"""World metric plugins: distance, energy, separation, operating box, navigation error (§9).

Each plugin computes per-tick values in ``metric`` (logged as named signals per entity block)
and an end-of-run summary in ``summary``: rows ``{entity, team, metric, value, unit}`` kept in
``ctx.state["summary"]`` (gather them with :func:`collect_metrics`) and also emitted as
``metric`` events; the engine gathers those rows into ``RunResult.metrics`` (``metrics.csv``).
World metric hooks see every block's truth and belief through ``ctx.blocks``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from marinesim.core.errors import ConfigError
from marinesim.core.params import ParamsBase, field
from marinesim.engine.plugin import NoParams, Plugin
from marinesim.sensors.nav import cep50

__all__ = [
    "DistanceTravelled",
    "Energy",
    "MinSeparation",
    "NavError",
    "TimeInBox",
    "collect_metrics",
]


def _blocks(ctx: Any) -> list[Any]:
    return list(ctx.blocks)


def _log(ctx: Any, block: str, name: str, values: Any, unit: str, labels: Any = None) -> None:
    ctx.log_block(block, name, values, unit, labels)


def _row(ctx: Any, entity: str, team: int | None, metric: str, value: float, unit: str) -> None:
    row = {"entity": entity, "team": team, "metric": metric, "value": float(value), "unit": unit}
    ctx.state.setdefault("summary", []).append(row)
    who = entity or "world"
    ctx.events.emit("metric", f"{who}: {metric} = {value:.6g} {unit}".rstrip(), "info")


def collect_metrics(sim: Any) -> list[dict[str, Any]]:
    """Summary rows of every metric plugin of a finished simulation, in plugin order.

    Parameters
    ----------
    sim : Simulation

    Returns
    -------
    list of dict
        ``{metric_plugin, entity, team, metric, value, unit}``.
    """
    out = []
    for slot in sim.world_slots:
        for r in slot.state.get("summary", []):
            out.append({"metric_plugin": slot.plugin.name, **r})
    return out


class _Metric(Plugin):
    kind: ClassVar[str] = "metric"

    def start(self, ctx: Any, rng: Any) -> None:
        """Reset the accumulators."""
        ctx.state["name"] = self.name
        ctx.state["summary"] = []
        ctx.state["t_last"] = ctx.t
        self._start(ctx)

    def _start(self, ctx: Any) -> None:
        pass

    def _each_entity(self, ctx: Any) -> list[tuple[Any, int]]:
        return [(b, i) for b in _blocks(ctx) for i in range(b.n)]


class DistanceTravelled(_Metric):
    """Distance travelled over ground by each entity (truth) [m]."""

    Params = NoParams

    def _start(self, ctx: Any) -> None:
        ctx.state["prev"] = {b.name: np.array(b.truth.pos) for b in _blocks(ctx)}
        ctx.state["dist"] = {b.name: np.zeros(b.n) for b in _blocks(ctx)}

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.metric_laws`)."""
        from marinesim.engine.plugins.metric_laws import distance_laws

        return distance_laws(self, slot, sim)

    def metric(self, ctx: Any, rng: Any) -> None:
        """Accumulate ‖Δp‖ of active entities."""
        for b in _blocks(ctx):
            pos = np.asarray(b.truth.pos)
            step = np.linalg.norm(pos - ctx.state["prev"][b.name], axis=1)
            ctx.state["dist"][b.name] = ctx.state["dist"][b.name] + np.where(b.active, step, 0.0)
            ctx.state["prev"][b.name] = pos.copy()
            _log(ctx, b.name, "distance", ctx.state["dist"][b.name], "m")

    def summary(self, ctx: Any, rng: Any) -> None:
        """One row per entity plus team sums."""
        teams: dict[int, float] = {}
        for b, i in self._each_entity(ctx):
            d = float(ctx.state["dist"][b.name][i])
            _row(ctx, b.names[i], int(b.team[i]), "distance_travelled", d, "m")
            teams[int(b.team[i])] = teams.get(int(b.team[i]), 0.0) + d
        for tm, d in sorted(teams.items()):
            _row(ctx, f"team {tm}", tm, "distance_travelled_sum", d, "m")


class Energy(_Metric):
    """Energy ∫ Σ V·I dt from the thrusters' reports; skipped with a note when none report.

    The metric taps every block's bus (world metric subscriptions) for

    * ``thrusters/power`` (N, k) [W]: electrical power per thruster, or
    * ``battery/voltage`` (N,) [V] with ``thrusters/current`` (N, k) [A] (the 6-DOF motion
      plugin ``sixdof`` with thrusters): P = V · Σ I.

    The latest report of each vehicle (published during the tick just integrated) is held over
    the time since the previous metric call (zero-order hold; the motion plugin reports once
    per tick, at its last substep); inactive vehicles add nothing.
    """

    Params = NoParams
    subscribes: ClassVar[dict[str, str]] = {
        "thrusters/power": "array",
        "battery/voltage": "double",
        "thrusters/current": "array",
    }

    def _start(self, ctx: Any) -> None:
        blocks = _blocks(ctx)
        srcs = [
            b.name
            for b in blocks
            if "thrusters/power" in b.publishes
            or {"battery/voltage", "thrusters/current"} <= b.publishes
        ]
        ctx.state["sources"] = srcs
        ctx.state["energy"] = {b: np.zeros(bv.n) for bv in blocks for b in [bv.name] if b in srcs}
        ctx.state["power"] = {b: np.zeros(len(ctx.state["energy"][b])) for b in srcs}
        ctx.state["volt"] = {b: np.full(len(ctx.state["energy"][b]), np.nan) for b in srcs}
        ctx.state["amps"] = {b: np.zeros(len(ctx.state["energy"][b])) for b in srcs}
        if not srcs:
            ctx.events.emit(
                "metric",
                "energy: no plugin publishes 'thrusters/power' (W) or 'battery/voltage' with "
                "'thrusters/current' — no thruster reports current, energy is not computed",
                "warning",
            )

    def metric(self, ctx: Any, rng: Any) -> None:
        """Hold the latest power of each vehicle over the elapsed time; accumulate energy [J]."""
        dt = ctx.t - ctx.state["t_last"]
        ctx.state["t_last"] = ctx.t
        st = ctx.state
        direct: set[str] = set()
        for m in ctx.inbox:
            if m.block not in st["energy"]:
                continue
            val = np.asarray(m.value, dtype=float).reshape(len(m.rows), -1)
            if m.topic == "thrusters/power":
                st["power"][m.block][m.rows] = val.sum(axis=1)
                direct.add(m.block)
            elif m.topic == "battery/voltage":
                st["volt"][m.block][m.rows] = val[:, 0]
            elif m.topic == "thrusters/current":
                st["amps"][m.block][m.rows] = val.sum(axis=1)
        for blk in _blocks(ctx):
            b = blk.name
            if b not in st["energy"]:
                continue
            if b not in direct and "thrusters/power" not in blk.publishes:
                v = st["volt"][b]
                st["power"][b] = np.where(np.isfinite(v), v * st["amps"][b], 0.0)
            # the report published during the tick just integrated covers [t_last, t]
            st["energy"][b] = st["energy"][b] + np.where(blk.active, st["power"][b], 0.0) * dt
            _log(ctx, b, "power", st["power"][b], "W")
            _log(ctx, b, "energy", st["energy"][b], "J")

    def summary(self, ctx: Any, rng: Any) -> None:
        """Energy per reporting vehicle [J] and [Wh], team sums [J]."""
        teams: dict[int, float] = {}
        for blk in _blocks(ctx):
            if blk.name not in ctx.state["energy"]:
                continue
            e = ctx.state["energy"][blk.name]
            for i in range(blk.n):
                tm = int(blk.team[i])
                _row(ctx, blk.names[i], tm, "energy", float(e[i]), "J")
                _row(ctx, blk.names[i], tm, "energy_wh", float(e[i]) / 3600.0, "Wh")
                teams[tm] = teams.get(tm, 0.0) + float(e[i])
        for tm, v in sorted(teams.items()):
            _row(ctx, f"team {tm}", tm, "energy_sum", v, "J")


class MinSeparationParams(ParamsBase):
    """Closest point of approach between entities."""

    horizontal: bool = field(False, description="use horizontal distance only")


class MinSeparation(_Metric):
    """Minimum separation (closest point of approach) between active entities [m].

    With stacked replicas (§10.5) an entity is compared only with the entities of its own
    replica, and each replica gets its own CPA rows (entity ``@r``, entity names as in the
    replica's own run), so every replica's values equal those of its own run.
    """

    Params = MinSeparationParams
    replica_aware: ClassVar[bool] = True
    #: Couples entities only within a world (docs/guide/worlds.md).
    world_aware: ClassVar[bool] = True

    def _start(self, ctx: Any) -> None:
        blocks = _blocks(ctx)
        n = sum(b.n for b in blocks)
        rep = np.concatenate([b.replica for b in blocks]) if blocks else np.zeros(0, np.int64)
        stacked = any(b.stacked for b in blocks)
        # rows grouped by replica (row order kept within a replica): perm[k*g + i] is row i of
        # group k; groups are equal-sized for stacked replicas of the same blocks
        perm = np.argsort(rep, kind="stable")
        groups, size = np.unique(rep, return_counts=True)
        if len(groups) == 0:
            groups, size = np.zeros(1, np.int64), np.zeros(1, np.int64)
        if np.any(size != size[0]):
            raise ConfigError("min_separation: stacked replicas must have the same entities")
        m = len(groups)
        ctx.state["min"] = np.full(n, np.inf)
        ctx.state["perm"] = perm
        ctx.state["groups"] = groups
        ctx.state["stacked"] = stacked
        ctx.state["cpa_d"] = np.full(m, np.inf)
        ctx.state["cpa_t"] = np.full(m, np.nan)
        ctx.state["cpa_i"] = np.full(m, -1, dtype=np.int64)
        ctx.state["cpa_j"] = np.full(m, -1, dtype=np.int64)
        self.metric(ctx, None)

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.metric_laws`)."""
        from marinesim.engine.plugins.metric_laws import separation_laws

        return separation_laws(self, slot, sim)

    def metric(self, ctx: Any, rng: Any) -> None:
        """Distances of every pair of active entities of a replica (vectorised over replicas);
        update the per-entity minima and each replica's CPA."""
        blocks = _blocks(ctx)
        st = ctx.state
        perm = st["perm"]
        m = len(st["groups"])
        pos = np.concatenate([b.truth.pos for b in blocks]) if blocks else np.zeros((0, 3))
        act = np.concatenate([b.active for b in blocks]) if blocks else np.zeros(0, bool)
        if ctx.params.horizontal:
            pos = pos[:, :2]
        g = len(perm) // m
        pos = pos[perm].reshape(m, g, pos.shape[1])
        act = act[perm].reshape(m, g)
        d = np.linalg.norm(pos[:, :, None, :] - pos[:, None, :, :], axis=3)  # (M, g, g)
        ok = act[:, :, None] & act[:, None, :]
        ok[:, np.arange(g), np.arange(g)] = False
        d = np.where(ok, d, np.inf)
        grouped_min = d.min(axis=2) if g else np.zeros((m, 0))
        row_min = np.empty(len(perm))
        row_min[perm] = grouped_min.reshape(-1)
        st["min"] = np.minimum(st["min"], row_min)
        if g > 1:
            k = np.argmin(d.reshape(m, g * g), axis=1)
            i, j = np.divmod(k, g)
            best = d[np.arange(m), i, j]
            new = best < st["cpa_d"]
            st["cpa_d"] = np.where(new, best, st["cpa_d"])
            st["cpa_t"] = np.where(new, ctx.t, st["cpa_t"])
            st["cpa_i"] = np.where(new, i, st["cpa_i"])
            st["cpa_j"] = np.where(new, j, st["cpa_j"])
        o = 0
        for b in blocks:
            _log(
                ctx,
                b.name,
                "separation",
                np.where(np.isfinite(row_min[o : o + b.n]), row_min[o : o + b.n], np.nan),
                "m",
            )
            o += b.n
        cpa = float(np.min(st["cpa_d"]))
        if np.isfinite(cpa):
            ctx.metric_value(self.name, cpa)

    def summary(self, ctx: Any, rng: Any) -> None:
        """Per-entity minimum separation and each replica's CPA (value, time)."""
        blocks = _blocks(ctx)
        o = 0
        for b in blocks:
            for i in range(b.n):
                _row(
                    ctx, b.names[i], int(b.team[i]), "min_separation", ctx.state["min"][o + i], "m"
                )
            o += b.n
        st = ctx.state
        names = [nm for b in blocks for nm in b.names]
        perm, groups = st["perm"], st["groups"]
        g = len(perm) // len(groups)
        for k, r in enumerate(groups):
            a = c = ""
            if st["cpa_i"][k] >= 0:
                a = names[perm[k * g + st["cpa_i"][k]]]
                c = names[perm[k * g + st["cpa_j"][k]]]
            entity = ""
            if st["stacked"]:  # world rows of replica r; names as in its own run
                entity = f"@{int(r)}"
                a, c = a.rsplit("@", 1)[0], c.rsplit("@", 1)[0]
            _row(ctx, entity, None, f"cpa ({a}, {c})", float(st["cpa_d"][k]), "m")
            _row(ctx, entity, None, "cpa_time", float(st["cpa_t"][k]), "s")


class TimeInBoxParams(ParamsBase):
    """Operating box (NED, depth positive down)."""

    north_min: float = field(..., unit="m", description="south edge")
    north_max: float = field(..., unit="m", description="north edge")
    east_min: float = field(..., unit="m", description="west edge")
    east_max: float = field(..., unit="m", description="east edge")
    depth_min: float = field(-np.inf, unit="m", description="shallowest depth")
    depth_max: float = field(np.inf, unit="m", description="deepest depth")

    def model_post_init(self, __context: object) -> None:  # noqa: D102
        for a in ("north", "east", "depth"):
            if getattr(self, f"{a}_min") >= getattr(self, f"{a}_max"):
                raise ConfigError(f"{a}_min must be below {a}_max", param=f"{a}_min")


class TimeInBox(_Metric):
    """Time each entity spends inside the operating box [s] and its fraction of the run."""

    Params = TimeInBoxParams
    #: Working parameters for ``--example`` (the box edges are required).
    example_params: ClassVar[dict[str, Any]] = {
        "north_min": -100.0,
        "north_max": 100.0,
        "east_min": -100.0,
        "east_max": 100.0,
        "depth_min": 0.0,
        "depth_max": 100.0,
    }

    def _start(self, ctx: Any) -> None:
        ctx.state["inside"] = {b.name: np.zeros(b.n) for b in _blocks(ctx)}
        ctx.state["total"] = 0.0

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.metric_laws`)."""
        from marinesim.engine.plugins.metric_laws import box_laws

        return box_laws(self, slot, sim)

    def metric(self, ctx: Any, rng: Any) -> None:
        """Add the elapsed time where the truth position is inside."""
        p: TimeInBoxParams = ctx.params
        dt = ctx.t - ctx.state["t_last"]
        ctx.state["t_last"] = ctx.t
        ctx.state["total"] += dt
        for b in _blocks(ctx):
            x = np.asarray(b.truth.pos)
            ins = (
                (x[:, 0] >= p.north_min)
                & (x[:, 0] <= p.north_max)
                & (x[:, 1] >= p.east_min)
                & (x[:, 1] <= p.east_max)
                & (x[:, 2] >= p.depth_min)
                & (x[:, 2] <= p.depth_max)
            )
            ctx.state["inside"][b.name] = ctx.state["inside"][b.name] + np.where(
                ins & b.active, dt, 0.0
            )
            _log(ctx, b.name, "inside", ins.astype(float), "")

    def summary(self, ctx: Any, rng: Any) -> None:
        """Seconds and fraction per entity."""
        tot = ctx.state["total"]
        for b, i in self._each_entity(ctx):
            s = float(ctx.state["inside"][b.name][i])
            _row(ctx, b.names[i], int(b.team[i]), "time_in_box", s, "s")
            _row(
                ctx,
                b.names[i],
                int(b.team[i]),
                "time_in_box_fraction",
                s / tot if tot > 0 else np.nan,
                "",
            )


class NavError(_Metric):
    """Navigation error ‖p̂ − p‖ (belief − truth): per-tick value, RMS, final, final CEP50."""

    Params = NoParams

    def _start(self, ctx: Any) -> None:
        ctx.state["sq"] = {b.name: np.zeros(b.n) for b in _blocks(ctx)}
        ctx.state["count"] = 0
        ctx.state["final"] = {b.name: np.zeros(b.n) for b in _blocks(ctx)}
        ctx.state["cov"] = {}
        ctx.state["noted"] = False

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.metric_laws`)."""
        from marinesim.engine.plugins.metric_laws import nav_error_laws

        return nav_error_laws(self, slot, sim)

    def metric(self, ctx: Any, rng: Any) -> None:
        """Error of every entity against its belief (0 under perfect navigation)."""
        if not ctx.state["noted"]:  # belief writers have run by the first metric phase
            ctx.state["noted"] = True
            perfect = [b.name for b in _blocks(ctx) if b.perfect_navigation]
            if perfect:
                ctx.events.emit(
                    "metric",
                    f"nav_error: blocks with perfect navigation (error 0): {', '.join(perfect)}",
                    "info",
                )
        ctx.state["count"] += 1
        for b in _blocks(ctx):
            bel = b.belief  # the truth alias under perfect navigation
            e = np.asarray(bel.pos) - np.asarray(b.truth.pos)
            err = np.linalg.norm(e, axis=1)
            ctx.state["sq"][b.name] = ctx.state["sq"][b.name] + err**2
            ctx.state["final"][b.name] = err
            _log(ctx, b.name, "error", err, "m")
            _log(ctx, b.name, "error_ned", e, "m", ("north", "east", "down"))
            if bel.cov is not None:
                ctx.state["cov"][b.name] = np.asarray(bel.cov)[:, 0:2, 0:2]

    def summary(self, ctx: Any, rng: Any) -> None:
        """RMS, final error and final CEP50 per entity."""
        c = max(ctx.state["count"], 1)
        cep = {k: cep50(v) for k, v in ctx.state["cov"].items()}
        for b, i in self._each_entity(ctx):
            _row(
                ctx,
                b.names[i],
                int(b.team[i]),
                "nav_error_rms",
                np.sqrt(ctx.state["sq"][b.name][i] / c),
                "m",
            )
            _row(
                ctx,
                b.names[i],
                int(b.team[i]),
                "nav_error_final",
                ctx.state["final"][b.name][i],
                "m",
            )
            _row(
                ctx,
                b.names[i],
                int(b.team[i]),
                "cep50_final",
                cep[b.name][i] if b.name in cep else np.nan,
                "m",
            )

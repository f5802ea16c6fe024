"""``usm`` / ``usm_v22`` motion plugins: the uSimMarine kinematic model inside the engine.

The plugin subscribes to the model's MOOS variables (DESIRED_THRUST/RUDDER/ELEVATOR, DRIFT_*,
USM_RESET, USM_SIM_PAUSED, ...) on the entity's local bus, applies every message delivered
since the previous tick in delivery order (MOOS typing: strings are string messages, numbers
double messages), runs **one** model iteration per engine tick at MOOS time t_{k+1}
(``marinesim.models.usm.iterate``; the model never sub-steps — with ``substeps > 1`` it
steps once, at the last substep, over the whole tick), publishes the model's publications
(``NAV_X``, ``NAV_Y``, ``NAV_HEADING``, ...) as bus variables and logs the numeric ones.

Truth: pos = (y, x, depth) NED (the ground-truth record with ``dual_state``), attitude from
heading and pitch, body velocity (speed, 0, 0).  The spawn pose replaces ``start_x/start_y/
start_heading/start_depth``; the scenario's origin is the model's datum; a uniform current
initialises the model's drift and a current field is added to it every step (spec §8.4).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import ConfigDict

from marinesim.core.errors import ConfigError
from marinesim.core.frames import quat_from_euler
from marinesim.core.params import ParamsBase, field
from marinesim.core.state import VehicleState
from marinesim.engine.plugin import Plugin
from marinesim.models import usm as kinematic
from marinesim.models.usm.config import UsmConfig, config_from_mapping

__all__ = ["UsmMotion", "UsmParams", "UsmV22Motion"]

_START_KEYS = ("start_x", "start_y", "start_heading", "start_depth", "start_speed", "start_pos")


def _from_mapping(
    data: dict[str, Any],
    variant: str,
    file: Any,
    marks: Any,
    prefix: str,
    base_dir: Any,
    loader: Any,
) -> tuple[UsmConfig, list[Any]]:
    return config_from_mapping(
        data,
        variant=variant,  # type: ignore[arg-type]
        compat="doc",
        file=file,
        marks=marks,
        prefix=prefix,
        base_dir=base_dir,
        load_current_field=loader,
    )


def _columns(*cols: Any) -> np.ndarray:
    """(N, k) float array of k (N,) columns (``np.stack(cols, axis=1)``, without its checks)."""
    out = np.empty((cols[0].shape[0], len(cols)))
    for j, c in enumerate(cols):
        out[:, j] = c
    return out


@functools.cache
def _nav_signals(prefix: str) -> tuple[tuple[str, str], ...]:
    """(name, unit) of the logged navigation publications with ``prefix``."""
    units = (("X", "m"), ("Y", "m"), ("HEADING", "deg"), ("SPEED", "m/s"), ("DEPTH", "m"))
    return tuple((f"{prefix}_{suffix}", unit) for suffix, unit in units)


class UsmParams(ParamsBase):
    """Effective uSimMarine configuration (built from the YAML ``params:`` by the model's rules)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    config: Any = field(default_factory=UsmConfig, description="effective UsmConfig")
    prefix: str = field("NAV", description="publication prefix")


class UsmMotion(Plugin):
    """uSimMarine kinematics (MOOS-IvP dep_uSimMarine), one model iteration per tick."""

    kind: ClassVar[str] = "motion"
    Params = UsmParams
    variant: ClassVar[str] = "usm"
    subscribes: ClassVar[dict[str, str]] = {
        name: typ for name, typ, _u, _d, variants in kinematic.SUBSCRIPTIONS if "usm" in variants
    }
    publishes: ClassVar[dict[str, str]] = {}

    def __init__(self, name: str, params: ParamsBase | None = None) -> None:
        if params is None:
            params = self.build_params({})[0]
        super().__init__(name, params)
        cfg: UsmConfig = self.params.config  # type: ignore[attr-defined]
        if cfg.variant != self.variant:
            raise ConfigError(
                f"{type(self).__name__} needs a {self.variant!r} configuration, got {cfg.variant!r}"
            )
        self.subscribes = {n: t for n, t, _u, _d, v in kinematic.SUBSCRIPTIONS if self.variant in v}
        pubs: dict[str, str] = {}
        for n, t, _u, _d, v in kinematic.PUBLICATIONS:
            if self.variant not in v:
                continue
            if n == "<P>_GT_*":
                continue
            pubs[n.replace("<P>", cfg.prefix)] = t
        if cfg.dual_state:
            for n in list(pubs):
                if n.startswith(cfg.prefix + "_"):
                    pubs[n.replace(cfg.prefix + "_", cfg.prefix + "_GT_", 1)] = pubs[n]
        pubs["SIMULATION_MODE"] = "string"
        self.publishes = pubs

    # parameters -----------------------------------------------------------------------------
    @classmethod
    def build_params(
        cls,
        mapping: Mapping[str, Any] | None,
        *,
        file: str | Path | None = None,
        marks: Mapping[str, tuple[int, int]] | None = None,
        prefix: str = "",
        base_dir: str | Path | None = None,
        load_current_field: Any = None,
    ) -> tuple[UsmParams, list[Any]]:
        """Validate YAML ``params`` with the uSimMarine configuration rules (did-you-mean included).

        Returns
        -------
        (UsmParams, list of ConfigWarning)
        """
        data = dict(mapping or {})
        path = (prefix + ".") if prefix else ""
        for key in _START_KEYS:
            if key in data:
                line, col = marks.get(path + key, (None, None)) if marks else (None, None)
                raise ConfigError(
                    f"{key} is set by the entity's spawn (north/east/depth/heading_deg/speed), "
                    "not by the motion params",
                    file=file,
                    column=col,
                    line=line,
                    param=path + key,
                )
        data.setdefault("prefix", "NAV")
        try:
            cfg, warns = _from_mapping(
                data, cls.variant, file, marks, prefix, base_dir, load_current_field
            )
        except ConfigError as exc:
            if exc.param and prefix and not exc.param.startswith(prefix):
                full = path + exc.param
                line, col = (
                    marks.get(full, (exc.line, exc.column)) if marks else (exc.line, exc.column)
                )
                raise ConfigError(
                    exc.message, file=exc.file or file, line=line, column=col, param=full
                ) from None
            raise
        return UsmParams(config=cfg, prefix=cfg.prefix), warns

    @classmethod
    def topic_docs(cls) -> dict[str, tuple[str, str]]:
        """Unit and description of every declared variable (prefix ``NAV`` shown)."""
        docs: dict[str, tuple[str, str]] = {}
        for table in (kinematic.SUBSCRIPTIONS, kinematic.PUBLICATIONS):
            for name, _typ, unit, desc, variants in table:
                if cls.variant in variants:
                    docs[name.replace("<P>", "NAV")] = (unit, desc)
        return docs

    @classmethod
    def param_rows(cls) -> list[tuple[str, str, str, str, str]]:
        """(name, type, default, unit, description) of every configuration key."""
        from marinesim.models.usm import config as usm_config

        rows = []
        for p in usm_config.PARAMS:
            if cls.variant not in p.variants or p.name in _START_KEYS or p.kind in ("unsupported",):
                continue
            rows.append(
                (p.name, p.kind, "" if p.default is None else str(p.default), p.unit, p.description)
            )
        rows.append(
            (
                "compat",
                "string",
                "doc",
                "",
                "doc (documented behaviour) or moos (the real program's parsing)",
            )
        )
        return rows

    # hooks ----------------------------------------------------------------------------------
    def _config(self, ctx: Any) -> UsmConfig:
        return ctx.state["config"]

    def start(self, ctx: Any, rng: Any) -> None:
        """Initialise the model at the spawn poses; apply the environment's current."""
        cfg: UsmConfig = self.params.config  # type: ignore[attr-defined]
        env = ctx.env
        changes: dict[str, Any] = {}
        if env.current_field is not None and cfg.current_field is None:
            changes["current_field"] = env.current_field
        origin = getattr(env, "origin", None)
        if origin is not None and cfg.lat_origin is None:
            changes["lat_origin"], changes["long_origin"] = origin
        if changes:
            cfg = dataclasses.replace(cfg, **changes)
        if cfg.current_field is not None and cfg.compat != "doc":
            ctx.events.emit(
                "usm_config",
                "the current field is not applied with compat='moos' (the real uSimMarine reads "
                "none; use DRIFT_X/DRIFT_Y mail or compat='doc')",
                severity="warning",
            )
        ctx.state["config"] = cfg
        truth = ctx.truth
        n = ctx.n
        st = kinematic.init(cfg, n, moos_time=ctx.t)
        heading = truth.heading_deg.copy()
        pos = truth.pos
        rec = {
            "x": pos[:, 1].copy(),
            "y": pos[:, 0].copy(),
            "heading": heading,
            "speed": truth.vel[:, 0].copy(),
            "depth": np.maximum(pos[:, 2], 0.0),
        }
        upd = dict(rec)
        upd.update({"gt_" + k: v.copy() for k, v in rec.items()})
        if env.current_north != 0.0 or env.current_east != 0.0:
            upd["drift_x"] = st.drift_x + env.current_east
            upd["drift_y"] = st.drift_y + env.current_north
        st = dataclasses.replace(st, **upd)
        ctx.state["usm"] = st
        ctx.state["mail"] = []
        self._set_truth(ctx, st)
        self._log(ctx, st, {})

    def substep(self, ctx: Any, rng: Any) -> None:
        """Collect mail; at the last substep apply it and iterate the model once."""
        ctx.state["mail"].extend(ctx.inbox.messages)
        substeps = round(ctx.dt / ctx.h)
        if ctx.substep != substeps - 1:
            return
        cfg = self._config(ctx)
        st = ctx.state["usm"]
        t_iter = ctx.t_next  # the program's iteration at t_{k+1}
        posts: list[tuple[str, Any]] = []
        for msg in ctx.state["mail"]:
            rows = msg.rows
            val = msg.value
            if val.dtype == object:
                # string message: group rows with the same text (one MOOS message each)
                for text in dict.fromkeys(val.tolist()):
                    sel = rows[np.asarray([v == text for v in val.tolist()])]
                    st, p, w = kinematic.apply_mail(
                        cfg, st, msg.topic, str(text), moos_time=t_iter, rows=sel, source=msg.source
                    )
                    posts.extend(p)
                    self._warn(ctx, w, sel)
            else:
                if val.shape[0] == 1 or (val == val[0]).all():
                    st, p, w = kinematic.apply_mail(
                        cfg,
                        st,
                        msg.topic,
                        float(val[0]),
                        moos_time=t_iter,
                        rows=rows,
                        source=msg.source,
                    )
                else:
                    st, p, w = kinematic.apply_mail(
                        cfg,
                        st,
                        msg.topic,
                        np.asarray(val, dtype=float),
                        moos_time=t_iter,
                        rows=rows,
                        source=msg.source,
                    )
                posts.extend(p)
                self._warn(ctx, w, rows)
        ctx.state["mail"] = []
        st, pubs = kinematic.iterate(cfg, st, t_iter)
        ctx.state["usm"] = st
        for name, value in posts:
            if name in pubs:
                continue
            pubs[name] = value
        self._publish(ctx, pubs, t_iter)
        self._set_truth(ctx, st)
        self._log(ctx, st, pubs)

    def compiled_laws(self, slot: Any, sim: Any) -> Any:
        """The compiled tick's declaration (:mod:`marinesim.engine.plugins.usm_laws`)."""
        from marinesim.engine.plugins.usm_laws import usm_laws

        return usm_laws(self, slot, sim)

    # helpers ----------------------------------------------------------------------------------
    def _warn(self, ctx: Any, warnings: list[str], rows: Any) -> None:
        for text in warnings:
            ctx.events.emit("usm_mail", text, severity="warning", rows=rows)

    def _publish(self, ctx: Any, pubs: Mapping[str, Any], t: float) -> None:
        t_saved = ctx.t
        ctx.t = t
        try:
            for name, value in pubs.items():
                if name not in self.publishes:
                    self.publishes[name] = "any"
                if not ctx.wants(name):
                    continue
                if isinstance(value, str):
                    ctx.publish(name, value)
                    continue
                arr = np.asarray(value)
                if arr.dtype == object:
                    ok = np.asarray([v is not None for v in arr.tolist()], dtype=bool)
                    rows = np.flatnonzero(ok)
                    if rows.size:
                        ctx.publish(name, arr[rows], rows=rows)
                else:
                    arr = np.broadcast_to(arr.astype(float), (ctx.n,))
                    rows = np.flatnonzero(np.isfinite(arr))
                    if rows.size:
                        ctx.publish(name, arr[rows], rows=rows)
        finally:
            ctx.t = t_saved

    def _set_truth(self, ctx: Any, st: Any) -> None:
        cfg = self._config(ctx)
        gt = cfg.dual_state
        x = st.gt_x if gt else st.x
        y = st.gt_y if gt else st.y
        depth = st.gt_depth if gt else st.depth
        heading = st.gt_heading if gt else st.heading
        pitch = st.gt_pitch if gt else st.pitch
        speed = st.gt_speed if gt else st.speed
        n = st.n
        pos = _columns(y, x, depth)
        quat = quat_from_euler(np.zeros(n), pitch, np.radians(heading))
        vel = np.zeros((n, 3))
        vel[:, 0] = speed
        ctx.set_truth(VehicleState(pos, quat, vel, np.zeros((n, 3)), np.zeros((n, 3)), ctx.t))

    def _log(self, ctx: Any, st: Any, pubs: Mapping[str, Any]) -> None:
        ctx.log(
            "drift",
            _columns(st.drift_x + st.current_x, st.drift_y + st.current_y),
            "m/s",
            ("east", "north"),
        )
        ctx.log("current", _columns(st.current_x, st.current_y), "m/s", ("east", "north"))
        ctx.log(
            "actuators",
            _columns(st.thrust, st.rudder, st.elevator),
            "%",
            ("thrust", "rudder", "elevator"),
        )
        ctx.log("paused", st.paused.astype(float), "")
        if not pubs:
            return
        n = st.n
        for name, unit in _nav_signals(self._config(ctx).prefix):
            if name in pubs:
                arr = np.asarray(pubs[name], dtype=float)
                ctx.log(name, arr if arr.shape == (n,) else np.broadcast_to(arr, (n,)), unit)


class UsmV22Motion(UsmMotion):
    """uSimMarineV22 kinematics (MOOS-IvP uSimMarineV22), one model iteration per tick."""

    variant: ClassVar[str] = "usm_v22"
    subscribes: ClassVar[dict[str, str]] = {
        name: typ
        for name, typ, _u, _d, variants in kinematic.SUBSCRIPTIONS
        if "usm_v22" in variants
    }

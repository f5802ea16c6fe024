"""Run a uSimMarine configuration the way the MOOS program would (``marinesim usm run``).

The loop plays the program's cycle (spec §2.1, §9): start-up at t = 0 (MOOS time
``moos_time_at_t0``), then iterations at t = k·dt with dt = 1/AppTick; before iteration k every
scripted message with time ≤ k·dt not yet delivered is applied in time order (the replay rule),
then the model iterates and publishes.  The model is :mod:`marinesim.models.usm`
(``init`` / ``apply_mail`` / ``iterate``).

Python API::

    from marinesim.interop.moos.runner import run_moos_file
    run = run_moos_file("mission.moos", duration=60, script="events.txt", compat="doc")
    run.to_csv("out.csv")          # or run.to_pandas()
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from marinesim.core.errors import ConfigError, ConfigWarning, NumericalError
from marinesim.core.limits import check_steps
from marinesim.interop.moos.files import load_usm_config
from marinesim.interop.moos.script import ScriptEvent, read_script
from marinesim.models import usm as kinematic
from marinesim.models.usm.config import UsmConfig

__all__ = ["DEFAULT_APP_TICK", "UsmRun", "run_moos_file", "run_usm"]

Compat = Literal["doc", "moos"]

#: MOOS's default AppTick [Hz] when a block does not set one (DEFAULT_MOOS_APP_FREQ).
DEFAULT_APP_TICK = 5.0

#: Model columns written first (names as in the reference ``expected.csv``).
MODEL_COLUMNS = (
    "x",
    "y",
    "heading",
    "speed",
    "depth",
    "altitude",
    "yaw",
    "heading_over_ground",
    "speed_over_ground",
    "pitch",
    "drift_x",
    "drift_y",
)

#: The MOOS inputs the model holds after each iteration (its ``thrust``, ``rudder`` after the
#: rudder rate limit and ``elevator``, all in percent: uSimMarine spec §1), written after
#: :data:`MODEL_COLUMNS`.
INPUT_COLUMNS = ("DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR")


@dataclass
class UsmRun:
    """The table of one run: row 0 is the start-up state, row k the state after iteration k.

    Attributes
    ----------
    columns : list of str
        ``t`` [s], the model columns (m, deg, m/s, rad), the held inputs ``DESIRED_THRUST``
        [%], ``DESIRED_RUDDER`` [%] (after the rate limit), ``DESIRED_ELEVATOR`` [%], then
        every published variable in order of first publication (blank where it was not
        published in that iteration).
    rows : list of list
        One list per row (floats, strings, or None for blank).
    warnings : list of str
        Run-time warning events (``t=...: text``), e.g. a rejected non-finite command.
    config_warnings : list of ConfigWarning
        Warnings of the configuration (mode differences included).
    error : str
        Empty for a complete run; for the partial table attached to an exception raised
        mid-run (``exc.result``), that exception's type and message.
    prefix : str
        Prefix of the published variables (``NAV`` → ``NAV_LAT``).
    origin : (float, float) or None
        The datum (latitude, longitude) [deg] the lat/long are published at; None without one.
    """

    columns: list[str]
    rows: list[list[Any]]
    warnings: list[str] = field(default_factory=list)
    config_warnings: list[ConfigWarning] = field(default_factory=list)
    error: str = ""
    prefix: str = ""
    origin: tuple[float, float] | None = None

    def column(self, name: str) -> list[Any]:
        """Values of one column (None = blank)."""
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def to_csv(self, path: str | Path) -> Path:
        """Write the table as CSV (numbers exact, shortest round-trip text; blanks empty); return the path."""
        p = Path(path)
        with p.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(self.columns)
            for row in self.rows:
                w.writerow([_cell(v) for v in row])
        return p

    def to_pandas(self) -> Any:
        """The table as a ``pandas.DataFrame`` (blank → NaN / None)."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return repr(v)  # shortest text that reads back as the same double
    return str(v)


def _value(arr: Any) -> Any:
    v = arr[0] if isinstance(arr, np.ndarray) else arr
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return None if math.isnan(f) else f
    if isinstance(v, (np.integer, int)) and not isinstance(v, bool):
        return float(v)
    return v


_STATE_FIELDS = ("x", "y", "heading", "speed", "depth", "drift_x", "drift_y")


def _check_finite_state(state: Any, t: float) -> None:
    """NumericalError naming the first non-finite state field (the row is not written)."""
    for name in _STATE_FIELDS:
        v = getattr(state, name, None)
        if v is not None and not np.all(np.isfinite(np.asarray(v, dtype=float))):
            raise NumericalError(
                f"{name} is not finite ({float(np.asarray(v).ravel()[0])!r}): the run stopped; "
                "the log holds the rows before it",
                entity="uSimMarine",
                t=t,
            )


def run_usm(
    config: UsmConfig,
    *,
    duration: float,
    dt: float | None = None,
    events: Iterable[ScriptEvent] = (),
    moos_time_at_t0: float = 0.0,
    progress: Callable[[int, int], None] | None = None,
) -> UsmRun:
    """Run one vehicle for ``duration`` seconds with timed mail.

    Parameters
    ----------
    config : UsmConfig
        Effective configuration.
    duration : float
        Simulated time [s] (> 0); the last iteration is at the largest k·dt ≤ duration.
    dt : float, optional
        Step [s]; default 1/``config.app_tick`` (MOOS default 5 Hz when unset).
    events : iterable of ScriptEvent
        Timed messages (delivered by the replay rule).
    moos_time_at_t0 : float
        MOOS time of start-up [s].
    progress : callable, optional
        ``progress(steps_done, steps)`` about 200 times a run (a command's progress bar).

    Returns
    -------
    UsmRun

    Raises
    ------
    ConfigError
        A non-positive or non-finite duration or step, a step below ``MIN_DT`` or more than
        ``MAX_SAMPLES`` steps (:mod:`marinesim.core.limits`).
    NumericalError
        The state became non-finite (``exc.result`` holds the rows before that step).
    """
    if not (isinstance(duration, (int, float)) and math.isfinite(duration) and duration > 0):
        raise ConfigError(
            f"duration must be a finite number > 0, got {duration!r}", param="duration"
        )
    if dt is None:
        tick = config.app_tick if config.app_tick is not None else DEFAULT_APP_TICK
        if not (math.isfinite(tick) and tick > 0):
            raise ConfigError(f"AppTick must be > 0, got {tick!r}", param="AppTick")
        dt = 1.0 / tick
    if not (math.isfinite(dt) and dt > 0):
        raise ConfigError(f"dt must be a finite number > 0, got {dt!r}", param="dt")
    check_steps(duration, dt)  # MIN_DT and MAX_SAMPLES (core.limits)
    steps = int(math.floor(duration / dt + 1e-9))
    evs: Sequence[ScriptEvent] = sorted(events, key=lambda e: e.t)
    state = kinematic.init(config, 1, moos_time_at_t0)
    model_cols = [*MODEL_COLUMNS, *INPUT_COLUMNS]
    pub_cols: dict[str, None] = {}
    table: list[dict[str, Any]] = []
    warns: list[str] = []

    def model_row(t: float, st: Any) -> dict[str, Any]:
        row: dict[str, Any] = {"t": round(t, 9)}
        row["x"] = float(st.x[0])
        row["y"] = float(st.y[0])
        row["heading"] = float(st.heading[0])
        row["speed"] = float(st.speed[0])
        row["depth"] = float(st.depth[0])
        row["altitude"] = float(st.altitude[0]) if bool(st.altitude_set[0]) else None
        row["yaw"] = float(st.yaw[0])
        row["heading_over_ground"] = float(st.hog[0])
        row["speed_over_ground"] = float(st.sog[0])
        row["pitch"] = float(st.pitch[0])
        row["drift_x"] = float(st.drift_x[0])
        row["drift_y"] = float(st.drift_y[0])
        row["DESIRED_THRUST"] = float(st.thrust[0])
        row["DESIRED_RUDDER"] = float(st.rudder[0])
        row["DESIRED_ELEVATOR"] = float(st.elevator[0])
        return row

    def assemble() -> UsmRun:
        columns = ["t", *model_cols, *pub_cols]
        geo = state.geodesy
        origin = None if geo is None else (float(geo.lat_origin), float(geo.lon_origin))
        rows = [[r.get(c) for c in columns] for r in table]
        return UsmRun(columns, rows, warns, prefix=str(config.prefix), origin=origin)

    table.append(model_row(0.0, state))
    every = max(1, steps // 200)  # progress(done, total) about 200 times a run
    nxt = 0
    try:
        for k in range(1, steps + 1):
            t = k * dt
            mt = moos_time_at_t0 + t
            posts_row: dict[str, Any] = {}
            while nxt < len(evs) and evs[nxt].t <= t + 1e-9:
                ev = evs[nxt]
                nxt += 1
                state, posts, mw = kinematic.apply_mail(
                    config, state, ev.var, ev.value, moos_time=mt, source=ev.source
                )
                warns.extend(f"t={t:.6g}: {w}" for w in mw)
                for name, val in posts:
                    posts_row[name] = _value(val)
            state, pubs = kinematic.iterate(config, state, mt)
            _check_finite_state(state, t)
            row = model_row(t, state)
            for name, val in list(posts_row.items()) + [(k2, _value(v)) for k2, v in pubs.items()]:
                pub_cols.setdefault(name, None)
                row[name] = val
            inf = [c for c, v in row.items() if isinstance(v, float) and math.isinf(v)]
            if inf:
                raise NumericalError(
                    f"{', '.join(inf[:4])} overflowed to {row[inf[0]]!r}: the run stopped; "
                    "the log holds the rows before it",
                    entity="uSimMarine",
                    t=t,
                )
            table.append(row)
            if progress is not None and (k % every == 0 or k == steps):
                progress(k, steps)
    except BaseException as exc:
        # a run that has started never loses its log: the rows so far go with the error
        partial = assemble()
        partial.error = f"{type(exc).__name__}: {exc}"
        exc.result = partial  # type: ignore[attr-defined]
        raise
    return assemble()


def run_moos_file(
    path: str | Path,
    *,
    duration: float,
    script: str | Path | None = None,
    compat: Compat = "doc",
    variant: Literal["usm", "usm_v22"] | None = None,
    block: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> UsmRun:
    """Configure the uSimMarine block of a ``.moos`` file and run it (``marinesim usm run``).

    Parameters
    ----------
    path : str or Path
        Mission file.
    duration : float
        Simulated time [s].
    script : str or Path, optional
        Event script (:mod:`marinesim.interop.moos.script`).
    compat : {"doc", "moos"}
        Mode (spec §10).
    variant, block
        See :func:`marinesim.interop.moos.files.load_usm_config`.
    progress : callable, optional
        ``progress(steps_done, steps)`` about 200 times a run.

    Returns
    -------
    UsmRun
        With ``config_warnings`` set.  A missing ``AppTick`` adds a warning (MOOS's default
        of 5 Hz is used).
    """
    loaded = load_usm_config(path, compat=compat, variant=variant, block=block)
    cfg = loaded.config
    cwarns = list(loaded.warnings)
    if cfg.app_tick is None:
        cwarns.append(
            ConfigWarning(
                f"AppTick is not set: MOOS's default of {DEFAULT_APP_TICK:g} Hz is used "
                f"(dt = {1 / DEFAULT_APP_TICK:g} s)",
                file=str(path),
                param="AppTick",
            )
        )
    elif not (cfg.app_tick > 0):
        raise ConfigError(
            f"AppTick must be > 0, got {cfg.app_tick:g}",
            file=str(path),
            line=cfg.origins.get("app_tick"),
            param="AppTick",
        )
    events = read_script(script) if script is not None else []
    run = run_usm(cfg, duration=duration, events=events, progress=progress)
    run.config_warnings = cwarns
    return run

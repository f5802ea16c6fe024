"""Open-loop judging against a real mission log (``marinesim moos replay``).

The actuator mail a real mission logged (``DESIRED_THRUST``, ``DESIRED_RUDDER`` and, where
logged, ``DESIRED_ELEVATOR``, ``DRIFT_X``, ``DRIFT_Y``) is fed to the ``usm`` / ``usm_v22``
model configured from the mission's ``.moos`` file, iterating at the simulator's logged
iteration times (absolute MOOS time = LOGSTART + t), and what the model publishes is
compared with the logged ``NAV_*`` of the same iteration, up to ``MISSION=complete``
(``reference/moos_live/README.md`` §2.5).

Which iteration a post reached is not in a log.  Two rules:

* **delivery schedule** — ``RUN.delivery.csv`` beside ``RUN.alog`` (README §2.5): each post is
  applied, in file order, before the iteration logged at ``t_iteration``;
* **first-iteration-after rule** — every post stamped ≤ t_k not yet delivered is applied
  before iteration k.  Open loop, a rudder post placed one iteration off leaves a heading
  error that grows into metres, so this rule only reproduces the log to the run-to-run
  spread the README reports.

uSimMarineV22 publishes every second iteration: its unlogged odd iterations are placed midway
between logged ones (README §2.5).

Tolerances (README §2.5): with a schedule the suggested open-loop tolerance (the log's
5-decimal rounding plus one speed snapping step); with the plain rule the largest deviation
the README reports for that rule over its runs (a spread, not a sharp test).
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from marinesim.core.alog import Alog, AlogWriter, read_alog
from marinesim.core.errors import ConfigError, DataError
from marinesim.interop.moos.files import load_usm_config
from marinesim.models import usm as kinematic

__all__ = [
    "INPUT_VARS",
    "ReplayResult",
    "TOLERANCE_PLAIN",
    "TOLERANCE_SCHEDULE",
    "replay_alog",
]

#: Mail replayed into the model (when logged).
INPUT_VARS = ("DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR", "DRIFT_X", "DRIFT_Y")
#: Compared publications (suffixes of the prefix).
COMPARED = ("X", "Y", "HEADING", "SPEED", "DEPTH", "LAT", "LONG")

#: README §2.5 "suggested open-loop tolerance with the schedule" [m, deg, m/s, deg].
TOLERANCE_SCHEDULE = {
    "X": 1e-3,
    "Y": 1e-3,
    "HEADING": 1e-2,
    "SPEED": 0.011,
    "DEPTH": 1e-3,
    "LAT": 1e-5,
    "LONG": 1e-5,
}
#: README §2.5 plain-rule figures, the largest over the stored runs, to the precision the
#: README prints them (a printed 5.7 m means less than 5.75 m): position 5.7 m, heading 2.2°,
#: speed 0.03 m/s; latitude/longitude: 5.75 m in degrees plus the log's ±5e-6° print error.
_M_PER_DEG_LAT = 111_132.0
TOLERANCE_PLAIN = {
    "X": 5.75,
    "Y": 5.75,
    "HEADING": 2.25,
    "SPEED": 0.035,
    "DEPTH": 1e-3,
    "LAT": 5.75 / _M_PER_DEG_LAT + 5e-6,
    "LONG": 5.75 / (_M_PER_DEG_LAT * math.cos(math.radians(42.36))) + 5e-6,
}
#: Digits the real logs carry (pLogger prints 5 decimals): the tolerance table is stated to
#: that resolution, so deviations are compared after rounding to it.
_LOG_RESOLUTION = 5e-6
_NUMBER = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")


@dataclass
class ReplayResult:
    """What a replay produced and how far it is from the log.

    Attributes
    ----------
    rule : str
        ``"delivery"`` or ``"first-iteration-after"``.
    rule_text : str
        Human-readable: which rule and which file.
    variant : str
        ``usm`` or ``usm_v22``.
    deviations : dict
        Variable → largest absolute deviation (m, deg, m/s) up to the end of the judged span.
    tolerances : dict
        Variable → tolerance used.
    t_end : float
        Log time the comparison stops at (MISSION=complete, else the last NAV sample) [s].
    compared : int
        Logged iterations compared.
    iterations : int
        Model iterations run.
    posts : int
        Posts applied.
    produced : list of (float, str, float)
        (absolute MOOS time, variable, value) of every compared publication the model made.
    logstart : float
    """

    rule: str
    rule_text: str
    variant: str
    deviations: dict[str, float]
    tolerances: dict[str, float]
    t_end: float
    compared: int
    iterations: int
    posts: int
    produced: list[tuple[float, str, float]] = field(default_factory=list)
    logstart: float = 0.0

    @property
    def failures(self) -> dict[str, float]:
        """Variables whose deviation exceeds the tolerance."""
        return {
            k: v
            for k, v in self.deviations.items()
            if not (v <= self.tolerances.get(k, math.inf) + _LOG_RESOLUTION * 1e-3)
        }

    @property
    def passed(self) -> bool:
        """True when every deviation is within its tolerance."""
        return not self.failures

    def report(self) -> str:
        """Terminal text: the rule, then one line per variable."""
        lines = [
            f"{self.variant}: {self.compared} logged iterations compared up to t = "
            f"{self.t_end:.5f} s ({self.iterations} model iterations, {self.posts} posts); "
            f"rule: {self.rule_text}"
        ]
        for k, v in self.deviations.items():
            tol = self.tolerances.get(k, math.inf)
            flag = "ok" if v <= tol + _LOG_RESOLUTION * 1e-3 else "EXCEEDS"
            lines.append(f"  {k:<14} max |dev| = {v:.3g}  (tolerance {tol:.3g})  {flag}")
        return "\n".join(lines)

    def write(self, path: str | Path) -> Path:
        """Write the produced NAV_* as ``.alog`` (same LOGSTART as the real log) or ``.csv``.

        Raises
        ------
        ConfigError
            Another suffix (never a silent format).
        """
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix == ".alog":
            with AlogWriter(p, logstart=self.logstart, flush_every=4096) as w:
                for t, var, val in self.produced:
                    w.write(t, var, self.variant_app, val)
            return p
        if suffix == ".csv":
            times = sorted({t for t, _, _ in self.produced})
            cols = list(dict.fromkeys(v for _, v, _ in self.produced))
            table: dict[float, dict[str, float]] = {t: {} for t in times}
            for t, var, val in self.produced:
                table[t][var] = val
            with p.open("w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh)
                w.writerow(["t", *cols])
                for t in times:
                    w.writerow(
                        [repr(t - self.logstart)]
                        + [repr(table[t][c]) if c in table[t] else "" for c in cols]
                    )
            return p
        raise ConfigError(f"output {str(p)!r}: use a .alog or .csv file name", param="-o")

    @property
    def variant_app(self) -> str:
        return "uSimMarineV22" if self.variant == "usm_v22" else "uSimMarine"


def _read_delivery(path: Path) -> list[tuple[float, str, float | str, str, float]]:
    rows: list[tuple[float, str, float | str, str, float]] = []
    try:
        fh = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    with fh:
        reader = csv.DictReader(fh)
        need = {"t_post", "var", "value", "source", "t_iteration"}
        if not need <= set(reader.fieldnames or ()):
            raise DataError(
                f"columns {sorted(need)} expected, found {reader.fieldnames}",
                file=str(path),
                line=1,
            )
        for lineno, r in enumerate(reader, start=2):
            try:
                value: float | str = r["value"]
                if _NUMBER.match(str(value)):
                    value = float(value)  # else a string message (as the log shows it)
                rows.append(
                    (
                        float(r["t_post"]),
                        r["var"],
                        value,
                        r["source"],
                        float(r["t_iteration"]),
                    )
                )
            except (TypeError, ValueError):
                raise DataError(f"bad row {r}", file=str(path), line=lineno) from None
    return rows


def _angle_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs((a - b + 180.0) % 360.0 - 180.0)


def replay_alog(
    mission: str | Path,
    alog_path: str | Path,
    *,
    delivery: str | Path | Literal["auto", "none"] = "auto",
    variant: Literal["usm", "usm_v22"] | None = None,
    block: str | None = None,
) -> ReplayResult:
    """Replay a real mission log open loop (see the module docstring).

    Parameters
    ----------
    mission : str or Path
        The mission's ``.moos`` file (its uSimMarine / uSimMarineV22 block, compat="moos").
    alog_path : str or Path
        The real ``.alog``.
    delivery : path, "auto" or "none"
        The schedule; "auto" uses ``RUN.delivery.csv`` beside ``RUN.alog`` when present.
    variant, block
        As :func:`marinesim.interop.moos.files.load_usm_config`.

    Raises
    ------
    ConfigError, DataError
        Bad mission, unreadable log, a log without the simulator's NAV_X, a schedule that
        names an iteration the log does not have.
    """
    loaded = load_usm_config(mission, compat="moos", variant=variant, block=block)
    cfg = loaded.config
    alog: Alog = read_alog(alog_path)
    if not math.isfinite(alog.logstart):
        raise DataError("the log has no LOGSTART header line", file=alog.path)
    prefix = cfg.prefix
    xvar = f"{prefix}_X"
    nav_src = next((r.src for r in alog.records if r.var == xvar), None)
    if nav_src is None:
        raise DataError(f"no {xvar} in the log", file=alog.path)
    logged: dict[str, tuple[np.ndarray, np.ndarray]] = {
        s: alog.numeric(f"{prefix}_{s}", nav_src) for s in COMPARED
    }
    nav_t = np.unique(logged["X"][0])
    if len(nav_t) < 2:
        raise DataError(f"fewer than two {xvar} samples in the log", file=alog.path)
    v22 = cfg.variant == "usm_v22"
    # iteration times (log time): all logged; V22 adds the unlogged odd iterations midway
    if v22:
        mids = (nav_t[:-1] + nav_t[1:]) / 2.0
        first = nav_t[0] - (nav_t[1] - nav_t[0]) / 2.0
        iters = np.empty(2 * len(nav_t))
        iters[0] = first
        iters[1::2] = nav_t
        iters[2::2] = mids
    else:
        iters = nav_t.copy()
    # posts
    posts = sorted((r for r in alog.records if r.var in INPUT_VARS), key=lambda r: r.t)
    per_iter: list[list[tuple[str, float | str, str]]] = [[] for _ in iters]
    dpath: Path | None = None
    if delivery == "auto":
        cand = (
            Path(str(alog_path)[: -len(".alog")] + ".delivery.csv")
            if str(alog_path).endswith(".alog")
            else None
        )
        dpath = cand if cand is not None and cand.is_file() else None
    elif delivery != "none":
        dpath = Path(delivery)
        if not dpath.is_file():
            raise ConfigError("delivery schedule not found", file=str(dpath), param="--delivery")
    if dpath is not None:
        rows = _read_delivery(dpath)
        if v22:  # a recorded schedule gives the times of the unlogged odd iterations it names
            for t_it in {r[4] for r in rows}:
                j = int(np.searchsorted(iters, t_it))
                near = [i for i in (j - 1, j) if 0 <= i < len(iters)]
                if near and min(abs(iters[i] - t_it) for i in near) < 1e-6:
                    continue
                odd = [i for i in (j - 1, j) if 0 <= i < len(iters) and i % 2 == 0]
                if odd:
                    iters[odd[0]] = t_it
            iters.sort()
        pos = np.searchsorted(iters, [r[4] for r in rows])
        for (t_post, var, value, src, t_it), k in zip(rows, pos, strict=True):
            kk = int(k)
            for cand_k in (kk - 1, kk):
                if 0 <= cand_k < len(iters) and abs(iters[cand_k] - t_it) < 1e-6:
                    per_iter[cand_k].append((var, value, src))
                    break
            else:
                raise DataError(
                    f"schedule names an iteration at t = {t_it:.5f} s (post of {var} at "
                    f"{t_post:.5f} s) that the log does not have",
                    file=str(dpath),
                )
        rule, rule_text = "delivery", f"delivery schedule {dpath.name}"
        tol = dict(TOLERANCE_SCHEDULE)
        n_posts = len(rows)
    else:
        k = 0
        n_posts = 0
        for r in posts:
            while k < len(iters) and iters[k] < r.t:
                k += 1
            if k >= len(iters):
                break
            per_iter[k].append((r.var, r.value, r.src))
            n_posts += 1
        rule = "first-iteration-after"
        rule_text = "first-iteration-after rule (no delivery schedule beside the log)"
        tol = dict(TOLERANCE_PLAIN)
    # end of the judged span
    done = [r.t for r in alog.records if r.var == "MISSION" and r.value == "complete"]
    t_end = min(done) if done else float(nav_t[-1])
    # run
    t_abs = alog.logstart + iters
    period = 1.0 / (cfg.app_tick or 5.0)
    state = kinematic.init(cfg, 1, float(t_abs[0]) - period)
    produced: list[tuple[float, str, float]] = []
    got: dict[str, dict[float, float]] = {s: {} for s in COMPARED}
    for k in range(len(iters)):
        mt = float(t_abs[k])
        for var, value, src in per_iter[k]:
            state, _posts, _w = kinematic.apply_mail(
                cfg, state, var, value, moos_time=mt, source=src
            )
        state, pubs = kinematic.iterate(cfg, state, mt)
        for s in COMPARED:
            name = f"{prefix}_{s}"
            if name in pubs:
                val = float(np.asarray(pubs[name]).reshape(-1)[0])
                if math.isfinite(val):
                    produced.append((mt, name, val))
                    got[s][round(float(iters[k]), 5)] = val
    devs: dict[str, float] = {}
    compared = 0
    for s in COMPARED:
        lt, lv = logged[s]
        if len(lt) == 0:
            continue
        keep = lt <= t_end + 1e-9
        lt, lv = lt[keep], lv[keep]
        mv = np.array([got[s].get(round(float(t), 5), np.nan) for t in lt])
        ok = ~np.isnan(mv)
        if not ok.any():
            continue
        d = _angle_diff(mv[ok], lv[ok]) if s == "HEADING" else np.abs(mv[ok] - lv[ok])
        devs[f"{prefix}_{s}"] = float(d.max())
        compared = max(compared, int(ok.sum()))
    tolerances = {f"{prefix}_{s}": v for s, v in tol.items() if f"{prefix}_{s}" in devs}
    return ReplayResult(
        rule=rule,
        rule_text=rule_text,
        variant=cfg.variant,
        deviations=devs,
        tolerances=tolerances,
        t_end=t_end,
        compared=compared,
        iterations=len(iters),
        posts=n_posts,
        produced=produced,
        logstart=alog.logstart,
    )


def result_json(res: ReplayResult) -> dict[str, Any]:
    """The ``--json`` object: variable → largest absolute deviation (its units)."""
    return dict(res.deviations)

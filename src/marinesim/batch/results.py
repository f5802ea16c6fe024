"""Per-run records from simulation results, the runs table and its summary.

A record is one row of ``runs.parquet``: ``run_id, point, replica, seed``, the swept values
(columns named by their paths), ``status, error, ended_by, t_end`` and one column per metric
row, named ``metric[entity]`` (``metric`` for world rows; ``metric[team N]`` for team sums).
Stacked replicas (entity names ``name[i]@r``) are split back into their runs; their team sums
are recomputed per replica exactly as the metric plugins sum them (entity order, from 0.0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "LOG_SIGNALS",
    "metric_columns",
    "run_log",
    "split_replicas",
    "summarise",
]

_STACKED = re.compile(r"^(.*)@(\d+)$")
#: Signals written to the per-run logs (``logs="tracks"``).
LOG_SIGNALS = ("truth.pos", "truth.heading", "truth.speed", "belief.pos", "active")


def _base(name: str) -> tuple[str, int | None]:
    m = _STACKED.match(name)
    return (m.group(1), int(m.group(2))) if m else (name, None)


def metric_columns(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, float], dict[str, str]]:
    """Metric rows of one run → ({column: value}, {column: unit})."""
    vals: dict[str, float] = {}
    units: dict[str, str] = {}
    for r in rows:
        ent = r.get("entity") or ""
        col = f"{r['metric']}[{ent}]" if ent else str(r["metric"])
        v = r.get("value")
        vals[col] = float(v) if v is not None else math.nan
        units[col] = str(r.get("unit") or "")
    return vals, units


def split_replicas(
    rows: Sequence[dict[str, Any]], replicas: Sequence[int]
) -> dict[int, list[dict[str, Any]]]:
    """Metric rows of a stacked simulation → rows of each replica's own run.

    Entity rows ``name[i]@r`` go to replica r (renamed ``name[i]``).  Team rows ``X_sum``
    are rebuilt per replica from the entity rows of metric ``X``; other world rows cannot be
    attributed and are dropped (scenarios with such metrics are never stacked).
    """
    out: dict[int, list[dict[str, Any]]] = {int(r): [] for r in replicas}
    team_rows = []
    for r in rows:
        ent = str(r.get("entity") or "")
        base, rep = _base(ent)
        if rep is not None:
            out.setdefault(rep, []).append({**r, "entity": base})
        elif ent.startswith("team "):
            team_rows.append(r)
    for rep, lst in out.items():
        extra = []
        for tr in team_rows:
            metric = str(tr["metric"])
            if not metric.endswith("_sum"):
                continue
            src = metric[: -len("_sum")]
            total = 0.0
            for r in lst:
                if r["metric"] == src and r.get("team") == tr.get("team"):
                    total = total + float(r["value"])
            extra.append({**tr, "value": total})
        # the order of the replica's own run: team rows follow the last row of their plugin
        seen: set[tuple[Any, ...]] = set()
        tail: dict[Any, list[dict[str, Any]]] = {}
        for tr in extra:
            key = (tr.get("plugin"), tr["metric"], tr.get("entity"))
            if key not in seen:
                seen.add(key)
                tail.setdefault(tr.get("plugin"), []).append(tr)
        merged: list[dict[str, Any]] = []
        for i, r in enumerate(lst):
            merged.append(r)
            plug = r.get("plugin")
            if i + 1 == len(lst) or lst[i + 1].get("plugin") != plug:
                merged.extend(tail.pop(plug, []))
        for rest in tail.values():
            merged.extend(rest)
        out[rep] = merged
    return out


def run_log(result: Any, replica: int | None, every: int = 1, frames: Any = None) -> Any:
    """The track log of one run (pandas DataFrame: t, entity, signal components).

    Parameters
    ----------
    result : RunResult
    replica : int or None
        Replica to take from a stacked result (None: every row, a single run).
    every : int
        Keep every ``every``-th frame (the last frame is always kept).
    frames : array of int, optional
        The run's own frames among the recorded ones (a stacked world that ended early:
        :func:`marinesim.engine.worlds.world_frames`); default every frame.
    """
    import pandas as pd

    t = np.asarray(result.t)
    own = np.arange(len(t)) if frames is None else np.asarray(frames, dtype=np.int64)
    if len(own) == 0:
        return pd.DataFrame({"t": np.zeros(0), "entity": np.zeros(0, dtype=object)})
    frames = own[:: max(int(every), 1)]
    if frames[-1] != own[-1]:
        frames = np.append(frames, own[-1])
    rows, names = [], []
    for i, e in enumerate(result.entities):
        base, rep = _base(str(e["name"]))
        if replica is None or rep == replica:
            rows.append(i)
            names.append(base)
    n, tt = len(rows), len(frames)
    cols: dict[str, Any] = {
        "t": np.tile(t[frames], n),
        "entity": np.repeat(np.asarray(names, dtype=object), tt),
    }
    for name in LOG_SIGNALS:
        sig = result.signals.get(name)
        if sig is None:
            continue
        vals = np.asarray(sig.values)[rows][:, frames, :]
        k = vals.shape[2]
        for j in range(k):
            lab = sig.labels[j] if j < len(sig.labels) else str(j)
            cols[name if k == 1 else f"{name}.{lab}"] = vals[:, :, j].reshape(n * tt)
    return pd.DataFrame(cols)


_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def summarise(
    runs: Any, metrics: Sequence[str], units: dict[str, str], by: Sequence[str] = ()
) -> Any:
    """Per metric (and per design point when ``by`` names sweep columns): n, mean, std, 95 % CI
    of the mean (Student t), min, quantiles 5/25/50/75/95 %, max over finished runs.

    Runs that failed or diverged are left out; ``n`` counts finite values only.
    """
    import pandas as pd
    from scipy import stats

    ok = runs[runs["status"] == "completed"] if "status" in runs else runs
    groups = [((), ok)] if not by else list(ok.groupby(list(by), sort=True, dropna=False))
    out = []
    for key, g in groups:
        keyd = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=False))
        for m in metrics:
            if m not in g:
                continue
            x = pd.to_numeric(g[m], errors="coerce").to_numpy(dtype=float)
            x = x[np.isfinite(x)]
            n = len(x)
            mean = float(np.mean(x)) if n else math.nan
            std = float(np.std(x, ddof=1)) if n > 1 else math.nan
            half = float(stats.t.ppf(0.975, n - 1) * std / math.sqrt(n)) if n > 1 else math.nan
            q = np.quantile(x, _QUANTILES) if n else [math.nan] * len(_QUANTILES)
            row = {
                **keyd,
                "metric": m,
                "unit": units.get(m, ""),
                "n": n,
                "mean": mean,
                "std": std,
                "ci95_low": mean - half,
                "ci95_high": mean + half,
                "min": float(np.min(x)) if n else math.nan,
                **{
                    f"q{int(round(p * 100)):02d}": float(v)
                    for p, v in zip(_QUANTILES, q, strict=True)
                },
                "max": float(np.max(x)) if n else math.nan,
            }
            out.append(row)
    return pd.DataFrame(out)

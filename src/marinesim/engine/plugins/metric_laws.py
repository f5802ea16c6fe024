"""World metrics in the generated tick: ``distance_travelled``, ``time_in_box``, ``min_separation``,
``nav_error``.

A world metric sees every entity block.  Its declaration reads each block's position through
the wire ``truth.position`` (``truth.position@<block>`` with several blocks), which the route
names after the block's own truth wire whose first three columns are the position at
t_{k+1} once the physics laws have run (``truth.pos`` of ``usm``, ``truth.eta`` of the
PythonVehicleSimulator models, ``truth.x6`` of the Fossen models: :data:`POSITION_WIRES`).
The ``metric`` hook runs after every entity law of the tick, at t_{k+1}, as the plugins'
``metric`` phase does.  Each metric first gathers the blocks' positions into one (N, 3) array,
rows in block order (the plugin's ``np.concatenate``), then runs its law over it; the laws
are the plugins' numpy expressions written per row, in the same order of operations
(``np.linalg.norm`` of a 3-vector sums ``(x² + y²) + z²``), so the logs, the summaries and the
end-condition values are the same bits (``tests/engine/test_compiled_metrics.py``).

``nav_error`` reads each block's belief wire ``belief.pos`` (``belief.pos@<block>``) beside its
position, and the position itself for a block with perfect navigation (its error is 0, as
the plugin's belief is the truth's alias there).

The compiled ticks run with every entity active (the route's condition), so the plugins'
``np.where(active, …)`` terms are the active branch.  ``min_separation`` with a metric end
condition on its value ends the compiled call after the tick at which the condition comes
true (``STOP_AFTER``): the engine then checks the condition, and the run ends there, as on
the plugin route.

The metrics declare their worlds (:class:`~marinesim.engine.compiled.law.Worlds`): on CUDA
each thread gathers and measures its own world's rows (of every block, laid out world by
world: ``gathered``); ``min_separation``'s rows by replica are an ``indices`` array, its
closest approaches ``per_world``, its value ``least``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from marinesim.core.jitable import register_jitable
from marinesim.engine.compiled.law import STOP_AFTER, Law, Laws, Worlds, log_ticks

__all__ = [
    "POSITION_WIRES", "box_laws", "distance_laws", "gathered_layout", "nav_error_laws",
    "separation_laws",
]  # fmt: skip

#: Truth wires whose columns 0:3 hold the position (NED, m) at t_{k+1} after the physics laws,
#: in the order the route looks for them in a block's declarations.
POSITION_WIRES = ("truth.pos", "truth.eta", "truth.x6")

#: ``end_conditions`` operators as the separation law's codes.
_OPS = {"<": 1, "<=": 2, ">": 3, ">=": 4}


# ------------------------------------------------------------------------------------ laws
@register_jitable
def gather_position(k, j, t, h, src, off, pos):  # noqa: ANN001, ANN201
    """Rows ``off[0]`` … of ``pos`` (N, 3): the position columns of one block's truth wire."""
    o = off[0]
    for i in range(src.shape[0]):
        pos[o + i, 0] = src[i, 0]
        pos[o + i, 1] = src[i, 1]
        pos[o + i, 2] = src[i, 2]
    return 0


@register_jitable
def distance_tick(k, j, t, h, pos, prev, dist, dlog):  # noqa: ANN001, ANN201
    """``distance_travelled``: add ‖p − p_prev‖ to each entity's distance [m]."""
    for i in range(pos.shape[0]):
        dx = pos[i, 0] - prev[i, 0]
        dy = pos[i, 1] - prev[i, 1]
        dz = pos[i, 2] - prev[i, 2]
        dist[i] = dist[i] + math.sqrt((dx * dx + dy * dy) + dz * dz)
        prev[i, 0], prev[i, 1], prev[i, 2] = pos[i, 0], pos[i, 1], pos[i, 2]
        dlog[0, j, i] = dist[i]
    return 0


@register_jitable
def box_tick(k, j, t, h, pos, box, clk, inside, ilog):  # noqa: ANN001, ANN201
    """``time_in_box``: add the time since the last call where the position is inside
    (``box``: north, east, depth minima and maxima; ``clk``: time of the last call, total)."""
    dt = t - clk[0]
    clk[0] = t
    clk[1] += dt
    for i in range(pos.shape[0]):
        x, y, z = pos[i, 0], pos[i, 1], pos[i, 2]
        ins = (
            x >= box[0] and x <= box[1] and y >= box[2] and y <= box[3]
            and z >= box[4] and z <= box[5]
        )  # fmt: skip
        inside[i] = inside[i] + (dt if ins else 0.0)
        ilog[0, j, i] = 1.0 if ins else 0.0
    return 0


@register_jitable
def separation_tick(  # noqa: ANN201
    k, j, t, h, pos, perm, hz, mins, cpa_d, cpa_t, cpa_i, cpa_j, cond, val, slog  # noqa: ANN001
):
    """``min_separation``: each entity's nearest other entity of its replica (rows grouped by
    replica: ``perm``), the per-entity minima and each replica's closest approach; ``val[0]``
    the smallest closest approach (the metric's value); ``STOP_AFTER`` when ``cond`` (operator
    code, threshold) holds for it (the engine's check after the tick then ends the run)."""
    m = cpa_d.shape[0]
    g = perm.shape[0] // m
    inf = np.inf
    for q in range(m):
        best = inf
        bi = -1
        bj = -1
        for a in range(g):
            ra = perm[q * g + a]
            rmin = inf
            for b in range(g):
                if a == b:
                    d = inf
                else:
                    rb = perm[q * g + b]
                    dx = pos[ra, 0] - pos[rb, 0]
                    dy = pos[ra, 1] - pos[rb, 1]
                    if hz[0]:
                        d = math.sqrt(dx * dx + dy * dy)
                    else:
                        dz = pos[ra, 2] - pos[rb, 2]
                        d = math.sqrt((dx * dx + dy * dy) + dz * dz)
                if d < rmin:
                    rmin = d
                if d < best:  # the first smallest in (a, b) order: np.argmin's
                    best, bi, bj = d, a, b
            if rmin < mins[ra]:
                mins[ra] = rmin
            slog[0, j, ra] = rmin if rmin < inf else np.nan
        if g > 1 and bi >= 0 and best < cpa_d[q]:
            cpa_d[q], cpa_t[q], cpa_i[q], cpa_j[q] = best, t, bi, bj
    v = inf
    for q in range(m):
        if cpa_d[q] < v:
            v = cpa_d[q]
    val[0] = v
    op = cond[0]
    if op != 0 and v < inf:
        thr = cond[1]
        if (
            (op == 1 and v < thr) or (op == 2 and v <= thr)
            or (op == 3 and v > thr) or (op == 4 and v >= thr)
        ):  # fmt: skip
            return STOP_AFTER
    return 0


@register_jitable
def nav_error_tick(k, j, t, h, tpos, bpos, sq, final, cnt, elog, nlog):  # noqa: ANN001, ANN201
    """``nav_error`` of one block: e = p̂ − p, ‖e‖ (``(x² + y²) + z²``), its square summed;
    ``cnt`` (1,): the metric's calls (every block's law adds to its own copy)."""
    for i in range(tpos.shape[0]):
        e0 = bpos[i, 0] - tpos[i, 0]
        e1 = bpos[i, 1] - tpos[i, 1]
        e2 = bpos[i, 2] - tpos[i, 2]
        err = math.sqrt((e0 * e0 + e1 * e1) + e2 * e2)
        sq[i] = sq[i] + err * err
        final[i] = err
        elog[0, j, i] = err
        nlog[0, j, i] = e0
        nlog[1, j, i] = e1
        nlog[2, j, i] = e2
    cnt[0] += 1
    return 0


# ---------------------------------------------------------------------------- declarations
def _why(slot: Any) -> str | None:
    if slot.period != 1 or slot.offset != 0:
        return "a metric at its own rate (rate_hz)"
    return None


def _gather(sim: Any) -> tuple[list[Law], dict[str, np.ndarray], list[tuple[str, int, int]]]:
    """The laws and arrays that gather every block's position into ``pos`` (N, 3), and each
    block's (name, first row, rows)."""
    many = len(sim.blocks) > 1
    laws: list[Law] = []
    arrays: dict[str, np.ndarray] = {}
    rows: list[tuple[str, int, int]] = []
    o = 0
    for b, blk in enumerate(sim.blocks):
        wire = f"truth.position@{blk.name}" if many else "truth.position"
        arrays[f"off{b}"] = np.array([o], dtype=np.int64)
        laws.append(Law("metric", gather_position, (wire, f"off{b}", "pos")))
        rows.append((blk.name, o, blk.n))
        o += blk.n
    arrays["pos"] = np.zeros((o, 3))
    return laws, arrays, rows


def gathered_layout(sim: Any, n: int, gathered: tuple[str, ...], **layout: Any) -> Worlds:
    """The CUDA layout (:class:`~marinesim.engine.compiled.law.Worlds`, ``n`` rows) of a
    declaration that gathers every block's rows (:func:`gather_position`, offsets ``off<b>``):
    a world metric, the contacts sonar.  With one entity block the gathered rows are grouped
    by world already; with several, the ``gathered`` arrays go to each world as its rows of
    every block, and ``off<b>`` on the device is block b's place in a world's part."""
    sizes = tuple(b.n for b in sim.blocks)
    nw = sim.n_worlds
    offs = tuple(f"off{b}" for b in range(len(sizes)))
    shared = (*offs, *layout.pop("shared", ()))
    if len(sizes) == 1:
        return Worlds(n, nw, shared=shared, **layout)
    local = tuple((off, (float(sum(sizes[:b]) // nw),)) for b, off in enumerate(offs))
    return Worlds(n, nw, shared=shared, blocks=sizes, gathered=gathered, local=local, **layout)


def _worlds(sim: Any, gathered: tuple[str, ...], **layout: Any) -> Worlds:
    """A metric's layout: its ``pos`` and ``gathered`` arrays hold every block's rows."""
    return gathered_layout(sim, sum(b.n for b in sim.blocks), ("pos", *gathered), **layout)


def _setup(slot: Any, sim: Any, log: str) -> str | tuple[list[Law], dict, list, int]:
    """The gathering laws, the arrays with the (1, ticks, N) log ``log``, the blocks' rows and
    N; or why this metric runs tick by tick."""
    why = _why(slot)
    if why:
        return why
    laws, a, rows = _gather(sim)
    n = a["pos"].shape[0]
    a[log] = np.zeros((1, log_ticks(n, 1), n))
    return laws, a, rows, n


def _views(log: np.ndarray, rows: list[tuple[str, int, int]], signal: str, ticks: int) -> dict:
    """Each block's (ticks, n, 1) view of a (1, ticks, N) log, keyed (block, signal)."""
    return {(b, signal): log[:, :ticks, o : o + n].transpose(1, 2, 0) for b, o, n in rows}


def _blockwise(a: dict, st: dict, rows: list[tuple[str, int, int]], keys: tuple[str, ...], load: bool) -> None:
    """Copy the per-block state dicts ``st[key][block]`` into the rows of ``a[key]`` (load), or
    back as fresh arrays (commit)."""
    for b, o, m in rows:
        for key in keys:
            if load:
                a[key][o : o + m] = st[key][b]
            else:
                st[key][b] = a[key][o : o + m].copy()


def _declare(
    gather: list[Law], law: Law, a: dict, state: tuple[str, ...], log: str,
    rows: list[tuple[str, int, int]], signal: str, **hooks: Any,
) -> Laws:  # fmt: skip
    """A metric's declaration: the gathering laws, then its own law; its log's block views."""
    return Laws(
        laws=[*gather, law], arrays=a, state=state, logs=(log,), max_ticks=a[log].shape[1],
        finish=lambda ticks: _views(a[log], rows, signal, ticks), **hooks,
    )  # fmt: skip


def distance_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The ``distance_travelled`` declaration."""
    got = _setup(slot, sim, "dlog")
    if isinstance(got, str):
        return got
    laws, a, rows, n = got
    a.update(prev=np.zeros((n, 3)), dist=np.zeros(n))
    st = slot.ctx.state
    sig = f"{plugin.name}.distance"

    def ready() -> bool:
        return "dist" in st

    def load(k: int) -> None:
        _blockwise(a, st, rows, ("prev", "dist"), load=True)

    def commit(k: int, kstop: int, ticks: int) -> None:
        _blockwise(a, st, rows, ("prev", "dist"), load=False)

    law = Law("metric", distance_tick, ("pos", "prev", "dist", "dlog"))
    return _declare(laws, law, a, ("prev", "dist"), "dlog", rows, sig, ready=ready, load=load,
                    commit=commit, gpu=_worlds(sim, ("prev", "dist", "dlog")))  # fmt: skip


def box_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The ``time_in_box`` declaration."""
    got = _setup(slot, sim, "ilog")
    if isinstance(got, str):
        return got
    laws, a, rows, n = got
    p = plugin.params
    box = [p.north_min, p.north_max, p.east_min, p.east_max, p.depth_min, p.depth_max]
    a.update(box=np.array(box, dtype=float), clk=np.zeros(2), inside=np.zeros(n))
    st = slot.ctx.state
    sig = f"{plugin.name}.inside"

    def ready() -> bool:
        return "inside" in st

    def load(k: int) -> None:
        a["clk"][...] = (st["t_last"], st["total"])
        _blockwise(a, st, rows, ("inside",), load=True)

    def commit(k: int, kstop: int, ticks: int) -> None:
        st["t_last"], st["total"] = float(a["clk"][0]), float(a["clk"][1])
        _blockwise(a, st, rows, ("inside",), load=False)

    law = Law("metric", box_tick, ("pos", "box", "clk", "inside", "ilog"))
    return _declare(laws, law, a, ("clk", "inside"), "ilog", rows, sig, ready=ready, load=load,
                    commit=commit, gpu=_worlds(sim, ("inside", "ilog"), shared=("box",), world=("clk",)))  # fmt: skip


def separation_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The ``min_separation`` declaration (a metric end condition on its value ends the call)."""
    conds = [c for c in sim.end_conditions if getattr(c, "metric", None) == plugin.name]
    if len(conds) > 1:
        return "more than one end condition on its value"
    got = _setup(slot, sim, "slog")
    if isinstance(got, str):
        return got
    laws, a, rows, n = got
    st = slot.ctx.state
    m = max(len(st["groups"]), 1) if "groups" in st else sim.n_worlds  # (the replicas)
    cond = np.zeros(2)
    if conds:
        cond[:] = (_OPS[conds[0].op], conds[0].value)
    a.update(
        perm=np.zeros(n, dtype=np.int64), hz=np.array([int(plugin.params.horizontal)], dtype=np.int64),
        mins=np.zeros(n), cpa_d=np.zeros(m), cpa_t=np.zeros(m), cpa_i=np.zeros(m, dtype=np.int64),
        cpa_j=np.zeros(m, dtype=np.int64), cond=cond, val=np.full(1, np.inf),
    )  # fmt: skip
    sig = f"{plugin.name}.separation"
    name = plugin.name

    def ready() -> bool:
        return "cpa_d" in st and len(st["cpa_d"]) == m and len(st["perm"]) == n

    def load(k: int) -> None:
        a["perm"][...] = st["perm"]
        a["mins"][...] = st["min"]
        for key in ("cpa_d", "cpa_t", "cpa_i", "cpa_j"):
            a[key][...] = st[key]

    def commit(k: int, kstop: int, ticks: int) -> None:
        st["min"] = a["mins"].copy()
        for key in ("cpa_d", "cpa_t", "cpa_i", "cpa_j"):
            st[key] = a[key].copy()
        if ticks and math.isfinite(a["val"][0]):
            sim._metric_values[name] = float(a["val"][0])

    law = Law("metric", separation_tick, (
        "pos", "perm", "hz", "mins", "cpa_d", "cpa_t", "cpa_i", "cpa_j", "cond", "val", "slog"))
    state = ("mins", "cpa_d", "cpa_t", "cpa_i", "cpa_j", "val")
    layout = None
    if m == sim.n_worlds:  # one closest approach per world
        layout = _worlds(sim, ("mins", "slog"), shared=("hz", "cond"),
                         indices=("perm",), least=("val",),
                         per_world=("cpa_d", "cpa_t", "cpa_i", "cpa_j"))  # fmt: skip
    return _declare(laws, law, a, state, "slog", rows, sig, ready=ready, load=load,
                    commit=commit, gpu=layout)  # fmt: skip


def nav_error_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str:
    """The ``nav_error`` declaration: one law per block, over its position and belief wires."""
    why = _why(slot)
    if why:
        return why
    many = len(sim.blocks) > 1
    st = slot.ctx.state
    laws: list[Law] = []
    a: dict[str, np.ndarray] = {}
    per: list[tuple[Any, int, str, str]] = []
    for b, blk in enumerate(sim.blocks):
        at = f"@{blk.name}" if many else ""
        writer = any(s.block is blk and s.plugin.writes_belief for s in sim.slots)
        pos = f"truth.position{at}"
        bel = f"belief.pos{at}" if writer else pos  # perfect navigation: the truth's alias
        T = log_ticks(blk.n, 4)
        a.update({f"sq{b}": np.zeros(blk.n), f"final{b}": np.zeros(blk.n),
                  f"cnt{b}": np.zeros(1, dtype=np.int64), f"elog{b}": np.zeros((1, T, blk.n)),
                  f"nlog{b}": np.zeros((3, T, blk.n))})  # fmt: skip
        laws.append(Law("metric", nav_error_tick, (
            pos, bel, f"sq{b}", f"final{b}", f"cnt{b}", f"elog{b}", f"nlog{b}")))  # fmt: skip
        per.append((blk, b, f"{plugin.name}.error", f"{plugin.name}.error_ned"))
    state = tuple(f"{k}{b}" for _blk, b, _e, _n in per for k in ("sq", "final", "cnt"))
    logs = tuple(f"{k}{b}" for _blk, b, _e, _n in per for k in ("elog", "nlog"))

    def ready() -> bool:
        return bool(st.get("noted")) and st.get("count", 0) > 0

    def load(k: int) -> None:
        for blk, b, _e, _n in per:
            a[f"sq{b}"][...] = st["sq"][blk.name]
            a[f"final{b}"][...] = st["final"][blk.name]
            a[f"cnt{b}"][0] = 0

    def commit(k: int, kstop: int, ticks: int) -> None:
        for blk, b, _e, _n in per:
            st["sq"][blk.name] = a[f"sq{b}"].copy()
            st["final"][blk.name] = a[f"final{b}"].copy()
            if blk.belief is not None and blk.belief.cov is not None:
                st["cov"][blk.name] = np.asarray(blk.belief.cov)[:, 0:2, 0:2]
        st["count"] += int(a["cnt0"][0])
        for _blk, b, _e, _n in per:
            a[f"cnt{b}"][0] = 0  # counted: a call that goes on from here counts afresh

    def finish(ticks: int) -> dict:
        out = {}
        for blk, b, err, ned in per:
            out[(blk.name, err)] = a[f"elog{b}"][:, :ticks].transpose(1, 2, 0)
            out[(blk.name, ned)] = a[f"nlog{b}"][:, :ticks].transpose(1, 2, 0)
        return out

    return Laws(
        laws=laws, arrays=a, state=state, logs=logs,
        max_ticks=min(a[f"elog{b}"].shape[1] for _blk, b, _e, _n in per),
        ready=ready, load=load, commit=commit, finish=finish,
        gpu=Worlds(sim.blocks[0].n, sim.n_worlds, world=tuple(f"cnt{b}" for _blk, b, _e, _n in per),
                   sizes=tuple((f"{k}{b}", blk.n) for blk, b, _e, _n in per
                               for k in ("sq", "final", "elog", "nlog"))),
    )  # fmt: skip

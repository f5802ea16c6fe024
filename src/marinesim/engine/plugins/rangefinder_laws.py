"""The ``rangefinder`` sensor on a ``fossen6dof`` vehicle in the generated tick.

The sensor's law is :func:`marinesim.engine.plugins.surftrak_laws.rangefinder_sense` (the one
copy, shared with the ``sitl_vertical`` harness): the delay line of the vehicle's height, the
shipped terrain profile under it and, on message ticks, one reading through
:func:`marinesim.sensors.rangefinder.inject` on the ``bus.rangefinder`` wire.  On a 6-DOF
vehicle its geometry — z up, the only column of ``truth.zva`` it reads — comes from the
motion's ``truth.x6`` wire at t_{k+1} (:func:`height_from_x6`, a sense law before it), as the
plugin's ``sense`` reads ``−truth.pos[:, 2]``.  Used by ``ardusub_sawtooth`` (the SITL engine
plant): ``sitl_servo`` (:mod:`marinesim.interop.sitl.laws`) takes the reading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numba.extending import register_jitable

from marinesim.engine.compiled.law import MAX_TICKS, Law, Laws
from marinesim.engine.plugins.surftrak_laws import SENSED, rangefinder_sense

__all__ = ["height_from_x6", "sixdof_sensor_laws"]

_SRC = Path(__file__).resolve().parents[2]


@register_jitable
def height_from_x6(k, j, t, h, x6, zva):  # noqa: ANN001, ANN201
    """z up [m] of every row from the 6-DOF truth (NED position in ``x6[:, 0:3]``)."""
    for i in range(x6.shape[0]):
        zva[i, 0] = -x6[i, 2]
    return 0


def sixdof_sensor_laws(plugin: Any, slot: Any, sim: Any) -> Laws | str | None:
    """The ``rangefinder`` declaration on a ``fossen6dof`` block (owns ``bus.rangefinder``;
    hands the subscriber's inbox over)."""
    sp: Any = plugin.params
    if sp.terrain == "environment":
        return "terrain 'environment' (bathymetry under a track)"
    if sp.geometry_source != "truth":
        return "rangefinder geometry from the belief"
    if slot.period != 1 or slot.offset != 0:
        return "a rate other than every tick"
    blk = slot.block
    ctl = next((s for s in sim.slots if s.block is blk and "rangefinder/distance_cm"
                in getattr(s.plugin, "subscribes", {})), None)  # fmt: skip
    n = blk.n
    st = slot.ctx.state
    names = [f"{plugin.name}.{s}" for s in SENSED]
    normals0, _ = slot.rng.buffered("normal")
    a = {
        "rows": np.zeros(1), "heights": np.zeros(1), "meta": np.zeros(6), "coef": np.zeros(9),
        "normals": np.zeros_like(normals0), "zbuf": np.zeros((1, n)),
        "cnt": np.zeros(2, dtype=np.int64), "bus.rangefinder": np.zeros((n, 3)),
        "zva": np.zeros((n, 3)),
        "cur": np.zeros((n, len(SENSED))), "slog": np.zeros((MAX_TICKS, n, len(SENSED))),
    }  # fmt: skip
    first: dict[str, Any] = {}
    clock = sim.clock

    def ready() -> bool:
        return "line" in st and slot.rng is not None and names[0] in sim._recorder.units

    def load(k: int) -> None:
        if not first:  # fixed at start: the profile, the delay line's size, the coefficients
            prof = st["profile"]
            a["rows"] = np.asarray(prof.rows, dtype=float)
            a["heights"] = np.asarray(prof.heights, dtype=float)
            a["zbuf"] = np.zeros((st["line"].buf.shape[0], n))
            a["coef"][:] = st["rf"].coefficients
            first["interval"] = prof.interval
        known = float(all(nm in sim._recorder.units for nm in names[1:]))
        a["meta"][:] = (first["interval"], st["attrib0"], st["rf"].delay / clock.dt, st["k0"],
                        st["iv"], known)  # fmt: skip
        normals, npos = slot.rng.buffered("normal")
        a["normals"][...] = normals
        line = st["line"]
        a["cnt"][:] = (npos, line.count)
        a["zbuf"][...] = line.buf[:, :, 0]
        rec = sim._recorder.current
        for c, nm in enumerate(names):  # the recorder's hold-last values (NaN: not logged yet)
            val = rec.get((blk.name, nm))
            a["cur"][:, c] = np.nan if val is None else val[:, 0]
        msg = a["bus.rangefinder"]  # the reading waiting in the subscriber's inbox
        msg[:] = (0.0, -1.0, -1.0)
        if ctl is not None:
            for m in ctl.sub.inbox:
                if m.topic == "rangefinder/distance_cm":
                    msg[:, 0] = 1.0
                    msg[m.rows, 1] = np.asarray(m.value, dtype=float)
                elif m.topic == "rangefinder/signal_quality":
                    msg[m.rows, 2] = np.asarray(m.value, dtype=float)

    def commit(k: int, kstop: int, ticks: int) -> None:
        npos, zcount = (int(x) for x in a["cnt"])
        slot.rng.set_position("normal", npos)
        line = st["line"]
        line.count = zcount
        line.buf[:, :, 0] = a["zbuf"]
        if ctl is None:
            return
        ctl.sub.inbox = []
        msg = a["bus.rangefinder"]
        if msg[0, 0] != 0.0:  # a reading waits for tick kstop: back into the inbox
            bus = sim.bus
            t_stop = clock.start + kstop * clock.dt
            rows_ = np.arange(n, dtype=np.int64)
            for topic, c in (("rangefinder/distance_cm", 1), ("rangefinder/signal_quality", 2)):
                bus.publish(topic, blk.name, rows_, blk.ids[rows_], msg[:, c].copy(),
                            t_pub=t_stop, source=plugin.name)  # fmt: skip
                bus.published[topic] -= 1  # counted with the compiled readings
                bus._seq[(topic, blk.name)] -= 1
            bus.deliver(t_stop)
            for topic in ("rangefinder/distance_cm", "rangefinder/signal_quality"):
                bus.delivered[topic] -= 1

    def counts(k: int, kstop: int) -> dict[str, int]:
        k0, iv = int(st["k0"]), int(st["iv"])

        def upto(x: int) -> int:  # message ticks k0, k0 + iv, … that are <= x
            return 0 if x < k0 else (x - k0) // iv + 1

        due = upto(kstop) - upto(k)  # readings at t_{k+1} … t_{kstop}
        return {"rangefinder/distance_cm": due, "rangefinder/signal_quality": due}

    def finish(ticks: int) -> dict[str, np.ndarray]:
        log = a["slog"][:ticks]
        return {nm: log[..., c : c + 1] for c, nm in enumerate(names)}

    return Laws(
        laws=[
            Law("sense", height_from_x6, ("truth.x6", "zva")),
            Law("sense", rangefinder_sense, (
                "rows", "heights", "meta", "coef", "normals", "zbuf", "cnt", "zva",
                "bus.rangefinder", "cur", "slog")),
        ],
        arrays=a, state=("zbuf", "cnt", "bus.rangefinder", "cur"), logs=("slog",),
        counts=counts, inboxes=() if ctl is None else (ctl,),
        sources=(_SRC / "sensors", Path(__file__)),
        ready=ready, load=load, commit=commit, finish=finish,
    )  # fmt: skip

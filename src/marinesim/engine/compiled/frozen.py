"""Ended worlds in the generated tick: a motion declaration holds their truth wires.

A stacked world whose end condition holds is *frozen* while the others go on
(:mod:`marinesim.engine.worlds`): on the plugins, its truth rows are written back to where it
ended after every physics phase, so that its sensors, metrics and controllers see it stand
still.  A motion declaration does the same in the generated tick with :func:`frozen_laws`:
after its ``after_physics`` laws, the rows of ended worlds of its truth wires (``truth.pos``,
``truth.x6`` …) are written back to their values from the block's held truth, which ``load``
fills (:func:`load_held`).  Its own state goes on, as the plugin's does; what it logs of an
ended world is replaced by the frame of its end (``Recorder.freeze``) and the truth it
commits is written back by :meth:`Worlds.hold <marinesim.engine.worlds.Worlds.hold>`.

A declaration with these laws says so (``Laws.holds``); the route runs a simulation with
ended worlds compiled only when every motion declaration does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from marinesim.core.jitable import register_jitable
from marinesim.engine.compiled.law import Law

__all__ = ["FROZEN_SHARED", "frozen_laws", "hold_rows", "load_held"]

#: The count of ended rows, read whole by every world's thread on CUDA (``Worlds.shared``).
FROZEN_SHARED = ("nfrz",)


@register_jitable
def hold_rows(k, j, t, h, nfrz, frz, wire, held):  # noqa: ANN001, ANN201
    """The rows of ended worlds (``frz``) of a truth wire, (N,) or (N, c), written back to
    ``held``."""
    if nfrz[0] == 0:
        return 0
    w = wire.reshape((wire.shape[0], -1))
    g = held.reshape((held.shape[0], -1))
    for i in range(w.shape[0]):
        if frz[i]:
            for c in range(w.shape[1]):
                w[i, c] = g[i, c]
    return 0


def _held_name(wire: str) -> str:
    return "held_" + wire.partition(".")[2]


def frozen_laws(arrays: dict[str, np.ndarray], wires: tuple[str, ...]) -> list[Law]:
    """``after_physics`` laws that hold the ended worlds' rows of ``wires`` (arrays of the
    declaration, N rows first), with the arrays they read added to ``arrays``: ``frz`` (N,)
    the rows of ended worlds, ``nfrz`` (1,) their count, ``held_<name>`` each wire's held
    values.  Run them after the declaration's own ``after_physics`` laws."""
    n = arrays[wires[0]].shape[0]
    arrays["frz"] = np.zeros(n, dtype=np.bool_)
    arrays["nfrz"] = np.zeros(1, dtype=np.int64)
    out = []
    for w in wires:
        arrays[_held_name(w)] = np.zeros_like(arrays[w])
        out.append(Law("after_physics", hold_rows, ("nfrz", "frz", w, _held_name(w))))
    return out


def load_held(
    sim: Any, blk: Any, arrays: dict[str, np.ndarray], of_truth: Callable[[Any], Mapping[str, Any]]
) -> None:
    """Fill ``frz`` / ``nfrz`` from the ended worlds (a declaration's ``load``) and, when there
    are any, each ``held_<name>`` from ``of_truth(blk.truth)`` (wire → (N, …) values: the
    block's truth, held where a world ended, as the wire holds it)."""
    frz = sim._worlds.frozen[blk.world]
    arrays["frz"][...] = frz
    count = int(frz.sum())
    arrays["nfrz"][0] = count
    if count:
        for w, v in of_truth(blk.truth).items():
            arrays[_held_name(w)][...] = v

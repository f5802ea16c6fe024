"""One uSimMarine ``Iterate()`` of one vehicle, as the MOOS app runs it (:class:`OneVehicle`).

The same iteration as :func:`~marinesim.models.usm.publish.iterate` for N = 1, with its
publications as ``(name, value)`` pairs of Python numbers and strings (the unpublished left
out), in the program's order: what ``marinesim moos`` posts.  The common case — the vehicle
enabled, not paused, not stopped by an obstacle, one record (no ``dual_state``), no current
field, no buoyancy or trim request and (``usm``) no reverse thrust — takes a short path:
the vehicle's state lives in one row matrix kept from one iteration to the next, the law
(:func:`~marinesim.models.usm.rows.usm_propagate_map`, the only copy of the physics) runs
over it through memoryviews as Python floats, and the publications are read from it as
Python floats.  An iteration that follows another with no mail in between makes no numpy
call; the :class:`~marinesim.models.usm.state.UsmState` is built from the rows only when
something asks for it (mail, an appcast).  Every other case runs
:func:`~marinesim.models.usm.publish.iterate` and converts its publications.
:func:`iterate_one` is the same as a function of a state.  ``tests/models/test_usm_one.py``
checks that both give the same state and publications as ``iterate``, bit for bit.
"""

from __future__ import annotations

import operator
import threading
from typing import Any

import numpy as np

from marinesim.core.frames import moos_angle360
from marinesim.models.usm import rows as R
from marinesim.models.usm.config import UsmConfig
from marinesim.models.usm.mail import apply_mail
from marinesim.models.usm.moos_math import drift_summary, snap_speed_1
from marinesim.models.usm.publish import _config_rows, iterate, record_names
from marinesim.models.usm.state import UsmState, _evolve

__all__ = ["OneVehicle", "iterate_one", "scalar_pubs"]

Pubs = list[tuple[str, float | str]]

_NF = len(R.FIELDS)
#: (field names, columns) of the columns the law writes, per variant.
_WRITTEN = {
    v22: (tuple(R.FIELDS[c] for c in cols), np.array(cols))
    for v22, cols in ((False, R.WRITTEN), (True, R.WRITTEN_V22))
}


def scalar_pubs(pubs: dict[str, Any]) -> Pubs:
    """``(name, value)`` of one vehicle's publications (:func:`iterate`'s dict of arrays):
    the element of each as a Python float or str, the unpublished (None, NaN) left out."""
    out: Pubs = []
    ndarray = np.ndarray
    for name, val in pubs.items():
        x = val[0] if isinstance(val, ndarray) else val
        if x is None:
            continue
        if isinstance(x, str):
            out.append((name, x))
            continue
        f = float(x)
        if f == f:  # not NaN
            out.append((name, f))
    return out


#: The flags and counters an iteration reads (besides the rows' columns).
_AUX_OF = operator.itemgetter(
    "paused", "obstacle_hit", "enabled", "current_active", "reverse", "buoy_req", "trim_req",
    "pause_ticks", "propagated", "drift_fresh", "altitude_set",
)  # fmt: skip


def _short_path(config: UsmConfig, st: UsmState, v22: bool) -> tuple[Any, ...] | None:
    """The Python values of the state's :data:`_AUX_OF` fields when the short path takes this
    iteration (see the module's docstring), else None.  They are read again only when a
    field is no longer the array the last call read (states are not changed in place)."""
    if config.dual_state:
        return None
    arrs = _AUX_OF(st.__dict__)
    last = getattr(_LAST, "aux", None)
    if last is not None and all(map(operator.is_, arrs, last[0])):
        aux = last[1]
    else:
        if any(a.shape != (1,) for a in arrs):
            return None
        aux = tuple(a.tolist()[0] for a in arrs)
        _LAST.aux = (arrs, aux)
    paused, obstacle, enabled, current, reverse, buoy, trim = aux[:7]
    if paused or obstacle or not enabled or current:
        return None
    if not v22 and (reverse or buoy or trim):
        return None
    return aux


def iterate_one(config: UsmConfig, state: UsmState, moos_time: float) -> tuple[UsmState, Pubs]:
    """One iteration of one vehicle at MOOS time ``moos_time`` [s].

    Parameters
    ----------
    config : UsmConfig
        Effective parameters.
    state : UsmState
        State of one vehicle (N = 1) after the mail of this iteration.
    moos_time : float
        MOOS time of this iteration [s].

    Returns
    -------
    (UsmState, list of (str, float or str))
        The new state (the same as :func:`~marinesim.models.usm.publish.iterate` gives) and
        the publications, in order, as :func:`scalar_pubs` of its publications.

    Notes
    -----
    A :class:`OneVehicle` runs the iteration; a state that the last call of this thread
    returned continues that call's vehicle (its rows), any other starts a new one.
    """
    last = getattr(_LAST, "vehicle", None)
    if last is not None and last.config is config and last.returned is state:
        veh = last
    else:
        veh = _LAST.vehicle = OneVehicle(config, state)
    pubs = veh.iterate(moos_time)
    veh.returned = veh.state
    return veh.returned, pubs


#: The state's fields in the order of the rows' columns.
_FIELDS_OF = operator.itemgetter(*R.FIELDS)
_LAST = threading.local()


class OneVehicle:
    """One uSimMarine vehicle iterated and mailed in turn, as the MOOS app does.

    The vehicle keeps its rows (the law's (``NU``, 1) matrix, the iteration count and the
    memoryviews the law runs over) from one iteration to the next.  An iteration on the short
    path (see the module's docstring) that follows another with no mail in between makes no
    numpy call: it writes the iteration's clock into the rows, runs
    :func:`~marinesim.models.usm.rows.usm_propagate_map` and reads the publications from
    the rows.  :attr:`state` builds the :class:`UsmState` from the rows when it is asked for
    (mail, an appcast), from a copy of them: a state never shares memory with the rows.
    After :meth:`mail`, the next iteration writes the fields that mail changed back into the
    rows.

    Parameters
    ----------
    config : UsmConfig
        Effective parameters.
    state : UsmState
        State of one vehicle (N = 1).
    """

    def __init__(self, config: UsmConfig, state: UsmState) -> None:
        self.config = config
        self.returned: UsmState | None = None
        self._v22 = config.variant == "usm_v22"
        self._state = state
        #: the rows hold an iteration the state does not show yet
        self._ahead = False
        #: the rows (None: pack them from the state at the next short-path iteration)
        self._buf: np.ndarray | None = None
        #: the fields (and the iteration count) of the state the rows were last synced with
        self._synced: tuple[Any, ...] = ()
        self._aux: tuple[Any, ...] = ()
        self._flags: dict[str, np.ndarray] = {}
        self._drift: tuple[Any, Any] | None = None
        self._law: tuple[Any, ...] | None = None
        self._law_scratch = memoryview(np.empty((1, R.NSCRATCH)))

    # ------------------------------------------------------------------ the state
    @property
    def state(self) -> UsmState:
        """The vehicle's state after the last iteration and mail."""
        if self._ahead:
            self._catch_up()
        return self._state

    def _catch_up(self) -> None:
        """Build the state the rows hold (copies: the rows are written again)."""
        buf = self._buf
        assert buf is not None
        names, cols = _WRITTEN[self._v22]
        ch: dict[str, Any] = dict(zip(names, buf[cols], strict=True))  # (rows of one copy)
        ch["geo_x"] = ch["x"]
        ch["geo_y"] = ch["y"]
        ch["iteration"] = self._it.copy()
        ch.update(self._flags)
        self._flags = {}
        new = _evolve(self._state, ch)
        d = new.__dict__
        self._synced = (*_FIELDS_OF(d), d["iteration"])
        self._state = new
        self._ahead = False

    def mail(
        self, var: str, value: float | str, *, moos_time: float, source: str = ""
    ) -> tuple[list[tuple[str, object]], list[str]]:
        """:func:`~marinesim.models.usm.mail.apply_mail` of one message to the vehicle;
        returns its immediate posts and warnings."""
        new, posts, warns = apply_mail(
            self.config, self.state, var, value, moos_time=moos_time, source=source
        )
        self._state = new
        return posts, warns

    # ------------------------------------------------------------------ the iteration
    def _sync(self, d: dict[str, Any]) -> None:
        """Bring the rows to the state's fields (its ``__dict__`` ``d``): the fields that are
        no longer the arrays the rows were synced with, or all of them."""
        fs = (*_FIELDS_OF(d), d["iteration"])
        buf = self._buf
        if buf is None:
            buf = self._buf = np.empty((R.NU, 1))
            np.concatenate(fs[:_NF], out=buf.reshape(R.NU)[:_NF])
            self._it = fs[_NF].copy()
            self._flat = memoryview(buf.reshape(R.NU))
            self._rows = (memoryview(buf.T), memoryview(self._it))
        elif not all(map(operator.is_, fs, self._synced)):
            flat = self._flat
            for c, (a, b) in enumerate(zip(fs[:_NF], self._synced, strict=False)):
                if a is not b:
                    flat[c] = float(a[0])
            if fs[_NF] is not self._synced[_NF]:
                self._it[0] = fs[_NF][0]
        self._synced = fs
        pc, mp = _config_rows(self.config)  # (a thrust map set by mail: new rows)
        if self._law is None or self._law[0] is not pc or self._law[1] is not mp:
            self._law = (pc, mp, memoryview(pc), memoryview(mp), self._law_scratch)
        drift = (d["drift_x"], d["drift_y"])
        if self._drift is None or any(map(operator.is_not, drift, self._drift)):
            self._drift = drift
            self._mv_drift = (memoryview(drift[0]), memoryview(drift[1]))

    def iterate(self, moos_time: float) -> Pubs:
        """One iteration at MOOS time ``moos_time`` [s]; the publications in order, as
        :func:`iterate_one` gives them."""
        v22 = self._v22
        config = self.config
        t = float(moos_time)
        if self._ahead:  # no mail since the last iteration, which took the short path
            aux = self._aux
        else:
            st = self._state
            aux = _short_path(config, st, v22)
            if aux is None:
                new, pubs = iterate(config, st, np.array([t]))
                self._state = new
                self._buf = None
                return scalar_pubs(pubs)
            self._sync(st.__dict__)
        pause_ticks, propagated, drift_fresh, alt_set = aux[7:]
        flat = self._flat
        flat[R.PAUSE] = float(pause_ticks // 100)
        flat[R.HOLD] = 0.0
        flat[R.CLK] = t
        mv_u, mv_it = self._rows
        _pc, _mp, mv_pc, mv_mp, mv_w = self._law  # type: ignore[misc]
        mv_dx, mv_dy = self._mv_drift
        R.usm_propagate_map(mv_u, mv_it, mv_pc, mv_mp, mv_dx, mv_dy, mv_w, 1)
        v = flat.tolist()
        flags = self._flags
        wd = v[R.WD]
        if wd and not alt_set and wd > 0:
            flags["altitude_set"] = np.array([True])
            alt_set = True
        if not propagated:
            flags["propagated"] = np.array([True])
            propagated = True
        pubs: Pubs = []
        if not v22 or mv_it[0] % 2 == 0:
            _post_record(config, self._state.geodesy, pubs, v, alt_set, v22)
        if drift_fresh:
            text = drift_summary(v[R.DRX], v[R.DRY])
            if not v22:
                pubs.append(("USM_FSUMMARY", text))
            pubs.append(("USM_DRIFT_SUMMARY", text))
            flags["drift_fresh"] = np.array([False])
            drift_fresh = False
        self._aux = (*aux[:8], propagated, drift_fresh, alt_set)
        self._ahead = True
        return pubs


def _post_record(
    config: UsmConfig, geodesy: Any, pubs: Pubs, v: list[float], alt_set: bool, v22: bool
) -> None:
    """The NAV record's publications of one vehicle on the short path (the scalar form of
    :func:`marinesim.models.usm.publish._post_record`, one record, every vehicle posting)."""
    x, y, depth = v[R.X], v[R.Y], v[R.DEP]
    geo = geodesy is not None
    vals: list[float | str] = [x, y]
    if geo:
        vals += geodesy.local_to_latlon_1(x, y)  # (V22's geo_x, geo_y: here x, y)
    sp = v[R.SPD]
    if config.compat == "moos":
        sp = snap_speed_1(sp)
    if v22:
        ms = float(config.max_speed)
        if ms < sp or ms != ms:  # np.minimum (NaN passes)
            sp = ms
    hog = v[R.HOG]
    if not 0.0 <= hog < 360.0:
        hog = float(moos_angle360(np.array([hog]))[0])
    vals += [v[R.HDG], sp, depth, "TRUE", -depth, v[R.PIT], v[R.YAW], x, y, hog, v[R.SOG]]
    if alt_set:
        vals.append(v[R.ALT])
    names = record_names(config.prefix, geo, alt_set)
    pubs += [kv for kv in zip(names, vals, strict=True) if kv[1] == kv[1]]  # NaN: not posted

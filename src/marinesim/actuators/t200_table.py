"""The measured T200 table: the plant and the ``t200_model: table`` allocator model (§4).

:class:`T200Table` interpolates the measured table bilinearly in (PWM, V) as a plant, and
inverts it per voltage for the allocators (:class:`TableRay` along rays).  It is built from
arrays the caller reads, e.g. with :func:`read_t200_csv` from
``../shared/data/t200/t200_performance_10-20V.csv`` (the raw table is not shipped).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from marinesim.actuators.t200_fit import (
    PWM_NEUTRAL,
    ZERO_FORCE,
    Array,
    check_voltage,
    u_from_pwm,
)
from marinesim.core.errors import DataError

__all__ = ["T200_CSV_COLUMNS", "T200Table", "TableRay", "read_t200_csv"]


class T200Table:
    """The measured T200 table as a plant: bilinear interpolation in (PWM, V).

    Parameters
    ----------
    voltage, pwm, force, current : array_like, shape (M,)
        Long-format columns (V, µs, N, A) covering a full PWM × voltage grid, e.g. the columns
        ``voltage_V, pwm_us, force_N, current_A`` of ``t200_performance_10-20V.csv``.
    zero_force : float
        Threshold of the table allocator model's dead band [N].

    Raises
    ------
    DataError
        If the rows do not form a complete grid or contain non-finite values.

    Notes
    -----
    The plant is exact at every table row and zero inside each voltage's measured zero band.
    Outside 10–20 V use ``policy="clamp"`` (the plant clamps and the caller logs the event).
    """

    name = "table"

    def __init__(
        self,
        voltage: ArrayLike,
        pwm: ArrayLike,
        force: ArrayLike,
        current: ArrayLike,
        zero_force: float = ZERO_FORCE,
    ) -> None:
        v = np.asarray(voltage, dtype=float)
        p = np.asarray(pwm, dtype=float)
        f = np.asarray(force, dtype=float)
        i = np.asarray(current, dtype=float)
        if not (v.shape == p.shape == f.shape == i.shape) or v.ndim != 1:
            raise DataError("T200 table columns must be 1-D and of equal length")
        if not all(np.all(np.isfinite(x)) for x in (v, p, f, i)):
            raise DataError("T200 table contains non-finite values")
        if np.any(i < 0):
            k = int(np.argmax(i < 0))
            raise DataError(
                f"T200 table row {k + 1}: current {i[k]:g} A is negative (the supply current "
                "a motor draws is >= 0 in either direction)"
            )
        self.voltages = np.unique(v)
        self.pwms = np.unique(p)
        if (
            self.voltages.size < 2
            or self.pwms.size < 2
            or v.size != self.voltages.size * self.pwms.size
        ):
            raise DataError("T200 table rows do not form a complete PWM x voltage grid")
        iv = np.searchsorted(self.voltages, v)
        ip = np.searchsorted(self.pwms, p)
        self.force_grid = np.full((self.voltages.size, self.pwms.size), np.nan)
        self.current_grid = np.full_like(self.force_grid, np.nan)
        self.force_grid[iv, ip] = f
        self.current_grid[iv, ip] = i
        if np.isnan(self.force_grid).any():
            raise DataError(
                "T200 table rows do not form a complete PWM x voltage grid (duplicates)"
            )
        self.zero_force = float(zero_force)
        self._curve_cache: dict[float, tuple[Array, Array, Array, Array, Array, Array]] = {}

    # -- plant --------------------------------------------------------------------------------
    def plant(
        self, pwm: ArrayLike, voltage: ArrayLike, *, policy: Literal["error", "clamp"] = "clamp"
    ) -> tuple[Array, Array]:
        """Force [N] and current [A] for ESC pulse widths at supply voltages (bilinear).

        Parameters
        ----------
        pwm : array_like
            ESC pulse width [µs] as the ESC receives it (after any signal inversion), clipped to
            1100–1900 µs; shape broadcastable with V.
        voltage : array_like
            Supply voltage [V].
        policy : {"clamp", "error"}
            Out-of-range voltages are clamped (default) or raise ConfigError.

        Returns
        -------
        force, current : ndarray
            Shape of the broadcast; force positive = T200 forward.
        """
        v = check_voltage(voltage, policy=policy)
        p = np.clip(np.asarray(pwm, dtype=float), self.pwms[0], self.pwms[-1])
        p, v = np.broadcast_arrays(p, v)
        jv = np.clip(np.searchsorted(self.voltages, v, side="right") - 1, 0, self.voltages.size - 2)
        jp = np.clip(np.searchsorted(self.pwms, p, side="right") - 1, 0, self.pwms.size - 2)
        tv = (v - self.voltages[jv]) / (self.voltages[jv + 1] - self.voltages[jv])
        tp = (p - self.pwms[jp]) / (self.pwms[jp + 1] - self.pwms[jp])

        def interp(g: Array) -> Array:
            g00, g01 = g[jv, jp], g[jv, jp + 1]
            g10, g11 = g[jv + 1, jp], g[jv + 1, jp + 1]
            return (1 - tv) * ((1 - tp) * g00 + tp * g01) + tv * ((1 - tp) * g10 + tp * g11)

        return interp(self.force_grid), interp(self.current_grid)

    # -- table allocator model ----------------------------------------------------------------
    def _curves(self, v: float) -> tuple[Array, Array, Array, Array, Array, Array]:
        """Monotone (|F| ascending) branch curves at V: (F, PWM, I) forward, then reverse."""
        if v in self._curve_cache:
            return self._curve_cache[v]
        f, i = self.plant(self.pwms, np.full(self.pwms.shape, v))
        out: list[Array] = []
        for side in (1.0, -1.0):
            sel = (self.pwms > PWM_NEUTRAL) if side > 0 else (self.pwms < PWM_NEUTRAL)
            order = np.argsort(np.abs(self.pwms[sel] - PWM_NEUTRAL))
            fs, ps, cs = side * f[sel][order], self.pwms[sel][order], i[sel][order]
            thrust = fs > 0
            fs, ps, cs = fs[thrust], ps[thrust], cs[thrust]
            # keep the monotone part up to the extreme force
            stop = int(np.argmax(fs)) + 1
            fs, ps, cs = fs[:stop], ps[:stop], cs[:stop]
            keep = np.concatenate([[True], np.diff(np.maximum.accumulate(fs)) > 0])
            out += [fs[keep], ps[keep], cs[keep]]
        res = tuple(out)
        if len(self._curve_cache) > 1024:
            self._curve_cache.clear()
        self._curve_cache[v] = res  # type: ignore[assignment]
        return res  # type: ignore[return-value]

    def _per_voltage(self, x: Array, v: Array, fn: object) -> Array:
        x, v = np.broadcast_arrays(np.asarray(x, dtype=float), check_voltage(v))
        out = np.empty(x.shape)
        for vv in np.unique(v):
            m = v == vv
            out[m] = fn(x[m], float(vv))  # type: ignore[operator]
        return out

    def current(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """Measured current [A] for a T200-frame force [N] at V: piecewise-linear I(|F|) per branch.

        The curve starts at (0 N, 0 A) and runs through the table's thrust-producing rows at V.
        """

        def one(f: Array, v: float) -> Array:
            ff, _, fi, rf, _, ri = self._curves(v)
            pos = np.interp(f, np.concatenate([[0.0], ff]), np.concatenate([[0.0], fi]))
            neg = np.interp(-f, np.concatenate([[0.0], rf]), np.concatenate([[0.0], ri]))
            return np.where(f > 0, pos, np.where(f < 0, neg, 0.0))

        return self._per_voltage(
            np.asarray(force, dtype=float), np.asarray(voltage, dtype=float), one
        )

    def force_to_u(self, force: ArrayLike, voltage: ArrayLike) -> Array:
        """ESC output u [-] inverting the table at V; jumps the dead band to the first thrust PWM.

        Forces beyond the measured extreme give |u| > 1 (linear extrapolation of the last
        segment), i.e. not achievable.
        """

        def one(f: Array, v: float) -> Array:
            ff, fp, _, rf, rp, _ = self._curves(v)

            def inv(x: Array, fs: Array, ps: Array) -> Array:
                y = np.interp(x, fs, ps)
                slope = (ps[-1] - ps[-2]) / (fs[-1] - fs[-2])
                return np.where(x > fs[-1], ps[-1] + slope * (x - fs[-1]), y)

            up = u_from_pwm(inv(f, ff, fp))
            un = u_from_pwm(inv(-f, rf, rp))
            u = np.where(f > 0, up, un)
            return np.where(np.abs(f) < self.zero_force, 0.0, u)

        return self._per_voltage(
            np.asarray(force, dtype=float), np.asarray(voltage, dtype=float), one
        )

    def force_limits(self, voltage: ArrayLike, max_current: float = np.inf) -> tuple[Array, Array]:
        """Forward (> 0) and reverse (< 0) force bounds [N] at V: the envelope, cut at max_current."""
        v = check_voltage(voltage)

        def side(vv: float, fwd: bool) -> float:
            ff, _, fi, rf, _, ri = self._curves(vv)
            fs, cs = (ff, fi) if fwd else (rf, ri)
            fs0 = np.concatenate([[0.0], fs])
            cs0 = np.concatenate([[0.0], cs])
            if cs0[-1] <= max_current:
                return float(fs0[-1])
            k = int(np.argmax(cs0 > max_current))  # first sample over the limit
            t = (max_current - cs0[k - 1]) / (cs0[k] - cs0[k - 1])
            return float(fs0[k - 1] + t * (fs0[k] - fs0[k - 1]))

        flat = v.reshape(-1)
        fmax = np.array([side(float(x), True) for x in flat]).reshape(v.shape)
        fmin = -np.array([side(float(x), False) for x in flat]).reshape(v.shape)
        return fmax, fmin

    def breakpoints(self, voltage: float) -> tuple[Array, Array]:
        """Force magnitudes [N] of the table's thrust-producing points at V (forward, reverse).

        Between these the table model's current I(F) is linear (exactly piecewise-linear).
        """
        ff, _, _, rf, _, _ = self._curves(float(check_voltage(voltage)))
        return ff.copy(), rf.copy()

    def ray(self, force: Array, voltage: Array) -> TableRay:
        """Forces s_r·F_r along one ray per vehicle (see :meth:`T200Cubic.ray`)."""
        return TableRay(self, force, voltage)


class TableRay:
    """Rays F = s_r·F0_r of the table model (evaluated per unique voltage)."""

    def __init__(self, model: T200Table, force: Array, voltage: Array) -> None:
        self.model = model
        self.f = np.asarray(force, dtype=float)
        self.v = np.broadcast_to(np.asarray(voltage, dtype=float), (self.f.shape[0],))

    def total_current(self, s: Array) -> Array:
        """Σ_i I_i per row [A], shape (R,)."""
        return self.model.current(s[:, None] * self.f, self.v[:, None]).sum(axis=1)

    def evaluate(self, s: Array) -> tuple[Array, Array]:
        """ESC outputs u and currents [A] at scales s, each shape (R, n)."""
        f = s[:, None] * self.f
        return self.model.force_to_u(f, self.v[:, None]), self.model.current(f, self.v[:, None])

    def subset(self, rows: Array) -> TableRay:
        """The rays of rows ``rows``."""
        return TableRay(self.model, self.f[rows], self.v[rows])


#: Columns read from a T200 CSV, with the accepted magnitude of each value (unit).
T200_CSV_COLUMNS: dict[str, tuple[float, float, str]] = {
    "voltage_V": (0.0, 100.0, "V"),
    "pwm_us": (500.0, 2500.0, "µs"),
    "force_N": (-1e4, 1e4, "N"),
    "current_A": (0.0, 1e4, "A"),  # the supply current a motor draws, never negative
}


def read_t200_csv(path: object) -> T200Table:
    """Read Blue Robotics' long-format T200 CSV (``voltage_V, pwm_us, ..., force_N, ...``).

    Parameters
    ----------
    path : str or Path
        The CSV file (UTF-8; other columns are ignored).

    Returns
    -------
    T200Table

    Raises
    ------
    DataError
        ``file:line: column:`` for a missing column, a row with more or fewer cells than the
        header, a non-numeric or non-finite cell, a value outside :data:`T200_CSV_COLUMNS`,
        or rows that do not form the PWM × voltage grid.
    """
    import csv
    import math
    from pathlib import Path

    from marinesim.core.textio import read_input_text

    p = Path(str(path))
    text = read_input_text(p, what="T200 table", error=DataError)
    try:
        rows = list(csv.reader(text.splitlines()))
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", file=p) from None
    if not rows:
        raise DataError("the T200 table is empty (no header row)", file=p, line=1)
    header = [h.strip() for h in rows[0]]
    missing = [c for c in T200_CSV_COLUMNS if c not in header]
    if missing:
        raise DataError(f"missing column(s) {', '.join(missing)}", file=p, line=1)
    idx = {c: header.index(c) for c in T200_CSV_COLUMNS}
    data: dict[str, list[float]] = {c: [] for c in T200_CSV_COLUMNS}
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise DataError(
                f"row has {len(row)} cells, the header has {len(header)}", file=p, line=lineno
            )
        for c, (low, high, unit) in T200_CSV_COLUMNS.items():
            cell = row[idx[c]].strip()
            try:
                v = float(cell)
            except ValueError:
                raise DataError(f"not a number: {cell!r}", file=p, line=lineno, param=c) from None
            if not math.isfinite(v) or not low <= v <= high:
                raise DataError(
                    f"{cell!r} is outside [{low:g}, {high:g}] {unit}", file=p, line=lineno, param=c
                )
            data[c].append(v)
    try:
        return T200Table(*(data[c] for c in T200_CSV_COLUMNS))
    except DataError as exc:
        raise DataError(exc.message, file=p) from None

"""Thrust conversion functions F(ω): ``basic``, ``dead_zone`` (Bessa), ``linear_interp``.

Spec ``actuators_6dof.md`` §2.4 (UUV Simulator ``ThrusterConversionFcn.cc``).  Pure and
vectorised over any shape: the input ω (rotor speed after the propeller efficiency, the unit
of the table or constant — rad/s in every shipped vehicle) maps to the thrust F [N].
Registered under the registry kind ``thrust_conversion``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import Field, model_validator

from marinesim.core.params import ParamsBase, field

__all__ = [
    "BASIC",
    "DEAD_ZONE",
    "LINEAR_INTERP",
    "Basic",
    "ConversionModel",
    "DeadZone",
    "LinearInterp",
    "Params",
    "convert",
    "warnings_for",
]


class Basic(ParamsBase):
    """``basic``: F = c·|x|·x."""

    type: Literal["basic"] = "basic"
    rotor_constant: float = field(..., unit="N/(rad/s)^2", description="c")


class DeadZone(ParamsBase):
    """``dead_zone`` (Bessa, 2006): dead band on b = x·|x| between δ_L ≤ 0 and δ_R ≥ 0."""

    type: Literal["dead_zone"] = "dead_zone"
    rotor_constant_l: float = field(..., unit="N/(rad/s)^2", description="c_L >= 0")
    rotor_constant_r: float = field(..., unit="N/(rad/s)^2", description="c_R >= 0")
    delta_l: float = field(..., unit="(rad/s)^2", description="delta_L <= 0")
    delta_r: float = field(..., unit="(rad/s)^2", description="delta_R >= 0")

    @model_validator(mode="after")
    def _check(self) -> DeadZone:
        if self.rotor_constant_l < 0:
            raise ValueError(f"rotor_constant_l must be >= 0 (got {self.rotor_constant_l})")
        if self.rotor_constant_r < 0:
            raise ValueError(f"rotor_constant_r must be >= 0 (got {self.rotor_constant_r})")
        if self.delta_l > 0:
            raise ValueError(f"delta_l must be <= 0 (got {self.delta_l})")
        if self.delta_r < 0:
            raise ValueError(f"delta_r must be >= 0 (got {self.delta_r})")
        return self


class LinearInterp(ParamsBase):
    """``linear_interp``: piecewise-linear table, end values held outside it.

    Knots are sorted by input; for an input given twice the last output wins [upstream]
    (:func:`warnings_for` reports it).
    """

    type: Literal["linear_interp"] = "linear_interp"
    input_values: tuple[float, ...] = field(..., unit="rad/s", description="knot inputs")
    output_values: tuple[float, ...] = field(..., unit="N", description="knot outputs")

    @model_validator(mode="after")
    def _check(self) -> LinearInterp:
        if len(self.input_values) != len(self.output_values):
            raise ValueError(
                f"input_values ({len(self.input_values)}) and output_values "
                f"({len(self.output_values)}) must have the same length"
            )
        if len(self.input_values) < 2:
            raise ValueError("at least 2 knots are needed")
        return self

    def table(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The effective knots: sorted by input, duplicates resolved (last output wins).

        Returns
        -------
        inputs, outputs : ndarray, shape (m,)
            Strictly increasing inputs and their outputs.
        """
        knots: dict[float, float] = {}
        for i, o in zip(self.input_values, self.output_values, strict=True):
            knots[float(i)] = float(o)
        xs = np.array(sorted(knots), dtype=float)
        return xs, np.array([knots[x] for x in xs], dtype=float)


#: Discriminated union of the conversion parameter models (key ``type``).
Params = Annotated[Basic | DeadZone | LinearInterp, Field(discriminator="type")]

AnyConversion = Basic | DeadZone | LinearInterp


def _interp(
    xs: NDArray[np.float64], ys: NDArray[np.float64], x: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Table lookup with held ends and exact knots (spec §2.4)."""
    n = xs.size
    idx = np.searchsorted(xs, x, side="left")  # first knot >= x (std::map::lower_bound)
    hi = np.clip(idx, 1, n - 1)
    i0, i1 = xs[hi - 1], xs[hi]
    o0, o1 = ys[hi - 1], ys[hi]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mid = (o0 * (i1 - x) + o1 * (x - i0)) / (i1 - i0)
    exact = xs[np.clip(idx, 0, n - 1)] == x
    out = np.where(exact, ys[np.clip(idx, 0, n - 1)], mid)
    out = np.where(idx == 0, ys[0], out)
    out = np.where(idx >= n, ys[-1], out)
    return out


def convert(params: AnyConversion, x: ArrayLike) -> NDArray[np.float64]:
    """Thrust F(x) of a conversion function, batched.

    Parameters
    ----------
    params : Basic, DeadZone or LinearInterp
        Conversion parameters.
    x : array_like, any shape
        Rotor speed after the propeller efficiency (e.g. rad/s).

    Returns
    -------
    ndarray, shape of ``x``
        Thrust [N].
    """
    x = np.asarray(x, dtype=float)
    if isinstance(params, Basic):
        return params.rotor_constant * np.abs(x) * x
    if isinstance(params, DeadZone):
        b = x * np.abs(x)
        left = params.rotor_constant_l * (b - params.delta_l)
        right = params.rotor_constant_r * (b - params.delta_r)
        return np.where(b <= params.delta_l, left, np.where(b >= params.delta_r, right, 0.0))
    xs, ys = params.table()
    return _interp(xs, ys, x)


def warnings_for(params: AnyConversion) -> list[tuple[str, str]]:
    """Accepted-but-surprising settings of a conversion, as (param, message) pairs.

    Parameters
    ----------
    params : Basic, DeadZone or LinearInterp
        Conversion parameters.

    Returns
    -------
    list of (str, str)
        Relative parameter name and message; empty when nothing is surprising.
    """
    out: list[tuple[str, str]] = []
    if isinstance(params, LinearInterp):
        seen: dict[float, int] = {}
        for j, i in enumerate(params.input_values):
            if i in seen:
                out.append(
                    (
                        "input_values",
                        f"knot input {i!r} given twice (positions {seen[i]} and {j}): the "
                        f"last output ({params.output_values[j]!r}) wins (UUV Simulator semantics)",
                    )
                )
            seen[i] = j
    return out


def is_finite_table(params: LinearInterp) -> bool:
    """True when every knot is finite (always, since ``ParamsBase`` forbids inf/NaN)."""
    return all(math.isfinite(v) for v in params.input_values + params.output_values)


@dataclass(frozen=True)
class ConversionModel:
    """A registered conversion variant: its ``Params`` model and :func:`convert`."""

    name: str
    Params: type[ParamsBase]
    convert: Callable[..., NDArray[np.float64]] = convert


BASIC = ConversionModel("basic", Basic)
DEAD_ZONE = ConversionModel("dead_zone", DeadZone)
LINEAR_INTERP = ConversionModel("linear_interp", LinearInterp)

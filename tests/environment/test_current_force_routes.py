"""CurrentField.force: the compiled loop and the numpy route give the program's sums, bit for bit.

The program (``getLocalForce``, spec usimmarine.md §8.3) loops over the vectors in file order,
adding w·v of each vector in range; :func:`force_row` is that loop for one point.  Both routes
of :meth:`CurrentField.force` must give exactly the bits of that loop written in plain Python.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.environment import current as C


def _program(fld: C.CurrentField, x: float, y: float) -> tuple[float, float]:
    """The program's loop in plain Python floats (file order, strict d < R, divide by count).

    ``hypot`` is the C library's (numpy's), which the program calls; Python's own
    ``math.hypot`` rounds differently in the last bit for some arguments.
    """
    sx = sy = 0.0
    n = 0
    for xi, yi, vx, vy in zip(fld.x, fld.y, fld.vx, fld.vy, strict=True):
        d = float(np.hypot(x - float(xi), y - float(yi)))  # C's hypot, as the program
        if d < fld.radius:
            pct = 1.0 - d / fld.radius
            # a product, as numpy squares; C pow(x, 2) may differ in the last bit
            w = pct * pct
            sx += w * float(vx)
            sy += w * float(vy)
            n += 1
    return (sx / n, sy / n) if n else (0.0, 0.0)


def _field(m: int, seed: int) -> C.CurrentField:
    rng = np.random.default_rng(seed)
    return C.CurrentField(
        name="t",
        radius=60.0,
        x=rng.uniform(0, 200, m),
        y=rng.uniform(0, 200, m),
        vx=rng.normal(0, 1, m),
        vy=rng.normal(0, 1, m),
    )


@pytest.mark.parametrize("m", [1, 7, 8, 15, 40, 300])
def test_both_routes_are_the_programs_loop_bit_for_bit(
    m: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fld = _field(m, m)
    rng = np.random.default_rng(100 + m)
    x = rng.uniform(-80, 280, 3000)
    y = rng.uniform(-80, 280, 3000)
    # points exactly at distance R of vector 0 (strictly outside) and just inside
    x[:2] = fld.x[0] + fld.radius, fld.x[0] + np.nextafter(fld.radius, 0.0)
    y[:2] = fld.y[0]
    want = np.array([_program(fld, a, b) for a, b in zip(x.tolist(), y.tolist(), strict=True)])
    monkeypatch.setattr(C, "FORCE_COMPILED_MIN", 1)  # compiled loop
    fx_c, fy_c = fld.force(x, y)
    monkeypatch.setattr(C, "FORCE_COMPILED_MIN", 2**62)  # numpy over the pairs
    fx_n, fy_n = fld.force(x, y)
    for got in ((fx_c, fy_c), (fx_n, fy_n)):
        assert np.array_equal(got[0], want[:, 0]) and np.array_equal(got[1], want[:, 1])
    assert np.array_equal(np.signbit(fx_c), np.signbit(fx_n))
    assert (fx_c[0], fy_c[0]) == _program(fld, float(x[0]), float(y[0]))


def test_routes_keep_the_shape_of_the_points(monkeypatch: pytest.MonkeyPatch) -> None:
    fld = _field(15, 3)
    x = np.linspace(0, 200, 600).reshape(20, 30)
    for lim in (1, 2**62):
        monkeypatch.setattr(C, "FORCE_COMPILED_MIN", lim)
        fx, fy = fld.force(x, 100.0)
        assert fx.shape == fy.shape == (20, 30)
        assert (fx[3, 4], fy[3, 4]) == _program(fld, float(x[3, 4]), 100.0)

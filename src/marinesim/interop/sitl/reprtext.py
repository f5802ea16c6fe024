"""Python's ``repr`` of a float, in compiled code (the SIM_JSON replies' number text).

The replies to SITL carry every number as ``json.dumps`` writes it: Python's shortest
round-trip ``repr`` (``NaN`` / ``Infinity`` for the non-finite).  :func:`write_repr` writes
the same characters from compiled code for the doubles it can do exactly with 64-bit
integers — zero, the non-finite, and normal doubles from 1e-10 up to 1e16 in magnitude (a
physical state almost always) — and reports any other so that the caller writes it with
``repr`` instead.

The digits: x = M·2^E; the interval of reals that read back as x (half an ulp each side,
a quarter below a power of two, its ends included when M is even) is scaled by 10^q so that
x·10^q has 18 digits, each end exactly (M·5^q is a 128-bit product of two 64-bit
integers, shifted by E + q), and decimal digits are dropped while the interval still holds a
shorter number; the last digit is then rounded to the nearest, ties to even (as David Gay's
``dtoa`` mode 0, which CPython's ``repr`` uses, and the Ryū papers describe).  The layout:
positional when the decimal point falls within −4 < point ≤ 16 of the first digit (``.0``
after an integer), else ``d.ddde±XX``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

__all__ = ["write_repr", "write_reply"]

_U = np.uint64
_M32 = _U(0xFFFFFFFF)
_S32 = _U(32)
_POW5 = np.array([5**i for i in range(28)], dtype=np.uint64)  # 5^27 < 2^63
_LO = 1e-10
_HI = 1e16


@numba.njit(cache=True, inline="always")
def _mul128(a: Any, b: Any) -> tuple:
    """(hi, lo) of the 128-bit product of two uint64."""
    a0 = a & _M32
    a1 = a >> _S32
    b0 = b & _M32
    b1 = b >> _S32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _S32) + (p01 & _M32) + (p10 & _M32)
    lo = (p00 & _M32) | (mid << _S32)
    hi = p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32)
    return hi, lo


@numba.njit(cache=True)
def _scaled(m: Any, q: int, t: int) -> tuple:
    """(floor(m·5^q·2^t), exact?, fits?) for uint64 m, 0 ≤ q ≤ 27."""
    hi, lo = _mul128(m, _POW5[q])
    if t >= 0:
        if hi != _U(0) or t > 62 or (lo >> _U(63 - t)) != _U(0):
            return _U(0), False, False
        return lo << _U(t), True, True
    s = -t
    if s >= 128:
        return _U(0), False, False
    if s >= 64:
        r = hi >> _U(s - 64)
        rem = (hi & ((_U(1) << _U(s - 64)) - _U(1))) | lo if s > 64 else lo
        return r, rem == _U(0), True
    if (hi >> _U(s)) != _U(0):
        return _U(0), False, False
    r = (lo >> _U(s)) | (hi << _U(64 - s))
    rem = lo & ((_U(1) << _U(s)) - _U(1))
    return r, rem == _U(0), True


@numba.njit(cache=True)
def _put(buf: Any, n: int, text: Any) -> int:
    for i in range(len(text)):
        buf[n + i] = text[i]
    return n + len(text)


@numba.njit(cache=True)
def write_repr(x: float, buf: Any, n: int) -> int:
    """Write ``repr(x)`` (JSON's NaN / Infinity for the non-finite) at ``buf[n:]``; returns
    the end, or −1 when ``x`` is outside what this does exactly (then nothing is promised
    about ``buf[n:]``).  The last 20 bytes of ``buf`` are scratch space (keep ``n`` + 26
    below ``len(buf)`` − 20)."""
    if x != x:
        buf[n], buf[n + 1], buf[n + 2] = 78, 97, 78  # NaN
        return n + 3
    if x < 0.0 or (x == 0.0 and math.copysign(1.0, x) < 0.0):
        buf[n] = 45  # -
        n += 1
        x = -x
    if x == 0.0:
        buf[n], buf[n + 1], buf[n + 2] = 48, 46, 48  # 0.0
        return n + 3
    if x == math.inf:
        for i, c in enumerate((73, 110, 102, 105, 110, 105, 116, 121)):  # Infinity
            buf[n + i] = c
        return n + 8
    if x < _LO or x >= _HI:
        return -1
    m, e = math.frexp(x)  # x = m·2^e, 0.5 <= m < 1
    mant = _U(np.int64(m * 9007199254740992.0))  # M = m·2^53 (exact), 2^52 <= M < 2^53
    e2 = e - 53 - 2  # x = 4M·2^e2
    even = (mant & _U(1)) == _U(0)
    mv = mant << _U(2)
    mp = mv + _U(2)
    mm = mv - _U(1) if mant == _U(1 << 52) else mv - _U(2)
    q = 17 - int(math.floor(math.log10(x)))  # vr: 18 digits (at least one to round on)
    vr, vr_exact, ok = _scaled(mv, q, e2 + q)
    if ok and vr < _U(10**17):
        q += 1
        vr, vr_exact, ok = _scaled(mv, q, e2 + q)
    if not ok or q < 0 or q > 27:
        return -1
    vp, vp_exact, ok1 = _scaled(mp, q, e2 + q)
    vm, vm_exact, ok2 = _scaled(mm, q, e2 + q)
    if not (ok1 and ok2) or vp >= _U(1 << 62):
        return -1
    if vp_exact and not even:
        vp -= _U(1)  # the upper end is not read back as x
    vm_zeros = vm_exact  # the lower end is exactly vm (and belongs if M is even)
    vr_zeros = vr_exact
    last = 0
    removed = 0
    ten = _U(10)
    while vp // ten > vm // ten:
        vm_zeros = vm_zeros and vm % ten == _U(0)
        vr_zeros = vr_zeros and last == 0
        last = int(vr % ten)
        vr //= ten
        vp //= ten
        vm //= ten
        removed += 1
    if vm_zeros and even:
        while vm % ten == _U(0) and vm > _U(0):
            vr_zeros = vr_zeros and last == 0
            last = int(vr % ten)
            vr //= ten
            vp //= ten
            vm //= ten
            removed += 1
    if vr_zeros and last == 5 and vr % _U(2) == _U(0):
        last = 4  # exactly half-way: to even
    out = vr
    if (vr == vm and not (even and vm_zeros)) or last >= 5:
        out = vr + _U(1)
    # digits of out, exponent: value = out·10^(removed − q)
    digits = buf[buf.shape[0] - 20 :]  # scratch at the buffer's end (no allocation)
    nd = 0
    v = out
    while v > _U(0):
        digits[nd] = 48 + int(v % ten)
        v //= ten
        nd += 1
    point = nd + removed - q  # the decimal point after this many digits
    if -4 < point <= 16:
        if point <= 0:
            buf[n], buf[n + 1] = 48, 46  # 0.
            n += 2
            for _ in range(-point):
                buf[n] = 48
                n += 1
            for i in range(nd):
                buf[n] = digits[nd - 1 - i]
                n += 1
        elif point < nd:
            for i in range(point):
                buf[n] = digits[nd - 1 - i]
                n += 1
            buf[n] = 46
            n += 1
            for i in range(point, nd):
                buf[n] = digits[nd - 1 - i]
                n += 1
        else:
            for i in range(nd):
                buf[n] = digits[nd - 1 - i]
                n += 1
            for _ in range(point - nd):
                buf[n] = 48
                n += 1
            buf[n], buf[n + 1] = 46, 48  # .0
            n += 2
        return n
    buf[n] = digits[nd - 1]
    n += 1
    if nd > 1:
        buf[n] = 46
        n += 1
        for i in range(1, nd):
            buf[n] = digits[nd - 1 - i]
            n += 1
    ex = point - 1
    buf[n] = 101  # e
    buf[n + 1] = 45 if ex < 0 else 43
    n += 2
    ex = abs(ex)
    if ex >= 100:
        buf[n] = 48 + ex // 100
        n += 1
    buf[n] = 48 + (ex // 10) % 10
    buf[n + 1] = 48 + ex % 10
    return n + 2


@numba.njit(cache=True)
def write_reply(vals: Any, nval: int, pieces: Any, starts: Any, buf: Any) -> int:
    """``pieces[starts[i]:starts[i + 1]]`` then ``vals[i]`` for i < ``nval``, then the piece
    ``nval``; returns the length written, or −1 when a number needs ``repr``."""
    n = 0
    for i in range(nval + 1):
        for j in range(starts[i], starts[i + 1]):
            buf[n] = pieces[j]
            n += 1
        if i < nval:
            n = write_repr(vals[i], buf, n)
            if n < 0:
                return -1
    return n

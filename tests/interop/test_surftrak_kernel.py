"""The SURFTRAK block's generated compiled tick (numba) against the plugins' ticks and the
original implementation.

* The logs of the sawtooth and trapezoid harness runs (seeds 0-2, 150 s) hash to the digests
  recorded from the implementation before the compiled loop existed, on both paths
  (bit-identical, not merely close).
* Where the loop hands back to the Python objects (mode switch, first target, pilot release,
  surface/bottom rules), the compiled and Python paths stay bit-identical.
* The compiled pure control-law functions return exactly the Python floats' results.
* Without numba, runs fall back to the Python path; ``jit=True`` says what is missing.
"""

from __future__ import annotations

import hashlib
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.control import posz
from marinesim.control.pilot import PilotScript
from marinesim.control.surftrak import ALT_HOLD
from marinesim.core.errors import ConfigError, DependencyNotInstalled
from marinesim.engine.plugins import surftrak_laws
from marinesim.interop import surftrak_runner as runner
from marinesim.interop.surftrak_runner import run_surftrak

try:
    import numba  # noqa: F401

    HAVE_NUMBA = True
except ImportError:
    HAVE_NUMBA = False

needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")

#: sha256 (first 16 hex digits) of the logs produced by the pre-kernel implementation
#: (x86-64, glibc libm): all columns, the stamped rangefinder rows and the GCS messages.
DIGESTS = {
    ("sawtooth", 0): "9d84dd88f56a53c1",
    ("sawtooth", 1): "a4cb004e01f34ea6",
    ("sawtooth", 2): "d41e7930606bd4c3",
    ("trapezoid", 0): "0c3e39135c9e84f8",
    ("trapezoid", 1): "f4fd206d930564b1",
    ("trapezoid", 2): "82c473bb3e08c42b",
}


def digest(res: runner.SurftrakResult) -> str:
    """Hash of a run's logs (exact bytes)."""
    h = hashlib.sha256()
    for k in sorted(res.columns):
        h.update(k.encode())
        h.update(np.ascontiguousarray(res.columns[k]).tobytes())
    for k in sorted(res.stamped):
        h.update(k.encode())
        h.update(np.ascontiguousarray(res.stamped[k]).tobytes())
    for m in res.messages:
        h.update(repr(m).encode())
    return h.hexdigest()[:16]


def assert_same_run(a: runner.SurftrakResult, b: runner.SurftrakResult) -> None:
    """Bit-identical logs, stamped rows and messages."""
    assert a.columns.keys() == b.columns.keys()
    for k in a.columns:
        np.testing.assert_array_equal(a.columns[k], b.columns[k], err_msg=k, strict=True)
    for k in a.stamped:
        np.testing.assert_array_equal(a.stamped[k], b.stamped[k], err_msg=k, strict=True)
    assert a.messages == b.messages


@pytest.mark.parametrize("case", [c for c in sorted(DIGESTS) if c[1] == 0])
def test_python_path_matches_recorded_digest(case: tuple[str, int]) -> None:
    # one seed per terrain (about 18 s of CPU each): the compiled path replays all six below,
    # and both paths run the same law source, the seed changing only the noise drawn
    res = run_surftrak(case[0], seed=case[1], jit=False)
    assert digest(res) == DIGESTS[case]


@needs_numba
@pytest.mark.parametrize("case", sorted(DIGESTS))
def test_compiled_path_matches_recorded_digest(case: tuple[str, int]) -> None:
    res = run_surftrak(case[0], seed=case[1], jit=True)
    assert digest(res) == DIGESTS[case]
    assert res.messages, "the first-target message comes from the Python hand-back"


@needs_numba
@pytest.mark.parametrize(
    "kw",
    [
        # pilot takes over, releases (new target message), dives, releases again
        {
            "pilot": PilotScript(
                times=(12.0, 15.0, 18.0, 21.0), sticks=(800.0, 500.0, 100.0, 500.0)
            ),
            "terrain": "sawtooth",
        },
        {"mode": ALT_HOLD, "terrain": "trapezoid"},  # ALT_HOLD throughout
        {"start_z": -0.05, "terrain": "sawtooth"},  # surface rule, "descend below" warning
        {"contact_floor": -11.5, "terrain": "zeros"},  # resting on a ledge: bottom rule
        {"terrain": "test_signal_quality", "seed": 4},  # unhealthy stretches: resets
        {"terrain": "stress", "delay": 0.8, "noise": 0.2},
    ],
    ids=["pilot", "althold", "surface", "bottom", "signal_quality", "stress"],
)
def test_compiled_equals_python_across_handbacks(kw: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = run_surftrak(duration=30.0, jit=False, **kw)
        b = run_surftrak(duration=30.0, jit=True, **kw)
    assert_same_run(a, b)


#: The laws' scalar L1 functions compiled with a Python entry point (once per session).
_COMPILED: dict[str, object] = {}
finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)
positive = st.floats(1e-2, 1e4, allow_nan=False, allow_infinity=False)


@needs_numba
@settings(max_examples=300, deadline=None)
@given(e=finite, p=positive, d=positive, v=finite, a=finite, lim=st.sampled_from([-1.0, 0.0, 1.0]))
def test_compiled_functions_equal_python_floats(
    e: float, p: float, d: float, v: float, a: float, lim: float
) -> None:
    import numba

    names = ("sqrt_controller", "shape_vel_accel", "shape_pos_vel_accel", "climb_rate_step",
             "update_step")  # fmt: skip
    fn = {name: _COMPILED.get(name) or _COMPILED.setdefault(
        name, numba.njit(surftrak_laws.scalar_law(name))) for name in names}  # fmt: skip
    dt = 0.0025
    for step in (0.0, dt):
        assert fn["sqrt_controller"](e, p, d, step) == posz.sqrt_controller(e, p, d, step)
    args = (e, a, v, a * 0.5, -d, d * 0.7 + 1.0, p * 100.0, dt)
    for tot in (True, False):
        assert fn["shape_vel_accel"](*args, tot) == posz.shape_vel_accel(*args, tot)
    pargs = (e, v, a, v * 0.1, a * 0.2, e * 0.3, -500.0, 500.0, -d, d + 1.0, p * 50.0, dt, False)
    assert fn["shape_pos_vel_accel"](*pargs) == posz.shape_pos_vel_accel(*pargs)
    g = posz.PosZGains(jerk_z=8.0, accel_z=500.0)
    cargs = (v, e, v, a, e * 0.5, v * 0.5, a * 0.5, e, lim, e * 0.01, v * 0.01, g.shaping)
    assert fn["climb_rate_step"](*cargs) == posz.climb_rate_step(*cargs)
    for reset in (True, False):
        uargs = (e, v, a, lim != 0, e + 1.0, v, a, v * 0.1, a * 0.1, p, reset, g.loops)
        assert fn["update_step"](*uargs) == posz.update_step(*uargs)


def test_falls_back_to_python_without_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba -> ImportError
    res = run_surftrak("sawtooth", duration=5.0, seed=1)
    ref = run_surftrak("sawtooth", duration=5.0, seed=1, jit=False)
    assert_same_run(res, ref)
    with pytest.raises(DependencyNotInstalled, match="numba"):
        run_surftrak("sawtooth", duration=1.0, jit=True)


def test_env_switch_disables_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARINESIM_JIT", "0")
    res = run_surftrak("sawtooth", duration=2.0, seed=1)
    assert res.manifest["compiled_ticks"] == 0
    monkeypatch.delenv("MARINESIM_JIT")
    assert run_surftrak("sawtooth", duration=2.0, seed=1).manifest["compiled_ticks"] > 700


def test_compiled_span_runs_many_vehicles_bit_identically() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {"pilot": PilotScript(times=(6.0, 8.0), sticks=(800.0, 500.0)), "terrain": "stress"}
        a = run_surftrak(duration=20.0, n=5, jit=False, seed=3, **kw)
        b = run_surftrak(duration=20.0, n=5, jit=True, seed=3, **kw)
    assert b.manifest["compiled_ticks"] > 7000 and a.manifest["compiled_ticks"] == 0
    assert_same_run(a, b)
    one = run_surftrak(duration=20.0, n=1, jit=True, seed=3, **kw)
    for k, v in one.columns.items():
        assert np.array_equal(v[0], b.columns[k][0]), k  # N = 1 is row 0 of the batch


def test_compiled_tick_of_19_vehicles_equals_plugin_ticks() -> None:
    n = 19
    a = run_surftrak("trapezoid", duration=8.0, n=n, jit=False, seed=5)
    b = run_surftrak("trapezoid", duration=8.0, n=n, jit=True, seed=5)
    assert b.manifest["compiled_ticks"] > 2500
    assert_same_run(a, b)


def test_jit_true_rejects_python_only_features() -> None:
    with pytest.raises(ConfigError, match="trace"):
        run_surftrak("sawtooth", duration=1.0, trace=True, jit=True)
    with pytest.raises(ConfigError, match="Python hooks"):
        run_surftrak("sawtooth", duration=1.0, thrust_override=lambda t, u: u, jit=True)

"""The SURFTRAK block's generated compiled tick against the plugins' ticks, on the engine route.

``surftrak``, ``sitl_vertical`` and ``rangefinder`` declare their laws
(:mod:`marinesim.engine.plugins.surftrak_laws`); the generated tick runs the same tick as the
plugins (control, heave step, sensor at t_{k+1}, frame):
every recorded signal, the events and the bus/call counts must be bit-identical whether the
ticks run compiled or through the plugins; a non-finite step, a hand-back and a full chunk
give the tick back to the plugins.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.scenario.build import load_simulation
from marinesim.testing import assert_runs_identical

numba = pytest.importorskip("numba")


def _run(compiled: bool | None, **sets: object):  # noqa: ANN202
    sim = load_simulation("surftrak_sawtooth", sets={"time.end": 20, **sets}, seed=3)
    sim.compiled = compiled
    return sim.run()


def _same(a, b) -> None:  # noqa: ANN001
    assert_runs_identical(a, b)


def test_bundled_scenario_compiled_equals_plugin_ticks() -> None:
    a, b = _run(False), _run(True)
    _same(a, b)
    assert a.manifest["compiled_ticks"] == 0
    assert b.manifest["compiled_ticks"] > 0.99 * 8000  # a handful of plugin ticks only
    assert a.manifest["bus"] == b.manifest["bus"]
    calls = lambda r: [p["calls"] for p in r.manifest["plugins"]]  # noqa: E731
    assert calls(a) == calls(b)


@pytest.mark.parametrize("every_hz", [400, 10, 400 / 57])
def test_decimated_frames_match(every_hz: float) -> None:
    _same(_run(False, log_rate=every_hz), _run(True, log_rate=every_hz))


def test_small_chunks_flush_between_spans() -> None:
    from marinesim.engine import recorder

    old = recorder._MAX_ROWS
    recorder._MAX_ROWS = 97  # the span stops at every full chunk, the recorder flushes
    try:
        _same(_run(False), _run(True))
    finally:
        recorder._MAX_ROWS = old


def test_nonfinite_divergence_is_the_plugins_tick() -> None:
    sets = {"entities.0.motion.params.thrust_accel": 1e308}
    with pytest.warns(RuntimeWarning):
        a, b = _run(False, **sets), _run(True, **sets)
    assert a.status == b.status == "diverged"
    _same(a, b)


def test_tick_source_names_the_three_laws_in_phase_order() -> None:
    from marinesim.engine.compiled.generate import tick_source
    from marinesim.engine.compiled.route import plan

    sim = load_simulation("surftrak_sawtooth", sets={"time.end": 1}, seed=3)
    sim.step(1)
    why, entries, sparse = plan(sim)
    assert why is None and not sparse
    src = tick_source([laws for _s, laws in entries])[0]
    order = [src.index(f"import {n} as") for n in ("surftrak_control", "heave_substep", "rangefinder_sense")]
    assert order == sorted(order)
    assert "from marinesim.engine.plugins.surftrak_laws import" in src


def test_python_hooks_say_why_compiled_cannot_apply() -> None:
    from marinesim.engine.compiled.route import plan

    sim = load_simulation("surftrak_sawtooth", sets={"time.end": 1}, seed=3)
    next(s for s in sim.slots if s.plugin.kind == "controller").plugin.events.append((0.5, print))
    sim.step(1)
    why, _, _ = plan(sim)
    assert why is not None and "surftrak" in why and "events" in why


def test_compiled_true_says_why_it_cannot() -> None:
    sim = load_simulation("surftrak_sawtooth", sets={"time.end": 1, "time.time_warp": 1.0})
    sim.compiled = True
    with pytest.raises(ConfigError, match="time_warp"):
        sim.run()
    sim = load_simulation(
        "demo_survey", sets={"time.end": 1, "entities.0.motion.plugin": "usm_v22"}
    )  # (demo_survey itself compiles: tests/engine/test_compiled_usm.py)
    sim.compiled = True
    with pytest.raises(ConfigError, match="variant 'usm_v22'"):
        sim.run()


def test_assert_runs_identical_sees_one_changed_bit() -> None:
    a = _run(True)
    b = _run(True)
    assert_runs_identical(a, b)
    sig = b.signals["surftrak.DSAlt"].values
    i = np.flatnonzero(np.isfinite(sig.ravel()))[-1]
    sig.ravel()[i] = np.nextafter(sig.ravel()[i], np.inf)  # one ulp
    with pytest.raises(AssertionError, match="surftrak.DSAlt"):
        assert_runs_identical(a, b)


def test_generated_loop_interpreted_equals_plugin_ticks(monkeypatch) -> None:  # noqa: ANN001
    # MARINESIM_JIT=interp: the generated source run by Python, the laws' scalar L1 functions
    # as Python functions: the same floats as the plugins' objects (a check on the generator)
    monkeypatch.setenv("MARINESIM_JIT", "interp")
    sim = load_simulation("surftrak_sawtooth", sets={"time.end": 3}, seed=3)
    b = sim.run()
    assert b.manifest["compiled_ticks"] > 1150
    monkeypatch.delenv("MARINESIM_JIT")
    sim = load_simulation("surftrak_sawtooth", sets={"time.end": 3}, seed=3)
    sim.compiled = False
    _same(sim.run(), b)


def test_the_scalar_trunc_keeps_numpys_bits() -> None:
    # numba's CUDA target has no np.trunc: the laws' scalar form (the rangefinder's
    # centimetres, the CTUN rates) must give its bits, −0.0, ±inf, NaN and |x| ≥ 2⁵² included
    from marinesim.engine.plugins.surftrak_laws import trunc

    rng = np.random.default_rng(5)
    xs = np.concatenate([
        rng.normal(size=20_000) * 10.0 ** rng.uniform(-6, 18, 20_000),
        [0.0, -0.0, -0.5, 0.5, -0.999999, 1.0, -1.0, 2.0**52 + 0.5, -(2.0**53), np.inf, -np.inf],
    ])  # fmt: skip
    got = np.array([trunc(float(x)) for x in xs])
    assert got.tobytes() == np.trunc(xs).tobytes()
    assert np.isnan(trunc(float("nan")))
    assert np.signbit(trunc(-0.25))  # (−0.0, as np.trunc)

"""Public conformance checkers for plugins (``check_plugin``).

``check_plugin(cls)`` runs a plugin class through the engine contract (architecture spec §3):
unknown parameter keys are rejected with a ConfigError, topic declarations are well formed,
a run is deterministic for a seed, the N = 1 run equals row 0 of an N = 5 run bit for bit,
every signal it logs has N rows, and a controller or autonomy runs without truth access
(no ``uses_truth``).  It raises ``AssertionError`` listing what failed, and returns the names
of the checks that passed.

``registered_plugins()`` lists every plugin class the registry knows (each package's
``registry.toml`` and the ``marinesim.plugins`` entry points), so that a test runs ``check_plugin`` over all of them
rather than over a hand-kept list; ``check_registered()`` does exactly that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from marinesim.core import registry
from marinesim.core.errors import ConfigError, EngineError
from marinesim.core.libm import numpy_matches_libm
from marinesim.core.params import validate
from marinesim.core.state import VehicleState
from marinesim.engine.entity import BlockSpec, PluginSpec, Spawn
from marinesim.engine.plugin import HOOKS, Plugin, overridden_hooks
from marinesim.engine.results import RunResult
from marinesim.engine.simulation import Simulation

__all__ = [
    "HarnessMotion",
    "HarnessSetpoints",
    "ROUTES_RTOL",
    "assert_runs_identical",
    "assert_values_identical",
    "build_params",
    "check_plugin",
    "check_registered",
    "registered_plugins",
]


class HarnessMotion(Plugin):
    """Test motion: constant-speed arcs (heading rate 2 deg/s) at the spawn depth; no inputs."""

    kind: ClassVar[str] = "motion"

    def substep(self, ctx: Any, rng: Any) -> None:
        """Advance the arc over one substep."""
        st = ctx.truth
        h = np.radians(st.heading_deg + 2.0 * ctx.h)
        speed = 1.5
        pos = st.pos.copy()
        pos[:, 0] += speed * np.cos(h) * ctx.h
        pos[:, 1] += speed * np.sin(h) * ctx.h
        new = VehicleState.from_pose(
            pos[:, 0], pos[:, 1], pos[:, 2], np.degrees(h), speed=np.full(ctx.n, speed)
        )
        ctx.set_truth(new)


class HarnessSetpoints(Plugin):
    """Test autonomy: publishes DESIRED_HEADING/SPEED/DEPTH that change with time."""

    kind: ClassVar[str] = "autonomy"
    publishes: ClassVar[dict[str, str]] = {
        "DESIRED_HEADING": "double",
        "DESIRED_SPEED": "double",
        "DESIRED_DEPTH": "double",
    }

    def autonomy(self, ctx: Any, rng: Any) -> None:
        """Publish the setpoints of time t."""
        ctx.publish("DESIRED_HEADING", (30.0 * ctx.t) % 360.0)
        ctx.publish("DESIRED_SPEED", 1.0 + 0.1 * ctx.t)
        ctx.publish("DESIRED_DEPTH", 2.0)


def build_params(cls: type[Plugin], mapping: Mapping[str, Any] | None) -> Any:
    """Validated params of ``cls`` from a mapping (through ``build_params`` where defined)."""
    if hasattr(cls, "build_params"):
        return cls.build_params(dict(mapping or {}))[0]  # type: ignore[attr-defined]
    return validate(cls.Params, dict(mapping or {}))


def _run(cls: type[Plugin], params: Any, n: int, seed: int, ticks: int, dt: float) -> RunResult:
    plugin = cls("under_test", params)
    kind = cls.kind
    motion = PluginSpec(plugin) if kind == "motion" else PluginSpec(HarnessMotion("harness_motion"))
    controllers: tuple[PluginSpec, ...] = ()
    autonomy: tuple[PluginSpec, ...] = ()
    sensors: tuple[PluginSpec, ...] = ()
    world: tuple[PluginSpec, ...] = ()
    setpoints = PluginSpec(HarnessSetpoints("harness_setpoints"))
    if kind == "controller":
        controllers = (PluginSpec(plugin),)
        autonomy = (setpoints,)
    elif kind == "autonomy":
        autonomy = (PluginSpec(plugin),)
    elif kind == "sensor":
        sensors = (PluginSpec(plugin),)
    else:  # motion, and the world kinds (metric, interaction, network)
        autonomy = (setpoints,)
        if kind != "motion":
            world = (PluginSpec(plugin),)
    block = BlockSpec(
        "block",
        n,
        motion,
        controllers,
        autonomy,
        sensors,
        Spawn(north=1.0, east=2.0, depth=0.5, heading_deg=30.0, speed=1.0),
    )
    sim = Simulation([block], dt=dt, end=ticks * dt, seed=seed, world=world)
    return sim.run()


def _same(a: RunResult, b: RunResult, rows_b: slice | None = None, rtol: float = 0.0) -> list[str]:
    bad = []
    if set(a.signals) != set(b.signals):
        return [f"signal names differ: {sorted(set(a.signals) ^ set(b.signals))}"]
    for name in a.signals:
        va = a[name]
        vb = b[name] if rows_b is None else b[name][rows_b]
        if va.shape != vb.shape:
            bad.append(name)
        elif rtol == 0.0 or va.dtype.kind not in "fc":
            if not np.array_equal(va, vb, equal_nan=True):
                bad.append(name)
        else:
            scale = float(np.nanmax(np.abs(vb))) if np.isfinite(vb).any() else 0.0
            same_nan = np.array_equal(np.isnan(va), np.isnan(vb))
            if not same_nan or np.nanmax(np.abs(va - vb), initial=0.0) > rtol * scale:
                bad.append(name)
    return bad


def check_plugin(
    cls: type[Plugin],
    params: Mapping[str, Any] | None = None,
    *,
    seed: int = 1234,
    ticks: int = 40,
    dt: float = 0.1,
    batch_rtol: float = 0.0,
    couples_rows: bool | None = None,
) -> list[str]:
    """Check a plugin class against the engine contract.

    Parameters
    ----------
    cls : type of Plugin
    params : mapping, optional
        Parameters to build it with (default: ``cls.example_params`` or ``{}``).
    seed : int
        Seed of the harness runs.
    ticks : int
        Ticks per harness run.
    dt : float
        Tick [s].
    batch_rtol : float
        Tolerance of the "N = 1 equals row 0 of N = 5" check, relative to each signal's largest
        magnitude. 0 (default) demands bit equality; a model whose batched kernel sums in another order than its one-vehicle
        path may be allowed 1e-12 (engine spec §10.5), and the calling test names the kernel.
    couples_rows : bool, optional
        The plugin's output for one vehicle depends on the others by design (a contact sensor,
        a separation metric), so "N = 1 equals row 0 of N = 5" does not apply and is not run
        (nor listed as passed).  Default: the class attribute ``couples_rows`` (False).

    Returns
    -------
    list of str
        Names of the checks that passed.

    Raises
    ------
    AssertionError
        Listing every failed check.
    """
    failures: list[str] = []
    passed: list[str] = []
    mapping = dict(params if params is not None else getattr(cls, "example_params", {}) or {})

    if cls.kind not in HOOKS:
        raise AssertionError(f"{cls.__name__}: unknown kind {cls.kind!r}")
    hooks = overridden_hooks(cls)
    if not hooks:
        failures.append("declares no hook")
    else:
        passed.append("hooks")

    try:
        build_params(cls, {**mapping, "definitely_not_a_parameter": 1})
        failures.append("an unknown parameter key was accepted")
    except ConfigError as exc:
        if "definitely_not_a_parameter" not in str(exc):
            failures.append(f"unknown key error does not name the key: {exc}")
        else:
            passed.append("unknown_key_rejected")

    try:
        p = build_params(cls, mapping)
    except ConfigError as exc:
        raise AssertionError(f"{cls.__name__}: cannot build with {mapping!r}: {exc}") from None
    inst = cls("probe", p)
    for label, decl in (("publishes", inst.publishes), ("subscribes", inst.subscribes)):
        if not isinstance(decl, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in decl.items()
        ):
            failures.append(f"{label} must map topic names to type names")
    if not failures or "publishes" not in " ".join(failures):
        passed.append("declarations")

    try:
        r1 = _run(cls, p, 5, seed, ticks, dt)
        r2 = _run(cls, p, 5, seed, ticks, dt)
        r_single = _run(cls, p, 1, seed, ticks, dt)
    except EngineError as exc:
        raise AssertionError(f"{cls.__name__}: engine contract violated: {exc}") from None
    diff = _same(r1, r2)
    if diff:
        failures.append(f"not deterministic for a seed: {diff}")
    else:
        passed.append("deterministic")
    if couples_rows is None:
        couples_rows = bool(getattr(cls, "couples_rows", False))
    diff = [] if couples_rows else _same(r_single, r1, slice(0, 1), rtol=batch_rtol)
    if diff:
        failures.append(f"N=1 differs from row 0 of N=5: {diff}")
    elif not couples_rows:
        passed.append("batch_equals_single")
    for name, sig in r1.signals.items():
        if sig.values.shape[0] != 5 or sig.values.ndim != 3:
            failures.append(f"signal {name} has shape {sig.values.shape}, expected (5, T, k)")
    passed.append("signal_shapes")
    if r1.status != "completed":
        failures.append(f"harness run ended with status {r1.status}")
    if failures:
        raise AssertionError(f"{cls.__name__}: " + "; ".join(failures))
    return passed


#: Plugin kinds of the engine (architecture spec §3).
PLUGIN_KINDS: tuple[str, ...] = tuple(HOOKS)


def registered_plugins(kinds: tuple[str, ...] = PLUGIN_KINDS) -> list[tuple[str, str]]:
    """Every registered plugin as ``(kind, name)``, sorted (built-in and entry points).

    Parameters
    ----------
    kinds : tuple of str
        Plugin kinds to list (default: all engine plugin kinds).
    """
    return [(kind, name) for kind in kinds for name in registry.names(kind)]


def check_registered(
    kinds: tuple[str, ...] = PLUGIN_KINDS, **options: Any
) -> dict[tuple[str, str], list[str] | str]:
    """Run :func:`check_plugin` over every registered plugin of ``kinds``.

    Parameters
    ----------
    kinds : tuple of str
    **options
        Passed to :func:`check_plugin` (``seed``, ``ticks``, ``dt``, ``batch_rtol``).

    Returns
    -------
    dict
        ``(kind, name)`` → the passed checks, or the failure text.
    """
    out: dict[tuple[str, str], list[str] | str] = {}
    for kind, name in registered_plugins(kinds):
        try:
            out[(kind, name)] = check_plugin(registry.get(kind, name), **options)
        except AssertionError as exc:
            out[(kind, name)] = str(exc)
    return out


def assert_runs_identical(
    a: RunResult, b: RunResult, *, counts: bool = True, routes: bool = False
) -> None:
    """AssertionError unless two runs are the same bit for bit: every recorded signal (bytes,
    NaN and −0.0 included), the frame times, the events and, with ``counts``, the manifest's
    bus counts and plugin calls.

    Parameters
    ----------
    routes : bool
        ``a`` and ``b`` ran on two routes (the plugins' ticks and the compiled tick).  Where
        numpy's elementary functions are not the C library's on this machine
        (:func:`~marinesim.core.libm.numpy_matches_libm`: numpy's AVX-512 code), the two
        routes agree to rounding only, so each signal is compared within
        :data:`ROUTES_RTOL` × max(1, its largest magnitude) instead (NaN where NaN, the same
        infinities); the frame times, events and counts stay exact.
    """
    assert list(a.signals) == list(b.signals), "different signals"
    assert a.t.tobytes() == b.t.tobytes(), "different frame times"
    for name in a.signals:
        assert_values_identical(a[name], b[name], routes=routes, what=f"signal {name!r}")
    ev = [(e.t, e.entity, e.kind, e.text) for e in a.events]
    assert ev == [(e.t, e.entity, e.kind, e.text) for e in b.events], "different events"
    if counts:
        assert a.manifest["bus"] == b.manifest["bus"], "different bus counts"
        calls = [p["calls"] for p in a.manifest["plugins"]]
        assert calls == [p["calls"] for p in b.manifest["plugins"]], "different plugin calls"


#: Agreement of the plugins' ticks and the compiled tick where numpy's elementary functions
#: are not libm's (issue 19: "signals agree within 1e-12 relative").
ROUTES_RTOL = 1e-12


def _assert_rounding(what: str, x: np.ndarray, y: np.ndarray) -> None:
    """Float arrays ``x`` and ``y`` agree within :data:`ROUTES_RTOL` × max(1, the largest
    magnitude of ``x``)."""
    assert x.shape == y.shape and x.dtype == y.dtype, f"{what}: different arrays"
    fin = np.isfinite(x)
    assert np.array_equal(fin, np.isfinite(y)), f"{what}: NaN or inf elsewhere"
    assert x[~fin].tobytes() == y[~fin].tobytes(), f"{what}: different infinities"
    if not fin.any():
        return
    # (a floor of 1 in the signal's unit: a residual such as an unmet force of 1e-15 N is
    # rounding of the O(1) values it is the difference of)
    scale = max(1.0, float(np.max(np.abs(x[fin]))))
    err = float(np.max(np.abs(x[fin] - y[fin])))
    assert err <= ROUTES_RTOL * scale, (
        f"{what} differs by {err:.3g} (> {ROUTES_RTOL:g} × {scale:.3g})"
    )


def assert_values_identical(a: Any, b: Any, *, routes: bool = False, what: str = "value") -> None:
    """AssertionError unless two nested values (lists, tuples, dicts of arrays, numbers and
    anything comparable with ``==``) are the same: arrays and floats bit for bit (NaN and
    −0.0 included), or, with ``routes`` on a machine where numpy's elementary functions are
    not libm's (see :func:`assert_runs_identical`), float arrays and floats within
    :data:`ROUTES_RTOL` × max(1, the largest magnitude of the array or float)."""
    exact = not routes or numpy_matches_libm()
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{what}: different keys"
        for k in a:
            assert_values_identical(a[k], b[k], routes=routes, what=f"{what}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{what}: different lengths"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_values_identical(x, y, routes=routes, what=f"{what}[{i}]")
    elif isinstance(a, (np.ndarray, float, np.floating)):
        x, y = np.asarray(a), np.asarray(b)
        if exact or x.dtype.kind != "f":
            assert x.dtype == y.dtype and x.shape == y.shape, f"{what}: different arrays"
            assert x.tobytes() == y.tobytes(), f"{what} differs"
        else:
            _assert_rounding(what, x, y)
    else:
        assert a == b, f"{what} differs"

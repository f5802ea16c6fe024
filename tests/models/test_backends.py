"""One source, several backends: bit-identical across N, ≤ 1e-12 across backends, CUDA path.

The per-vehicle functions of :mod:`marinesim.models.sixdof` are run interpreted (``python``),
compiled for the CPU (``cpu``: serial below ``PARALLEL_MIN`` vehicles, ``prange`` above) and,
through numba's CUDA simulator, as CUDA kernels.  Tolerances: on one backend each vehicle runs
the same instructions, so N = 1 equals any N bit for bit; between backends only the libm
functions (sin, cos, atan2, exp) may round differently (≤ 1 ulp each), hence 1e-12 relative
per signal after a short run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.models.sixdof import backends, pvs
from marinesim.models.sixdof import fossen6dof as f6

BASE = {
    "mass": 18.0,
    "inertia": [[0.05, 0, 0], [0, 1.77, 0], [0, 0, 1.77]],
    "added_mass": [1, 16, 16, 0.005, 1.3, 1.3],
    "linear_damping": [2.4, 23, 23, 0.3, 9.7, 9.7],
    "quadratic_damping": [2.4, 80, 80, 0.0006, 9.1, 9.1],
    "neutrally_buoyant": True,
    "r_g": [0, 0, 0.01],
}
VEHICLES = {
    "remus100_current": lambda: pvs.remus100("stepInput", 0, 0, 0, 0.4, 30),
    "remus100": pvs.remus100,
    "otter_current": lambda: pvs.otter("stepInput", 0, 0.3, -30, 0),
}


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference per signal (column) relative to that signal's magnitude."""
    scale = np.maximum(np.max(np.abs(b), axis=0), 1e-300)
    return float(np.max(np.max(np.abs(a - b), axis=0) / scale))


def _pvs_start(p: object, n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m = 3 if isinstance(p, pvs.Remus100Params) else 2
    x = np.concatenate(
        (rng.normal(0, 0.2, (n, 6)), rng.normal(0, 0.5, (n, 6)), rng.normal(0, 0.1, (n, m))), 1
    )
    cmd = rng.normal(0, 0.1, (n, m))
    if m == 3:
        x[:, 14] = cmd[:, 2] = 1200.0 + 300 * rng.random(n)
    return x, cmd


def _pvs_run(p: object, x: np.ndarray, cmd: np.ndarray, steps: int, backend: str) -> np.ndarray:
    alive = np.ones(x.shape[0], dtype=bool)
    for k in range(steps):
        x, alive, _ = pvs.step_guarded(p, x, cmd, 0.02, alive, (k + 1) * 0.02, backend=backend)
    return x


@pytest.mark.parametrize("name", sorted(VEHICLES))
def test_pvs_n1_equals_every_n_bitwise(name: str) -> None:
    p = VEHICLES[name]()
    n = backends.PARALLEL_MIN + 5  # the parallel kernel
    x, cmd = _pvs_start(p, n)
    whole = _pvs_run(p, x, cmd, 20, "cpu")
    small = _pvs_run(p, x[:7], cmd[:7], 20, "cpu")  # the serial kernel
    np.testing.assert_array_equal(small, whole[:7])
    for i in (0, 100, n - 1):
        one = _pvs_run(p, x[i : i + 1], cmd[i : i + 1], 20, "cpu")
        np.testing.assert_array_equal(one[0], whole[i])


@pytest.mark.parametrize("name", sorted(VEHICLES))
def test_pvs_python_and_cpu_backends_agree(name: str) -> None:
    p = VEHICLES[name]()
    x, cmd = _pvs_start(p, 6)
    a = _pvs_run(p, x, cmd, 25, "python")
    b = _pvs_run(p, x, cmd, 25, "cpu")
    assert _rel(a, b) <= 1e-12


@pytest.mark.parametrize(
    "cfg",
    [BASE, {**BASE, "attitude": "euler"}, {**BASE, "integrator": "semi_implicit_euler"}],
    ids=["rk4_quat", "rk4_euler", "semi_implicit"],
)
def test_fossen6dof_n1_bitwise_and_backends_agree(cfg: dict) -> None:
    m = f6.build(cfg)
    n = backends.PARALLEL_MIN + 2
    rng = np.random.default_rng(1)
    euler, nu = rng.normal(0, 0.2, (n, 3)), rng.normal(0, 0.5, (n, 6))
    tau = rng.normal(0, 20, (n, 6))
    env = f6.Env(current=np.array([0.3, -0.2, 0.05]))

    def run(k: slice, backend: str, steps: int = 10) -> np.ndarray:
        s = f6.init(m, len(range(n)[k]), euler=euler[k], nu=nu[k])
        for _ in range(steps):
            s = f6.step(m, s, tau[k], env, 0.05, backend=backend)
        return np.concatenate((s.pos, s.att, s.nu), axis=1)

    whole = run(slice(None), "cpu")
    for i in (0, n - 1):
        np.testing.assert_array_equal(run(slice(i, i + 1), "cpu")[0], whole[i])
    assert _rel(run(slice(0, 5), "python"), whole[:5]) <= 1e-12


def test_stacked_parameters_take_the_same_path() -> None:
    """Vehicles with their own parameters (build_batch) run the kernel with P = N rows."""
    ps = [{**BASE, "mass": 18.0 + i} for i in range(3)]
    mb = f6.build_batch(ps)
    sb = f6.init(mb, 3, nu=[0.5, 0.1, 0, 0, 0, 0.2])
    sb = f6.step(mb, sb, [10.0, 0, 0, 0, 0, 0], None, 0.1)
    for i, p in enumerate(ps):
        m1 = f6.build(p)
        s1 = f6.step(
            m1, f6.init(m1, 1, nu=[0.5, 0.1, 0, 0, 0, 0.2]), [10.0, 0, 0, 0, 0, 0], None, 0.1
        )
        np.testing.assert_array_equal(s1.nu[0], sb.nu[i])


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown backend 'gpu'.*cpu, python, cuda"):
        backends.resolve("gpu")


@pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="the simulator stands in for a device"
)
def test_cuda_without_a_device_says_why() -> None:
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ConfigError, match="no CUDA device"):
        pvs.step_guarded(
            pvs.remus100(), np.zeros((2, 15)), np.zeros((1, 3)), 0.02, np.ones(2, bool), 0.02,
            backend="cuda",
        )  # fmt: skip


_SIM = textwrap.dedent(
    """
    import numpy as np
    from marinesim.models.sixdof import pvs
    from marinesim.models.sixdof import fossen6dof as f6
    rng = np.random.default_rng(2)
    worst = 0.0
    for p in (pvs.remus100("stepInput", 0, 0, 0, 0.4, 30), pvs.otter("stepInput", 0, 0.3, -30, 0)):
        m = 3 if isinstance(p, pvs.Remus100Params) else 2
        x = np.concatenate((rng.normal(0, .2, (3, 6)), rng.normal(0, .5, (3, 6)),
                            rng.normal(0, .1, (3, m))), 1)
        cmd = rng.normal(0, .1, (3, m))
        out = {}
        for be in ("cuda", "cpu"):
            y, al = x.copy(), np.ones(3, bool)
            for k in range(3):
                y, al, _ = pvs.step_guarded(p, y, cmd, 0.02, al, 0.02, backend=be)
            out[be] = y
        worst = max(worst, float(np.max(np.abs(out["cuda"] - out["cpu"]) / (1 + np.abs(out["cpu"])))))
    mdl = f6.build({"mass": 18.0, "inertia": [[0.05, 0, 0], [0, 1.77, 0], [0, 0, 1.77]],
                    "added_mass": [1, 16, 16, 0.005, 1.3, 1.3],
                    "linear_damping": [2.4, 23, 23, 0.3, 9.7, 9.7], "neutrally_buoyant": True})
    res = {}
    for be in ("cuda", "cpu"):
        s = f6.init(mdl, 2, nu=[[0.5, 0.1, 0, 0, 0.1, 0.2], [1, 0, 0.1, 0, 0, 0]])
        for _ in range(3):
            s = f6.step(mdl, s, [[10, 0, 0, 0, 0, 0.5]], None, 0.05, backend=be)
        res[be] = np.concatenate((s.pos, s.att, s.nu), 1)
    worst = max(worst, float(np.max(np.abs(res["cuda"] - res["cpu"]) / (1 + np.abs(res["cpu"])))))
    print("WORST", worst)
    """
)


def test_cuda_path_compiles_the_same_source_in_the_simulator() -> None:
    """numba's CUDA simulator runs the CUDA kernels (one thread per vehicle) from the same
    per-vehicle functions; they agree with the CPU kernel to 1e-12."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _SIM], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    worst = float(out.stdout.split("WORST", 1)[1])
    assert worst <= 1e-12


@pytest.mark.parametrize("n", [3, backends.PARALLEL_MIN + 1])
def test_one_command_row_is_shared_by_every_vehicle(n: int) -> None:
    """cmd of shape (1, m) drives all N vehicles (not just the first)."""
    p = pvs.remus100()
    x = np.zeros((n, 15))
    row = np.array([[0.08, -0.08, 1525.0]])
    a, _, _ = pvs.step_guarded(p, x, row, 0.02, np.ones(n, bool), 0.02)
    b, _, _ = pvs.step_guarded(p, x, np.repeat(row, n, axis=0), 0.02, np.ones(n, bool), 0.02)
    np.testing.assert_array_equal(a, b)
    assert np.all(a[:, 12] > 0)


def test_every_cuda_kernel_compiles_for_a_device(monkeypatch: pytest.MonkeyPatch, nvvm: None) -> None:
    """The CUDA kernels of the PythonVehicleSimulator models, the generic Fossen model and the
    fleet's closed loop compile to PTX for sm_90 (numba-cuda; no GPU needed): the simulator
    above runs them in Python, which takes what a device function cannot (e.g. a function
    that returns a view of an array)."""
    import sys as _sys

    from marinesim.core import compile as cc
    from marinesim.models.sixdof import fleet
    from marinesim.reference import pvs_fleet_loop

    _sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_pvs_fleet import MAIN_PY

    seen: dict[int, tuple[cc.Kernels, tuple]] = {}
    launch = cc.Kernels.launch

    def record(self, backend, args, results=None):  # noqa: ANN001, ANN202
        seen.setdefault(id(self.one), (self, args))
        return launch(self, backend, args, results)

    monkeypatch.setattr(cc.Kernels, "launch", record)
    for p in (pvs.remus100(), pvs.otter("stepInput", 0, 0.3, -30, 0)):
        x, cmd = _pvs_start(p, 3)
        _pvs_run(p, x, cmd, 1, "cpu")
    mdl = f6.build(BASE)
    s = f6.init(mdl, 2, nu=[[0.5, 0.1, 0, 0, 0.1, 0.2], [1, 0, 0.1, 0, 0, 0]])
    f6.step(mdl, s, [[10, 0, 0, 0, 0, 0.5]], None, 0.05, backend="cpu")
    v = fleet.build("torpedo", *MAIN_PY["torpedo"])
    x = np.zeros((2, 12 + v.m))
    x[:, 6:12] = v.nu0
    pvs_fleet_loop.run(v, x, 2, backend="cpu")
    names = sorted(k.one.__name__ for k, _a in seen.values())
    assert len(seen) >= 3, names
    for kern, args in seen.values():
        ptx = kern.ptx(args)
        assert ".entry" in ptx and ".target sm_90" in ptx, kern.one.__name__

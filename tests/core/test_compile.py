"""The compile launcher of :mod:`marinesim.core.compile`: one per-row function, every walk.

Each row runs the same instructions whatever N is, so the serial loop, the ``prange`` loop and
N = 1 agree bit for bit; the interpreted loop runs the very same function (here only + and ×,
so it matches too).  Without a device, ``cuda`` says why; core imports no numba.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.extending import register_jitable

from marinesim.core import compile as cc
from marinesim.core.errors import ConfigError


@register_jitable
def _affine_row(i: int, a: float, x: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """out[i] = a·x[i] + w (one row)."""
    for j in range(x.shape[1]):
        out[i, j] = a * x[i, j] + w[j]


@register_jitable
def _tuple_row(i: int, ins: tuple, outs: tuple) -> None:
    x, a = ins
    (out,) = outs
    out[i] = a * x[i] * x[i]


AFFINE = cc.kernels(_affine_row, 1, parallel_min=8)
TUPLE = cc.kernels(_tuple_row, (0, 0), parallel_min=8, error_model="numpy")


def _affine(x: np.ndarray, backend: str) -> np.ndarray:
    out = np.empty_like(x)
    AFFINE.launch(backend, (1.25, x, np.array([0.1, -0.2, 0.3]), out), {3: out})
    return out


def test_serial_parallel_python_and_n1_agree_bitwise() -> None:
    x = np.random.default_rng(0).normal(size=(40, 3))  # 40 ≥ parallel_min: the prange loop
    whole = _affine(x, "cpu")
    np.testing.assert_array_equal(_affine(x[:5], "cpu"), whole[:5])  # serial loop
    for i in (0, 17, 39):
        np.testing.assert_array_equal(_affine(x[i : i + 1], "cpu")[0], whole[i])
    np.testing.assert_array_equal(_affine(x, "python"), whole)
    np.testing.assert_array_equal(whole, 1.25 * x + np.array([0.1, -0.2, 0.3]))


@pytest.mark.parametrize("n", [3, 30])
def test_tuple_arguments_walk_the_rows_of_the_first_input(n: int) -> None:
    x = np.linspace(-1.0, 2.0, n)
    out = np.full(n, np.nan)
    TUPLE.launch("cpu", ((x, 0.5), (out,)))
    ref = np.full(n, np.nan)
    TUPLE.launch("python", ((x, 0.5), (ref,)))
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out, 0.5 * x * x)


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown backend 'gpu'.*cpu, python, cuda"):
        _affine(np.zeros((2, 3)), "gpu")


def test_cuda_takes_no_tuple_arguments() -> None:
    with pytest.raises(ConfigError, match="flat array arguments"):
        TUPLE.launch("cuda", ((np.zeros(2), 1.0), (np.zeros(2),)))


@pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="the simulator stands in for a device"
)
def test_cuda_without_a_device_says_why() -> None:
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ConfigError, match="no CUDA device") as exc:
        _affine(np.zeros((2, 3)), "cuda")
    assert exc.value.param == "backend"


def test_source_stamp_follows_the_sources(tmp_path: Path) -> None:
    law = tmp_path / "law.py"
    law.write_text("A = 1\n")
    s1 = cc.source_stamp(_affine_row, (law,))
    assert s1 == cc.source_stamp(_affine_row, (tmp_path,))  # a folder: its *.py
    assert len(s1) == 16 and s1 != cc.source_stamp(_affine_row)
    law.write_text("A = 2\n")
    assert cc.source_stamp(_affine_row, (law,)) != s1


def test_empty_stamp_is_refused() -> None:
    with pytest.raises(ValueError, match="stamp"):
        cc.kernels(_affine_row, 1, stamp="")


def test_core_compile_imports_no_numba() -> None:
    code = "import sys, marinesim.core.compile; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_stamps_cover_laws_in_any_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel's stamp and a generated tick's digest change when any module of the package
    changes, not only the files they name (a law calls laws of other packages)."""
    from marinesim.engine.compiled import generate

    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "law.py").write_text("K = 1\n")
    d1 = cc.tree_digest(tmp_path)
    (deep / "law.py").write_text("K = 2\n")
    assert cc.tree_digest(tmp_path) != d1
    (deep / "law.py").rename(deep / "other.py")  # a name is part of the digest
    d2 = cc.tree_digest(tmp_path)
    (deep / "other.py").rename(deep / "law.py")
    assert d2 != cc.tree_digest(tmp_path)

    s1 = cc.source_stamp(_affine_row)
    t1 = generate._digest("def tick_loop(): pass", [])
    monkeypatch.setattr(cc, "package_digest", lambda: "edited elsewhere")
    assert cc.source_stamp(_affine_row) != s1
    assert generate._digest("def tick_loop(): pass", []) != t1


_ONCE = '''
import numpy as np
import numba
from numba.core import event
from numba.extending import register_jitable
from marinesim.core import compile as cc

@register_jitable
def row(i, a, x, out):
    out[i] = a * x[i] + 1.0

@register_jitable
def law(a, x, out):  # a law of a generated tick: it calls the row function itself
    for i in range(x.shape[0]):
        row(i, a, x, out)
    return 0

@numba.njit(error_model="numpy")
def tick(a, x, out):
    return law(a, x, out)

counts = []
class Count(event.Listener):
    def on_start(self, ev):
        counts.append(getattr(ev.data["dispatcher"], "py_func", None) is row)
    def on_end(self, ev):
        pass

event.register("numba:compile", Count())
x = np.arange(4.0)
ro = x.copy()
ro.flags.writeable = False  # an engine's read-only view: copied at the launch
k, t = np.empty(4), np.empty(4)
cc.kernels(row, 2, stamp="once", error_model="numpy").launch("cpu", (2.0, ro, k))
tick(2.0, x, t)
assert np.array_equal(k, t) and np.array_equal(k, 2.0 * x + 1.0), (k, t)
print(sum(counts))
'''


def test_a_row_function_compiles_once_for_its_kernel_and_a_tick(tmp_path: Path) -> None:
    """A kernel and a law of a compiled tick that call the same row function with the same
    arguments share one compile of it (a fresh process, an empty numba cache), also when the
    kernel is given a read-only array."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", _ONCE], capture_output=True, text=True, timeout=300, env=env
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_writable_copies_only_read_only_arrays() -> None:
    a = np.arange(3.0)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    args = (1.0, a, 2)
    assert cc.writable(args) is args  # nothing read-only: the same tuple
    out = cc.writable((ro, (a, ro), a))
    assert out[0] is not ro and out[0].flags.writeable and np.array_equal(out[0], ro)
    assert out[1][0] is a and out[1][1].flags.writeable and np.array_equal(out[1][1], ro)
    assert out[2] is a

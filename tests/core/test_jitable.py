"""core.jitable: laws of core.frames are registered with numba even when frames is imported
before numba (the import hook), and numba is not loaded by importing them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

CODE = """
import math, sys
from marinesim.core import frames
assert 'numba' not in sys.modules, 'frames imported numba'
import marinesim.interop.moos.app
assert 'numba' not in sys.modules, 'the moos app imported numba'
from numba import njit

@njit
def f(x):
    return frames.wrap_pi_c(x)

@njit
def g(a):
    rot = frames.rotation_zyx_c(1.0, 0.0, 1.0, 0.0, math.cos(a), math.sin(a))
    return frames.rotate_c(rot, 1.0, 0.0, 0.0)

assert f(7.0) == frames.wrap_pi_c(7.0)
assert g(0.5) == frames.rotate_c(
    frames.rotation_zyx_c(1.0, 0.0, 1.0, 0.0, math.cos(0.5), math.sin(0.5)), 1.0, 0.0, 0.0)
print('OK')
"""


def test_frames_laws_compile_when_numba_comes_later() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CODE],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": "/tmp/nbc"},
    )
    assert out.stdout.strip().endswith("OK"), out.stdout + out.stderr


def test_numba_first_registers_at_once() -> None:
    code = "import numba.extending\n" + CODE.replace(
        "assert 'numba' not in sys.modules, 'frames imported numba'", ""
    ).replace("assert 'numba' not in sys.modules, 'the moos app imported numba'", "")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": "/tmp/nbc"},
    )
    assert out.stdout.strip().endswith("OK"), out.stdout + out.stderr

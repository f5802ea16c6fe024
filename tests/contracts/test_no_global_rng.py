"""The global-RNG guard of conftest catches marinesim code and lets other code through."""

from __future__ import annotations

import types

import numpy as np
import pytest


def test_guard_raises_for_marinesim_callers() -> None:
    mod = types.ModuleType("marinesim._fake_rng_user")
    exec("import numpy as np\ndef f():\n    return np.random.normal()\n", mod.__dict__)
    with pytest.raises(AssertionError, match="global random state"):
        mod.f()


def test_guard_lets_others_through() -> None:
    assert np.isfinite(np.random.default_rng(0).normal())

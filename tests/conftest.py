"""Test-suite guards: no global randomness anywhere in marinesim (engine spec §10.4)."""

from __future__ import annotations

import random

import numpy as np
import pytest

_GLOBAL_NP = ("rand", "randn", "random", "normal", "uniform", "randint", "choice", "seed", "shuffle", "permutation")


@pytest.fixture(autouse=True)
def _no_global_rng(monkeypatch: pytest.MonkeyPatch) -> None:
    def _forbidden(*_a: object, **_k: object) -> None:
        raise AssertionError("global random state used (np.random.<function> or random.<function>)")

    for name in _GLOBAL_NP:
        monkeypatch.setattr(np.random, name, _forbidden)
    for name in ("random", "uniform", "gauss", "randint", "choice", "seed", "shuffle"):
        monkeypatch.setattr(random, name, _forbidden)

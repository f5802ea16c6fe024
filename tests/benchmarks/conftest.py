"""The benchmark scripts of ``benchmarks/`` imported as modules (they import ``_report`` from
their own folder)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench() -> Callable[[str], ModuleType]:
    """``bench("bench_survey")``: that script as a module."""

    def load(name: str) -> ModuleType:
        sys.path.insert(0, str(BENCH))
        try:
            return importlib.import_module(name)
        finally:
            sys.path.remove(str(BENCH))

    return load

"""numba's disk cache under concurrent savers (marinesim.core.numba_cache)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

numba = pytest.importorskip("numba")

from marinesim.core import numba_cache  # noqa: E402


def test_import_marinesim_then_numba_patches_the_cache() -> None:
    code = (
        "import marinesim, numba, numba.core.caching as c\n"
        "from marinesim.core.numba_cache import _locked_save\n"
        "print(c.IndexDataCacheFile.save is _locked_save)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out.stderr


def test_numba_first_then_marinesim_patches_the_cache() -> None:
    code = (
        "import numba, numba.core.caching as c, marinesim\n"
        "from marinesim.core.numba_cache import _locked_save\n"
        "print(c.IndexDataCacheFile.save is _locked_save)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out.stderr


def test_concurrent_saves_of_different_overloads_keep_their_own_code(tmp_path: Path) -> None:
    """Two savers of one index at once (a slow index write widens the window numba leaves
    open): every key must load the data that was saved under it."""
    from numba.core.caching import IndexDataCacheFile

    assert numba_cache.install()

    class Slow(IndexDataCacheFile):
        def _save_index(self, overloads):  # type: ignore[no-untyped-def]
            time.sleep(0.05)
            super()._save_index(overloads)

    def make() -> Slow:
        return Slow(str(tmp_path), "fn-1.py", ("stamp", 1))

    keys = [(f"sig{i}", "cpu") for i in range(6)]
    threads = [
        threading.Thread(target=make().save, args=(key, f"code of {key[0]}")) for key in keys
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reader = make()
    for key in keys:
        assert reader.load(key) == f"code of {key[0]}"
    names = reader._load_index()
    assert len(set(names.values())) == len(keys)  # one data file per overload

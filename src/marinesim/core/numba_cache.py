"""numba's disk cache made safe for processes that compile the same module at once.

numba (0.6x) saves a new compiled overload in two steps: it reads the cache's index file,
picks the first free data-file number, writes the index, then the data.  Two processes
saving different overloads of one function at the same moment (two Dask workers of
``marinesim batch``, two ``marinesim run`` in a shell loop, the test suite on every core) can
both pick the same number: the index then names one overload and the data file holds the
other's machine code, and every later process that loads that overload runs the wrong code
(measured here: ``nav_ekf``'s GPS update loaded the depth update's code and gave wrong
covariances).

:func:`install` replaces ``IndexDataCacheFile.save`` with a version that holds an exclusive
``flock`` on ``<index>.lock`` while it re-reads the index, writes the data file and only then
the index: an index entry never points at a data file another process is writing, and two
savers never share a number.  Loading is unchanged (numba reads the index, then the data).
Where ``fcntl`` does not exist (Windows) numba's own save is kept.
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = ["install"]


def _locked_save(self: Any, key: Any, data: Any) -> None:
    """``IndexDataCacheFile.save`` under an exclusive lock, data before index."""
    import fcntl

    with open(f"{self._index_path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            overloads = self._load_index()
            name = overloads.get(key)
            if name is None:
                used = set(overloads.values())
                name = next(
                    n for n in (self._data_name(i) for i in itertools.count(1)) if n not in used
                )
            self._save_data(name, data)
            overloads[key] = name
            self._save_index(overloads)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def install(caching: Any = None) -> bool:
    """Patch numba's cache saves (idempotent); True when the locked save is in place.

    Parameters
    ----------
    caching : module, optional
        ``numba.core.caching`` (imported here when not given).
    """
    try:
        import fcntl  # noqa: F401
    except ImportError:  # pragma: no cover - Windows: numba's own save
        return False
    if caching is None:
        import numba.core.caching as caching
    cls = caching.IndexDataCacheFile
    if cls.save is not _locked_save:
        cls.save = _locked_save
    return True

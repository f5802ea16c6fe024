"""Row surgery on batched model states (restart some environments of a batch)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["splice"]

T = TypeVar("T")


def splice(state: T, fresh: T, rows: NDArray[np.intp]) -> T:
    """Copy of the batched dataclass ``state`` whose ``rows`` come from ``fresh``.

    ``fresh`` holds ``len(rows)`` vehicles (e.g. a model's ``init`` for the restarted rows).
    Array fields with the batch as leading axis and per-vehicle tuples are spliced; every
    other field (shared configuration, caches keyed by value, time stamps of the batch) is
    kept from ``state``.

    Parameters
    ----------
    state : dataclass instance
        N vehicles.
    fresh : dataclass instance of the same type
        len(rows) vehicles.
    rows : ndarray of int, shape (k,)

    Returns
    -------
    dataclass instance
        N vehicles.
    """
    n = int(getattr(state, "n"))  # noqa: B009
    k = int(rows.size)
    changes: dict[str, Any] = {}
    for f in fields(state):  # type: ignore[arg-type]
        old = getattr(state, f.name)
        new = getattr(fresh, f.name)
        if isinstance(old, np.ndarray) and old.ndim >= 1 and old.shape[0] == n:
            arr = old.copy()
            arr[rows] = new
            changes[f.name] = arr
        elif isinstance(old, tuple) and len(old) == n and isinstance(new, tuple) and len(new) == k:
            lst = list(old)
            for j, i in enumerate(rows.tolist()):
                lst[i] = new[j]
            changes[f.name] = tuple(lst)
    return replace(state, **changes)  # type: ignore[type-var]

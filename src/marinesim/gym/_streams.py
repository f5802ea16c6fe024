"""Per-environment random streams that can be re-seeded row by row.

Every environment (row) owns three generators from the project's seed tree
(:func:`marinesim.core.rng.generator`, keys from :func:`marinesim.core.rng.entity_key` with
the task name as block and ``"gym"`` as plugin): stream 0 draws episode set-ups (initial
states, goals, currents), stream 1 the sensor normals, stream 2 the sensor uniforms.  The
normals and uniforms are pre-drawn in blocks per row by :class:`marinesim.core.rng.BlockRNG`,
so a step costs an array slice, not a Python call per environment.  Re-seeding row i
replaces its generators and redraws the unread rest of its buffers, so the values row i reads
are exactly its generators' sequences, whatever the batch size, the buffer position or the
other rows: a vector environment equals N single environments.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from marinesim.core.rng import MAX_SEED, BlockRNG, check_seed, entity_key, generator

__all__ = ["RowStreams", "fresh_seed"]

F64 = NDArray[np.float64]

_SETUP, _NORMAL, _UNIFORM = 0, 1, 2


def fresh_seed() -> int:
    """A seed from operating-system entropy (for ``reset()`` without a seed)."""
    entropy = np.random.SeedSequence().entropy
    return int(entropy) % (MAX_SEED + 1)  # type: ignore[arg-type]


class RowStreams:
    """Random streams of N environments, re-seedable per row.

    Parameters
    ----------
    task : str
        Task name (enters the stream keys).
    n : int
        Number of environments (rows).
    block : int
        Values pre-drawn per row and distribution.
    """

    def __init__(self, task: str, n: int, block: int = 1024) -> None:
        self.task = task
        self.n = int(n)
        self.seeded = np.zeros(self.n, dtype=bool)
        self.setup: list[np.random.Generator] = [np.random.Generator(np.random.PCG64(0))] * self.n
        self._normal = BlockRNG(list(self.setup), block)
        self._uniform = BlockRNG(list(self.setup), block)

    def _key(self, member: int, stream: int) -> tuple[int, ...]:
        return entity_key(0, self.task, member, "gym", stream)

    def seed_rows(
        self, rows: Sequence[int], seeds: Sequence[int], members: Sequence[int] | None = None
    ) -> None:
        """Re-seed ``rows`` with ``seeds`` (one per row; validated by :func:`check_seed`).

        ``members`` (default 0 for every row) enters the key: vehicles of one multi-agent
        episode share the seed and differ by member index.
        """
        rows = [int(i) for i in rows]
        mem = [0] * len(rows) if members is None else list(members)
        seeds = [check_seed(s) for s in seeds]
        for i, s, m in zip(rows, seeds, mem, strict=True):
            self.setup[i] = generator(s, self._key(m, _SETUP))
            self.seeded[i] = True
        self._normal.reseed_rows(
            rows, [generator(s, self._key(m, _NORMAL)) for s, m in zip(seeds, mem, strict=True)]
        )
        self._uniform.reseed_rows(
            rows, [generator(s, self._key(m, _UNIFORM)) for s, m in zip(seeds, mem, strict=True)]
        )

    def normal(self, k: int) -> F64:
        """(N, k) standard normal draws, row i from environment i's stream."""
        return self._normal.normal(size=k)

    def uniform(self, k: int) -> F64:
        """(N, k) uniform draws on [0, 1), row i from environment i's stream."""
        return self._uniform.uniform(size=k)

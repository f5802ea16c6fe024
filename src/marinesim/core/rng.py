"""Random streams: one seed, a tree of independent per-entity generators.

Keys follow the engine spec §10.1: every stream is ``Generator(PCG64(SeedSequence(seed,
spawn_key=key)))`` built from an explicit key of non-negative ints, so a stream never depends
on the order in which objects are created.  Names enter keys through :func:`name_hash`
(CRC-32 of the UTF-8 name).  No code in marinesim uses numpy's global random state.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Sequence

import numpy as np

from marinesim.core.errors import ConfigError

__all__ = [
    "MAX_SEED",
    "BlockRNG",
    "check_seed",
    "entity_key",
    "generator",
    "name_hash",
    "spawn_key",
    "world_key",
]

MAX_SEED = 2**63 - 1


def check_seed(seed: object) -> int:
    """Return ``seed`` as an int in [0, 2**63 - 1] or raise :class:`ConfigError`."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ConfigError(f"seed must be an integer in [0, 2**63 - 1], got {seed!r}", param="seed")
    value = int(seed)
    if not 0 <= value <= MAX_SEED:
        raise ConfigError(f"seed must be in [0, 2**63 - 1], got {value}", param="seed")
    return value


@functools.lru_cache(maxsize=1024)
def name_hash(name: str) -> int:
    """CRC-32 of the UTF-8 name: a non-negative 32-bit int used inside stream keys."""
    return zlib.crc32(name.encode("utf-8")) & 0xFFFFFFFF


def entity_key(replica: int, block: str, member: int, plugin: str, stream: int = 0) -> tuple[int, ...]:
    """Key of an entity plugin stream: (replica, 0, hash(block), member, hash(plugin), stream)."""
    return (replica, 0, name_hash(block), member, name_hash(plugin), stream)


def spawn_key(replica: int, block: str, member: int) -> tuple[int, ...]:
    """Key of the spawn-placement stream of one block member: (replica, 1, hash(block), member)."""
    return (replica, 1, name_hash(block), member)


def world_key(replica: int, plugin: str, stream: int = 0) -> tuple[int, ...]:
    """Key of a world plugin stream: (replica, 2, hash(plugin), stream)."""
    return (replica, 2, name_hash(plugin), stream)


def generator(seed: int, key: Sequence[int]) -> np.random.Generator:
    """The PCG64 generator of ``key`` under ``seed``."""
    ss = np.random.SeedSequence(check_seed(seed), spawn_key=tuple(int(k) for k in key))
    return np.random.Generator(np.random.PCG64(ss))


def _unit(zero: object, one: object) -> bool:
    """True for the floats (+0.0, 1.0): then ``zero + one·x`` is ``x + 0.0`` bit for bit."""
    return (
        type(zero) is float
        and type(one) is float
        and zero == 0.0
        and math.copysign(1.0, zero) > 0
        and one == 1.0
    )


class BlockRNG:
    """Per-entity random streams of one plugin over a block of N entities, drawn in blocks.

    Row i of every draw comes from entity i's own generator only, so results do not depend on
    N, on other entities or on plugin order.  Values are pre-drawn ``block`` at a time per
    entity and distribution and sliced, so a per-tick draw costs an array slice.

    Parameters
    ----------
    generators : sequence of numpy.random.Generator
        One generator per entity (row).
    block : int
        Values pre-drawn per entity and distribution (default 4096).
    """

    def __init__(self, generators: Sequence[np.random.Generator], block: int = 4096) -> None:
        if block < 1:
            raise ConfigError(f"rng block must be >= 1, got {block}", param="rng_block")
        self._made: list[np.random.Generator] | None = list(generators)
        self._keys: tuple[int, list[Sequence[int]]] | None = None
        self._n = len(self._made)
        self._block = int(block)
        self._buf: dict[str, np.ndarray] = {}
        self._pos: dict[str, int] = {}

    @classmethod
    def keyed(cls, seed: int, keys: Sequence[Sequence[int]], block: int = 4096) -> BlockRNG:
        """The streams of ``keys`` under ``seed`` (:func:`generator`), made at their first use:
        most plugins never draw, and a stacked batch has a stream per plugin and row (about
        30 µs each to make)."""
        rng = cls([], block)
        rng._made = None
        rng._keys = (seed, list(keys))
        rng._n = len(keys)
        return rng

    @property
    def _gens(self) -> list[np.random.Generator]:
        if self._made is None:
            assert self._keys is not None
            seed, keys = self._keys
            self._made = [generator(seed, k) for k in keys]
            self._keys = None
        return self._made

    @classmethod
    def for_entities(
        cls,
        seed: int,
        replica: int,
        block_name: str,
        members: Sequence[int],
        plugin: str,
        stream: int = 0,
        block: int = 4096,
    ) -> BlockRNG:
        """Streams keyed by :func:`entity_key` for the given member indices."""
        keys = [entity_key(replica, block_name, m, plugin, stream) for m in members]
        return cls.keyed(seed, keys, block)

    @property
    def n(self) -> int:
        """Number of entities (rows)."""
        return self._n

    def _take(self, dist: str, k: int) -> np.ndarray:
        buf = self._buf.get(dist)
        pos = self._pos.get(dist, 0)
        if buf is None or pos + k > buf.shape[1]:
            size = max(self._block, k)
            left = 0 if buf is None else max(buf.shape[1] - pos, 0)
            fresh = np.empty((self.n, left + size))
            if left:  # the unread rest of the old block first
                fresh[:, :left] = buf[:, pos:]
            tail = fresh[:, left:]
            for i, g in enumerate(self._gens):  # amortised: once every `block` values
                # drawn straight into the block (the same values as a drawn array)
                if dist == "normal":
                    g.standard_normal(out=tail[i])
                else:
                    g.random(out=tail[i])
            buf, pos = fresh, 0
            self._buf[dist] = buf
        out = buf[:, pos : pos + k]
        self._pos[dist] = pos + k
        return out

    def reseed_rows(
        self, rows: Sequence[int], generators: Sequence[np.random.Generator]
    ) -> None:
        """Give ``rows`` new generators and redraw the unread rest of their buffers.

        Afterwards row i reads exactly its new generator's sequence, whatever the buffer
        position and the other rows (a vector environment resetting one sub-environment).
        """
        for i, g in zip(rows, generators, strict=True):
            self._gens[i] = g
            for dist, buf in self._buf.items():
                pos = self._pos.get(dist, 0)
                if pos < buf.shape[1]:
                    k = buf.shape[1] - pos
                    buf[i, pos:] = g.standard_normal(k) if dist == "normal" else g.random(k)

    def buffered(self, dist: str) -> tuple[np.ndarray, int]:
        """The pre-drawn block (N, B) of ``dist`` ("normal" or "uniform") and the position of
        the next value (a compiled loop reads ahead in it, then calls :meth:`set_position`).

        Draws the block now if there is none (the stream's values are the same either way).
        """
        self._take(dist, 0)
        return self._buf[dist], self._pos.get(dist, 0)

    def reserve(self, dist: str, k: int) -> bool:
        """Make sure ``k`` values of ``dist`` are left unread in the pre-drawn block: if not,
        draw the next block now (the unread rest first, as a draw that runs short does; the
        stream's values are the same either way).  Returns whether a block was drawn."""
        buf = self._buf.get(dist)
        pos = self._pos.get(dist, 0)
        if buf is not None and pos + k <= buf.shape[1]:
            return False
        self._take(dist, k)
        self._pos[dist] -= k  # (drawn, not read)
        return True

    def set_position(self, dist: str, pos: int) -> None:
        """Move the read position of the ``dist`` block (values before it are used)."""
        buf = self._buf.get(dist)
        if buf is None or not 0 <= pos <= buf.shape[1]:
            raise ValueError(f"position {pos} outside the {dist} block")
        self._pos[dist] = int(pos)

    def normal(self, loc: float | np.ndarray = 0.0, scale: float | np.ndarray = 1.0, size: int = 1) -> np.ndarray:
        """(N, size) Gaussian draws, row i from entity i's stream."""
        if _unit(loc, scale):  # loc + 1·x: the values plus (+0.0), one pass
            return np.add(self._take("normal", size), 0.0)
        return np.asarray(loc) + np.asarray(scale) * self._take("normal", size)

    def uniform(self, low: float | np.ndarray = 0.0, high: float | np.ndarray = 1.0, size: int = 1) -> np.ndarray:
        """(N, size) uniform draws on [low, high), row i from entity i's stream."""
        if _unit(low, high):  # 0 + (1 − 0)·u: the values plus (+0.0), one pass
            return np.add(self._take("uniform", size), 0.0)
        low_a, high_a = np.asarray(low), np.asarray(high)
        return low_a + (high_a - low_a) * self._take("uniform", size)

    def state(self) -> dict[str, object]:
        """Snapshot of generator states and buffers (for engine snapshots)."""
        return {
            "gens": [g.bit_generator.state for g in self._gens],
            "buf": {k: v.copy() for k, v in self._buf.items()},
            "pos": dict(self._pos),
        }

    def set_state(self, snap: dict[str, object]) -> None:
        """Restore a snapshot taken by :meth:`state`."""
        for g, s in zip(self._gens, snap["gens"], strict=True):  # type: ignore[call-overload]
            g.bit_generator.state = s
        self._buf = {k: v.copy() for k, v in snap["buf"].items()}  # type: ignore[attr-defined]
        self._pos = dict(snap["pos"])  # type: ignore[call-overload]

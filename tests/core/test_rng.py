"""Seed tree and per-entity block streams (engine spec §10)."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.core.rng import BlockRNG, check_seed, entity_key, generator, name_hash


def test_name_hash_is_crc32() -> None:
    import zlib

    assert name_hash("auv") == zlib.crc32(b"auv")


def test_stream_equals_spawned_child() -> None:
    key = entity_key(0, "auv", 3, "gps")
    direct = generator(42, key).standard_normal(5)
    ss = np.random.SeedSequence(42, spawn_key=key)
    expected = np.random.Generator(np.random.PCG64(ss)).standard_normal(5)
    np.testing.assert_array_equal(direct, expected)


def test_rows_independent_of_n_and_block_size() -> None:
    big = BlockRNG.for_entities(7, 0, "auv", [0, 1, 2, 3, 4], "imu", block=16)
    small = BlockRNG.for_entities(7, 0, "auv", [3], "imu", block=5)
    a = np.concatenate([big.normal(size=3) for _ in range(20)], axis=1)
    b = np.concatenate([small.normal(size=3) for _ in range(20)], axis=1)
    np.testing.assert_array_equal(a[3], b[0])


def test_uniform_range_and_state_roundtrip() -> None:
    r = BlockRNG.for_entities(1, 0, "b", [0, 1], "p", block=8)
    u = r.uniform(2.0, 3.0, size=4)
    assert u.shape == (2, 4) and np.all((u >= 2.0) & (u < 3.0))
    snap = r.state()
    x1 = r.normal(size=10)
    r.set_state(snap)
    np.testing.assert_array_equal(r.normal(size=10), x1)


@pytest.mark.parametrize("bad", [-1, 2**63, 1.5, "7", True])
def test_bad_seeds_rejected(bad: object) -> None:
    with pytest.raises(ConfigError, match="seed"):
        check_seed(bad)

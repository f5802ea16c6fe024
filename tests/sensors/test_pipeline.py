"""Generic sensor chain (engine spec §6.1): delay line, rates, noise, dropout, buffer."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.core.errors import ConfigError
from marinesim.core.params import validate
from marinesim.core.rng import BlockRNG
from marinesim.sensors.pipeline import ChainParams, DelayLine, SensorChain


def test_delay_line_interpolates_and_holds_oldest():
    d = DelayLine(1, 1, 0.01, 0.05)
    for k in range(10):
        d.push(float(k))  # value = tick index
    assert d.read(0.0)[0, 0] == 9.0
    assert d.read(0.03)[0, 0] == pytest.approx(6.0)
    assert d.read(0.025)[0, 0] == pytest.approx(6.5)
    d2 = DelayLine(2, 1, 0.01, 0.05)
    d2.push(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(d2.read(0.04)[:, 0], [1.0, 2.0])  # before the start: held
    with pytest.raises(ConfigError):
        d.read(1.0)


def _chain(n, members, **kw):
    p = ChainParams(rate_hz=10.0, **kw)
    rng = BlockRNG.for_entities(3, 0, "auv", members, "sonar", block=64)
    return SensorChain(p, n, 1, 0.01, rng)


def test_chain_is_per_entity_and_has_fixed_consumption():
    single = _chain(1, [0], noise_std=0.1, delay=0.02)
    batch = _chain(3, [0, 1, 2], noise_std=0.1, delay=0.02)
    lossy = _chain(1, [0], noise_std=0.1, delay=0.02, dropout_probability=0.5)
    outs = []
    for k in range(200):
        truth = np.full((3, 1), float(k))
        single.push(truth[:1])
        batch.push(truth)
        lossy.push(truth[:1])
        if single.due(k):
            a, da, ts = single.sample(k * 0.01)
            b, _, _ = batch.sample(k * 0.01)
            c, dc, _ = lossy.sample(k * 0.01)
            assert a[0, 0] == b[0, 0]  # entity 0 does not depend on N
            assert a[0, 0] == c[0, 0]  # dropout draws do not shift the noise stream
            assert ts == pytest.approx(k * 0.01 - 0.02)
            outs.append((da[0], dc[0], b[1, 0] != b[0, 0]))
    assert all(o[0] for o in outs)
    assert 0 < sum(not o[1] for o in outs) < len(outs)
    assert all(o[2] for o in outs)
    assert len(single.buffer) == 1


def test_chain_limits_quantisation_and_rate_check():
    ch = _chain(1, [0], min_value=0.5, max_value=50.0, below_substitute=8.888, quantum=0.01)
    for v in (0.2, 60.0, 12.3456):
        ch.push(np.array([[v]]))
        x, _, _ = ch.sample(0.0)
        assert x[0, 0] == pytest.approx({0.2: 8.88, 60.0: 50.0, 12.3456: 12.34}[v])
    with pytest.raises(ConfigError, match="not a multiple"):
        SensorChain(
            ChainParams(rate_hz=3.0), 1, 1, 0.01, BlockRNG.for_entities(1, 0, "a", [0], "b")
        )
    with pytest.raises(ConfigError, match="bogus"):
        validate(ChainParams, {"rate_hz": 10.0, "bogus": 1})

"""Clock (integer ticks, rates) and bus (ordering, scope, queue drops)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from marinesim.core.errors import ConfigError
from marinesim.engine.bus import Bus, Subscription
from marinesim.engine.clock import Clock, period_ticks


def test_time_is_computed_from_the_tick_count() -> None:
    c = Clock(dt=0.1, start=5.0)
    c.k = 10**7
    assert c.t == 5.0 + 10**7 * 0.1
    assert c.h == 0.1
    assert Clock(dt=0.1, substeps=4).h == pytest.approx(0.025)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"dt": 0.0}, "dt must be a positive"),
        ({"dt": 0.1, "substeps": 0}, "substeps must be an integer >= 1"),
        ({"dt": 0.1, "end": -1.0}, "must be after start"),
        ({"dt": 0.1, "time_warp": -1.0}, "time_warp must be >= 0"),
    ],
)
def test_clock_rejects_bad_values(kwargs: dict[str, float], msg: str) -> None:
    with pytest.raises(ConfigError, match=msg):
        Clock(**kwargs)  # type: ignore[arg-type]


@given(st.integers(1, 1000), st.sampled_from([0.01, 0.05, 0.1, 0.2, 0.25]))
def test_period_ticks_inverts_rates(m: int, dt: float) -> None:
    assert period_ticks(1.0 / (m * dt), dt) == m


def test_period_ticks_error_lists_nearest_rates() -> None:
    with pytest.raises(ConfigError, match=r"nearest valid rates: 3.33333 Hz or 2.5 Hz"):
        period_ticks(3.0, 0.1, name="entities.auv.survey")


def _pub(
    bus: Bus,
    topic: str,
    block: str,
    sender: int,
    t: float,
    delay: float = 0.0,
    scope: str = "local",
) -> None:
    bus.publish(
        topic,
        block,
        np.array([0]),
        np.array([sender]),
        np.array([t]),
        t_pub=t,
        delay=delay,
        scope=scope,
    )


def test_delivery_order_and_delay() -> None:
    bus = Bus()
    sub = bus.subscribe(Subscription("a.p", "a", frozenset({"x"})))
    _pub(bus, "x", "a", 3, 0.0, delay=0.2)
    _pub(bus, "x", "a", 2, 0.1)
    _pub(bus, "x", "a", 1, 0.1)
    bus.deliver(0.1)
    assert [int(m.sender[0]) for m in sub.inbox] == [1, 2]  # same times: by sender id
    bus.deliver(0.15)
    assert len(sub.inbox) == 2
    bus.deliver(0.2)
    assert [int(m.sender[0]) for m in sub.inbox] == [1, 2, 3]
    assert [m.seq for m in sub.inbox] == [2, 1, 0]  # seq per (topic, block) in publish order


def test_local_scope_stays_in_the_block_and_global_reaches_all() -> None:
    bus = Bus()
    a = bus.subscribe(Subscription("a.p", "a", frozenset({"x"})))
    b = bus.subscribe(Subscription("b.p", "b", frozenset({"x"})))
    _pub(bus, "x", "a", 0, 0.0)
    _pub(bus, "x", "a", 0, 0.0, scope="global")
    bus.deliver(0.0)
    assert len(a.inbox) == 2 and len(b.inbox) == 1
    assert b.inbox[0].scope == "global"


def test_queue_overflow_drops_oldest_and_counts() -> None:
    bus = Bus()
    sub = bus.subscribe(Subscription("a.p", "a", frozenset({"x"}), queue_size=2))
    for i in range(5):
        _pub(bus, "x", "a", 0, 0.01 * i)
    bus.deliver(1.0)
    assert [float(m.value[0]) for m in sub.inbox] == [0.03, 0.04]
    assert bus.stats()["dropped"] == {"a.p:x": 3}


def test_global_messages_are_capped_per_topic_and_counted() -> None:
    bus = Bus(network_queue_size=3)
    sub = bus.subscribe(Subscription("b.p", "b", frozenset({"x", "y"})))
    for i in range(5):
        _pub(bus, "x", "a", 0, 0.01 * i, scope="global")
        _pub(bus, "y", "b", 0, 0.01 * i)  # local: unbounded
    bus.deliver(1.0)
    xs = [float(m.value[0]) for m in sub.inbox if m.topic == "x"]
    assert xs == [0.02, 0.03, 0.04]
    assert len([m for m in sub.inbox if m.topic == "y"]) == 5
    assert bus.stats()["dropped"] == {"b.p:x": 2}

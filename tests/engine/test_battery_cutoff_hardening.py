"""An empty battery in the 6-DOF thruster plant: cut off, thrusters stop, one event."""

from __future__ import annotations

from marinesim.scenario.build import load_simulation


def test_empty_battery_stops_the_thrusters_with_an_event():
    sim = load_simulation(
        "bluerov2_station_keeping",
        sets=[
            "time.end=6",
            "entities.rov.motion.params.thrusters.battery.capacity_ah=0.0001",
            "entities.rov.motion.params.thrusters.battery.initial_soc=0.5",
        ],
        seed=1,
    )
    res = sim.run()
    events = [e for e in res.events if "battery empty" in str(getattr(e, "message", e))]
    assert len(events) == 1
    names = [n for n in res.signals if "thrust" in n and "cmd" not in n]
    assert names, sorted(res.signals)
    assert abs(res[names[0]]).max() > 0.0  # they pushed before the battery emptied
    last = res[names[0]][:, -1]
    assert abs(last).max() == 0.0  # the thrusters stopped after the cut-off

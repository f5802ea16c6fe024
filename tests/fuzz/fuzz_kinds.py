"""Every input kind of marinesim: its bundled example and the in-process loader that reads it.

A kind's ``load(path)`` reads the file the way the command line does and returns what was
built (used only to check that numbers in it are finite).  ``extra`` files are written next
to the input (a scenario's current field, a case's expected output).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "marinesim"


@dataclass(frozen=True)
class Kind:
    """One input kind: file name, example bytes, loader, companion files."""

    name: str
    filename: str
    example: bytes
    load: Callable[[Path], Any]
    extra: dict[str, bytes] = field(default_factory=dict)


def _moos_example() -> bytes:
    from marinesim.interop.moos.interface import example_text

    text = example_text("usm", None)
    return (
        "ServerHost = localhost\nMOOSTimeWarp = 1\nLatOrigin = 42.358456\n"
        "LongOrigin = -71.087589\n\n" + text
    ).encode()


def _load_moos(p: Path) -> Any:
    from marinesim.interop.moos.files import load_usm_config

    return load_usm_config(p, compat="doc").config


def _load_moos_compat(p: Path) -> Any:
    from marinesim.interop.moos.files import load_usm_config

    return load_usm_config(p, compat="moos").config


THRUSTMAP = b"-100:-2, -50:-1, 0:0, 20:1, 40:2, 60:3, 80:5, 100:5"


def _load_thrustmap(p: Path) -> Any:
    from marinesim.core.textio import read_input_text
    from marinesim.models.usm.thrustmap import ThrustMap

    text = read_input_text(p, what="thrust map")
    tm, _w = ThrustMap.parse(text, "doc", file=p, line=1)
    tm2, _w = ThrustMap.parse(text, "moos", file=p, line=1)
    return (tm.speed([-100.0, -10.0, 0.0, 10.0, 100.0]), tm2.thrust([-1.0, 0.5, 2.0]))


def _load_cfd(p: Path) -> Any:
    from marinesim.interop.moos.files import load_current_field

    fld, _w = load_current_field(p)
    return fld.force([0.0, 50.0], [0.0, 50.0])


SCRIPT = b"""// gusts and a pause
event = var=DESIRED_THRUST, val=50, time=0
event = var=DESIRED_RUDDER, val=-20, time=5.5
event = var=DRIFT_VECTOR_ADD, val="90,0.5", time=20
event = var=USM_SIM_PAUSED, val=true, time=30, source=operator
"""


def _load_script(p: Path) -> Any:
    from marinesim.interop.moos.script import read_script

    return [e.t for e in read_script(p)]


def _load_scenario(p: Path) -> Any:
    from marinesim.scenario.build import load_simulation

    return load_simulation(p)


def _load_terrain(p: Path) -> Any:
    from marinesim.interop.surftrak_runner import load_terrain

    prof = load_terrain(p)
    return prof.height_at([0.0, 1.0, 1e3])


BATHY = b"north\\east,-10,0,10\n0,20,21,22\n50,15,16,17\n100,10,11,12\n"


def _load_bathy(p: Path) -> Any:
    from marinesim.environment.terrain import profile_along_track, read_bathymetry

    b = read_bathymetry(p)
    prof = profile_along_track(b, north0=0.0, east0=0.0, heading_deg=0.0, speed=1.0, duration=5)
    return (b.depth_at([0.0, 30.0], [0.0, 5.0]), prof.heights)


PILOT = b"""# full climb at 2 m/s for 8 s, then stick centred
2.0  climb  200
10.0 climb  0
12.0 throttle 300
"""


def _load_pilot(p: Path) -> Any:
    from marinesim.control.pilot import read_pilot_script

    return read_pilot_script(p).sample([0.0, 5.0, 20.0])


def _load_actuators(p: Path) -> Any:
    from marinesim.interop.uuv import load_actuators

    return load_actuators(p)


ACT_YAML = b"""thrusters:
  - name: t0
    position: [-0.5, 0.0, 0.0]
    rpy: [0.0, 0.0, 3.14159]
    dynamics: {type: first_order, time_constant: 0.05}
    conversion: {type: basic, rotor_constant: 0.0002}
    clamp_min: -3000
    clamp_max: 3000
    thrust_min: -50
    thrust_max: 50
    gain: 1
"""

T200_CSV = b"""voltage_V,pwm_us,rpm,current_A,voltage_meas_V,power_W,force_N,efficiency_g_per_W
12,1100,-3500,13.6,12.0,163,-29.3,-18.3
12,1300,-2000,3.1,12.0,37,-9.2,-25.2
12,1500,0,0.0,12.0,0,0.0,0
12,1700,2000,3.0,12.0,36,11.8,33.4
12,1900,3600,13.0,12.0,156,37.4,24.4
16,1100,-4000,21.0,16.0,336,-39.0,-11.8
16,1300,-2400,4.5,16.0,72,-13.0,-18.4
16,1500,0,0.0,16.0,0,0.0,0
16,1700,2400,4.5,16.0,72,16.0,22.6
16,1900,4100,20.0,16.0,320,50.0,15.9
"""


def _load_t200(p: Path) -> Any:
    from marinesim.actuators.t200 import read_t200_csv

    tab = read_t200_csv(p)
    return tab.current([5.0, -5.0], [12.0, 14.0])


LAYOUT = b"""name: sub
thrusters:
  - {name: t1, position: [0.3, 0.27, 0.0], yaw: -0.785398, pitch: 0.0}
  - {name: t2, position: [0.3, -0.27, 0.0], yaw: 0.785398, pitch: 0.0}
  - {name: t3, position: [-0.3, 0.27, 0.0], yaw: 0.785398, pitch: 0.0}
  - {name: t4, position: [-0.3, -0.27, 0.0], yaw: -0.785398, pitch: 0.0}
  - {name: t5, position: [0.13, 0.27, 0.0], yaw: 0.0, pitch: 1.570796}
  - {name: t6, position: [0.13, -0.27, 0.0], yaw: 0.0, pitch: 1.570796}
  - {name: t7, position: [-0.13, 0.27, 0.0], yaw: 0.0, pitch: 1.570796}
  - {name: t8, position: [-0.13, -0.27, 0.0], yaw: 0.0, pitch: 1.570796}
"""


def _load_layout(p: Path) -> Any:
    from marinesim.allocation.vehicles import load_layout_file

    lay = load_layout_file(p)
    return lay.tam() if callable(getattr(lay, "tam", None)) else lay


def _load_case(p: Path) -> Any:
    from marinesim.reference import usm as ref_usm

    return ref_usm.replay_case(p)


def _load_expected(p: Path) -> Any:
    from marinesim.reference import usm as ref_usm

    return ref_usm.read_expected(p)


PARAMS = (REPO / "tests" / "data" / "surftrak" / "sitl.params").read_bytes() if (
    REPO / "tests" / "data" / "surftrak" / "sitl.params"
).exists() else b"PSC_JERK_Z 8\nPILOT_ACCEL_Z 500\n"


def _load_params(p: Path) -> Any:
    from marinesim.interop.ardupilot import read_params

    return read_params(p)[0]


def _case_files() -> tuple[bytes, dict[str, bytes]]:
    folder = SRC / "reference" / "data" / "usm"
    case = (folder / "straight_default_map.scenario.json").read_bytes()
    expected = gzip.decompress((folder / "straight_default_map.expected.csv.gz").read_bytes())
    lines = expected.splitlines(keepends=True)[:60]  # a short head keeps replays fast
    # the case names its expected output ("expected_csv"); the replay reads its header
    return case, {"straight_default_map.expected.csv.gz": gzip.compress(b"".join(lines), mtime=0)}


def _urdf() -> bytes:
    return (REPO / "tests" / "interop" / "data" / "lauv_actuators.urdf").read_bytes()


def all_kinds() -> dict[str, Kind]:
    """Every input kind with its example."""
    scen = (SRC / "scenario" / "builtin" / "demo_survey.yaml").read_bytes()
    cfd = (SRC / "scenario" / "builtin" / "demo_current.cfd").read_bytes()
    terrain = resources.files("marinesim.environment").joinpath(
        "data", "surftrak", "sawtooth.csv"
    ).read_bytes()
    case, case_extra = _case_files()
    expected_gz = next(iter(case_extra.values()))
    kinds = [
        Kind("moos", "mission.moos", _moos_example(), _load_moos),
        Kind("moos_compat", "mission.moos", _moos_example(), _load_moos_compat),
        Kind("thrustmap", "map.txt", THRUSTMAP, _load_thrustmap),
        Kind("cfd", "field.cfd", cfd, _load_cfd),
        Kind("script", "events.script", SCRIPT, _load_script),
        Kind("scenario", "scenario.yaml", scen, _load_scenario, {"demo_current.cfd": cfd}),
        Kind("terrain", "terrain.csv", terrain, _load_terrain),
        Kind("bathymetry", "grid.csv", BATHY, _load_bathy),
        Kind("pilot", "pilot.txt", PILOT, _load_pilot),
        Kind("urdf", "vehicle.urdf", _urdf(), _load_actuators),
        Kind("actuators_yaml", "actuators.yaml", ACT_YAML, _load_actuators),
        Kind("t200", "t200.csv", T200_CSV, _load_t200),
        Kind("layout", "layout.yaml", LAYOUT, _load_layout),
        Kind("case", "case.scenario.json", case, _load_case, case_extra),
        Kind("expected_gz", "case.expected.csv.gz", expected_gz, _load_expected),
        Kind("params", "sitl.params", PARAMS, _load_params),
    ]
    return {k.name: k for k in kinds}

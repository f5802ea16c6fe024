"""The uSimMarine iteration keeps the bits of the numpy law it replaced.

``data/usm_golden_bits.json`` holds, per case, a SHA-256 of every publication and of the final
state written by the numpy law (``models/usm/propagate.py``'s ``_propagate_record``) before the
iteration went through the rows (:mod:`marinesim.models.usm.rows`).  Each case drives one
configuration (variant, compat, thrust maps, dual state, differential and reverse thrust,
pause, water depth, turn radius, drift) with seeded random mail, for one and for several
vehicles; the digest must not change.  Regenerate only from a tree whose law is known good:
``python tests/models/test_usm_golden_bits.py`` writes the file.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from marinesim.core.jitable import jit_enabled
from marinesim.models import usm
from marinesim.models.usm import rows as R
from marinesim.models.usm.config import config_from_mapping

GOLDEN = Path(__file__).parent / "data" / "usm_golden_bits.json"
_DATUM = (42.358456, -71.087589)

#: name → (params, variant, compat, extra mail kinds)
CASES: dict[str, tuple[dict, str, str, tuple[str, ...]]] = {
    "usm_doc": ({}, "usm", "doc", ()),
    "usm_moos_pairs": ({"thrust_map": "0:0, 20:1, 40:2, 60:3, 80:4, 100:5", "turn_rate": 70},
                       "usm", "moos", ()),
    "usm_neg_pairs": ({"thrust_map": "-100:-2, -50:-1, 20:1, 50:1, 100:3"}, "usm", "doc", ()),
    "usm_reflect_limits": ({"thrust_map": "20:1, 80:2", "thrust_reflect": "true",
                            "max_acceleration": 0.3, "max_deceleration": 0.2}, "usm", "doc", ()),
    "usm_factor0": ({"thrust_factor": 0.0}, "usm", "doc", ()),
    "usm_depth": ({"buoyancy_rate": 0.1, "max_depth_rate": 1.0, "max_depth_rate_speed": 2.0},
                  "usm", "doc", ("elev",)),
    "usm_rotate_drift": ({"rotate_speed": 0.5, "drift_x": 0.2}, "usm", "moos", ("drift",)),
    "usm_dual": ({"dual_state": "true", "drift_y": 0.3}, "usm", "doc", ("drift",)),
    "usm_water_depth": ({"default_water_depth": 50}, "usm", "doc", ("elev", "wd")),
    "usm_diff_reverse": ({}, "usm", "moos", ("diff", "reverse")),
    "usm_pause": ({}, "usm", "moos", ("pause",)),
    "v22_moos": ({}, "usm_v22", "moos", ()),
    "v22_doc_depth": ({"buoyancy_rate": 0.05}, "usm_v22", "doc", ("elev", "wd")),
    "v22_turn_radius": ({"turn_radius": 8.0, "max_speed": 3.0}, "usm_v22", "moos", ("radius",)),
    "v22_diff_reverse": ({}, "usm_v22", "moos", ("diff", "reverse")),
    "v22_dual_pause": ({"dual_state": "true"}, "usm_v22", "doc", ("drift", "pause")),
    # steps of zero and negative length, and a clock per vehicle
    "usm_clock_limits": ({"max_acceleration": 0.3, "max_deceleration": 0.2}, "usm", "moos",
                         ("clock", "elev", "diff", "reverse")),
    "usm_clock_dual_map": ({"dual_state": "true", "drift_x": 0.2, "max_deceleration": 0.4,
                            "thrust_map": "-100:-2, 20:1, 100:3"}, "usm", "doc", ("clock",)),
    "v22_clock_radius": ({"turn_radius": 5.0}, "usm_v22", "moos",
                         ("clock", "diff", "reverse")),
}  # fmt: skip


def _feed(h: Any, v: object) -> None:
    a = np.asarray(v)
    if a.dtype == object:
        h.update(repr(a.tolist()).encode())
    else:
        # every NaN as one pattern: which NaN an invalid operation gives (its sign bit)
        # differs between numpy, libm and compiled code, and carries no value
        b = np.array(a, dtype=np.float64)
        b[np.isnan(b)] = np.nan
        h.update(b.view(np.uint8).tobytes())


def digest(name: str, n: int) -> str:
    params, variant, compat, kinds = CASES[name]
    cfg, _w = config_from_mapping(dict(params), variant=variant, compat=compat)
    rng = np.random.default_rng([len(name), sum(map(ord, name)), n])
    st = usm.init(cfg, n, moos_time=100.0, datum=_DATUM)
    t = 100.0
    clocks = np.full(n, 100.0)
    h = hashlib.sha256()
    for step in range(150):
        t += float(rng.choice([0.1, 0.25, 0.05]))
        if "clock" in kinds:  # the same time again, back in time, or a clock per vehicle
            kind = int(rng.integers(0, 5))
            if kind == 1:
                clocks = clocks - 0.05
            elif kind == 2:
                clocks = clocks + rng.uniform(0.0, 0.2, n) * (rng.random(n) < 0.6)
            elif kind > 2:
                clocks = clocks + 0.1
            t = float(clocks.max())
        mail: list[tuple[str, object]] = []
        if step % 6 == 0:
            rud = rng.uniform(-120, 120, n) * (rng.random(n) < 0.7)
            mail += [("DESIRED_RUDDER", rud), ("DESIRED_THRUST", rng.uniform(-110, 110, n))]
            elev = rng.uniform(-100, 100, n) if "elev" in kinds and rng.random() < 0.6 else 0.0
            mail.append(("DESIRED_ELEVATOR", np.broadcast_to(elev, (n,)).copy()))
        if "diff" in kinds and step % 40 == 10:
            mail.append(("THRUST_MODE_DIFFERENTIAL", "true" if step % 80 == 10 else "false"))
        if "diff" in kinds and step % 6 == 3:
            mail += [("DESIRED_THRUST_L", rng.uniform(-100, 100, n)),
                     ("DESIRED_THRUST_R", rng.uniform(-100, 100, n))]  # fmt: skip
        if "reverse" in kinds and step % 50 == 25:
            mail.append(("THRUST_MODE_REVERSE", "true" if step % 100 == 25 else "false"))
        if "pause" in kinds and step % 45 == 20:
            mail.append(("USM_SIM_PAUSED", "true" if step % 90 == 20 else "false"))
        if "wd" in kinds and step == 30:
            mail.append(("WATER_DEPTH", rng.uniform(5, 40, n)))
        if "radius" in kinds and step % 70 == 5:
            mail.append(("USM_TURN_RADIUS", rng.uniform(0, 15, n)))
        if "drift" in kinds and step % 33 == 7:
            mail.append(("DRIFT_X", rng.normal(0, 0.3, n)))
        for var, val in mail:
            st, posts, _w = usm.apply_mail(cfg, st, var, val, moos_time=t)
            for pname, pv in posts:
                h.update(pname.encode())
                _feed(h, pv)
        st, pubs = usm.iterate(cfg, st, clocks.copy() if "clock" in kinds and n > 1 else t)
        for pname, pv in pubs.items():
            h.update(pname.encode())
            _feed(h, pv)
    for f in ("x", "y", "heading", "speed", "depth", "pitch", "yaw", "sog", "hog", "altitude",
              "ts", "iteration", "gt_x", "gt_y", "gt_heading", "hsin", "hcos", "psin"):  # fmt: skip
        h.update(f.encode())
        _feed(h, getattr(st, f))
    return h.hexdigest()


@pytest.mark.parametrize("route", ["interpreted", "compiled"])
@pytest.mark.parametrize("n", [1, 4])
@pytest.mark.parametrize("name", sorted(CASES))
def test_iteration_keeps_the_numpy_law_bits(
    name: str, n: int, route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if route == "compiled":
        if not jit_enabled():
            pytest.skip("compiled laws are off (MARINESIM_JIT=0 or no numba)")
        monkeypatch.setattr(R, "COMPILED_MIN", 1)  # compiled even for one vehicle
    else:
        monkeypatch.setattr(R, "jit_enabled", lambda: False)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert digest(name, n) == golden[f"{name}/{n}"]


if __name__ == "__main__":
    out = {f"{k}/{n}": digest(k, n) for k in sorted(CASES) for n in (1, 4)}
    GOLDEN.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(out)} digests to {GOLDEN}", file=sys.stderr)

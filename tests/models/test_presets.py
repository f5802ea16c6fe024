"""Vehicle presets: shipped files, sources, flags, and PythonVehicleSimulator constants."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from marinesim.core.errors import ConfigError, UnknownNameError
from marinesim.models import presets
from marinesim.models.sixdof import fossen6dof, pvs

CONSTS = (
    Path(__file__).resolve().parents[2] / "src/marinesim/reference/data/pvs/model_constants.json"
)


def test_names_and_sources() -> None:
    names = presets.names()
    for required in (
        "remus100",
        "otter",
        "rexrov",
        "rexrov_simplified",
        "lauv",
        "bluerov2_heavy_vonbenzon2022",
        "bluerov2_heavy_wu2018",
    ):
        assert required in names
        p = presets.get(required)
        assert p.source and p.description
    assert presets.get("bluerov2_heavy").name == "bluerov2_heavy_vonbenzon2022"
    assert presets.get("bluerov2_heavy_wu2018").unverified
    assert presets.get("bluerov2_heavy_vonbenzon2022").unverified
    assert not presets.get("rexrov").unverified


def test_unknown_preset_suggests() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'rexrov'"):
        presets.get("rexrow")


def test_bluerov_heavy_has_eight_thrusters() -> None:
    for name in ("bluerov2_heavy_vonbenzon2022", "bluerov2_heavy_wu2018"):
        thr = presets.get(name).data["thrusters"]["list"]
        assert len(thr) == 8
        for t in thr:
            assert np.linalg.norm(t["direction_frd"]) == pytest.approx(1.0)


def test_rexrov_values_from_spec() -> None:
    m = presets.build("rexrov")
    assert isinstance(m, fossen6dof.Fossen6Dof)
    assert m.m_a[2, 5] == 10.774 and m.m_a[5, 2] == 10.775  # used as given
    assert m.m[0, 0] == pytest.approx(1862.87 + 779.79)
    # net buoyancy +26.86 kg at rho = 1028
    assert 1028 * 1.83826 - 1862.87 == pytest.approx(26.86, abs=0.01)


def test_overrides() -> None:
    m = presets.build("lauv", integrator="semi_implicit_euler", attitude="euler")
    assert m.integrator == "semi_implicit_euler" and m.attitude == "euler"
    with pytest.raises(ConfigError):
        presets.build("lauv", integrater="rk4")


def _compare(obj: dict, expected: dict) -> int:
    n = 0
    for key, val in expected.items():
        if isinstance(val, str) or isinstance(val, list) and val and isinstance(val[0], str):
            continue
        assert key in obj, f"missing constant {key}"
        got = np.asarray(obj[key], dtype=float)
        np.testing.assert_allclose(
            got, np.asarray(val, dtype=float), rtol=1e-13, atol=1e-15, err_msg=key
        )
        n += 1
    return n


def test_remus_constants_match_pvs() -> None:
    data = json.loads(CONSTS.read_text())["vehicles"]
    key = next(k for k in data if k.startswith("remus100"))
    p = pvs.remus100("depthHeadingAutopilot", 30, 50, 1525, 0.5, 170)
    from marinesim.control.autopilots import RemusDepthHeadingGains, RemusDepthHeadingState

    obj = {
        **p.constants(),
        **vars(RemusDepthHeadingGains()),
        **{k: 0.0 for k in vars(RemusDepthHeadingState.zeros(1))},
    }
    obj.update(D2R=np.pi / 180, nu=np.zeros(6), u_actual=np.zeros(3), dimU=3, psi_d=0, r_d=0, a_d=0)
    obj["ref_z"], obj["ref_psi"], obj["ref_n"] = p.ref_z, p.ref_psi, p.ref_n
    assert _compare(obj, data[key]) >= 60


def test_otter_constants_match_pvs() -> None:
    data = json.loads(CONSTS.read_text())["vehicles"]
    key = next(k for k in data if k.startswith("otter"))
    p = pvs.otter("headingAutopilot", 100.0, 0.3, -30.0, 200.0)
    from marinesim.control.autopilots import OtterHeadingGains

    g = vars(OtterHeadingGains(binv=p.Binv))
    obj = {**p.constants(), **{k: g[k] for k in ("wn", "zeta", "r_max", "wn_d", "zeta_d")}}
    obj.update(nu=np.zeros(6), u_actual=np.zeros(2), dimU=2, e_int=0, psi_d=0, r_d=0, a_d=0)
    assert _compare(obj, data[key]) >= 40


def test_pvs_constructor_errors() -> None:
    with pytest.raises(UnknownNameError, match="depthHeadingAutopilot"):
        pvs.remus100("depthHeadingAutopilo")
    with pytest.raises(ConfigError, match="depth"):
        pvs.remus100("depthHeadingAutopilot", 150, 0, 1000)
    with pytest.raises(ConfigError, match="RPM"):
        pvs.remus100("depthHeadingAutopilot", 30, 0, 2000)
    with pytest.raises(UnknownNameError):
        pvs.otter("headingAutopilt")

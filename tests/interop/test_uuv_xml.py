"""UUV Simulator XML/URDF import and marinesim actuator YAML give the same actuators."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from marinesim.actuators import fins as fn
from marinesim.actuators import thruster as th
from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.frames import rotation_from_euler
from marinesim.interop.uuv import load_actuators, parse_actuators_yaml, parse_uuv_xml

DATA = Path(__file__).parent / "data"
URDF = DATA / "lauv_actuators.urdf"

LAUV_YAML = f"""\
thrusters:
  - name: lauv/thruster_0
    position: [-0.53994, -0.0, -0.0]
    rpy: [0.0, -0.0, {-math.pi!r}]
    dynamics: {{type: first_order, time_constant: 0.05}}
    conversion: {{type: basic, rotor_constant: 0.0002}}
    clamp_min: 3000
    clamp_max: -3000
    thrust_min: -50
    thrust_max: 50
    gain: 1
    thrust_efficiency: 1
    propeller_efficiency: 1
fins:
  - name: lauv/fin0
    position: [-0.4, -0.0, -0.04]
    rpy: [{math.pi!r}, -0.0, -0.0]
    lower: -1.5707961
    upper: 1.5707961
    dynamics: {{type: first_order, time_constant: 0.2}}
    liftdrag: {{type: quadratic, lift_constant: 9.8688, drag_constant: 6.513408}}
  - name: lauv/fin1
    position: [-0.4, 0.04, -0.0]
    rpy: [{1.5707963267948966 + math.pi!r}, -0.0, -0.0]
    lower: -1.5707961
    upper: 1.5707961
    dynamics: {{type: first_order, time_constant: 0.2}}
    liftdrag: {{type: quadratic, lift_constant: 9.8688, drag_constant: 6.513408}}
"""

THRUSTER_PLUGIN = """\
<plugin name="t" filename="libuuv_thruster_ros_plugin.so">
  <thrusterID>0</thrusterID>
  <dynamics>
    <type>FirstOrder</type>
    <timeConstant>0.05</timeConstant>
  </dynamics>
  <conversion>
    <type>Basic</type>
    <rotorConstant>0.00031</rotorConstant>
  </conversion>
  {extra}
</plugin>
"""


def _quiet(fn_, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)
        return fn_(*a, **k)


def test_urdf_and_yaml_give_identical_actuators() -> None:
    a = _quiet(load_actuators, URDF)
    b = _quiet(parse_actuators_yaml, LAUV_YAML, file="lauv.yaml")
    assert a == b
    assert [f.name for f in a.fins] == ["lauv/fin0", "lauv/fin1"]  # ordered by fin_id


def test_urdf_import_warns_about_the_swapped_lauv_clamp_with_its_line() -> None:
    with pytest.warns(
        ConfigWarning,
        match=r"lauv_actuators\.urdf:17:7: thrusters\.0\.clamp_min: .*input clamp disabled",
    ):
        a = load_actuators(URDF)
    with pytest.raises(ConfigError, match="strict"):
        load_actuators(URDF, strict=True)
    e = th.effective(a.thrusters[0])
    assert (e.clamp_min, e.clamp_max, e.thrust_min, e.thrust_max) == (-np.inf, np.inf, -50.0, 50.0)


def test_imported_thruster_pushes_along_minus_x() -> None:
    a = _quiet(load_actuators, URDF)
    np.testing.assert_allclose(th.thrust_direction(a.thrusters[0]), [-1.0, 0.0, 0.0], atol=1e-15)


def test_imported_fin_force_is_the_flipped_gazebo_force() -> None:
    a = _quiet(load_actuators, URDF)
    t = np.diag([1.0, -1.0, -1.0])
    rpy_flu = (1.5707963267948966, 0.0, 0.0)
    gz = a.fins[1].model_copy(update={"position": (-0.4, -0.04, 0.0), "rpy": rpy_flu})
    nu_flu = np.array([[1.5, 0.05, -0.1, 0.0, 0.02, 0.1]])
    nu_frd = nu_flu * np.array([1, -1, -1, 1, -1, -1])
    for delta in (-0.4, 0.1):
        f_gz = fn.fin_forces(fn.FinBankParams(fins=(gz,)), [[delta]], nu_flu)
        f_ms = fn.fin_forces(fn.FinBankParams(fins=(a.fins[1],)), [[delta]], nu_frd)
        np.testing.assert_allclose(f_ms[3][0, 0], t @ f_gz[3][0, 0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(f_ms[4][0, 0], t @ f_gz[4][0, 0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        rotation_from_euler(*a.fins[1].rpy), t @ rotation_from_euler(*rpy_flu), atol=1e-15
    )


def test_single_pasted_plugin_block() -> None:
    with pytest.warns(ConfigWarning, match="clamp_min"):
        a = parse_uuv_xml(
            THRUSTER_PLUGIN.format(extra="<clampMin>0</clampMin><clampMax>0</clampMax>")
        )
    assert len(a.thrusters) == 1 and not a.fins
    assert a.thrusters[0].conversion.rotor_constant == 0.00031


def test_unknown_tag_error_names_file_line_and_tag() -> None:
    text = THRUSTER_PLUGIN.format(extra="<thrustMaxx>5</thrustMaxx>")
    with pytest.raises(ConfigError) as exc:
        parse_uuv_xml(text, file="rexrov.urdf")
    msg = str(exc.value)
    assert msg.startswith(
        "rexrov.urdf:11:3: thrustMaxx: unknown tag <thrustMaxx> in a thruster plugin"
    )
    assert "did you mean <thrustMax>?" in msg


def test_unknown_tag_inside_dynamics_and_unknown_type() -> None:
    text = (
        THRUSTER_PLUGIN.format(extra="")
        .replace("<timeConstant>", "<timeconstant>")
        .replace("</timeConstant>", "</timeconstant>")
    )
    with pytest.raises(
        ConfigError,
        match=r"x.xml:5:5: dynamics.timeconstant: unknown tag <timeconstant>.*did you mean <timeConstant>",
    ):
        parse_uuv_xml(text, file="x.xml")
    text = THRUSTER_PLUGIN.format(extra="").replace("FirstOrder", "FirstOrdr")
    with pytest.raises(
        ConfigError,
        match=r":4:5: dynamics.type: unknown <dynamics> type 'FirstOrdr'; did you mean 'FirstOrder'",
    ):
        parse_uuv_xml(text, file="x.xml")


def test_malformed_and_unexpanded_xml() -> None:
    with pytest.raises(ConfigError, match=r"x.xml:3:\d+: malformed XML"):
        parse_uuv_xml("<plugin>\n<gain>1</gain>\n</plugn>", file="x.xml")
    with pytest.raises(ConfigError, match="run `xacro`"):
        parse_uuv_xml(THRUSTER_PLUGIN.format(extra="<gain>${gain}</gain>"))


def test_fin_plugin_without_its_joint_is_an_error() -> None:
    text = URDF.read_text().split("<gazebo>")[2].split("</gazebo>")[0]
    with pytest.raises(ConfigError, match="joint 'lauv/fin1_joint' not found"):
        parse_uuv_xml(text, file="fin.xml")


def test_yaml_errors_are_located() -> None:
    bad = LAUV_YAML.replace("time_constant: 0.2", "time_constnt: 0.2", 1)
    with pytest.raises(
        ConfigError,
        match=r"lauv.yaml:20:\d+: fins\.0\.dynamics\..*time_constant: required value missing",
    ):
        _quiet(parse_actuators_yaml, bad, file="lauv.yaml")
    with pytest.warns(ConfigWarning, match=r"lauv.yaml:7:16: thrusters.0.clamp_min"):
        parse_actuators_yaml(LAUV_YAML, file="lauv.yaml")


def test_load_yaml_file(tmp_path: Path) -> None:
    p = tmp_path / "lauv.yaml"
    p.write_text(LAUV_YAML)
    a = _quiet(load_actuators, p)
    assert a.thruster_bank().thrusters == a.thrusters and len(a.fin_bank().fins) == 2


def test_invalid_value_is_located_at_its_element() -> None:
    text = URDF.read_text().replace(
        "<timeConstant>0.05</timeConstant>", "<timeConstant>-0.05</timeConstant>"
    )
    with pytest.raises(
        ConfigError, match=r"lauv.urdf:22:7: thrusters\.0\.dynamics: .*time_constant must be > 0"
    ):
        _quiet(parse_uuv_xml, text, file="lauv.urdf")
    bad = LAUV_YAML.replace("lift_constant: 9.8688", "lift_constant: abc", 1)
    with pytest.raises(ConfigError, match=r"lauv.yaml:21:48: fins\.0\.liftdrag\.lift_constant: "):
        _quiet(parse_actuators_yaml, bad, file="lauv.yaml")

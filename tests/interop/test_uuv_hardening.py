"""UUV XML/URDF/YAML at the boundary: nesting, joint axes, declarations, YAML tags."""

from __future__ import annotations

import pytest

from marinesim.core.errors import ConfigError
from marinesim.interop.uuv import load_actuators, parse_actuators_yaml, parse_uuv_xml

JOINT = '<robot name="r"><joint name="j" type="revolute"><parent link="a"/><child link="b"/>' \
        '<origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="{axis}"/></joint></robot>'  # fmt: skip


@pytest.mark.parametrize("axis", ["0 0 0", "nan 0 1", "0 inf 0"])
def test_bad_joint_axis_is_an_error(axis):
    with pytest.raises(ConfigError, match="axis") as exc:
        parse_uuv_xml(JOINT.format(axis=axis), file="r.urdf")
    assert exc.value.param == "axis.xyz" and exc.value.line == 1


def test_deep_xml_and_broken_declaration():
    with pytest.raises(ConfigError, match="xml.max_depth"):
        parse_uuv_xml("<a>" * 5000 + "</a>" * 5000, file="d.xml")
    with pytest.raises(ConfigError, match=r"\?>"):
        parse_uuv_xml('<?xml version="1.0"\n<robot/>', file="x.xml")


def test_yaml_tags_and_directories(tmp_path):
    with pytest.raises(ConfigError):
        parse_actuators_yaml("thrusters: !!python/object:os.system x\n", file="a.yaml")
    with pytest.raises(ConfigError, match="is a directory"):
        load_actuators(tmp_path)

"""Geometry → TAM, pseudo-inverses, conditioning (specs/allocation.md §2–3, §9.1–9.3, §9.6)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from marinesim.allocation.tam import (
    Geometry,
    Thruster,
    ThrusterLayout,
    conditioning,
    direction_from_angles,
    pinv,
    tam,
    weighted_pinv,
)
from marinesim.allocation.vehicles import get_layout, vehicle_names
from marinesim.core import registry
from marinesim.core.errors import ConfigError, ConfigWarning, UnknownNameError
from marinesim.core.params import validate

B_SPEC = np.array(
    [
        [-0.7071, -0.7071, 0.7071, 0.7071, 0, 0, 0, 0],
        [0.7071, -0.7071, 0.7071, -0.7071, 0, 0, 0, 0],
        [0, 0, 0, 0, 1, 1, 1, 1],
        [0, 0, 0, 0, 0.215, -0.215, 0.215, -0.215],
        [0, 0, 0, 0, -0.118, -0.118, 0.118, 0.118],
        [0.1640, -0.1640, -0.1711, 0.1711, 0, 0, 0, 0],
    ]
)
BPINV_SPEC = np.array(
    [
        [-0.3536, 0.3610, 0, 0, 0, 1.4918],
        [-0.3536, -0.3610, 0, 0, 0, -1.4918],
        [0.3536, 0.3461, 0, 0, 0, -1.4918],
        [0.3536, -0.3461, 0, 0, 0, 1.4918],
        [0, 0, 0.25, 1.1628, -2.1186, 0],
        [0, 0, 0.25, -1.1628, -2.1186, 0],
        [0, 0, 0.25, 1.1628, 2.1186, 0],
        [0, 0, 0.25, -1.1628, 2.1186, 0],
    ]
)
REXROV_FLU = np.array(
    [
        [0.159743, 0.159743, -0.159742, -0.159742, 0.707107, 0.707107, -0.707107, -0.707107],
        [-0.213610, 0.213610, -0.213610, 0.213610, 0.707107, -0.707107, 0.707107, -0.707107],
        [0.963770, 0.963770, 0.963770, 0.963770, 0, 0, 0, 0],
        [0.435232, -0.435232, 0.435232, -0.435232, -0.091217, 0.091217, -0.091217, 0.091217],
        [0.943093, 0.943093, -0.943093, -0.943093, 0.091217, 0.091217, -0.091217, -0.091217],
        [0.136889, -0.136889, -0.136888, 0.136888, -0.648799, 0.648799, 0.648799, -0.648799],
    ]
)


@pytest.fixture(scope="module")
def heavy() -> Geometry:
    return Geometry(get_layout("bluerov2_heavy"))


def test_bluerov2_heavy_tam_and_pinv(heavy: Geometry) -> None:
    np.testing.assert_allclose(heavy.b, B_SPEC, atol=1e-4)
    np.testing.assert_allclose(heavy.b_pinv, BPINV_SPEC, atol=1e-4)
    # full row rank: B⁺ = Bᵀ(BBᵀ)⁻¹ and B B⁺ = I
    np.testing.assert_allclose(
        heavy.b_pinv, heavy.b.T @ np.linalg.inv(heavy.b @ heavy.b.T), atol=1e-12
    )
    np.testing.assert_allclose(heavy.b @ heavy.b_pinv, np.eye(6), atol=1e-12)


def test_bluerov2_heavy_conditioning(heavy: Geometry) -> None:
    info = heavy.info
    np.testing.assert_allclose(
        info.singular_values, [2.0, 1.41421, 1.41421, 0.4300, 0.3352, 0.2360], atol=1e-4
    )
    assert info.rank == 6
    assert info.condition == pytest.approx(8.4746, abs=1e-4)
    assert info.condition_scaled == pytest.approx(1.8220, abs=1e-4)


@pytest.mark.parametrize(
    ("name", "raw", "scaled"),
    [("bluerov2_heavy_wu2018", 8.36, 2.26), ("bluerov2_heavy_hippo", 8.33, 1.83)],
)
def test_other_bluerov2_geometries(name: str, raw: float, scaled: float) -> None:
    info = Geometry(get_layout(name)).info
    assert info.condition == pytest.approx(raw, abs=0.005)
    assert info.condition_scaled == pytest.approx(scaled, abs=0.005)


def test_reference_point_moves_moments() -> None:
    # moments about the CoM 11 mm above the origin: K and M rows of motor 1 gain −0.0078 (§8.2)
    lay = get_layout("bluerov2_heavy")
    g0 = Geometry(lay)
    g1 = Geometry(lay.model_copy(update={"reference_point": (0.0, 0.0, -0.011)}))
    d = g1.b - g0.b
    assert d[3, 0] == pytest.approx(-0.0078, abs=1e-4)
    assert d[4, 0] == pytest.approx(-0.0078, abs=1e-4)
    np.testing.assert_allclose(d[:3], 0.0)


def test_rexrov_frame_check() -> None:
    g = Geometry(get_layout("rexrov"))
    flip = np.diag([1.0, -1.0, -1.0, 1.0, -1.0, -1.0])  # FLU→FRD on forces and moments
    np.testing.assert_allclose(g.b, flip @ REXROV_FLU, atol=2e-6)
    np.testing.assert_allclose(
        g.info.singular_values,
        [1.996108, 1.927541, 1.557332, 1.326165, 1.307137, 0.740422],
        atol=2e-6,
    )
    assert g.info.condition == pytest.approx(2.6959, abs=1e-4)


def test_mrobosub_like_layout_from_yaw_pitch() -> None:
    g = Geometry(get_layout("mrobosub"))
    np.testing.assert_allclose(
        g.info.singular_values, [2, 1.414, 1.414, 0.791, 0.534, 0.254], atol=1e-3
    )
    assert g.info.condition == pytest.approx(7.87, abs=0.005)
    np.testing.assert_allclose(g.directions[4], [0.0, 0.0, -1.0], atol=1e-15)  # pitch 90° points up


def test_moment_sign_is_r_cross_d() -> None:
    # a forward thruster on the starboard side (y > 0) yaws to port: N = x·d_y − y·d_x < 0
    b = tam([[0.0, 0.5, 0.0]], [[1.0, 0.0, 0.0]])
    assert b[5, 0] == pytest.approx(-0.5)


def test_failure_conditioning(heavy: Geometry) -> None:
    assert heavy.with_failed(0).info.condition == pytest.approx(8.57, abs=0.005)
    assert heavy.with_failed("m5_front_starboard_vertical").info.condition == pytest.approx(
        10.92, abs=0.005
    )
    g = heavy.with_failed(0)
    assert np.all(g.b_pinv[0] == 0.0)
    np.testing.assert_allclose(g.b_active @ g.b_pinv, np.eye(6), atol=1e-12)


def test_rank_deficient_is_config_error(heavy: Geometry) -> None:
    with pytest.raises(ConfigError, match="rank 5 < 6"):
        heavy.with_failed(4, 5)


def test_unknown_failed_thruster(heavy: Geometry) -> None:
    with pytest.raises(ConfigError, match="unknown thruster"):
        heavy.with_failed("m9")


def test_unknown_vehicle_suggests() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'bluerov2_heavy'"):
        get_layout("bluerov2_hevy")
    assert "bluerov2_heavy" in vehicle_names()
    assert registry.get("layout", "bluerov2_heavy")().name == "bluerov2_heavy"


def _six(**over: object) -> dict[str, object]:
    th = [
        {"name": f"t{i}", "position": [0.1 * i, 0.0, 0.0], "yaw": 0.0, "pitch": 0.0}
        for i in range(6)
    ]
    data: dict[str, object] = {"name": "x", "thrusters": th}
    data.update(over)
    return data


def test_layout_validation_errors() -> None:
    data = _six()
    data["thrusters"][1]["name"] = "t0"  # type: ignore[index]
    with pytest.raises(ConfigError, match="duplicate thruster names: t0"):
        validate(ThrusterLayout, data)
    with pytest.raises(ConfigError, match="at least 6 thrusters"):
        validate(ThrusterLayout, {"thrusters": _six()["thrusters"][:5]})  # type: ignore[index]
    bad = _six()
    bad["thrusters"][2]["positon"] = [0, 0, 0]  # type: ignore[index]
    with pytest.raises(ConfigError, match="extra field not permitted") as exc:
        validate(ThrusterLayout, bad, file="v.yaml", marks={"thrusters.2.positon": (9, 5)})
    assert "v.yaml:9:5" in str(exc.value)
    with pytest.raises(ConfigError, match="either 'direction' or"):
        validate(Thruster, {"name": "a", "position": [0, 0, 0]})


def test_direction_normalised_with_warning() -> None:
    t = Thruster(name="a", position=(0, 0, 0), direction=(2.0, 0.0, 0.0))
    with pytest.warns(ConfigWarning, match="normalised"):
        d = t.unit_direction()
    np.testing.assert_allclose(d, [1.0, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Thruster(name="b", position=(0, 0, 0), direction=(0.6, 0.8, 0.0)).unit_direction()


def test_direction_from_angles_convention() -> None:
    np.testing.assert_allclose(direction_from_angles(math.pi / 2, 0.0), [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(
        direction_from_angles(0.0, math.pi / 2), [0.0, 0.0, -1.0], atol=1e-15
    )


def test_batched_tam_equals_single() -> None:
    lay = get_layout("bluerov2_heavy")
    g = Geometry(lay)
    pos = np.stack([g.positions, g.positions + 0.01])
    dirs = np.stack([g.directions, g.directions])
    bb = tam(pos, dirs)
    assert bb.shape == (2, 6, 8)
    np.testing.assert_allclose(bb[0], g.b)
    np.testing.assert_allclose(bb[1], tam(g.positions + 0.01, g.directions))
    np.testing.assert_allclose(pinv(bb)[1], pinv(bb[1]), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, 8, elements=st.floats(0.1, 10.0)))
def test_weighted_pinv_is_a_right_inverse_minimising_weighted_norm(w: np.ndarray) -> None:
    b = Geometry(get_layout("bluerov2_heavy")).b
    bw = weighted_pinv(b, w)
    np.testing.assert_allclose(b @ bw, np.eye(6), atol=1e-9)
    # any other exact solution has a larger weighted norm: add a null-space direction
    tau = np.array([10.0, -5.0, 20.0, 1.0, -2.0, 3.0])
    f = bw @ tau
    _, _, vt = np.linalg.svd(b)
    for z in vt[6:]:
        g = f + 0.1 * z
        assert g @ (w * g) >= f @ (w * f) - 1e-9


def test_weighted_pinv_identity_weights_is_pinv() -> None:
    b = Geometry(get_layout("bluerov2_heavy")).b
    np.testing.assert_allclose(weighted_pinv(b, np.ones(8)), pinv(b), atol=1e-12)
    with pytest.raises(ConfigError, match="weights"):
        weighted_pinv(b, np.zeros(8))


def test_conditioning_length_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="characteristic length"):
        conditioning(B_SPEC, 0.0)


def test_layout_from_6dof_preset_matches_canonical() -> None:
    from pathlib import Path

    import yaml

    import marinesim.models
    from marinesim.allocation.vehicles import layout_from_preset

    preset = (
        Path(marinesim.models.__file__).parent / "presets" / "bluerov2_heavy_vonbenzon2022.yaml"
    )
    if not preset.is_file():
        pytest.skip("6-DOF preset not available")
    data = yaml.safe_load(preset.read_text())
    if not isinstance(data, dict) or "thrusters" not in data:
        pytest.skip("preset has no thruster section")
    g = Geometry(layout_from_preset(data, "bluerov2_heavy"))
    np.testing.assert_allclose(g.b, Geometry(get_layout("bluerov2_heavy")).b, atol=1e-12)
    with pytest.raises(ConfigError, match="position_frd"):
        layout_from_preset({"thrusters": {"list": [{"name": "a"}]}})

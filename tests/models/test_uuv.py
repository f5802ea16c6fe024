"""UUV Simulator's HMFossen wrench replay (marinesim.models.uuv) against hand values."""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.models import uuv


def _wrench_cols(lin, flow, extra=()):  # noqa: ANN001, ANN202
    n = len(lin)
    cols = {"vehicle": np.array(["rexrov"] * n, dtype=object)}
    cols["case"] = np.array(["c"] * n, dtype=object)
    for j, c in enumerate("xyz"):
        cols[f"lin_{c}"] = np.array([v[j] for v in lin], dtype=float)
        cols[f"ang_{c}"] = np.zeros(n)
        cols[f"flow_{c}"] = np.array([v[j] for v in flow], dtype=float)
    for name in ("nuR_u", "nuR_v", "nuR_w", "nuR_p", "nuR_q", "nuR_r", *extra):
        cols[name] = np.zeros(n)
    return cols


def test_uuv_wrench_flow_is_rotated_into_a_yawed_link() -> None:
    # world ENU flow 0.5 m/s towards north (+y); link yawed +90° (its x points north):
    # body flow (0.5, 0, 0) FLU, so ν_r,u = 1.5 − 0.5
    cols = _wrench_cols([(1.5, 0, 0)], [(0, 0.5, 0)])
    out = uuv.uuv_wrench_replay({"inputs": "link held at rpy (0, 0, 1.5707963267948966)"}, cols)
    np.testing.assert_allclose(out["nuR_u"], [1.0], rtol=1e-15)
    np.testing.assert_allclose(out["nuR_v"], [0.0], atol=1e-15)
    plain = uuv.uuv_wrench_replay({"inputs": "identity orientation"}, cols)
    np.testing.assert_allclose([plain["nuR_u"][0], plain["nuR_v"][0]], [1.5, 0.5])  # v FRD = −y


def test_uuv_wrench_filter_protocol_from_the_entry() -> None:
    # first call at t = 0.02 with dt = 0.02: a_f = 0.3·(ν_r − 0)/0.02 already on row 0;
    # then ν_r constant: a_f decays by 0.7 per call
    cols = _wrench_cols([(0.2, 0, 0)] * 3, [(0, 0, 0)] * 3, extra=("accF_u", "addedmass_u"))
    out = uuv.uuv_wrench_replay({"procedure": "first call at t = 0.02, dt = 0.02"}, cols)
    a0 = 0.3 * 0.2 / 0.02
    np.testing.assert_allclose(out["accF_u"], [a0, 0.7 * a0, 0.49 * a0], rtol=1e-14)
    np.testing.assert_allclose(out["addedmass_u"][0], -779.79 * a0, rtol=1e-14)  # col 0 of M_A
    default = uuv.uuv_wrench_replay({}, cols)  # t = 0, 0.01, 0.02: no update at t = 0
    np.testing.assert_allclose(default["accF_u"], [0.0, 0.3 * 20.0, 0.7 * 0.3 * 20.0])


def test_uuv_hydro_params_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="nautilus"):
        uuv.uuv_hydro_params("nautilus")
    with pytest.raises(ValueError, match="6 or 36"):
        uuv.uuv_hydro_params({"added_mass": [1, 2, 3]})


def test_uuv_wrench_nested_parameters_and_other_column_names() -> None:
    # a pasted plugin block (nested, strings) and columns named nuR_0..5 / F_x_gz
    cols = {
        "vehicle": np.array(["v1"], dtype=object),
        "case": np.array(["sway"], dtype=object),
        "lin_u": np.array([0.0]),
        "lin_v": np.array([0.5]),  # FLU +y (port) → FRD v = −0.5
        "lin_w": np.array([0.0]),
    }
    cols.update({f"nuR_{i}": np.zeros(1) for i in range(6)})
    cols.update({"damp_1": np.zeros(1), "F_y_gz": np.zeros(1)})
    entry = {
        "vehicles": {
            "v1": {
                "volume": 1.8,
                "hydrodynamic_model": {
                    "type": "fossen",
                    "added_mass": " ".join(["0"] * 36),
                    "linear_damping": "-10 -20 -30 -1 -2 -3",
                    "quadratic_damping": "0 -40 0 0 0 0",
                },
            }
        }
    }
    out = uuv.uuv_wrench_replay(entry, cols)
    assert out["nuR_1"][0] == -0.5
    d = -(20 + 40 * 0.5) * -0.5  # −D v with D = 20 + 40|v|
    assert out["damp_1"][0] == pytest.approx(d, rel=1e-15)
    assert out["F_y_gz"][0] == pytest.approx(-d, rel=1e-15)  # FRD → FLU

"""Noisy contacts with field of view, range and detection probability (engine spec §6.5).

SCRIMMAGE's NoisyContacts documents FOV and range but ignores them and publishes a hard-coded
covariance; here an entity is reported only when it is in view, is detected with probability
P_d, and its NED position estimate carries the covariance J·diag(σ²)·Jᵀ of the spherical →
Cartesian conversion at the measurement.

Fixed consumption per sensing vehicle and scan: ``max_contacts`` = C draw slots, each one
uniform (detection) and three normals (range, azimuth, elevation noise; three more for the
velocity estimate with ``vel_std``), plus 1 + 3·K uniforms
for up to K false alarms — drawn whatever is in view.  The targets in view take the slots in
the caller-given target order (the engine plugin sorts them by entity name), so every pair in
view gets its own detection draw; targets in view beyond C are not reported and are counted
(``Contacts.overflow``), never dropped silently.

With groups (the replicas of a stacked batch) a sensor sees only the targets of its own group,
and since its draws are its own row's, each group's scan equals the scan of that group alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError
from marinesim.core.frames import rotation_from_euler
from marinesim.core.params import ParamsBase, field

__all__ = ["ContactParams", "Contacts", "detect_contacts", "draws_per_scan", "spherical_jacobian"]

Arr = NDArray[np.float64]


class ContactParams(ParamsBase):
    """Contact sensor geometry, detection and noise (noise sigmas required)."""

    max_range: float = field(
        ..., unit="m", description="farthest reported contact", gt=0, allow_inf_nan=False
    )
    min_range: float = field(0.0, unit="m", description="nearest reported contact", ge=0)
    fov_az_deg: float = field(
        ..., unit="deg", description="full horizontal field of view", gt=0, le=360
    )
    fov_el_deg: float = field(
        ..., unit="deg", description="full vertical field of view", gt=0, le=180
    )
    range_std: float = field(
        ..., unit="m", description="range noise sigma", ge=0, allow_inf_nan=False
    )
    az_std_deg: float = field(
        ..., unit="deg", description="azimuth noise sigma", ge=0, allow_inf_nan=False
    )
    el_std_deg: float = field(
        ..., unit="deg", description="elevation noise sigma", ge=0, allow_inf_nan=False
    )
    detection_probability: float = field(
        1.0, unit="", description="constant P_d (unless p_d_range_50 is set)", ge=0, le=1
    )
    p_d_range_50: float | None = field(
        None, unit="m", description="range of P_d = 0.5 (logistic model)", gt=0
    )
    p_d_slope: float = field(0.05, unit="1/m", description="logistic P_d slope", gt=0)
    false_alarm_rate: float = field(
        0.0, unit="1/scan", description="Poisson mean of false alarms per scan", ge=0
    )
    max_false_alarms: int = field(
        0, unit="", description="cap on false alarms per scan (draws reserved)", ge=0
    )
    mount_offset: tuple[float, float, float] = field(
        (0.0, 0.0, 0.0), unit="m", description="sensor position in body FRD"
    )
    mount_rpy_deg: tuple[float, float, float] = field(
        (0.0, 0.0, 0.0), unit="deg", description="sensor boresight rotation in body"
    )
    delay: float = field(
        0.0, unit="s", description="scan delivered delay seconds after it was taken", ge=0
    )
    vel_std: float | None = field(
        None,
        unit="m/s",
        description="velocity estimate noise sigma per axis (None: no estimate)",
        ge=0,
    )
    report_id: bool = field(True, description="report the true contact id (else -1)")
    teams: tuple[int, ...] | None = field(None, description="report only these teams (default all)")
    max_contacts: int = field(
        64, unit="", description="draw slots per scan: most targets in view reported per scan", ge=1
    )
    spatial_index_threshold: int = field(
        256, unit="", description="use a k-d tree above this many targets", ge=1
    )

    def model_post_init(self, __context: object) -> None:  # noqa: D102
        if self.min_range >= self.max_range:
            raise ConfigError(
                f"min_range ({self.min_range} m) must be below max_range ({self.max_range} m)",
                param="min_range",
            )
        if self.false_alarm_rate > 0 and self.max_false_alarms == 0:
            raise ConfigError(
                "false_alarm_rate > 0 needs max_false_alarms >= 1 (draws per scan are reserved)",
                param="max_false_alarms",
            )


def draws_per_scan(params: ContactParams, m: int = 0) -> tuple[int, int]:
    """(uniforms, normals) drawn per sensing vehicle and scan (independent of the ``m`` targets)."""
    c = params.max_contacts
    return c + 1 + 3 * params.max_false_alarms, (6 if params.vel_std is not None else 3) * c


def spherical_jacobian(r: Arr, az: Arr, el: Arr) -> Arr:
    """Jacobian (…, 3, 3) of (range, azimuth, elevation) → sensor-frame FRD (x, y, z).

    x = r·cos el·cos az, y = r·cos el·sin az, z = −r·sin el (elevation positive up).
    """
    ca, sa, ce, se = np.cos(az), np.sin(az), np.cos(el), np.sin(el)
    J = np.empty((*np.shape(r), 3, 3))
    J[..., 0, 0], J[..., 0, 1], J[..., 0, 2] = ce * ca, -r * ce * sa, -r * se * ca
    J[..., 1, 0], J[..., 1, 1], J[..., 1, 2] = ce * sa, r * ce * ca, -r * se * sa
    J[..., 2, 0], J[..., 2, 1], J[..., 2, 2] = -se, 0.0, -r * ce
    return J


def _dense(g: NDArray[np.int64]) -> NDArray[np.int64]:
    return np.unique(np.asarray(g), return_inverse=True)[1].reshape(-1)


def _group_pairs(
    sensor_group: NDArray[np.int64], target_group: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every (sensor, target) pair of the same group, without building the N × M pairs."""
    to = np.argsort(target_group, kind="stable")
    gs = target_group[to]
    start = np.searchsorted(gs, sensor_group, side="left")
    cnt = np.searchsorted(gs, sensor_group, side="right") - start
    ii = np.repeat(np.arange(len(sensor_group), dtype=np.int64), cnt)
    offs = np.arange(len(ii), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return ii, to[np.repeat(start, cnt) + offs].astype(np.int64)


def _tree_pairs(
    origin: Arr, target_pos: Arr, max_range: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(sensor, target) pairs within ``max_range`` (distance ≤ max_range) from k-d trees.

    The pairs come as one array from the two trees (no per-sensor Python lists); their order
    is arbitrary, the caller sorts them.
    """
    from scipy.spatial import cKDTree

    if origin.shape[0] == 0 or target_pos.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = cKDTree(origin).sparse_distance_matrix(
        cKDTree(target_pos), max_range, output_type="ndarray"
    )
    return pairs["i"].astype(np.int64), pairs["j"].astype(np.int64)


def _to_xyz(r: Arr, az: Arr, el: Arr) -> Arr:
    ce = np.cos(el)
    return np.stack([r * ce * np.cos(az), r * ce * np.sin(az), -r * np.sin(el)], axis=-1)


@dataclass(frozen=True)
class Contacts:
    """Detections of one scan (D rows).

    Attributes
    ----------
    row : ndarray of int, shape (D,)
        Row of the sensing vehicle.
    contact_id : ndarray of int, shape (D,)
        True id of the detected entity, −1 for anonymous reports and false alarms.
    pos : ndarray, shape (D, 3)
        NED position estimate [m].
    cov : ndarray, shape (D, 3, 3)
        Its covariance [m²].
    rae : ndarray, shape (D, 3)
        Measured range [m], azimuth and elevation [rad].
    false_alarm : ndarray of bool, shape (D,)
    target : ndarray of int, shape (D,)
        Target index (−1 for false alarms).
    overflow : ndarray of int, shape (N,)
        Targets in view beyond ``max_contacts`` (not reported) per sensing vehicle.
    vel : ndarray, shape (D, 3)
        NED velocity estimate [m/s] (NaN without ``vel_std`` and for false alarms).
    """

    row: NDArray[np.int64]
    contact_id: NDArray[np.int64]
    pos: Arr
    cov: Arr
    rae: Arr
    false_alarm: NDArray[np.bool_]
    target: NDArray[np.int64]
    overflow: NDArray[np.int64]
    vel: Arr


def detect_contacts(
    sensor_pos: Arr,
    sensor_rot: Arr,
    sensor_ids: NDArray[np.int64],
    target_pos: Arr,
    target_ids: NDArray[np.int64],
    target_ok: NDArray[np.bool_],
    uniform: Arr,
    normal: Arr,
    params: ContactParams,
    target_team: NDArray[np.int64] | None = None,
    target_vel: Arr | None = None,
    sensor_group: NDArray[np.int64] | None = None,
    target_group: NDArray[np.int64] | None = None,
) -> Contacts:
    """One scan of N sensing vehicles over M targets.

    Parameters
    ----------
    sensor_pos : ndarray, shape (N, 3)
        True NED positions [m].
    sensor_rot : ndarray, shape (N, 3, 3)
        True body → NED rotations.
    sensor_ids : ndarray of int, shape (N,)
        Entity ids (a vehicle never reports itself).
    target_pos : ndarray, shape (M, 3)
    target_ids : ndarray of int, shape (M,)
    target_ok : ndarray of bool, shape (M,)
        Active targets.
    uniform : ndarray, shape (N, C + 1 + 3K)
        C = ``max_contacts`` slots, K = ``max_false_alarms`` (see :func:`draws_per_scan`).
    normal : ndarray, shape (N, 3C)
    params : ContactParams
    target_team : ndarray of int, shape (M,), optional
    target_vel : ndarray, shape (M, 3), optional
        True NED velocities [m/s] (needed with ``vel_std``).
    sensor_group, target_group : ndarray of int, shapes (N,) and (M,), optional
        Group of every sensor and target (e.g. the replica of stacked replicas): a sensor
        sees only the targets of its own group.  Ids need only be unique within a group.
        The draws each sensor uses, and so its detections, are those it would have with the
        targets of its group alone.

    Returns
    -------
    Contacts
    """
    n, m = sensor_pos.shape[0], target_pos.shape[0]
    mount = rotation_from_euler(
        *np.deg2rad(np.asarray(params.mount_rpy_deg, dtype=float))[:, None]
    )[0]
    rs = sensor_rot @ mount  # sensor frame → NED, (N, 3, 3)
    origin = sensor_pos + np.einsum("nij,j->ni", sensor_rot, np.asarray(params.mount_offset, float))
    t_ok = np.asarray(target_ok, dtype=bool)
    if params.teams is not None and target_team is not None:
        t_ok = t_ok & np.isin(target_team, params.teams)
    if sensor_group is not None and target_group is not None:
        ii, jj = _group_pairs(np.asarray(sensor_group), np.asarray(target_group))
        if len(jj) and np.max(np.bincount(_dense(target_group))) > params.spatial_index_threshold:
            ii, jj = _tree_pairs(origin, target_pos, params.max_range)  # large groups
            same = np.asarray(sensor_group)[ii] == np.asarray(target_group)[jj]
            ii, jj = ii[same], jj[same]
    elif m > params.spatial_index_threshold and n > 0:
        ii, jj = _tree_pairs(origin, target_pos, params.max_range)
    else:
        ii, jj = np.divmod(np.arange(n * m, dtype=np.int64), m)
    keep = t_ok[jj] & (sensor_ids[ii] != target_ids[jj])
    ii, jj = ii[keep], jj[keep]
    rel = target_pos[jj] - origin[ii]
    s = np.einsum("dji,dj->di", rs[ii], rel)  # sensor frame
    rng_ = np.linalg.norm(s, axis=1)
    az = np.arctan2(s[:, 1], s[:, 0])
    el = np.arctan2(-s[:, 2], np.hypot(s[:, 0], s[:, 1]))
    view = (
        (rng_ >= params.min_range)
        & (rng_ <= params.max_range)
        & (np.abs(az) <= np.deg2rad(params.fov_az_deg) / 2 + 1e-12)
        & (np.abs(el) <= np.deg2rad(params.fov_el_deg) / 2 + 1e-12)
    )
    if params.p_d_range_50 is None:
        pd = np.full(len(rng_), params.detection_probability)
    else:
        pd = 1.0 / (1.0 + np.exp(params.p_d_slope * (rng_ - params.p_d_range_50)))
    # in-view pairs in (sensor row, target order) take the draw slots 0, 1, ... of their row
    ii, jj, rng_, az, el, pd = ii[view], jj[view], rng_[view], az[view], el[view], pd[view]
    order = np.lexsort((jj, ii))
    ii, jj, rng_, az, el, pd = ii[order], jj[order], rng_[order], az[order], el[order], pd[order]
    slot = np.arange(len(ii)) - np.searchsorted(ii, ii, side="left")
    c = params.max_contacts
    fits = slot < c
    overflow = np.bincount(ii[~fits], minlength=n).astype(np.int64)
    ii, jj, rng_, az, el, pd, slot = (a[fits] for a in (ii, jj, rng_, az, el, pd, slot))
    det = uniform[ii, slot] < pd
    sig = np.array([params.range_std, np.deg2rad(params.az_std_deg), np.deg2rad(params.el_std_deg)])
    nz = normal[:, : 3 * c].reshape(n, c, 3)[ii[det], slot[det]]
    if params.vel_std is not None:
        if target_vel is None:
            raise ConfigError(
                "contacts: vel_std is set but no target velocities were given", param="vel_std"
            )
        nzv = normal[:, 3 * c : 6 * c].reshape(n, c, 3)[ii[det], slot[det]]
        vel = np.asarray(target_vel, dtype=float)[jj[det]] + params.vel_std * nzv
    else:
        vel = np.full((int(det.sum()), 3), np.nan)
    ii, jj = ii[det], jj[det]
    rae = np.stack([rng_[det], az[det], el[det]], axis=1) + sig * nz
    rot_d = rs[ii]
    pos = origin[ii] + np.einsum("dij,dj->di", rot_d, _to_xyz(rae[:, 0], rae[:, 1], rae[:, 2]))
    J = rot_d @ spherical_jacobian(rae[:, 0], rae[:, 1], rae[:, 2])
    cov = J @ np.diag(sig**2) @ np.swapaxes(J, 1, 2)
    cid = target_ids[jj] if params.report_id else np.full(len(jj), -1, dtype=np.int64)
    vels = [vel]
    rows, cids, poss, covs, raes, fas, tg = (
        [ii],
        [cid],
        [pos],
        [cov],
        [rae],
        [np.zeros(len(ii), bool)],
        [jj],
    )
    k = params.max_false_alarms
    if k > 0:
        uf = uniform[:, c:]
        # Poisson count by inverse CDF of one uniform, capped at K
        lam = params.false_alarm_rate
        ks = np.arange(k + 1)
        from scipy.special import pdtr  # Poisson CDF

        cdf = pdtr(ks, lam)
        count = np.minimum(np.searchsorted(cdf, uf[:, 0], side="right"), k)
        u3 = uf[:, 1:].reshape(n, k, 3)
        r0, r1 = params.min_range, params.max_range
        rr = np.cbrt(r0**3 + u3[..., 0] * (r1**3 - r0**3))
        aa = (u3[..., 1] - 0.5) * np.deg2rad(params.fov_az_deg)
        half_el = np.deg2rad(params.fov_el_deg) / 2
        ee = np.arcsin((2 * u3[..., 2] - 1) * np.sin(half_el))
        use = ks[None, 1:] <= count[:, None]  # (N, K)
        fi, fk = np.nonzero(use)
        fr = np.stack([rr[fi, fk], aa[fi, fk], ee[fi, fk]], axis=1)
        frot = rs[fi]
        rows.append(fi)
        cids.append(np.full(len(fi), -1, dtype=np.int64))
        poss.append(
            origin[fi] + np.einsum("dij,dj->di", frot, _to_xyz(fr[:, 0], fr[:, 1], fr[:, 2]))
        )
        Jf = frot @ spherical_jacobian(fr[:, 0], fr[:, 1], fr[:, 2])
        covs.append(Jf @ np.diag(sig**2) @ np.swapaxes(Jf, 1, 2))
        raes.append(fr)
        fas.append(np.ones(len(fi), bool))
        tg.append(np.full(len(fi), -1, dtype=np.int64))
        vels.append(np.full((len(fi), 3), np.nan))
    return Contacts(
        np.concatenate(rows).astype(np.int64),
        np.concatenate(cids).astype(np.int64),
        np.concatenate(poss).reshape(-1, 3),
        np.concatenate(covs).reshape(-1, 3, 3),
        np.concatenate(raes).reshape(-1, 3),
        np.concatenate(fas),
        np.concatenate(tg).astype(np.int64),
        overflow,
        np.concatenate(vels).reshape(-1, 3),
    )

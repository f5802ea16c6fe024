"""Physical properties of the Fossen 6-DOF model (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.models.sixdof import fossen6dof as f6
from marinesim.models.sixdof import pvs

pos = st.floats(0.05, 5.0)
vel = st.floats(-2.0, 2.0)


def _params(
    m: float,
    ixx: float,
    iyy: float,
    izz: float,
    ma: list[float],
    dl: list[float],
    dq: list[float],
    **kw,
):
    return {
        "mass": m,
        "inertia": [[ixx, 0, 0], [0, iyy, 0], [0, 0, izz]],
        "added_mass": ma,
        "linear_damping": dl,
        "quadratic_damping": dq,
        "neutrally_buoyant": True,
        **kw,
    }


body = st.tuples(
    st.floats(5, 500),
    st.lists(pos, min_size=3, max_size=3).filter(lambda i: max(i) <= sum(i) - max(i)),
    st.lists(st.floats(0, 50), min_size=6, max_size=6),
    st.lists(st.floats(0.1, 50), min_size=6, max_size=6),
    st.lists(st.floats(0, 50), min_size=6, max_size=6),
)


@settings(max_examples=15, deadline=None)
@given(body, st.floats(0.0, 0.3))
def test_rest_stays_at_rest(b, gm: float) -> None:
    """No thrust, W = B, CoB directly above the CoG: a vehicle at rest stays at rest."""
    m, inertia, ma, dl, dq = b
    model = f6.build(_params(m, *inertia, ma, dl, dq, r_g=[0, 0, gm / 10], r_b=[0, 0, -gm / 10]))
    s = f6.init(model, 2, pos=[[0, 0, 10], [5, -3, 20]], euler=[[0, 0, 0.4], [0, 0, -2.0]])
    for _ in range(20):
        s = f6.step(model, s, None, None, 0.05)
    np.testing.assert_allclose(s.nu, 0.0, atol=1e-12)
    np.testing.assert_allclose(s.pos, [[0, 0, 10], [5, -3, 20]], atol=1e-12)


moderate_body = st.tuples(
    st.floats(5, 500),
    st.lists(st.floats(0.5, 5.0), min_size=3, max_size=3).filter(
        lambda i: max(i) <= sum(i) - max(i)
    ),
    st.lists(st.floats(0, 50), min_size=3, max_size=3),
    st.lists(st.floats(0, 2.0), min_size=3, max_size=3),
    st.lists(st.floats(0.1, 50), min_size=6, max_size=6),
    st.lists(st.floats(0, 50), min_size=6, max_size=6),
)


@settings(max_examples=15, deadline=None)
@given(moderate_body, st.lists(vel, min_size=6, max_size=6))
def test_kinetic_energy_never_grows_with_damping_only(b, nu0) -> None:
    """τ = 0, no current, no restoring moment (CG = CB = CO): ½νᵀMν is non-increasing.

    C(ν) does no work and D is positive semi-definite, so the exact energy decays; an RK4 step
    may exceed the exact decay only by its local error, O((h ω)⁵) E with ω the fastest rate of
    the motion (gyroscopic coupling and damping), which bounds the allowed increase.
    """
    m, inertia, ma_lin, ma_rot, dl, dq = b
    model = f6.build(_params(m, *inertia, [*ma_lin, *ma_rot], dl, dq))
    h = 0.005
    s = f6.init(model, 1, nu=nu0)
    diag = np.diag(model.m)
    omega = 2 * max(map(abs, nu0)) * max(diag[3:]) / min(diag[3:]) + max(
        (np.array(dl) + np.array(dq) * 2) / diag
    )
    e_prev = f6.kinetic_energy(model, s.nu)[0]
    tol = e_prev * (h * omega) ** 5 + 1e-15
    for _ in range(50):
        s = f6.step(model, s, None, None, h)
        e = f6.kinetic_energy(model, s.nu)[0]
        assert e <= e_prev + tol
        e_prev = e


@settings(max_examples=15, deadline=None)
@given(body, st.floats(-200, 200), st.sampled_from(["rk4", "semi_implicit_euler"]))
def test_pure_heave_couples_into_nothing_else(b, z_force: float, integrator: str) -> None:
    """Symmetric body (diagonal M, D; CG = CB = CO): a heave force moves only w and z."""
    m, inertia, ma, dl, dq = b
    model = f6.build(_params(m, *inertia, ma, dl, dq, integrator=integrator))
    s = f6.init(model, 1)
    for _ in range(40):
        s = f6.step(model, s, [0, 0, z_force, 0, 0, 0], None, 0.05)
    nu = s.nu[0]
    np.testing.assert_array_equal(nu[[0, 1, 3, 4, 5]], 0.0)
    np.testing.assert_array_equal(s.pos[0, :2], 0.0)
    np.testing.assert_allclose(f6.euler_angles(model, s)[0], 0.0, atol=0)
    if abs(z_force) > 1e-300:  # a subnormal force divided by the mass rounds to 0
        assert np.sign(nu[2]) == np.sign(z_force)


@settings(max_examples=10, deadline=None)
@given(
    st.lists(st.tuples(*[vel] * 6), min_size=2, max_size=5),
    st.lists(st.floats(-50, 50), min_size=6, max_size=6),
)
def test_batch_equals_single(nus, tau) -> None:
    """N vehicles in one batch equal N runs with N = 1, element by element."""
    model = f6.build(
        _params(
            18.0,
            0.05,
            1.77,
            1.77,
            [1, 16, 16, 0.005, 1.3, 1.3],
            [2.4, 23, 23, 0.3, 9.7, 9.7],
            [2.4, 80, 80, 0.0006, 9.1, 9.1],
            r_g=[0, 0, 0.01],
        )
    )
    n = len(nus)
    sb = f6.init(model, n, nu=np.array(nus))
    for _ in range(10):
        sb = f6.step(model, sb, tau, f6.Env(current=np.array([0.2, -0.1, 0.0])), 0.05)
    for i in range(n):
        s = f6.init(model, 1, nu=nus[i])
        for _ in range(10):
            s = f6.step(model, s, tau, f6.Env(current=np.array([0.2, -0.1, 0.0])), 0.05)
        np.testing.assert_allclose(sb.nu[i], s.nu[0], rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(sb.pos[i], s.pos[0], rtol=1e-13, atol=1e-15)


@settings(max_examples=10, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3), st.floats(0, 1500)),
        min_size=2,
        max_size=4,
    )
)
def test_pvs_remus_batch_equals_single(cmds) -> None:
    """The PVS REMUS kernel: a batch of N equals N single runs (numpy backend, N = 1)."""
    p = pvs.remus100()
    n = len(cmds)
    u = np.array(cmds)
    eta, nu, act = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 3))
    for _ in range(20):
        nu_n, act = pvs.remus100_dynamics(p, eta, nu, act, u, 0.02)
        eta = pvs.attitude_euler(eta, nu_n, 0.02)
        nu = nu_n
    for i in range(n):
        e1, n1, a1 = np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((1, 3))
        for _ in range(20):
            nn, a1 = pvs.remus100_dynamics(p, e1, n1, a1, u[i : i + 1], 0.02)
            e1 = pvs.attitude_euler(e1, nn, 0.02)
            n1 = nn
        np.testing.assert_allclose(nu[i], n1[0], rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(eta[i], e1[0], rtol=1e-13, atol=1e-15)


def test_pvs_batch_equals_each_vehicle_alone() -> None:
    """pvs.step_batch of N vehicles equals each vehicle stepped alone (N = 1 is the batch
    path: the same bits, on both sides of the parallel threshold); event indices are global."""
    from marinesim.models.sixdof import backends

    p = pvs.remus100("stepInput", 0, 0, 0, 0.4, 30)
    rng = np.random.default_rng(5)
    for n in (37, backends.PARALLEL_MIN + 3):
        st = (
            tuple(rng.normal(scale=0.2, size=n) for _ in range(6)),
            tuple(rng.normal(scale=0.5, size=n) for _ in range(6)),
            tuple(rng.normal(scale=0.1, size=n) for _ in range(3)),
        )
        cmd = (np.full(n, 0.05), np.full(n, -0.05), np.full(n, 1500.0))
        cmd[2][23] = np.nan
        b, al_b, ev_b = pvs.step_batch(p, st, cmd, 0.02, np.ones(n, dtype=bool), 0.02)
        assert not al_b[23] and al_b.sum() == n - 1
        assert len(ev_b) == 1 and "vehicle[23]" in ev_b[0]
        for i in (0, 23, n - 1):
            one, _, _ = pvs.step_batch(
                p,
                tuple(tuple(c[i : i + 1] for c in part) for part in st),
                tuple(c[i : i + 1] for c in cmd),
                0.02,
                np.ones(1, dtype=bool),
                0.02,
            )
            for pa, pb in zip(one, b, strict=True):
                for x, y in zip(pa, pb, strict=True):
                    assert x[0] == y[i]

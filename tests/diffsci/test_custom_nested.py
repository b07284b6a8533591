"""Nested custom_vjp: second derivatives (reverse over reverse, forward over reverse, grad of
grad) through rules that call custom_vjp functions in fwd and bwd, each against the same
function written in plain NumPy."""

import dataclasses

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads

X0 = np.array([0.3, -0.8, 1.1])
U = np.array([0.4, -1.0, 0.7])
RNG = np.random.default_rng(7)
_A = RNG.normal(size=(2, 4, 4)) + 1j * RNG.normal(size=(2, 4, 4))
HS = _A + np.conj(np.swapaxes(_A, -1, -2))  # two Hermitian 4x4 "observables"
M = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 3.0]])


def _plain(x):
    return isinstance(x, (np.ndarray, np.generic, float, int, complex))


class Static:
    """An opaque (non-pytree) bundle, as the domain packages pass one."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# ---------------------------------------------------------------- fwd calls the function itself
@ds.custom_vjp
def sinx(x):
    return np.sin(x) * x


sinx.defvjp(lambda x: (sinx(x), (x,)), lambda r, g: (g * (np.cos(r[0]) * r[0] + np.sin(r[0])),))


def self_call(x):
    return np.sum(sinx(x) ** 2) + np.sum(sinx(x) * x)


def self_call_np(x):
    return np.sum((np.sin(x) * x) ** 2) + np.sum(np.sin(x) * x * x)


# ---------------------------------------------------------------- fwd's residual from another one
@ds.custom_vjp
def cos_p(x):
    return np.cos(x)


cos_p.defvjp(lambda x: (cos_p(x), (x,)), lambda r, g: (-g * np.sin(r[0]),))


@ds.custom_vjp
def sin_p(x):
    return np.sin(x)


sin_p.defvjp(lambda x: (sin_p(x), (cos_p(x),)), lambda r, g: (g * r[0],))


def residual_call(x):
    return np.sum(sin_p(x) ** 3)


def residual_call_np(x):
    return np.sum(np.sin(x) ** 3)


# ---------------------------------------------------------------- fwd's output from another one
@ds.custom_vjp
def exp_p(x):
    return np.exp(x)


exp_p.defvjp(lambda x: (exp_p(x), (exp_p(x),)), lambda r, g: (g * r[0],))


@ds.custom_vjp
def xexp(x):
    return np.exp(x) * x


def _xexp_fwd(x):
    e = exp_p(x)
    return e * x, (e, x)


xexp.defvjp(_xexp_fwd, lambda r, g: (g * r[0] * (1 + r[1]),))


def output_call(x):
    return np.sum(xexp(x) ** 2) + np.prod(xexp(x))


def output_call_np(x):
    return np.sum((np.exp(x) * x) ** 2) + np.prod(np.exp(x) * x)


# ---------------------------------------------------------------- bwd calls a VJP primitive
# sin2's bwd calls cosmul(g, x) = g cos x, linear in g; cosmul has its own bwd (cotangents for
# g *and* x) and jvp: the quantum package's state_p / _state_vjp_p pattern.
@ds.custom_vjp
def cosmul(g, x):
    return g * np.cos(x)


def _cosmul_jvp(p, t):
    g, x = p
    dg, dx = t
    d = 0.0
    if dg is not None:
        d = d + cosmul(dg, x)
    if dx is not None:
        d = d - g * np.sin(x) * dx
    return cosmul(g, x), d


cosmul.defvjp(lambda g, x: (cosmul(g, x), (g, x)),
              lambda r, t: (cosmul(t, r[1]), -t * r[0] * np.sin(r[1])))
cosmul.defjvp(_cosmul_jvp)


@ds.custom_vjp
def sin2(x):
    return np.sin(x)


sin2.defvjp(lambda x: (sin2(x), (x,)), lambda r, g: (cosmul(g, r[0]),))


def bwd_call(x):
    return np.sum(sin2(x) ** 2 * x)


def bwd_call_np(x):
    return np.sum(np.sin(x) ** 2 * x)


# ---------------------------------------------------------------- residual in an opaque static
# The VJP primitive gets a cached cos(x) inside an opaque Static; traced (nesting), it recomputes
# from x, which it receives as an argument and returns a cotangent for.
@ds.custom_vjp
def cosmul_cached(g, x, st):
    c = st.value if _plain(st.value) else np.cos(x)
    return g * c


cosmul_cached.defvjp(lambda g, x, st: (cosmul_cached(g, x, st), (g, x, st)),
                     lambda r, t: (cosmul_cached(t, r[1], r[2]), -t * r[0] * np.sin(r[1]), None))


@ds.custom_vjp
def sin_static(x, st):
    return np.sin(x)


sin_static.defvjp(lambda x, st: (sin_static(x, st), (x, np.cos(x))),
                  lambda r, g: (cosmul_cached(g, r[0], Static(r[1])), None))


def static_call(x):
    return np.sum(sin_static(x, Static(None)) ** 2 * x)


# ---------------------------------------------------------------- dataclass "static" (a pytree)
@dataclasses.dataclass
class Weights:
    w: np.ndarray
    n: int


@ds.custom_vjp
def weighted(x, p):
    return np.sin(x) * p.w


weighted.defvjp(lambda x, p: (weighted(x, p), (x, p)),
                lambda r, g: (g * np.cos(r[0]) * r[1].w, None))
W = np.array([1.5, -0.7, 0.3])


def dataclass_call(x):
    return np.sum(weighted(x, Weights(W, 3)) ** 2)


def dataclass_call_np(x):
    return np.sum((np.sin(x) * W) ** 2)


# ---------------------------------------------------------------- pytree argument with an int leaf
@ds.custom_vjp
def powsin(p):
    return p["a"] * np.sin(p["x"]) ** p["k"]


def _powsin_bwd(r, g):
    (p,) = r
    a, x, k = p["a"], p["x"], p["k"]
    return ({"a": np.sum(g * np.sin(x) ** k),
             "x": g * a * k * np.sin(x) ** (k - 1) * np.cos(x),
             "k": None},)  # None for the integer leaf


powsin.defvjp(lambda p: (powsin(p), (p,)), _powsin_bwd)


def int_leaf_call(x):
    return np.sum(powsin({"a": x[0], "x": x, "k": 3}) ** 2)


def int_leaf_call_np(x):
    return np.sum((x[0] * np.sin(x) ** 3) ** 2)


# ---------------------------------------------------------------- bwd calls the function itself
@ds.custom_vjp
def matvec(x):
    return M @ x


matvec.defvjp(lambda x: (matvec(x), None), lambda r, g: (matvec(g),))  # M symmetric


def self_adjoint_call(x):
    return np.sum(np.sin(matvec(x * x)) ** 2)


def self_adjoint_call_np(x):
    return np.sum(np.sin(M @ (x * x)) ** 2)


# ---------------------------------------------------------------- real output of complex input
# quad(ψ) = Re⟨ψ|H_m|ψ⟩ (the quantum package's pauli_p); its bwd 2 Σ g_m H_m ψ calls a linear
# custom_vjp (apply_h, _apply_obs_p).  Under nesting the cotangent reaching a real output picks
# up a meaningless imaginary part from the outer sweep through complex arithmetic; bwd must get
# only the real part (it did not: Hessian errors of order 100).
class Obs:
    __slots__ = ("hs",)

    def __init__(self, hs):
        self.hs = hs


@ds.custom_vjp
def apply_h(psi, obs):
    return np.einsum("mij,...j->...mi", obs.hs, np.asarray(psi))


apply_h.defvjp(lambda psi, obs: (apply_h(psi, obs), obs),
               lambda obs, g: (sum(apply_h(g[..., m, :], Obs(obs.hs[m:m + 1]))[..., 0, :]
                                   for m in range(len(obs.hs))), None))
apply_h.defjvp(lambda p, t: (apply_h(*p), None if t[0] is None else apply_h(t[0], p[1])))


@ds.custom_vjp
def quad(psi, obs):
    psi = np.asarray(psi)
    return np.real(np.einsum("...i,mij,...j->...m", np.conj(psi), obs.hs, psi))


def _quad_bwd(res, g):
    psi, obs = res
    return 2.0 * np.sum(g[..., None] * apply_h(psi, obs), axis=-2), None


quad.defvjp(lambda psi, obs: (quad(psi, obs), (psi, obs)), _quad_bwd)


def complex_call(v):
    psi = v[:4] + 1j * v[4:]
    return np.sum(quad(psi, Obs(HS)) ** 2) + np.real(np.sum(quad(psi, Obs(HS)) * (0.5 - 2j)))


def complex_call_np(v):
    psi = v[:4] + 1j * v[4:]
    q = np.real(np.einsum("i,mij,j->m", np.conj(psi), HS, psi))
    return np.sum(q ** 2) + np.real(np.sum(q * (0.5 - 2j)))


V0 = np.array([0.3, -0.8, 1.1, 0.2, -0.5, 0.9, 0.4, -1.2])
V_DIR = np.array([0.4, -1.0, 0.7, 0.1, 0.5, -0.3, 0.8, 0.2])

CASES = {
    "fwd calls itself": (self_call, self_call_np, X0, U),
    "fwd residual from another custom_vjp": (residual_call, residual_call_np, X0, U),
    "fwd output from another custom_vjp": (output_call, output_call_np, X0, U),
    "bwd calls a VJP custom_vjp": (bwd_call, bwd_call_np, X0, U),
    "residual in an opaque static": (static_call, bwd_call_np, X0, U),
    "dataclass static": (dataclass_call, dataclass_call_np, X0, U),
    "int leaf with None cotangent": (int_leaf_call, int_leaf_call_np, X0, U),
    "bwd calls itself": (self_adjoint_call, self_adjoint_call_np, X0, U),
    "real output of complex input": (complex_call, complex_call_np, V0, V_DIR),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_hessian_matches_plain_numpy(name, mode):
    f, f_np, x, _ = CASES[name]
    np.testing.assert_allclose(ds.grad(f)(x), ds.grad(f_np)(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ds.hessian(f, mode=mode)(x), ds.hessian(f_np)(x),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", list(CASES))
def test_grad_of_grad_along_a_line(name):
    f, f_np, x, u = CASES[name]
    got = ds.grad(ds.grad(lambda t: f(x + t * u)))(0.2)
    want = ds.grad(ds.grad(lambda t: f_np(x + t * u)))(0.2)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", list(CASES))
def test_check_grads_second_order(name):
    f, _, x, _ = CASES[name]
    check_grads(f, (x,), order=2, modes=("rev", "fwd"))


def test_mixed_partial_with_an_outer_only_argument():
    @ds.custom_vjp
    def f(x, y):
        return np.sin(x) * y

    f.defvjp(lambda x, y: (f(x, y), (x, y)),
             lambda r, g: (g * np.cos(r[0]) * r[1], g * np.sin(r[0])))
    y0 = np.array([0.5, 1.2, -0.4])
    want = ds.jacobian(lambda y: ds.grad(lambda x, y: np.sum((np.sin(x) * y) ** 2))(X0, y))(y0)
    for mode in ("rev", "fwd"):
        got = ds.jacobian(lambda y: ds.grad(lambda x, y: np.sum(f(x, y) ** 2))(X0, y),
                          mode=mode)(y0)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_real_output_cotangent_is_real_at_first_order():
    # Re((1+2j) q(ψ)) sends bwd the cotangent (1-2j)·1 for the real q: only its real part counts.
    seen = []

    @ds.custom_vjp
    def q(psi):
        return np.real(np.vdot(psi, HS[0] @ psi))

    def bwd(psi, g):
        seen.append(np.iscomplexobj(g))
        return (2.0 * g * (HS[0] @ psi),)

    q.defvjp(lambda psi: (q(psi), psi), bwd)
    z = V0[:4] + 1j * V0[4:]
    got = ds.grad(lambda z: np.real(q(z) * (1 + 2j)))(z)
    np.testing.assert_allclose(got, 2.0 * HS[0] @ z, rtol=1e-12)
    assert seen == [False]


def test_closure_over_a_traced_value_raises():
    def f(x):
        y = np.exp(x)

        @ds.custom_vjp
        def a(z):
            return np.sin(z) * y  # y is traced by the grad running a's call

        a.defvjp(lambda z: (a(z), (z,)), lambda r, g: (g * np.cos(r[0]) * y,))
        return np.sum(a(x) ** 2)

    for d in (ds.grad(f), ds.hessian(f), ds.hessian(f, mode="fwd"),
              lambda x: ds.jvp(f, (x,), (U,))):
        with pytest.raises(TypeError, match="closes over"):
            d(X0)


def test_traced_value_hidden_in_an_opaque_static_raises():
    # Like "residual in an opaque static", but the VJP primitive uses the cached value even
    # when it is traced: under nesting its output is traced by the level running its call.
    @ds.custom_vjp
    def mul_cached(g, x, st):
        return g * st.value

    mul_cached.defvjp(lambda g, x, st: (mul_cached(g, x, st), (g, x, st)),
                      lambda r, t: (mul_cached(t, r[1], r[2]), -t * r[0] * np.sin(r[1]), None))

    @ds.custom_vjp
    def s(x, st):
        return np.sin(x)

    s.defvjp(lambda x, st: (s(x, st), (x, np.cos(x))),
             lambda r, g: (mul_cached(g, r[0], Static(r[1])), None))

    def f(x):
        return np.sum(s(x, Static(None)) ** 2 * x)

    np.testing.assert_allclose(ds.grad(f)(X0), ds.grad(bwd_call_np)(X0))  # first order is fine
    for mode in ("rev", "fwd"):
        with pytest.raises(TypeError, match="opaque"):
            ds.hessian(f, mode=mode)(X0)


def test_bwd_returning_none_for_a_used_argument_is_caught_by_check_grads():
    # The rule nesting relies on: bwd returns a cotangent for every argument its result
    # depends on.  cosmul_none's output depends on x, but its bwd says None: first order is
    # right (x comes in untraced there), second order is not, and check_grads says so.
    @ds.custom_vjp
    def cosmul_none(g, x):
        return g * np.cos(x)

    cosmul_none.defvjp(lambda g, x: (cosmul_none(g, x), (g, x)),
                       lambda r, t: (cosmul_none(t, r[1]), None))

    @ds.custom_vjp
    def s(x):
        return np.sin(x)

    s.defvjp(lambda x: (s(x), (x,)), lambda r, g: (cosmul_none(g, r[0]),))

    def f(x):
        return np.sum(s(x) ** 2 * x)

    check_grads(f, (X0,), order=1)
    assert not np.allclose(ds.hessian(f)(X0), ds.hessian(bwd_call_np)(X0))
    with pytest.raises(AssertionError, match="VJP of VJP"):
        check_grads(f, (X0,), order=2, modes=("rev",))


def test_misuse_in_a_rule_reached_only_at_second_order_raises():
    # sin2-like: bwd calls a linear custom_vjp whose own bwd returns a cotangent of the wrong
    # shape for x; first order never runs that bwd, second order (any mode) must not silently
    # broadcast it.
    @ds.custom_vjp
    def cosmul_bad(g, x):
        return g * np.cos(x)

    cosmul_bad.defvjp(lambda g, x: (cosmul_bad(g, x), (g, x)),
                      lambda r, t: (cosmul_bad(t, r[1]), np.sum(-t * r[0] * np.sin(r[1]))))

    @ds.custom_vjp
    def s(x):
        return np.sin(x)

    s.defvjp(lambda x: (s(x), (x,)), lambda r, g: (cosmul_bad(g, r[0]),))

    def f(x):
        return np.sum(s(x) ** 2 * x)

    np.testing.assert_allclose(ds.grad(f)(X0), ds.grad(bwd_call_np)(X0), rtol=1e-12)
    for d in (ds.hessian(f), ds.hessian(f, mode="fwd"),
              lambda x: ds.grad(lambda t: ds.grad(f)(x * t)[0])(1.0)):
        with pytest.raises(ValueError, match=r"custom_vjp cosmul_bad: bwd's cotangent for "
                                             r"argument 1 has shape \(\); expected \(3,\)"):
            d(X0)


def test_fwd_not_a_pair_under_nesting_raises():
    @ds.custom_vjp
    def f(x):
        return np.sin(x)

    f.defvjp(lambda x: np.stack([f(x), np.cos(x)]), lambda r, g: (g * r,))
    for d in (ds.grad(lambda x: np.sum(f(x))), ds.hessian(lambda x: np.sum(f(x))),
              ds.hessian(lambda x: np.sum(f(x)), mode="fwd")):
        with pytest.raises(TypeError, match="custom_vjp f: its fwd must return a pair"):
            d(np.array([0.1, 0.4]))

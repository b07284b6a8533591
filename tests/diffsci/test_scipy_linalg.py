"""Gradients of diffsci.scipy.linalg: specs checked against finite differences, dense Jacobians.

``SPECS`` has one spec per function and mode (real and complex, each structure of
``solve``): checked in both modes, to second order unless noted.  Complex specs are checked
through ``check_grads``' complex inputs (pairs of reals); ``test_dense_real_jacobian``
compares whole 2n x 2m real Jacobians, from VJPs and from JVPs, with dense central
differences.  Losses of eigen/singular vectors are gauge-free (|v|², or U diag V).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable

import numpy as np
import pytest
import scipy.linalg as sl

import diffsci as ds
from diffsci.scipy import linalg as L
from diffsci.testing import check_grads


# ---------------------------------------------------------------- samplers
def wellcond(n, m=None, cplx=False):  # near 3 I: well conditioned, no tiny pivots
    def sample(r):
        shape = (n, n if m is None else m)
        a = 0.5 * r.standard_normal(shape) + (3 * np.eye(*shape) if m is None else 0)
        return a + 0.5j * r.standard_normal(shape) if cplx else a
    return sample


def spd(n, cplx=False):
    def sample(r):
        b = r.standard_normal((n, n)) + (1j * r.standard_normal((n, n)) if cplx else 0)
        return b @ b.conj().T + n * np.eye(n)
    return sample


def rhs(*shape, cplx=False):
    def sample(r):
        return r.standard_normal(shape) + (1j * r.standard_normal(shape) if cplx else 0)
    return sample


def const(value):
    return lambda r: np.array(value)


def eig_gauge_free(wv):
    w, v = wv
    return w, np.abs(v) ** 2


def svd_gauge_free(usv):
    u, s, vh = usv
    k = s.shape[-1]
    return s, np.real(np.einsum("ik,k,kj->ij", u[:, :k], np.arange(1.0, k + 1), vh[:k]))


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str  # the diffsci.scipy.linalg function this spec covers
    fun: Callable
    args: tuple
    order: int = 2


S = Spec
SPECS = []
for c in (False, True):
    A, B, b1, P = wellcond(3, cplx=c), rhs(3, 2, cplx=c), rhs(3, cplx=c), spd(3, cplx=c)
    SPECS += [
        S("solve", L.solve, (A, B)),
        S("solve", L.solve, (A, b1), order=1),
        S("solve", lambda a, b: L.solve(a, b, assume_a="pos"), (P, B)),
        S("solve", lambda a, b: L.solve(a, b, assume_a="her", lower=True), (A, B), order=1),
        S("solve", lambda a, b: L.solve(a, b, assume_a="sym"), (A, B), order=1),
        S("solve", lambda a, b: L.solve(a, b, assume_a="diagonal"), (A, B), order=1),
        S("solve", lambda a, b: L.solve(a, b, assume_a="tridiagonal"), (A, b1), order=1),
        S("solve", lambda a, b: L.solve(a, b, assume_a="lower triangular"), (A, B), order=1),
        S("inv", L.inv, (A,)),
        S("inv", lambda a: L.inv(a, assume_a="pos", lower=True), (P,), order=1),
        S("det", L.det, (A,)),
        S("slogdet", lambda a: L.slogdet(a)[1], (A,)),
        S("cholesky", L.cholesky, (P,)),
        S("cholesky", lambda a: L.cholesky(a, lower=True), (P,), order=1),
        # SciPy leaves junk in the triangle the factor does not use
        S("cho_factor", lambda a: np.triu(L.cho_factor(a)[0]), (P,), order=1),
        S("cho_solve", lambda a, b: L.cho_solve(L.cho_factor(a, lower=True), b), (P, B)),
        S("cho_solve", lambda a, b: L.cho_solve(L.cho_factor(a), b), (P, b1), order=1),
        S("solve_triangular", L.solve_triangular, (A, B)),
        S("solve_triangular", lambda a, b: L.solve_triangular(a, b, trans="T", lower=True),
          (A, b1)),
        S("solve_triangular", lambda a, b: L.solve_triangular(a, b, trans=2, unit_diagonal=True),
          (A, B)),
        S("eigh", lambda a: eig_gauge_free(L.eigh(a)), (A,)),
        S("eigh", lambda a, b: eig_gauge_free(L.eigh(a, b, lower=False)), (A, P)),
        S("eigvalsh", lambda a: L.eigvalsh(a, lower=False), (A,)),
        S("svd", lambda a: svd_gauge_free(L.svd(a, full_matrices=False)), (wellcond(3, 2, c),)),
        S("svdvals", L.svdvals, (wellcond(2, 3, c),)),
        S("qr", lambda a: L.qr(a, mode="economic"), (wellcond(3, 2, c),), order=1),
        S("expm", L.expm, (wellcond(3, cplx=c),)),
        S("expm_frechet", lambda a, e: L.expm_frechet(a, e), (rhs(2, 2, cplx=c),) * 2),
        S("norm", L.norm, (A,)),
    ]
def band(lo, up, n, cplx=False):  # band storage of a diagonally dominant banded matrix
    def sample(r):
        ab = 0.5 * r.standard_normal((lo + up + 1, n))
        ab[up] += 3.0
        return ab + 0.5j * r.standard_normal(ab.shape) if cplx else ab
    return sample


def hband(k, n, lower=False, cplx=False):  # Hermitian positive-definite band (one triangle)
    def sample(r):
        ab = 0.3 * r.standard_normal((k + 1, n)) + (0.3j * r.standard_normal((k + 1, n))
                                                     if cplx else 0)
        ab[0 if lower else k] = 3.0 + r.random(n)  # the (real) diagonal
        return ab
    return sample


def stable(n, cplx=False):  # eigenvalues in the left half plane (continuous Lyapunov)
    return lambda r: wellcond(n, cplx=cplx)(r) - 6 * np.eye(n)


def contraction(n, cplx=False):  # spectral radius < 1 (discrete Lyapunov)
    return lambda r: 0.3 * rhs(n, n, cplx=cplx)(r)


for c in (False, True):
    A, Q = wellcond(3, cplx=c), rhs(3, 3, cplx=c)
    SPECS += [
        S("solve_sylvester", L.solve_sylvester, (A, wellcond(2, cplx=c), rhs(3, 2, cplx=c))),
        S("solve_continuous_lyapunov", L.solve_continuous_lyapunov, (stable(3, c), Q)),
        S("solve_discrete_lyapunov", L.solve_discrete_lyapunov, (contraction(3, c), Q)),
        S("sqrtm", L.sqrtm, (A,)),
        S("logm", L.logm, (A,)),
        S("polar", L.polar, (rhs(3, 3, cplx=c),)),
        S("polar", lambda a: L.polar(a, side="left"), (rhs(3, 3, cplx=c),), order=1),
        S("polar", L.polar, (rhs(4, 2, cplx=c),)),  # tall: u has orthonormal columns
        S("polar", lambda a: L.polar(a, side="left"), (rhs(2, 3, cplx=c),), order=1),
        S("solve_banded", lambda ab, b: L.solve_banded((1, 2), ab, b),
          (band(1, 2, 5, c), rhs(5, 2, cplx=c))),
        S("solveh_banded", L.solveh_banded, (hband(1, 4, cplx=c), rhs(4, cplx=c))),
        S("solveh_banded", lambda ab, b: L.solveh_banded(ab, b, lower=True),
          (hband(2, 4, lower=True, cplx=c), rhs(4, 2, cplx=c)), order=1),
        S("lu_factor", lambda a: L.lu_factor(a)[0], (rhs(3, 3, cplx=c),)),
        S("lu_solve", lambda a, b: L.lu_solve(L.lu_factor(a), b), (rhs(3, 3, cplx=c), Q)),
        S("lu_solve", lambda a, b: L.lu_solve(L.lu_factor(a), b, trans=1 + c),
          (rhs(3, 3, cplx=c), rhs(3, cplx=c))),
        S("lu", L.lu, (rhs(3, 3, cplx=c),)),
        S("lu", lambda a: L.lu(a, permute_l=True), (rhs(4, 4, cplx=c),), order=1),
    ]
def schur_gauge_free(tz):
    t, z = tz
    return np.abs(t) ** 2, np.abs(z) ** 2


def real_spectrum(n):  # non-normal with eigenvalues 1, 2.5, 4 ...: a triangular real Schur form
    def sample(r):
        x = r.standard_normal((n, n)) + 2 * np.eye(n)
        return x @ np.diag(1.0 + 1.5 * np.arange(n)) @ np.linalg.inv(x)
    return sample


SPECS += [
    S("schur", lambda a: schur_gauge_free(L.schur(a, output="complex")), (rhs(3, 3),)),
    S("schur", lambda a: schur_gauge_free(L.schur(a)), (rhs(3, 3, cplx=True),)),
    S("schur", lambda a: schur_gauge_free(L.schur(a)), (real_spectrum(3),)),
    S("sqrtm", L.sqrtm, (spd(3),)),  # the symmetric root of an SPD matrix
    S("logm", lambda a: L.logm(L.expm(a)), (lambda r: 0.3 * rhs(3, 3)(r),)),  # = a near 0
]
SPECS += [
    S("solve", lambda a, b: L.solve(a, b, transposed=True), (wellcond(3), rhs(3, 2))),
    S("solve", lambda a, b: L.solve(a, b, assume_a="banded"),
      (const(np.diag([3.0, 3.5, 4.0]) + np.diag([0.5, 0.2], 1)), rhs(3)), order=1),
    S("inv", lambda a: np.diagonal(L.inv(a, assume_a="diagonal")), (wellcond(3),), order=1),
    S("inv", lambda a: L.inv(a, assume_a="upper triangular"), (wellcond(3),), order=1),
    S("solve_triangular", lambda a, b: L.solve_triangular(a, b, lower=True),
      (rhs(2, 3, 3), rhs(2, 3, 2)), order=1),  # a stack
    S("eigh", lambda a: L.eigh(a, subset_by_index=(1, 2), eigvals_only=True), (wellcond(3),)),
    S("qr", lambda a: L.qr(a, mode="r"), (wellcond(3, 2),), order=1),
    S("qr", lambda a: L.qr(a, mode="full")[1], (wellcond(2, 3),), order=1),
    S("qr", lambda a: L.qr(a, pivoting=True, mode="economic")[:2], (wellcond(3, 2),), order=1),
    S("expm", L.expm, (rhs(2, 2, 2),), order=1),  # a stack
    S("norm", lambda a: L.norm(a, ord=2), (wellcond(3, 2),), order=1),
    S("norm", lambda a: L.norm(a, axis=0), (rhs(3, 2),)),
    S("norm", lambda x, y: L.norm([x, y, 1.0]), (const(0.5), const(-2.0))),  # a list
]


def distinct(n):  # well-separated values (fiedler's |a_i - a_j| away from its kinks)
    return lambda r: r.permutation(n) * 0.8 + r.uniform(-0.1, 0.1, n)


SPECS += [  # special matrices: gathers of their inputs
    S("toeplitz", L.toeplitz, (rhs(4), rhs(3))),
    S("toeplitz", L.toeplitz, (rhs(3, cplx=True),)),  # r = conj(c)
    S("hankel", L.hankel, (rhs(3), rhs(4))),
    S("hankel", L.hankel, (rhs(4),)),
    S("circulant", L.circulant, (rhs(4),)),
    S("companion", L.companion, (lambda r: rhs(4)(r) + np.array([3.0, 0, 0, 0]),)),
    S("leslie", L.leslie, (rhs(3), rhs(2))),
    S("fiedler", L.fiedler, (distinct(4),)),
    S("convolution_matrix", lambda a: L.convolution_matrix(a, 4), (rhs(3),)),
    S("convolution_matrix", lambda a: L.convolution_matrix(a, 2, "same"), (rhs(5),)),
    S("convolution_matrix", lambda a: L.convolution_matrix(a, 5, "valid"), (rhs(3),)),
    S("block_diag", L.block_diag, (rhs(2, 2), rhs(3), const(2.0), rhs(1, 2, cplx=True))),
    S("qr_multiply", lambda a, c: L.qr_multiply(a, c), (wellcond(4, 3), rhs(2, 4))),
    S("qr_multiply", lambda a, c: L.qr_multiply(a, c, mode="left", conjugate=True),
      (wellcond(3, 5, cplx=True), rhs(3, 2, cplx=True))),
    S("eigh_tridiagonal", lambda d, e: L.eigh_tridiagonal(d, e, eigvals_only=True),
      (distinct(4), lambda r: 0.3 * rhs(3)(r))),
    S("eigh_tridiagonal", lambda d, e: eig_gauge_free(L.eigh_tridiagonal(d, e)),
      (distinct(4), lambda r: 0.3 * rhs(3)(r))),
    S("eigh_tridiagonal", lambda d, e: L.eigh_tridiagonal(d, e, select="i", select_range=(1, 2),
                                                          eigvals_only=True),
      (distinct(4), lambda r: 0.3 * rhs(3)(r))),
]


def real_schur(n):  # (T, Z) of a random matrix: T with 2 x 2 blocks
    def sample(r):
        return sl.schur(r.standard_normal((n, n)))
    return sample


_SCHUR4 = real_schur(4)(np.random.default_rng(3))  # one 2 x 2 block and two 1 x 1
_SCHUR5 = real_schur(5)(np.random.default_rng(4))  # two 2 x 2 blocks


def _rsf2csf_structured(tz0):
    """rsf2csf of T restricted to the quasi-triangular pattern of the sample's T: SciPy's
    algorithm switches a rotation on where a zero subdiagonal entry becomes nonzero (a
    discontinuity), so the pattern is kept fixed."""
    mask = np.triu(np.ones(tz0[0].shape)) + (np.tril(np.abs(tz0[0]), -1) > 0)
    return lambda t, z: L.rsf2csf(t * mask, z)


SPECS += [  # fiedler_companion, hessenberg, rsf2csf, funm (diffsci/scipy/_linalg_decomp.py)
    S("fiedler_companion", L.fiedler_companion,
      (lambda r: rhs(6)(r) + np.array([2.0, 0, 0, 0, 0, 0]),)),
    S("fiedler_companion", L.fiedler_companion,
      (lambda r: rhs(5, cplx=True)(r) + np.array([2.0, 0, 0, 0, 0]),), order=1),
    S("hessenberg", L.hessenberg, (rhs(5, 5),)),
    S("hessenberg", lambda a: L.hessenberg(a, calc_q=True), (rhs(4, 4),)),
    S("hessenberg", lambda a: L.hessenberg(a, calc_q=True), (rhs(4, 4, cplx=True),), order=1),
    S("rsf2csf", _rsf2csf_structured(_SCHUR4), (lambda r: _SCHUR4[0], lambda r: _SCHUR4[1])),
    S("rsf2csf", _rsf2csf_structured(_SCHUR5), (lambda r: _SCHUR5[0], lambda r: _SCHUR5[1]),
      order=1),
    S("funm", lambda a: L.funm(a, np.exp), (rhs(3, 3),)),
    S("funm", lambda a: L.funm(a, np.sin), (rhs(3, 3, cplx=True),), order=1),
    S("funm", lambda a: L.funm(a, np.log), (wellcond(3),), order=1),
]


@pytest.mark.parametrize("name,args", [
    ("toeplitz", ([1.0, 2.0, 3.0], [9.0, 4.0, 5.0, 6.0])), ("toeplitz", ([1.0, 2j, 3.0],)),
    ("hankel", ([1.0, 2.0, 3.0], [9.0, 4.0])), ("hankel", ([1.0, 2.0],)),
    ("circulant", ([1.0, 2.0, 3.0, 4.0],)), ("companion", ([2.0, -3.0, 1.0, 5.0],)),
    ("leslie", ([0.1, 2.0, 1.0], [0.2, 0.8])), ("fiedler", ([1.0, 4.0, 2.0, -1.0],)),
    ("block_diag", ([[1.0, 2.0]], [3.0], 4.0, [[5.0], [6.0]])),
] + [("convolution_matrix", ([1.0, -2.0, 0.5, 3.0][:m], n, mode)) for m in (2, 4)
     for n in (1, 3, 5) for mode in ("full", "same", "valid")])
def test_special_matrices_are_scipys_and_linear(name, args):
    ours, theirs = getattr(L, name), getattr(sl, name)
    nt = 1 if name == "convolution_matrix" else len(args)
    arrays = [np.asarray(a, dtype=complex if np.iscomplexobj(a) else float) for a in args[:nt]]
    want = theirs(*arrays, *args[nt:])
    got = ds.pullback(lambda *x: ours(*x, *args[nt:]), *arrays)[0]
    np.testing.assert_array_equal(ds.stop_gradient(got), want)
    np.testing.assert_array_equal(ours(*arrays, *args[nt:]), want)
    if name in ("companion", "fiedler") or any(np.iscomplexobj(a) for a in arrays):
        return
    # linear: the Jacobian is the 0/1 pattern SciPy's own function gives unit inputs
    for k, a in enumerate(arrays):
        jac = ds.jacobian(lambda x: ours(*arrays[:k], x, *arrays[k + 1:], *args[nt:]))(a)
        for j, e in enumerate(np.eye(a.size)):
            unit = [*arrays[:k], e.reshape(a.shape), *arrays[k + 1:]]
            base = [*arrays[:k], np.zeros_like(a), *arrays[k + 1:]]
            ref = theirs(*unit, *args[nt:]) - theirs(*base, *args[nt:])
            np.testing.assert_array_equal(jac.reshape(want.shape + (a.size,))[..., j], ref)


@pytest.mark.parametrize("shape,cshape,kw", [((4, 3), (2, 4), {}), ((4, 3), (3,), {"mode": "left"}),
                                             ((3, 5), (3, 3), {"mode": "left"}),
                                             ((4, 3), (4,), {"conjugate": True})])
def test_qr_multiply_is_scipys(shape, cshape, kw):
    r = np.random.default_rng(2)
    a, c = r.standard_normal(shape), r.standard_normal(cshape)
    want = sl.qr_multiply(a, c, **kw)
    got = ds.pullback(lambda a, c: L.qr_multiply(a, c, **kw), a, c)[0]
    for g, w in zip(got, want):
        np.testing.assert_allclose(ds.stop_gradient(g), w, rtol=1e-12, atol=1e-14)


def test_eigh_tridiagonal_is_scipys():
    d, e = np.array([0.3, 1.9, 3.2, 4.0]), np.array([0.4, -0.7, 0.2])
    for kw in ({"eigvals_only": True}, {"select": "v", "select_range": (1.0, 5.0),
                                        "eigvals_only": True}):
        np.testing.assert_allclose(ds.pullback(lambda d: L.eigh_tridiagonal(d, e, **kw), d)[0],
                                   sl.eigh_tridiagonal(d, e, **kw), rtol=1e-13)
    # the eigenvalue gradient: d w_k / d d_i = v_ik^2, d w_k / d e_i = 2 v_ik v_(i+1)k
    w, v = sl.eigh_tridiagonal(d, e)
    gd, ge = ds.grad(lambda d, e: L.eigh_tridiagonal(d, e, eigvals_only=True)[2],
                     argnums=(0, 1))(d, e)
    np.testing.assert_allclose(gd, v[:, 2] ** 2, rtol=1e-12)
    np.testing.assert_allclose(ge, 2 * v[:-1, 2] * v[1:, 2], rtol=1e-12)


def test_special_matrices_reject_bad_input():
    with pytest.raises(ValueError, match="leslie: s must have"):
        ds.grad(lambda f: np.sum(L.leslie(f, [1.0])))(np.ones(3))
    with pytest.raises(ValueError, match="companion: a must"):
        ds.grad(lambda a: np.sum(L.companion(a)))(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="toeplitz: c must be 1-D"):
        ds.grad(lambda c: np.sum(L.toeplitz(c)))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="convolution_matrix: mode"):
        ds.grad(lambda a: np.sum(L.convolution_matrix(a, 3, "wrong")))(np.ones(2))


def _spec_id(spec, _seen={}):  # noqa: B006 - counter for readable ids
    k = _seen[spec.name] = _seen.get(spec.name, 0) + 1
    return f"{spec.name}-{k}"


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_grad(spec):
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    args = tuple(sample(rng) for sample in spec.args)
    check_grads(spec.fun, args, order=spec.order)


def test_every_function_has_a_spec():
    missing = sorted(set(L.__all__) - {s.name for s in SPECS})
    assert not missing, f"diffsci.scipy.linalg functions without a gradient spec: {missing}"


# ---------------------------------------------------------------- dense Jacobians
def _pairs(z):
    return np.concatenate([np.real(z).ravel(), np.imag(z).ravel()])


def real_jacobian_fd(f, z, eps=1e-6):
    """The real Jacobian d(Re f, Im f)/d(Re z, Im z) by central differences."""
    cols = []
    for part in (1.0, 1j):
        for k in range(z.size):
            e = np.zeros(z.shape, complex)
            e.flat[k] = eps * part
            cols.append((_pairs(f(z + e)) - _pairs(f(z - e))) / (2 * eps))
    return np.array(cols).T


def real_jacobian_vjp(f, z):
    y, back = ds.pullback(f, z)
    y = ds.stop_gradient(y)
    rows = []
    for part in (1.0, 1j):
        for k in range(np.size(y)):
            v = np.zeros(np.shape(y), complex)
            v.flat[k] = part
            rows.append(_pairs(back(v)[0]))
    return np.array(rows)


def real_jacobian_jvp(f, z):
    cols = []
    for part in (1.0, 1j):
        for k in range(z.size):
            t = np.zeros(z.shape, complex)
            t.flat[k] = part
            cols.append(_pairs(ds.jvp(f, (z,), (t,))[1]))
    return np.array(cols).T


def _c(*shape, seed=0):
    r = np.random.default_rng(seed)
    return 0.5 * (r.standard_normal(shape) + 1j * r.standard_normal(shape))


def _herm(z):
    return z + z.conj().T + 4 * np.eye(len(z))


DENSE = [
    ("expm", lambda z: L.expm(z), _c(3, 3)),
    ("expm_frechet in A", lambda z: L.expm_frechet(z, _c(3, 3, seed=1), compute_expm=False),
     _c(3, 3)),
    ("solve_triangular trans=2", lambda z: L.solve_triangular(z + 3 * np.eye(3), _c(3, 2, seed=2),
                                                             trans=2, lower=True), _c(3, 3)),
    ("solve_triangular in b", lambda z: L.solve_triangular(3 * np.eye(3) + _c(3, 3, seed=3), z,
                                                          trans=1), _c(3, 2)),
    ("cho_solve in the factor", lambda z: L.cho_solve((z + 3 * np.eye(3), False),
                                                      _c(3, seed=4)), _c(3, 3)),
    ("solve pos, lower", lambda z: L.solve(_herm(z), _c(3, seed=5), assume_a="pos", lower=True),
     _c(3, 3)),
    ("generalized eigvalsh in b", lambda z: L.eigvalsh(_herm(_c(3, 3, seed=6)), _herm(z)),
     _c(3, 3)),
    ("inv", lambda z: L.inv(z + 3 * np.eye(3)), _c(3, 3)),
]


@pytest.mark.parametrize("name,f,z", DENSE, ids=[d[0] for d in DENSE])
def test_dense_real_jacobian(name, f, z):
    want = real_jacobian_fd(f, z)
    rows = want.shape[0] if np.iscomplexobj(f(z)) else want.shape[0] // 2
    np.testing.assert_allclose(real_jacobian_vjp(f, z)[:rows], want[:rows], atol=1e-7)
    np.testing.assert_allclose(real_jacobian_jvp(f, z), want, atol=1e-7)


def test_expm_rules_are_frechet_derivatives():
    r = np.random.default_rng(7)
    a, e, g = (r.standard_normal((3, 3)) + 1j * r.standard_normal((3, 3)) for _ in range(3))
    np.testing.assert_allclose(ds.jvp(L.expm, (a,), (e,))[1],
                               sl.expm_frechet(a, e, compute_expm=False), rtol=1e-12)
    # reverse mode: the adjoint identity <G, L(A, E)> = <L(A^H, G), E> (Al-Mohy & Higham 2009)
    abar = ds.pullback(L.expm, a)[1](g)[0]
    np.testing.assert_allclose(abar, sl.expm_frechet(a.conj().T, g, compute_expm=False),
                               rtol=1e-12)
    lhs = np.vdot(g, sl.expm_frechet(a, e, compute_expm=False))
    np.testing.assert_allclose(lhs, np.vdot(abar, e), rtol=1e-12)


def test_expm_third_order():
    a = np.array([[0.1, 0.4], [-0.3, 0.2]])
    d3 = ds.grad(ds.grad(ds.grad(lambda s: L.expm(s * a)[0, 1])))(0.7)
    # d^3/ds^3 expm(s a) = a^3 expm(s a)
    np.testing.assert_allclose(d3, (a @ a @ a @ sl.expm(0.7 * a))[0, 1], rtol=1e-9)


# ---------------------------------------------------------------- semantics
def test_symmetric_structures_differentiate_the_triangle_read():
    a = spd(3)(np.random.default_rng(8))
    b = np.ones(3)
    for lower in (False, True):
        g = ds.grad(lambda a: np.sum(L.solve(a, b, assume_a="pos", lower=lower)))(a)
        other = np.triu(g, 1) if lower else np.tril(g, -1)
        assert np.all(other == 0)
        # on symmetric perturbations it is the plain derivative
        gen = ds.grad(lambda a: np.sum(L.solve(a, b)))(a)
        sym = gen + gen.T - np.diag(np.diag(gen))
        np.testing.assert_allclose(g, np.tril(sym) if lower else np.triu(sym), rtol=1e-12)


def test_cholesky_is_upper_by_default_and_reads_the_upper_triangle():
    a = spd(3)(np.random.default_rng(9))
    u = ds.pullback(L.cholesky, a)[0]
    np.testing.assert_allclose(ds.stop_gradient(u), sl.cholesky(a), rtol=1e-14)
    g = ds.grad(lambda a: np.sum(L.cholesky(a)))(a)
    assert np.all(np.tril(g, -1) == 0)


def test_eigh_eigenvectors_are_scipys():
    a = _herm(_c(4, 4, seed=10))
    w, v = ds.stop_gradient(ds.pullback(lambda a: L.eigh(a), a)[0])
    w0, v0 = sl.eigh(a)
    np.testing.assert_allclose(w, w0, rtol=1e-14)
    np.testing.assert_allclose(v, v0, rtol=1e-12, atol=1e-14)


def test_eigh_degenerate_eigenvalues():
    # Eigenvalue gradients are exact at a repeated eigenvalue; eigenvector ones are not defined.
    a = np.diag([1.0, 1.0, 2.0])
    np.testing.assert_allclose(ds.grad(lambda a: np.sum(L.eigvalsh(a)))(a), np.eye(3))
    np.testing.assert_allclose(ds.grad(lambda a: L.eigvalsh(a)[2])(a), np.diag([0, 0, 1.0]))
    with np.errstate(all="ignore"):
        g = ds.grad(lambda a: L.eigh(a)[1][1, 0])(a)  # mixes the two eigenvectors of 1
    assert not np.all(np.isfinite(g))


@pytest.mark.parametrize("f", [L.expm, lambda a: L.solve_triangular(a, np.ones(2)),
                               lambda a: L.eigh(a)[0], lambda a: L.cholesky(a)])
def test_float32_in_float32_gradient_out(f):
    a = np.array([[2.0, 0.3], [0.3, 1.5]], np.float32)
    assert ds.grad(lambda a: np.sum(f(a)))(a).dtype == np.float32


def test_plain_calls_are_scipys():
    a = spd(3)(np.random.default_rng(11))
    for ours, theirs in [(L.inv, sl.inv), (L.det, sl.det), (L.expm, sl.expm),
                         (L.cholesky, sl.cholesky), (L.eigvalsh, sl.eigvalsh)]:
        np.testing.assert_array_equal(ours(a), theirs(a))


# ---------------------------------------------------------------- errors
def _traced(f):
    return lambda x: ds.grad(lambda x: np.sum(np.real(f(x))))(x)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: L.inv(np.ones((2, 3))), ValueError, "a must be a square matrix"),
    (lambda: _traced(L.inv)(np.ones((2, 3))), ValueError, r"a must be a square.*\(2, 3\)"),
    (lambda: L.solve(np.eye(2), np.ones(3)), ValueError, "b must have 2 rows"),
    (lambda: L.solve(np.eye(2), np.ones(2), assume_a="spd"), ValueError, "assume_a"),
    (lambda: L.solve_triangular(np.eye(2), np.ones(2), trans="X"), ValueError, "trans"),
    (lambda: L.cho_solve(np.eye(2), np.ones(2)), TypeError, "c_and_lower"),
    (lambda: L.expm(np.ones(3)), ValueError, "A must be a square matrix"),
    (lambda: L.expm_frechet(np.eye(2), np.eye(3)), ValueError, "E must have A's shape"),
    (lambda: L.eigh(np.eye(2), np.eye(3)), ValueError, "b must be 2 x 2"),
    (lambda: _traced(lambda a: L.eigh(a, np.eye(2), type=2)[0])(np.eye(2)), NotImplementedError,
     "type=2"),
    (lambda: _traced(lambda a: L.qr(a, mode="raw")[0])(np.ones((3, 2))), NotImplementedError,
     "mode='raw'"),
    (lambda: _traced(lambda a: L.qr(a)[0])(np.ones((3, 2))), NotImplementedError, "economic"),
    (lambda: _traced(lambda a: L.solve(a, np.ones(2), transposed=True))(np.eye(2) + 0j),
     NotImplementedError, "transposed"),
    (lambda: L.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 2))), ValueError,
     r"solve_sylvester: q must have shape \(2, 3\)"),
    (lambda: L.sqrtm(np.ones((2, 3))), ValueError, "sqrtm: A must be a square matrix"),
    (lambda: L.solve_banded((1, 1), np.ones((2, 4)), np.ones(4)), ValueError,
     "solve_banded: ab must have l . u . 1 = 3 rows"),
    (lambda: L.lu_solve(np.eye(2), np.ones(2)), TypeError, "lu_and_piv must be the pair"),
    (lambda: _traced(lambda a: L.polar(a)[0])(np.ones((2, 3))), NotImplementedError,
     "polar: traced a must be m x n with m >= n"),
    (lambda: L.polar(np.eye(2), side="up"), ValueError, "side must be 'right' or 'left'"),
    (lambda: _traced(lambda a: L.schur(a)[0])(np.array([[0.0, 1.0], [-1.0, 0.0]])),
     NotImplementedError, "2 x 2 blocks"),
    (lambda: _traced(lambda a: L.schur(a, sort="lhp")[0])(np.eye(2)), NotImplementedError,
     "sort"),
], ids=["inv-non-square", "inv-non-square-traced", "solve-b-rows", "solve-assume_a",
        "solve_triangular-trans", "cho_solve-pair", "expm-non-square", "expm_frechet-shapes",
        "eigh-b-size", "eigh-type", "qr-raw", "qr-full-tall", "solve-transposed-complex",
        "sylvester-q-shape", "sqrtm-non-square", "solve_banded-rows", "lu_solve-pair",
        "polar-non-square-traced", "polar-side", "schur-real-blocks", "schur-sort"])
def test_bad_input_raises_naming_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------- closed forms and values
def _value_when_traced(f, *args):
    """f's value computed on traced arguments (the primitive path), as plain arrays."""
    seen = {}

    def loss(*xs):
        out = f(*xs)
        seen["out"] = ds.tree_map(ds.extend.getval, out)
        return sum(np.sum(np.real(o)) for o in ds.tree_leaves(out))

    ds.grad(loss, argnums=tuple(range(len(args))))(*args)
    return seen["out"]


R = np.random.default_rng(5)
A3 = 3 * np.eye(3) + 0.5 * R.standard_normal((3, 3))
Q3 = R.standard_normal((3, 3))


@pytest.mark.parametrize("name,f,args", [
    ("solve_sylvester", L.solve_sylvester, (A3, A3.T + 1.0, Q3)),
    ("solve_continuous_lyapunov", L.solve_continuous_lyapunov, (A3 - 6 * np.eye(3), Q3)),
    ("solve_discrete_lyapunov", L.solve_discrete_lyapunov, (0.3 * Q3, A3)),
    ("sqrtm", L.sqrtm, (A3,)),
    ("logm", L.logm, (A3,)),
    ("polar", L.polar, (Q3,)),
    ("polar left", lambda a: L.polar(a, side="left"), (Q3,)),
    ("polar tall", L.polar, (R.standard_normal((4, 2)),)),
    ("polar wide left", lambda a: L.polar(a, side="left"), (R.standard_normal((2, 4)),)),
    ("solve_banded", lambda ab, b: L.solve_banded((1, 1), ab, b), (A3, Q3[:, 0])),
    ("solveh_banded", lambda ab, b: L.solveh_banded(ab, b), (np.array([[0.5, -0.2, 0.1],
                                                                       [3.0, 2.5, 4.0]]), Q3)),
    ("lu_factor", lambda a: L.lu_factor(a)[0], (Q3,)),
    ("lu_solve", lambda a, b: L.lu_solve(L.lu_factor(a), b, trans=1), (Q3, A3)),
    ("lu", L.lu, (Q3,)),
    ("lu p_indices", lambda a: L.lu(a, p_indices=True)[1:], (Q3,)),
    ("lu permute_l", lambda a: L.lu(a, permute_l=True), (Q3,)),
    ("schur complex", lambda a: L.schur(a, output="complex"), (Q3,)),
    ("schur real", L.schur, (real_spectrum(3)(np.random.default_rng(8)),)),
])
def test_traced_values_are_scipys(name, f, args):
    plain = f(*args)
    traced = _value_when_traced(f, *args)
    for p, t in zip(ds.tree_leaves(plain), ds.tree_leaves(traced)):
        np.testing.assert_allclose(t, p, rtol=1e-10, atol=1e-12)


def test_lu_p_indices_reconstructs_like_scipy():
    perm, low, up = L.lu(Q3, p_indices=True)
    np.testing.assert_allclose(low[perm] @ up, Q3, atol=1e-14)
    seen = {}

    def loss(a):
        p, lo, u = L.lu(a, p_indices=True)
        seen["p"] = p
        return np.sum(lo * u)

    ds.grad(loss)(Q3)
    np.testing.assert_array_equal(seen["p"], perm)


def _dense_kron_sylvester(a, b, q):
    """X with a X + X b = q through the n m x n m Kronecker system: an independent path."""
    n, m = q.shape
    big = np.kron(a, np.eye(m)) + np.kron(np.eye(n), b.T)
    return np.reshape(np.linalg.solve(big, np.reshape(q, -1)), (n, m))


def test_sylvester_and_lyapunov_jacobians_match_the_kronecker_system():
    import diffsci.numpy as dnp
    import diffsci.numpy.linalg as dla

    def dense(a, b, q):
        n, m = np.shape(q)
        big = dnp.kron(a, np.eye(m)) + dnp.kron(np.eye(n), dnp.transpose(b))
        return dnp.reshape(dla.solve(big, dnp.reshape(q, (-1,))), (n, m))

    b = 2 * np.eye(2) + 0.3 * R.standard_normal((2, 2))
    q = R.standard_normal((3, 2))
    np.testing.assert_allclose(L.solve_sylvester(A3, b, q), _dense_kron_sylvester(A3, b, q),
                               rtol=1e-12)
    for k in range(3):
        for jac in (ds.jacobian, ds.jacfwd):
            np.testing.assert_allclose(jac(L.solve_sylvester, argnums=k)(A3, b, q),
                                       ds.jacobian(dense, argnums=k)(A3, b, q),
                                       rtol=1e-10, atol=1e-12)
    s = A3 - 6 * np.eye(3)
    np.testing.assert_allclose(ds.jacobian(L.solve_continuous_lyapunov)(s, Q3),
                               ds.jacobian(lambda a: dense(a, a.T, Q3))(s), rtol=1e-10,
                               atol=1e-12)


def test_sqrtm_and_logm_closed_forms_at_a_diagonal_matrix():
    # At A = diag(d): d sqrt(A)[E]_ij = E_ij / (√d_i + √d_j) and
    # d log(A)[E]_ij = E_ij (log d_i - log d_j) / (d_i - d_j) (d_i / d_i on the diagonal).
    d = np.array([1.0, 2.0, 4.0])
    e = R.standard_normal((3, 3))
    sq = np.sqrt(d)
    want_sqrt = e / (sq[:, None] + sq[None, :])
    dd = d[:, None] - d[None, :]
    dl = np.log(d)[:, None] - np.log(d)[None, :]
    want_log = e * np.where(dd == 0, 1 / d[:, None], dl / np.where(dd == 0, 1, dd))
    for f, want in ((L.sqrtm, want_sqrt), (L.logm, want_log)):
        np.testing.assert_allclose(ds.jvp(f, (np.diag(d),), (e,))[1], want, rtol=1e-10,
                                   atol=1e-12)
        # the adjoint: <G, dF[E]> = <dF*[G], E>
        g = R.standard_normal((3, 3))
        lhs = np.sum(g * ds.jvp(f, (np.diag(d),), (e,))[1])
        rhs_ = np.sum(ds.vjp(f, np.diag(d))[1](g) * e)
        np.testing.assert_allclose(lhs, rhs_, rtol=1e-12)


def test_polar_closed_form_at_a_diagonal_matrix():
    # a = diag(d) > 0: u = I, p = diag(d); u̇_ij = (ȧ - ȧᵀ)_ij / (d_i + d_j), ṗ = ȧ - u̇ p.
    d = np.array([1.0, 2.0, 3.5])
    e = R.standard_normal((3, 3))
    du = (e - e.T) / (d[:, None] + d[None, :])
    (u, p), (tu, tp) = ds.jvp(L.polar, (np.diag(d),), (e,))
    np.testing.assert_allclose(u, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(tu, du, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tp, e - du * d[None, :], rtol=1e-12, atol=1e-14)


def test_banded_solves_put_the_dense_gradient_on_the_band():
    n = 5
    ab = band(1, 2, n)(np.random.default_rng(3))
    b = np.random.default_rng(4).standard_normal(n)
    dense = sum(np.diag(ab[2 - k][k:] if k >= 0 else ab[2 - k][:n + k], k) for k in range(-1, 3))
    ga = ds.grad(lambda a: np.sum(np.linalg.solve(a, b) ** 2))(dense)
    gab = ds.grad(lambda ab: np.sum(L.solve_banded((1, 2), ab, b) ** 2))(ab)
    for i in range(n):
        for j in range(n):
            if -1 <= j - i <= 2:
                np.testing.assert_allclose(gab[2 + i - j, j], ga[i, j], rtol=1e-12)
    # the corners of ab that LAPACK does not read get 0
    assert gab[0, 0] == gab[0, 1] == gab[1, 0] == gab[3, n - 1] == 0


def test_schur_diagonal_derivative_is_the_eigenvalue_derivative():
    # diag(T) holds the eigenvalues: its derivative must match eig's (an independent rule),
    # and for [[a, b], [0, d]] perturbed at (1, 0) the closed form b / (a - d).
    import diffsci.numpy.linalg as dla

    a = Q3 + 1j * R.standard_normal((3, 3))
    t0 = sl.schur(a, output="complex")[0]
    for k in range(3):
        lam = t0[k, k]

        def via_schur(x, lam=lam):
            d = np.diagonal(L.schur(x, output="complex")[0])
            return np.real(d[int(np.argmin(np.abs(ds.extend.getval(d) - lam)))])

        def via_eig(x, lam=lam):
            w = dla.eigvals(x)
            return np.real(w[int(np.argmin(np.abs(ds.extend.getval(w) - lam)))])

        np.testing.assert_allclose(ds.grad(via_schur)(a), ds.grad(via_eig)(a), rtol=1e-9,
                                   atol=1e-11)
    tri = np.array([[1.0, 0.7], [0.0, 3.0]])
    e = np.array([[0.0, 0.0], [1.0, 0.0]])
    (t, _), (dt, _) = ds.jvp(lambda x: L.schur(x), (tri,), (e,))
    np.testing.assert_allclose(np.diag(dt), [0.7 / (1.0 - 3.0), -0.7 / (1.0 - 3.0)],
                               rtol=1e-12)


@pytest.mark.parametrize("call,name", [
    (lambda a: L.solve(a, np.ones(2)), "solve"),
    (lambda a: L.solve(a, np.ones((2, 2)), assume_a="sym"), "solve"),
    (lambda a: L.inv(a), "inv"),
])
def test_singular_solve_and_inv_raise_naming_the_function(call, name):
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    for d in (ds.grad(lambda a: np.sum(call(a))), ds.jacfwd(call)):
        with pytest.raises(np.linalg.LinAlgError,
                           match=rf"diffsci.scipy.linalg.{name}: a is singular"):
            d(a)


def test_det_at_a_singular_matrix_is_the_adjugate():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(ds.grad(L.det)(a), [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-14)
    np.testing.assert_allclose(ds.jacfwd(L.det)(a), [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-14)


# ---------------------------------------------------------------- fiedler_companion, hessenberg,
# rsf2csf, funm
def _rc(*shape, seed=0, cplx=False):
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape)
    return x + 1j * r.standard_normal(shape) if cplx else x


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 9])
def test_fiedler_companion_is_scipys_and_linear_in_a_over_a0(n):
    a = _rc(n, seed=n) + np.eye(1, n)[0] * 2.0
    got = _value_when_traced(L.fiedler_companion, a)
    np.testing.assert_array_equal(got, sl.fiedler_companion(a))
    # the Jacobian in a[k] (k >= 1) is SciPy's matrix of the unit polynomial e_k / a[0]
    jac = ds.jacobian(L.fiedler_companion)(a)
    for k in range(1, n):
        e = np.zeros(n)
        e[0], e[k] = 1.0, 1.0 / a[0]
        ref = sl.fiedler_companion(e) - sl.fiedler_companion(np.eye(1, n)[0])
        np.testing.assert_allclose(jac[..., k], ref, rtol=1e-14, atol=0)


@pytest.mark.parametrize("n,cplx", [(3, False), (3, True), (5, False), (6, True), (10, False),
                                    (10, True)])
def test_hessenberg_traced_values_are_scipys(n, cplx):
    a = _rc(n, n, seed=n, cplx=cplx)
    h, q = _value_when_traced(lambda a: L.hessenberg(a, calc_q=True), a)
    h0, q0 = sl.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(h, h0, rtol=0, atol=1e-12 * np.abs(a).max() * n)
    np.testing.assert_allclose(q, q0, rtol=0, atol=1e-12 * n)
    np.testing.assert_array_equal(np.tril(h, -2), 0)


@pytest.mark.parametrize("cplx", [False, True])
def test_hessenberg_derivative_satisfies_the_differentiated_factorization(cplx):
    # A = Q H Qᴴ, Q e_1 = e_1: with Ω = Qᴴ Q̇ (skew-Hermitian, first row and column zero),
    # Ḣ = Qᴴ Ȧ Q - Ω H + H Ω is upper Hessenberg.
    a, e = _rc(5, 5, seed=1, cplx=cplx), _rc(5, 5, seed=2, cplx=cplx)
    (h, q), (hd, qd) = ds.jvp(lambda a: L.hessenberg(a, calc_q=True), (a,), (e,))
    om = q.conj().T @ qd
    np.testing.assert_allclose(om + om.conj().T, 0, atol=1e-12)
    np.testing.assert_allclose(om[0], 0, atol=1e-12)
    np.testing.assert_allclose(hd, q.conj().T @ e @ q - om @ h + h @ om, atol=1e-11)
    np.testing.assert_array_equal(np.tril(hd, -2), 0)
    # reverse mode is the adjoint of forward mode
    g = _rc(5, 5, seed=3, cplx=cplx)
    back = ds.pullback(lambda a: L.hessenberg(a), a)[1](g)[0]
    np.testing.assert_allclose(np.real(np.vdot(back, e)), np.real(np.vdot(g, hd)), rtol=1e-11)


@pytest.mark.parametrize("n,seed", [(2, 0), (3, 1), (4, 3), (5, 4), (6, 5), (7, 6)])
def test_rsf2csf_traced_values_are_scipys(n, seed):
    t, z = sl.schur(_rc(n, n, seed=seed))
    got = _value_when_traced(L.rsf2csf, t, z)
    for g, w in zip(got, sl.rsf2csf(t, z)):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-13 * n)


def test_rsf2csf_diagonal_derivative_is_the_eigenvalue_derivative():
    # T' = Z'ᴴ A Z' is triangular: d diag(T') along a perturbation of A = Z T Zᵀ are the
    # eigenvalue derivatives of A, computed here independently by diffsci.numpy.linalg.eig.
    import diffsci.numpy.linalg as dla
    a = _rc(4, 4, seed=3)
    e = _rc(4, 4, seed=9)
    t0, z0 = sl.schur(a)
    mask = np.triu(np.ones((4, 4))) + (np.tril(np.abs(t0), -1) > 0)
    # the real Schur form's derivative along e: Z fixed, T moves by Zᵀ e Z (then masked)
    td = mask * (z0.T @ e @ z0)
    (t1, z1), (dt, dz) = ds.jvp(L.rsf2csf, (t0, z0), (td, np.zeros((4, 4))))
    lam = np.diagonal(t1)
    w, v = np.linalg.eig(a)
    order = [int(np.argmin(np.abs(w - x))) for x in lam]
    ew = ds.jvp(lambda x: dla.eigvals(x), (a,), (z0 @ td @ z0.T,))[1]
    np.testing.assert_allclose(np.diagonal(dt), ew[order], rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(np.tril(dt, -1), 0)
    # and Z' T' Z'ᴴ = Z T Zᵀ to first order
    np.testing.assert_allclose(dz @ t1 @ z1.conj().T + z1 @ dt @ z1.conj().T
                               + z1 @ t1 @ dz.conj().T, z0 @ td @ z0.T, atol=1e-12)


@pytest.mark.parametrize("func", [np.exp, np.sin, np.cos, np.sqrt, np.log],
                         ids=["exp", "sin", "cos", "sqrt", "log"])
def test_funm_traced_value_and_frechet_derivative(func):
    a = wellcond(4)(np.random.default_rng(1))
    e = _rc(4, 4, seed=2)
    np.testing.assert_array_equal(_value_when_traced(lambda a: L.funm(a, func), a),
                                  sl.funm(a, func))
    # the forward rule (Daleckii-Krein, f' by Cauchy's integral) against central differences
    # of SciPy's own funm, an independent computation (Schur-Parlett)
    h = 1e-5
    fd = (sl.funm(a + h * e, func) - sl.funm(a - h * e, func)) / (2 * h)
    jv = ds.jvp(lambda a: L.funm(a, func), (a,), (e,))[1]
    np.testing.assert_allclose(jv, fd, rtol=0, atol=1e-8 * np.abs(fd).max())


def test_funm_exp_gradients_are_expms():
    for cplx in (False, True):
        a, g = _rc(4, 4, seed=4, cplx=cplx), _rc(4, 4, seed=5, cplx=cplx)
        via_funm = ds.pullback(lambda a: L.funm(a, np.exp), a)[1](g)[0]
        via_expm = ds.pullback(L.expm, a)[1](g)[0]
        np.testing.assert_allclose(via_funm, via_expm, rtol=1e-11, atol=1e-12)
        e = _rc(4, 4, seed=6, cplx=cplx)
        np.testing.assert_allclose(ds.jvp(lambda a: L.funm(a, np.exp), (a,), (e,))[1],
                                   sl.expm_frechet(a, e, compute_expm=False), rtol=1e-11,
                                   atol=1e-12)
    # second order: d²/ds² funm(s a, exp) = a² expm(s a)
    a = _rc(3, 3, seed=7)
    d2 = ds.grad(ds.grad(lambda s: L.funm(s * a, np.exp)[0, 1]))(0.6)
    np.testing.assert_allclose(d2, (a @ a @ sl.expm(0.6 * a))[0, 1], rtol=1e-9)


def test_funm_sin_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    a, g = _rc(4, 4, seed=8), _rc(4, 4, seed=9)
    ta = torch.tensor(a, requires_grad=True)
    # sin(A) = Im expm(iA) for real A
    torch.sum(torch.tensor(g) * torch.linalg.matrix_exp(1j * ta.to(torch.complex128)).imag
              ).backward()
    ours = ds.grad(lambda a: np.sum(g * L.funm(a, np.sin)))(a)
    np.testing.assert_allclose(ours, ta.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_funm_disp_false_returns_scipys_error_estimate():
    a = wellcond(3)(np.random.default_rng(2))
    seen = {}

    def loss(a):
        f, err = L.funm(a, np.exp, disp=False)
        seen["err"] = err
        return np.sum(f)

    ds.grad(loss)(a)
    assert seen["err"] == sl.funm(a, np.exp, disp=False)[1]
    assert isinstance(L.funm(a, np.exp, disp=False), tuple)


@pytest.mark.parametrize("call,match", [
    (lambda: _traced(L.hessenberg)(np.ones((2, 3))), r"hessenberg: a must be a square.*\(2, 3\)"),
    (lambda: _traced(L.hessenberg)(np.ones((2, 2, 2))), "hessenberg: a must be a square 2-D"),
    (lambda: _traced(lambda t: L.rsf2csf(t, np.eye(2))[0])(np.ones((2, 3))),
     "rsf2csf: T must be a square"),
    (lambda: _traced(lambda z: L.rsf2csf(np.eye(2), z)[0])(np.ones(2)), "rsf2csf: Z must be"),
    (lambda: _traced(lambda t: L.rsf2csf(t, np.eye(3))[0])(np.eye(2)),
     r"rsf2csf: T and Z must have one shape"),
    (lambda: L.funm(np.ones((2, 3)), np.exp), r"funm: A must be a square.*\(2, 3\)"),
    (lambda: _traced(lambda a: L.funm(a, np.exp))(np.ones(3)), "funm: A must be a square"),
    (lambda: _traced(L.fiedler_companion)(np.array([0.0, 1.0, 2.0])),
     r"fiedler_companion: a\[0\] \(the leading coefficient\) must be nonzero"),
    (lambda: _traced(L.fiedler_companion)(np.ones((2, 3))), "fiedler_companion: traced a must "
                                                             "be 1-D"),
], ids=["hessenberg-non-square", "hessenberg-3d", "rsf2csf-T", "rsf2csf-Z", "rsf2csf-shapes",
        "funm-non-square", "funm-1d-traced", "fiedler_companion-leading-zero",
        "fiedler_companion-2d"])
def test_decompositions_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_funm_rejects_a_non_callable():
    with pytest.raises(TypeError, match="funm: func must be callable"):
        L.funm(np.eye(2), "exp")

"""Complex numbers (issue #3 §2): the convention, Wirtinger derivatives, and an audit of every
complex-capable function against the real 2×2 Jacobian.

Convention (the README's, PyTorch/Zygote): for real-valued f of z = x + iy, ``grad`` returns
∂f/∂x + i·∂f/∂y; a VJP of holomorphic f is g·conj(f′(z)); a JVP of holomorphic f is f′(z)·t;
non-holomorphic functions have the real-linear directional derivative as their JVP.

* The paper's values (arXiv:1907.07587, capability 9) through grad and ``ds.wirtinger``.
* ``COMPLEX_SPECS``: one complex spec per complex-capable function that the main spec table
  (``test_numpy_grads.SPECS``) checks only with real inputs, checked in both modes to second
  order; ``test_every_complex_capable_function_is_audited`` fails when a differentiable
  function has no complex spec and is not in ``REAL_ONLY``.
* An independent check: the real Jacobian of a C→C map (2m × 2n, by central differences)
  against the one assembled from VJPs (row by row) and from JVPs (column by column).
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import diffsci as ds
import diffsci.numpy as dnp
import diffsci.numpy.linalg as dla
from diffsci._complex import wirtinger
from diffsci.testing import check_grads
from tests.diffsci.test_numpy_grads import (
    ALIASES,
    SPECS,
    Spec,
    _differentiable_exports,
    _gauge_free,
    cnormal,
    herm,
    spd,
    wellcond,
)

Z = 1 + 2j


# ---------------------------------------------------------------- the paper's values
def test_grad_of_abs2_is_df_dx_plus_i_df_dy():
    assert ds.grad(lambda z: dnp.abs(z) ** 2)(Z) == pytest.approx(2 + 4j)
    assert ds.grad(lambda z: dnp.real(z * dnp.conj(z)))(Z) == pytest.approx(2 + 4j)


def test_holomorphic_derivative_is_conj_of_grad_of_real_part():
    assert np.conj(ds.grad(lambda z: dnp.real(dnp.log(z)))(Z)) == pytest.approx(0.2 - 0.4j)
    # ... and the forward-mode tangent along 1 is f'(z) directly
    assert ds.jvp(dnp.log, (Z,), (1.0 + 0j,))[1] == pytest.approx(1 / Z)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_wirtinger_paper_values(mode):
    dz, dzbar = wirtinger(lambda z: 3 * z ** 2 + 2 * z + 1, Z, mode=mode)
    assert (dz, dzbar) == (pytest.approx(8 + 12j), pytest.approx(0, abs=1e-12))
    dz, dzbar = wirtinger(lambda z: dnp.abs(z) ** 2, Z, mode=mode)
    assert (dz, dzbar) == (pytest.approx(1 - 2j), pytest.approx(1 + 2j))
    dz, dzbar = wirtinger(lambda z: dnp.log(z), Z, mode=mode)
    assert (dz, dzbar) == (pytest.approx(0.2 - 0.4j), pytest.approx(0, abs=1e-12))


# ---------------------------------------------------------------- wirtinger
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_wirtinger_basic_functions(mode):
    z = 0.3 - 1.1j
    for f, dz, dzbar in [
        (lambda z: z, 1, 0), (lambda z: dnp.conj(z), 0, 1),
        (lambda z: dnp.real(z), 0.5, 0.5), (lambda z: dnp.imag(z), -0.5j, 0.5j),
        (lambda z: dnp.exp(z), np.exp(z), 0), (lambda z: z * dnp.conj(z) ** 2,
                                               np.conj(z) ** 2, 2 * z * np.conj(z)),
        (lambda z: dnp.abs(z), np.conj(z) / (2 * abs(z)), z / (2 * abs(z))),
        (lambda z: dnp.angle(z), -0.5j / z, 0.5j / np.conj(z)),
    ]:
        got = wirtinger(f, z, mode=mode)
        np.testing.assert_allclose(got, (dz, dzbar), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_wirtinger_real_valued_f_relates_to_grad(mode):
    # f real: ∂f/∂z̄ = conj(∂f/∂z) = grad/2 (grad = ∂f/∂x + i ∂f/∂y).
    z = np.array([0.4 + 0.2j, -1.0 + 0.7j, 0.3 - 0.5j])

    def f(z):
        return dnp.sum(dnp.abs(dnp.sin(z)) ** 2 + dnp.real(z * z[0]))

    dz, dzbar = wirtinger(f, z, mode=mode)
    assert dz.shape == dzbar.shape == (3,)
    np.testing.assert_allclose(dzbar, ds.grad(f)(z) / 2, rtol=1e-12)
    np.testing.assert_allclose(dz, np.conj(dzbar), rtol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_wirtinger_arrays_give_full_jacobians(mode):
    z = np.array([[0.4 + 0.2j, -1.0 + 0.7j], [0.3 - 0.5j, 1.2 + 0.1j]])
    a = np.array([[1.0, 2j], [0.5, -1.0]])
    # holomorphic, not elementwise: ∂(A z)/∂z = A ⊗ I (layout out.shape + z.shape), ∂/∂z̄ = 0
    dz, dzbar = wirtinger(lambda z: a @ z, z, mode=mode)
    assert dz.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(dz, np.einsum("ik,jl->ijkl", a, np.eye(2)), atol=1e-12)
    np.testing.assert_allclose(dzbar, 0, atol=1e-12)
    # elementwise holomorphic: diagonal Jacobians, the diagonal is f'
    dz, dzbar = wirtinger(lambda z: dnp.sin(z), z, mode=mode)
    np.testing.assert_allclose(np.einsum("ijij->ij", dz), np.cos(z), rtol=1e-12)
    np.testing.assert_allclose(dz.reshape(4, 4), np.diag(np.cos(z).ravel()), atol=1e-12)
    np.testing.assert_allclose(dzbar, 0, atol=1e-12)
    # conj: ∂/∂z = 0, ∂/∂z̄ = I; a complex f mixing both
    dz, dzbar = wirtinger(lambda z: dnp.conj(z) * z, z, mode=mode)
    np.testing.assert_allclose(np.einsum("ijij->ij", dz), np.conj(z), rtol=1e-12)
    np.testing.assert_allclose(np.einsum("ijij->ij", dzbar), z, rtol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_wirtinger_pytrees_real_inputs_and_dtypes(mode):
    (d1, d2), (b1, b2) = wirtinger(lambda z: (z ** 2, dnp.abs(z)), 2.0, mode=mode)  # real z
    assert (d1, b1) == (pytest.approx(4.0), pytest.approx(0.0, abs=1e-12))
    assert (d2, b2) == (pytest.approx(0.5), pytest.approx(0.5))
    dz, dzbar = wirtinger(lambda z: z ** 2, np.complex64(1 + 1j), mode=mode)
    assert np.result_type(dz) == np.complex64
    assert dz == pytest.approx(2 + 2j, rel=1e-6)
    dz, _ = wirtinger(lambda z: z ** 2, np.float32(1.5), mode=mode)
    assert np.result_type(dz) == np.complex64


def test_wirtinger_modes_agree_and_errors():
    z = np.array([0.4 + 0.2j, -1.0 + 0.7j])

    def f(z):
        return dnp.stack([dnp.sum(z * dnp.conj(z[::-1])), dnp.exp(z[0]) * dnp.abs(z[1])])

    fwd, rev = wirtinger(f, z), wirtinger(f, z, mode="rev")
    np.testing.assert_allclose(fwd[0], rev[0], rtol=1e-12)
    np.testing.assert_allclose(fwd[1], rev[1], rtol=1e-12)
    with pytest.raises(ValueError, match="mode"):
        wirtinger(f, z, mode="both")


def test_wirtinger_nests_inside_grad():
    # d/dx of Re ∂(x z²)/∂z at z = 1 + 2j, as a function of real x: Re(2z) = 2
    g = ds.grad(lambda x: dnp.real(wirtinger(lambda z: x * z ** 2, Z)[0]))(0.7)
    assert g == pytest.approx(2.0)


# ---------------------------------------------------------------- the real Jacobian
def _realify(v):
    """A complex array as reals (Re, Im interleaved per element); a real one unchanged."""
    v = np.asarray(v)
    if np.iscomplexobj(v):
        return np.stack([v.real, v.imag], axis=-1).ravel()
    return v.astype(float).ravel()


def _directions(x):
    """The real basis of x's space: unit 1 (and i, for complex x) at every element."""
    x = np.asarray(x)
    for k in range(x.size):
        for d in ((1.0, 1j) if np.iscomplexobj(x) else (1.0,)):
            e = np.zeros(x.shape, x.dtype)
            e.flat[k] = d
            yield e


def real_jacobian_fd(f, z, eps=1e-6):
    """The real Jacobian of ``f`` at ``z`` (an array, C or R valued, to an array), by central
    differences: columns along the real basis of z, rows Re/Im of every output element."""
    return np.stack([(_realify(f(z + eps * e)) - _realify(f(z - eps * e))) / (2 * eps)
                     for e in _directions(z)], axis=-1)


def real_jacobian_jvp(f, z):
    """The same Jacobian assembled column by column from JVPs."""
    return np.stack([_realify(ds.jvp(f, (z,), (e,))[1]) for e in _directions(z)], axis=-1)


def real_jacobian_vjp(f, z):
    """The same Jacobian assembled row by row from VJPs: by the convention, the cotangent
    for seed e_j is ∇Re f_j and for seed i·e_j it is ∇Im f_j (∇ = ∂/∂x + i ∂/∂y)."""
    y, back = ds.pullback(f, z)
    return np.stack([_realify(back(e)[0]) for e in _directions(ds.extend.getval(y))], axis=0)


def _c(*shape, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal(shape) + 1j * r.standard_normal(shape)


A = _c(3, 3, seed=1) + 3 * np.eye(3)
B = _c(3, seed=2)

REAL_JACOBIAN = [
    ("exp", dnp.exp, _c(2)), ("log", dnp.log, _c(2)), ("sqrt", dnp.sqrt, _c(2)),
    ("power 2.5", lambda z: z ** 2.5, _c(2)), ("power z^w", lambda z: z ** z[::-1], _c(2)),
    ("reciprocal", dnp.reciprocal, _c(2)), ("tanh", dnp.tanh, _c(2)),
    ("abs", dnp.abs, _c(2)), ("angle", dnp.angle, _c(2)), ("conj", dnp.conj, _c(2)),
    ("real", dnp.real, _c(2)), ("imag", dnp.imag, _c(2)),
    ("real -> complex", lambda x: x * (1 + 2j) + dnp.astype(x, np.complex128) ** 2,
     np.array([0.3, -1.2])),
    ("prod", dnp.prod, _c(3)), ("cumprod", dnp.cumprod, _c(3)), ("var", dnp.var, _c(3)),
    ("matmul", lambda z: A @ z, _c(3)), ("vdot", lambda z: dnp.vdot(z, B), _c(3)),
    ("einsum", lambda z: dnp.einsum("ij,j,i->i", A, z, dnp.conj(z)), _c(3)),
    ("getitem", lambda z: z[[2, 0, 2]], _c(3)),
    ("det", dla.det, A), ("inv", dla.inv, A), ("solve", lambda a: dla.solve(a, B), A),
    ("slogdet", lambda a: dla.slogdet(a)[0] * dla.slogdet(a)[1], A),
    ("norm", dla.norm, _c(3)),
    ("eigh", lambda a: dla.eigh(herm(a))[0], A),
    ("svd", lambda a: _gauge_free(dla.svd(a, full_matrices=False))[0], _c(3, 2)),
    ("qr", lambda a: dla.qr(a)[0] @ dnp.diag(dnp.diagonal(dla.qr(a)[1])), _c(3, 2)),
]


@pytest.mark.parametrize("what,f,z", REAL_JACOBIAN, ids=[r[0] for r in REAL_JACOBIAN])
def test_real_jacobian_from_vjps_and_jvps_matches_differences(what, f, z):
    fd = real_jacobian_fd(f, z)
    np.testing.assert_allclose(real_jacobian_vjp(f, z), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(real_jacobian_jvp(f, z), fd, rtol=1e-6, atol=1e-8)


def test_real_jacobian_of_a_holomorphic_map_is_cauchy_riemann():
    # 2×2 blocks [[a, -b], [b, a]] with a + ib = f'(z)
    z = _c(1)
    jac = real_jacobian_vjp(dnp.sin, z)
    d = np.cos(z[0])
    np.testing.assert_allclose(jac, [[d.real, -d.imag], [d.imag, d.real]], rtol=1e-12)
    np.testing.assert_allclose(real_jacobian_jvp(dnp.sin, z), jac, rtol=1e-12)


# ---------------------------------------------------------------- the complex audit
S = Spec
c23, c3, c4 = cnormal(2, 3), cnormal(3), cnormal(4)


def _cwell(*shape):
    return wellcond(*shape, dtype=complex)


COMPLEX_SPECS = [
    # ---- elementwise
    S("positive", lambda z: dnp.positive(z), (c3,)),
    S("exp2", lambda z: dnp.exp2(z), (c3,)),
    S("expm1", lambda z: dnp.expm1(z), (c3,)),
    S("log2", lambda z: dnp.log2(z), (c3,)),
    S("log10", lambda z: dnp.log10(z), (c3,)),
    S("log1p", lambda z: dnp.log1p(z), (c3,)),
    S("tan", lambda z: dnp.tan(z), (lambda r: 0.5 * c3(r),)),
    S("arccos", lambda z: dnp.arccos(z), (c3,)),
    S("arctan", lambda z: dnp.arctan(z), (lambda r: 0.5 * c3(r),)),
    S("cosh", lambda z: dnp.cosh(z), (c3,)),
    S("arcsinh", lambda z: dnp.arcsinh(z), (lambda r: 0.5 * c3(r),)),
    S("arccosh", lambda z: dnp.arccosh(z), (c3,)),
    S("arctanh", lambda z: dnp.arctanh(z), (lambda r: 0.5 * c3(r),)),
    S("sinc", lambda z: dnp.sinc(z), (c3,)),
    S("float_power", lambda z, w: dnp.float_power(z, w), (c23, c3)),
    S("nan_to_num", lambda z: dnp.nan_to_num(z + np.array([0, np.inf, 1j * np.inf])), (c3,)),
    S("where", lambda z, w: dnp.where(np.array([True, False, True]), z, w), (c23, c3)),
    # ---- selections by NumPy's (lexicographic) order on complex numbers
    S("maximum", lambda z, w: dnp.maximum(z, w), (c23, c3)),
    S("minimum", lambda z, w: dnp.minimum(z, w), (c23, c3)),
    S("fmax", lambda z, w: dnp.fmax(z, w), (c23, c3)),
    S("fmin", lambda z, w: dnp.fmin(z, w), (c23, c3)),
    S("amax", lambda z: dnp.amax(z, axis=1), (c23,)),
    S("amin", lambda z: dnp.amin(z), (c23,)),
    S("max", lambda z: dnp.max(z, 0), (c23,)),
    S("min", lambda z: dnp.min(z), (c23,)),
    S("ptp", lambda z: dnp.ptp(z, axis=1), (c23,)),
    S("sort", lambda z: dnp.sort(z), (c23,)),
    S("clip", lambda z: dnp.clip(z, -0.5, 0.5), (lambda r: c4(r) + np.array([-2, -0.2, 0.2, 2]),)),
    # ---- reductions
    S("average", lambda z, w: dnp.average(z, axis=1, weights=w), (c23, cnormal(3))),
    S("nansum", lambda z: dnp.nansum(z + np.array([0, np.nan, 0])), (c23,)),
    S("nanmean", lambda z: dnp.nanmean(z + np.array([0, np.nan, 0]), axis=1), (c23,)),
    S("diff", lambda z: dnp.diff(z, axis=0, prepend=1j), (c23,)),
    S("trapezoid", lambda y, x: dnp.trapezoid(y, x), (c23, c3)),
    # ---- shapes and indexing
    S("ravel", lambda z: dnp.ravel(z, order="F"), (c23,)),
    S("permute_dims", lambda z: dnp.permute_dims(z, (1, 0)), (c23,)),
    S("matrix_transpose", lambda z: dnp.matrix_transpose(z), (c23,)),
    S("moveaxis", lambda z: dnp.moveaxis(z, 0, -1), (cnormal(2, 3, 2),)),
    S("swapaxes", lambda z: dnp.swapaxes(z, 0, 1), (c23,)),
    S("expand_dims", lambda z: dnp.expand_dims(z, 1), (c23,)),
    S("squeeze", lambda z: dnp.squeeze(z), (cnormal(1, 3),)),
    S("broadcast_to", lambda z: dnp.broadcast_to(z, (2, 3)), (c3,)),
    S("broadcast_arrays", lambda z, w: dnp.broadcast_arrays(z, w), (cnormal(2, 1), c3)),
    S("concat", lambda z, w: dnp.concat([z, w]), (c23, cnormal(1, 3))),
    S("stack", lambda z, w: dnp.stack([z, w], axis=-1), (c23, c23)),
    S("hstack", lambda z, w: dnp.hstack([z, w]), (c3, c3)),
    S("vstack", lambda z, w: dnp.vstack([z, w]), (c23, c3)),
    S("dstack", lambda z, w: dnp.dstack([z, w]), (c23, c23)),
    S("column_stack", lambda z, w: dnp.column_stack([z, w]), (c3, cnormal(3, 2))),
    S("split", lambda z: dnp.split(z, 3, axis=1), (c23,)),
    S("array_split", lambda z: dnp.array_split(z, 2), (c3,)),
    S("hsplit", lambda z: dnp.hsplit(z, 3), (c23,)),
    S("vsplit", lambda z: dnp.vsplit(z, 2), (c23,)),
    S("dsplit", lambda z: dnp.dsplit(z, [1]), (cnormal(2, 2, 3),)),
    S("tile", lambda z: dnp.tile(z, (2, 1)), (c23,)),
    S("fliplr", lambda z: dnp.fliplr(z), (c23,)),
    S("flipud", lambda z: dnp.flipud(z), (c23,)),
    S("rot90", lambda z: dnp.rot90(z), (c23,)),
    S("roll", lambda z: dnp.roll(z, 1, axis=1), (c23,)),
    S("diag", lambda z: dnp.diag(z, 1), (c3,)),
    S("diagflat", lambda z: dnp.diagflat(z), (cnormal(2, 2),)),
    S("diagonal", lambda z: dnp.diagonal(z), (cnormal(3, 3),)),
    S("trace", lambda z: dnp.trace(z), (cnormal(3, 3),)),
    S("triu", lambda z: dnp.triu(z), (cnormal(3, 3),)),
    S("tril", lambda z: dnp.tril(z, -1), (cnormal(3, 3),)),
    S("atleast_1d", lambda z: dnp.atleast_1d(z), (lambda r: np.array(0.5 + 1j),)),
    S("atleast_2d", lambda z: dnp.atleast_2d(z), (c3,)),
    S("atleast_3d", lambda z: dnp.atleast_3d(z), (c23,)),
    S("copy", lambda z: dnp.copy(z), (c23,)),
    S("scatter_add", lambda b, v: dnp.scatter_add(b, v, idx=np.array([0, 2, 0])), (c3, c3)),
    S("take", lambda z: dnp.take(z, [0, 2, 2], axis=1), (c23,)),
    S("take_along_axis", lambda z: dnp.take_along_axis(z, np.array([[2, 0, 2], [1, 1, 0]]), 1),
      (c23,)),
    S("select", lambda z, w: dnp.select([np.array([True, False, False])], [z], w), (c23, c3)),
    S("choose", lambda z, w: dnp.choose(np.array([0, 1, 1]), [z, w]), (c3, c3)),
    S("compress", lambda z: dnp.compress([True, False, True], z, axis=1), (c23,)),
    S("astype", lambda z: dnp.astype(z, np.complex128) * 2,
      (lambda r: c3(r).astype(np.complex64),)),
    # ---- products
    S("outer", lambda z, w: dnp.outer(z, w), (c3, cnormal(2))),
    S("inner", lambda z, w: dnp.inner(z, w), (c23, cnormal(4, 3))),
    S("kron", lambda z, w: dnp.kron(z, w), (cnormal(2, 2), c23)),
    S("cross", lambda z, w: dnp.cross(z, w), (c23, c3)),
    # ---- constructors that carry values
    S("linspace", lambda a, b: dnp.linspace(a, b, 4), (c3, c3)),
    S("logspace", lambda a, b: dnp.logspace(a, b, 3), (c3, c3)),
    S("full", lambda v: dnp.full((2, 3), v), (c3,)),
    S("full_like", lambda v: dnp.full_like(np.zeros((2, 2), complex), v), (cnormal(2),)),
    S("zeros_like", lambda z: dnp.zeros_like(z) * z + z, (c23,)),
    S("ones_like", lambda z: dnp.ones_like(z) * z, (c23,)),
    S("asarray", lambda z, w: dnp.asarray([z, w]), (c3, c3)),
    S("array", lambda z: dnp.array(z, ndmin=2), (c3,)),
    # ---- linalg
    S("linalg.norm", lambda z: dla.norm(z, 1), (c4,)),
    S("linalg.norm", lambda z: dla.norm(z, np.inf, axis=1), (c23,)),
    S("linalg.norm", lambda z: dla.norm(z, 3), (c4,)),
    S("linalg.norm", lambda z: dla.norm(z, 2), (c23,)),
    S("linalg.norm", lambda z: dla.norm(z, "nuc"), (cnormal(3, 3),)),
    S("linalg.norm", lambda z: dla.norm(z, 1), (c23,)),
    S("linalg.vector_norm", lambda z: dla.vector_norm(z, axis=0), (c23,)),
    S("linalg.matrix_norm", lambda z: dla.matrix_norm(z), (cnormal(2, 3, 3),)),
    S("linalg.eigvalsh", lambda a: dla.eigvalsh(herm(a)), (spd(3, complex),)),
    S("linalg.svdvals", lambda a: dla.svdvals(a), (cnormal(2, 3, 2),)),
    S("linalg.cholesky", lambda a: dla.cholesky(a, upper=True), (spd(3, complex),)),
    S("linalg.qr", lambda a: dla.qr(a), (cnormal(3, 3),)),
    S("linalg.qr", lambda a: dla.qr(a, "complete"), (cnormal(2, 3),)),
    S("linalg.svd", lambda a: _gauge_free(dla.svd(a)), (cnormal(3, 3),)),
    S("linalg.matrix_power", lambda a: dla.matrix_power(a, -2), (_cwell(3, 3),)),
    S("linalg.multi_dot", lambda a, b, c: dla.multi_dot([a, b, c]),
      (c3, cnormal(3, 2), c23)),
    S("linalg.trace", lambda a: dla.trace(a), (cnormal(3, 3),)),
    S("linalg.diagonal", lambda a: dla.diagonal(a, offset=1), (cnormal(3, 3),)),
    S("linalg.outer", lambda a, b: dla.outer(a, b), (c3, c3)),
    S("linalg.cross", lambda a, b: dla.cross(a, b), (c3, c3)),
    S("linalg.matmul", lambda a, b: dla.matmul(a, b), (c23, c3)),
    S("linalg.tensordot", lambda a, b: dla.tensordot(a, b, 1), (c23, c3)),
    S("linalg.matrix_transpose", lambda a: dla.matrix_transpose(a), (c23,)),
    S("linalg.solve", lambda a, b: dla.solve(a, b), (_cwell(2, 3, 3), c3)),
    S("linalg.det", lambda a: dla.det(a), (_cwell(3, 3),)),
]

#: Functions NumPy defines for real arguments only (no complex loop, or a real-only notion
#: such as a floor or a step), so they have no complex spec.
REAL_ONLY = {
    "cbrt", "fabs", "deg2rad", "radians", "rad2deg", "degrees", "arctan2", "hypot",
    "logaddexp", "logaddexp2", "remainder", "fmod", "arange",
    "copysign", "divmod", "frexp", "geomspace", "i0", "kaiser", "ldexp", "modf", "nanpercentile",
    "nanquantile", "percentile", "quantile", "unwrap",
    # counts in weights: np.bincount and np.histogram* take real weights only
    "bincount", "histogram", "histogram2d", "histogramdd",
    # no complex loop (nextafter, heaviside); bin edges order real data
    "nextafter", "heaviside", "histogram_bin_edges",
}


def _is_complex_spec(spec):
    rng = np.random.default_rng(0)
    return any(np.iscomplexobj(sample(rng)) for sample in spec.args)


def test_every_complex_capable_function_is_audited():
    audited = {ALIASES.get(s.name, s.name) for s in SPECS + COMPLEX_SPECS if _is_complex_spec(s)}
    missing = sorted(n for n in _differentiable_exports()
                     if ALIASES.get(n, n) not in audited and ALIASES.get(n, n) not in REAL_ONLY)
    assert not missing, f"complex-capable functions without a complex spec: {missing}"
    assert all(_is_complex_spec(s) for s in COMPLEX_SPECS)


def _spec_id(spec, _seen={}):  # noqa: B006 - counter for readable ids
    k = _seen[spec.name] = _seen.get(spec.name, 0) + 1
    return f"{spec.name}-{k}"


@pytest.mark.parametrize("spec", COMPLEX_SPECS, ids=[_spec_id(s) for s in COMPLEX_SPECS])
def test_complex_spec(spec):
    """Both modes, to second order, against central differences on the real 2×2 blocks."""
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    args = tuple(sample(rng) for sample in spec.args)
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # inf arithmetic in nan_to_num's spec
        check_grads(spec.fun, args, order=spec.order, modes=("rev", "fwd"))


# ---------------------------------------------------------------- convention bugs fixed
NEGATIVE_BASE = [
    ("python base", lambda z: (-2.0) ** z, (np.array([1 + 1j, 0.5 - 0.3j]),)),
    ("array base", lambda z: np.array([-2.0, -0.5]) ** z, (np.array([1 + 1j, 0.5 - 0.3j]),)),
    ("both traced", lambda x, z: x ** z, (np.array([-2.0, 0.7]), np.array([1 + 1j, 0.5 - 0.3j]))),
    ("float_power", lambda x, z: dnp.float_power(x, z),
     (np.array([-2.0, -0.5]), np.array([1 + 1j, 0.5 - 0.3j]))),
    ("real exponent, complex output", lambda z: (-2.0) ** z, (np.array([1.5 + 0j, 0.5 + 0j]),)),
]


@pytest.mark.parametrize("what,f,args", NEGATIVE_BASE, ids=[n[0] for n in NEGATIVE_BASE])
def test_power_of_a_negative_real_base_with_a_complex_exponent(what, f, args):
    # d/dy x**y = log(x)·x**y with NumPy's principal complex log(x) = log|x| + iπ (it was NaN:
    # the real log of a negative base).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_grads(f, args, order=2, modes=("rev", "fwd"))
    g = ds.grad(lambda y: dnp.real((-2.0) ** y))(1 + 1j)
    d = np.log(-2 + 0j) * (-2 + 0j) ** (1 + 1j)  # f'(y); grad of Re f is conj(f')
    assert g == pytest.approx(np.conj(d))


# ---------------------------------------------------------------- real-valued outputs
REAL_VALUED = [
    ("abs", dnp.abs), ("angle", dnp.angle), ("real", dnp.real), ("imag", dnp.imag),
    ("var", lambda z: dnp.var(z, axis=0)), ("std", dnp.std), ("norm", dla.norm),
    ("norm 1", lambda z: dla.norm(z, 1, axis=1)), ("norm inf", lambda z: dla.norm(z, np.inf)),
    ("norm 3", lambda z: dla.norm(z[0], 3)), ("svdvals", dla.svdvals),
    ("eigvalsh", lambda z: dla.eigvalsh(herm(z))),
    ("slogdet", lambda z: dla.slogdet(z + 3 * np.eye(3)).logabsdet),
]


@pytest.mark.parametrize("what,op", REAL_VALUED, ids=[r[0] for r in REAL_VALUED])
def test_real_valued_functions_of_complex_input_have_real_tangents(what, op):
    # A complex tangent on a real output would be dropped silently at the end of jvp but
    # would propagate wrongly inside a longer computation.
    seen = []

    def f(z):
        y = op(z)
        seen.append(np.result_type(y._tangent))
        return y

    z = _c(3, 3, seed=4)
    ds.jvp(f, (z,), (_c(3, 3, seed=5),))
    assert seen[0].kind == "f", (what, seen[0])


def test_hvp_and_hessian_columns_of_a_real_function_of_complex_input():
    # grad maps C^n -> C^n (∂/∂x + i ∂/∂y); its real Jacobian is the real 2n × 2n Hessian.
    # hvp is the JVP of grad: that Hessian applied to v (as a real 2n-vector).
    def f(z):
        return dnp.sum(dnp.abs(z) ** 4 + dnp.real(z[0] * dnp.conj(z[1]) * z[2]))

    z, v = _c(3, seed=6), _c(3, seed=7)
    h_real = real_jacobian_fd(ds.grad(f), z)
    np.testing.assert_allclose(h_real, h_real.T, rtol=1e-6, atol=1e-8)  # symmetric
    np.testing.assert_allclose(_realify(ds.hvp(f, z, v)), h_real @ _realify(v), rtol=1e-6)
    np.testing.assert_allclose(real_jacobian_jvp(ds.grad(f), z), h_real, rtol=1e-6, atol=1e-8)
